"""The greedy forward-selection loop shared by every criterion.

At fixed hyper-parameters: score the candidates, include the best, update the
state (Seeger et al. App. A.1), optionally advance Smola & Bartlett's dual and
its gap, check the stopping rules. Candidates are all eligible points (full
greedy), ``kappa`` random ones per inclusion (Smola & Bartlett sec. 4), or a
selection index of fixed size that keeps the best fraction ``tau`` of its
scored points and refills at random (Lawrence et al. 2003 sec. 3).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from .._docstrings import fill
from ..errors import InputError
from ..kernels.gram import gram
from ..progress import progress_bar
from .active_set import ActiveSetState, Extension
from .smola_bartlett import DualState, relative_gap

# What every greedy selection runs on, documented once (see _docstrings.fill).
PROBLEM = """
kernel : Kernel
    The covariance function.
noise : float
    The noise variance sigma^2.
X : array of shape (n, D)
    Training inputs.
y : array of shape (n,)
    Training targets.
"""


@fill()
@dataclass
class Selection:
    """The result of a greedy selection.

    Parameters
    ----------
    indices : ndarray of int
        The selected training rows in order of inclusion (cut back to ``best_size`` when a monitoring
        stopping rule asked for it).
    state : ActiveSetState or None
        The final state (all inclusions made); None for a selection on Dask partitions.
    history : list of dict
        One record per inclusion (:meth:`curve` reads them).
    reason : str
        Why the selection stopped.
    dual : DualState or None
        The Smola-Bartlett dual state where the gap was tracked.
    kernel_evaluations : int
        Kernel entries computed.
    seconds : float
        Wall-clock time.
    last_candidates, last_scores : ndarray or None
        The candidate rows and the criterion's score of each at the last inclusion.

    Examples
    --------
    {toy_selection}
    >>> from sparsegp.selection import InfoGain
    >>> selection = InfoGain(15).select(kernel, noise, X, y)
    >>> selection.curve("vfe_bound").shape, selection.reason
    ((15,), 'reached size 15')
    """

    indices: np.ndarray
    state: ActiveSetState | None  # None for a selection on Dask partitions (the state stays on the workers)
    history: list = field(default_factory=list)
    reason: str = ""
    dual: DualState | None = None
    kernel_evaluations: int = 0
    seconds: float = 0.0
    last_candidates: np.ndarray | None = None
    last_scores: np.ndarray | None = None

    def curve(self, key: str) -> np.ndarray:
        """One field of the history after each inclusion.

        Parameters
        ----------
        key : str
            "dtc_log_marginal", "vfe_bound", "primal", "score", "gap" (where tracked), ...

        Returns
        -------
        ndarray of shape (d,)

        Raises
        ------
        InputError
            If no record has that field; the message lists those it has.
        """
        known = sorted(set().union(*(r.keys() for r in self.history)))
        if key not in known:
            raise InputError(f"no {key!r} in this selection's history; it has {known}")
        return np.array([r[key] for r in self.history], dtype=float)


def _candidate_pool(eligible: np.ndarray, candidates, rng, working: np.ndarray | None):
    if candidates == "full":
        return eligible, None
    kappa = int(candidates)
    if working is None:
        C = eligible if eligible.size <= kappa else rng.choice(eligible, size=kappa, replace=False)
        return C, None
    # Selection index: keep the retained part that is still eligible, refill at random.
    keep = working[np.isin(working, eligible)]
    need = kappa - keep.size
    if need > 0:
        rest = np.setdiff1d(eligible, keep, assume_unique=True)
        if rest.size:
            keep = np.concatenate([keep, rng.choice(rest, size=min(need, rest.size), replace=False)])
    return keep, keep


def _extend_one_by_one(state, C, KC):
    parts = [state.extend(C[j : j + 1], KC[:, j : j + 1]) for j in range(len(C))]
    return Extension(
        l=np.concatenate([e.l for e in parts]),
        v=np.hstack([e.v for e in parts]),
        lM=np.hstack([e.lM for e in parts]),
        lMd=np.concatenate([e.lMd for e in parts]),
        beta=np.concatenate([e.beta for e in parts]),
    )


def _check_schedule(size, candidates, tau) -> int:
    size = int(size)
    if size < 1:
        raise InputError(f"size must be at least 1, got {size}")
    if candidates != "full" and (not isinstance(candidates, (int, np.integer)) or candidates < 1):
        raise InputError(f"candidates must be 'full' or a positive integer, got {candidates!r}")
    if tau is not None and (candidates == "full" or not 0 < tau < 1):
        raise InputError("tau (the retained fraction of a selection index) needs 0 < tau < 1 and an int candidates")
    return size


def _include_initial(state, oracle, initial: np.ndarray, size: int) -> None:
    """Include the rows ``initial`` first, in order (variational EM's E-step keeps its set this way)."""
    if initial.size > size or len(np.unique(initial)) != initial.size:
        raise InputError(f"initial must hold at most size={size} distinct training rows")
    K0 = oracle.columns(initial) if initial.size else np.zeros((state.n, 0))
    for j, i in enumerate(initial):
        if not state.eligible()[i]:
            raise InputError(f"initial row {int(i)} duplicates the span of the rows before it")
        state.include(int(i), K0[:, j])


def _include_best(rule, state, oracle, C, rng, batched: bool):
    """Score the candidates ``C``, include the best; returns (its row, the scores, its position in C)."""
    KC = oracle.columns(C) if rule.expensive else None
    ext = None
    if KC is not None:
        ext = state.extend(C, KC) if batched else _extend_one_by_one(state, C, KC)
    s = rule.scores(state, C, ext, rng)
    s = np.where(np.isfinite(s), s, -np.inf)
    j = int(np.argmax(s))
    i = int(C[j])
    state.include(i, KC[:, j] if KC is not None else oracle.columns([i])[:, 0])
    return i, s, j


def _record(state, i: int, score: float, t0: float) -> dict:
    """One inclusion's entry of the history: the objectives of the set it completes."""
    return {
        "d": state.d,
        "index": i,
        "score": score,
        "dtc_log_marginal": state.dtc_log_marginal(),
        "vfe_bound": state.vfe_bound(),
        "primal": state.sb_primal(),
        "seconds": time.perf_counter() - t0,
    }


def _first_stop(stop, state, rec, reason):
    """(reason, rule) of the first stopping rule that fires, or (reason unchanged, None)."""
    for r in stop:
        why = r.update(state, rec)
        if why:
            return why, r
    return reason, None


def _selection_index(C, s, j, tau: float):
    """The next working set: the best fraction ``tau`` of the candidates ``C`` (scores ``s``) besides the one
    included (position ``j``)."""
    order = np.argsort(-np.delete(s, j))
    rest = np.delete(C, j)[order]
    return rest[: int(np.ceil(tau * len(C)))]


def _advance_dual(dual, rec, oracle, rng, dual_kappa: int, noise: float, yy: float) -> None:
    """One greedy step of Smola & Bartlett's dual, its value and the relative gap recorded in ``rec``."""
    dual.step(oracle, rng, dual_kappa)
    rec["dual"] = dual.value()
    rec["gap"] = relative_gap(rec["primal"], rec["dual"], noise, yy)


@fill(problem=PROBLEM)
def greedy_select(
    rule,
    kernel,
    noise: float,
    X,
    y,
    *,
    size: int,
    candidates="full",
    tau: float | None = None,
    stop=(),
    track_gap: bool = False,
    dual_kappa: int = 59,
    random_state=None,
    verbose: bool = False,
    callback=None,
    initial=None,
    batched: bool = True,
    desc: str = "greedy selection",
) -> Selection:
    """Select up to ``size`` training points with scoring rule ``rule`` at fixed hyper-parameters: the loop
    every selector runs (score the candidates, include the best, update the state of Seeger et al.
    App. A.1, optionally advance Smola & Bartlett's dual, check the stopping rules).

    Parameters
    ----------
    rule : ScoringRule
        A criterion from :mod:`sparsegp.selection.criteria` (``InfoGainRule()``, ``SmolaBartlettRule()``, ...).
    {problem}
    size : int
        The most points to include.
    candidates : "full" or int
        Score every remaining point, or kappa random ones per inclusion.
    tau : float or None
        With an int ``candidates``: a selection index of kappa points keeping the best fraction tau after
        each inclusion and refilled at random (Lawrence et al. 2003, sec. 3).
    stop : sequence of StoppingRule
        Extra stopping rules.
    track_gap : bool
        Advance Smola & Bartlett's dual Q* by one greedy inclusion per inclusion and record the relative gap.
    dual_kappa : int
        Random candidates per inclusion of the dual.
    random_state : int, Generator or None
        Seed for the candidates.
    verbose : bool
        A progress bar over the inclusions.
    callback : callable or None
        ``callback(record, state)`` after each inclusion.
    initial : array of int or None
        Training rows included first, in order (variational EM rebuilds its set at new hyper-parameters so).
    batched : bool
        False scores expensive candidates one at a time (as the 2001-2003 implementations did): the same
        numbers, for timing.
    desc : str
        The progress bar's label.

    Returns
    -------
    Selection

    Examples
    --------
    {toy_selection}
    >>> from sparsegp.selection import greedy_select
    >>> from sparsegp.selection.criteria import InfoGainRule
    >>> selection = greedy_select(InfoGainRule(), kernel, noise, X, y, size=10)
    >>> selection.indices.shape
    (10,)
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    size = _check_schedule(size, candidates, tau)
    rng = np.random.default_rng(random_state)
    # the JAX engine for every kernel: selection scores candidates in matrix-matrix products, where the
    # host engine has nothing to gain, and its scores (and the reproductions) are those of this engine
    oracle = gram(kernel, X, engine="jax")
    state = ActiveSetState(oracle.diag(), y, noise, size)
    size = state.d_max
    dual = DualState(state.diag, y, noise, size) if track_gap else None
    stop = tuple(stop)
    if initial is not None:
        _include_initial(state, oracle, np.asarray(initial, dtype=np.int64), size)
    for r in stop:
        r.start(state, oracle)
    history, reason = [], f"reached size {size}"
    working = np.empty(0, dtype=np.int64) if tau is not None else None
    stopped_by = None
    t0, last = time.perf_counter(), None
    with progress_bar(total=size, desc=desc, verbose=verbose, unit="pt") as bar:
        while state.d < size:
            eligible = np.flatnonzero(state.eligible())
            if eligible.size == 0:
                reason = "no eligible point left (the rest lie in the span of the active set)"
                break
            C, working = _candidate_pool(eligible, candidates, rng, working)
            i, s, j = _include_best(rule, state, oracle, C, rng, batched)
            last = (np.asarray(C).copy(), np.asarray(s, dtype=float).copy())
            if tau is not None:
                working = _selection_index(C, s, j, tau)
            rec = _record(state, i, float(s[j]), t0)
            if dual is not None:
                _advance_dual(dual, rec, oracle, rng, dual_kappa, noise, state.yy)
            history.append(rec)
            bar.update(1)
            if callback is not None:
                callback(rec, state)
            reason, stopped_by = _first_stop(stop, state, rec, reason)
            if stopped_by is not None:
                break
    return _selection(state, oracle, history, reason, stopped_by, dual, t0, last)


def _selection(state, oracle, history, reason, stopped_by, dual, t0, last) -> Selection:
    """The :class:`Selection` of a finished run. A monitoring rule that stopped the run keeps the prefix where
    its curve was best."""
    d_keep = state.d
    if stopped_by is not None and stopped_by.best_size:
        d_keep = stopped_by.best_size
    return Selection(
        indices=state.I[:d_keep].copy(),
        state=state,
        history=history,
        reason=reason,
        dual=dual,
        kernel_evaluations=oracle.evaluations,
        seconds=time.perf_counter() - t0,
        last_candidates=last[0] if last else None,
        last_scores=last[1] if last else None,
    )
