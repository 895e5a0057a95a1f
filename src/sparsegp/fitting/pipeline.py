"""A sparse GP's fit as one function: ``fit_sparse(config, data) -> SparseFit``.

The same steps on every backend (:mod:`sparsegp.backends`): the start (data-driven hyper-parameters, the
initial inducing set), the schedule (a joint L-BFGS run; the large-n strategy, ``subset`` rows then
``refine_iter`` iterations on all of them; HPEV alternation or variational EM; Seeger et al.'s
interleaved re-selection), the final posterior with its jitter ladder, and the leave-one-out check. The
objective is the JAX program over the rows in memory, or the host evaluation
(:class:`~sparsegp.approximations.host_objective.HostObjective`) over a backend's sums: FITC's on a CPU (its
written-out backward pass is faster there, BENCHMARKS.md) and every method's on a Dask cluster.
"""

from __future__ import annotations

import dataclasses
import time
import warnings
from functools import partial
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from .._compile import all_finite, to_device
from .._config import on_cpu
from ..approximations.augmented import training_cache
from ..approximations.base import prediction_mode
from ..approximations.common import make_posterior
from ..approximations.exact_host import on_host
from ..approximations.host_objective import HostObjective
from ..approximations.sparse_host import host_sparse_posterior, loo_function
from ..approximations.upper_bounds import tighten
from ..backends.in_memory import InMemory
from ..errors import CertificateWarning, InputError, NumericalError
from ..linalg import MAX_JITTER, jitter_ladder
from ..options import spelled
from ..selection import KMeans, Selector
from ..selection.dask_select import select_on_partitions
from ..transforms import to_positive, to_raw
from ..validation import as_float_matrix, check_int
from . import growth
from .calibration import loo_check
from .checkpoint import Checkpointer
from .config import SparseConfig
from .estimate import Clock
from .exact_fit import exact_problem
from .hyper import (
    Problem,
    initial_kernel,
    initial_noise,
    n_targets,
    noise_value,
    optimise,
    params_for_scaled_inputs,
    raw_bounds,
    scale_from_variances,
    warn_unconverged,
)
from .negatives import SparseNegative
from .pretrain import Pretrained, pretrain
from .training import Interrupted, alternate, minimize_reselecting


class SparseFit(NamedTuple):
    """Everything a sparse fit produces (inputs in the user's units, targets normalised)."""

    kernel: Any
    noise: float
    Z: np.ndarray
    inducing_indices: np.ndarray | None
    selection: Any
    objective: float
    posterior: Any
    train_cache: Any
    optimizer_report: Any
    n_iter: int
    stages: list | None
    rounds: list | None
    loo: Any
    data_bytes_per_evaluation: float | None
    certificate: Any = None  # :class:`~sparsegp.approximations.certificate.Certificate` at the fitted values
    inducing_path: list | None = None  # ``inducing="auto"``: one record per size of the growth
    stop_reason: str | None = None
    estimates: list | None = None  # the fit's estimates of its wall time (:mod:`.estimate`)
    exact: bool = False  # Z is every training input: ``objective`` is the exact GP's log p(y) (RW eq. 2.30)
    on_host: bool = (
        False  # the posterior, standard predictions and leave-one-out in NumPy (:mod:`..approximations.sparse_host`)
    )


class Start(NamedTuple):
    Z0: np.ndarray  # the initial inducing inputs, scaled
    idx: np.ndarray | None  # their training rows, if rows
    selection: Any


