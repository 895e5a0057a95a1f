"""Upper bounds on log p(y | theta) tighter than the trace bound of :mod:`.certificate`, for rows in memory.

With A = K_nn + D (D = sigma^2 C^-1, the noise of each distinct input's c_i rows), Q = K_nu K_uu^-1 K_un and
log p(y) = -1/2 log|A| - 1/2 y^T A^-1 y - n/2 log 2 pi - (the replicates' within-input terms;
:func:`.exact.exact_log_marginal`), each bound replaces a term by a bound on it from the other side:

* ``"exact"``: log p(y) itself, from a dense Cholesky of A (n^3 / 3 flops, about two n x n arrays at the peak): up
  to EXACT_ROWS distinct inputs, where the memory allows, the certificate's upper end is the truth, and its gap
  is KL(q || posterior) itself.
* ``"cg"``: the quadratic form from below, y^T A^-1 y >= 2 v^T y - v^T A v for any v (Artemev, Burt & van der
  Wilk 2021, "Tighter bounds on the log marginal likelihood of Gaussian process regression using conjugate
  gradients"), v the iterates of conjugate gradients on A v = y preconditioned by (Q + D)^-1 (each iterate
  minimises 1/2 v^T A v - v^T y over a larger space, so each bound is tighter); the log-determinant from below,
  log|A| = log|Q + D| + sum_i log(1 + lambda_i) over the eigenvalues lambda_i >= 0 of
  M = (Q + D)^-1/2 (K - Q) (Q + D)^-1/2, and log(1 + lambda) >= lambda - lambda^2 / 2 for lambda >= 0, so
  log|A| >= log|Q + D| + max(0, tr M - tr M^2 / 2). One CG iteration is one product with K_nn in chunks
  (about n^2 (2 D + 10) flops); the traces one chunked pass over K - Q (4 n^2 m flops), made where that is
  at most REFINE_FLOPS. Up to CG_ROWS distinct inputs.

Beyond CG_ROWS, and where the rows are not in memory, the trace bound is the certificate.
"""

from __future__ import annotations

import os
import time
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import scipy.linalg as sl

from .._config import LOG_2PI
from ..backends.jax_sums import chunk_rows
from ..linalg import blocked_cholesky, solve_lower
from .certificate import Certificate
from .common import kuu_cholesky

EXACT_ROWS = 20_000  # the dense factor: 3.2 GB and about 2.7e12 flops at the cap
CG_ROWS = 100_000
REFINE_FLOPS = 4e12  # the log-determinant's chunked pass over K - Q
CG_MAX_ITER = 200
CG_TOL_PER_ROW = 1e-3  # stop once the bound on 1/2 y^T A^-1 y is certainly within this of it, nats per row


def within_terms(noise: float, counts, scatter) -> float:
    """The replicates' part of log p(all rows) beyond log N(y_bar | 0, K + sigma^2 C^-1)
    (:func:`.exact.exact_log_marginal`), 0 without replicates."""
    if counts is None:
        return 0.0
    c, ss = np.asarray(counts, float), np.asarray(scatter, float)
    return float(0.5 * np.sum((c - 1.0) * (LOG_2PI + np.log(noise)) + np.log(c)) + 0.5 * np.sum(ss) / noise)


def noise_diag(noise: float, n: int, counts) -> np.ndarray:
    return np.full(n, noise) if counts is None else noise / np.asarray(counts, float)


def exact_upper(kernel, noise: float, X, y, *, chunk: int, counts=None, scatter=None) -> float:
    """log p(y | theta) by a dense Cholesky of K + D, K built in row chunks into the one n x n array the
    factor overwrites (:func:`~sparsegp.linalg.blocked_cholesky`; NaN where it fails)."""
    n = X.shape[0]
    A = np.empty((n, n))
    Xj = jnp.asarray(X)
    for i in range(0, n, chunk):
        A[i : i + chunk] = np.asarray(kernel.K(Xj[i : i + chunk], Xj))
    A[np.diag_indices(n)] += noise_diag(noise, n, counts)
    L, info = blocked_cholesky(A, overwrite=True)
    if info != 0:
        return float("nan")
    a = sl.solve_triangular(L, np.asarray(y, dtype=float), lower=True, check_finite=False)
    logdet = 2.0 * np.sum(np.log(np.diag(L)))
    return float(-0.5 * (logdet + a @ a + n * LOG_2PI) - within_terms(noise, counts, scatter))


