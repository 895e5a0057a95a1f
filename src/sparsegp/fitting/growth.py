"""``inducing="auto"``: the fit chooses m, growing the inducing set until more points would not pay.

The schedule (one function, :func:`grow`, on any backend), from the kernel and noise of the exact GP on a
subset (:mod:`.pretrain`):

0. where there are at most ``max_inducing`` distinct training inputs (under ``max_inducing=None``, also where the
   exact GP on them costs less per evaluation than the sparse objective at the device's cap:
   :func:`exact_costs_less`), Z is all of them, held: Z = X maximises the bound over Z, and there VFE, DTC, SoR
   and FITC are the exact GP (Q_ff = K_ff), so the stage fits the exact log p(y)
   (:class:`~.negatives.ExactNegative`); its certificate's gap is zero up to the jitter and the growth stops;
1. m = START_M distinct training inputs at random, or ``max_inducing`` where every doubling up to it, chosen as
   in step 4, raises F_V at the start's values by at least GAIN_PER_ROW nats per row (:func:`climb`: the growth
   would end at the cap, and the sizes below would only be passed through); the kernel, noise and inducing
   inputs fitted jointly (what ``optimize`` names) until the objective rises by less than LOOSE * ``tol`` nats
   per training row per iteration, averaged over ten iterations (``max_iter`` is a safety cap). At
   ``max_inducing``, wherever step 3 or 4 would stop, and where twice the inducing inputs promise less than
   GAIN_PER_ROW nats per row, the size is fitted on to ``tol`` and the rules asked again: the model returned is
   converged, the sizes passed through are not (the time to quality is in the sizes passed). Whether the set
   grows is decided by the loose fit's promise;
2. the certificate at the fitted values (:mod:`sparsegp.approximations.certificate`: F_V <= log p(y) <= U);
3. stop when the gap U - F_V is at most GAP_PER_ROW nats per row; when the last doubling of m, both sizes
   fitted, raised the objective by less than GAIN_PER_ROW nats per row (the gain of the bound per added batch,
   as in Pescador-Barrios, Filippi & van der Wilk 2025); at ``max_inducing`` or every distinct input; or after
   ``time_budget`` seconds;
4. otherwise double m: the fitted inducing inputs are kept and as many training rows added, chosen by greedy
   conditional variance given them at the fitted kernel (:mod:`sparsegp.selection.extend`). If they raise F_V
   at the fitted values by less than START_GAIN_PER_ROW nats per row, stop (a fit from there is not worth
   its cost); else fit again from the fitted values (step 1).

The model is the last size fitted. Why joint fits rather than greedy sets at fixed hyper-parameters, why the
first size, the climb, the fitted values carried from size to size and the rules' thresholds: the measurements
are in BENCHMARKS.md, "Choosing m".

For DTC, FITC and SoR the same growth runs on their own objective, and the gain rule reads their objective;
the certificate is VFE's at their fitted values, so "gap" there says how close VFE's posterior at those values
is to the exact GP's, not their own; the climb and the doubling's promise read VFE's F_V as well.
"""

from __future__ import annotations

import time
import warnings
from enum import Enum
from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np

from .._config import accelerator_memory
from ..approximations.certificate import Certificate, certify
from ..approximations.exact_gp import exact_log_marginal
from ..approximations.exact_host import host_log_marginal, on_host
from ..approximations.host_objective import HostObjective
from ..errors import InducingWarning, NumericalError
from ..kernels.distance import narrow
from ..selection.extend import extend_conditional_variance
from ..transforms import to_positive
from .config import SparseConfig
from .hyper import noise_value, optimise
from .training import Interrupted

START_M = 256
GAP_PER_ROW = 0.01  # nats per training row: U - F_V below this bounds KL(q || posterior) per row
GAIN_PER_ROW = 0.01  # nats per training row gained by the last doubling of m, both sizes fitted
START_GAIN_PER_ROW = 0.001  # nats per row that twice the inputs must add at the fitted values to be fitted
TOL = 1e-4  # the default ``tol``: nats per training row per iteration
LOOSE = 10.0  # a size that may not be the last stops at LOOSE * tol; the last is converged to tol
CANDIDATES = 20_000  # rows scored when the set grows: O(CANDIDATES m) memory
CPU_MAX_INDUCING = 1024  # ``max_inducing=None`` on a CPU
ACCELERATOR_FLOPS = 2e13  # the most an evaluation may cost (2 n m^2) under ``max_inducing=None`` on an accelerator
ACCELERATOR_COPIES = 16  # m x m float64 arrays an evaluation may hold at once, with room to spare