def inducing_rows(inducing, n: int, rng, first=None):
    """Training-row indices named by ``inducing`` (an int m: the first rows of m distinct inputs drawn at
    random, ``first`` holding each distinct input's first row when some repeat; an integer array: those
    rows, the papers' active set), or None for given inducing inputs."""
    if isinstance(inducing, (int, np.integer)) and not isinstance(inducing, bool):
        m = int(inducing)
        if m < 1:
            raise InputError(f"inducing={m}: at least one inducing point is required")
        if first is not None:
            return first[inducing_rows(m, first.size, rng)]
        if m > n:
            warnings.warn(
                f"inducing={m} exceeds the {n} distinct training inputs; using all of them", UserWarning, stacklevel=5
            )
            m = n
        return np.sort(rng.choice(n, size=m, replace=False))
    if inducing is None or isinstance(inducing, bool):
        raise InputError("inducing must be a number, training-row indices, or an (m, n_features) array")
    arr = np.asarray(inducing)
    if arr.ndim == 1 and arr.dtype.kind in "iu":
        if arr.size == 0 or arr.min() < 0 or arr.max() >= n or len(np.unique(arr)) != arr.size:
            raise InputError(f"inducing indices must be distinct integers in 0..{n - 1} (n_samples={n})")
        return arr.astype(np.int64)
    return None


def initial_inducing(config: SparseConfig, data, rng, kernel, noise: float) -> Start:
    """The initial inducing inputs (divided by the fit's input scale): a selector's choice, k-means centres, rows, or given; with
    ``warm_start``, the fitted ones."""
    s = config.input_scale
    if config.warm is not None and config.warm.Z is not None:
        return _warm_inducing(config, data)
    ind = config.inducing
    if config.auto:
        distinct = data.moments.n if data.first is None else data.first.size
        ind = min(growth.START_M, growth.max_inducing(config, int(data.moments.n)), distinct)
    if isinstance(ind, Selector):
        if np.ndim(data.moments.y_mean) == 1:
            raise InputError(
                f"a greedy selection ({type(ind).__name__}) with several targets is not available (its criteria read "
                "one target); pass inducing='auto', a number, KMeans(m) or the inducing inputs themselves"
            )
        size = ind.size
        if config.reselect == "em":  # the first E-step selects the first share of the final size
            size = max(1, int(np.ceil(check_int(ind.size, "size", minimum=1) / config.n_rounds)))
        sel = select_on_partitions(data, ind, kernel, noise, s, config.verbose)
        if sel is not None:
            idx = np.asarray(sel.indices)
        else:
            X, y, rows = data.start_sample(rng)
            sel = ind.select(kernel, noise, X / s, y, random_state=rng, verbose=config.verbose, size=size)
            idx = sel.indices.copy() if rows is None else rows[sel.indices]
        return Start(data.fetch(idx)[0] / s, idx, sel)
    if isinstance(ind, KMeans):
        X, _, _ = data.start_sample(rng)
        return Start(ind.centres(X / s, random_state=int(rng.integers(2**31))), None, None)
    idx = inducing_rows(ind, data.moments.n, rng, data.first)
    if idx is None:
        Z = as_float_matrix(ind, "inducing", n_features=len(data.moments.column_var), owner="the training data")
        return Start(Z / s, None, None)
    if isinstance(ind, (int, np.integer)):
        idx = data.distinct(idx, rng)
    return Start(data.fetch(idx)[0] / s, idx, None)


def _warm_inducing(config, data) -> Start:
    """``warm_start``: the fitted inducing inputs, with their training rows where those rows still hold them."""
    warm, s = config.warm, config.input_scale
    Z = np.asarray(warm.Z, dtype=float)
    if Z.ndim != 2 or Z.shape[1] != len(data.moments.column_var):
        raise InputError(
            f"warm_start=True continues from inducing inputs of {Z.shape[-1]} features, but X has "
            f"{len(data.moments.column_var)}: fit with warm_start=False"
        )
    idx = None if warm.idx is None else np.asarray(warm.idx)
    if idx is not None and (idx.max() >= data.moments.n or not np.array_equal(data.fetch(idx)[0], Z)):
        idx = None  # the rows have changed: the inputs themselves
    return Start(Z / s, idx, None)


def trainable(config: SparseConfig, kernel, noise: float, Z0):
    """The optimiser's start ``params`` and the ``mask`` of what it may change, from ``optimize``."""
    hyper, inducing = config.learns
    params = {"kernel": kernel, "raw_noise": jnp.asarray(to_raw(noise))}
    mask = {"kernel": kernel.trainable_mask(), "raw_noise": jnp.full(np.shape(noise), hyper)}
    if not hyper:
        mask["kernel"] = jax.tree_util.tree_map(lambda m: jnp.zeros_like(m, dtype=bool), mask["kernel"])
    if inducing:
        params["Z"], mask["Z"] = jnp.asarray(Z0), jnp.ones(Z0.shape, dtype=bool)
    return params, mask


