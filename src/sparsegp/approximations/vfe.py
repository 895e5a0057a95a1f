"""VFE: Titsias's (2009) collapsed variational bound and optimal q(f_m)."""

from __future__ import annotations

from ..stats import whitened_stats
from .common import known_noise_terms, kuu_cholesky, posterior_from_terms, targets
from .dtc import dtc_from_stats
from .per_target import mapped_over_targets, summed_over_targets


def vfe_from_stats(st, noise):
    """F_V (eq. 9) and the Gaussian terms from the unit-weight sums of :mod:`sparsegp.stats`."""
    g = dtc_from_stats(st, noise)
    if st.v.ndim == 2:  # k targets share the trace term's penalty, once each
        return g.log_marginal - 0.5 * targets(st.v) * (st.trK - st.trQ) / noise, g
    return g.log_marginal - 0.5 * (st.trK - st.trQ) / noise, g


def vfe_terms(kernel, Z, noise, X, y, *, chunk: int, jitter: float, counts=None, scatter=None, known=None):
    if known is not None:
        w = {"counts": counts, "scatter": scatter, "known": known}
        return known_noise_terms(kernel, Z, noise, X, y, chunk=chunk, jitter=jitter, trace_term=True, **w)
    Luu = kuu_cholesky(kernel, Z, jitter)
    value, g = vfe_from_stats(whitened_stats(kernel, Z, Luu, X, y, chunk=chunk, counts=counts, scatter=scatter), noise)
    return value, Luu, g


@summed_over_targets
def vfe_bound(kernel, Z, noise, X, y, *, chunk: int, jitter: float = 1e-8, counts=None, scatter=None, known=None):
    """F_V(X_m) = log N(y | 0, sigma^2 I + Q_nn) - 1/(2 sigma^2) tr(K_nn - Q_nn)  (Titsias eq. 9).

    Q_nn = K_nm K_mm^-1 K_mn. A lower bound on log p(y) for any Z; O(n m^2), chunked. With ``known`` noise
    variances v_i per row, sigma^2 I becomes Lambda = diag(sigma^2 + v_i) and the trace term
    sum_i (K_ii - Q_ii) / (2 Lambda_i).
    """
    return vfe_terms(kernel, Z, noise, X, y, chunk=chunk, jitter=jitter, counts=counts, scatter=scatter, known=known)[0]


@mapped_over_targets
def vfe_posterior(kernel, Z, noise, X, y, *, chunk: int, jitter: float = 1e-8, counts=None, scatter=None, known=None):
    """Cache for prediction with Titsias's eq. 6 (the same predictive form as DTC)."""
    return posterior_from_terms(
        Z, vfe_terms(kernel, Z, noise, X, y, chunk=chunk, jitter=jitter, counts=counts, scatter=scatter, known=known)
    )
