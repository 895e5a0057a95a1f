"""Dense from-scratch recomputations that the tests hold the chunked and incremental code against.

Not public API: each function recomputes, from its definition and without chunks or incremental
updates, what a production routine maintains (the statistics of :mod:`sparsegp.backends.jax_sums`, the state of
:class:`~sparsegp.selection.active_set.ActiveSetState`).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import scipy.linalg as sl

from sparsegp._config import LOG_2PI
from sparsegp.backends.jax_sums import Stats, WeightedStats, _stats_forward, chunk_rows
from sparsegp.linalg import solve_lower


def whitened_stats_autodiff(kernel, Z, Luu, X, y, chunk: int):
    """The same sums as :func:`whitened_stats`, differentiated by JAX (reference for tests)."""
    Xs, ys, ms = chunk_rows(X, y, chunk)
    return _stats_forward(Luu, kernel, Z, Xs, ys, ms)


def dense_stats(kernel, Z, Luu, X, y):
    """Unchunked reference: the same sums from the full m x n matrix."""
    A = solve_lower(Luu, kernel.K(Z, X))
    return Stats(A @ A.T, A @ y, y @ y, jnp.sum(kernel.diag(X)), jnp.sum(A * A), jnp.asarray(X.shape[0], X.dtype))


def weighted_dense_stats(kernel, Z, Luu, noise, X, y, known=0.0, diagonal=1.0) -> WeightedStats:
    """Unchunked reference for :func:`weighted_stats`: Lambda = diagonal (K - Q) + sigma^2 + v."""
    A = solve_lower(Luu, kernel.K(Z, X))
    r = kernel.diag(X) - jnp.sum(A * A, axis=0)
    lam = diagonal * r + noise + known
    Aw = A / lam
    n = jnp.asarray(X.shape[0], X.dtype)
    sums = (A @ Aw.T, Aw @ y, jnp.sum(y * y / lam), jnp.sum(jnp.log(lam)), n, jnp.sum(r / lam), jnp.sum(r))
    return WeightedStats(*sums)


def dense_state(K: np.ndarray, y: np.ndarray, noise: float, I) -> dict:
    """Every quantity of :class:`ActiveSetState` recomputed from its definition (for tests)."""
    I = np.asarray(I, dtype=np.int64)
    L = np.linalg.cholesky(K[np.ix_(I, I)])
    V = sl.solve_triangular(L, K[I], lower=True)
    M = noise * np.eye(len(I)) + V @ V.T
    LM = np.linalg.cholesky(M)
    beta = sl.solve_triangular(LM, V @ y, lower=True)
    Minv = np.linalg.inv(M)
    n = K.shape[0]
    Qnn = V.T @ V
    cov = noise * np.eye(n) + Qnn
    _, logdet = np.linalg.slogdet(cov)
    phi = 0.5 * (logdet + y @ np.linalg.solve(cov, y) + n * LOG_2PI)
    return {
        "L": L,
        "V": V,
        "LM": LM,
        "beta": beta,
        "p": np.diag(Qnn).copy(),
        "q": np.einsum("ij,ij->j", V, Minv @ V),
        "mu": V.T @ Minv @ V @ y,
        "dtc_log_marginal": -phi,
        "vfe_bound": -phi - 0.5 * float(np.trace(K) - np.trace(Qnn)) / noise,
    }