def problem(config: SparseConfig, data, Z, chunk: int, Z_fixed=None) -> Problem:
    """The objective over ``data``'s rows at the inducing inputs ``Z`` (scaled), for :func:`~.hyper.optimise`."""
    s = config.input_scale
    rows = data.rows(s)
    # weighted sums (FITC's, or with known noise variances) on the host on a CPU: BENCHMARKS.md
    weighted = config.method.weighted(rows is not None and rows.known is not None)
    # one noise per target: the JAX program maps the sums over the targets (the host sums hold one noise)
    on_host = rows is None or (weighted and on_cpu() and np.ndim(config.noise) == 0)

    def build(noise_prior):
        objective = SparseNegative(config.method.objective, chunk, float(config.jitter), noise_prior)
        host = None
        if on_host:
            host = HostObjective(
                config.method,
                data=data.host_sums(s, chunk),
                jitter=float(config.jitter),
                noise_prior=noise_prior,
                Z_fixed=Z_fixed,
            )
        return objective, (() if rows is None else (jnp.asarray(Z), *rows.jax_args())), host

    return Problem(build, data.moments.n)


class Schedule(NamedTuple):
    """What a schedule fitted: the parameters (scaled inputs), the inducing rows, the optimiser's last report
    and the iterations of all its runs, the stages or rounds it went through, and the last selection."""

    params: Any
    idx: np.ndarray | None
    report: Any
    n_iter: int
    stages: list | None = None
    rounds: list | None = None
    selection: Any = None
    Z: Any = None  # the final inducing inputs (scaled) where the schedule changed their number
    path: list | None = None
    stop_reason: str | None = None
    exact: bool = False  # the growth ended at every training input on the exact log p(y)
    still_gaining: tuple | None = None  # the growth stopped at max_inducing while gaining (:mod:`.growth`)


def _grown(config, data, params, mask, start, rng) -> Schedule:
    """``inducing="auto"``: the kernel and noise from the exact GP on a subset (:func:`~.pretrain.pretrain`), then
    :func:`~.growth.grow` from the start's inducing inputs (it adds Z to what it fits)."""
    s = config.input_scale
    hyper = {k: params[k] for k in ("kernel", "raw_noise")}
    mask = {k: mask[k] for k in hyper}
    chunk = data.chunk(start.Z0.shape[0], config.chunk_size)

    def score(p):  # F_V at the first inducing inputs, where the certificate is sound
        cert = growth.certificate(config, data, p, start.Z0, chunk)
        return cert.lower if cert.sound else float("nan")

    try:  # warm_start: from the fitted kernel and noise
        pre = pretrain(config, data, hyper, mask, rng, score) if config.warm is None else Pretrained(hyper, None, 0)
    except Interrupted as stop:  # the exact GP's best iterate on the subset, at the first inducing inputs
        return _interrupted(stop, start, "while learning the start (the exact GP on a subset)")

    def at(part, Z, chunk, Z_fixed, exact=False):
        rows = part.rows(s)
        if exact and rows is not None:  # Z = every training input: each approximation's objective is log p(y)
            return exact_problem(rows, part.moments.n, hyper)
        return problem(config, part, Z, chunk, Z_fixed)

    resume = None if config.warm is None else list(config.warm.path or [])
    g = growth.grow(config, data, at, pre.params, mask, start.Z0, start.idx, resume, _watch(config))
    stages = None if pre.stage is None else [pre.stage]
    n_iter = g.n_iter + pre.n_iter
    return Schedule(
        g.params,
        g.idx,
        g.report,
        n_iter,
        stages=stages,
        Z=g.Z,
        path=g.path,
        stop_reason=g.stop_reason,
        exact=g.exact,
        still_gaining=g.still_gaining,
    )


