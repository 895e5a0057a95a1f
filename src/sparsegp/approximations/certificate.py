"""How far a sparse fit is from the exact GP: the VFE bound and an upper bound on log p(y | theta).

For any inducing inputs Z and hyper-parameters theta (the upper bound of Titsias's 2014 technical report
"Variational inference for Gaussian and non-Gaussian processes", as GPflow's ``SGPR.upper_bound`` computes it),
with Q_nn = K_nm K_mm^-1 K_mn and t = tr(K_nn - Q_nn) >= 0:

    F_V = log N(y | 0, Q_nn + sigma^2 I) - t / (2 sigma^2)                            <= log p(y | theta)
    U   = -1/2 log|Q_nn + sigma^2 I| - 1/2 y^T (Q_nn + (sigma^2 + t) I)^-1 y - n/2 log 2 pi  >= log p(y | theta)

The first because K_nn >= Q_nn; the second because K_nn + sigma^2 I >= Q_nn + sigma^2 I (the determinant) and
K_nn + sigma^2 I <= Q_nn + (sigma^2 + lambda_max(K_nn - Q_nn)) I <= Q_nn + (sigma^2 + t) I (the quadratic form).
Their difference U - F_V >= log p(y | theta) - F_V = KL(q(f) || p(f | y, theta)): the certified gap. Both come
from the same sums as the bound (:class:`~sparsegp.backends.jax_sums.Stats`), so the certificate costs one O(n m^2) pass on
any backend, and the O(m^3) algebra below.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from .._config import LOG_2PI
from ..backends.jax_sums import weighted_stats, whitened_stats
from ..linalg import cholesky_fixed, solve_lower
from .common import kuu_cholesky, targets, weighted_from_stats
from .per_target import per_target
from .vfe import vfe


class Certificate(NamedTuple):
    """``lower`` (F_V) <= log p(y | theta) <= ``upper`` (U); ``gap = upper - lower`` bounds KL(q || posterior)."""

    lower: float
    upper: float
    bound: str = "trace"  # which upper bound (:mod:`.upper_bounds`): "exact", "cg" or "trace"
    seconds: float = 0.0  # what the upper bound cost beyond the trace bound's pass
    detail: str = ""

    def as_dict(self) -> dict:
        """``certificate_``: the bound used, its cost and how it was made."""
        return {"bound": self.bound, "seconds": float(self.seconds), "detail": self.detail}

    @property
    def gap(self) -> float:
        return self.upper - self.lower

    @property
    def sound(self) -> bool:
        """U >= F_V up to rounding (1e-6 relative); below that (or NaN) the factorisations lost their digits and
        the pair certifies nothing."""
        return bool(self.upper >= self.lower - 1e-6 * abs(self.lower))


def vfe_upper_bound_from_stats(st, noise):
    """U above (lambda_max(K_nn - Q_nn) bounded by its trace, as in GPflow's ``SGPR.upper_bound``), from the
    unit-weight sums S = A A^T, v = A y, yy, trK, trQ (A = L_uu^-1 K_uf)."""
    m = st.S.shape[0]
    eye = jnp.eye(m, dtype=st.S.dtype)
    LB = cholesky_fixed(eye + st.S / noise, 0.0)
    logdet = st.n * jnp.log(noise) + 2.0 * jnp.sum(jnp.log(jnp.diag(LB)))  # log|Q_nn + sigma^2 I|
    corrected = noise + jnp.maximum(st.trK - st.trQ, 0.0)
    LC = cholesky_fixed(eye + st.S / corrected, 0.0)
    c = solve_lower(LC, st.v / corrected)
    if st.v.ndim == 2:  # k targets: the sum of their bounds
        quad = st.yy / corrected - jnp.sum(c * c)
        return st.v.shape[1] * (-0.5 * st.n * LOG_2PI - 0.5 * logdet) - 0.5 * quad
    quad = st.yy / corrected - jnp.dot(c, c)  # y^T (Q_nn + (sigma^2 + t) I)^-1 y, by the inversion lemma
    return -0.5 * st.n * LOG_2PI - 0.5 * logdet - 0.5 * quad


@jax.jit
def bounds_from_stats(st, noise):
    """(F_V, U) from the unit-weight sums: the lower and upper bounds on log p(y | theta)."""
    return vfe.from_stats(st, noise)[0], vfe_upper_bound_from_stats(st, noise)


# compiled once per shape: the growth certifies every size it fits
_weighted_stats = jax.jit(weighted_stats, static_argnames=("chunk", "diagonal"))


@jax.jit
def weighted_bounds(st, shifted):
    """(F_V, U) with a known noise variance v_i per row, Lambda = diag(sigma^2 + v_i), from the 1 / Lambda_i-
    weighted sums ``st`` and those weighted by 1 / (Lambda_i + t), ``shifted`` (t = tr(K_nn - Q_nn), ``st.trace``):
    F_V = log N(y | 0, Q_nn + Lambda) - 1/2 sum (K_ii - Q_ii) / Lambda_i and
    U = -1/2 log|Q_nn + Lambda| - 1/2 y^T (Q_nn + Lambda + t I)^-1 y - n/2 log 2 pi, bounds for the same
    reasons as the module docstring's (K_nn + Lambda <= Q_nn + Lambda + t I)."""
    lower, g = weighted_from_stats(st, True)
    _, g2 = weighted_from_stats(shifted, False)
    logdet = st.logdet_lambda + 2.0 * jnp.sum(jnp.log(jnp.diag(g.LB)))  # log|Q_nn + Lambda|
    quad = shifted.yy - jnp.sum(g2.c * g2.c)  # y^T (Q_nn + Lambda + t I)^-1 y, by the inversion lemma
    return lower, targets(st.v) * (-0.5 * st.n * LOG_2PI - 0.5 * logdet) - 0.5 * quad


def certify(kernel, Z, noise, X, y, *, chunk: int, jitter: float, counts=None, scatter=None, known=None) -> Certificate:
    """F_V and U at the given values over rows in memory (one chunked pass; ``counts`` and ``scatter`` for rows
    grouped by input, :mod:`sparsegp.backends.replicates`; with ``known`` noise variances per row, two weighted passes,
    :func:`weighted_bounds`); with one noise per target (``noise`` (k,)), the sums of the targets' bounds."""
    if per_target(noise):
        each = [
            certify(kernel, Z, s2, X, y[:, j], chunk=chunk, jitter=jitter, counts=counts,
                    scatter=None if scatter is None else scatter[:, j])
            for j, s2 in enumerate(noise)
        ]  # fmt: skip
        return Certificate(sum(c.lower for c in each), sum(c.upper for c in each))
    Luu = kuu_cholesky(kernel, Z, jitter)
    if known is not None:
        rows = (X, y, chunk, counts, scatter)
        st = _weighted_stats(kernel, Z, Luu, noise, *rows, known=known)
        shifted = _weighted_stats(kernel, Z, Luu, noise, *rows, known=known + jnp.maximum(st.trace, 0.0))
        lower, upper = weighted_bounds(st, shifted)
        return Certificate(float(lower), float(upper))
    st = whitened_stats(kernel, Z, Luu, X, y, chunk=chunk, counts=counts, scatter=scatter)
    lower, upper = bounds_from_stats(st, noise)
    return Certificate(float(lower), float(upper))


__all__ = ["Certificate", "bounds_from_stats", "certify", "vfe_upper_bound_from_stats", "weighted_bounds"]
