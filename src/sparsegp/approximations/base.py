"""What a sparse approximation is: one object that says everything the rest of the package asks of it.

Each approximation replaces the GP regression model y ~ N(0, K_nn + sigma^2 I) by a Gaussian one that the m
inducing inputs make cheap, N(y | 0, Q_nn + Lambda) with Q_nn = K_nm K_mm^-1 K_mn and a diagonal Lambda
(Titsias 2009 sec. 2; Quiñonero-Candela & Rasmussen 2005): Lambda_i = diagonal (K_ii - Q_ii) + sigma^2
(+ v_i, a row's known noise variance), so that its objective comes from the sums of :mod:`sparsegp.backends.jax_sums`
over rows weighted by 1 / Lambda_i, the unit-weight sums where Lambda = sigma^2 I. An :class:`Approximation`
holds what tells the methods apart:

* ``diagonal``: the share of the prior's unexplained variance K_ii - Q_ii that Lambda_i holds (FITC's 1);
  the engines weigh the rows by it (:class:`~sparsegp.backends.jax_sums.RowWeights`), there is no other FITC path;
* ``trace_term``: whether the objective is Titsias's bound, less sum_i (K_ii - Q_ii) / (2 Lambda_i) (eq. 9);
* ``degenerate``: whether the predictive variance omits K** - Q** (SoR, QC&R eq. 27).

From these the base class derives its objective and posterior (from the sums of either engine), the row
weights the host and Dask engines pass, the leave-one-out predictive (:mod:`.loo`), the predictions it
allows, and its description. One module per method defines its subclass; :mod:`.registry` lists them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import NamedTuple

from ..backends.jax_sums import RowWeights, WeightedStats, weighted_stats, whitened_stats
from ..errors import InputError
from ..linalg import INDUCING_JITTER
from .common import kuu_cholesky, posterior_from_terms, targets, unit_from_stats, weighted_from_stats
from .loo import sparse_loo
from .per_target import mapped_over_targets, summed_over_targets

JITTER = INDUCING_JITTER  # where a caller gives none (the estimators give theirs)


class PredictionMode(NamedTuple):
    """A way to predict from a fitted sparse model (its ``prediction`` option): the approximation's own
    ("standard"), or with one extra weight per test point over the training rows (Quiñonero-Candela & Rasmussen
    2005: "augmented", eqs. 28-29; "nystrom", eq. 39)."""

    name: str
    full_data: bool  # reads the training rows' cache (built at fit, kept in the model file)
    marginals_only: bool  # defines predictive marginals, no joint covariance
    negative_variances: bool  # its variances may be negative (a known property of eq. 39)


PREDICTION_MODES = {
    "standard": PredictionMode("standard", False, False, False),
    "augmented": PredictionMode("augmented", True, True, False),
    "nystrom": PredictionMode("nystrom", True, True, True),
}
PREDICTIONS = tuple(PREDICTION_MODES)


def prediction_mode(name) -> PredictionMode:
    """The :class:`PredictionMode` a ``prediction`` option names (an InputError for another)."""
    if not isinstance(name, str) or name not in PREDICTION_MODES:
        raise InputError(f"prediction must be one of {PREDICTIONS}, got {name!r}")
    return PREDICTION_MODES[name]


@dataclass(frozen=True)
class Approximation:
    """A sparse approximation (the module docstring): equal to another with the same fields, so that JAX
    compiles its objective once per approximation and shapes."""

    name: str
    description: str
    diagonal: float = 0.0
    trace_term: bool = False
    degenerate: bool = False

    def weighted(self, known: bool) -> bool:
        """Whether its sums are weighted by 1 / Lambda_i: a diagonal share, or (``known``) rows that carry
        known noise variances."""
        return bool(self.diagonal) or bool(known)

    def row_weights(self, noise, known: bool, shift: float = 0.0) -> RowWeights | None:
        """The engines' :class:`~sparsegp.backends.jax_sums.RowWeights` (None: the unit-weight sums); ``known``: whether
        the rows carry known noise variances; ``shift`` added to every Lambda_i."""
        return RowWeights(float(noise), float(self.diagonal), float(shift)) if self.weighted(known) else None

    def from_stats(self, st, noise):
        """(objective, :class:`~.common.GaussianTerms`) from the sums of either pass: the O(m^3) algebra."""
        if isinstance(st, WeightedStats):
            return weighted_from_stats(st, self.trace_term)
        g = unit_from_stats(st, noise)
        if not self.trace_term:
            return g.log_marginal, g
        return g.log_marginal - 0.5 * targets(st.v) * (st.trK - st.trQ) / noise, g

    def terms(self, kernel, Z, noise, X, y, *, chunk: int, jitter: float, counts=None, scatter=None, known=None):
        """(objective, L_uu, GaussianTerms) over the rows (X, y), one noise: the JAX program's sums."""
        Luu = kuu_cholesky(kernel, Z, jitter)
        if self.weighted(known is not None):
            st = weighted_stats(kernel, Z, Luu, noise, X, y, chunk, counts, scatter, known, diagonal=self.diagonal)
        else:
            st = whitened_stats(kernel, Z, Luu, X, y, chunk=chunk, counts=counts, scatter=scatter)
        value, g = self.from_stats(st, noise)
        return value, Luu, g

    def objective(self, kernel, Z, noise, X, y, **options):
        """The scalar the method maximises (a log marginal likelihood or a lower bound on it); ``options``:
        ``chunk``, ``jitter``, ``counts``, ``scatter``, ``known`` (:meth:`terms`); one noise per target gives
        the sum of the targets' (:mod:`.per_target`)."""
        return _objective(self, kernel, Z, noise, X, y, **options)

    def posterior(self, kernel, Z, noise, X, y, **options):
        """The prediction cache, :class:`~.common.SparsePosterior` (one per target with a noise each)."""
        return _posterior(self, kernel, Z, noise, X, y, **options)

    def loo(self, kernel, posterior, noise, prediction: str = "standard"):
        """``(X, y[, known]) -> (mean, variance, error)``: each training row's leave-one-out predictive under
        the method's own predictive (DTC's for the augmented and Nyström predictions)."""
        degenerate = self.degenerate and not prediction_mode(prediction).full_data
        return partial(sparse_loo, kernel, posterior, noise, diagonal=self.diagonal, degenerate=degenerate)

    @property
    def predictions(self) -> tuple[str, ...]:
        """The predictions it allows: the augmented and Nyström ones add a test point to a model whose noise
        does not depend on the inputs (QC&R sec. 5), so not to one whose Lambda_i holds K_ii - Q_ii."""
        return PREDICTIONS[:1] if self.diagonal else PREDICTIONS


# the per-target wrappers find noise, y and scatter by name: the row arguments are spelt out here, once
@summed_over_targets
def _objective(approximation, kernel, Z, noise, X, y, *, chunk, jitter=JITTER, counts=None, scatter=None, known=None):
    rows = {"counts": counts, "scatter": scatter, "known": known}
    return approximation.terms(kernel, Z, noise, X, y, chunk=chunk, jitter=jitter, **rows)[0]


@mapped_over_targets
def _posterior(approximation, kernel, Z, noise, X, y, *, chunk, jitter=JITTER, counts=None, scatter=None, known=None):
    rows = {"counts": counts, "scatter": scatter, "known": known}
    return posterior_from_terms(Z, approximation.terms(kernel, Z, noise, X, y, chunk=chunk, jitter=jitter, **rows))


__all__ = ["JITTER", "PREDICTIONS", "Approximation"]