def fit_sparse(config: SparseConfig, data, save=None) -> SparseFit:
    """Fit ``config`` to the training rows of the backend ``data`` (see the module docstring). ``save(fit)``, with
    ``config.checkpoint``, writes a checkpoint: the state reached, as a :class:`SparseFit` (:mod:`.checkpoint`)."""
    if config.reselect is not None:
        data.refuse(f"reselect={config.reselect!r}", "reselect")
    if prediction_mode(config.prediction).full_data:
        data.refuse(f"prediction={config.prediction!r}", "prediction")
        if np.ndim(data.moments.y_mean) == 1:
            raise InputError(
                f"prediction={config.prediction!r} with several targets is not available; use prediction='standard'"
            )
        if getattr(data, "known", None) is not None:
            raise InputError(
                f"prediction={config.prediction!r} with noise_variance is not available (its training-row weights "
                "assume one noise for every row); use prediction='standard'"
            )
    t0, n = time.perf_counter(), data.moments.n
    # fit in units where the inputs have unit spread
    config = dataclasses.replace(config, input_scale=scale_from_variances(data.moments.column_var))
    kernel = initial_kernel(config, np.sqrt(data.moments.column_var), n)
    noise = initial_noise(config, n_targets(data.moments))
    if np.ndim(noise) == 1:
        data.refuse("one noise variance per target", "noise")
    rng = np.random.default_rng(config.random_state)
    start = initial_inducing(config, data, rng, kernel, noise)
    chunk = data.chunk(start.Z0.shape[0], config.chunk_size)
    params, mask = trainable(config, kernel, noise, to_device(start.Z0))
    Z_fixed = None if config.learns.inducing else start.Z0
    clock = Clock(config, n, growth.largest_size(config, data, n)[1] if config.auto else None, t0)
    config = dataclasses.replace(config, monitors=(*config.monitors, clock))
    if config.checkpoint is not None and save is not None:
        checkpointer = Checkpointer(config.checkpoint, partial(_checkpoint, config, data, save))
        config = dataclasses.replace(config, monitors=(*config.monitors, checkpointer))
    _watch(config)(start.Z0, start.idx, [])
    sub = None if config.subset is None or config.subset >= n else np.sort(rng.choice(n, config.subset, replace=False))
    try:
        done = _schedule(config, data, params, mask, sub, start, chunk, Z_fixed, rng)
    except Interrupted as stop:
        if config.reselect is not None or (config.auto and sub is not None):  # the stage's Z is not kept here
            raise
        every = sub is None and not config.auto and _every_input(config, data, start)  # the exact GP's iterate
        done = _interrupted(stop, start, f"at m = {start.Z0.shape[0]}")._replace(exact=every)
    if done.exact and done.Z is None:  # Z = every training input, held
        fit = _finish(config, data, done, start.Z0, True, chunk)
    elif done.Z is not None:  # the growth holds Z at the training inputs once it reaches every one of them
        held = Z_fixed is not None or "Z" not in done.params
        fit = _finish(config, data, done, done.Z, held, data.chunk(done.Z.shape[0], config.chunk_size))
    else:
        fit = _finish(config, data, done, start.Z0, Z_fixed is not None, chunk)
    return fit._replace(estimates=[e._asdict() for e in clock.estimates])


def _watch(config):
    """``watch(Z, idx, path)`` of every monitor of the fit (config.monitors)."""

    def watch(Z, idx, path):
        for monitor in config.monitors:
            monitor.watch(Z, idx, path)

    return watch


def _checkpoint(config, data, save, params, Z, idx, path) -> None:
    """A checkpoint at the scaled ``params`` of the optimiser's latest iterate, the inducing inputs ``Z`` (scaled)
    where they do not move, their rows ``idx``, and the growth's ``path`` before this size."""
    m = params["Z"].shape[0] if "Z" in params else Z.shape[0]
    reason = f"checkpoint at m = {m}: the state the fit had reached (it was still running)"
    done = Schedule(params, None if "Z" in params else idx, None, 0, path=growth.path_records(path), stop_reason=reason)
    save(_finish(config, data, done, Z, "Z" not in params, data.chunk(m, config.chunk_size), light=True))