def tol_per_row(config: SparseConfig) -> float:
    """``tol``, or TOL where it is None: nats per training row per iteration."""
    return TOL if config.tol is None else float(config.tol)


def max_inducing(config: SparseConfig, n: int) -> int:
    """The largest m of the growth: ``max_inducing``, or for None the device's. On a CPU, CPU_MAX_INDUCING; on
    an accelerator, the largest power of two (at least CPU_MAX_INDUCING) whose evaluation costs at most
    ACCELERATOR_FLOPS and whose ACCELERATOR_COPIES m x m arrays fit in the memory JAX may use there, so that
    data with up to about ten thousand distinct inputs get the exact GP (BENCHMARKS.md, "The default fit on
    the GPU")."""
    if config.max_inducing is not None:
        return int(config.max_inducing)
    return device_max_inducing(n)


def device_max_inducing(n: int) -> int:
    """:func:`max_inducing` for ``max_inducing=None``: the device's largest m for n rows."""
    memory = accelerator_memory()
    if memory is None:
        return CPU_MAX_INDUCING
    m = CPU_MAX_INDUCING
    while 2 * n * (2 * m) ** 2 <= ACCELERATOR_FLOPS and ACCELERATOR_COPIES * 8 * (2 * m) ** 2 <= memory:
        m *= 2
    return m


def exact_costs_less(config: SparseConfig, distinct: int, cap: int) -> bool:
    """Under ``max_inducing=None``, whether the exact GP on the ``distinct`` inputs costs no more per evaluation
    (about 4/3 d^3 flops: the Cholesky of K + sigma^2 I and the inverse its gradient reads) than the sparse
    objective at the device's ``cap`` (about 6 d m^2: the bound's 2 d m^2 and its gradient), i.e. d <= 2.12 m.
    The fit is then the exact GP (step 0 of the module docstring), without the sizes below the cap: in memory
    its own objective, on a cluster VFE at Z = every input (the same model, as at most ``max_inducing`` inputs)."""
    return config.max_inducing is None and 2 * distinct**2 <= 9 * cap**2


class Step(NamedTuple):
    """One size of the growth: m, the fitted objective, the certificate's bounds, L-BFGS iterations, seconds."""

    m: int
    objective: float
    lower: float
    upper: float
    n_iter: int
    seconds: float
    start: float  # F_V before the fit at this size (at the last size's fitted values, the new inputs added)
    next_start: float  # F_V with twice the inducing inputs at this size's fitted values (NaN: not tried)


class Grown(NamedTuple):
    """What :func:`grow` fitted: scaled ``params`` (with Z when the inputs move), the final inducing inputs
    (scaled) and their training rows when they are rows, the last optimiser report, the iterations of all
    stages, the path and why it stopped."""

    params: Any
    Z: np.ndarray
    idx: np.ndarray | None
    report: Any
    n_iter: int
    path: list
    stop_reason: str
    exact: bool = False  # the last stage fitted the exact log p(y): Z is every training input, rows in memory
    still_gaining: tuple | None = None  # :func:`still_gaining`: the fit warns once its certificate is made


def certificate(config: SparseConfig, data, params, Z, chunk: int, exact: bool = False) -> Certificate:
    """F_V and U at the scaled kernel and noise of ``params`` and inducing inputs ``Z`` (scaled): in memory,
    or from the backend's host sums. ``exact``: Z is every training input, rows in memory, where F_V = log p(y) = U;
    both are then the exact GP's log p(y), which keeps its digits where the sparse algebra at Z = X loses them
    (the noise at its floor)."""
    s = config.input_scale
    rows = data.rows(s)
    if exact and rows is not None:
        kernel, noise = params["kernel"], noise_value(params["raw_noise"])
        if on_host(kernel, noise, rows.X, rows.counts, rows.known):
            value = host_log_marginal(kernel, noise, rows.X, rows.y)
        else:
            X, y = jnp.asarray(rows.X), jnp.asarray(rows.y)
            value = exact_log_marginal(kernel, to_positive(params["raw_noise"]), X, y, **rows.weights())
        return Certificate(float(value), float(value), "exact", detail="Z = every training input: log p(y) itself")
    if rows is None:
        host = HostObjective(config.approximation, data=data.host_sums(s, chunk), jitter=float(config.jitter))
        return host.certificate(dict(params, Z=jnp.asarray(Z)))
    noise = noise_value(params["raw_noise"])
    X, y = jnp.asarray(rows.X), jnp.asarray(rows.y)
    return certify(
        params["kernel"], jnp.asarray(Z), noise, X, y, chunk=chunk, jitter=float(config.jitter), **rows.weights()
    )


