"""The chunked statistics of :mod:`sparsegp.stats` on the CPU, with BLAS-3 and an explicit backward pass.

:mod:`sparsegp.stats` computes the sums inside one JAX program (``lax.scan``),
which keeps them differentiable and runs on any JAX device. On the CPU the
O(n m^2) work is three matrix operations per chunk, and XLA has no symmetric
rank-k update or triangular multiply: it does each as a general product, twice
the flops. Here the same sums are computed chunk by chunk on the host:

* forward: K_uf by a jitted kernel evaluation, A^T = K_uf^T L^-T by ``dtrmm``
  (m^2 per row), S += A A^T by ``dsyrk`` (m^2 per row), v += A y;
* backward, given the cotangents of the sums: K_uf_bar = 2 Phi_bar K_uf + b_bar y^T
  (one product, 2 m^2 per row, inside the jitted kernel VJP) for the unit
  weights of VFE / DTC / SoR; FITC's weights 1 / Lambda_i depend on a_i, so its
  backward adds the per-row terms of their derivative (see :meth:`BlasStats.backward`).

So one bound + gradient costs 4 n m^2 flops (unit weights) where the JAX path
costs 6 n m^2. The cotangent of the whitening factor L_uu^-1 is returned, not
pushed through the Cholesky: that O(m^3) step, like the m x m algebra of each
approximation, stays in JAX (see :mod:`sparsegp.approximations.objective`).
Only sums of size O(m^2) leave a chunk, so the same two passes map over data
partitions.

Notation as in :mod:`sparsegp.stats`: a_i = L_uu^-1 k_u(x_i) (column i of A),
S = sum_i w_i a_i a_i^T, v = sum_i w_i a_i y_i, with w_i = 1 (unit) or
1 / Lambda_i, Lambda_i = K_ii - |a_i|^2 + sigma^2 (FITC).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from scipy.linalg import blas

from .stats import FITCStats, Stats

# The first pass keeps each chunk's kernel block (VFE, DTC, SoR) or whitened block (FITC) for the
# second when all of them fit in this many bytes; beyond it, the second pass recomputes them.
KEEP_BYTES = 512 * 2**20


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

    XLA's worker threads spin for a while after each computation and slow the BLAS calls that
    follow on the same cores, so the blocks are dispatched together where they are kept
    (:meth:`all`), and the VJPs likewise (:meth:`vjp_all`), rather than alternating with BLAS.
    """

    def __init__(self, kernel, Z, Xs):
        self.kernel, self.Z, self.Xs = kernel, jnp.asarray(Z), Xs

    def __call__(self, i):
        Kuf, kdiag = _kernel_block(self.kernel, self.Z, self.Xs[i])
        return np.asarray(Kuf).T, np.asarray(kdiag)

    def all(self):
        out = [_kernel_block(self.kernel, self.Z, X) for X in self.Xs]  # dispatched asynchronously
        return [(np.asarray(K).T, np.asarray(d)) for K, d in out]

    def vjp_all(self, items):
        """Sum of the cotangents over ``items`` = [(i, K_uf^T_bar, diag_bar), ...]."""
        outs = [_kernel_block_vjp(self.kernel, self.Z, self.Xs[i], jnp.asarray(Kt_bar.T), jnp.asarray(d_bar))
                for i, Kt_bar, d_bar in items]
        k_bar = Z_bar = None
        for kb, zb in outs:
            k_bar, Z_bar = _tree_add(k_bar, kb), _tree_add(Z_bar, zb)
        return k_bar, Z_bar


def _tree_add(a, b):
    return b if a is None else jax.tree_util.tree_map(jnp.add, a, b)


def _symmetrize_upper(S):
    """The full matrix from dsyrk's upper triangle."""
    return np.triu(S) + np.triu(S, 1).T