def _interrupted(stop, start: Start, where: str) -> Schedule:
    """The schedule of a fit interrupted (KeyboardInterrupt) in an optimiser run: its best iterate."""
    reason = f"interrupted (KeyboardInterrupt) {where}: the best state reached"
    return Schedule(stop.params, start.idx, stop.report, stop.report.n_iter, selection=start.selection,
                    stop_reason=reason)  # fmt: skip


def _schedule(config, data, params, mask, sub, start, chunk, Z_fixed, rng) -> Schedule:
    """The schedule the configuration names (the module docstring)."""
    if sub is not None:
        return _subset_then_all(config, data, params, mask, sub, start, chunk, Z_fixed, rng)
    if config.auto:
        return _grown(config, data, params, mask, start, rng)
    if config.reselect is None and _every_input(config, data, start):
        return _at_every_input(config, data, params, mask, start)
    if config.reselect is None:
        at = problem(config, data, start.Z0, chunk, Z_fixed)
        resume = None if config.warm is None else config.warm.optimizer
        fit = optimise(
            config, at, params, mask, _desc(config, data), progress=_progress(config, data.moments.n),
            resume=resume,
        )  # fmt: skip
        return Schedule(fit.params, start.idx, fit.report, _iterations(fit.report), selection=start.selection)
    if config.reselect == "interleaved":
        return _interleaved(config, data, params, mask, start, rng, chunk)
    return _rounds(config, data, params, mask, start, rng, chunk)


def _every_input(config: SparseConfig, data, start: Start) -> bool:
    """The inducing inputs (training rows ``idx``, or given as inputs) are every distinct training input, rows
    in memory: Z = X."""
    rows = data.rows(1.0)
    if rows is None or config.auto:
        return False
    distinct = data.moments.n if data.first is None else data.first.size
    if start.idx is not None:
        return np.unique(data.fetch(np.asarray(start.idx))[0], axis=0).shape[0] >= distinct
    given = np.asarray(config.inducing)
    if given.ndim != 2 or given.dtype.kind != "f" or given.shape != (distinct, rows.X.shape[1]):
        return False
    return np.array_equal(np.unique(given, axis=0), np.unique(rows.X, axis=0))


def _at_every_input(config, data, params, mask, start) -> Schedule:
    """Z = X: VFE, DTC, SoR and FITC are the exact GP there (Q_nn = K_nn) and Z = X maximises the bound over Z,
    so the inputs are held and the kernel and noise fitted on the exact log p(y), which keeps its digits where
    the sparse algebra at Z = X loses them (the noise at its floor), as the growth does (:mod:`.growth`)."""
    s = config.input_scale
    hyper = {k: params[k] for k in ("kernel", "raw_noise")}
    mask = {k: mask[k] for k in hyper}
    at = exact_problem(data.rows(s), data.moments.n, hyper)
    desc = f"SparseGP ({config.approximation}) fit, m = every training input (the exact GP)"
    fit = optimise(config, at, hyper, mask, desc, progress=_progress(config, data.moments.n))
    return Schedule(fit.params, start.idx, fit.report, _iterations(fit.report), selection=start.selection, exact=True)


def _progress(config: SparseConfig, n: int) -> float | None:
    """An explicit set's convergence on progress: ``tol`` nats per row per iteration, if given."""
    return None if config.tol is None else float(config.tol) * n


def _iterations(report) -> int:
    return 0 if report is None else report.n_iter


def _desc(config: SparseConfig, data) -> str:
    return f"SparseGP ({config.approximation}) fit" + (f" on {data.name} arrays" if data.on_cluster else "")