def candidates(data, rng):
    """(inputs, their training rows or None): the rows new inducing inputs are chosen from, at most CANDIDATES
    of the backend's start sample (one row per distinct input where inputs repeat)."""
    X, _, rows = data.start_sample(rng)
    pick = np.arange(X.shape[0]) if data.first is None else data.first
    if pick.size > CANDIDATES:
        pick = np.sort(rng.choice(pick, size=CANDIDATES, replace=False))
    if pick.size == X.shape[0]:
        return X, rows
    return X[pick], (pick if rows is None else rows[pick])


def added_too_little(step: Step, n: int) -> str | None:
    """Why doubling m is not worth a fit: the new inducing inputs, at the fitted values, raise F_V by less than
    START_GAIN_PER_ROW nats per row, or F_V with them is not finite."""
    if not np.isfinite(step.next_start):
        return (
            f"factorisation: F_V with twice the inducing inputs is not finite at m = {step.m} (their K_uu cannot be "
            "factorised at the jitter: near-duplicate inputs at the fitted length-scales); the fit stays at this m"
        )
    gain = (step.next_start - step.lower) / n
    if gain < START_GAIN_PER_ROW:
        return (
            f"gain: twice the inducing inputs would raise F_V by {gain:.3g} nats per row "
            f"(< {START_GAIN_PER_ROW:g}) at m = {step.m}"
        )
    return None


def promises_little(step: Step, n: int) -> bool:
    """Whether twice the inducing inputs, at the fitted values, raise F_V by less than GAIN_PER_ROW per row: the
    size is then likely the last the gain rule keeps, so it is converged before the set grows."""
    return bool((step.next_start - step.lower) / n < GAIN_PER_ROW)


def last_gain(path: list[Step], n: int) -> float | None:
    """What the last doubling of m raised the objective by, both sizes fitted, in nats per row (None before one)."""
    return (path[-1].objective - path[-2].objective) / n if len(path) > 1 else None


def stop_reason(
    path: list[Step],
    n: int,
    m_cap: int,
    cap_name: str,
    over_time: bool,
    climbed: float | None = None,
    *,
    gain_per_row: float | None = None,
    decline: bool = False,
) -> str | None:
    """Why the growth stops after the last step of ``path`` (step 3 of the module docstring), or None: the rule
    set of every growth of m (the regressors' and the variational fit's). ``climbed``: what the last doubling of
    the first climb promised, nats per row (step 1), if it climbed. ``gain_per_row``: the gain rule's threshold
    (None: the regressors' GAIN_PER_ROW; the variational fit's ``tol``). ``decline``: also stop where the gains'
    decline (the last gain times its ratio to the one before) says the next doubling would gain less than that.
    The gap rule needs a certificate (``upper`` finite); without one it never fires."""
    last = path[-1]
    gain_per_row = GAIN_PER_ROW if gain_per_row is None else gain_per_row
    gap = last.upper - last.lower
    if Certificate(last.lower, last.upper).sound and gap <= GAP_PER_ROW * n:
        return f"gap: U - F_V = {gap:.4g} nats, at most {GAP_PER_ROW:g} per row, at m = {last.m}"
    gain = last_gain(path, n)
    if gain is not None and gain <= gain_per_row:
        return f"gain: m {path[-2].m} -> {last.m} raised the objective by {gain:.3g} nats per row (< {gain_per_row:g})"
    before = (path[-2].objective - path[-3].objective) / n if len(path) > 2 else None
    if (
        decline
        and gain is not None
        and before is not None
        and 0 < gain < before
        and gain * gain / before < gain_per_row
    ):
        return (
            f"gain: m {path[-2].m} -> {last.m} raised the objective by {gain:.3g} nats per row, the doubling before by "
            f"{before:.3g}; at that rate of decline the next would add {gain * gain / before:.2g} (< {gain_per_row:g})"
        )
    if last.m >= m_cap:
        if gain is not None:  # a cap, not the gain rule: say what the last doubling still gained
            return f"{cap_name}: m = {last.m}; the last doubling still raised the objective by {gain:.3g} nats per row"
        if climbed is not None:
            return f"{cap_name}: m = {last.m}; the doubling to it promised {climbed:.3g} nats per row at the start"
        return f"{cap_name}: m = {last.m}"
    if over_time:
        return f"time_budget: stopped at m = {last.m}"
    return None


