"""Predictions that use all n training points: augmented RRGP and Nyström.

Both need, per test point x_*, inner products with Q~^-1 = (Q_nn + sigma^2 I)^-1, where
Q_nn = A^T A in the whitened coordinates A = Luu^-1 K_mn of :mod:`.common`. The test
point's covariances with the training inputs split as k_* = A^T l + v_* with
l = Luu^-1 k_u(x_*) and v_* = k_* - K_nm K_mm^-1 k_u(x_*) (the part of k_* that the support
set does not explain), and c_* = k_** - l^T l. With mu = LB^-T c the whitened posterior
mean, r = Q~^-1 y = (y - A^T mu) / sigma^2 and u_* = B^-1 A v_* / sigma^2,

    A Q~^-1 A^T = I - B^-1,   A Q~^-1 y = mu,   A Q~^-1 v_* = u_*,

so every term that is of order 1/sigma^2 or carries K_mm^-1 cancels algebraically and
what is left is the standard prediction plus terms in v_* (small where the support set
is good), with
    g = l^T u_*,   s = v_*^T Q~^-1 v_* = (|v_*|^2 - |LB^-1 A v_*|^2 / sigma^2) / sigma^2,   h = v_*^T r:

* Nyström (Quiñonero-Candela & Rasmussen eq. 39): m = k_*^T Q~^-1 y = l^T mu + h,
  v = k_** - k_*^T Q~^-1 k_* = c_* + |LB^-1 l|^2 - 2 g - s. Its latent variance can be
  negative, because Q~ does not come from a joint prior over f and f_*; it is returned as computed.
* Augmented RRGP (eqs. 28-29): one extra weight per test point, Q~ + v_* v_*^T / c_*
  (Sherman-Morrison, i.e. DTC with the support set Z plus x_*):
      m = l^T mu + h (c_* - g) / (c_* + s),   v = |LB^-1 l|^2 + (c_* - g)^2 / (c_* + s),
  a sum of non-negative terms. (The paper prints "+ k_*^T [...]^-1 k_*" in eqs. 29 and 39;
  the derivation of its App. A.5, eq. A-56, gives the minus sign used here.) Where
  c_* is at rounding level the test point lies in the span of the support set and the
  augmentation is void: the standard prediction is returned.

Written directly (k_*^T Q~^-1 k_* with Q~^-1 by Woodbury, K_mm^-1 k_u unwhitened), the same
formulas subtract terms of order |k_*|^2 / sigma^2 and amplify cond(K_mm); see BENCHMARKS.md,
"Augmented and Nyström predictions against a 40-digit reference". A batch of t test points
makes one pass over the training rows, one chunk at a time: O(n m (m + t)) time and
O(chunk (m + t)) memory; no n x n matrix is built.
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ..backends.jax_sums import chunk_rows
from ..linalg import solve_lower, solve_upper
from .common import SparsePosterior, projections


class TrainingCache(NamedTuple):
    """Training data and r = Q~^-1 y, kept for the O(n m) predictions.

    Rows grouped by input (:mod:`sparsegp.backends.replicates`) are one row each, weighted by their count: every
    sum over the training rows below is then a weighted sum, and r holds the group's sum of r_i.
    """

    Xs: jnp.ndarray  # (n_chunks, chunk, D)
    rs: jnp.ndarray  # (n_chunks, chunk) r = Q~^-1 y (summed over a group), 0 on padding rows
    ms: jnp.ndarray  # (n_chunks, chunk) row weight: 1, or the rows at the input; 0 on padding


def _whitened_rows(kernel, post: SparsePosterior, Xc, mc):
    """A_c = Luu^-1 K_u,c for one chunk of training rows (columns of padding rows are 0)."""
    return solve_lower(post.Luu, kernel.K(post.Z, Xc) * mc)


def training_cache(kernel, post: SparsePosterior, noise, X, y, chunk: int, counts=None) -> TrainingCache:
    """r = Q~^-1 y = (y - A^T mu) / sigma^2, the residual of the whitened posterior mean mu = LB^-T c
    (with ``counts``, y the mean targets: c_i (ybar_i - a_i^T mu) / sigma^2, the sum over the group)."""
    Xs, ys, ms = chunk_rows(X, y, chunk, counts)
    mu = solve_upper(post.LB, post.c)

    def r(args):
        Xc, yc, mc = args
        return mc * (yc - _whitened_rows(kernel, post, Xc, mc > 0).T @ mu) / noise

    return TrainingCache(Xs, jax.lax.map(r, (Xs, ys, ms)), ms)


@partial(jax.jit, static_argnames=("method",))
def full_data_predict(kernel, post: SparsePosterior, noise, cache: TrainingCache, Xs, method: str = "augmented"):
    """Latent mean and variance at Xs by the augmented RRGP or the Nyström method."""
    _, l, e1 = projections(kernel, post, Xs)  # l (m, t): V1 of the standard prediction, e1 = L_B^-1 l
    mean = l.T @ solve_upper(post.LB, post.c)  # the standard prediction l^T mu
    kss = kernel.diag(Xs)
    c_star = jnp.maximum(kss - jnp.sum(l * l, axis=0), 0.0)

    def body(acc, chunk):
        Xc, rc, mc = chunk
        mask = mc > 0
        Ac = _whitened_rows(kernel, post, Xc, mask)
        Vc = kernel.K(Xc, Xs) * mask[:, None] - Ac.T @ l  # v_* rows of this chunk, (c, t)
        Av, h, vv = acc
        Vw = Vc * mc[:, None]  # weighted by the rows at each input
        return (Av + Ac @ Vw, h + Vc.T @ rc, vv + jnp.sum(Vw * Vc, axis=0)), None

    m, t = l.shape
    z = jnp.zeros(t, Xs.dtype)
    (Av, h, vv), _ = jax.lax.scan(body, (jnp.zeros((m, t), Xs.dtype), z, z), (cache.Xs, cache.rs, cache.ms))
    W = solve_lower(post.LB, Av)
    u = solve_upper(post.LB, W) / noise
    g = jnp.sum(l * u, axis=0)
    s = jnp.maximum(vv - jnp.sum(W * W, axis=0) / noise, 0.0) / noise
    if method == "nystrom":
        return mean + h, c_star + jnp.sum(e1 * e1, axis=0) - 2.0 * g - s
    # c_* at rounding level (x_* in the span of Z): no extra weight, the standard prediction.
    active = c_star > 1e-12 * kss
    safe = jnp.where(active, c_star + s, 1.0)
    gap = c_star - g
    return (
        mean + jnp.where(active, h * gap / safe, 0.0),
        jnp.sum(e1 * e1, axis=0) + jnp.where(active, gap * gap / safe, c_star),
    )