def _subset_then_all(config, data, params, mask, sub, start, chunk, Z_fixed, rng) -> Schedule:
    """``max_iter`` iterations on the rows ``sub``, then ``refine_iter`` on all rows."""
    X, y = data.fetch(sub)
    part = InMemory.of_rows(
        X, y, collapsed=data.collapsed, moments=data.moments._replace(n=len(sub)), known=data.known_at(sub)
    )
    Z0 = start.Z0
    grown = None
    if config.auto:  # the growth on the subset's rows, the refinement at its final inducing set
        grown = _grown(config, part, params, mask, start, rng)
        params, Z0, report = dict(grown.params), grown.Z, grown.report
        chunk, Z_fixed = data.chunk(Z0.shape[0], config.chunk_size), None if config.learns.inducing else Z0
        if "Z" in params:
            mask = dict(mask, Z=jnp.ones(Z0.shape, dtype=bool))
    else:
        desc = f"SparseGP ({config.approximation}) fit on {len(sub)} rows"
        first = problem(config, part, Z0, part.chunk(Z0.shape[0], config.chunk_size), Z_fixed)
        fit = optimise(config, first, params, mask, desc, progress=_progress(config, len(sub)))
        params, report = fit.params, fit.report
    stages = [{"rows": len(sub), "report": report}]
    if config.refine_iter > 0 and config.optimize:
        desc = f"SparseGP ({config.approximation}) refined on all rows"
        full = problem(config, data, Z0, chunk, Z_fixed)
        fit = optimise(config, full, params, mask, desc, max_iter=int(config.refine_iter))
        params = fit.params
        stages.append({"rows": int(data.moments.n), "report": fit.report})
    n_iter = sum(_iterations(st["report"]) for st in stages) + (grown.n_iter - _iterations(report) if grown else 0)
    if grown is not None:
        idx = None if grown.idx is None else sub[grown.idx]  # the subset's rows in the training rows
        stages = (grown.stages or []) + stages  # the exact GP's start, if any, first
        return grown._replace(  # Z = the subset's inputs: the exact GP on the subset only
            params=params, idx=idx, report=stages[-1]["report"], n_iter=n_iter, stages=stages, exact=False
        )
    return Schedule(params, start.idx, stages[-1]["report"], n_iter, stages=stages, selection=start.selection)


def _select(config, params, X, y, rng, size=None, initial=None):
    return config.inducing.select(
        params["kernel"],
        float(to_positive(params["raw_noise"])),
        X,
        y,
        random_state=rng,
        verbose=config.verbose,
        size=size,
        initial=initial,
    )


def _value(config, data, kernel, noise, Z, chunk: int) -> float:
    """The approximation's objective (log marginal likelihood or bound) at the given values, rows in memory."""
    s = config.input_scale
    rows = data.rows(s)
    X, y = jnp.asarray(rows.X), jnp.asarray(rows.y)
    value = config.method.objective(
        kernel, jnp.asarray(Z), noise, X, y, chunk=chunk, jitter=float(config.jitter), **rows.weights()
    )
    return float(value)


def _rounds(config, data, params, mask, start, rng, chunk) -> Schedule:
    """HPEV-style alternation ("alternate") or Titsias's variational EM ("em"): :func:`training.alternate`.

    Selection sees every training row; the objective sums over the backend's rows."""
    s = config.input_scale
    X, y, _ = data.start_sample(rng)
    X = X / s
    chosen = {"selection": start.selection}

    def select(p, size, initial):
        chosen["selection"] = _select(config, p, X, y, rng, size=size, initial=initial)
        return chosen["selection"].indices.copy()

    def fit(p, idx, r):
        desc = f"SparseGP ({config.approximation}) {config.reselect} round {r + 1}/{config.n_rounds}"
        stage = optimise(config, problem(config, data, X[idx], chunk, X[idx]), p, mask, desc)
        return stage.params, stage.report

    def value(p, idx):
        return _value(config, data, p["kernel"], to_positive(p["raw_noise"]), X[idx], chunk)

    m_final = min(check_int(config.inducing.size, "size", minimum=1), X.shape[0])
    params, idx, rounds, reports = alternate(
        select, fit, value, params, start.idx, n_rounds=config.n_rounds, em=config.reselect == "em", m_final=m_final
    )
    n_iter = sum(_iterations(rep) for rep in reports)
    return Schedule(params, idx, reports[-1], n_iter, rounds=rounds, selection=chosen["selection"])


