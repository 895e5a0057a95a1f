"""IVM selection (Lawrence, Seeger & Herbrich 2003, Algorithm 1 and sec. 3's randomised scheme).

Greedy forward selection of the active set by the differential-entropy score
(eq. 4) or the information gain, with ADF site updates. Schedule: the first
``n_random`` inclusions at random (with a constant-diagonal kernel every score
ties while I is empty), then ``n_full`` by full greedy search over every
remaining point, then a selection index J of fixed size: after each inclusion
the best-scoring fraction tau of J is retained and J is refilled at random.
Only J's columns of M are brought up to date (delayed updating), so the later
inclusions cost O(|J| d) plus the refills' catch-up, not O(n d).
"""

from __future__ import annotations

import time
from contextlib import ExitStack
from dataclasses import dataclass, field

import numpy as np

from .._docstrings import fill
from ..errors import InputError
from ..kernels.gram import gram
from ..linalg import single_threaded_blas
from ..progress import progress_bar
from ..selection.criteria import DifferentialEntropyRule, InfoGainRule
from ..selection.stopping import Patience
from .adf import IVMState
from .probit import entropy_score, info_gain_score

STOP_RULES = (None, "error", "loglik")


@fill()
@dataclass
class IVMSelection:
    """The finished IVM selection: the ADF state, the prefix kept, and the monitored curve.

    Parameters
    ----------
    state : IVMState
        The state with every inclusion made.
    d : int
        Inclusions kept (a prefix of ``state.I``).
    reason : str
        Why the selection stopped.
    seconds : float
        Wall-clock time.
    history : list of dict
        One record per check (d, and the monitor's error or log likelihood).

    Examples
    --------
    {toy_classification}
    >>> selection.d, selection.reason
    (20, 'reached size 20')
    """

    state: IVMState
    d: int  # inclusions kept (a prefix of state.I)
    reason: str
    seconds: float
    history: list = field(default_factory=list)  # dicts: d, and the monitor's error / loglik when checked


def _entropy(state: IVMState, cols) -> np.ndarray:
    return entropy_score(state.a[cols], state.sites(cols).nu)


def _info_gain(state: IVMState, cols) -> np.ndarray:
    s = state.sites(cols)
    return info_gain_score(state.a[cols], s.alpha, s.nu)


# The IVM's scores of a candidate under the probit sites, by the names of the selection's scoring rules for the
# same ideas (sparsegp.selection.criteria: eq. 4's differential entropy, Seeger et al.'s information gain);
# "entropy", the IVM's older name for the first, is read as it.
SCORES = {DifferentialEntropyRule.name: _entropy, InfoGainRule.name: _info_gain}
CRITERIA = tuple(SCORES)
ALIASES = {"entropy": DifferentialEntropyRule.name}


def _scores(state: IVMState, cols, criterion: str) -> np.ndarray:
    return SCORES[criterion](state, cols)


def _draw_outside(rng, free, taken, k: int) -> np.ndarray:
    """k distinct random points with ``free`` set and not in ``taken``, by rejection (no O(n) shuffle)."""
    pool = free.copy()
    pool[taken] = False
    avail = int(pool.sum())
    k = min(k, avail)
    if 4 * k > avail:
        return rng.choice(np.flatnonzero(pool), size=k, replace=False)
    out = np.empty(0, dtype=np.int64)
    while out.size < k:
        draw = rng.integers(0, pool.size, size=2 * (k - out.size))
        draw = draw[pool[draw]]
        out = np.concatenate([out, draw])
        _, first = np.unique(out, return_index=True)
        out = out[np.sort(first)]
    return out[:k]


class _Monitor:
    """Error rate and mean log P(y | x) on a fixed random sample of the training points not in I, read by the
    selection's patience rule (:class:`~sparsegp.selection.stopping.Patience`, a reading per check)."""

    def __init__(self, state, rule, size, rng, check_every, patience):
        self.rule, self.check_every = rule, check_every
        self.R = np.sort(rng.choice(state.n, size=min(size, state.n), replace=False))
        self.curve = Patience(patience, margin=1e-12)

    @property
    def best_d(self) -> int:
        return self.curve.best_at or 0

    def check(self, state, history) -> bool:
        """Record the monitor at the current d; True when it has not improved for ``patience`` checks."""
        state.refresh(self.R)
        R = self.R[~state.active[self.R]]
        if R.size == 0:
            return True
        s = state.sites(R)
        err = float(np.mean(s.z <= 0.0))
        nll = float(-np.mean(s.log_Z))  # log Phi(y (h + b) / sqrt(1 + a)) = log Q(y_j)
        history.append({"d": state.d, "error": err, "nll": nll, "monitored": int(R.size)})
        return self.curve.exhausted(err if self.rule == "error" else nll, state.d)


