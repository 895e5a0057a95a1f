"""DTC / projected process (Seeger, Williams & Lawrence 2003).

The likelihood approximation P(y | u) = N(y | P^T u, sigma^2 I), P = K_I^-1 K_I,.
gives the approximate marginal likelihood N(y | 0, sigma^2 I + Q_nn) whose
negative log is phi of their Appendix A.2; the predictive mean is
l_M*^T beta and the variance K_** - |l_*|^2 + sigma^2 |l_M*|^2 (their sec. 2.1),
which equals K_** - Q_** + K_*u Sigma K_u* as computed here.
"""

from __future__ import annotations

import jax.numpy as jnp

from .._compile import compiled_when_eager
from ..stats import whitened_stats
from .common import gaussian_terms, known_noise_terms, kuu_cholesky, posterior_from_terms
from .per_target import mapped_over_targets, summed_over_targets


@compiled_when_eager
def dtc_from_stats(st, noise):
    """log N(y | 0, sigma^2 I + Q_nn) and its factors from the unit-weight sums (W = I / sigma^2)."""
    return gaussian_terms(st.S / noise, st.v / noise, st.yy / noise, st.n * jnp.log(noise), st.n)


def dtc_terms(kernel, Z, noise, X, y, *, chunk: int, jitter: float, counts=None, scatter=None, known=None):
    if known is not None:
        w = {"counts": counts, "scatter": scatter, "known": known}
        return known_noise_terms(kernel, Z, noise, X, y, chunk=chunk, jitter=jitter, trace_term=False, **w)
    Luu = kuu_cholesky(kernel, Z, jitter)
    g = dtc_from_stats(whitened_stats(kernel, Z, Luu, X, y, chunk=chunk, counts=counts, scatter=scatter), noise)
    return g.log_marginal, Luu, g


@summed_over_targets
def dtc_log_marginal(
    kernel, Z, noise, X, y, *, chunk: int, jitter: float = 1e-8, counts=None, scatter=None, known=None
):
    """log N(y | 0, sigma^2 I + Q_nn) = -phi (Seeger et al. App. A.2, without their hyper-prior terms)."""
    return dtc_terms(kernel, Z, noise, X, y, chunk=chunk, jitter=jitter, counts=counts, scatter=scatter, known=known)[0]


@mapped_over_targets
def dtc_posterior(kernel, Z, noise, X, y, *, chunk: int, jitter: float = 1e-8, counts=None, scatter=None, known=None):
    return posterior_from_terms(
        Z, dtc_terms(kernel, Z, noise, X, y, chunk=chunk, jitter=jitter, counts=counts, scatter=scatter, known=known)
    )
