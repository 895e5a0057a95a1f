"""Hyper-parameter fitting by SciPy's L-BFGS-B over a pytree of raw parameters (layer 7).

The objective is any JAX-traceable ``f(params) -> scalar`` to *minimise*
(a negative log marginal likelihood or negative bound, plus negative
log hyper-priors for MAP-II). Its value and gradient come from one jitted
``jax.value_and_grad``; SciPy sees a flat float64 vector of the free entries.
The compiled program is keyed by the objective and the parameters' layout: a hashable objective
that compares by value (:mod:`sparsegp.fitting.negatives`) is traced and compiled once per
shapes in a process, however many fits use it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import jax
import numpy as np
from jax.flatten_util import ravel_pytree

from .._compile import to_device
from ..errors import InputError, NumericalError
from ..progress import progress_bar
from ._lbfgsb import lbfgsb

# Correction pairs kept by L-BFGS. SciPy's default is 10; 30 reached a lower VFE objective in 300
# iterations on every one of four K10 initialisations at the same cost per iteration (BENCHMARKS.md).
LBFGS_MEMORY = 30


@dataclass
class OptimizeReport:
    """What happened during fitting.

    history: objective after each iteration of the best start; objective: the
    final value; reason: the optimiser's stop message; starts: the final
    objective of every start (the first is the given initialisation).
    """

    objective: float
    history: list = field(default_factory=list)
    n_iter: int = 0
    n_evals: int = 0
    success: bool = False
    reason: str = ""
    starts: list = field(default_factory=list)
    best_start: int = 0
    seconds: float = 0.0
    state: Any = None  # the best start's L-BFGS-B state where it stopped at an iterate (:mod:`._lbfgsb`)

    def to_dict(self):
        return {
            "objective": float(self.objective),
            "history": [float(v) for v in self.history],
            "n_iter": int(self.n_iter),
            "n_evals": int(self.n_evals),
            "success": bool(self.success),
            "reason": str(self.reason),
            "starts": [float(v) for v in self.starts],
            "best_start": int(self.best_start),
            "seconds": float(self.seconds),
        }


FTOL = 1e-9  # L-BFGS-B's default stop: a relative decrease of the objective under FTOL
GTOL = 1e-6  # or a projected gradient under GTOL


def _host_flat(tree, dtype=np.float64) -> np.ndarray:
    """``ravel_pytree(tree)[0]`` computed in NumPy: the same entries, and no program compiled for them."""
    leaves = jax.tree_util.tree_leaves(tree)
    return np.concatenate([np.ravel(np.asarray(v, dtype=dtype)) for v in leaves]) if leaves else np.zeros(0, dtype)


def _host_unravel(template):
    """The inverse of :func:`_host_flat` for pytrees shaped like ``template``: NumPy slices, then device arrays."""
    leaves, treedef = jax.tree_util.tree_flatten(template)
    shapes = [np.shape(v) for v in leaves]
    ends = np.cumsum([np.size(v) for v in leaves])[:-1]

    def unravel(x):
        parts = np.split(np.asarray(x, dtype=np.float64), ends)
        return jax.tree_util.tree_unflatten(treedef, [to_device(p.reshape(s)) for p, s in zip(parts, shapes)])

    return unravel


def _unravel_of(params):
    """``ravel_pytree(params)[1]`` (hashable, for the compiled objective), found by tracing rather than running."""
    found = []

    def flat(tree):
        x, unravel = ravel_pytree(tree)
        found.append(unravel)
        return x

    jax.eval_shape(flat, params)
    return found[0]


def _flatten(params, mask, lower, upper):
    """Flat float64 start (clipped to the bounds), its unravel function (on the host), the free mask and the
    bounds."""
    x0 = _host_flat(params)
    free = np.ones_like(x0, dtype=bool) if mask is None else _host_flat(mask, bool)
    lo = np.full_like(x0, -np.inf) if lower is None else _host_flat(lower)
    hi = np.full_like(x0, np.inf) if upper is None else _host_flat(upper)
    if not (free.shape == lo.shape == hi.shape == x0.shape):
        raise InputError("mask / bounds must have the same structure as the parameters")
    return np.clip(x0, lo, hi), _host_unravel(params), free, lo, hi


@partial(jax.jit, static_argnums=(0, 1))
def _flat_value_and_grad(objective, unravel, x, *args):
    """Value and gradient of ``objective(unravel(x), *args)`` (``unravel`` from ``ravel_pytree``: hashable)."""
    return jax.value_and_grad(lambda z: objective(unravel(z), *args))(x)


def flat_value_and_grad(objective, params):
    """``(x, *args) -> (value, flat gradient)`` of ``objective(params, *args)``, compiled once per
    objective and shapes when the objective is hashable (a fresh program per call otherwise)."""
    unravel = _unravel_of(params)
    try:
        hash((objective, unravel))
    except TypeError:
        return jax.jit(jax.value_and_grad(lambda x, *a: objective(unravel(x), *a)))
    return partial(_flat_value_and_grad, objective, unravel)


PROGRESS_WINDOW = 10  # iterations over which ``progress`` is averaged
NOT_FINITE_START = (
    "the objective or its gradient is not finite at the start values (a failed factorisation or an overflow), "
    "so the optimiser cannot start: start from other values (a larger noise or min_noise, length-scales nearer "
    "the inputs' spread, inducing inputs that are not near-duplicates, e.g. a greedy selection)"
)


class Interrupted(KeyboardInterrupt):
    """A KeyboardInterrupt during a run, carrying the best point it had evaluated: ``x`` (flat), ``report`` and, once
    :func:`minimize` has them, ``params``. Callers that can keep a fitted model catch it; others see the interrupt."""

    def __init__(self, x, report, params=None):
        super().__init__("interrupted")
        self.x, self.report, self.params = x, report, params


def _lbfgs_run(evaluate, x_start, free, lo, hi, unravel, options, callback, bar, progress=None, progress_after=0,
               resume=None):  # fmt: skip
    """One L-BFGS-B run from ``x_start`` over its ``free`` entries: (x, f, the run's result, history, evaluations).

    ``progress``: stop, converged, once the objective fell by less than this per iteration on average over the
    last PROGRESS_WINDOW iterations, none of them among the first ``progress_after``. ``resume``: the state of a
    run stopped at an iterate, to go on from where it continues from ``x_start`` (:func:`._lbfgsb.lbfgsb`)."""
    history, state = [], {"evals": 0, "best_f": np.inf, "best_z": None, "slow": False}

    def fun(z):
        x = x_start.copy()
        x[free] = z
        f, g = evaluate(to_device(x))
        f = float(f)
        g = np.asarray(g, dtype=np.float64)[free]
        state["evals"] += 1
        if not (np.isfinite(f) and np.all(np.isfinite(g))):
            if state["evals"] == 1:  # nowhere to back off to: a run from here would stop at once, "converged"
                raise NumericalError(NOT_FINITE_START)
            # A failed factorisation or overflow: report a large value so the line
            # search backs off rather than stopping the run.
            base = state["best_f"] if np.isfinite(state["best_f"]) else 0.0
            return base + 1e10 * (1.0 + abs(base)), np.zeros_like(z)
        if f < state["best_f"]:  # kept for an interrupt: the best point evaluated so far
            state["best_f"], state["best_z"] = f, np.array(z, copy=True)
        return f, g

    def cb(z, f) -> bool:  # True: stop
        history.append(f)
        bar.update(1)
        bar.set_postfix(objective=f"{f:.6g}")
        if callback is not None:
            x = x_start.copy()
            x[free] = z
            if callback(len(history), f, unravel(x)):
                return True
        w = PROGRESS_WINDOW
        if progress is not None and len(history) > w + progress_after and history[-w - 1] - history[-1] < progress * w:
            state["slow"] = True
            return True
        return False

    def run(z, maxiter, resume=None):
        return lbfgsb(fun, z, lo[free], hi[free], **dict(options, maxiter=maxiter), callback=cb, resume=resume)

    try:
        res = run(x_start[free], options["maxiter"], resume)
        res = _after_line_search_failures(run, res, options)
    except KeyboardInterrupt:
        x = x_start.copy()
        if state["best_z"] is not None:
            x[free] = state["best_z"]
        report = OptimizeReport(objective=state["best_f"], history=history, n_iter=len(history), n_evals=state["evals"])
        raise Interrupted(x, report) from None
    if state["slow"]:
        res.success = True
        res.message = f"progress below tol: the objective fell by less than {progress:.3g} per iteration"
    x = x_start.copy()
    x[free] = res.x
    return x, float(res.fun), res, history, state["evals"]


def _one_start(evaluate, xs, free, lo, hi, unravel, options, callback, bar, progress, r: int, progress_after=0,
               resume=None):  # fmt: skip
    """:func:`_lbfgs_run` from ``xs`` (the value alone where nothing is free); a random restart (``r`` > 0) from
    where the objective is not finite counts as a start that ended at +inf."""
    if not free.any():
        return xs, float(evaluate(to_device(xs))[0]), None, [], 1
    try:
        return _lbfgs_run(evaluate, xs, free, lo, hi, unravel, options, callback, bar, progress, progress_after, resume)
    except NumericalError:
        if r == 0:
            raise
        return xs, np.inf, None, [], 1


LINE_SEARCH_RESTARTS = 2


def _after_line_search_failures(run, res, options):
    """Go on from a failed line search ("ABNORMAL") with a fresh L-BFGS-B memory, at most LINE_SEARCH_RESTARTS times.

    The line search fails where the stored curvature pairs no longer describe the objective, which rounding
    alone can cause close to an optimum (it changed with the BLAS threads in one test). A fresh start from the
    same point either goes on, or makes no relative progress above ``ftol``: then, if the run took a step at
    all, the point is as converged as L-BFGS-B can make it, and the run counts as converged."""
    for _ in range(LINE_SEARCH_RESTARTS):
        left = options["maxiter"] - int(res.nit)
        if "ABNORMAL" not in str(res.message) or left <= 0:
            break
        again = run(res.x, left)
        again.nit = int(again.nit) + int(res.nit)
        stalled = res.fun - again.fun <= options["ftol"] * max(abs(res.fun), abs(again.fun), 1.0)
        if again.fun > res.fun:  # never hand back a worse point than the one the line search failed at
            again.x, again.fun = res.x, res.fun
        res = again
        if stalled and res.nit > 0:  # a line search that fails before any step stays a failure
            res.success = True
            res.message = "converged: a fresh start after a failed line search made no relative progress above ftol"
            break
    return res


def minimize(
    objective,
    params,
    *,
    args=(),
    mask=None,
    lower=None,
    upper=None,
    max_iter: int = 500,
    n_restarts: int = 0,
    restart_scale: float = 1.0,
    rng: np.random.Generator | None = None,
    tol: float = FTOL,
    memory: int = LBFGS_MEMORY,
    verbose: bool = False,
    callback=None,
    desc: str = "L-BFGS-B",
    value_and_grad=None,
    progress: float | None = None,
    progress_after: int = 0,
    resume=None,
):
    """Minimise ``objective(params, *args)`` over the entries of ``params`` where ``mask`` is True.

    ``args`` (the data arrays) are passed to the jitted function as arguments
    rather than closed over, so large arrays are not baked into the compiled code.
    ``value_and_grad(params) -> (value, gradient pytree)``, when given, replaces the jitted
    ``jax.value_and_grad(objective)`` (a host-side evaluation such as
    :class:`~sparsegp.approximations.host_objective.HostObjective`); ``objective`` and ``args`` are then unused.

    ``lower`` / ``upper``: pytrees like ``params`` of bounds on the raw values
    (``-inf``/``inf`` for none). Restarts perturb the free raw entries of the
    initial point by N(0, restart_scale^2) and keep the best result.
    ``callback(iteration, value, params)`` runs after each iteration; returning
    True stops the optimisation. ``progress``: a run has converged once the objective falls by less than this
    per iteration, averaged over the last PROGRESS_WINDOW iterations, judged only after the first ``progress_after``
    iterations (a run that starts without curvature pairs first takes short steps). ``resume``: the ``state`` of
    an earlier report whose run stopped at ``params`` (its ``max_iter``): the first start goes on from it, where
    the objective is the one that run minimised (:func:`._lbfgsb.lbfgsb`). Returns ``(best_params, OptimizeReport)``.
    """
    x0, unravel, free, lo, hi = _flatten(params, mask, lower, upper)
    rng = np.random.default_rng(rng)

    if value_and_grad is None:
        vg = flat_value_and_grad(objective, params)

        def evaluate(x):
            return vg(x, *args)
    else:

        def evaluate(x):
            f, g = value_and_grad(unravel(x))
            return f, _host_flat(g)

    start = time.perf_counter()
    options = {"maxiter": max_iter, "ftol": tol, "gtol": GTOL, "maxcor": memory}
    results: list[tuple] = []
    with progress_bar(total=max_iter * (n_restarts + 1), desc=desc, verbose=verbose) as bar:
        try:
            for r in range(n_restarts + 1):
                xs = x0.copy()
                if r > 0:
                    xs[free] = np.clip(
                        xs[free] + restart_scale * rng.standard_normal(int(free.sum())), lo[free], hi[free]
                    )
                go_on = resume if r == 0 else None
                results.append(
                    _one_start(
                        evaluate, xs, free, lo, hi, unravel, options, callback, bar, progress, r, progress_after, go_on
                    )
                )
        except Interrupted as stop:
            raise _best_when_interrupted(stop, results, x0, unravel, start) from None
    finite = [i for i, r in enumerate(results) if np.isfinite(r[1])]
    best = min(finite, key=lambda i: results[i][1]) if finite else 0
    x, f, res, history, n_evals = results[best]
    report = OptimizeReport(
        objective=f,
        history=history,
        n_iter=int(res.nit) if res is not None else 0,
        n_evals=sum(r[4] for r in results),
        success=bool(res.success) if res is not None else True,
        reason=str(res.message) if res is not None else "no free parameters",
        starts=[r[1] for r in results],
        best_start=best,
        seconds=time.perf_counter() - start,
        state=getattr(res, "state", None),
    )
    return unravel(x), report


def _best_when_interrupted(stop: Interrupted, results, x0, unravel, start: float) -> Interrupted:
    """The interrupt with the best point of the finished starts and the interrupted one (``x0`` where none was
    evaluated), as ``params``, and its report."""
    points = [(r[1], r[0]) for r in results if np.isfinite(r[1])] + [(stop.report.objective, stop.x)]
    objective, x = min(points, key=lambda p: p[0])
    stop.report.objective = objective
    stop.report.n_iter += sum(0 if r[2] is None else int(r[2].nit) for r in results)
    stop.report.reason = "interrupted (KeyboardInterrupt): the best point evaluated so far"
    stop.report.seconds = time.perf_counter() - start
    stop.params = unravel(x if np.isfinite(objective) else x0)
    return stop


def _lbfgs_direction(g_free, held, S, Y):
    """d = -H g over the free variables by the two-loop recursion on the stored pairs (s, y)."""
    q, alphas = g_free.copy(), []
    pairs = [(np.where(held, 0.0, s), np.where(held, 0.0, yv)) for s, yv in zip(S, Y)]
    pairs = [(s, yv) for s, yv in pairs if s @ yv > 0]
    for s, yv in reversed(pairs):
        a = (s @ q) / (yv @ s)
        alphas.append(a)
        q -= a * yv
    q *= (
        (pairs[-1][0] @ pairs[-1][1]) / (pairs[-1][1] @ pairs[-1][1])
        if pairs
        else 1.0 / max(1.0, float(np.linalg.norm(g_free)))
    )
    for (s, yv), a in zip(pairs, reversed(alphas)):
        q += s * (a - (yv @ q) / (yv @ s))
    return np.where(held, 0.0, -q)


def _armijo(fg, x, f, g, d, lo, hi, tries: int = 40):
    """Backtracking along ``d`` from ``x`` (projected on the bounds) to sufficient decrease:
    (x_new, f_new, g_new, accepted)."""
    t, accepted = 1.0, False
    for _ in range(tries):
        xn = np.clip(x + t * d, lo, hi)
        fn, gn = fg(xn)
        if np.isfinite(fn) and fn <= f + 1e-4 * (g @ (xn - x)):
            accepted = True
            break
        t *= 0.5
    return xn, fn, gn, accepted


def minimize_reselecting(
    objective,
    params,
    reselect,
    *,
    args=(),
    mask=None,
    lower=None,
    upper=None,
    max_iter: int = 200,
    memory: int = 10,
    tol: float = FTOL,
    gtol: float = GTOL,
    verbose: bool = False,
    desc: str = "L-BFGS (re-selecting)",
):
    """L-BFGS whose objective depends on a set re-chosen at every new search direction.

    Seeger et al. (2003) sec. 2.3: ``reselect(params) -> Z`` picks the active set at the current
    point; ``objective(params, Z, *args)`` is evaluated with it for the gradient that defines the new
    direction and held fixed during the backtracking (Armijo) line search, so each line search sees
    one smooth function. The curvature pair (s, y) uses gradients under the same set. Bounds are
    enforced by projection. Returns ``(params, OptimizeReport)``; ``history`` holds the objective at
    each iterate under its freshly selected set.
    """
    x, unravel, free, lo, hi = _flatten(params, mask, lower, upper)
    vg = flat_value_and_grad(objective, params)
    n_evals = 0

    def fg(z, Z):
        nonlocal n_evals
        n_evals += 1
        f, g = vg(to_device(z), Z, *args)
        f, g = float(f), np.asarray(g, dtype=np.float64) * free
        if not (np.isfinite(f) and np.all(np.isfinite(g))):
            return np.inf, g
        return f, g

    S: list[np.ndarray] = []
    Y: list[np.ndarray] = []
    history, reason, start = [], f"reached max_iter={max_iter}", time.perf_counter()
    with progress_bar(total=max_iter, desc=desc, verbose=verbose) as bar:
        for k in range(max_iter):
            Z = reselect(unravel(x))
            f, g = fg(x, Z)
            history.append(f)
            if not np.isfinite(f):
                reason = "the objective is not finite at the current point"
                break
            # A variable on a bound whose gradient pushes it outwards stays there: the direction is built from
            # the other variables alone (else the clipped step can go uphill in them and the search stalls).
            held = ((x <= lo) & (g > 0)) | ((x >= hi) & (g < 0))
            g_free = np.where(held, 0.0, g)
            if np.max(np.abs(g_free)) < gtol:
                reason = "projected gradient below gtol"
                break
            d = _lbfgs_direction(g_free, held, S, Y)
            if g_free @ d >= 0:  # not a descent direction under the new set: restart the memory
                S, Y, d = [], [], -g_free / max(1.0, np.linalg.norm(g_free))
            xn, fn, gn, accepted = _armijo(partial(fg, Z=Z), x, f, g, d, lo, hi)
            bar.update(1)
            bar.set_postfix(objective=f"{f:.6g}")
            if not accepted:
                reason = "line search failed to decrease the objective"
                break
            s, yv = xn - x, gn - g
            if s @ yv > 1e-10 * np.linalg.norm(s) * np.linalg.norm(yv):
                S, Y = (S + [s])[-memory:], (Y + [yv])[-memory:]
            x = xn
            if f - fn <= tol * max(1.0, abs(f)) and k > 0:
                history.append(fn)
                reason = "relative decrease below tol"
                break
    return unravel(x), _history_report(history, n_evals, reason, start)


def _history_report(history, n_evals: int, reason: str, start: float) -> OptimizeReport:
    """The report of a run that records the objective at each iterate in ``history``."""
    return OptimizeReport(
        objective=float(history[-1]) if history else np.inf,
        history=history,
        n_iter=len(history),
        n_evals=n_evals,
        success=reason != "line search failed to decrease the objective",
        reason=reason,
        starts=[float(history[-1])] if history else [],
        seconds=time.perf_counter() - start,
    )


def alternate(select, fit, value, params, idx, *, n_rounds: int, em: bool, m_final: int):
    """``n_rounds`` of selection at the current hyper-parameters, then the hyper-parameters with that set fixed.

    Quiñonero-Candela & Rasmussen's (2005) HPEV alternation (``em=False``: each round re-selects the
    whole set) or Titsias's (2009) variational EM (``em=True``: the E-step keeps the set and greedily adds
    the next share of ``m_final``, so the bound never decreases). Round 1 fits at the given ``idx``.
    ``select(params, size, initial) -> idx``; ``fit(params, idx, round) -> (params, report)``;
    ``value(params, idx) -> objective``. Returns ``(params, idx, rounds, reports)``, ``rounds`` one record
    per round: its set size and the objective after the selection and after the hyper-parameters.
    """
    rounds, reports = [], []
    for r in range(n_rounds):
        if r > 0:
            if em:
                idx = select(params, min(m_final, int(np.ceil(m_final * (r + 1) / n_rounds))), idx)
            else:
                idx = select(params, None, None)
        after_select = value(params, idx)
        params, report = fit(params, idx, r)
        reports.append(report)
        rounds.append(
            {
                "round": r + 1,
                "size": int(len(idx)),
                "after_selection": after_select,
                "after_hyperparameters": value(params, idx),
            }
        )
    return params, idx, rounds, reports
