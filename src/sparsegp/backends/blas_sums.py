"""The chunked statistics of :mod:`sparsegp.backends.jax_sums` on the host, with an explicit backward pass.

Symbols as in NOTATION.md (the package's one notation table).

:mod:`sparsegp.backends.jax_sums` computes the sums inside one JAX program (``lax.scan``), differentiated
by a hand-written VJP for the unit weights and by autodiff for the weighted sums, whose row weights
1 / Lambda_i may depend on the whitened cross-covariances (FITC's). Here the same sums are computed chunk by
chunk on the host, and the backward pass is written out for both, behind one entry point each:

* :meth:`BlasStats.forward`: K_uf by a jitted kernel evaluation, A^T = K_uf^T L^-T, S += A A^T, v += A y,
  each row weighted by 1 / Lambda_i where :class:`~sparsegp.backends.jax_sums.RowWeights` are given;
* :meth:`BlasStats.backward`, given the cotangents of the sums: K_uf_bar = 2 Phi_bar K_uf + b_bar y^T for
  the unit weights; for the weighted sums the per-row terms of the weights' derivative as well.

Why two engines: on a CPU the host passes make FITC's bound + gradient 1.4x faster than autodiff through the
scan and let Dask partitions compute their own sums; on an accelerator everything stays in the JAX program
(BENCHMARKS.md, "The cost of one evaluation"). Both are checked against one dense specification
(``tests/_reference.py``) in ``tests/test_stats_blas.py::test_both_engines_equal_one_dense_reference``.

Only sums of size O(m^2) leave a chunk, so the two passes map over data partitions. The cotangent
of the whitening factor L_uu^-1 is returned, not pushed through the Cholesky: that O(m^3) step,
like the m x m algebra of each approximation, stays in JAX
(:mod:`sparsegp.approximations.host_objective`). Chunks run on one worker thread per core with
single-threaded BLAS: NumPy's products release the GIL, and OpenBLAS's own threads, which
busy-wait between calls, would compete with XLA's for the same cores (BENCHMARKS.md).

Notation as in :mod:`sparsegp.backends.jax_sums`: a_i = L_uu^-1 k_u(x_i) (column i of A),
S = sum_i w_i a_i a_i^T, v = sum_i w_i a_i y_i, with w_i = 1 (unit) or
1 / Lambda_i, Lambda_i = diagonal (K_ii - |a_i|^2) + sigma^2 + v_i (:class:`~sparsegp.backends.jax_sums.RowWeights`).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import jax
import jax.numpy as jnp
import numpy as np

from ..linalg import single_threaded_blas
from .jax_sums import RowWeights, Stats, WeightedStats, chunk_rows, chunk_values, row_scatter, row_weighted

# The first pass keeps each chunk's kernel block (VFE, DTC, SoR) or whitened block (FITC) for the
# second when all of them fit in this many bytes; beyond it, the second pass recomputes them.
KEEP_BYTES = 512 * 2**20

# One worker thread per core, each calling single-threaded BLAS (see the module docstring).
_THREADS = max(1, os.cpu_count() or 1)
_POOLS = {_THREADS: ThreadPoolExecutor(_THREADS, thread_name_prefix="sparsegp-stats")}


def _pool(threads: int) -> ThreadPoolExecutor:
    """The process's pool of ``threads`` worker threads, shared by every BlasStats that asks for it."""
    if threads not in _POOLS:
        _POOLS[threads] = ThreadPoolExecutor(threads, thread_name_prefix=f"sparsegp-stats-{threads}")
    return _POOLS[threads]


@jax.jit
def _kernel_block(kernel, Z, Xc):
    """K_uf of one chunk and the kernel's diagonal on its rows (JAX path)."""
    return kernel.K(Z, Xc), kernel.diag(Xc)


@jax.jit
def _kernel_block_vjp(kernel, Z, Xc, Kuf_bar, kdiag_bar):
    """Kernel and inducing-input cotangents of one chunk for K_uf_bar and diag_bar (JAX path)."""
    _, vjp = jax.vjp(lambda k, z: (k.K(z, Xc), k.diag(Xc)), kernel, Z)
    return vjp((Kuf_bar, kdiag_bar))


