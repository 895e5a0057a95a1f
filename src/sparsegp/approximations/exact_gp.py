"""The exact GP: the reference every sparse method is tested against.

Notation of Quiñonero-Candela & Rasmussen (2005): Q = K + sigma^2 I.
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp

from .._config import LOG_2PI
from ..linalg import cholesky, gaussian_nll, solve_lower, solve_upper
from .per_target import batched, last_axis, per_target, stack_targets, summed_over_targets

# A sparse model's ``objective_name_`` where its inducing inputs are every training input: there every approximation
# is the exact GP (Q_nn = K_nn), and the fit and ``log_marginal_likelihood`` evaluate this, not the sparse algebra.
DESCRIPTION = "exact GP log marginal likelihood log p(y | theta) (RW eq. 2.30; Z = every training input)"


@summed_over_targets
def exact_log_marginal(kernel, noise, X, y, jitter: float = 0.0, counts=None, scatter=None, known=None):
    """log p(y | X, theta, sigma^2) for y ~ N(0, K + sigma^2 I).

    Quiñonero-Candela & Rasmussen eqs. 7-8 negated: -L = -1/2 log|Q| - 1/2 y^T Q^-1 y,
    minus the constant n/2 log(2 pi) so the value is the true log density
    (what scikit-learn's ``log_marginal_likelihood`` returns).
    Traceable, with the closed-form gradient of :func:`sparsegp.linalg.gaussian_nll`;
    ``jitter`` is relative to the mean diagonal of K.

    With ``counts`` c_i rows at each input X_i, y their mean targets and ``scatter`` SS_i their
    within-input sums of squares (:mod:`sparsegp.backends.replicates`), the value is that of all the rows:
    log N(y | 0, K + sigma^2 C^-1) - sum_i [(c_i - 1)/2 log(2 pi sigma^2) + SS_i / (2 sigma^2) + 1/2 log c_i].
    With ``known`` noise variances v_i (rows grouped together share theirs), sigma^2 is sigma^2 + v_i in each
    term: the Gaussian likelihood N(y | f, diag(sigma^2 + v_i)). With one noise per target (``noise`` (k,)), the sum
    of the targets' (:mod:`.per_target`).
    """
    n = X.shape[0]
    K = kernel.K(X)
    scale = jitter * jnp.mean(jnp.diag(K)) if jitter else 0.0
    if counts is None and known is None:
        return -gaussian_nll(K + (noise + scale) * jnp.eye(n, dtype=X.dtype), y)
    if counts is None:
        counts, scatter = jnp.ones(n, X.dtype), jnp.zeros(n, X.dtype)
    lam = noise if known is None else noise + known
    within = 0.5 * jnp.sum((counts - 1.0) * (LOG_2PI + jnp.log(lam)) + jnp.log(counts))
    if y.ndim == 2:  # k targets: each input's contrasts and Jacobian once per target (scatter sums over them)
        within = y.shape[1] * within
    within = within + (0.5 * jnp.sum(scatter) / noise if known is None else 0.5 * jnp.sum(scatter / lam))
    return -gaussian_nll(K + jnp.diag((lam + scale) / counts), y) - within


class ExactPosterior(NamedTuple):
    """What exact prediction needs, computed once at fit time.

    L: chol(K + N) with N = diag(``noise_diag``): sigma^2 / c_i plus the ``jitter`` the factor needed (the
    noise the posterior holds); alpha = (K + N)^-1 y.
    """

    X: jnp.ndarray
    L: jnp.ndarray
    alpha: jnp.ndarray
    noise_diag: jnp.ndarray
    jitter: float


def exact_posterior(kernel, noise, X, y, counts=None, known=None) -> ExactPosterior:
    """Factorise Q = K + sigma^2 I (escalating jitter on failure) and solve for alpha; with ``counts`` rows at
    each input and y their mean targets, Q = K + sigma^2 C^-1 (the same predictions as from all the rows); with
    ``known`` noise variances, sigma^2 + v_i in place of sigma^2. With one noise per target (``noise`` (k,), y (n, k)),
    one posterior per target, each field with a leading axis k."""
    if per_target(noise):
        each = [exact_posterior(kernel, s2, X, y[:, j], counts=counts, known=known) for j, s2 in enumerate(noise)]
        return stack_targets(each)
    n = X.shape[0]
    lam = noise if known is None else noise + jnp.asarray(known, dtype=X.dtype)
    noise_diag = lam * jnp.ones(n, dtype=X.dtype) if counts is None else lam / jnp.asarray(counts, dtype=X.dtype)
    L, jitter = cholesky(kernel.K(X) + jnp.diag(noise_diag), name="K + noise*I (exact GP)")
    alpha = solve_upper(L, solve_lower(L, y))
    return ExactPosterior(X=X, L=L, alpha=alpha, noise_diag=noise_diag + jitter, jitter=jitter)


@partial(jax.jit, static_argnames="full_cov")
def exact_predict(kernel, posterior: ExactPosterior, Xs, full_cov: bool = False):
    """Latent predictive mean and variance (or covariance) at Xs, eq. 6.

    m(x*) = k*^T Q^-1 y, v(x*) = k** - k*^T Q^-1 k*. The variance is computed as
    k** - |L^-1 k*|^2, which can round slightly below 0 only when the true value
    is at the rounding level; it is returned as computed (not clamped). A posterior of k targets with a noise each
    gives each target's, the targets last.
    """
    if batched(posterior, "L"):
        each = jax.vmap(lambda p: exact_predict(kernel, p, Xs, full_cov=full_cov))(posterior)
        return tuple(last_axis(a) for a in each)
    Ks = kernel.K(posterior.X, Xs)
    mean = Ks.T @ posterior.alpha
    V = solve_lower(posterior.L, Ks)
    if full_cov:
        return mean, kernel.K(Xs) - V.T @ V
    return mean, kernel.diag(Xs) - jnp.sum(V * V, axis=0)
