"""SoR / reduced-rank GP (Quiñonero-Candela & Rasmussen 2005, sec. 4.1-4.2).

f = K_nm alpha_m with alpha_m ~ N(0, K_mm^-1) (eq. 22) gives the evidence
N(y | 0, sigma^2 I + K_nm K_mm^-1 K_mn) (eq. 23; the same value as DTC's) and
the degenerate prediction of eq. 27: mean k(x*)^T mu, variance
sigma^2 + k(x*)^T Sigma k(x*), which collapses to the noise far from Z.
"""

from __future__ import annotations

from .dtc import dtc_log_marginal, dtc_posterior


def sor_log_marginal(
    kernel, Z, noise, X, y, *, chunk: int, jitter: float = 1e-8, counts=None, scatter=None, known=None
):
    """log p(y | X, theta, sigma^2) of the RRGP (eq. 23); identical to DTC's approximate marginal
    (one noise per target included)."""
    return dtc_log_marginal(
        kernel, Z, noise, X, y, chunk=chunk, jitter=jitter, counts=counts, scatter=scatter, known=known
    )


def sor_posterior(kernel, Z, noise, X, y, *, chunk: int, jitter: float = 1e-8, counts=None, scatter=None, known=None):
    """mu and Sigma of eq. 26 in factored form; predict with ``degenerate=True``."""
    return dtc_posterior(
        kernel, Z, noise, X, y, chunk=chunk, jitter=jitter, counts=counts, scatter=scatter, known=known
    )