def still_gaining(path: list[Step], reason: str, n: int, climbed: float | None = None) -> tuple | None:
    """(what the last doubling did, its gain in nats per row) where the growth stopped at ``max_inducing`` while
    the last doubling still gained (or, where it climbed there at the start, still promised to); else None."""
    gain = last_gain(path, n)
    said = "raised the objective by" if gain is not None else "promised, at the start's values,"
    gain = climbed if gain is None else gain
    return (said, gain) if reason.startswith("max_inducing") and gain is not None else None


def warn_at_cap(m: int, still: tuple, gap_per_row: float, stacklevel: int) -> None:
    """An InducingWarning where the growth stopped at ``max_inducing`` = m while still gaining (``still`` from
    :func:`still_gaining`), quoting the fitted model's certified gap."""
    said, gain = still
    warnings.warn(
        f"the inducing set stopped at max_inducing = {m} while still gaining: the last doubling "
        f"{said} {gain:.3g} nats per training row (the growth stops below {GAIN_PER_ROW:g}), "
        f"and the certified gap is {gap_per_row:.3g} nats per row. A larger max_inducing would likely fit better, "
        "memory and time permitting.",
        InducingWarning,
        stacklevel=stacklevel + 1,
    )


def path_records(path: list[Step]) -> list[dict]:
    """The growth's steps as records (``inducing_path_``)."""
    return [{k: (int(v) if k in ("m", "n_iter") else float(v)) for k, v in st._asdict().items()} for st in path]


def _doubled(config: SparseConfig, data, params, Z, idx, Xc, rows_c, size: int):
    """Step 4's larger set: (inputs, their training rows or None, F_V with them at the fitted values; NaN where
    their K_uu cannot be factorised), or (None, None, NaN) where no candidate has residual variance left."""
    add = extend_conditional_variance(params["kernel"], Z, Xc, size - Z.shape[0], float(config.jitter))
    if add.size == 0:
        return None, None, float("nan")
    bigger = np.concatenate([Z, Xc[add]])
    bigger_idx = None if idx is None else np.concatenate([idx, add if rows_c is None else rows_c[add]])
    try:
        start = certificate(config, data, params, bigger, data.chunk(bigger.shape[0], config.chunk_size)).lower
    except NumericalError:  # on a backend's host sums a failed factorisation raises
        start = float("nan")
    return bigger, bigger_idx, start


def climb(config: SparseConfig, data, params, Z, idx, Xc, rows_c, m_cap: int, lower: float):
    """Step 1's climb from the first inducing inputs ``Z`` (F_V ``lower`` there at ``params``): where every
    doubling of the set up to ``m_cap`` raises F_V at these values by at least GAIN_PER_ROW nats per row, the
    growth would not stop below the cap, and the sizes below it would only be passed through: the first fit is
    at the cap. The ladder is built up to the first doubling that pays less: a ladder that fails costs the greedy
    extensions and bounds up to that size (where the rows are not in memory each bound is one pass over them;
    BENCHMARKS.md, "The first fit at the cap"), and one that succeeds makes the selections the growth would
    have made on its way. Returns (inputs, their rows, F_V there, the last doubling's gain per row)
    at the cap, or the given inputs and None."""
    n, at, gain = int(data.moments.n), (Z, idx, lower), None
    while Z.shape[0] < m_cap:
        bigger, bigger_idx, up = _doubled(config, data, params, Z, idx, Xc, rows_c, min(2 * Z.shape[0], m_cap))
        if bigger is None or not np.isfinite(up) or up - lower < GAIN_PER_ROW * n:
            return (*at, None)
        Z, idx, gain, lower = bigger, bigger_idx, (up - lower) / n, up
    return Z, idx, lower, gain


