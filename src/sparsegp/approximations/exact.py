"""The exact GP: the reference every sparse method is tested against.

Notation of Quiñonero-Candela & Rasmussen (2005): Q = K + sigma^2 I.
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ..linalg import cholesky, gaussian_nll, solve_lower, solve_upper


def exact_log_marginal(kernel, noise, X, y, jitter: float = 0.0):
    """log p(y | X, theta, sigma^2) for y ~ N(0, K + sigma^2 I).

    Quiñonero-Candela & Rasmussen eqs. 7-8 negated: -L = -1/2 log|Q| - 1/2 y^T Q^-1 y,
    minus the constant n/2 log(2 pi) so the value is the true log density
    (what scikit-learn's ``log_marginal_likelihood`` returns).
    Traceable, with the closed-form gradient of :func:`sparsegp.linalg.gaussian_nll`;
    ``jitter`` is relative to the mean diagonal of K.
    """
    n = X.shape[0]
    K = kernel.K(X)
    scale = jitter * jnp.mean(jnp.diag(K)) if jitter else 0.0
    return -gaussian_nll(K + (noise + scale) * jnp.eye(n, dtype=X.dtype), y)


class ExactPosterior(NamedTuple):
    """What exact prediction needs, computed once at fit time.

    L: chol(K + sigma^2 I); alpha = (K + sigma^2 I)^-1 y.
    """

    X: jnp.ndarray
    L: jnp.ndarray
    alpha: jnp.ndarray


def exact_posterior(kernel, noise, X, y) -> ExactPosterior:
    """Factorise Q = K + sigma^2 I (escalating jitter on failure) and solve for alpha."""
    n = X.shape[0]
    L, _ = cholesky(kernel.K(X) + noise * jnp.eye(n, dtype=X.dtype), name="K + noise*I (exact GP)")
    alpha = solve_upper(L, solve_lower(L, y))
    return ExactPosterior(X=X, L=L, alpha=alpha)


@partial(jax.jit, static_argnames="full_cov")
def exact_predict(kernel, posterior: ExactPosterior, Xs, full_cov: bool = False):
    """Latent predictive mean and variance (or covariance) at Xs, eq. 6.

    m(x*) = k*^T Q^-1 y, v(x*) = k** - k*^T Q^-1 k*. The variance is computed as
    k** - |L^-1 k*|^2, which can round slightly below 0 only when the true value
    is at the rounding level; it is returned as computed (not clamped).
    """
    Ks = kernel.K(posterior.X, Xs)
    mean = Ks.T @ posterior.alpha
    V = solve_lower(posterior.L, Ks)
    if full_cov:
        return mean, kernel.K(Xs) - V.T @ V
    return mean, kernel.diag(Xs) - jnp.sum(V * V, axis=0)
