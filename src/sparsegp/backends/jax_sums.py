"""Chunked data statistics: the O(n m^2) part of every sparse method (layer 3).

Symbols as in NOTATION.md (the package's one notation table).

For inducing inputs Z (m of them) with L_uu = chol(K_uu), the sparse
objectives and posteriors depend on the n training rows only through sums
over rows of the *whitened* cross-covariances a_i = L_uu^-1 k_u(x_i):

    S   = sum_i w_i a_i a_i^T        (m x m; A A^T = L^-1 K_uf K_fu L^-T for w = 1)
    v   = sum_i w_i a_i y_i          (m;     L^-1 K_uf y)
    yy  = sum_i w_i y_i^2
    trK = sum_i w_i K(x_i, x_i)      (the trace term of Titsias's bound)
    trQ = sum_i w_i |a_i|^2          (= tr Q_ff, the Nyström diagonal)

Rows that share an input are one row with weight c_i, its mean target and its within-input sum of
squares SS_i (``counts`` and ``scatter``, :mod:`sparsegp.backends.replicates`): w_i = c_i and yy gains
sum_i SS_i (weighted: w_i = c_i / Lambda_i and yy gains sum_i SS_i / Lambda_i), which are the sums over
all rows exactly. Without ``counts`` every row has weight 1.

They are accumulated over row chunks with ``lax.scan``, so peak memory is
O(m^2 + chunk * m) whatever n is, and the same sums add up across the partitions
of a Dask cluster (:class:`sparsegp.backends.dask_sums.DaskStats`). Whitening each chunk (rather than forming K_uf K_fu and whitening
afterwards) keeps the conditioning of K_uu, not its square (measured: relative
error 4e-10 vs 1e-5 on a 200-point problem with cond(K_uu) = 3e11).

Shapes: ``Z`` (m, D), ``Luu`` (m, m), ``X`` (n, D), ``y`` (n,); :class:`Stats` holds ``S`` (m, m), ``v`` (m,)
and scalars ``yy``, ``trK``, ``trQ``, ``n``; :class:`WeightedStats` ``S`` (m, m), ``v`` (m,) and scalars.

Two passes share the chunking: :func:`whitened_stats`, the unit-weight sums, has a hand-written backward
pass (one pass over the data costing 2 m^2 per row plus the kernel's VJP, no triangular solves);
:func:`weighted_stats`, the sums weighted by 1 / Lambda_i (:class:`RowWeights`: a known noise variance per
row, or a likelihood noise that holds part of K_ii - Q_ii, as FITC's does), lets JAX differentiate through a
checkpointed scan, because such weights depend on a_i themselves.
"""

from __future__ import annotations

from functools import partial
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from .._config import on_cpu
from ..linalg import solve_lower, solve_upper

DEFAULT_CHUNK_BYTES = 8 * 2**20  # one m x chunk block of K_uf (smaller blocks stay in cache; BENCHMARKS.md)
# On a GPU each chunk is a few kernel launches: larger blocks keep it busy (BENCHMARKS.md, SCALE on the GPU).
ACCELERATOR_CHUNK_BYTES = 2**30


class Stats(NamedTuple):
    """Row sums over the data (see the module docstring). ``n`` is the number of real rows.

    Fields: JAX arrays from the traced programs, NumPy arrays and floats from the host sums (:mod:`.blas_sums`).
    """

    S: Any
    v: Any
    yy: Any
    trK: Any
    trQ: Any
    n: Any


class RowWeights(NamedTuple):
    """What a weighted pass weighs row i by, 1 / Lambda_i with Lambda_i = diagonal (K_ii - Q_ii) + sigma^2 + v_i
    + shift: ``noise`` sigma^2; ``diagonal`` the share of the prior's unexplained variance the likelihood's
    noise holds (FITC's 1; 0 for DTC, VFE and SoR, whose rows are weighted only by known noise variances v_i);
    ``shift`` added to every Lambda_i (the certificate's upper bound,
    :func:`~sparsegp.approximations.certificate.weighted_bounds`)."""

    noise: float
    diagonal: float = 0.0
    shift: float = 0.0


