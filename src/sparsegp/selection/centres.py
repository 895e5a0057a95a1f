"""More inducing inputs as cluster centres of the candidate rows, the inducing inputs already there held.

k-means in the kernel's own geometry: a row belongs to the centre c with the smallest feature-space distance
k(x, x) + k(c, c) - 2 k(x, c) (for SE-ARD, the Euclidean distance in length-scale units). The new centres are
seeded by k-means++ (each drawn with probability proportional to its distance from the nearest centre so far,
held ones included; Arthur & Vassilvitskii 2007), then Lloyd's iterations move the new centres alone to the
mean of their rows. Unlike the greedy conditional-variance pivots, which pick the rows least like any
inducing input so far (in many dimensions, the atypical ones), the centres sit where the rows are. Last, a new
centre that the others almost determine (conditional variance below RANK_FLOOR of its prior variance, in a
greedy pivoted order after the held ones) is dropped: 128 centres of banana's two inputs under a broad kernel
make K_uu singular to float64.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from ..kernels import Kernel

LLOYD_ITERATIONS = 10
RANK_FLOOR = 1e-6  # a new centre is kept only where its conditional variance exceeds this fraction of k(c, c)


def _closeness(kernel: Kernel, X: np.ndarray, C: np.ndarray) -> np.ndarray:
    """2 k(x, c) - k(c, c) for each row and centre (n, k): larger is closer (k(x, x) is common to a row)."""
    if C.shape[0] == 0:
        return np.zeros((X.shape[0], 0))
    K = np.asarray(kernel.K(jnp.asarray(X), jnp.asarray(C)))
    return 2.0 * K - np.asarray(kernel.diag(jnp.asarray(C)))[None, :]


def extend_centres(kernel: Kernel, Z: np.ndarray, X: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """Up to ``k`` new inducing inputs (k, D): cluster centres of the candidates ``X`` given the held ``Z``."""
    Z = np.asarray(Z, dtype=np.float64).reshape(-1, X.shape[1])
    k = min(int(k), X.shape[0])
    diag = np.asarray(kernel.diag(jnp.asarray(X)))
    near = np.max(_closeness(kernel, X, Z), axis=1) if Z.shape[0] else np.full(X.shape[0], -np.inf)
    seeds: list[int] = []
    for _ in range(k):
        dist = np.maximum(diag - near, 0.0) if np.isfinite(near).any() else np.ones(X.shape[0])
        dist[seeds] = 0.0
        if not np.any(dist > 1e-12 * np.max(diag)):
            break  # every candidate sits on a centre
        p = int(rng.choice(X.shape[0], p=dist / dist.sum()))
        seeds.append(p)
        near = np.maximum(near, _closeness(kernel, X, X[p : p + 1])[:, 0])
    C = X[seeds].copy()
    for _ in range(LLOYD_ITERATIONS):
        close = _closeness(kernel, X, np.vstack([Z, C]))
        owner = np.argmax(close, axis=1) - Z.shape[0]
        moved = C.copy()
        for j in range(C.shape[0]):
            rows = owner == j
            if rows.any():
                moved[j] = X[rows].mean(axis=0)
        if np.allclose(moved, C, rtol=0.0, atol=1e-12 * max(1.0, float(np.max(np.abs(X))))):
            break
        C = moved
    return _independent(kernel, Z, C)


def _independent(kernel: Kernel, Z: np.ndarray, C: np.ndarray) -> np.ndarray:
    """The rows of C, in their order, that a pivoted Cholesky factorisation of K([Z; C]) (Z first, then the new
    centre of largest conditional variance each time) takes before that variance falls below RANK_FLOOR."""
    if C.shape[0] == 0:
        return C
    K = np.asarray(kernel.K(jnp.asarray(np.vstack([Z, C]))))
    prior = np.diag(K).copy()
    residual, L = prior.copy(), np.zeros((K.shape[0], K.shape[0]))
    kept: list[int] = []

    def take(j):
        col = (K[:, j] - L[:, : len(kept)] @ L[j, : len(kept)]) / np.sqrt(max(residual[j], RANK_FLOOR * prior[j]))
        L[:, len(kept)] = col
        residual[:] = residual - col * col
        kept.append(j)

    for j in range(Z.shape[0]):
        take(j)
    open_ = np.arange(Z.shape[0], K.shape[0])
    while open_.size:
        j = int(open_[np.argmax(residual[open_])])
        if residual[j] <= RANK_FLOOR * prior[j]:
            break
        take(j)
        open_ = open_[open_ != j]
    return C[np.sort(np.array(kept[Z.shape[0] :], dtype=int)) - Z.shape[0]]


__all__ = ["extend_centres", "LLOYD_ITERATIONS", "RANK_FLOOR"]
