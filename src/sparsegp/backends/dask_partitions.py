"""Training rows on a Dask cluster: the sums on the workers that hold the partitions.

The targets' mean and scale and the inputs' spread are dask reductions; rows the start needs are
fetched (an int m draws the same rows as in memory with the same ``random_state``; info-gain, conditional
variance and differential entropy over all candidates run on the partitions,
:mod:`sparsegp.selection.dask_select`; other selectors and k-means on ``SAMPLE_ROWS`` rows drawn at
random); every objective and gradient sums over the partitions (:class:`~sparsegp.backends.dask_sums.DaskStats`),
each partition summing one weighted row per distinct input of its own rows with ``duplicates="collapse"``.
The leave-one-out check scores rows fetched at random. Refused here: re-selection schedules, the augmented
and Nyström predictions (they keep the training data) and ``duplicates="drop"`` (it compares every row
with every other).
"""

from __future__ import annotations

import os
import warnings

import numpy as np

from ..errors import InputError, SparseGPError
from .base import Moments
from .dask_sums import DaskStats, cluster_client
from .in_memory import MIN_INPUTS, target_ddof

SAMPLE_ROWS = 20_000  # rows fetched to the driver for a greedy selection or k-means start

REFUSED = {
    "reselect": "is not available on dask arrays; use reselect=None",
    "prediction": "keeps the training data in memory: use prediction='standard' with dask arrays",
    "noise": "is not available on dask arrays (the partitions' sums hold one noise for every target); pass one "
    "number as noise, or fit the targets in memory",
    "duplicates": "is not available on dask arrays (it compares every row with every other): remove the copies "
    "first (dask.dataframe's drop_duplicates), or keep every row (duplicates='collapse')",
}


def _arrays(X, y):
    import dask.array as da

    X, y = da.asarray(X), da.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:  # one target as a column
        y = y[:, 0]
    if X.ndim != 2 or y.ndim not in (1, 2) or X.shape[0] != y.shape[0]:
        raise InputError(
            f"X must be 2-D and y 1-D (or (n, k) for k targets) with as many rows, got shapes {X.shape} and {y.shape}"
        )
    if y.ndim == 2:  # k targets: every partition holds all of a row's targets
        y = y.rechunk({1: -1})
    if X.shape[0] < MIN_INPUTS:
        raise InputError(f"X has {X.shape[0]} sample(s); at least {MIN_INPUTS} required")
    for name, a in (("X", X), ("y", y)):
        if a.dtype.kind not in "fiu":
            raise InputError(f"{name} must hold numbers, got dtype {a.dtype}")
    return X.astype(np.float64), y.astype(np.float64)


def dask_noise_variance(v, X):
    """A known noise variance per row for dask arrays X: None, a scalar, or an array (NumPy or dask) of X's
    rows, as a 1-D float64 dask array in X's row chunks (its values are checked as the moments are computed)."""
    import dask.array as da

    if v is None:
        return None
    v = da.asarray(v, dtype=np.float64) if not np.isscalar(v) else da.full(X.shape[0], float(v), chunks=X.chunks[0])
    if v.ndim != 1 or v.shape[0] != X.shape[0]:
        raise InputError(
            f"noise_variance has shape {v.shape}; expected a scalar or one variance per row ({X.shape[0]},)"
        )
    return v.rechunk(X.chunks[0])


def fetch_rows(X, idx):
    """Rows ``idx`` of a dask array, in that order."""
    return X[np.sort(idx)].compute()[np.argsort(np.argsort(idx))]


