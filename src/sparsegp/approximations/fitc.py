"""FITC / SPGP (Snelson & Ghahramani 2006), as compared in Titsias 2009 sec. 2.

The prior's covariance is replaced by Q_nn + diag(K_nn - Q_nn) (eq. 3 with the
SPGP Q_nn), so the marginal likelihood is N(y | 0, Q_nn + Lambda) with
Lambda = diag(K_nn - Q_nn) + sigma^2 I (+ diag(v_i) with ``known`` noise variances per row).
"""

from __future__ import annotations

from ..stats import fitc_stats
from .common import kuu_cholesky, posterior_from_terms, weighted_from_stats
from .per_target import mapped_over_targets, summed_over_targets


def fitc_terms(kernel, Z, noise, X, y, *, chunk: int, jitter: float, counts=None, scatter=None, known=None):
    Luu = kuu_cholesky(kernel, Z, jitter)
    st = fitc_stats(kernel, Z, Luu, noise, X, y, chunk=chunk, counts=counts, scatter=scatter, known=known)
    g = weighted_from_stats(st, False)[1]
    return g.log_marginal, Luu, g


@summed_over_targets
def fitc_log_marginal(
    kernel, Z, noise, X, y, *, chunk: int, jitter: float = 1e-8, counts=None, scatter=None, known=None
):
    """log N(y | 0, Q_nn + Lambda), Lambda = diag(K_nn - Q_nn) + sigma^2 I."""
    return fitc_terms(kernel, Z, noise, X, y, chunk=chunk, jitter=jitter, counts=counts, scatter=scatter, known=known)[
        0
    ]


@mapped_over_targets
def fitc_posterior(kernel, Z, noise, X, y, *, chunk: int, jitter: float = 1e-8, counts=None, scatter=None, known=None):
    return posterior_from_terms(
        Z, fitc_terms(kernel, Z, noise, X, y, chunk=chunk, jitter=jitter, counts=counts, scatter=scatter, known=known)
    )