def largest_size(config: SparseConfig, data, n: int) -> tuple[int, int, str]:
    """(distinct training inputs, the largest m the growth may reach, what sets it)."""
    distinct = n if data.first is None else data.first.size
    cap = max_inducing(config, n)
    m_cap = min(cap, distinct)
    if m_cap < distinct and exact_costs_less(config, distinct, cap):
        m_cap = distinct  # step 0 beyond the cap: the exact GP costs less than the sparse objective there
    return distinct, m_cap, "max_inducing" if m_cap == cap else "every distinct input"


def _fit_size(config: SparseConfig, data, problem, params, mask, Z, *, moving, at_all, progress, resume):
    """One size's fit (step 1): the kernel and noise, and the inducing inputs where ``moving``; (params, report,
    Z). ``resume``: an optimiser state to go on from (a warm start's)."""
    m, hyper = Z.shape[0], {k: v for k, v in params.items() if k != "Z"}
    held = "" if moving or not config.learns.inducing else ", Z held"
    stage = optimise(
        config,
        problem(data, Z, data.chunk(m, config.chunk_size), None if moving else Z, exact=at_all),
        dict(hyper, Z=jnp.asarray(Z)) if moving else hyper,
        dict(mask, Z=jnp.ones(Z.shape, dtype=bool)) if moving else mask,
        f"SparseGP ({config.approximation}) fit, m = {m}{held}",
        progress=progress,
        resume=resume,
    )
    return stage.params, stage.report, (np.asarray(stage.params["Z"]) if moving else Z)


class Pass(Enum):
    """Why a size is fitted (again), which sets how far its run goes."""

    LOOSE = "a size that may not be the last: fitted to LOOSE * tol"
    LAST = "the rules stop the growth here: the size converged to tol, then the rules asked again"
    PROMISED = "its doubling promised little: converged to tol, and its gain no longer stops the growth"
    RESUMED = "a warm start at a size the path holds: converged further, as one step with the last"


class SizeFit(NamedTuple):
    """How one size is fitted: at every training input (the exact GP: Z is the bound's maximum, held there),
    with the inducing inputs moving or held, and loosely (to LOOSE * tol: a size that may not be the last)."""

    at_every_input: bool
    moving: bool
    loose: bool


def _size_fit(config: SparseConfig, m: int, every: int | None, m_cap: int, how: Pass, kernel, Xc) -> SizeFit:
    """The :class:`SizeFit` of size ``m`` (``every``: the number of distinct inputs where the candidates are all of
    them, else None), fitted for the reason ``how``."""
    at_every_input = every is not None and m >= every
    # a length-scale so far below its column's spread that the bound changes over less than a step of Z: the
    # inputs are held and the kernel and noise fitted (on parkinsons, moving them left no step at all)
    moving = bool(config.learns.inducing) and not at_every_input and narrow(kernel, Xc)
    return SizeFit(at_every_input, moving, how is Pass.LOOSE and m < m_cap)


