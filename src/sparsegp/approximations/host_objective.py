"""An approximation's objective and its gradient with the O(n m^2) sums computed on the host.

The objective of every sparse method is ``algebra(sums(kernel, Z, L_uu^-1), noise)``:
the sums over data rows (:mod:`sparsegp.backends.blas_sums`) and an O(m^3) algebra on
them (``*_from_stats`` of each approximation). :class:`HostObjective` evaluates
value and gradient in five steps, by the chain rule written out:

1. ``prep`` (jitted): L_uu = chol(K_uu + jitter), L_uu^-1 and the noise from the raw parameters;
2. the sums, chunk by chunk (BLAS-3 on the CPU);
3. the algebra's value and its gradient with respect to the sums and the parameters (jitted);
4. the sums' backward pass: cotangents of the kernel, Z, L_uu^-1 and the noise;
5. the VJP of ``prep`` carries those back to the raw parameters (jitted).

The value equals the JAX path's (:func:`~sparsegp.approximations.vfe.vfe_bound` and friends) to
rounding; the tests hold both, and the gradient, against each other.
"""

from __future__ import annotations

from functools import lru_cache, partial

import jax
import jax.numpy as jnp
import numpy as np

from ..backends.blas_sums import BlasStats
from ..backends.jax_sums import RowWeights, Stats
from ..linalg import solve_lower
from ..priors import negative_log_posterior
from ..transforms import to_positive
from .base import Approximation
from .certificate import Certificate, bounds_from_stats, weighted_bounds
from .common import kuu_cholesky
from .registry import APPROXIMATIONS


