"""The functions the regressors minimise: the negative objective plus the negative log hyper-priors, composed by
:func:`sparsegp.priors.negative_log_posterior`.

Each is a frozen dataclass, equal to another when its fields are, so :func:`sparsegp.fitting.training.minimize`
compiles one program per objective and array shapes and reuses it for every later fit of the same kind
in the process (another estimator instance, a refit, a cross-validation fold of the same size).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..approximations.exact_gp import exact_log_marginal
from ..priors import negative_log_posterior
from ..transforms import to_positive


@dataclass(frozen=True)
class ExactNegative:
    """-log p(y | X, theta) (RW eq. 2.30) minus the log hyper-priors; ``(params, X, y[, counts, scatter]) ->
    scalar``, with ``counts`` and ``scatter`` for rows grouped by input (:mod:`sparsegp.backends.replicates`) and ``known``
    noise variances per row."""

    noise_prior: Any = None

    def __call__(self, params, X, y, counts=None, scatter=None, known=None):
        kernel, raw_noise = params["kernel"], params["raw_noise"]
        lml = exact_log_marginal(kernel, to_positive(raw_noise), X, y, counts=counts, scatter=scatter, known=known)
        return negative_log_posterior(lml, params, self.noise_prior)


@dataclass(frozen=True)
class SparseNegative:
    """Minus a sparse approximation's objective, minus the log hyper-priors; ``(params, Z_fixed, X, y[, counts,
    scatter]) -> scalar``.

    ``objective(kernel, Z, noise, X, y, *, chunk, jitter, counts, scatter)`` is the approximation's
    (``vfe_bound``, ``dtc_log_marginal``, ...); ``params["Z"]`` when the inducing inputs are free, ``Z_fixed``
    otherwise; ``counts`` and ``scatter`` for rows grouped by input (:mod:`sparsegp.backends.replicates`).
    """

    objective: Callable
    chunk: int
    jitter: float
    noise_prior: Any = None

    def __call__(self, params, Z_fixed, X, y, counts=None, scatter=None, known=None):
        kernel, raw_noise = params["kernel"], params["raw_noise"]
        Z = params["Z"] if "Z" in params else Z_fixed
        value = self.objective(
            kernel,
            Z,
            to_positive(raw_noise),
            X,
            y,
            chunk=self.chunk,
            jitter=self.jitter,
            counts=counts,
            scatter=scatter,
            **({} if known is None else {"known": known}),
        )
        return negative_log_posterior(value, params, self.noise_prior)


__all__ = ["ExactNegative", "SparseNegative"]