class WeightedStats(NamedTuple):
    """Sums weighted by w_i = 1 / Lambda_i (:class:`RowWeights`, :func:`weighted_stats`)."""

    S: Any  # sum a_i a_i^T / Lambda_i
    v: Any  # sum a_i y_i / Lambda_i
    yy: Any  # sum y_i^2 / Lambda_i
    logdet_lambda: Any  # sum log Lambda_i
    n: Any
    resid: Any = 0.0  # sum (K_ii - Q_ii) / Lambda_i: the trace term of VFE's bound with per-row noise
    trace: Any = 0.0  # sum (K_ii - Q_ii): t of the certificate's upper bound


def chunk_size_for(n: int, m: int, chunk_size: int | None = None) -> int:
    """Rows per chunk: about DEFAULT_CHUNK_BYTES of K_uf (ACCELERATOR_CHUNK_BYTES when JAX runs on a
    GPU or TPU), split evenly so padding stays small."""
    if chunk_size is None:
        block = DEFAULT_CHUNK_BYTES if on_cpu() else ACCELERATOR_CHUNK_BYTES
        chunk_size = max(256, block // (8 * max(m, 1)))
    chunk_size = int(min(max(1, chunk_size), max(n, 1)))
    n_chunks = -(-n // chunk_size)
    return -(-n // n_chunks)


def chunk_rows(X, y, chunk: int, counts=None):
    """Reshape (n, D), (n,) into (n_chunks, chunk, D), (n_chunks, chunk) plus the rows' weights.

    Padding rows repeat the last real row (so every kernel value stays finite)
    and carry weight 0; real rows weight 1, or their ``counts``.
    """
    n = X.shape[0]
    n_chunks = -(-n // chunk)
    pad = n_chunks * chunk - n
    weights = jnp.ones(n, X.dtype) if counts is None else jnp.asarray(counts, X.dtype)
    mask = jnp.concatenate([weights, jnp.zeros(pad, X.dtype)])
    if pad:
        X = jnp.concatenate([X, jnp.repeat(X[-1:], pad, axis=0)])
        y = jnp.concatenate([y, jnp.zeros((pad,) + y.shape[1:], y.dtype)])
    ys = y.reshape((n_chunks, chunk) + y.shape[1:])  # (n, k) targets: (n_chunks, chunk, k)
    return X.reshape(n_chunks, chunk, -1), ys, mask.reshape(n_chunks, chunk)


def row_weighted(w, y):
    """Rows of y times their weights w, for one target (y of shape (rows,)) or k (rows, k); NumPy or JAX."""
    return w * y if y.ndim == 1 else w[:, None] * y


def row_scatter(scatter):
    """Each row's within-input sum of squares over its targets: ``scatter`` (n,) as it is, (n, k) summed over k."""
    return scatter if scatter.ndim == 1 else scatter.sum(axis=1)


def chunk_values(a, chunk: int):
    """A per-row vector (n,) as (n_chunks, chunk), padded with zeros like :func:`chunk_rows`'s targets."""
    n = a.shape[0]
    n_chunks = -(-n // chunk)
    return jnp.concatenate([a, jnp.zeros(n_chunks * chunk - n, a.dtype)]).reshape(n_chunks, chunk)


# ---------------------------------------------------------------------------
# Unit-weight statistics (VFE, DTC, SoR) with a hand-written backward pass.
# ---------------------------------------------------------------------------


def _chunk_forward(Luu_inv, kernel, Z, Xc, yc, wc):
    A = Luu_inv @ kernel.K(Z, Xc)
    Aw = A * wc  # row weights; padded rows (weight 0) contribute nothing
    yy = jnp.sum(row_weighted(wc, yc) * yc)  # summed over k targets
    return Aw @ A.T, Aw @ yc, yy, jnp.sum(wc * kernel.diag(Xc)), jnp.sum(Aw * A)


def _stats_forward(Luu, kernel, Z, Xs, ys, ms, scatter=0.0):
    m = Z.shape[0]
    # Whiten by one product with the explicit inverse factor: a matrix product runs about three times
    # faster than a triangular solve on the CPU, with the same accuracy (measured on problems with
    # cond(K_uu) up to 1e12: identical relative errors of the bound).
    Luu_inv = solve_lower(Luu, jnp.eye(m, dtype=Luu.dtype))
    init = (
        jnp.zeros((m, m), Z.dtype),
        jnp.zeros((m,) + ys.shape[2:], Z.dtype),
        jnp.zeros((), Z.dtype),
        jnp.zeros((), Z.dtype),
        jnp.zeros((), Z.dtype),
    )

    def body(acc, chunk):
        out = _chunk_forward(Luu_inv, kernel, Z, *chunk)
        return tuple(a + o for a, o in zip(acc, out)), None

    (S, v, yy, trK, trQ), _ = jax.lax.scan(body, init, (Xs, ys, ms))
    return Stats(S, v, yy + scatter, trK, trQ, jnp.sum(ms))


@jax.custom_vjp
def _whitened_stats(Luu, kernel, Z, Xs, ys, ms, scatter):
    return _stats_forward(Luu, kernel, Z, Xs, ys, ms, scatter)


def _whitened_fwd(Luu, kernel, Z, Xs, ys, ms, scatter):
    st = _stats_forward(Luu, kernel, Z, Xs, ys, ms, scatter)
    return st, (Luu, kernel, Z, Xs, ys, ms, st.S, st.v)


def _whitened_bwd(res, ct):
    """Backward pass through S = L^-1 Phi L^-T, v = L^-1 b, Phi = K_uf K_fu, b = K_uf y.

    Phi_bar = L^-T sym(S_bar + trQ_bar I) L^-1 and b_bar = L^-T v_bar are m x m /
    m-vector work; each chunk then needs K_uf_bar = (2 Phi_bar K_uf + b_bar y^T) W
    (2 m^2 per row; W the rows' weights) and the kernel's VJP. L_bar = -2 L^-T G S - L^-T v_bar v^T
    (lower part) carries the dependence through L = chol(K_uu).
    """
    Luu, kernel, Z, Xs, ys, ms, S, v = res
    S_bar, v_bar, yy_bar, trK_bar, trQ_bar, _ = ct
    m = Z.shape[0]
    # trQ = tr(S): its cotangent adds to the diagonal of S's.
    G = 0.5 * (S_bar + S_bar.T) + trQ_bar * jnp.eye(m, dtype=Z.dtype)
    Phi_bar = solve_upper(Luu, solve_upper(Luu, G).T).T  # L^-T G L^-1 (symmetric)
    b_bar = solve_upper(Luu, v_bar)
    vv = jnp.outer(v_bar, v) if v.ndim == 1 else v_bar @ v.T
    L_bar = -2.0 * solve_upper(Luu, G @ S) - solve_upper(Luu, vv)
    L_bar = jnp.tril(L_bar)

    def body(acc, chunk):
        k_acc, z_acc = acc
        Xc, yc, mc = chunk
        Kuf, vjp = jax.vjp(lambda k, z, x: k.K(z, x), kernel, Z, Xc)
        if yc.ndim == 1:
            Kuf_bar = (2.0 * (Phi_bar @ Kuf) + jnp.outer(b_bar, yc)) * mc
        else:  # k targets: b_bar Y^T
            Kuf_bar = (2.0 * (Phi_bar @ Kuf) + b_bar @ yc.T) * mc
        kb, zb, xb = vjp(Kuf_bar)
        kd, xd = jax.vjp(lambda k, x: k.diag(x), kernel, Xc)[1](trK_bar * mc)
        y_bar = row_weighted(mc, Kuf.T @ b_bar + 2.0 * yy_bar * yc)
        k_acc = jax.tree_util.tree_map(lambda a, b, c: a + b + c, k_acc, kb, kd)
        return (k_acc, z_acc + zb), (xb + xd, y_bar)

    zeros_k = jax.tree_util.tree_map(jnp.zeros_like, kernel)
    (k_bar, Z_bar), (X_bar, y_bar) = jax.lax.scan(body, (zeros_k, jnp.zeros_like(Z)), (Xs, ys, ms))
    return L_bar, k_bar, Z_bar, X_bar, y_bar, jnp.zeros_like(ms), yy_bar


_whitened_stats.defvjp(_whitened_fwd, _whitened_bwd)


@partial(jax.jit, static_argnames=("chunk",))
def whitened_stats(kernel, Z, Luu, X, y, chunk: int, counts=None, scatter=None):
    """:class:`Stats` of (X, y) for inducing inputs Z, L_uu = chol(K_uu); rows of weight 1, or ``counts``
    rows at each input with mean target y and within-input sums of squares ``scatter`` (the module docstring).

    Differentiable in ``kernel``, ``Z``, ``Luu``, ``X`` and ``y`` with a
    hand-written backward pass (see :func:`_whitened_bwd`).
    """
    Xs, ys, ms = chunk_rows(X, y, chunk, counts)
    extra = 0.0 if scatter is None else jnp.sum(scatter)
    return _whitened_stats(Luu, kernel, Z, Xs, ys, ms, jnp.asarray(extra, X.dtype))


# ---------------------------------------------------------------------------
# Weighted sums: weights 1 / Lambda_i depend on a_i, so JAX differentiates the scan;
# jax.checkpoint keeps the backward pass's memory at one chunk.
# ---------------------------------------------------------------------------


def weighted_stats(
    kernel, Z, Luu, noise, X, y, chunk: int, counts=None, scatter=None, known=None, diagonal: float = 0.0
) -> WeightedStats:
    """:class:`WeightedStats`: sums weighted by 1 / Lambda_i, Lambda_i = diagonal (K_ii - Q_ii) + sigma^2 + v_i
    (``diagonal`` 1: Snelson & Ghahramani's SPGP / FITC); ``known`` holds each row's known noise variance v_i
    (0 without it). With ``counts`` and ``scatter`` the sums over every row of the inputs' groups (the module
    docstring); rows grouped together share their input and their known variance (:mod:`sparsegp.backends.replicates`)."""
    Xs, ys, ms = chunk_rows(X, y, chunk, counts)
    m = Z.shape[0]
    Luu_inv = solve_lower(Luu, jnp.eye(m, dtype=Luu.dtype))  # see _stats_forward
    known = jnp.zeros(X.shape[0], X.dtype) if known is None else jnp.asarray(known, X.dtype)
    ss = jnp.zeros(X.shape[0], X.dtype) if scatter is None else row_scatter(jnp.asarray(scatter, X.dtype))

    @jax.checkpoint
    def chunk_sums(Xc, yc, mc, ssc, vc):
        A = Luu_inv @ kernel.K(Z, Xc)
        r = kernel.diag(Xc) - jnp.sum(A * A, axis=0)  # K_ii - Q_ii
        lam = (r * diagonal if diagonal else 0.0) + noise + vc
        w = mc / lam
        Aw = A * w
        yy = jnp.sum(row_weighted(w, yc) * yc) + jnp.sum(ssc / lam)
        return A @ Aw.T, Aw @ yc, yy, jnp.sum(mc * jnp.log(lam)), jnp.sum(w * r), jnp.sum(mc * r)

    def body(acc, chunk_):
        out = chunk_sums(*chunk_)
        return tuple(a + o for a, o in zip(acc, out)), None

    zero = jnp.zeros((), Z.dtype)
    init = (jnp.zeros((m, m), Z.dtype), jnp.zeros((m,) + ys.shape[2:], Z.dtype), zero, zero, zero, zero)
    rows = (Xs, ys, ms, chunk_values(ss, chunk), chunk_values(known, chunk))
    (S, v, yy, logdet, resid, trace), _ = jax.lax.scan(body, init, rows)
    return WeightedStats(S, v, yy, logdet, jnp.sum(ms), resid, trace)


__all__ = [
    "Stats",
    "RowWeights",
    "WeightedStats",
    "chunk_size_for",
    "chunk_rows",
    "chunk_values",
    "whitened_stats",
    "weighted_stats",
]
