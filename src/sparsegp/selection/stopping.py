"""Stopping rules for greedy selection (besides the fixed size every selector has).

A rule sees the state after every inclusion and returns a reason to stop, or
None. Rules that monitor a curve (the evidence, an error) also report
``best_size``: the selection is cut back to the prefix where the curve was best.
"""

from __future__ import annotations

import time

import numpy as np

from .._docstrings import fill
from ..linalg import forward_row
from ..validation import as_float_matrix, as_float_vector, check_positive


@fill()
class StoppingRule:
    """A rule that ends a greedy selection before its size: it sees the state after every inclusion and
    returns a reason to stop, or None. Rules that monitor a curve (the evidence, an error) also set
    ``best_size``, and the selection is cut back to the prefix where the curve was best.

    Examples
    --------
    {toy_selection}
    >>> from sparsegp.selection import InfoGain, StoppingRule
    >>> class AtScore(StoppingRule):
    ...     def update(self, state, record):
    ...         return "score below 1e-3" if record["score"] < 1e-3 else None
    >>> selection = InfoGain(200, stop=[AtScore()]).select(kernel, noise, X, y)
    >>> selection.reason, len(selection.indices) < 200
    ('score below 1e-3', True)
    """

    best_size: int | None = None

    def start(self, state, oracle) -> None:
        """Called once before the first inclusion; resets the rule.

        Parameters
        ----------
        state : ActiveSetState
            The empty state.
        oracle : object
            The kernel's Gram-matrix engine on the training inputs (``oracle.cross(A, rows)`` gives K(A, X[rows])).
        """
        self.best_size = None

    def update(self, state, record: dict) -> str | None:
        """Called after every inclusion.

        Parameters
        ----------
        state : ActiveSetState
            The state with the new point included.
        record : dict
            This inclusion's record (``score``, ``dtc_log_marginal``, ``vfe_bound``, ``primal``, ``gap`` where
            tracked, ...), as in ``Selection.history``.

        Returns
        -------
        str or None
            Why to stop, or None to go on.
        """
        raise NotImplementedError


@fill()
class RelativeGap(StoppingRule):
    """Smola & Bartlett's Algorithm 1: stop when the relative duality gap is below ``eps``. Needs the gap
    tracked (``track_gap=True``, on by default for :class:`~sparsegp.selection.SmolaBartlett`).

    Parameters
    ----------
    eps : float
        The threshold (the paper's 0.025).

    Examples
    --------
    {toy_selection}
    >>> from sparsegp.selection import InfoGain, RelativeGap
    >>> selection = InfoGain(200, track_gap=True, stop=[RelativeGap(0.05)]).select(kernel, noise, X, y)
    >>> bool(selection.curve("gap")[-1] < 0.05)
    True
    """

    def __init__(self, eps: float = 0.025):
        self.eps = float(check_positive(eps, "eps"))

    def update(self, state, record):
        gap = record.get("gap")
        if gap is None:
            raise ValueError("RelativeGap needs the duality gap: pass track_gap=True to the selector")
        return f"relative gap {gap:.4g} < {self.eps:g}" if gap < self.eps else None


@fill()
class QuadraticFormGap(StoppingRule):
    """Smola & Bartlett's error-bar criterion (sec. 4, Table 2). With a test point's kernel column k as the
    targets, the primal Q and the dual Q* bracket s = k^T (K + sigma^2 I)^-1 k, the term eq. 10 needs:
    -2 Q*(alpha*) <= s <= (2 Q(alpha) + k^T k) / sigma^2 (Theorem 1 with y = k). Stop when the relative gap
    2 (upper - lower) / (upper + lower) is below ``eps``; ``bounds`` holds (lower, upper) after every
    inclusion. Needs ``track_gap``.

    Parameters
    ----------
    eps : float
        The threshold.

    Examples
    --------
    {toy_selection}
    >>> from sparsegp.selection import QuadraticFormGap, SmolaBartlett
    >>> k = np.asarray(kernel.K(X, np.array([[0.5]])))[:, 0]  # the test point's column, as targets
    >>> rule = QuadraticFormGap(0.02)
    >>> selection = SmolaBartlett(200, eps=None, stop=[rule], random_state=0).select(kernel, noise, X, k)
    >>> lower, upper = rule.bounds[-1]
    >>> bool(lower <= upper), bool(2 * (upper - lower) / (upper + lower) < 0.02)
    (True, True)
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


# The one option of every monitor below, documented once (see _docstrings.fill).
_PATIENCE = """
Parameters
----------
patience : int
    Inclusions without improvement before stopping.
"""


class Patience:
    """A monitored curve (lower is better) read one value at a time: its best value, the size ``best_at`` where it
    was reached, and whether ``patience`` readings have passed without an improvement of more than ``margin``.
    Every patience rule of a greedy selection keeps one: the monitors below (a reading per inclusion) and the
    IVM's (:mod:`sparsegp.classification.ivm`, a reading every ``check_every`` inclusions)."""

    def __init__(self, patience: int, margin: float = 0.0):
        self.patience, self.margin = int(patience), float(margin)
        self.best, self.since = np.inf, 0
        self.best_at: int | None = None

    def exhausted(self, value: float, at: int) -> bool:
        """Read ``value`` at size ``at``: True once ``patience`` readings in a row have not improved on the best."""
        if value < self.best - self.margin:
            self.best, self.best_at, self.since = value, at, 0
        else:
            self.since += 1
        return self.since >= self.patience