class _Blocks:
    """K_uf^T blocks of the chunks as read-only (rows, m) F-ordered views, and their VJP (jitted JAX).

    Blocks are dispatched together (:meth:`some`), and the VJPs likewise (:meth:`vjp_all`),
    rather than alternating one by one with the BLAS work.
    """

    def __init__(self, kernel, Z, Xs):
        self.kernel, self.Z, self.Xs = kernel, jnp.asarray(Z), Xs

    def __call__(self, i):
        return self.some([i])[0]

    def some(self, indices):
        out = [_kernel_block(self.kernel, self.Z, self.Xs[i]) for i in indices]  # dispatched asynchronously
        return [(np.asarray(K).T, np.asarray(d)) for K, d in out]

    def vjp_all(self, items):
        """Sum of the cotangents over ``items`` = [(i, K_uf^T_bar, diag_bar), ...]."""
        outs = [
            _kernel_block_vjp(self.kernel, self.Z, self.Xs[i], jnp.asarray(Kt_bar.T), jnp.asarray(d_bar))
            for i, Kt_bar, d_bar in items
        ]
        k_bar = Z_bar = None
        for kb, zb in outs:
            k_bar, Z_bar = _tree_add(k_bar, kb), _tree_add(Z_bar, zb)
        return k_bar, Z_bar


def _outer(a, b):
    """a b^T for vectors; A B^T for (rows, k) blocks of k targets."""
    return np.outer(a, b) if a.ndim == 1 else a @ b.T


def _per_row(x):
    """A per-row term summed over the k targets (x itself for one target)."""
    return x if x.ndim == 1 else x.sum(axis=1)


def _tree_add(a, b):
    return b if a is None else jax.tree_util.tree_map(jnp.add, a, b)