def _interleaved(config, data, params, mask, start, rng, chunk) -> Schedule:
    """Seeger et al. sec. 2.3: re-select at each new search direction, fixed during the line search."""
    s = config.input_scale
    if not config.optimize:
        return Schedule(params, start.idx, None, 0, selection=start.selection)
    X, y, _ = data.start_sample(rng)
    X = X / s

    def reselect(p):
        return jnp.asarray(X[_select(config, p, X, y, rng).indices])

    lower, upper = raw_bounds(params, config.min_noise)
    objective = SparseNegative(config.method.objective, chunk, float(config.jitter), config.noise_prior)
    params, report = minimize_reselecting(
        objective,
        params,
        reselect,
        args=data.rows(s).jax_args(),
        mask=mask,
        lower=lower,
        upper=upper,
        max_iter=check_int(config.max_iter, spelled(config.owner, "max_iter"), minimum=1),
        verbose=config.verbose,
        desc=f"SparseGP ({config.approximation}) interleaved",
    )
    warn_unconverged(config, report, params, mask, stacklevel=4)
    final = _select(config, params, X, y, rng)  # the final set: selected at the final hyper-parameters
    return Schedule(params, final.indices.copy(), report, report.n_iter, selection=final)


def _finish(config, data, done: Schedule, Z0, fixed: bool, chunk: int, light: bool = False) -> SparseFit:
    """The fitted values in the user's units, the objective, the posterior, the augmented prediction's cache
    and the leave-one-out check. ``light`` (a checkpoint's): the trace bound as the certificate, no check."""
    s = config.input_scale
    idx = done.idx
    Zs = jnp.asarray(Z0) if (config.reselect is None or idx is None) else jnp.asarray(data.fetch(idx)[0] / s)
    scaled = dict(done.params, Z=done.params.get("Z", Zs))
    params = params_for_scaled_inputs(scaled, 1.0 / s)
    kernel, noise = params["kernel"], noise_value(params["raw_noise"])
    Z = np.asarray(params["Z"])
    if idx is not None and fixed:
        Z = data.fetch(idx)[0]  # the training rows themselves, not a round trip through X / s
    rows = data.rows(1.0)
    hosted = False
    if rows is not None:
        unscaled = dataclasses.replace(config, input_scale=1.0)  # the fitted model, in the inputs' own units
        cert = growth.certificate(unscaled, data, params, Z, chunk, exact=done.exact)
        # known noise variances or several targets: the trace bound (upper_bounds.py assumes one of each)
        if not (done.exact or light) and rows.known is None and rows.y.ndim == 1:
            X, y = rows.X, rows.y
            cert = tighten(cert, kernel, Z, noise, X, y, chunk=chunk, jitter=float(config.jitter), **rows.weights())
        objective = cert.lower if done.exact else _value(unscaled, data, kernel, noise, Z, chunk)
        hosted = done.exact and _every_input_on_host(config, rows, kernel, noise)
        posterior = (_posterior_on_host_rows if hosted else _posterior_in_memory)(config, data, kernel, noise, Z, chunk)
    else:
        objective, posterior, cert = _posterior_on_host(config, data, scaled, Z, chunk)
    _check_sound(config, cert)
    if done.still_gaining is not None and not light:
        growth.warn_at_cap(Z.shape[0], done.still_gaining, cert.gap / data.moments.n, stacklevel=4)
    cache = None
    if prediction_mode(config.prediction).full_data:
        X, y = jnp.asarray(rows.X), jnp.asarray(rows.y)
        cache = training_cache(kernel, posterior, noise, X, y, chunk, counts=rows.counts)
    loo = None
    if not light:
        fn = loo_function(config.method, kernel, posterior, noise, config.prediction, hosted)
        loo = loo_check(fn, data, data.moments.y_std)
    bytes_moved = getattr(data, "bytes_per_evaluation", None)
    return SparseFit(
        kernel,
        noise,
        Z,
        idx,
        done.selection,
        objective,
        posterior,
        cache,
        done.report,
        done.n_iter,
        done.stages,
        done.rounds,
        loo,
        bytes_moved,
        cert,
        done.path,
        done.stop_reason,
        exact=bool(done.exact and rows is not None),
        on_host=hosted,
    )


