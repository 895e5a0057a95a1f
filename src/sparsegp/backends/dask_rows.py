"""The variational fit's training rows (class labels, or real or count targets) on the partitions of Dask arrays:
the uncollapsed bound's row sum computed where they live (the in-memory rows are
:class:`sparsegp.fitting.variational.InMemoryRows`).

The bound sum_i E_q[log p(y_i | f_i)] - KL is a sum over rows plus a term of the parameters alone, so its value
and gradient are sums over partitions: per evaluation the driver sends the parameters (O(m^2 L + m D) numbers),
each partition returns the value and gradient of its rows' sum (the same compiled program as in memory, over its
own row chunks), and the driver adds them and the KL term. A random sample of rows (at most POOL_ROWS) comes to the
driver for the greedy selection of inducing inputs and the leave-one-out check.

Dask is an optional dependency (``pip install sparsegp[dask]``); this module imports it lazily.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from ..errors import DistributedError, InputError
from ..priors import negative_log_posterior
from ..validation import check_label_values
from .dask_sums import cluster_client, map_gathered
from .jax_sums import chunk_size_for

POOL_ROWS = 8192  # rows brought to the driver for the selection and the check


@partial(jax.jit, static_argnames=("family", "chunk"))
def _rows_value_and_grad(params, X, y, w, family, chunk: int):
    def rows(p):
        return family.expected_log_density(p, X, y, w, chunk)

    return jax.value_and_grad(rows)(params)


def _part_value_and_grad(part, params, family, chunk: int, s: float):
    """One partition's (rows, value, gradient) of its rows' sum, inputs divided by ``s``."""
    X, y = part
    value, grad = _rows_value_and_grad(params, jnp.asarray(X / s), jnp.asarray(y), jnp.ones(X.shape[0]), family, chunk)
    return X.shape[0], float(value), jax.tree_util.tree_map(np.asarray, grad)


def _part_site_sums(part, params, family, chunk: int, s: float):
    """One partition's (rows, P, h, e) of :func:`sparsegp.classification.svgp.site_sums`."""
    X, y = part
    P, h, e = family.site_sums(params, jnp.asarray(X / s), jnp.asarray(y), jnp.ones(X.shape[0]), chunk)
    return X.shape[0], np.asarray(P), np.asarray(h), float(e)


def _kl_value_and_grad(params, family):
    def kl(p):
        return negative_log_posterior(-family.kl(p), p)

    return jax.value_and_grad(kl)(params)


def _check_block(X, y, targets):
    X, y = np.asarray(X, dtype=np.float64), np.asarray(y)
    if not np.all(np.isfinite(X)):
        raise InputError("X contains NaN or infinity (found in a partition of the dask arrays)")
    return X, targets(y)


def class_codes(y: np.ndarray) -> np.ndarray:
    """A partition's class codes as the bound reads them (int32)."""
    return y.astype(np.int32)


def dask_labels(y):
    """(classes, integer codes as a dask array) of a dask array of labels, checked as in memory."""
    import dask.array as da

    y = da.asarray(y)
    if y.ndim != 1:
        raise InputError(f"y has shape {y.shape}; expected a 1-D array of class labels")
    classes = np.asarray(da.unique(y).compute())
    check_label_values(classes)
    return classes, y.map_blocks(partial(np.searchsorted, classes), dtype=np.int64)


def pool_rows(n: int, rng=None) -> np.ndarray:
    """The rows brought to the driver: all of them, or POOL_ROWS drawn at random (seed 0 unless ``rng``)."""
    rng = np.random.default_rng(0) if rng is None else rng
    return np.arange(n) if n <= POOL_ROWS else np.sort(rng.choice(n, size=POOL_ROWS, replace=False))


class DaskRows:
    """Dask arrays X (n, D) and targets y (n,) on the current ``dask.distributed`` client: integer class codes
    (``n_outputs`` classes), or with ``targets`` (a function of a partition's y, run where it lives: checks and
    units) real or count targets (``n_outputs`` 1)."""

    def __init__(self, X, codes, n_classes: int, *, rng=None, targets=None):
        import dask
        import dask.array as da

        self.client = cluster_client()
        labels = targets is None
        targets = class_codes if labels else targets
        X, codes = da.asarray(X).astype(np.float64), da.asarray(codes)
        if X.chunks[0] != codes.chunks[0]:
            codes = codes.rechunk({0: X.chunks[0]})
        self.n, self.n_outputs = int(X.shape[0]), int(n_classes)
        self.n_distinct = self.n
        var = X.var(axis=0)
        if labels:
            var, counts = dask.compute(var, da.bincount(codes, minlength=n_classes))
            self.class_weights = np.asarray(counts, dtype=np.float64)
        else:
            var = var.compute()
        if not np.all(np.isfinite(var)):
            raise InputError("X contains NaN or infinity")
        self.column_std = np.sqrt(np.asarray(var))
        blocks = list(zip(X.to_delayed().ravel(), codes.to_delayed().ravel()))
        self.parts = self.client.compute([dask.delayed(_check_block)(x, y, targets) for x, y in blocks])
        self.rows_per_part = list(X.chunks[0])
        idx = pool_rows(self.n, rng)
        X_pool, y_pool = dask.compute(X[idx], codes[idx])
        self.pool = (np.asarray(X_pool), targets(np.asarray(y_pool)))
        # the targets the likelihood starts from: each class once, weighted by its count; or the pool's targets
        if labels:
            self.target_summary = (np.arange(n_classes), self.class_weights)
        else:
            self.target_summary = (self.pool[1], np.ones(self.pool[1].size))

    def chunk(self, width: int, chunk_size) -> int:
        return chunk_size_for(max(self.rows_per_part), width, chunk_size)

    def _map(self, function, params, what: str, **kwargs):
        """``function(part, params, **kwargs)`` on every partition, its results gathered (rows first in each), by the
        regressors' rule (:func:`~sparsegp.backends.dask_sums.map_gathered`): an evaluation that met a lost worker is
        run again (Dask recomputes the lost partitions from the arrays' graph), never summed over fewer rows."""
        host = jax.tree_util.tree_map(np.asarray, params)
        results = map_gathered(self.client, function, self.parts, host, what, **kwargs)
        if sum(r[0] for r in results) != self.n:  # pragma: no cover - map_gathered has every partition's answer
            raise DistributedError(f"{what}: the partitions answered for {sum(r[0] for r in results)} of {self.n} rows")
        return results

    def site_sums(self, family, params, chunk: int, s: float):
        """(P, h, e) of :func:`sparsegp.classification.svgp.site_sums`, summed over the partitions."""
        results = self._map(_part_site_sums, params, "the sites", family=family, chunk=chunk, s=s)
        return tuple(sum(r[k] for r in results) for k in (1, 2, 3))

    def problem(self, family, chunk: int, s: float):
        """(None, (), value_and_grad): -bound and its gradient, the rows' part summed over the partitions."""

        def value_and_grad(params):
            results = self._map(_part_value_and_grad, params, "the bound", family=family, chunk=chunk, s=s)
            value = sum(r[1] for r in results)
            grad = results[0][2]
            for r in results[1:]:
                grad = jax.tree_util.tree_map(np.add, grad, r[2])
            kl, kl_grad = _kl_value_and_grad(params, family)
            return -value + float(kl), jax.tree_util.tree_map(lambda a, b: np.asarray(b) - a, grad, kl_grad)

        return None, (), value_and_grad


__all__ = ["DaskRows", "dask_labels", "pool_rows", "POOL_ROWS"]