def available_memory() -> float | None:
    """Bytes of memory not in use on this machine (Linux; None elsewhere)."""
    try:
        return float(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


@partial(jax.jit, static_argnames=("n",))
def _k_matvec(kernel, Xs, X, v, n: int):
    """K_nn v in row chunks (``Xs`` from :func:`~sparsegp.backends.jax_sums.chunk_rows`)."""

    def one(Xc):
        return kernel.K(Xc, X) @ v

    return jax.lax.map(one, Xs).reshape(-1)[:n]


class _Nystrom:
    """(Q + D)^-1 by the inversion lemma, with A_w = L_uu^-1 K_un: (Q + D)^-1 = D^-1 - D^-1 A_w^T B^-1 A_w D^-1,
    B = I + A_w D^-1 A_w^T = L_B L_B^T; and W = D^-1/2 A_w^T L_B^-T, so (Q + D)^-1 = D^-1/2 (I - W W^T) D^-1/2."""

    def __init__(self, kernel, Z, X, d, jitter: float):
        Luu = kuu_cholesky(kernel, jnp.asarray(Z), jitter)
        Aw = np.asarray(solve_lower(Luu, kernel.K(jnp.asarray(Z), jnp.asarray(X))))
        m = Aw.shape[0]
        self.Aw, self.d = Aw, d
        self.LB = np.linalg.cholesky(np.eye(m) + (Aw / d) @ Aw.T)
        self.W = np.asarray(solve_lower(jnp.asarray(self.LB), jnp.asarray(Aw / np.sqrt(d))).T)
        self.logdet = float(np.sum(np.log(d)) + 2.0 * np.sum(np.log(np.diag(self.LB))))  # log|Q + D|

    def solve(self, r):
        s = r / np.sqrt(self.d)
        return (s - self.W @ (self.W.T @ s)) / np.sqrt(self.d)


def _cg_quadratic(kernel, X, y, d, pre: _Nystrom, chunk: int):
    """(2 v^T y - v^T A v at the last CG iterate v, iterations): a lower bound on y^T A^-1 y for any v, the
    iterations stopped once it is within 2 CG_TOL_PER_ROW n of it, or at CG_MAX_ITER. The bound is evaluated
    with a product A v of its own, not the recurrence's residual, whose rounding drifts."""
    n = X.shape[0]
    Xs = chunk_rows(jnp.asarray(X), jnp.zeros(n), chunk)[0]
    Xj = jnp.asarray(X)

    def A(v):
        return np.asarray(_k_matvec(kernel, Xs, Xj, jnp.asarray(v), n)) + d * v

    v, r = np.zeros(n), y.copy()
    z = pre.solve(r)
    p, rz = z.copy(), float(r @ z)
    iters = 0
    while iters < CG_MAX_ITER:
        iters += 1
        Ap = A(p)
        alpha = rz / float(p @ Ap)
        v = v + alpha * p
        r = r - alpha * Ap
        # y^T A^-1 y = 2 v^T y - v^T A v + r^T A^-1 r, and r^T A^-1 r <= |r|^2 / min(D): the bound's slack
        if float(r @ r) / float(np.min(d)) <= 2.0 * CG_TOL_PER_ROW * n:
            break
        z = pre.solve(r)
        rz_new = float(r @ z)
        p, rz = z + (rz_new / rz) * p, rz_new
    return max(0.0, float(2.0 * (v @ y) - v @ A(v))), iters


def _logdet_excess(kernel, X, d, pre: _Nystrom, chunk: int) -> float:
    """:func:`second_order` of tr M and tr M^2, <= log|A| - log|Q + D|, with R^ = D^-1/2 (K - Q) D^-1/2:
    tr M = tr R^ - tr(W^T R^ W), tr M^2 = |R^|_F^2 - 2 |R^ W|_F^2 + |W^T R^ W|_F^2, one chunked pass."""
    n, m = X.shape[0], pre.W.shape[1]
    Xj, sd = jnp.asarray(X), np.sqrt(d)
    tr_r, fro_r, fro_g, H = 0.0, 0.0, 0.0, np.zeros((m, m))
    for i in range(0, n, chunk):
        sl_ = slice(i, i + chunk)
        R = np.asarray(kernel.K(Xj[sl_], Xj)) - pre.Aw[:, sl_].T @ pre.Aw
        R /= sd[sl_, None] * sd[None, :]
        tr_r += float(np.trace(R[:, i : i + R.shape[0]]))
        fro_r += float(np.sum(R * R))
        G = R @ pre.W
        fro_g += float(np.sum(G * G))
        H += pre.W[sl_].T @ G
    t1 = tr_r - float(np.trace(H))
    t2 = max(fro_r - 2.0 * fro_g + float(np.sum(H * H)), 0.0)
    return second_order(t1, t2)


def second_order(t1: float, t2: float) -> float:
    """A lower bound on sum_i log(1 + lambda_i) over eigenvalues lambda_i >= 0 with sum t1 and sum of squares t2:
    the larger of sum (lambda - lambda^2 / 2) (log(1 + lambda) >= lambda - lambda^2 / 2) and of the chord,
    log(1 + lambda) >= lambda log(1 + Lam) / Lam on [0, Lam] (concavity), Lam = min(sqrt(t2), t1) >= lambda_max."""
    lam = min(np.sqrt(t2), t1)
    chord = t1 * np.log1p(lam) / lam if lam > 0 else 0.0
    return float(max(0.0, t1 - 0.5 * t2, chord))


def cg_upper(kernel, Z, noise: float, X, y, *, chunk: int, jitter: float, counts=None, scatter=None):
    """(U, description) of the ``"cg"`` bound in the module docstring."""
    n, m = X.shape[0], Z.shape[0]
    d = noise_diag(noise, n, counts)
    yv = np.asarray(y, float)
    pre = _Nystrom(kernel, Z, X, d, jitter)
    quad, iters = _cg_quadratic(kernel, X, yv, d, pre, chunk)
    logdet, how = pre.logdet, "log|Q + D|"
    if 4.0 * n * n * m <= REFINE_FLOPS:
        logdet += _logdet_excess(kernel, X, d, pre, chunk)
        how = "log|Q + D| plus a second-order bound on log|I + M|"
    upper = -0.5 * (logdet + quad + n * LOG_2PI) - within_terms(noise, counts, scatter)
    return float(upper), f"quadratic form by {iters} preconditioned CG iterations; log-determinant by {how}"


def choose(n: int, memory: float | None = None) -> str:
    """The bound the certificate uses for ``n`` distinct inputs in memory: "exact" where the dense factor's
    three n x n arrays (K + D, overwritten by its factor, and the products of its blocks) fit in half the ``memory`` free
    (default: this machine's)."""
    memory = available_memory() if memory is None else memory
    fits = memory is None or 2 * 8.0 * n * n <= 0.5 * memory
    return "exact" if n <= EXACT_ROWS and fits else ("cg" if n <= CG_ROWS else "trace")


def tighten(
    cert: Certificate,
    kernel,
    Z,
    noise,
    X,
    y,
    *,
    chunk: int,
    jitter: float,
    counts=None,
    scatter=None,
    bound: str | None = None,
) -> Certificate:
    """``cert`` (the trace bound) with its upper end replaced by the ``bound`` named (default :func:`choose`'s)
    where that is lower, its name, cost in seconds and how it was made."""
    bound = choose(X.shape[0]) if bound is None else bound
    if bound == "trace":
        return cert._replace(bound="trace", detail="lambda_max(K - Q) bounded by tr(K - Q)")
    t0 = time.perf_counter()
    weights = {"counts": counts, "scatter": scatter}
    if bound == "exact":
        upper, detail = exact_upper(kernel, noise, X, y, chunk=chunk, **weights), "log p(y) by a dense Cholesky"
    else:
        upper, detail = cg_upper(kernel, Z, noise, X, y, chunk=chunk, jitter=jitter, **weights)
    seconds = time.perf_counter() - t0
    if not np.isfinite(upper) or upper >= cert.upper:
        why = "its factor failed" if not np.isfinite(upper) else "it was no tighter"
        return cert._replace(bound="trace", seconds=seconds, detail=f"the {bound} bound was tried and {why}")
    return cert._replace(upper=upper, bound=bound, seconds=seconds, detail=detail)


__all__ = ["CG_ROWS", "EXACT_ROWS", "REFINE_FLOPS", "available_memory", "choose", "cg_upper", "exact_upper", "tighten"]
