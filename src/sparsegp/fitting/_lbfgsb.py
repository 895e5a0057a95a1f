"""L-BFGS-B driven iteration by iteration, so that a run stopped at an iterate can go on from there exactly.

SciPy's ``minimize(method="L-BFGS-B")`` drives the reverse-communication routine ``setulb`` in a loop and keeps
the whole optimiser (the iterate, the limited-memory matrices, the line search) in the work arrays it passes; a
run it stops at ``maxiter`` is gone once it returns. :func:`lbfgsb` is the same loop, call for call (the same
iterates, stops and messages as ``minimize``, checked in the tests), that also hands back those arrays as
they were at the last iterate when a run stops there (``maxiter`` or the callback): :class:`LBFGSBState`. A run
from such a state (``resume``) is the stopped run going on, so k iterations and k more are 2k iterations of one
run, which a fresh start from the same point is not: it has no curvature pairs and takes short steps first.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.optimize import OptimizeResult, _lbfgsb  # _lbfgsb: the routine SciPy's own L-BFGS-B drives
from scipy.optimize._lbfgsb_py import status_messages, task_messages

NEW_X, FG, STOP = 1, 3, 5  # setulb's tasks: a new iterate, evaluate f and g there, stop (with a reason code)
STOPPED_AT_MAXITER, STOPPED_BY_CALLBACK, STOPPED_AT_MAXFUN = 504, 505, 502


class LBFGSBState(NamedTuple):
    """An L-BFGS-B run at an iterate: ``x``, ``f``, ``g`` there and setulb's work arrays (``arrays``: wa, iwa,
    task, lsave, isave, dsave, ln_task), with the memory ``maxcor`` and the bounds they were made for."""

    x: np.ndarray
    f: float
    g: np.ndarray
    arrays: tuple
    maxcor: int
    lower: np.ndarray
    upper: np.ndarray

    def continues(self, x, lower, upper, maxcor: int) -> bool:
        """Whether a run from ``x`` with these bounds and memory can go on from this state: the same number of
        variables, bounds and memory, and ``x`` the state's iterate up to rounding (1e-12 relative)."""
        return (
            self.x.shape == np.shape(x)
            and self.maxcor == maxcor
            and np.array_equal(self.lower, lower)
            and np.array_equal(self.upper, upper)
            and bool(np.all(np.abs(self.x - x) <= 1e-12 * np.maximum(1.0, np.abs(self.x))))
        )

    def describes(self, f: float, g) -> bool:
        """Whether ``f`` and ``g``, the objective evaluated at ``x`` now, are the state's up to rounding: the
        objective is the one the run was minimising (not, say, the same parameters over other rows)."""
        scale = max(1.0, abs(self.f))
        return bool(abs(f - self.f) <= 1e-9 * scale and np.all(np.abs(np.asarray(g) - self.g) <= 1e-9 * scale))


def _bound_kinds(lower, upper) -> np.ndarray:
    """setulb's ``nbd``: 0 unbounded, 1 lower only, 2 both, 3 upper only."""
    has_lo, has_hi = np.isfinite(lower), np.isfinite(upper)
    return np.where(has_lo & has_hi, 2, np.where(has_lo, 1, np.where(has_hi, 3, 0))).astype(np.int32)


def _fresh(x, maxcor: int):
    n = x.size
    wa = np.zeros(2 * maxcor * n + 5 * n + 11 * maxcor * maxcor + 8 * maxcor, np.float64)
    ints = (np.zeros(3 * n, np.int32), np.zeros(2, np.int32), np.zeros(4, np.int32), np.zeros(44, np.int32))
    return (wa, *ints, np.zeros(29, np.float64), np.zeros(2, np.int32))


def lbfgsb(fun, x0, lower, upper, *, maxiter: int, maxcor: int, ftol: float, gtol: float, callback=None,
           resume: LBFGSBState | None = None, maxls: int = 20, maxfun: int = 15000) -> OptimizeResult:  # fmt: skip
    """Minimise ``fun(x) -> (f, g)`` from ``x0`` within [``lower``, ``upper``] (infinite: none) as SciPy's
    L-BFGS-B with these options. ``callback(x, f)`` after each iteration; True stops the run. ``resume``: a state
    (``result.state`` of a run stopped at an iterate) to go on from, used where it :meth:`~LBFGSBState.continues`
    from ``x0`` and :meth:`~LBFGSBState.describes` ``fun`` there (one evaluation); else a fresh run from ``x0``.
    Returns SciPy's result fields (x, fun, jac, nit, nfev, message, success, status) and ``state`` (None unless
    the run stopped at an iterate)."""
    lower, upper = np.asarray(lower, np.float64), np.asarray(upper, np.float64)
    x = np.clip(np.array(x0, dtype=np.float64).ravel(), lower, upper)
    f, g, arrays, nfev = 0.0, np.zeros(x.size), _fresh(x, maxcor), 0
    if resume is not None and resume.continues(x, lower, upper, maxcor):
        f_now, g_now = fun(resume.x.copy())
        nfev += 1
        if resume.describes(float(f_now), g_now):  # the state's own values: the run goes on bit for bit
            x, f, g, arrays = resume.x.copy(), resume.f, resume.g.copy(), tuple(a.copy() for a in resume.arrays)
    wa, iwa, task, lsave, isave, dsave, ln_task = arrays
    nbd = _bound_kinds(lower, upper)
    low, high = np.where(np.isfinite(lower), lower, 0.0), np.where(np.isfinite(upper), upper, 0.0)
    factr, nit, state = ftol / np.finfo(float).eps, 0, None
    while True:
        g = np.asarray(g, dtype=np.float64)
        _lbfgsb.setulb(maxcor, x, low, high, nbd, f, g, factr, gtol, wa, iwa, task, lsave, isave, dsave, maxls, ln_task)
        if task[0] == FG:
            f, g = fun(x.copy())
            f, nfev = float(f), nfev + 1
        elif task[0] == NEW_X:
            nit += 1
            stop = STOPPED_BY_CALLBACK if callback is not None and callback(x.copy(), f) else None
            if nit >= maxiter:
                stop = STOPPED_AT_MAXITER
            elif nfev > maxfun:
                stop = STOPPED_AT_MAXFUN
            if stop is not None:
                if stop != STOPPED_AT_MAXFUN:  # the run as it stands at this iterate, to go on from
                    kept = tuple(a.copy() for a in (wa, iwa, task, lsave, isave, dsave, ln_task))
                    state = LBFGSBState(x.copy(), f, g.copy(), kept, maxcor, lower, upper)
                task[0], task[1] = STOP, stop
        else:
            break
    status = 0 if task[0] == 4 else (1 if nfev > maxfun or nit >= maxiter else 2)
    message = status_messages[task[0]] + ": " + task_messages[task[1]]
    return OptimizeResult(x=x, fun=f, jac=g, nit=nit, nfev=nfev, status=status, success=status == 0,
                          message=message, state=state)  # fmt: skip


__all__ = ["LBFGSBState", "lbfgsb"]