class DaskPartitions:
    """Dask arrays X (n, D), y (n,) on the current ``dask.distributed`` client."""

    name = "dask"
    on_cluster = True

    def __init__(self, X, y, *, duplicates: str, normalize_y: bool, noise_variance=None):
        import dask

        self.client = cluster_client()
        if duplicates == "drop":
            self.refuse("duplicates='drop'", "duplicates")
        self.X, y = _arrays(X, y)
        if y.ndim == 2 and noise_variance is not None:
            raise InputError("noise_variance with several targets is not available; fit each target on its own")
        n, D = self.X.shape
        y_mean, y_std, var, low = dask.compute(
            y.mean(axis=0),
            y.std(axis=0, ddof=target_ddof(n, D)),
            self.X.var(axis=0),
            (0.0, 0.0) if noise_variance is None else (noise_variance.min(), noise_variance.max()),
        )
        if not (np.all(np.isfinite(low)) and low[0] >= 0):
            raise InputError(f"noise_variance must hold finite variances >= 0; its range is {low[0]} to {low[1]}")
        if not (np.all(np.isfinite(y_mean)) and np.all(np.isfinite(y_std)) and np.all(np.isfinite(var))):
            raise InputError("X or y contains NaN or infinity")
        if y.ndim == 2:  # k targets, each standardised on its own
            ones = np.ones(y.shape[1])
            y_mean, y_std = (np.asarray(y_mean), np.where(y_std > 0, y_std, 1.0)) if normalize_y else (0 * ones, ones)
        else:
            y_mean, y_std = (float(y_mean), float(y_std) if y_std > 0 else 1.0) if normalize_y else (0.0, 1.0)
        self.y_raw, self.y = y, (y - y_mean) / y_std
        # each row's known noise variance in the targets' units (a dask array), and on the normalised scale
        self.known_raw = noise_variance
        self.known = None if noise_variance is None else noise_variance / y_std**2
        self.moments = Moments(n, np.asarray(var), y_mean, y_std)
        self.collapsed = duplicates == "collapse"
        self.first = None
        self._sums: DaskStats | None = None

    def refuse(self, what: str, option: str) -> None:
        raise InputError(f"{what} {REFUSED[option]}")

    def rows(self, s: float):
        return None  # the rows stay on the workers

    def chunk(self, m: int, chunk_size: int | None) -> int:
        from .jax_sums import chunk_size_for

        return chunk_size_for(max(self.X.chunks[0]), m, chunk_size)

    def host_sums(self, s: float, chunk: int) -> DaskStats:
        if self._sums is None:
            self._sums = DaskStats(self.X / s, self.y, chunk, self.client, grouped=self.collapsed, known=self.known)
        return self._sums

    @property
    def bytes_per_evaluation(self) -> float | None:
        sums = self._sums
        return None if sums is None else sums.bytes_moved / max(sums.evaluations, 1)

    def fetch(self, idx):
        import dask

        X, y = dask.compute(self.X[np.sort(idx)], self.y[np.sort(idx)])
        order = np.argsort(np.argsort(idx))
        return np.asarray(X)[order], np.asarray(y)[order]

    def known_at(self, idx):
        """The known noise variances of rows ``idx`` (normalised scale), or None."""
        return None if self.known is None else fetch_rows(self.known[:, None], np.asarray(idx))[:, 0]

    def start_sample(self, rng):
        """``SAMPLE_ROWS`` rows drawn at random (all when there are no more), for a start that needs rows in
        memory: (inputs, normalised targets, their rows)."""
        n = self.moments.n
        sample = np.sort(rng.choice(n, size=min(n, SAMPLE_ROWS), replace=False))
        X, y = self.fetch(sample)
        return X, y, sample

    def distinct(self, idx, rng, tries: int = 8):
        """The drawn rows with rows that repeat an input drawn before replaced by further random rows.

        In memory an int m draws m distinct inputs from the grouped rows; on the cluster the groups are
        not known, so repeats among the m drawn rows (which would make K_uu singular) are redrawn a few
        times, and any left are dropped with a warning. Without repeated inputs this returns ``idx``.
        """
        m, rows = len(idx), fetch_rows(self.X, idx)
        for attempt in range(tries + 1):
            keep = np.sort(np.unique(rows, axis=0, return_index=True)[1])[:m]
            idx, rows = idx[keep], rows[keep]
            spare = np.setdiff1d(np.arange(self.X.shape[0]), idx)
            if keep.size == m or spare.size == 0 or attempt == tries:
                break
            extra = rng.choice(spare, size=min(4 * (m - keep.size) + 16, spare.size), replace=False)
            idx, rows = np.concatenate([idx, extra]), np.concatenate([rows, fetch_rows(self.X, extra)])
        if len(idx) < m:
            warnings.warn(
                f"inducing={m}: only {len(idx)} distinct inputs among the rows drawn; using those",
                UserWarning,
                stacklevel=5,
            )
        return idx

    def loo_rows(self, rows):
        """(X, normalised y, known noise variances or None) at ``rows``, and the normalised targets' mean and
        variance over all rows."""
        import dask

        X, y, y_mean, y_var = dask.compute(
            self.X[rows], self.y_raw[rows], self.y_raw.mean(axis=0), self.y_raw.var(axis=0)
        )
        mu, sd = self.moments.y_mean, self.moments.y_std
        known = None if self.known_raw is None else np.asarray(self.known_raw[rows].compute()) / sd**2
        if np.ndim(mu) == 1:  # k targets: per target
            return (
                np.asarray(X),
                (np.asarray(y) - mu) / sd,
                None,
                (np.asarray(y_mean) - mu) / sd,
                np.asarray(y_var) / sd**2,
            )
        return np.asarray(X), (np.asarray(y) - mu) / sd, known, (float(y_mean) - mu) / sd, float(y_var) / sd**2

    def close(self) -> None:
        if self._sums is not None:
            self._sums.close()


