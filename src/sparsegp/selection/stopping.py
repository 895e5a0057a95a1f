"""Stopping rules for greedy selection (besides the fixed size every selector has).

A rule sees the state after every inclusion and returns a reason to stop, or
None. Rules that monitor a curve (the evidence, an error) also report
``best_size``: the selection is cut back to the prefix where the curve was best.
"""

from __future__ import annotations

import time

import numpy as np

from ..linalg import forward_row
from ..validation import as_float_matrix, as_float_vector, check_positive


class StoppingRule:
    best_size: int | None = None

    def start(self, state, oracle) -> None:
        self.best_size = None

    def update(self, state, record: dict) -> str | None:
        raise NotImplementedError


class RelativeGap(StoppingRule):
    """Smola & Bartlett's Algorithm 1: stop when the relative duality gap is below ``eps`` (default 0.025).

    Needs the gap tracked (``track_gap=True``, on by default for :class:`~.selectors.SmolaBartlett`).
    """

    def __init__(self, eps: float = 0.025):
        self.eps = float(check_positive(eps, "eps"))

    def update(self, state, record):
        gap = record.get("gap")
        if gap is None:
            raise ValueError("RelativeGap needs the duality gap: pass track_gap=True to the selector")
        return f"relative gap {gap:.4g} < {self.eps:g}" if gap < self.eps else None


class QuadraticFormGap(StoppingRule):
    """Smola & Bartlett's error-bar criterion (sec. 4, Table 2): with the test point's kernel column k as
    the targets, the primal Q and dual Q* bracket s = k^T (K + sigma^2 I)^-1 k, the term eq. 10 needs:

        -2 Q*(alpha*) <= s <= (2 Q(alpha) + |k|^2) / sigma^2        (Theorem 1 with y = k)

    Stop when the relative gap 2 (upper - lower) / (upper + lower) is below ``eps``. Needs ``track_gap``.
    ``bounds`` holds (lower, upper) after every inclusion.
    """

    def __init__(self, eps: float = 0.025):
        self.eps = float(check_positive(eps, "eps"))

    def start(self, state, oracle):
        super().start(state, oracle)
        self.bounds = []

    def update(self, state, record):
        if record.get("dual") is None:
            raise ValueError("QuadraticFormGap needs the dual: pass track_gap=True")
        lower = -2.0 * record["dual"]
        upper = (2.0 * record["primal"] + state.yy) / state.noise
        self.bounds.append((lower, upper))
        gap = 2.0 * (upper - lower) / (upper + lower) if upper + lower > 0 else np.inf
        return f"quadratic-form gap {gap:.4g} < {self.eps:g}" if gap < self.eps else None


class _Monitor(StoppingRule):
    """Stop once the monitored value has not improved for ``patience`` inclusions; keep the best prefix."""

    def __init__(self, patience: int = 20):
        self.patience = int(patience)

    def start(self, state, oracle):
        super().start(state, oracle)
        self._best, self._since = np.inf, 0

    def _value(self, state, record) -> float:
        raise NotImplementedError

    def update(self, state, record):
        v = self._value(state, record)
        if v < self._best:
            self._best, self._since, self.best_size = v, 0, state.d
            return None
        self._since += 1
        if self._since >= self.patience:
            return f"{self.what} has not improved for {self.patience} inclusions (best at d={self.best_size})"
        return None


class EvidenceMinimum(_Monitor):
    """Quinonero-Candela & Rasmussen Fig. 2: stop at the minimum of the negative log evidence."""

    what = "the negative log evidence"

    def _value(self, state, record):
        return -record["dtc_log_marginal"]


class RemainingError(_Monitor):
    """Seeger et al. sec. 2.2: the average squared error of mu on the points not (yet) in the active set."""

    what = "the squared error on the remaining points"

    def _value(self, state, record):
        R = ~state.active
        return float(np.mean((state.y[R] - state.mu[R]) ** 2)) if R.any() else 0.0


class HeldOutError(_Monitor):
    """Seeger et al. sec. 2.2: the average squared error of the predictive mean on a held-out set.

    The held-out means are kept up to date like mu (App. A.1 applied to the held-out columns): one
    kernel column K(X_val, x_i) and O(n_val d) per inclusion.
    """

    what = "the held-out squared error"

    def __init__(self, X_val, y_val, patience: int = 20):
        super().__init__(patience)
        self.X_val = as_float_matrix(X_val, "X_val")
        self.y_val = as_float_vector(y_val, "y_val", n=self.X_val.shape[0])

    def start(self, state, oracle):
        super().start(state, oracle)
        self._oracle = oracle
        nv = self.X_val.shape[0]
        self._V = np.zeros((state.d_max, nv))
        self._mu = np.zeros(nv)
        self._d = 0

    def _sync(self, state):
        while self._d < state.d:
            d = self._d
            i = state.indices[d]
            kv = self._oracle.cross(self.X_val, [i])[:, 0]
            Vd = self._V[:d]
            v = forward_row(Vd, state.L[d, :d], state.L[d, d], kv)
            w = state.w_row(d, v, Vd)
            self._V[d] = v
            self._mu += state.beta[d] * w
            self._d = d + 1

    def predictions(self, state) -> np.ndarray:
        self._sync(state)
        return self._mu

    def _value(self, state, record):
        return float(np.mean((self.y_val - self.predictions(state)) ** 2))


class TimeBudget(StoppingRule):
    """Stop after ``seconds`` of wall-clock selection time."""

    def __init__(self, seconds: float):
        self.seconds = float(check_positive(seconds, "seconds"))

    def start(self, state, oracle):
        super().start(state, oracle)
        self._t0 = time.perf_counter()

    def update(self, state, record):
        el = time.perf_counter() - self._t0
        return f"time budget of {self.seconds:g} s used" if el >= self.seconds else None
