"""Kernel evaluations for greedy selection: columns and small blocks of K, computed on demand.

Selection only ever needs K's diagonal, the column of each included point and
(for the expensive criteria) the columns of a few candidates, so K is never
formed. Index sets are padded to power-of-two lengths so the jitted evaluator
compiles O(log n) times, not once per active-set size.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np


@jax.jit
def _block(kernel, A, B):
    return kernel.K(A, B)


@jax.jit
def _block_at(kernel, X, rows, cols):
    return kernel.K(X[rows], X[cols])


@jax.jit
def _diag(kernel, A):
    return kernel.diag(A)


def _bucket(k: int) -> int:
    # a single index stays unpadded: the IVM asks for K(X[rows], x_i) once per inclusion
    return 1 if k == 1 else max(8, 1 << (int(k) - 1).bit_length())


class KernelOracle:
    """K(X, X) by pieces for one kernel and one set of training inputs (NumPy in, NumPy out)."""

    def __init__(self, kernel, X):
        self.kernel = kernel
        self.X = np.asarray(X, dtype=np.float64)
        self._Xj = jnp.asarray(self.X)
        self.evaluations = 0  # kernel entries computed (padding excluded), for cost accounting

    def diag(self) -> np.ndarray:
        return np.asarray(_diag(self.kernel, self._Xj))

    def _padded(self, idx):
        idx = np.asarray(idx, dtype=np.int64)
        pad = _bucket(len(idx)) - len(idx)
        return np.concatenate([idx, np.zeros(pad, dtype=np.int64)]) if pad else idx

    def columns(self, cols) -> np.ndarray:
        """K(X, X[cols]) as an (n, len(cols)) array."""
        cols = np.asarray(cols, dtype=np.int64)
        self.evaluations += self.X.shape[0] * len(cols)
        out = _block(self.kernel, self._Xj, self.X[self._padded(cols)])
        return np.asarray(out)[:, : len(cols)]

    def block(self, rows, cols) -> np.ndarray:
        """K(X[rows], X[cols])."""
        rows = np.asarray(rows, dtype=np.int64)
        cols = np.asarray(cols, dtype=np.int64)
        self.evaluations += len(rows) * len(cols)
        out = _block(self.kernel, self.X[self._padded(rows)], self.X[self._padded(cols)])
        return np.asarray(out)[: len(rows), : len(cols)]

    def block_at(self, rows, cols) -> np.ndarray:
        """K(X[rows], X[cols]) gathered on the device: only the index arrays travel (the IVM's refills)."""
        rows = np.asarray(rows, dtype=np.int64)
        cols = np.asarray(cols, dtype=np.int64)
        self.evaluations += len(rows) * len(cols)
        out = _block_at(self.kernel, self._Xj, self._padded(rows), self._padded(cols))
        return np.asarray(out)[: len(rows), : len(cols)]

    def cross(self, A, cols) -> np.ndarray:
        """K(A, X[cols]) for other inputs A (held-out or test points)."""
        cols = np.asarray(cols, dtype=np.int64)
        A = np.asarray(A, dtype=np.float64)
        self.evaluations += A.shape[0] * len(cols)
        return np.asarray(_block(self.kernel, jnp.asarray(A), self.X[self._padded(cols)]))[:, : len(cols)]
