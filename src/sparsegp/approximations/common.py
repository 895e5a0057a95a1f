"""The m x m algebra shared by SoR, DTC, FITC and VFE.

Symbols as in NOTATION.md (the package's one notation table).

With B = I + A W A^T = L_B L_B^T and c = L_B^-1 A W y (W = I / sigma^2, or Lambda^-1 for FITC),
log N(y | 0, Q_nn + W^-1) = -n/2 log 2 pi - sum log diag L_B - 1/2 log|W^-1| - 1/2 y^T W y + 1/2 c^T c
(matrix determinant and inversion lemmas), and the predictive mean at x* is k_u(x*)^T L_uu^-T L_B^-T c.
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp

from .._compile import compiled_when_eager
from .._config import LOG_2PI
from ..linalg import cholesky_fixed, solve_lower, solve_upper
from .per_target import batched, last_axis


@compiled_when_eager
def kuu_cholesky(kernel, Z, jitter: float):
    """chol(K_uu + jitter * mean(diag) I) (traceable; NaN if it fails)."""
    return cholesky_fixed(kernel.K(Z), jitter)


def targets(v) -> int:
    """How many targets the sums hold: columns of ``v`` = A W Y (1 for a vector)."""
    return 1 if v.ndim == 1 else v.shape[1]


class GaussianTerms(NamedTuple):
    log_marginal: jnp.ndarray  # log N(y | 0, Q_nn + W^-1)
    LB: jnp.ndarray
    c: jnp.ndarray


def gaussian_terms(S_w, v_w, yWy, logdet_noise, n) -> GaussianTerms:
    """log N(y | 0, Q_nn + W^-1) from whitened weighted sums.

    ``S_w = A W A^T``, ``v_w = A W y``, ``yWy = y^T W y``, ``logdet_noise = log|W^-1|``.
    """
    m = S_w.shape[0]
    B = jnp.eye(m, dtype=S_w.dtype) + S_w
    LB = cholesky_fixed(B, 0.0)
    c = solve_lower(LB, v_w)
    if v_w.ndim == 2:  # k targets (``v_w`` = A W Y, yWy summed over them): the sum of their log densities
        k = v_w.shape[1]
        val = k * (-0.5 * n * LOG_2PI - jnp.sum(jnp.log(jnp.diag(LB))) - 0.5 * logdet_noise)
        return GaussianTerms(val - 0.5 * yWy + 0.5 * jnp.sum(c * c), LB, c)
    val = -0.5 * n * LOG_2PI - jnp.sum(jnp.log(jnp.diag(LB))) - 0.5 * logdet_noise - 0.5 * yWy + 0.5 * jnp.dot(c, c)
    return GaussianTerms(val, LB, c)


@compiled_when_eager
def unit_from_stats(st, noise) -> GaussianTerms:
    """log N(y | 0, sigma^2 I + Q_nn) and its factors from the unit-weight sums (W = I / sigma^2)."""
    return gaussian_terms(st.S / noise, st.v / noise, st.yy / noise, st.n * jnp.log(noise), st.n)


def weighted_from_stats(st, trace_term: bool):
    """log N(y | 0, Q_nn + Lambda) and its factors from the 1 / Lambda_i-weighted sums (:func:`~sparsegp.backends.jax_sums.
    weighted_stats`), less sum_i (K_ii - Q_ii) / (2 Lambda_i) with ``trace_term``: with Lambda = diag(sigma^2 +
    v_i), DTC's objective and VFE's bound (Titsias eq. 9 with the noise sigma^2 I replaced by Lambda)."""
    g = gaussian_terms(st.S, st.v, st.yy, st.logdet_lambda, st.n)
    return (g.log_marginal - 0.5 * targets(st.v) * st.resid if trace_term else g.log_marginal), g


class SparsePosterior(NamedTuple):
    """What prediction needs, cached at fit time: mean O(m), variance O(m^2) per test point.

    ``w_mean = Luu^-T LB^-T c`` gives the mean k_u(x*)^T w_mean; ``Luu`` and
    ``LB`` give the variance. SoR's degenerate prior (eq. 27 of Quiñonero-Candela &
    Rasmussen), whose latent variance is k^T Sigma k alone, is the ``degenerate`` flag of
    :func:`sparse_predict`, not a field of the posterior.
    """

    Z: jnp.ndarray
    Luu: jnp.ndarray
    LB: jnp.ndarray
    c: jnp.ndarray
    w_mean: jnp.ndarray


def make_posterior(Z, Luu, LB, c) -> SparsePosterior:
    return SparsePosterior(Z, Luu, LB, c, solve_upper(Luu, solve_upper(LB, c)))


def posterior_from_terms(Z, terms) -> SparsePosterior:
    """The posterior from an approximation's ``(objective, L_uu, GaussianTerms)`` (its ``*_terms``)."""
    _, Luu, g = terms
    return make_posterior(Z, Luu, g.LB, g.c)


def projections(kernel, post: SparsePosterior, X):
    """K_u* and the whitened projections V1 = L_uu^-1 K_u* (|V1|^2: Q_**) and V2 = L_B^-1 V1 (|V2|^2: the
    posterior's variance of u in whitened form) at X: what prediction and leave-one-out are written from."""
    Kus = kernel.K(post.Z, X)
    V1 = solve_lower(post.Luu, Kus)
    return Kus, V1, solve_lower(post.LB, V1)


@partial(jax.jit, static_argnames=("full_cov", "degenerate"))
def sparse_predict(kernel, post: SparsePosterior, Xs, full_cov: bool = False, degenerate: bool = False):
    """Latent predictive mean and variance (or covariance) at Xs.

    DTC / VFE / FITC (Titsias eq. 6; Seeger et al. App. A.2):
        mean = K_*u Sigma K_un W y,  var = K_** - Q_** + K_*u Sigma K_u*;
    SoR (Quiñonero-Candela & Rasmussen eq. 27, degenerate): var = K_*u Sigma K_u*.
    Computed as V1 = Luu^-1 K_u*, V2 = LB^-1 V1: var = K_** - |V1|^2 + |V2|^2. A posterior of k targets with a
    noise each gives each target's, the targets last.
    """
    if batched(post, "LB"):
        one = partial(sparse_predict, kernel, full_cov=full_cov, degenerate=degenerate)
        return tuple(last_axis(a) for a in jax.vmap(one, in_axes=(0, None))(post, Xs))
    Kus, V1, V2 = projections(kernel, post, Xs)
    mean = Kus.T @ post.w_mean
    if full_cov:
        cov = V2.T @ V2
        return mean, cov if degenerate else cov + kernel.K(Xs) - V1.T @ V1
    var = jnp.sum(V2 * V2, axis=0)
    return mean, var if degenerate else var + kernel.diag(Xs) - jnp.sum(V1 * V1, axis=0)


@jax.jit
def unexplained_variance(kernel, post: SparsePosterior, Xs):
    """K_** - Q_** at Xs: the prior variance the inducing inputs do not span (what SoR's eq. 27 variance omits);
    the same for every target of a posterior with a noise each (they share Z and K_uu)."""
    if batched(post, "LB"):
        post = jax.tree_util.tree_map(lambda a: a[0], post)
    _, V1, _ = projections(kernel, post, Xs)  # (V2 unused: the compiled program drops it)
    return kernel.diag(Xs) - jnp.sum(V1 * V1, axis=0)