class BlasStats:
    """The training data cut into equal chunks (the last padded, with a 0/1 row mask) and the two passes.

    ``X`` (n, D) and ``y`` (n,) are copied once into chunks of ``chunk`` rows. ``threads``: worker
    threads for the chunks (None: one per core; a Dask worker passes its own thread count, so that
    worker processes sharing a machine do not oversubscribe its cores). Instances share one pool per
    thread count. With ``counts`` and ``scatter`` each row stands for ``counts`` rows at its input with
    mean target y (:mod:`sparsegp.backends.replicates`): the sums are those of all of them, and ``n`` counts them.
    """

    def __init__(self, X, y, chunk: int, threads: int | None = None, counts=None, scatter=None, known=None):
        n = np.shape(X)[0]
        chunk = int(min(max(1, chunk), max(n, 1)))
        Xs, ys, ms = (
            np.asarray(a)
            for a in chunk_rows(jnp.asarray(X, dtype=jnp.float64), jnp.asarray(y, dtype=jnp.float64), chunk)
        )
        self.rows, self.chunk, self.n_chunks = n, chunk, Xs.shape[0]
        self.pad = self.n_chunks * chunk - n
        self.Xs, self.ys, self.ms = list(Xs), list(ys), list(ms)
        self.grouped = counts is not None
        if self.grouped:  # ws: the rows' weights c_i (0 on padding); ss: within-input sums of squares
            self.ws = list(np.asarray(chunk_values(jnp.asarray(counts, dtype=jnp.float64), chunk)))
            ss = np.zeros(n) if scatter is None else row_scatter(np.asarray(scatter, dtype=np.float64))
            self.ss = list(np.asarray(chunk_values(jnp.asarray(ss), chunk)))
            self.n = float(np.sum(counts))
            self.yy = float(np.sum(row_weighted(np.asarray(counts), np.asarray(y) ** 2)) + np.sum(ss))
        else:
            self.n = n
            self.yy = float(np.sum(ys * ys))  # a constant of the data (padded targets are 0)
        self.threads = _THREADS if threads is None else max(1, int(threads))
        # each row's known noise variance v_i (the weighted passes' Lambda_i gains it), 0 on padding
        self.known = None if known is None else list(np.asarray(chunk_values(jnp.asarray(known, jnp.float64), chunk)))

    def _keep(self, m: int) -> bool:
        return self.n_chunks * self.chunk * m * 8 <= KEEP_BYTES

    def _zero_padding(self, i, rows):
        """Zero the padded rows of the last chunk (they must contribute nothing)."""
        if self.pad and i == self.n_chunks - 1:
            rows[self.chunk - self.pad :] = 0.0
        return rows

    def _whiten(self, i, Kt, LinvT):
        """A^T = K_uf^T L^-T of chunk i, padded rows zeroed (``LinvT`` = L^-T)."""
        return self._zero_padding(i, Kt @ LinvT)

    def _map(self, fn, indices):
        """``[fn(i) for i in indices]`` on the worker threads, in order (BLAS single-threaded inside)."""
        with single_threaded_blas():
            return list(_pool(self.threads).map(fn, indices))

    def _batches(self, keep: bool):
        """All chunks at once when their blocks are kept; else one chunk per worker at a time."""
        step = self.n_chunks if keep else self.threads
        return [range(i, min(i + step, self.n_chunks)) for i in range(0, self.n_chunks, step)]

    def forward(self, kernel, Z, Linv, weights: RowWeights | None = None):
        """The sums and the residual for :meth:`backward`: :class:`~sparsegp.backends.jax_sums.Stats` as NumPy values, or
        with ``weights`` :class:`~sparsegp.backends.jax_sums.WeightedStats` (each row weighted by 1 / Lambda_i)."""
        if weights is not None:
            return self._weighted_forward(kernel, Z, Linv, weights)
        LinvT = np.ascontiguousarray(np.asarray(Linv, dtype=np.float64).T)
        m = LinvT.shape[0]
        blocks, keep = _Blocks(kernel, Z, self.Xs), self._keep(m)

        def chunk_sums(item):
            i, (Kt, kdiag) = item
            At = self._whiten(i, Kt, LinvT)
            if self.grouped:
                w = self.ws[i]
                Aw = At * np.sqrt(w)[:, None]
                return Aw.T @ Aw, At.T @ row_weighted(w, self.ys[i]), float(kdiag @ w)
            S_i = At.T @ At
            return S_i, At.T @ self.ys[i], float(kdiag @ self.ms[i])

        S = v = trK = 0  # running sums in chunk order: no list of per-chunk m x m terms
        kept = []
        for batch in self._batches(keep):
            items = list(zip(batch, blocks.some(batch)))
            for S_i, v_i, t_i in self._map(chunk_sums, items):
                S, v, trK = S + S_i, v + v_i, trK + t_i
            kept += [Kt if keep else None for _, (Kt, _) in items]
        st = Stats(S, v, np.float64(self.yy), np.float64(trK), np.float64(np.trace(S)), np.float64(self.n))
        return st, (blocks, kept)

    def backward(self, Linv, Luu, st, res, ct):
        """Cotangents (kernel, Z, L_uu^-1, sigma^2) of the sums ``st`` of :meth:`forward` for their cotangents
        ``ct`` (sigma^2's is 0 for the unit-weight sums, which do not depend on it)."""
        if isinstance(st, WeightedStats):
            return self._weighted_backward(Linv, Luu, st, res, ct)
        return (*self._unit_backward(Linv, Luu, st, res, ct), 0.0)

    def _unit_backward(self, Linv, Luu, st: Stats, res, ct: Stats):
        """Cotangents (kernel, Z, L_uu^-1) of the unit-weight sums.

        With G = sym(S_bar) + trQ_bar I: Phi_bar = L^-T G L^-1 and b_bar = L^-T v_bar give
        K_uf_bar = 2 Phi_bar K_uf + b_bar y^T; the factor's cotangent is
        (L^-1)_bar = (2 G S + v_bar v^T) L^T, because L^-1 Phi = S L^T and L^-1 b = v.
        (The cotangent of yy is unused: yy does not depend on the parameters.)
        """
        blocks, kept = res
        Linv = np.asarray(Linv, dtype=np.float64)
        Luu = np.asarray(Luu, dtype=np.float64)
        S_bar, v_bar = np.asarray(ct.S), np.asarray(ct.v)
        m = S_bar.shape[0]
        G = 0.5 * (S_bar + S_bar.T) + float(ct.trQ) * np.eye(m)
        M = 2.0 * (Linv.T @ G @ Linv)
        M = np.asfortranarray(0.5 * (M + M.T))
        b_bar = Linv.T @ v_bar
        Linv_bar = (2.0 * G @ np.asarray(st.S) + _outer(v_bar, np.asarray(st.v))) @ Luu.T

        def chunk_cotangent(i):
            Kt = kept[i] if kept[i] is not None else blocks(i)[0]
            Kt_bar = Kt @ M  # (K_uf^T_bar) = K_uf^T M + y b_bar^T, M symmetric
            Kt_bar += _outer(self.ys[i], b_bar)
            if self.grouped:  # times the rows' weights W
                w = self.ws[i]
                return i, Kt_bar * w[:, None], float(ct.trK) * w
            return i, self._zero_padding(i, Kt_bar), float(ct.trK) * self.ms[i]

        k_bar = Z_bar = None
        for batch in self._batches(kept[0] is not None):
            kb, zb = blocks.vjp_all(self._map(chunk_cotangent, batch))
            k_bar, Z_bar = _tree_add(k_bar, kb), _tree_add(Z_bar, zb)
        return k_bar, Z_bar, Linv_bar

    def _weighted_forward(self, kernel, Z, Linv, weights: RowWeights):
        """The sums weighted by 1 / Lambda_i, Lambda_i = diagonal (K_ii - Q_ii) + sigma^2 + v_i + shift
        (:func:`~sparsegp.backends.jax_sums.weighted_stats`)."""
        noise, diagonal, shift = float(weights.noise), float(weights.diagonal), float(weights.shift)
        LinvT = np.ascontiguousarray(np.asarray(Linv, dtype=np.float64).T)
        m = Linv.shape[0]
        blocks, keep = _Blocks(kernel, Z, self.Xs), self._keep(2 * m)

        def chunk_sums(item):
            i, (Kt, kdiag) = item
            At = self._whiten(i, Kt, LinvT)
            mc, yc = self.ms[i], self.ys[i]
            r = kdiag - np.einsum("ij,ij->i", At, At)  # K_ii - Q_ii
            lam = (r * diagonal if diagonal else 0.0) + (noise + shift)
            if self.known is not None:
                lam = lam + self.known[i]
            lam = np.where(mc > 0, lam, 1.0)
            c = self.ws[i] if self.grouped else mc  # rows per input (0 on padding)
            w = c / lam
            Aw = At * np.sqrt(w)[:, None]
            S_i = Aw.T @ Aw
            yy = float(w @ _per_row(yc * yc)) + (float(np.sum(self.ss[i] / lam)) if self.grouped else 0.0)
            sums = (S_i, At.T @ row_weighted(w, yc), yy, float(c @ np.log(lam)), float(w @ r), float(c @ r))
            return sums, (w, lam, r), ((Kt, At) if keep else None)

        S = v = yy = logdet = resid = trace = 0  # running sums in chunk order, as in forward
        kept, per_row = [], []
        for batch in self._batches(keep):
            for sums, wl, kt in self._map(chunk_sums, list(zip(batch, blocks.some(batch)))):
                S, v, yy, logdet = S + sums[0], v + sums[1], yy + sums[2], logdet + sums[3]
                resid, trace = resid + sums[4], trace + sums[5]
                per_row.append(wl)
                kept.append(kt)
        st = WeightedStats(
            S, v, np.float64(yy), np.float64(logdet), np.float64(self.n), np.float64(resid), np.float64(trace)
        )
        return st, (blocks, kept, per_row, diagonal)

    def _weighted_backward(self, Linv, Luu, st: WeightedStats, res, ct: WeightedStats):
        """Cotangents (kernel, Z, L_uu^-1, sigma^2) of the weighted sums.

        Per row, with C = A^T S_bar (S_bar symmetrised) and r_i = K_ii - |a_i|^2: w_bar_i = a_i^T S_bar a_i
        + y_i a_i^T v_bar + y_i^2 yy_bar + r_i resid_bar, Lambda_bar_i = -w_i^2 w_bar_i + logdet_bar / Lambda_i,
        r_bar_i = diagonal Lambda_bar_i (Lambda_i holds diagonal r_i) + w_i resid_bar + trace_bar,
        and a_bar_i = 2 w_i S_bar a_i + w_i y_i v_bar - 2 r_bar_i a_i (since d r_i / d a_i = -2 a_i).
        Then K_uf_bar = L^-T A_bar, diag(K)_bar = r_bar, sigma^2_bar = sum Lambda_bar, and
        (L^-1)_bar = sum_i a_bar_i k_i^T = (2 S_bar S + v_bar v^T - 2 T) L^T with T = sum r_bar_i a_i a_i^T.
        """
        blocks, kept, weights, diagonal = res
        Linv_f = np.asfortranarray(Linv, dtype=np.float64)
        Luu = np.asarray(Luu, dtype=np.float64)
        S_bar = np.asarray(ct.S)
        S_bar = np.asfortranarray(0.5 * (S_bar + S_bar.T))
        v_bar = np.asarray(ct.v)
        yy_bar, ld_bar = float(ct.yy), float(ct.logdet_lambda)
        resid_bar, trace_bar = float(ct.resid), float(ct.trace)

        def chunk_cotangent(i):
            if kept[i] is not None:
                Kt, At = kept[i]
            else:
                Kt = blocks(i)[0]
                At = self._whiten(i, Kt, Linv_f.T)
            w, lam, r = weights[i]
            yc, mc = self.ys[i], self.ms[i]
            c = self.ws[i] if self.grouped else mc
            C = At @ S_bar
            quad = np.einsum("ij,ij->i", At, C)
            w_bar = quad + _per_row(yc * (At @ v_bar)) + _per_row(yc * yc) * yy_bar + resid_bar * r
            if self.grouped:  # w = c / Lambda, and yy's sum_i SS_i / Lambda_i
                lam_bar = -(w / lam) * w_bar - yy_bar * self.ss[i] / (lam * lam) + ld_bar * w
            else:
                lam_bar = (-w * w * w_bar + ld_bar / lam) * mc
            r_bar = (lam_bar * diagonal if diagonal else 0.0) + resid_bar * w + trace_bar * c
            C *= 2.0 * w[:, None]
            C += _outer(row_weighted(w, yc), v_bar)
            C -= 2.0 * r_bar[:, None] * At  # C is now A_bar^T
            T_i = (At * r_bar[:, None]).T @ At
            Kt_bar = C @ Linv_f  # A_bar^T L^-1
            return (i, Kt_bar, r_bar), T_i, float(lam_bar.sum())

        k_bar = Z_bar = None
        T, noise_bar = 0.0, 0.0
        for batch in self._batches(kept[0] is not None):
            out = self._map(chunk_cotangent, batch)
            kb, zb = blocks.vjp_all([o[0] for o in out])
            k_bar, Z_bar = _tree_add(k_bar, kb), _tree_add(Z_bar, zb)
            T = T + sum(o[1] for o in out)
            noise_bar += sum(o[2] for o in out)
        S, v = np.asarray(st.S), np.asarray(st.v)
        Linv_bar = (2.0 * S_bar @ S + _outer(v_bar, v) - 2.0 * T) @ Luu.T
        return k_bar, Z_bar, Linv_bar, noise_bar


__all__ = ["BlasStats", "KEEP_BYTES"]