@dataclass(frozen=True)
class IVMSchedule:
    """How the IVM selects (Lawrence et al. 2003, Algorithm 1 and sec. 3), validated on construction.

    Parameters
    ----------
    size : int
        The most inclusions.
    criterion : {"differential-entropy", "info-gain"}
        The score: eq. 4, or the information gain.
    n_random : int
        The first inclusions, drawn at random.
    n_full : int
        Then inclusions by full greedy search.
    index_size : int or None
        Then a selection index of this many points; None: full greedy search throughout.
    tau : float
        The fraction of the index retained after each inclusion.
    stop : {None, "error", "loglik"}
        None: a fixed size. "error" / "loglik": every ``check_every`` inclusions the error rate or the
        negative expected log likelihood on ``monitor_size`` random training points outside I is recorded;
        the run stops after ``patience`` checks without improvement and the best prefix is kept.
    monitor_size : int
        Points the monitor scores.
    check_every : int
        Inclusions between checks.
    patience : int
        Checks without improvement before stopping.

    Examples
    --------
    >>> from sparsegp.classification import IVMSchedule
    >>> IVMSchedule(size=500).index_size
    500
    >>> try:
    ...     IVMSchedule(size=500, tau=1.5)
    ... except ValueError as err:
    ...     print(str(err).split(" must")[0])
    tau (the retained fraction of the selection index)
    """

    size: int
    criterion: str = DifferentialEntropyRule.name
    n_random: int = 2
    n_full: int = 198
    index_size: int | None = 500
    tau: float = 0.5
    stop: str | None = None
    monitor_size: int = 2000
    check_every: int = 50
    patience: int = 3

    def __post_init__(self):
        object.__setattr__(self, "criterion", ALIASES.get(self.criterion, self.criterion))
        if self.criterion not in CRITERIA:
            raise InputError(f"criterion must be one of {CRITERIA}, got {self.criterion!r}")
        if self.stop not in STOP_RULES:
            raise InputError(f"stop must be one of {STOP_RULES}, got {self.stop!r}")
        if not 0.0 < self.tau < 1.0:
            raise InputError(f"tau (the retained fraction of the selection index) must lie in (0, 1), got {self.tau!r}")
        if self.index_size is not None and self.index_size < 2:
            raise InputError(f"index_size must be at least 2 or None (full greedy), got {self.index_size!r}")


@fill()
def ivm_select(kernel, X, y, bias: float, *, random_state=None, verbose: bool = False, **schedule) -> IVMSelection:
    """Run the IVM's ADF with greedy selection of up to ``size`` points (Lawrence, Seeger & Herbrich 2003,
    Algorithm 1): what :class:`sparsegp.IVMClassifier` fits with.

    Parameters
    ----------
    kernel : Kernel
        The covariance function.
    X : array of shape (n, D)
        Training inputs.
    y : array of shape (n,)
        Labels in {-1, +1}.
    bias : float
        The probit bias b.
    random_state : int, Generator or None
        Seed for the random inclusions and the selection index.
    verbose : bool
        A progress bar over the inclusions.
    **schedule
        The fields of :class:`IVMSchedule` (``size`` is required).

    Returns
    -------
    IVMSelection
        Its ``state.I[:d]`` are the active rows in order of inclusion.

    Examples
    --------
    {toy_classification}
    >>> selection.state.active_set[:3]
    array([85, 63, 52])
    """
    sch = IVMSchedule(**schedule)
    with ExitStack() as stack:
        return _select(kernel, X, y, bias, sch, random_state, verbose, stack)


def _select(kernel, X, y, bias, sch: IVMSchedule, random_state, verbose, stack) -> IVMSelection:
    rng = np.random.default_rng(random_state)
    K = gram(kernel, X)  # the host engine for the squared exponential: thousands of small blocks
    state = IVMState(K.diag(), y, bias, sch.size, K.block_at, K.column)
    size = state.d_max
    monitor = _Monitor(state, sch.stop, sch.monitor_size, rng, sch.check_every, sch.patience) if sch.stop else None
    history: list = []
    reason = f"reached size {size}"
    J = None
    t0 = time.perf_counter()
    with progress_bar(total=size, desc="IVM selection", verbose=verbose, unit="pt") as bar:
        while state.d < size:
            k = state.d
            free = ~state.active
            if k < sch.n_random:
                i = int(rng.choice(np.flatnonzero(free)))
            elif sch.index_size is None or k < sch.n_random + sch.n_full or free.sum() <= sch.index_size:
                cols = np.flatnonzero(free)
                state.refresh(None if 2 * cols.size > state.n else cols)
                i = int(cols[np.argmax(_scores(state, cols, sch.criterion))])
            else:
                if J is None:
                    # The randomised inclusions are thousands of small BLAS calls, where OpenBLAS's threads cost
                    # more than they save (BENCHMARKS.md, IVM implementation choices); the full-greedy ones
                    # are large memory-bound products and keep them.
                    stack.enter_context(single_threaded_blas())
                    J = rng.choice(np.flatnonzero(free), size=sch.index_size, replace=False)
                state.refresh(J)
                order = np.argsort(-_scores(state, J, sch.criterion), kind="stable")
                i = int(J[order[0]])
                keep = J[order[1 : 1 + int(sch.tau * len(J))]]
                J = np.concatenate([keep, _draw_outside(rng, free, np.append(keep, i), sch.index_size - keep.size)])
            state.include(i)
            bar.update(1)
            if monitor is not None and state.d % sch.check_every == 0 and monitor.check(state, history):
                reason = f"the monitored {'error' if sch.stop == 'error' else 'log likelihood'} stopped improving"
                break
    d = state.d
    if monitor is not None:
        if not history or history[-1]["d"] != state.d:
            monitor.check(state, history)
        d = monitor.best_d or state.d
    return IVMSelection(state, d, reason, time.perf_counter() - t0, history)