def grow(config: SparseConfig, data, problem, params, mask, Z0, idx0, resume=None, watch=None) -> Grown:
    """Steps 1-4 of the module docstring from the scaled ``params``/``mask`` and the first inducing inputs
    ``Z0`` (scaled; training rows ``idx0``). ``problem(data, Z, chunk, Z_fixed, exact)`` is the fit's objective
    (``exact``: Z is every training input, so the exact GP's). ``resume``: a warm start's path (records of
    ``Grown.path``), which the growth goes on from at ``Z0``, the fitted inducing inputs, without the climb: a
    size it holds is converged further as one step, and the rules read the path as if the fit had not stopped.
    ``watch(Z, idx, path)``, if given, before each size's fit (a checkpoint's record of where the growth is)."""
    s = config.input_scale
    t0, n = time.perf_counter(), int(data.moments.n)
    Xc, rows_c = candidates(data, np.random.default_rng(config.random_state))
    Xc = Xc / s
    distinct, m_cap, cap_name = largest_size(config, data, n)
    # the candidates are every distinct input: a size of ``distinct`` is the exact GP
    every = distinct if Xc.shape[0] == distinct and np.unique(Xc, axis=0).shape[0] == distinct else None
    tol = tol_per_row(config) * n
    all_at_once = every is not None and distinct <= m_cap  # fewer inputs than max_inducing: the exact GP at once
    if all_at_once:
        Z0, idx0 = Xc, (np.arange(distinct) if rows_c is None else rows_c)
    path = [Step(**record) for record in resume or []]
    climbed = None  # step 1's gain per row
    Z, idx, n_iter, report = np.asarray(Z0), idx0, 0, None
    how = Pass.RESUMED if path and path[-1].m == Z.shape[0] else Pass.LOOSE
    # at every input at once F_V is log p(y) itself (:func:`certificate`)
    start = certificate(config, data, params, Z, data.chunk(Z.shape[0], config.chunk_size), exact=all_at_once).lower
    if not all_at_once and resume is None:
        Z, idx, start, climbed = climb(config, data, params, Z, idx, Xc, rows_c, m_cap, start)
    try:
        while True:
            t, m = time.perf_counter(), Z.shape[0]
            size = _size_fit(config, m, every, m_cap, how, params["kernel"], Xc)
            if watch is not None:
                watch(Z, idx, path)
            go_on = config.warm.optimizer if config.warm is not None and n_iter == 0 else None  # the first size
            params, report, Z = _fit_size(
                config, data, problem, params, mask, Z, moving=size.moving, at_all=size.at_every_input,
                progress=tol * (LOOSE if size.loose else 1.0), resume=go_on,
            )  # fmt: skip
            cert = certificate(config, data, params, Z, data.chunk(m, config.chunk_size), exact=size.at_every_input)
            iters = 0 if report is None else report.n_iter
            objective = cert.lower if report is None else -float(report.objective)
            n_iter += iters
            step = Step(m, objective, cert.lower, cert.upper, iters, time.perf_counter() - t, start, float("nan"))
            if how is not Pass.LOOSE:  # the same size converged further: one step
                last = path.pop()
                step = step._replace(n_iter=last.n_iter + iters, seconds=last.seconds + step.seconds, start=last.start)
            path.append(step)
            budget_spent = config.time_budget is not None and time.perf_counter() - t0 >= float(config.time_budget)
            reason = stop_reason(path, n, m_cap, cap_name, budget_spent, climbed)
            if reason is None:
                bigger, bigger_idx, start = _doubled(config, data, params, Z, idx, Xc, rows_c, min(2 * m, m_cap))
                if bigger is None:
                    reason = f"every candidate explained: no residual variance left at m = {m}"
                else:
                    path[-1] = path[-1]._replace(next_start=start)
                    reason = added_too_little(path[-1], n)
                    if how is Pass.PROMISED and reason is not None and reason.startswith("gain"):
                        reason = None  # the loose fit's promise decided to grow; converging this size was for speed
            if reason is None and size.loose and promises_little(path[-1], n):  # likely the last size worth fitting
                how = Pass.PROMISED
                continue
            if reason is not None:
                if size.loose and not budget_spent:  # the model is the last size: converge it to tol, then ask again
                    how = Pass.LAST
                    continue
                break
            Z, idx, how = bigger, bigger_idx, Pass.LOOSE
    except KeyboardInterrupt as stop:  # the best iterate of the size being fitted, or the state reached
        if isinstance(stop, Interrupted):
            params, n_iter, report = stop.params, n_iter + stop.report.n_iter, stop.report
        Z = np.asarray(params["Z"]) if "Z" in params else Z
        reason = f"interrupted (KeyboardInterrupt) at m = {Z.shape[0]}: the best state reached"
    path_dicts = path_records(path)
    at_every_input = every is not None and Z.shape[0] >= distinct
    held = not config.learns.inducing or at_every_input
    exact = at_every_input and data.rows(s) is not None
    still = None if reason.startswith("interrupted") else still_gaining(path, reason, n, climbed)
    return Grown(params, Z, idx if held else None, report, n_iter, path_dicts, reason, exact, still)


__all__ = [
    "GAIN_PER_ROW",
    "GAP_PER_ROW",
    "START_GAIN_PER_ROW",
    "START_M",
    "TOL",
    "tol_per_row",
    "Grown",
    "Step",
    "added_too_little",
    "last_gain",
    "promises_little",
    "candidates",
    "certificate",
    "climb",
    "exact_costs_less",
    "grow",
    "largest_size",
    "path_records",
    "stop_reason",
]
