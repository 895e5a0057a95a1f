"""Training rows that share an input: every row is data, computed as one weighted row per input.

Symbols as in NOTATION.md. With Gaussian noise, the c_i rows y_i1 .. y_ic at one input x_i enter
every objective of the package only through their count c_i, their mean target ybar_i and their
within-input sum of squares SS_i = sum_j (y_ij - ybar_i)^2:

* the sparse methods' sums over rows (:mod:`sparsegp.backends.jax_sums`) are sums over the distinct inputs with
  weight c_i: sum_rows a a^T = sum_i c_i a_i a_i^T, sum_rows a y = sum_i c_i a_i ybar_i,
  sum_rows y^2 = sum_i (c_i ybar_i^2 + SS_i), and FITC's likewise with c_i / Lambda_i;
* the exact GP's log marginal likelihood is
  log N(ybar | 0, K + sigma^2 C^-1) - sum_i [(c_i - 1)/2 log(2 pi sigma^2) + SS_i / (2 sigma^2) + 1/2 log c_i]
  (the mean of c_i rows has noise sigma^2 / c_i; the rest is the density of the c_i - 1 within-input
  contrasts and the Jacobian of the change of variables), C = diag(c).

So the value, the gradient and the posterior are those of all rows, at the cost of the distinct
inputs. Only exactly equal input rows are grouped.

With a known noise variance v per row (``fit(X, y, noise_variance=v)``), rows are grouped by input and known
variance together: a group's rows then share their noise sigma^2 + v, and every formula above holds with
sigma^2 + v_i in place of sigma^2, exactly and for any learnt sigma^2. Rows at one input with unequal known
variances are separate groups (each row's weight 1 / (sigma^2 + v) changes with sigma^2, so they cannot share
one weighted row).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..errors import InputError


class Replicates(NamedTuple):
    """The training rows grouped by input (``collapse``); arrays are float64 NumPy."""

    X: np.ndarray  # (n_d, D) the distinct inputs, in the order of their first row
    y: np.ndarray  # (n_d,) mean target at each; (n_d, k) for k targets
    counts: np.ndarray  # (n_d,) rows at each (float64)
    scatter: np.ndarray  # (n_d,) within-input sum of squares of the targets about their mean; (n_d, k) per target
    group: np.ndarray  # (n,) the distinct input of each row
    first: np.ndarray  # (n_d,) the first row of each distinct input
    known: np.ndarray | None = None  # (n_d,) the known noise variance of each group's rows

    @property
    def repeated(self) -> bool:
        """True when some input occurs in more than one row."""
        return self.X.shape[0] < self.group.shape[0]


class Rows(NamedTuple):
    """The training rows as an objective sums over them: every row (``counts`` None), or one row per distinct
    input with its count, mean target and within-input sum of squares."""

    X: np.ndarray
    y: np.ndarray
    counts: np.ndarray | None = None
    scatter: np.ndarray | None = None
    known: np.ndarray | None = None  # each row's known noise variance (then counts and scatter are given too)

    def jax_args(self) -> tuple:
        """(X, y) or (X, y, counts, scatter) as JAX arrays: the data arguments of the objectives."""
        from .._compile import to_device

        return tuple(to_device(a) for a in self if a is not None)

    def weights(self) -> dict:
        """``counts``, ``scatter`` and, where given, ``known`` as keyword arguments of the objectives and
        posteriors."""
        weights = {"counts": self.counts, "scatter": self.scatter}
        return weights if self.known is None else dict(weights, known=self.known)


def _row_keys(A: np.ndarray) -> np.ndarray:
    A = np.ascontiguousarray(A)
    return A.view(np.dtype((np.void, A.dtype.itemsize * A.shape[1]))).ravel()


def collapse(X: np.ndarray, y: np.ndarray, known: np.ndarray | None = None) -> Replicates:
    """Group the rows of (X, y) by exactly equal inputs, and equal ``known`` noise variances where given (see the
    module docstring)."""
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    X = X + 0.0  # -0.0 and 0.0 are the same input
    key = X if known is None else np.column_stack([X, np.asarray(known, dtype=np.float64) + 0.0])
    _, first, inverse = np.unique(_row_keys(key), return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # distinct inputs in the order of their first row
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    group = rank[np.ravel(inverse)]
    first = first[order]
    counts = np.bincount(group, minlength=first.size).astype(np.float64)
    v = None if known is None else np.asarray(known, dtype=np.float64)[first]
    if first.size == X.shape[0]:  # nothing repeats: the rows themselves, bit for bit
        return Replicates(X[first], y[first], counts, np.zeros(y[first].shape), group, first, v)
    if y.ndim == 2:  # k targets: the mean and the sum of squares of each (each may have a noise of its own)
        mean = np.column_stack([np.bincount(group, weights=col, minlength=first.size) for col in y.T]) / counts[:, None]
        ss = (y - mean[group]) ** 2
        scatter = np.column_stack([np.bincount(group, weights=col, minlength=first.size) for col in ss.T])
        return Replicates(X[first], mean, counts, scatter, group, first, v)
    mean = np.bincount(group, weights=y, minlength=first.size) / counts
    scatter = np.bincount(group, weights=(y - mean[group]) ** 2, minlength=first.size)
    return Replicates(X[first], mean, counts, scatter, group, first, v)


def row_index(inputs: np.ndarray, X: np.ndarray) -> np.ndarray:
    """For each row of X, the index of the row of ``inputs`` (distinct rows) with exactly its input; an
    InputError where some row of X is not among them."""
    keys = _row_keys(np.asarray(inputs, dtype=np.float64) + 0.0)
    order = np.argsort(keys, kind="stable")
    wanted = _row_keys(np.asarray(X, dtype=np.float64) + 0.0)
    at = np.minimum(np.searchsorted(keys[order], wanted), keys.size - 1)
    if not np.all(keys[order][at] == wanted):
        raise InputError("row_index: some rows are not among the given inputs")
    return order[at]


def repeated_records(X: np.ndarray, y: np.ndarray) -> int:
    """How many rows repeat an earlier row exactly, inputs and target."""
    rows = np.column_stack([np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.float64)]) + 0.0
    return int(rows.shape[0] - np.unique(_row_keys(rows)).size)


def distinct_records(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Sorted indices of the first occurrence of each distinct (x, y) record."""
    rows = np.column_stack([np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.float64)]) + 0.0
    return np.sort(np.unique(_row_keys(rows), return_index=True)[1])


__all__ = ["Replicates", "Rows", "collapse", "distinct_records", "repeated_records", "row_index"]