class _Monitor(StoppingRule):
    """Stop once the monitored value has not improved for ``patience`` inclusions; keep the best prefix."""

    def __init__(self, patience: int = 20):
        self.patience = int(patience)

    def start(self, state, oracle):
        super().start(state, oracle)
        self._curve = Patience(self.patience)

    def _value(self, state, record) -> float:
        raise NotImplementedError

    def update(self, state, record):
        exhausted = self._curve.exhausted(self._value(state, record), state.d)
        self.best_size = self._curve.best_at
        if exhausted:
            return f"{self.what} has not improved for {self.patience} inclusions (best at d={self.best_size})"
        return None


@fill(patience=_PATIENCE)
class EvidenceMinimum(_Monitor):
    """Quiñonero-Candela & Rasmussen Fig. 2: stop at the minimum of the negative log evidence (DTC's), once
    it has not improved for ``patience`` inclusions, and keep the best prefix.

    {patience}

    Examples
    --------
    {toy_selection}
    >>> from sparsegp.selection import EvidenceMinimum, Evidence
    >>> rule = EvidenceMinimum(patience=5)
    >>> selection = Evidence(150, stop=[rule], random_state=0).select(kernel, noise, X, y)
    >>> len(selection.indices) == rule.best_size
    True
    """

    what = "the negative log evidence"

    def _value(self, state, record):
        return -record["dtc_log_marginal"]


@fill(patience=_PATIENCE)
class RemainingError(_Monitor):
    """Seeger et al. sec. 2.2: stop once the mean squared error of the predictive mean on the points not (yet)
    in the active set has not improved for ``patience`` inclusions; keep the best prefix.

    {patience}

    Examples
    --------
    {toy_selection}
    >>> from sparsegp.selection import InfoGain, RemainingError
    >>> rule = RemainingError(patience=5)
    >>> selection = InfoGain(150, stop=[rule]).select(kernel, noise, X, y)
    >>> len(selection.indices) == rule.best_size
    True
    """

    what = "the squared error on the remaining points"

    def _value(self, state, record):
        R = ~state.active
        return float(np.mean((state.y[R] - state.mu[R]) ** 2)) if R.any() else 0.0


@fill()
class HeldOutError(_Monitor):
    """Seeger et al. sec. 2.2: stop once the mean squared error of the predictive mean on a held-out set has
    not improved for ``patience`` inclusions; keep the best prefix. The held-out means are kept up to date
    like mu (App. A.1 applied to the held-out columns): one kernel column and O(n_val d) per inclusion.

    Parameters
    ----------
    X_val : array of shape (n_val, D)
        Held-out inputs.
    y_val : array of shape (n_val,)
        Held-out targets.
    patience : int
        Inclusions without improvement before stopping.

    Examples
    --------
    {toy_selection}
    >>> from sparsegp.selection import HeldOutError, InfoGain
    >>> X_val = np.linspace(-3, 3, 30)[:, None]; y_val = np.sin(2 * X_val[:, 0])
    >>> rule = HeldOutError(X_val, y_val, patience=5)
    >>> selection = InfoGain(150, stop=[rule]).select(kernel, noise, X, y)
    >>> bool(np.mean((rule.predictions(selection.state) - y_val) ** 2) < 0.01)
    True
    """

    what = "the held-out squared error"

    def __init__(self, X_val, y_val, patience: int = 20):
        super().__init__(patience)
        self.X_val = as_float_matrix(X_val, "X_val")
        self.y_val = as_float_vector(y_val, "y_val", n=self.X_val.shape[0])

    def start(self, state, oracle):
        """Reset the held-out predictions for a new selection.

        Parameters
        ----------
        state : ActiveSetState
            The empty state.
        oracle : object
            The Gram-matrix engine on the training inputs.
        """
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
        """The predictive means at the held-out inputs for the current active set (brought up to date first).

        Parameters
        ----------
        state : ActiveSetState
            The selection's state.

        Returns
        -------
        ndarray of shape (n_val,)
        """
        self._sync(state)
        return self._mu

    def _value(self, state, record):
        return float(np.mean((self.y_val - self.predictions(state)) ** 2))


@fill()
class TimeBudget(StoppingRule):
    """Stop after ``seconds`` of wall-clock selection time.

    Parameters
    ----------
    seconds : float
        The budget.

    Examples
    --------
    {toy_selection}
    >>> from sparsegp.selection import InfoGain, TimeBudget
    >>> selection = InfoGain(200, stop=[TimeBudget(1e-6)]).select(kernel, noise, X, y)
    >>> len(selection.indices), selection.reason.startswith("time budget")
    (1, True)
    """

    def __init__(self, seconds: float):
        self.seconds = float(check_positive(seconds, "seconds"))

    def start(self, state, oracle):
        super().start(state, oracle)
        self._t0 = time.perf_counter()

    def update(self, state, record):
        el = time.perf_counter() - self._t0
        return f"time budget of {self.seconds:g} s used" if el >= self.seconds else None