def read_table(path: str, target: str, delimiter: str):
    """(X, y, feature names) of CSV files or a Parquet folder as dask arrays with known row chunks."""
    try:
        import dask.dataframe as dd
    except ImportError as exc:
        raise SparseGPError("--dask needs the optional dependencies: pip install 'sparsegp[dask]'") from exc
    parquet = path.endswith((".parquet", ".pq")) or os.path.isdir(path)
    df = dd.read_parquet(path) if parquet else dd.read_csv(path, sep=delimiter)
    if target not in df.columns:
        raise SparseGPError(
            f"--target {target!r} is not a column of {path} (columns: {', '.join(map(str, df.columns))})"
        )
    features = [c for c in df.columns if c != target]
    bad = [c for c in features + [target] if df[c].dtype.kind not in "fiu"]
    if bad:
        raise SparseGPError(f"columns {bad} of {path} are not numeric")
    return df[features].to_dask_array(lengths=True), df[target].to_dask_array(lengths=True), features


def connect(address: str, workers: int):
    """A client of the scheduler at ``address``, or of a new LocalCluster of ``workers`` processes ('local')."""
    from distributed import Client, LocalCluster

    if address != "local":
        return Client(address), None
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
    return Client(cluster), cluster


def _predict_block(block, model, include_noise):
    mean, std = model.predict(block, return_std=True, include_noise=include_noise)
    return np.column_stack([mean, std])


def predict_blocks(model, X, *, return_std=False, return_cov=False, include_noise=True):
    """Mean (and std) of a fitted model at the rows of a dask array, as dask arrays, block by block."""
    import dask.array as da

    model._check_fitted()
    if return_cov:
        raise InputError("return_cov needs all test points in one n x n matrix: not available for dask arrays")
    X = da.asarray(X)
    if X.ndim != 2 or X.shape[1] != model.n_features_in_:
        raise InputError(
            f"X has shape {X.shape}, but {type(model).__name__} is expecting {model.n_features_in_} features as input"
        )
    X = X.rechunk({1: -1})
    k = int(np.size(model.y_mean_)) if np.ndim(model.y_mean_) == 1 else 0  # 0: one target
    width = 2 * max(k, 1)
    out = X.map_blocks(_predict_block, model, include_noise, chunks=(X.chunks[0], (width,)), dtype=np.float64)
    if k:  # k targets: means in the first k columns, sds in the next k
        return (out[:, :k], out[:, k:]) if return_std else out[:, :k]
    return (out[:, 0], out[:, 1]) if return_std else out[:, 0]