class HostObjective:
    """``value_and_grad(params) -> (f, grad)`` of ``-(objective + log p(theta))`` for the trainer
    (:func:`~sparsegp.priors.negative_log_posterior`, as the JAX program's :class:`~sparsegp.fitting.negatives.SparseNegative`).

    ``params`` is the estimator's dict of raw parameters: ``kernel``, ``raw_noise`` and, when the
    inducing inputs are free, ``Z`` (otherwise ``Z_fixed`` is used). log p(theta) holds the kernel's
    hyper-priors and ``noise_prior`` (None: no prior on the noise).
    ``data`` replaces (X, y, chunk) by an object with BlasStats's passes, such as
    :class:`~sparsegp.backends.dask_sums.DaskStats` (the sums over the partitions of a cluster); ``counts`` and
    ``scatter`` describe rows grouped by input (:mod:`sparsegp.backends.replicates`).
    """

    def __init__(
        self,
        approximation: Approximation | str,
        X=None,
        y=None,
        *,
        chunk: int = 0,
        jitter: float,
        noise_prior=None,
        Z_fixed=None,
        data=None,
        counts=None,
        scatter=None,
        known=None,
    ):
        if isinstance(approximation, str):
            if approximation not in APPROXIMATIONS:
                raise ValueError(f"unknown approximation {approximation!r}")
            approximation = APPROXIMATIONS[approximation]
        self.approximation = approximation
        self.data = data if data is not None else BlasStats(X, y, chunk, counts=counts, scatter=scatter, known=known)
        self.known = getattr(self.data, "known", None) is not None
        Z_fixed = None if Z_fixed is None else jnp.asarray(Z_fixed)
        prep, self._value_and_grad, pull, self._terms = _programs(approximation, float(jitter), noise_prior)
        self._prep = partial(prep, Z_fixed=Z_fixed)
        self._pull = partial(pull, Z_fixed=Z_fixed)

    def _sums(self, kernel, Z, Linv_np, weights):
        st = self.data.forward(kernel, Z, Linv_np, weights)[0]
        return type(st)(*map(jnp.asarray, st))

    def terms(self, params):
        """(objective without the hyper-priors, its GaussianTerms, L_uu, the certificate or None) at ``params``: one
        forward pass; the certificate (:mod:`.certificate`) comes from the same sums where they have unit
        weights (None otherwise: :meth:`certificate` makes its own pass)."""
        kernel, Z, Linv, noise, Luu = self._prep(params)
        st = self._sums(kernel, Z, np.asarray(Linv), self.approximation.row_weights(noise, self.known))
        value, g = self._terms(st, noise)
        cert = Certificate(*map(float, bounds_from_stats(st, noise))) if isinstance(st, Stats) else None
        return float(value), g, Luu, cert

    def certificate(self, params):
        """:class:`~.certificate.Certificate` (F_V and the upper bound on log p(y)) at ``params``: one forward
        pass of the unit-weight sums, whatever the approximation."""
        kernel, Z, Linv, noise, _ = self._prep(params)
        Linv_np = np.asarray(Linv)
        if self.known:  # Lambda = diag(sigma^2 + v_i): two weighted passes
            st = self._sums(kernel, Z, Linv_np, RowWeights(float(noise)))
            shifted = self._sums(kernel, Z, Linv_np, RowWeights(float(noise), shift=max(float(st.trace), 0.0)))
            lower, upper = weighted_bounds(st, shifted)
            return Certificate(float(lower), float(upper))
        st = self._sums(kernel, Z, Linv_np, None)
        lower, upper = bounds_from_stats(st, noise)
        return Certificate(float(lower), float(upper))

    def __call__(self, params):
        kernel, Z, Linv, noise, Luu = self._prep(params)
        Linv_np = np.asarray(Linv)
        if not np.all(np.isfinite(Linv_np)):  # K_uu not factorisable here: let the line search back off
            return np.nan, jax.tree_util.tree_map(jnp.zeros_like, params)
        st, res = self.data.forward(kernel, Z, Linv_np, self.approximation.row_weights(noise, self.known))
        f, (g_params, ct) = self._value_and_grad(params, type(st)(*map(jnp.asarray, st)))
        k_bar, Z_bar, Linv_bar, noise_bar = self.data.backward(Linv_np, Luu, st, res, ct)
        cts = (k_bar, Z_bar, jnp.asarray(Linv_bar), jnp.asarray(noise_bar, dtype=Linv.dtype))
        # The sums enter -objective with a minus sign: their cotangents ct are already of f.
        g_data = self._pull(params, cts)
        return float(f), jax.tree_util.tree_map(jnp.add, g_params, g_data)


def _programs(approximation: Approximation, jitter: float, noise_prior):
    """The jitted steps 1, 3 and 5 of the module docstring and the algebra alone, compiled once per approximation,
    jitter, noise prior and shapes for every HostObjective of the process (each stage and refit builds one); fresh
    ones for an approximation or prior that is not hashable."""
    try:
        hash((approximation, noise_prior))
    except TypeError:
        return _build(approximation, jitter, noise_prior)
    return _cached(approximation, jitter, noise_prior)


def _build(approximation: Approximation, jitter: float, noise_prior):
    from_stats = approximation.from_stats

    def prep(params, Z_fixed):
        kernel = params["kernel"]
        Z = params["Z"] if "Z" in params else Z_fixed
        Luu = kuu_cholesky(kernel, Z, jitter)
        Linv = solve_lower(Luu, jnp.eye(Z.shape[0], dtype=Z.dtype))
        return kernel, Z, Linv, to_positive(params["raw_noise"]), Luu

    def negative(params, st):
        return negative_log_posterior(from_stats(st, to_positive(params["raw_noise"]))[0], params, noise_prior)

    def pull(params, cts, Z_fixed):
        _, vjp = jax.vjp(lambda p: prep(p, Z_fixed)[:4], params)
        return vjp(cts)[0]

    return jax.jit(prep), jax.jit(jax.value_and_grad(negative, argnums=(0, 1))), jax.jit(pull), jax.jit(from_stats)


_cached = lru_cache(maxsize=32)(_build)


__all__ = ["HostObjective"]
