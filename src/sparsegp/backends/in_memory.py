"""Training rows in memory: the JAX program over row chunks, or BLAS-3 sums on the host."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..errors import DataWarning, InputError
from .base import Moments
from .blas_sums import BlasStats
from .jax_sums import chunk_size_for
from .replicates import Replicates, Rows, collapse, distinct_records, repeated_records

# Fewer distinct training inputs than this are refused: from two the targets' scale has one degree of
# freedom, and 2-sd error bars covered 0.05 to 0.26 of test targets on the worst draws (BENCHMARKS.md,
# "Tiny training sets").
MIN_INPUTS = 3


def too_few_inputs(distinct: int, rows: int) -> str:
    """The error for training data with fewer than MIN_INPUTS distinct inputs."""
    return (
        f"X has {distinct} distinct input(s) in {rows} rows; at least {MIN_INPUTS} are required: from fewer, the "
        "targets' scale rests on one degree of freedom and no error bars can be trusted (BENCHMARKS.md, 'Tiny "
        "training sets')"
    )


def target_ddof(n: int, D: int) -> int:
    """1 (the unbiased spread) below two rows per hyper-parameter of the default kernel and noise, else 0:
    the biased estimate is far too small there, and the weak default priors sit on this scale."""
    return 1 if n < 2 * (D + 2) else 0


class InMemory:
    """The validated training rows (X, y) as NumPy arrays; ``duplicates`` says how repeated rows count.

    Every row is data ("collapse" or "expand"): the targets are standardised over all rows, and rows that
    share an input are grouped (:func:`~sparsegp.backends.replicates.collapse`), which the sums use for
    "collapse". A row that repeats an earlier one exactly, inputs and target, gets a DataWarning: copies
    say the targets do not vary at that input, which pulls the noise estimate, and the error bars, down;
    with "drop" such copies are fitted once.
    """

    name = "memory"
    on_cluster = False

    def __init__(self, X: np.ndarray, y: np.ndarray, *, collapsed: bool, moments: Moments, known=None):
        """Rows X and normalised targets y as they are (see :meth:`from_training` for a fit's rows); ``known``:
        each row's known noise variance on the normalised targets' scale, or None."""
        self.X, self.y, self.known = X, y, known
        self.groups: Replicates = collapse(X, y, known)
        self.moments = moments
        self.collapsed = collapsed
        inputs = self.groups if known is None else collapse(X, y)  # the inducing inputs draw distinct inputs
        self.first = inputs.first if inputs.repeated else None

    @classmethod
    def of_rows(cls, X, y, *, collapsed: bool, moments: Moments, known=None) -> InMemory:
        """Some rows of a fit (the large-n strategy's subset), the first of each input not tracked."""
        part = cls(X, y, collapsed=collapsed, moments=moments, known=known)
        part.first = None
        return part

    @classmethod
    def from_training(
        cls, X, y, *, duplicates: str, normalize_y: bool, stacklevel: int = 2, noise_variance=None
    ) -> InMemory:
        """A fit's validated training rows: copies warned about (or dropped), targets normalised, at least
        MIN_INPUTS distinct inputs; ``noise_variance`` (validated, one per row, the targets' units) rescaled with
        the targets."""
        copies = repeated_records(X, y)
        if copies and duplicates == "drop":
            keep = distinct_records(X, y)
            warnings.warn(
                f"{copies} of {X.shape[0]} training rows repeat an earlier row exactly (inputs and target); with "
                f"duplicates='drop' each record is fitted once ({keep.size} rows)",
                DataWarning,
                stacklevel=stacklevel + 1,
            )
            X, y = X[keep], y[keep]
            noise_variance = None if noise_variance is None else noise_variance[keep]
        elif copies:
            warnings.warn(
                f"{copies} of {X.shape[0]} training rows repeat an earlier row exactly (inputs and target). Every "
                "row is fitted: copies of a record say that the targets do not vary at that input, which pulls the "
                "noise estimate (and the error bars) down. If they are accidental duplicates rather than repeated "
                "measurements, pass duplicates='drop'",
                DataWarning,
                stacklevel=stacklevel + 1,
            )
        y_mean: Any
        y_std: Any
        if y.ndim == 2:  # k targets: each standardised on its own; one kernel and noise on that scale
            if noise_variance is not None:
                raise InputError(
                    "noise_variance with several targets is not available (each target is scaled on its own, so "
                    "the known variances would differ between them); fit each target on its own"
                )
            y_mean, y_std = np.zeros(y.shape[1]), np.ones(y.shape[1])
            if normalize_y:
                y_mean = np.mean(y, axis=0)
                std = np.std(y, axis=0, ddof=target_ddof(*X.shape))
                y_std = np.where(std > 0, std, 1.0)
        y_mean, y_std = (0.0, 1.0) if y.ndim == 1 else (y_mean, y_std)
        if normalize_y and y.ndim == 1:
            y_mean = float(np.mean(y))
            std = float(np.std(y, ddof=target_ddof(*X.shape)))
            y_std = std if std > 0 else 1.0
        with np.errstate(over="ignore", invalid="ignore"):
            column_var = np.var(X, axis=0)
        data = cls(
            X,
            (y - y_mean) / y_std,
            collapsed=duplicates == "collapse",
            moments=Moments(X.shape[0], column_var, y_mean, y_std),
            known=None if noise_variance is None else noise_variance / y_std**2,
        )
        if data.groups.X.shape[0] < MIN_INPUTS:
            raise InputError(too_few_inputs(data.groups.X.shape[0], X.shape[0]))
        return data

    def refuse(self, what: str, option: str) -> None:
        """Everything runs in memory."""

    def rows(self, s: float) -> Rows:
        """The rows the objective sums over, inputs divided by ``s``: one weighted row per distinct input with
        ``duplicates="collapse"`` (when some input repeats), every row otherwise."""
        g = self.groups
        if self.collapsed and g.repeated:
            return Rows(g.X / s, g.y, g.counts, g.scatter, g.known)
        if self.known is not None:
            n = self.X.shape[0]
            return Rows(self.X / s, self.y, np.ones(n), np.zeros(n), self.known)
        return Rows(self.X / s, self.y)

    def chunk(self, m: int, chunk_size: int | None) -> int:
        rows = self.groups.X.shape[0] if (self.collapsed and self.groups.repeated) else self.X.shape[0]
        return chunk_size_for(rows, m, chunk_size)

    def host_sums(self, s: float, chunk: int) -> BlasStats:
        rows = self.rows(s)
        return BlasStats(rows.X, rows.y, chunk, **rows.weights())

    def fetch(self, idx):
        return self.X[idx], self.y[idx]

    def known_at(self, idx):
        """The known noise variances of rows ``idx`` (normalised scale), or None."""
        return None if self.known is None else self.known[idx]

    def start_sample(self, rng):
        """(inputs, targets, their rows) a start that needs rows in memory runs on: all of them."""
        return self.X, self.y, None

    def distinct(self, idx, rng):
        return idx  # an int m already draws distinct inputs from ``first``

    def loo_rows(self, rows: np.ndarray):
        """(X, normalised y, known noise variances or None) at ``rows``, and the normalised targets' mean and
        variance over all rows."""
        if self.y.ndim == 2:  # per target
            return self.X[rows], self.y[rows], None, np.mean(self.y, axis=0), np.var(self.y, axis=0)
        return self.X[rows], self.y[rows], self.known_at(rows), float(np.mean(self.y)), float(np.var(self.y))

    def close(self) -> None:
        pass
