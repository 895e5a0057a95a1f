"""Predictions that use all n training points: augmented RRGP and Nyström.

Both need, per test point, inner products of n-vectors with
Q~^-1 = (K_nm K_mm^-1 K_mn + sigma^2 I)^-1, which Woodbury turns into
Q~^-1 u = (u - K_nm Sigma K_mn u / sigma^2) / sigma^2. For a batch of t test
points the n-vectors k_* (covariances with the training inputs) and
v_* = k_* - K_nm K_mm^-1 k(x_*) are formed one chunk of training rows at a
time, so the cost is O(n m t) and the memory O(chunk * (m + t)); no n x n
matrix is ever built.

* Augmented RRGP (Quiñonero-Candela & Rasmussen eqs. 28-29): one extra weight
  alpha_* per test point,
      m_*(x_*) = k_*^T [Q~ + v_* v_*^T / c_*]^-1 y,
      v_*(x_*) = sigma^2 + k_** - k_*^T [Q~ + v_* v_*^T / c_*]^-1 k_*,
  with c_* = k_** - k(x_*)^T K_mm^-1 k(x_*). (The paper prints "+ k_*^T [...]^-1 k_*"
  in eqs. 29 and 39; the derivation of its App. A.5, eq. A-56, gives the minus sign.)
  Sherman-Morrison applies the rank-one term. Where c_* is at rounding level the
  test point lies in the span of the support set and the augmentation is void: the
  formulas then reduce to the non-augmented ones, which is what is returned.
* Nyström (eq. 39): m = k_*^T Q~^-1 y, v = sigma^2 + k_** - k_*^T Q~^-1 k_*. Its
  latent variance k_** - k_*^T Q~^-1 k_* can be negative, because Q~ + sigma^2
  does not come from a joint prior over f and f_*; it is returned as computed.
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ..linalg import solve_lower, solve_upper
from ..stats import chunk_rows
from .common import SparsePosterior


class TrainingCache(NamedTuple):
    """Training data and r = Q~^-1 y, kept for the O(n m) predictions."""

    Xs: jnp.ndarray  # (n_chunks, chunk, D)
    rs: jnp.ndarray  # (n_chunks, chunk) r = Q~^-1 y, 0 on padding rows
    ms: jnp.ndarray  # (n_chunks, chunk) row mask


def training_cache(kernel, post: SparsePosterior, noise, X, y, chunk: int) -> TrainingCache:
    """r = Q~^-1 y = (y - K_nm mu) / sigma^2 with mu = Sigma K_mn y / sigma^2 = ``post.w_mean``."""
    Xs, ys, ms = chunk_rows(X, y, chunk)
    rs = jax.lax.map(lambda a: ms_r(kernel, post, noise, *a), (Xs, ys, ms))
    return TrainingCache(Xs, rs, ms)


def ms_r(kernel, post, noise, Xc, yc, mc):
    return mc * (yc - kernel.K(Xc, post.Z) @ post.w_mean) / noise


@partial(jax.jit, static_argnames=("method",))
def full_data_predict(kernel, post: SparsePosterior, noise, cache: TrainingCache, Xs, method: str = "augmented"):
    """Latent mean and variance at Xs by the augmented RRGP or the Nyström method."""
    m, t = post.Z.shape[0], Xs.shape[0]
    kus = kernel.K(post.Z, Xs)  # k(x_*) for each test point, (m, t)
    G = solve_upper(post.Luu, solve_lower(post.Luu, kus))  # K_mm^-1 k(x_*)
    kss = kernel.diag(Xs)
    c_star = kss - jnp.sum(kus * G, axis=0)

    def body(acc, chunk):
        Xc, rc, mc = chunk
        Ksc = kernel.K(Xc, Xs) * mc[:, None]  # k_* rows of this chunk, (c, t)
        Kcu = kernel.K(Xc, post.Z) * mc[:, None]
        Vc = Ksc - Kcu @ G  # v_* rows
        alpha, beta, kk, kv, vv, kr, vr = acc
        return (
            alpha + Kcu.T @ Ksc,
            beta + Kcu.T @ Vc,
            kk + jnp.sum(Ksc * Ksc, axis=0),
            kv + jnp.sum(Ksc * Vc, axis=0),
            vv + jnp.sum(Vc * Vc, axis=0),
            kr + Ksc.T @ rc,
            vr + Vc.T @ rc,
        ), None

    z = jnp.zeros(t, Xs.dtype)
    init = (jnp.zeros((m, t), Xs.dtype), jnp.zeros((m, t), Xs.dtype), z, z, z, z, z)
    (alpha, beta, kk, kv, vv, kr, vr), _ = jax.lax.scan(body, init, (cache.Xs, cache.rs, cache.ms))

    def U(x):  # x^T Sigma y = U(x) . U(y)
        return solve_lower(post.LB, solve_lower(post.Luu, x))

    Ua, Ub = U(alpha), U(beta)
    kQk = (kk - jnp.sum(Ua * Ua, axis=0) / noise) / noise
    if method == "nystrom":
        return kr, kss - kQk
    kQv = (kv - jnp.sum(Ua * Ub, axis=0) / noise) / noise
    vQv = (vv - jnp.sum(Ub * Ub, axis=0) / noise) / noise
    den = c_star + vQv
    # c_* at rounding level: x_* is in the span of Z and the extra weight adds nothing.
    active = c_star > 1e-10 * kss
    safe = jnp.where(active, den, 1.0)
    mean = kr - jnp.where(active, kQv * vr / safe, 0.0)
    var = kss - kQk + jnp.where(active, kQv * kQv / safe, 0.0)
    return mean, var