class BlasStats:
    """The training data cut into equal chunks (the last padded, with a 0/1 row mask) and the two passes.

    ``X`` (n, D) and ``y`` (n,) are copied once into chunks of ``chunk`` rows.
    """

    def __init__(self, X, y, chunk: int):
        X = np.asarray(X, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        n = X.shape[0]
        chunk = int(min(max(1, chunk), max(n, 1)))
        n_chunks = -(-n // chunk)
        pad = n_chunks * chunk - n
        if pad:
            X = np.concatenate([X, np.repeat(X[-1:], pad, axis=0)])
            y = np.concatenate([y, np.zeros(pad)])
        mask = np.ones(n_chunks * chunk)
        mask[n:] = 0.0
        self.n, self.chunk, self.n_chunks, self.pad = n, chunk, n_chunks, pad
        self.Xs = [X[i * chunk : (i + 1) * chunk] for i in range(n_chunks)]
        self.ys = [y[i * chunk : (i + 1) * chunk] for i in range(n_chunks)]
        self.ms = [mask[i * chunk : (i + 1) * chunk] for i in range(n_chunks)]

    def _keep(self, m: int) -> bool:
        return self.n_chunks * self.chunk * m * 8 <= KEEP_BYTES

    def _zero_padding(self, i, rows):
        """Zero the padded rows of the last chunk (they must contribute nothing)."""
        if self.pad and i == self.n_chunks - 1:
            rows[self.chunk - self.pad :] = 0.0
        return rows

    def _whiten(self, i, Kt, Linv):
        """A^T = K_uf^T L^-T of chunk i, (rows, m) F-ordered, padded rows zeroed."""
        At = blas.dtrmm(1.0, Linv, np.array(Kt, order="F"), side=1, lower=1, trans_a=1, overwrite_b=1)
        return self._zero_padding(i, At)

    # ---- unit weights: VFE, DTC, SoR ----------------------------------------------------
    def forward(self, kernel, Z, Linv):
        """(:class:`~sparsegp.stats.Stats` as NumPy values, residual for :meth:`backward`)."""
        Linv = np.asfortranarray(Linv, dtype=np.float64)
        m = Linv.shape[0]
        blocks, keep = _Blocks(kernel, Z, self.Xs), self._keep(m)
        all_blocks = blocks.all() if keep else None
        S = np.zeros((m, m), order="F")
        v = np.zeros(m)
        yy = trK = 0.0
        kept = []
        for i in range(self.n_chunks):
            Kt, kdiag = all_blocks[i] if keep else blocks(i)
            At = self._whiten(i, Kt, Linv)
            S = blas.dsyrk(1.0, At, beta=1.0, c=S, trans=1, lower=0, overwrite_c=1)
            v += At.T @ self.ys[i]
            yy += float(self.ys[i] @ self.ys[i])
            trK += float(kdiag @ self.ms[i])
            kept.append(Kt if keep else None)
        S = _symmetrize_upper(S)
        st = Stats(S, v, np.float64(yy), np.float64(trK), np.float64(np.trace(S)), np.float64(self.n))
        return st, (blocks, kept)

    def backward(self, Linv, Luu, st: Stats, res, ct: Stats):
        """Cotangents (kernel, Z, L_uu^-1) of the sums ``st`` for their cotangents ``ct``.

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
        Linv_bar = (2.0 * G @ np.asarray(st.S) + np.outer(v_bar, np.asarray(st.v))) @ Luu.T
        k_bar = Z_bar = None
        pending = []
        for i in range(self.n_chunks):
            Kt = kept[i] if kept[i] is not None else blocks(i)[0]
            Kt_bar = Kt @ M  # (K_uf^T_bar) = K_uf^T M + y b_bar^T, M symmetric
            Kt_bar += np.outer(self.ys[i], b_bar)
            pending.append((i, self._zero_padding(i, Kt_bar), float(ct.trK) * self.ms[i]))
            if kept[i] is None:  # nothing kept: one chunk at a time, bounded memory
                kb, zb = blocks.vjp_all(pending)
                k_bar, Z_bar, pending = _tree_add(k_bar, kb), _tree_add(Z_bar, zb), []
        if pending:
            kb, zb = blocks.vjp_all(pending)
            k_bar, Z_bar = _tree_add(k_bar, kb), _tree_add(Z_bar, zb)
        return k_bar, Z_bar, Linv_bar

    # ---- FITC ---------------------------------------------------------------------------
    def fitc_forward(self, kernel, Z, Linv, noise: float):
        """(:class:`~sparsegp.stats.FITCStats` as NumPy values, residual for :meth:`fitc_backward`)."""
        Linv = np.asfortranarray(Linv, dtype=np.float64)
        m = Linv.shape[0]
        blocks, keep = _Blocks(kernel, Z, self.Xs), self._keep(2 * m)
        all_blocks = blocks.all() if keep else None
        S = np.zeros((m, m), order="F")
        v = np.zeros(m)
        yy = logdet = 0.0
        kept, weights = [], []
        for i in range(self.n_chunks):
            Kt, kdiag = all_blocks[i] if keep else blocks(i)
            At = self._whiten(i, Kt, Linv)
            mc, yc = self.ms[i], self.ys[i]
            lam = np.where(mc > 0, kdiag - np.einsum("ij,ij->i", At, At) + noise, 1.0)
            w = mc / lam
            v += At.T @ (w * yc)
            yy += float(w @ (yc * yc))
            logdet += float(mc @ np.log(lam))
            weights.append((w, lam))
            S = blas.dsyrk(1.0, At * np.sqrt(w)[:, None], beta=1.0, c=S, trans=1, lower=0, overwrite_c=1)
            kept.append((Kt, At) if keep else None)
        S = _symmetrize_upper(S)
        st = FITCStats(S, v, np.float64(yy), np.float64(logdet), np.float64(self.n))
        return st, (blocks, kept, weights)

    def fitc_backward(self, Linv, Luu, st: FITCStats, res, ct: FITCStats):
        """Cotangents (kernel, Z, L_uu^-1, sigma^2) of FITC's sums.

        Per row, with C = A^T S_bar (S_bar symmetrised): w_bar_i = a_i^T S_bar a_i + y_i a_i^T v_bar
        + y_i^2 yy_bar, Lambda_bar_i = -w_i^2 w_bar_i + logdet_bar / Lambda_i and
        a_bar_i = 2 w_i S_bar a_i + w_i y_i v_bar - 2 Lambda_bar_i a_i (since d Lambda_i / d a_i = -2 a_i).
        Then K_uf_bar = L^-T A_bar, diag(K)_bar = Lambda_bar, sigma^2_bar = sum Lambda_bar, and
        (L^-1)_bar = sum_i a_bar_i k_i^T = (2 S_bar S + v_bar v^T - 2 T) L^T with T = sum Lambda_bar_i a_i a_i^T.
        """
        blocks, kept, weights = res
        Linv_f = np.asfortranarray(Linv, dtype=np.float64)
        Luu = np.asarray(Luu, dtype=np.float64)
        S_bar = np.asarray(ct.S)
        S_bar = np.asfortranarray(0.5 * (S_bar + S_bar.T))
        v_bar = np.asarray(ct.v)
        yy_bar, ld_bar = float(ct.yy), float(ct.logdet_lambda)
        m = S_bar.shape[0]
        T = np.zeros((m, m))
        noise_bar = 0.0
        pending = []
        k_bar = Z_bar = None
        for i in range(self.n_chunks):
            if kept[i] is not None:
                Kt, At = kept[i]
            else:
                Kt = blocks(i)[0]
                At = self._whiten(i, Kt, Linv_f)
            w, lam = weights[i]
            yc, mc = self.ys[i], self.ms[i]
            C = At @ S_bar
            quad = np.einsum("ij,ij->i", At, C)
            w_bar = quad + yc * (At @ v_bar) + yc * yc * yy_bar
            lam_bar = (-w * w * w_bar + ld_bar / lam) * mc
            C *= 2.0 * w[:, None]
            C += np.outer(w * yc, v_bar)
            C -= 2.0 * lam_bar[:, None] * At  # C is now A_bar^T
            T += (At * lam_bar[:, None]).T @ At
            noise_bar += float(lam_bar.sum())
            Kt_bar = blas.dtrmm(1.0, Linv_f, np.asfortranarray(C), side=1, lower=1, overwrite_b=1)  # A_bar^T L^-1
            pending.append((i, Kt_bar, lam_bar))
            if kept[i] is None:
                kb, zb = blocks.vjp_all(pending)
                k_bar, Z_bar, pending = _tree_add(k_bar, kb), _tree_add(Z_bar, zb), []
        if pending:
            kb, zb = blocks.vjp_all(pending)
            k_bar, Z_bar = _tree_add(k_bar, kb), _tree_add(Z_bar, zb)
        S, v = np.asarray(st.S), np.asarray(st.v)
        Linv_bar = (2.0 * S_bar @ S + np.outer(v_bar, v) - 2.0 * T) @ Luu.T
        return k_bar, Z_bar, Linv_bar, noise_bar


__all__ = ["BlasStats", "KEEP_BYTES"]
