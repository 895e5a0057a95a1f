"""More inducing inputs for a set that is already there: greedy conditional variance given Z.

The set Z need not be training rows (a fit may have moved it). The rows added are the pivots of a partial
pivoted Cholesky of K over the candidates, continued from Z's block: each is the candidate with the largest
prior variance left unexplained by Z and by the rows added before it, K_ii - Q_ii. Its inclusion lowers the
VFE trace term tr(K_nn - Q_nn) (Titsias 2009, eq. 9) by at least that residual, which is why Burt, Rasmussen &
van der Wilk (2020) recommend it for initialising inducing inputs.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import scipy.linalg

from ..kernels import Kernel
from ..kernels.gram import gram
from ..linalg import INDUCING_JITTER, cholesky


def residual_factor(kernel: Kernel, Z: np.ndarray, X: np.ndarray, jitter: float = INDUCING_JITTER):
    """(V, d): V = L^-1 K_uf with L L^T = K_uu + jitter mean(diag K_uu) I, and d = diag(K_ff) - diag(V^T V)."""
    G = gram(kernel, X)
    Kuu = np.asarray(kernel.K(jnp.asarray(Z)))
    Kuf = G.cross(Z, np.arange(X.shape[0])) if Z.shape[0] else np.zeros((0, X.shape[0]))
    scale = float(np.mean(np.diag(Kuu))) if Z.shape[0] else 1.0
    # the jitter the fit's objective adds, escalated (with a clear error at the cap) only if that fails
    L, _ = cholesky(Kuu + jitter * scale * np.eye(Z.shape[0]), name="K_uu of the inducing inputs", jitter=jitter)
    L = np.asarray(L)
    V = scipy.linalg.solve_triangular(L, Kuf, lower=True)
    return G, V, G.diag() - np.einsum("ij,ij->j", V, V)


def extend_conditional_variance(kernel: Kernel, Z: np.ndarray, X: np.ndarray, k: int, jitter: float = INDUCING_JITTER):
    """Indices of up to ``k`` rows of the candidates ``X`` chosen greedily given the inducing inputs ``Z``.

    Stops early when no candidate has residual variance left: above 100 times the jitter's share of the largest
    prior variance (a candidate at an inducing input keeps about the jitter as residual).
    """
    G, V, d = residual_factor(kernel, np.asarray(Z, dtype=np.float64), X, jitter)
    floor = max(100 * jitter, 1e-12) * max(float(np.max(G.diag())), 1e-300)
    E = np.zeros((k, X.shape[0]))
    chosen: list[int] = []
    for j in range(min(k, X.shape[0])):
        p = int(np.argmax(d))
        if d[p] <= floor:
            break
        e = (G.column(p) - V.T @ V[:, p] - E[:j].T @ E[:j, p]) / np.sqrt(d[p])
        E[j] = e
        d = d - e**2
        d[p] = -np.inf
        d[chosen] = -np.inf
        chosen.append(p)
    return np.asarray(chosen, dtype=np.int64)


__all__ = ["extend_conditional_variance", "residual_factor"]