def _every_input_on_host(config, rows, kernel, noise) -> bool:
    """Whether the every-input fit's posterior, standard predictions and leave-one-out run on the host
    (:mod:`sparsegp.approximations.sparse_host`): unit row weights (not FITC's), the standard prediction, and the
    exact GP's own host conditions (:func:`~sparsegp.approximations.exact_host.on_host`) on the rows."""
    unit = not config.method.weighted(rows.known is not None)
    standard = not prediction_mode(config.prediction).full_data
    return unit and standard and on_host(kernel, noise, rows.X, rows.counts, rows.known)


def _posterior_on_host_rows(config, data, kernel, noise, Z, chunk: int):
    """:func:`_posterior_in_memory` in NumPy and LAPACK (:func:`~sparsegp.approximations.sparse_host.host_sparse_posterior`,
    the same jitter ladder); ``chunk`` unused (no JAX program)."""
    rows = data.rows(1.0)
    post = host_sparse_posterior(kernel, Z, float(noise), rows.X, rows.y, float(config.jitter))
    if post is None:
        raise _unfactorisable(config, MAX_JITTER)
    return post


def _posterior_in_memory(config, data, kernel, noise, Z, chunk: int):
    """The prediction cache; if a factorisation fails, retry with tenfold jitter up to MAX_JITTER."""
    rows = data.rows(1.0)
    X, y, Zj = jnp.asarray(rows.X), jnp.asarray(rows.y), jnp.asarray(Z)
    for jitter in jitter_ladder(float(config.jitter), MAX_JITTER):
        post = config.method.posterior(kernel, Zj, noise, X, y, chunk=chunk, jitter=jitter, **rows.weights())
        if all_finite(*post):
            return post
    raise _unfactorisable(config, jitter)


def _check_sound(config, cert) -> None:
    """A CertificateWarning where the fitted model's U lies below its F_V beyond rounding."""
    if cert is not None and not cert.sound:
        warnings.warn(
            f"{config.owner}: the certificate is not sound: its upper bound {cert.upper:.6g} lies below F_V "
            f"{cert.lower:.6g}, so gap_ certifies nothing (the factorisations lost their digits: near-duplicate "
            f"inducing inputs, or a noise near its lower bound). Raise jitter or {spelled(config.owner, 'min_noise')}, "
            "or use fewer inducing inputs.",
            CertificateWarning,
            stacklevel=4,
        )


def _posterior_on_host(config, data, params, Z, chunk: int):
    """(objective, posterior, certificate) from one more pass over the backend's sums (two for FITC, whose sums
    are not the certificate's), at the scaled ``params``, with the same jitter ladder."""
    s = config.input_scale
    for jitter in jitter_ladder(float(config.jitter), MAX_JITTER):
        hosted = HostObjective(config.approximation, data=data.host_sums(s, chunk), jitter=jitter)
        value, terms, Luu, cert = hosted.terms(params)
        if np.isfinite(value) and all_finite(*terms, Luu):
            cert = hosted.certificate(params) if cert is None else cert
            return value, make_posterior(jnp.asarray(Z), Luu, terms.LB, terms.c), cert
    raise _unfactorisable(config, jitter)


def _unfactorisable(config, jitter: float) -> NumericalError:
    return NumericalError(
        f"the posterior of the fitted {config.approximation} model could not be factorised even with "
        f"jitter {jitter:g} x mean diag(K_uu): the inducing inputs are (near-)duplicates or the "
        "length-scales are far larger than their spread. Use fewer or better spread inducing inputs "
        "(a greedy selection), or a larger min_noise."
    )


__all__ = ["SparseFit", "fit_sparse", "inducing_rows", "initial_inducing", "problem", "trainable"]
