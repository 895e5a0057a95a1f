"""Kernel entries for the IVM: K's diagonal, one column K(X, x_i), and blocks K(X[rows], X[cols]).

The IVM asks for one full column per full-greedy inclusion and for small blocks
(refilled selection-index points against the active set) afterwards, thousands
of times. For the squared-exponential kernel (with constant terms, the paper's
``C exp(-(gamma / 2D) ||x - x'||^2) + v_b``) the inputs are scaled and centred
once and every request is one BLAS product on them; any other kernel goes
through the jitted :class:`~sparsegp.selection.oracle.KernelOracle`.
"""

from __future__ import annotations

import numpy as np

from ..kernels import Constant, SquaredExponential
from ..kernels.base import Sum
from ..selection.oracle import KernelOracle


def _se_parts(kernel):
    """(lengthscale, variance, constant) when ``kernel`` is SE plus constants, else None."""
    parts = kernel.kernels if isinstance(kernel, Sum) else (kernel,)
    se = [k for k in parts if type(k) is SquaredExponential]
    const = [k for k in parts if type(k) is Constant]
    if len(se) != 1 or len(se) + len(const) != len(parts):
        return None
    k = se[0]
    c = sum(float(np.asarray(q.variance)) for q in const) + float(np.asarray(k._bias()))
    return np.asarray(k.lengthscale, dtype=np.float64), float(np.asarray(k.variance)), c


class Gram:
    """K(X, X) by pieces (NumPy in and out); the SE fast path or the generic oracle."""

    def __init__(self, kernel, X):
        X = np.asarray(X, dtype=np.float64)
        self.n = X.shape[0]
        parts = _se_parts(kernel)
        if parts is None:
            self._oracle = KernelOracle(kernel, X)
            return
        self._oracle = None
        ell, self._var, self._const = parts
        # stationary: shift by the mean so |a|^2 + |b|^2 - 2 a.b works at the data's spread, not its offset
        self._A = np.ascontiguousarray((X - X.mean(axis=0)) / ell)
        self._sq = np.einsum("ij,ij->i", self._A, self._A)

    def _se(self, r2):
        return self._var * np.exp(-0.5 * np.maximum(r2, 0.0)) + self._const

    def diag(self) -> np.ndarray:
        if self._oracle is not None:
            return self._oracle.diag()
        return np.full(self.n, self._var + self._const)

    def column(self, i: int) -> np.ndarray:
        """K(X, x_i)."""
        if self._oracle is not None:
            return self._oracle.columns([i])[:, 0]
        r2 = self._sq + self._sq[i] - 2.0 * (self._A @ self._A[i])
        r2[i] = 0.0
        return self._se(r2)

    def block(self, rows, cols, disjoint: bool = False) -> np.ndarray:
        """K(X[rows], X[cols]); ``disjoint``: the caller guarantees no index is in both (skips the diagonal fix)."""
        if self._oracle is not None:
            return self._oracle.block_at(rows, cols)
        rows = np.asarray(rows, dtype=np.int64)
        cols = np.asarray(cols, dtype=np.int64)
        # in place: -r2/2 = a.b - |a|^2/2 - |b|^2/2, clipped at 0, then exp (one temporary of the block's size)
        G = self._A[rows] @ self._A[cols].T
        G -= 0.5 * self._sq[rows, None]
        G -= 0.5 * self._sq[None, cols]
        np.minimum(G, 0.0, out=G)
        if not disjoint:
            G[rows[:, None] == cols[None, :]] = 0.0  # exact zeros where a row meets its own column
        np.exp(G, out=G)
        G *= self._var
        G += self._const
        return G
