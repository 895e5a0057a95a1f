"""K(X, X) by pieces, computed on demand: the one place where greedy methods evaluate kernels.

Greedy selection and the IVM only ever need K's diagonal, the columns of included or scored points,
small blocks (candidates against the active set) and cross-covariances with other inputs, so K is
never formed. Two engines, NumPy in and NumPy out:

* :class:`JaxGram` - any kernel, through jitted JAX programs. Index sets are padded to power-of-two
  lengths so each program compiles O(log n) times, not once per active-set size.
* :class:`HostGram` - kernels whose :meth:`~sparsegp.kernels.Kernel.host_form` is
  ``variance * exp(-|x - z|^2_ell / 2) + constant`` (the squared exponential, with Seeger et al.'s v_b
  or constant terms): inputs scaled and centred once, every request one BLAS product. The IVM's
  thousands of small blocks go this way.

:func:`gram` picks the engine from the kernel (``engine="auto"``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..errors import InputError
from .base import Kernel
from .distance import narrow

ENGINES = ("auto", "jax", "host")


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


class JaxGram:
    """K(X, X) by pieces for any kernel, through jitted JAX programs."""

    def __init__(self, kernel: Kernel, X):
        self.kernel = kernel
        self.X = np.asarray(X, dtype=np.float64)
        self.n = self.X.shape[0]
        self._Xj = jnp.asarray(self.X)
        self.evaluations = 0  # kernel entries computed (padding excluded), for cost accounting

    def diag(self) -> np.ndarray:
        """K's diagonal (n,)."""
        return np.asarray(_diag(self.kernel, self._Xj))

    def _padded(self, idx):
        idx = np.asarray(idx, dtype=np.int64)
        pad = _bucket(len(idx)) - len(idx)
        return np.concatenate([idx, np.zeros(pad, dtype=np.int64)]) if pad else idx

    def _counted(self, out, rows: int, cols: int) -> np.ndarray:
        """The unpadded (rows x cols) corner of a padded block, counted in ``evaluations``."""
        self.evaluations += rows * cols
        return np.asarray(out)[:rows, :cols]

    def columns(self, cols) -> np.ndarray:
        """K(X, X[cols]) (n x len(cols))."""
        cols = np.asarray(cols, dtype=np.int64)
        return self._counted(_block(self.kernel, self._Xj, self.X[self._padded(cols)]), self.n, len(cols))

    def column(self, i: int) -> np.ndarray:
        """K(X, x_i) (n,)."""
        return self.columns([i])[:, 0]

    def block(self, rows, cols) -> np.ndarray:
        """K(X[rows], X[cols]), the rows gathered here and sent."""
        rows = np.asarray(rows, dtype=np.int64)
        cols = np.asarray(cols, dtype=np.int64)
        out = _block(self.kernel, self.X[self._padded(rows)], self.X[self._padded(cols)])
        return self._counted(out, len(rows), len(cols))

    def block_at(self, rows, cols, disjoint: bool = False) -> np.ndarray:
        """K(X[rows], X[cols]) gathered on the device: only the index arrays travel (the IVM's refills).

        ``disjoint`` is accepted for the interface of :meth:`HostGram.block_at` and changes nothing here.
        """
        rows = np.asarray(rows, dtype=np.int64)
        cols = np.asarray(cols, dtype=np.int64)
        out = _block_at(self.kernel, self._Xj, self._padded(rows), self._padded(cols))
        return self._counted(out, len(rows), len(cols))

    def cross(self, A, cols) -> np.ndarray:
        """K(A, X[cols]) for other inputs A (held-out or test points)."""
        cols = np.asarray(cols, dtype=np.int64)
        A = np.asarray(A, dtype=np.float64)
        return self._counted(_block(self.kernel, jnp.asarray(A), self.X[self._padded(cols)]), A.shape[0], len(cols))


def _squared_exponential_form(kernel: Kernel):
    """The kernel's host form when it has a squared-exponential part (a constant alone has none), else None."""
    form = kernel.host_form()
    return form if form is not None and form.lengthscale is not None else None


class HostGram:
    """K(X, X) by pieces for ``variance * exp(-|x - z|^2_ell / 2) + constant`` with BLAS products on the host."""

    def __init__(self, kernel: Kernel, X):
        form = _squared_exponential_form(kernel)
        if form is None:
            raise InputError(f"{type(kernel).__name__} has no host form; use the JAX engine")
        self.kernel = kernel
        X = np.asarray(X, dtype=np.float64)
        self.n = X.shape[0]
        self.evaluations = 0
        self._ell, self._var, self._const = form
        # stationary: shift by the mean so |a|^2 + |b|^2 - 2 a.b works at the data's spread, not its offset
        self._centre = X.mean(axis=0)
        self._A = np.ascontiguousarray((X - self._centre) / self._ell)
        self._sq = np.einsum("ij,ij->i", self._A, self._A)

    def _se(self, r2):
        return self._var * np.exp(-0.5 * np.maximum(r2, 0.0)) + self._const

    def diag(self) -> np.ndarray:
        """K's diagonal (n,)."""
        return np.full(self.n, self._var + self._const)

    def column(self, i: int) -> np.ndarray:
        """K(X, x_i) (n,)."""
        self.evaluations += self.n
        r2 = self._sq + self._sq[i] - 2.0 * (self._A @ self._A[i])
        r2[i] = 0.0
        return self._se(r2)

    def columns(self, cols) -> np.ndarray:
        """K(X, X[cols]) (n x len(cols))."""
        return self.block_at(np.arange(self.n), cols)

    def block(self, rows, cols) -> np.ndarray:
        """K(X[rows], X[cols])."""
        return self.block_at(rows, cols)

    def block_at(self, rows, cols, disjoint: bool = False) -> np.ndarray:
        """K(X[rows], X[cols]); ``disjoint``: the caller guarantees no index is in both (skips the diagonal fix)."""
        rows = np.asarray(rows, dtype=np.int64)
        cols = np.asarray(cols, dtype=np.int64)
        self.evaluations += len(rows) * len(cols)
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

    def cross(self, A, cols) -> np.ndarray:
        """K(A, X[cols]) for other inputs A (held-out or test points)."""
        cols = np.asarray(cols, dtype=np.int64)
        B = (np.asarray(A, dtype=np.float64) - self._centre) / self._ell
        self.evaluations += B.shape[0] * len(cols)
        r2 = np.einsum("ij,ij->i", B, B)[:, None] + self._sq[None, cols] - 2.0 * (B @ self._A[cols].T)
        return self._se(r2)


def gram(kernel: Kernel, X, engine: str = "auto") -> JaxGram | HostGram:
    """K(X, X) by pieces: ``engine`` "host" (:class:`HostGram`), "jax" (:class:`JaxGram`) or "auto", the
    host engine when the kernel has a host form and its expansion keeps its digits on X, and the JAX engine
    otherwise."""
    if engine not in ENGINES:
        raise InputError(f"engine must be one of {ENGINES}, got {engine!r}")
    form = _squared_exponential_form(kernel)
    if engine == "host" or (engine == "auto" and form is not None and narrow(kernel, X)):
        return HostGram(kernel, X)
    return JaxGram(kernel, X)
