"""What every backend provides to the fit: :class:`Backend`."""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol

import numpy as np

from .replicates import Rows


class Moments(NamedTuple):
    """The training data's summary the start needs: rows, input columns' variances, the targets' mean
    and standard deviation (the normalisation; 0 and 1 without ``normalize_y``)."""

    n: int
    column_var: np.ndarray
    y_mean: Any  # a float; (k,) for k targets
    y_std: Any


class Backend(Protocol):
    """The training rows of one fit, wherever they live. Targets are normalised by :attr:`moments`.

    ``first``: the first row of each distinct input where some input repeats (in memory), else None.
    ``rows``: the objective's rows with inputs divided by ``s`` for the JAX program, or None where the
    rows are not in memory. ``host_sums``: an object with ``forward`` and ``backward``, with row weights or without
    (:class:`~sparsegp.backends.blas_sums.BlasStats`'s passes), over the rows with inputs divided by ``s``.
    """

    name: str
    on_cluster: bool  # the rows live on a cluster's workers (the fit sends them the parameters)
    moments: Moments
    first: np.ndarray | None
    collapsed: bool  # one weighted row per distinct input ("collapse") or every row on its own

    def refuse(self, what: str, option: str) -> None: ...

    def chunk(self, m: int, chunk_size: int | None) -> int: ...

    def rows(self, s: float) -> Rows | None: ...

    def host_sums(self, s: float, chunk: int) -> Any: ...

    def fetch(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...

    def start_sample(self, rng) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]: ...

    def distinct(self, idx: np.ndarray, rng) -> np.ndarray: ...

    def loo_rows(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, float, float]: ...

    def close(self) -> None: ...
