"""The sparse variational GP fit over every row, for any likelihood, as one pipeline:
``fit_variational(config, rows) -> VariationalFit``. The classifier (:class:`~sparsegp.SparseGPClassifier`,
class labels) and the non-Gaussian regressors (:class:`~sparsegp.SparseGPRegressor` with a Student-t or Poisson
likelihood, real or count targets) are both this fit; what differs is the likelihood object
(:mod:`sparsegp.likelihoods`), which the fit never asks the name of.

0. **Small data** (``inducing="auto"``, the rows in memory, a log-concave likelihood, at most EVERY_INPUT_ROWS
   distinct inputs and no more than the growth's largest m): no growth. Every distinct input is inducing at once
   and held, q at its optimum in its site form by natural steps inside every evaluation, L-BFGS-B over the
   kernel, b and the likelihood's parameters only (:mod:`.every_input`), converged to FINAL * tol, from step
   1's start; steps 2-4 are skipped. On 300 rows the growth's 128 and 209 inputs took 182 L-BFGS iterations
   over q's entries and ended lower (BENCHMARKS.md, "Every input inducing on small data").
1. **Start.** Inputs divided by their RMS spread s (the fit follows the units of X exactly). The default
   kernel is the regressors' SE-ARD start (length-scales at sqrt(D) times each column's spread, variance 1);
   the constant mean b is the likelihood's start for the targets (``initial_mean``: its value at the class
   frequencies, the median of a real target, the log of the mean count); q(v) is the prior N(0, I). With
   fewer than LABELS_PER_PARAMETER rows per kernel hyper-parameter the default kernel carries weak log-normal
   priors about its start (:func:`initial_kernel`).
2. **Inducing inputs.** The first FIRST_INDUCING are cluster centres of a random candidate set of rows, by k-means in the
   kernel's geometry (:func:`~sparsegp.selection.centres.extend_centres`). The greedy conditional-variance
   pivots that start the regressors pick, among 784 MNIST pixels, the rows least like any chosen so far: at one
   kernel, 128 of them gave a lower bound and a higher test error than random rows, and k-means centres the
   highest bound (BENCHMARKS.md); and the growth from 32 to 128 pivots left the test error where it was.
   The growth starts at 128 (or the number of distinct inputs), not 32: a kernel learnt at m = 32 is a basin
   the larger stages do not leave (digits: 0.9759 accuracy grown from 32, 0.9852 grown from 128), and on MNIST
   an iteration at m = 128 costs less than twice one at 32 and gains more (BENCHMARKS.md).
3. **One stage.** q(v) first by natural-gradient steps with the kernel, Z and b held
   (:func:`~sparsegp.classification.svgp.natural_update`; a step that would lower the bound is halved), until a
   step gains less than LOOSE * tol nats per row; then L-BFGS-B over the kernel, Z, q(v) and b together, on the
   bound over every row (the chunked sum of :mod:`sparsegp.classification.svgp`), until the bound gains less
   than LOOSE * tol nats per row per iteration (averaged over ten iterations, none of them among the first
   STAGE_WARMUP: L-BFGS restarts without curvature pairs at each stage, and on MNIST the rule read on its first
   short steps ended the stages at m = 256 and 512 after 11 iterations), or ``max_iter``. The model's own size
   (the inducing inputs given, or the size the growth stops at, fitted once more) is converged to FINAL * tol
   instead, as the regressors converge their last size: on simulated counts the looser rule stopped 72 nats below
   GPflow's bound after 1,000 iterations at the same m (BENCHMARKS.md, "Regression beyond Gaussian noise"). L-BFGS on q
   alone is slow where the likelihood is flat (robust-max: rows far on the wrong side); the natural steps use
   each row's curvature (MNIST: BENCHMARKS.md).
4. **Growth** (``inducing="auto"``). m doubles: the new inducing inputs are centres of the candidates with the
   fitted ones held (under the fitted kernel), q is carried over exactly (:func:`~sparsegp.classification.svgp.extend_q`:
   the bound starts where the smaller model ended), and the stage reruns, q first: L-BFGS on everything at once
   started slowly after a doubling and its progress rule ended the stage before the new inducing inputs had
   paid (MNIST: 11 iterations, 0.00085 nats per row; BENCHMARKS.md). The growth stops by the regressors' rule
   set (:func:`~sparsegp.fitting.growth.stop_reason`, its records :class:`~sparsegp.fitting.growth.Step`, with
   the bound as ``objective`` and ``lower`` and no certificate): once a doubling gains less than ``tol`` nats per
   row, or once the gains' decline (the last gain times its ratio to the one before) says the next doubling
   would, or at ``max_inducing`` or the number of distinct training inputs.
5. **The check.** Each sampled training row's approximate leave-one-out latent marginal (its Gaussian site
   removed from q: :func:`~sparsegp.classification.svgp.loo_cavity`), which the estimator scores with the
   likelihood's predictive (log loss and calibration error for labels, log density and interval coverage for
   targets).

The fit estimates its own wall time as it goes, as the regressors' (:class:`~sparsegp.fitting.estimate.Clock`,
without their exact certificate's end), kept as ``estimates``.
"""

from __future__ import annotations

import dataclasses
import time
from contextlib import contextmanager
from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np

from ..backends.jax_sums import chunk_size_for
from ..backends.replicates import collapse
from ..kernels import Kernel
from ..priors import log_hyper_prior
from ..progress import progress_bar
from ..selection.centres import RANK_FLOOR, extend_centres
from .calibration import loo_sample
from .checkpoint import Checkpointer
from .config import VariationalConfig
from .estimate import Clock
from .every_input import SMALLEST_STEP, fit_every_input
from .growth import Step, device_max_inducing, path_records, stop_reason
from .hyper import (
    optimiser_callback,
    scale_from_variances,
    se_ard_start,
    users_kernel,
    warn_at_bounds,
    warn_stopped_short,
)
from .training import LBFGS_MEMORY, Interrupted, minimize

FIRST_INDUCING = 128  # m at the growth's first stage (the module docstring, step 2)
CANDIDATES = 4096  # rows the greedy selection of inducing inputs looks at (at least 4 m)
LOOSE = 0.1  # the progress rule of a size the growth passes through: LOOSE * tol nats per row per iteration
FINAL = 0.01  # the model's own size (the last, or the one given) is converged further: FINAL * tol
NATURAL_STEPS = 100  # at most this many natural-gradient steps for q per stage
NARROW_FLOOR = 0.1  # the default length-scales' floor, a fraction of the inputs' RMS spread
LABELS_PER_PARAMETER = 50  # fewer training rows per kernel hyper-parameter: weak priors about the default start
EVERY_INPUT_ROWS = 400  # at most this many distinct inputs: every one inducing at once (step 0; BENCHMARKS.md)
STAGE_WARMUP = LBFGS_MEMORY  # a stage's progress rule is judged only after this many L-BFGS iterations


class WeightedRows(NamedTuple):
    """Training rows, one weighted row per distinct (input, target) pair: ``y`` integer class codes (int32) or
    real targets (float64), ``n_outputs`` the classes (1 for a real or count target)."""

    X: np.ndarray
    y: np.ndarray
    w: np.ndarray
    n: int  # rows before collapsing
    n_outputs: int


def collapse_rows(X: np.ndarray, y: np.ndarray, n_outputs: int) -> WeightedRows:
    """Rows that repeat an input and its target become one row of weight c: their bound terms are equal, so the
    sum over rows is unchanged (exactly). Class codes are kept as int32, real targets as float64."""
    y = y.astype(np.int32) if np.issubdtype(y.dtype, np.integer) else y.astype(np.float64)
    # the regressors' grouping (:func:`~sparsegp.backends.replicates.collapse`) of the rows by input and target
    groups = collapse(np.column_stack([X, y.astype(np.float64)]), np.zeros(X.shape[0]))
    if not groups.repeated:
        return WeightedRows(X, y, np.ones(X.shape[0]), X.shape[0], n_outputs)
    return WeightedRows(X[groups.first], y[groups.first], groups.counts, X.shape[0], n_outputs)


class VariationalFit(NamedTuple):
    """Everything the fit learnt, inputs in the user's units: ``params`` (kernel, likelihood, Z, q_mu, q_sqrt,
    mean), the bound, the growth's record, the stop reason, iterations, and the leave-one-out latent marginals
    (rows, L) of the rows the check sampled, with those rows' targets."""

    params: dict
    bound: float
    inducing_path: list
    stop_reason: str
    n_iter: int
    loo_mean: np.ndarray
    loo_var: np.ndarray
    loo_targets: np.ndarray
    estimates: list | None = None  # the fit's estimates of its wall time (:mod:`.estimate`)


def initial_kernel(config: VariationalConfig, column_std: np.ndarray, n_rows: int) -> Kernel:
    """The default SE-ARD start for inputs divided by the fit's input scale (length-scales sqrt(D) times each column's spread, at
    least NARROW_FLOOR of the inputs' RMS spread), or the user's kernel rewritten for them.

    With fewer than LABELS_PER_PARAMETER training rows per kernel hyper-parameter (D length-scales and the
    variance) and the kernel learnt, the default carries the regressors' weak log-normal priors about that start
    (sd TINY_DATA_LOG_SD in log). A label says far less than a continuous target (at most log C nats), so the
    regressors' rule of two rows per hyper-parameter is too lax here: on breast_cancer (398 rows, 30 inputs) the
    ARD length-scales fitted without them reached a higher bound and a lower test accuracy (BENCHMARKS.md)."""
    s = config.input_scale
    D = column_std.size
    if config.kernel is None:
        # a column far narrower than the rest (a pixel that is rarely on) starts at NARROW_FLOOR of the inputs'
        # spread: at its own spread a single row where it is on would lie many length-scales from every other
        ell = np.maximum(column_std / s, NARROW_FLOOR) * np.sqrt(D)
        return se_ard_start(ell, bool(config.optimize) and n_rows < LABELS_PER_PARAMETER * (D + 1))
    return users_kernel(config.kernel, D, s)


def largest_m(config: VariationalConfig, n: int, latents: int) -> int:
    """The growth's largest m: ``max_inducing``, or for None the regressors' device cap
    (:func:`~sparsegp.fitting.growth.device_max_inducing`) at the same cost per evaluation. The latent variances
    cost about 2 n m^2 per latent function, so the cap is halved while ``latents`` m^2 exceeds its square (down
    to FIRST_INDUCING): 1,024 for two classes on a CPU, 256 for ten (on MNIST one L-BFGS iteration at m = 1,024
    took 118 s on 2 cores; BENCHMARKS.md)."""
    if config.max_inducing is not None:
        return int(config.max_inducing)
    cap = m = device_max_inducing(n)
    while m > FIRST_INDUCING and latents * m * m > cap * cap:
        m //= 2
    return m


def _candidates(n: int, m: int, rng) -> np.ndarray:
    size = min(n, max(CANDIDATES, 4 * m))
    return np.arange(n) if size == n else np.sort(rng.choice(n, size=size, replace=False))


def _select(kernel, Z, X, k, rng):
    """k more inducing inputs: cluster centres of candidate rows of X, Z held (step 2)."""
    cand = _candidates(X.shape[0], Z.shape[0] + k, rng)
    return extend_centres(kernel, Z, X[cand], k, rng)


def _stage(config, problem, params, mask, bounds, n: int, desc: str, loose: float):
    """L-BFGS-B over everything the configuration frees (step 3) until the bound gains less than ``loose * tol``
    nats per row per iteration, with the regressors' warning where it stops short; a KeyboardInterrupt comes out
    as :class:`~.training.Interrupted` with the best point evaluated."""
    objective, args, value_and_grad = problem
    lower, upper = bounds
    params, report = minimize(
        objective, params, args=args, mask=mask, lower=lower, upper=upper, max_iter=config.max_iter,
        verbose=config.verbose, desc=desc, value_and_grad=value_and_grad, callback=optimiser_callback(config),
        progress=loose * config.tol * n, progress_after=STAGE_WARMUP,
    )  # fmt: skip
    _stage_warnings(config, report, params, mask)
    return params, report


def _stage_warnings(config, report, params, mask):
    """The regressors' warnings where a stage stops short or leaves a parameter at its box."""
    warn_stopped_short(config.owner, report, "raise max_iter, or tol for a looser progress rule", stacklevel=6)
    if config.optimize:
        warn_at_bounds(config.owner, "kernel hyper-parameter", params["kernel"], mask["kernel"], stacklevel=6)
        likelihood, free = params["likelihood"], mask["likelihood"]
        warn_at_bounds(config.owner, "likelihood parameter", likelihood, free, "the targets' fitted scale", 6)


def _negative_bound(problem, params) -> float:
    """The minimised objective (the negative bound, less the kernel's log prior) at ``params``: one evaluation."""
    objective, args, value_and_grad = problem
    return float(value_and_grad(params)[0] if value_and_grad is not None else objective(params, *args))


def _mask_and_bounds(config, params):
    kernel = params["kernel"]
    M, L = params["q_mu"].shape
    likelihood = params["likelihood"]
    mask = {
        "kernel": kernel.trainable_mask() if config.optimize else _all(kernel, False),
        "likelihood": likelihood.trainable_mask() if config.optimize else _all(likelihood, False),
        "Z": np.full(params["Z"].shape, bool(config.learn_inducing)),
        "q_mu": np.ones((M, L), bool),
        "q_sqrt": config.family.mask(M, L),
        "mean": np.ones(L, bool),
    }
    k_lo, k_hi = kernel.raw_bounds()
    l_lo, l_hi = likelihood.raw_bounds()
    inf = {k: np.full(np.shape(v), np.inf) for k, v in params.items() if k not in ("kernel", "likelihood")}
    lower = dict({k: -v for k, v in inf.items()}, kernel=k_lo, likelihood=l_lo)
    return mask, (lower, dict(inf, kernel=k_hi, likelihood=l_hi))


def _all(kernel, value: bool):
    import jax

    return jax.tree_util.tree_map(lambda a: np.full(np.shape(a), value), kernel)


def _start(config: VariationalConfig, data, Xs: np.ndarray, rng) -> dict[str, Any]:
    """Steps 1-2: the kernel, the likelihood, the first inducing inputs, q(v) = N(0, I) and b (inputs divided by
    ``s``; ``Xs`` the rows in memory the selection looks at)."""
    s = config.input_scale
    kernel = initial_kernel(config, data.column_std, data.n)
    none = np.zeros((0, Xs.shape[1]))
    if every_input(config, data):  # the pool is the distinct rows: every one inducing (step 0)
        Z = Xs
    elif isinstance(config.inducing, str):
        cap = largest_m(config, data.n, config.likelihood.latent_count(data.n_outputs))
        Z = _select(kernel, none, Xs, min(FIRST_INDUCING, data.n_distinct, cap), rng)
    elif np.ndim(config.inducing) == 0:
        Z = _select(kernel, none, Xs, min(int(config.inducing), data.n_distinct), rng)
    else:
        Z = np.asarray(config.inducing, float) / s
    q_mu, q_sqrt = config.family.start(Z.shape[0], config.likelihood.latent_count(data.n_outputs))
    targets, weights = data.target_summary
    return {
        "kernel": kernel,
        "Z": jnp.asarray(Z),
        "q_mu": jnp.asarray(q_mu),
        "q_sqrt": jnp.asarray(q_sqrt),
        "mean": jnp.asarray(config.likelihood.initial_mean(targets, weights, q_mu.shape[1])),
        "likelihood": config.likelihood,
    }


def as_given(config: VariationalConfig, M: int) -> str:
    """The stop reason of a fit of the inducing inputs given (an array, or m centres: fewer where the others
    determine some at the starting kernel)."""
    asked = int(config.inducing) if np.ndim(config.inducing) == 0 else M
    if M < asked:
        return (
            f"m = {M} inducing inputs: {asked} asked, {asked - M} of the k-means centres dropped as the others "
            f"determine them at the starting kernel (conditional variance below {RANK_FLOOR:g} of the prior)"
        )
    return f"m = {M} inducing inputs, as given"


def cap_of(config: VariationalConfig, data) -> tuple[int, str]:
    """(the largest m the growth may reach, what sets it): ``max_inducing`` or the device's cap for the
    likelihood's latent functions (:func:`largest_m`), or every distinct training input where there are fewer."""
    latents = config.likelihood.latent_count(data.n_outputs)
    largest = largest_m(config, data.n, latents)
    if data.n_distinct < largest:
        return data.n_distinct, "every distinct input"
    return largest, "max_inducing"


def _doubled(config: VariationalConfig, params: dict, Xs: np.ndarray, path: list, data, rng):
    """Step 4: (the parameters with m doubled and q carried over, "" or why that size is the last), or (None, why
    the growth stops at this size): the rules of every growth of m (:func:`~sparsegp.fitting.growth.stop_reason`),
    the gain's threshold ``tol`` with the gains' decline read as well; the path's records are the growth's
    (:class:`~sparsegp.fitting.growth.Step`). Where fewer than half the centres asked are not determined by the
    inducing inputs (the candidates nearly spanned), those few join and the grown size is the last: the sizes
    after it would each add a few inputs at the cost of a whole stage (BENCHMARKS.md, "ROBUST again")."""
    M = params["Z"].shape[0]
    m_cap, cap_name = cap_of(config, data)
    steps = [Step(**record) for record in path]
    reason = stop_reason(steps, data.n, m_cap, cap_name, False, gain_per_row=config.tol, decline=True)
    if reason is not None:
        return None, reason
    asked = min(2 * M, m_cap) - M
    extra = _select(params["kernel"], np.asarray(params["Z"]), Xs, asked, rng)
    if extra.shape[0] == 0:
        return None, f"every candidate explained: every candidate row sits on one of the {M} inducing inputs"
    Z_new = jnp.concatenate([params["Z"], jnp.asarray(extra)])
    q_mu, q_sqrt = config.family.extend(params, Z_new)
    grown, last = dict(params, Z=Z_new, q_mu=q_mu, q_sqrt=q_sqrt), ""
    if 2 * extra.shape[0] < min(asked, M):  # the candidates are nearly spanned: sizes after this creep up by little
        last = (
            f"every candidate nearly explained: of {asked} more centres asked at m = {M}, {extra.shape[0]} were not "
            f"determined by the others at the fitted kernel (conditional variance above {RANK_FLOOR:g} of the "
            f"prior); the model is m = {Z_new.shape[0]} with them"
        )
    return grown, last


def record(m: int, objective: float, n_iter: int, seconds: float, start: float) -> dict:
    """One size of the growth as the regressors record it (:class:`~sparsegp.fitting.growth.Step`): without a
    certificate, ``lower`` is the bound itself and ``upper`` NaN; ``n_iter`` counts natural steps and L-BFGS-B
    iterations."""
    nan = float("nan")
    return path_records([Step(int(m), objective, objective, nan, int(n_iter), seconds, start, nan)])[0]


def as_record(r: dict) -> dict:
    """A growth record of a model file written before the records were the regressors' ({"m", "bound",
    "n_iter", "natural_steps", "seconds"}), in the current schema; a current record unchanged."""
    if "objective" in r:
        return r
    return record(r["m"], r["bound"], r["n_iter"] + r.get("natural_steps", 0), r["seconds"], float("nan"))


def natural_q(config: VariationalConfig, data, params: dict, chunk: int, desc: str, loose: float = LOOSE):
    """q(v) by natural-gradient steps (step 3), the kernel, Z and b held: (params, steps taken, the bound
    before the first step).

    Each pass over the rows gives the bound at the current q and the rows' sites for the next step; a step
    that lowers the bound is retried at half the size from the last accepted q, and a step that succeeds
    doubles the size again (up to 1)."""

    def at(p):
        P, h, e = data.site_sums(config.family, p, chunk, config.input_scale)
        return P, h, float(e) - float(config.family.kl(p))

    P, h, value = at(params)
    first, rho, steps = value, 1.0, 0
    with progress_bar(total=NATURAL_STEPS, desc=desc, verbose=config.verbose) as bar, _keeping(params) as kept:
        while steps < NATURAL_STEPS:
            q_mu, q_sqrt = config.family.natural_step(params, P, h, rho)
            trial = dict(params, q_mu=q_mu, q_sqrt=q_sqrt)
            P_t, h_t, v_t = at(trial)
            steps += 1
            bar.update(1)
            if not np.isfinite(v_t) or v_t <= value:
                rho *= 0.5
                if rho < SMALLEST_STEP:
                    break
                continue
            gain, rho = v_t - value, min(1.0, 2.0 * rho)
            params, P, h, value = trial, P_t, h_t, v_t
            kept["params"] = params
            bar.set_postfix(bound=f"{value:.6g}")
            if gain < loose * config.tol * data.n:
                break
    return params, steps, first


@contextmanager
def _keeping(params):
    """A KeyboardInterrupt in the block comes out as :class:`~.training.Interrupted` with ``kept["params"]``, the
    last accepted state (every accepted natural step raised the bound)."""
    kept = {"params": params}
    try:
        yield kept
    except KeyboardInterrupt:
        raise Interrupted(None, None, kept["params"]) from None


def fit_variational(config: VariationalConfig, data, save=None) -> VariationalFit:
    """Steps 1-5 of the module docstring on ``data`` (:class:`InMemoryRows`, or the Dask partitions of
    :class:`sparsegp.backends.dask_rows.DaskRows`): its counts and columns' spread, the targets'
    summary for the likelihood's start (``target_summary``: targets and weights), the rows it holds in memory
    (``pool``: all of them in memory, a random sample on Dask) for the selection and the check,
    ``problem(family, chunk, s)``, what :func:`sparsegp.fitting.training.minimize` evaluates, and
    ``site_sums(family, params, chunk, s)``, the rows' sites for the natural steps (the likelihood is
    ``params["likelihood"]``). ``save(fit)``, with ``config.checkpoint``, writes a checkpoint: the state
    reached, as a :class:`VariationalFit`."""
    t0 = time.perf_counter()
    rng = np.random.default_rng(config.random_state)
    config = dataclasses.replace(config, input_scale=scale_from_variances(data.column_std**2))
    s = config.input_scale
    X_pool, y_pool = data.pool
    Xs = X_pool / s
    if config.warm is None:
        params, path = _start(config, data, Xs, rng), []
    else:  # the fitted parameters for inputs divided by s, and the growth's path so far
        fitted = config.warm["params"]
        Z = jnp.asarray(np.asarray(fitted["Z"]) / s)
        params = {k: jnp.asarray(v) for k, v in fitted.items() if k not in ("kernel", "likelihood")}
        params = dict(params, kernel=fitted["kernel"].for_scaled_inputs(s), likelihood=fitted["likelihood"], Z=Z)
        path = [as_record(r) for r in config.warm["path"]]
    n_iter, reason = 0, ""
    checkpointer = None
    if config.checkpoint is not None and save is not None:

        def write(p, path, problem, **where):
            m = int(p["Z"].shape[0])
            reason = f"checkpoint at m = {m}: the state the fit had reached (it was still running)"
            reached = record(m, -_negative_bound(problem, p), 0, time.perf_counter() - t0, float("nan"))
            save(_finish(config, p, [*path, reached], reason, n_iter, Xs, y_pool))

        checkpointer = Checkpointer(config.checkpoint, write)
        config = dataclasses.replace(config, monitors=(*config.monitors, checkpointer))
    m_cap = cap_of(config, data)[0] if isinstance(config.inducing, str) else None
    clock = Clock(config, data.n, m_cap, t0, certificate=False, gain_per_row=config.tol)
    config = dataclasses.replace(config, monitors=(*config.monitors, clock))
    final, stopping = not isinstance(config.inducing, str), None  # a given set is the model's size at once
    if every_input(config, data):
        params, path, reason, n_iter = _every_input_stage(config, data, params, path, checkpointer, t0)
        fit = _finish(config, params, path, reason, n_iter, Xs, y_pool)
        return fit._replace(estimates=[e._asdict() for e in clock.estimates])
    while True:
        M, t_size = int(params["Z"].shape[0]), time.perf_counter()
        chunk = data.chunk(M * config.likelihood.latent_count(data.n_outputs), config.chunk_size)
        mask, bounds = _mask_and_bounds(config, params)
        problem = data.problem(config.family, chunk, s)
        steps, stopped, start = 0, None, float("nan")
        loose = FINAL if final else LOOSE
        if checkpointer is not None:  # what a checkpoint of this size records beside its parameters
            checkpointer.where = {"path": list(path), "problem": problem}
        try:
            params, steps, start = natural_q(config, data, params, chunk, f"{config.owner}: m = {M}, q", loose)
            start += float(log_hyper_prior(params))  # the bound as the optimiser's objective counts it
            clock.watch(params["Z"], None, [Step(**r) for r in path])  # the natural steps count as the gap before
            desc = f"{config.owner}: m = {M}"
            params, report = _stage(config, problem, params, mask, bounds, data.n, desc, loose)
            objective, iterations = float(report.objective), int(report.n_iter)
        except Interrupted as stop:  # Ctrl-C: this size's best state, and the fit ends there
            params, stopped = stop.params, f"interrupted (KeyboardInterrupt) at m = {M}: the best state reached"
            iterations = 0 if stop.report is None else int(stop.report.n_iter)
            objective = _negative_bound(problem, params)
        n_iter += steps + iterations
        size = record(M, -objective, steps + iterations, time.perf_counter() - t_size, start)
        if path and path[-1]["m"] == M:  # the same size fitted further (converged, or a warm start's): one record
            last = path.pop()
            size.update(n_iter=last["n_iter"] + size["n_iter"], seconds=last["seconds"] + size["seconds"],
                        start=last["start"])  # fmt: skip
        path.append(size)
        if stopped is not None:
            reason = stopped
            break
        if stopping is not None or not isinstance(config.inducing, str):
            reason = stopping or as_given(config, M)
            break
        grown, reason = _doubled(config, params, Xs, path, data, rng)
        if grown is None:  # the model is this size: converge it further (FINAL), then stop for the same reason
            final, stopping = True, reason
            continue
        params = grown
        if reason:  # the model is the grown size: fit it to FINAL, then stop
            final, stopping = True, reason
    fit = _finish(config, params, path, reason, n_iter, Xs, y_pool)
    return fit._replace(estimates=[e._asdict() for e in clock.estimates])


def every_input(config: VariationalConfig, data) -> bool:
    """Whether the growth is replaced by its last size at once, every distinct training input inducing and q by
    :mod:`.every_input`: ``inducing="auto"``, the rows in memory, at most EVERY_INPUT_ROWS distinct inputs and
    no more than the growth's largest m (:func:`largest_m`: the growth would end at every input or short of it),
    and a log-concave likelihood (its optimal q has the site form; where it is not, as Student-t's and
    robust-max's, a row's site precision may be negative)."""
    if not (isinstance(config.inducing, str) and isinstance(data, InMemoryRows) and config.likelihood.log_concave):
        return False
    latents = config.likelihood.latent_count(data.n_outputs)
    return data.n_distinct <= min(EVERY_INPUT_ROWS, largest_m(config, data.n, latents))


def _every_input_stage(config: VariationalConfig, data, params: dict, path: list, checkpointer, t0: float):
    """The model at every distinct input (:func:`every_input`), converged to FINAL * tol: (params, path, stop
    reason, iterations and natural steps)."""
    rows, s = data.rows, config.input_scale
    M, t_size = rows.X.shape[0], time.perf_counter()
    theta = {k: params[k] for k in ("kernel", "likelihood", "mean")}
    q_mu, q_sqrt = config.family.start(M, params["q_mu"].shape[1])
    whole = dict(params, Z=jnp.asarray(rows.X / s), q_mu=jnp.asarray(q_mu), q_sqrt=jnp.asarray(q_sqrt))
    mask, bounds = _mask_and_bounds(config, whole)
    if checkpointer is not None:
        checkpointer.where = {"path": list(path), "problem": data.problem(config.family, data.chunk(M, None), s)}
    desc, progress = f"{config.owner}: m = {M} (every input)", FINAL * config.tol * data.n
    reason = (
        f"every distinct input: {M} distinct training inputs (at most {EVERY_INPUT_ROWS}), every one inducing at "
        "once: the full variational GP, q by natural steps"
    )
    try:
        params, report, steps, start = fit_every_input(
            config, rows.X / s, rows.y, rows.w, theta, mask, bounds, desc, progress, STAGE_WARMUP,
            optimiser_callback(config),
        )  # fmt: skip
        objective, iterations = float(report.objective), int(report.n_iter)
        _stage_warnings(config, report, params, mask)
    except Interrupted as stop:
        params, reason = stop.params, f"interrupted (KeyboardInterrupt) at m = {M}: the best state reached"
        iterations, steps, start = 0 if stop.report is None else int(stop.report.n_iter), 0, float("nan")
        objective = _negative_bound(data.problem(config.family, data.chunk(M, None), s), params)
    size = record(M, -objective, steps + iterations, time.perf_counter() - t_size, start)
    return params, [*path, size], reason, steps + iterations


def _finish(config, params, path, reason: str, n_iter: int, Xs, y_pool) -> VariationalFit:
    """Step 5 at ``params`` (for the inputs divided by the fit's scale), and the fit in the inputs' own units."""
    s = config.input_scale
    loo_rows = loo_sample(Xs.shape[0])  # the regressors' sample of the training rows
    post = config.family.posterior(params)
    batches = np.array_split(loo_rows, max(1, -(-loo_rows.size // 1024)))
    cavities = [
        config.family.loo_cavity(post, params["likelihood"], jnp.asarray(Xs[b]), jnp.asarray(y_pool[b]))
        for b in batches
    ]
    loo_mean, loo_var = (np.concatenate([np.asarray(c[k]) for c in cavities]) for k in (0, 1))
    params = dict(params, kernel=params["kernel"].for_scaled_inputs(1.0 / s), Z=np.asarray(params["Z"]) * s)
    params = {k: (v if k in ("kernel", "likelihood") else np.asarray(v)) for k, v in params.items()}
    fit_bound = float(path[-1]["objective"])
    return VariationalFit(params, fit_bound, path, reason, int(n_iter), loo_mean, loo_var, y_pool[loo_rows])


class InMemoryRows:
    """The training rows in memory (one weighted row per distinct input and target): the bound is one compiled
    program over row chunks, its arrays passed to minimize as ``args``."""

    def __init__(self, rows: WeightedRows):
        self.rows = rows
        self.n, self.n_outputs, self.n_distinct = rows.n, rows.n_outputs, rows.X.shape[0]
        with np.errstate(over="ignore", invalid="ignore"):
            self.column_std = np.std(rows.X, axis=0)
        self.target_summary = (rows.y, rows.w)
        self.pool = (rows.X, rows.y)
        self._scaled: tuple = (None, ())

    def chunk(self, width: int, chunk_size) -> int:
        return chunk_size_for(self.rows.X.shape[0], width, chunk_size)

    def _args(self, s: float):
        """The rows as device arrays, inputs divided by ``s`` (made once per s: every stage reuses them)."""
        if self._scaled[0] != s:
            r = self.rows
            self._scaled = (s, (jnp.asarray(r.X / s), jnp.asarray(r.y), jnp.asarray(r.w)))
        return self._scaled[1]

    def problem(self, family, chunk: int, s: float):
        return family.negative_bound(chunk), self._args(s), None

    def site_sums(self, family, params, chunk: int, s: float):
        return family.site_sums(params, *self._args(s), chunk)


__all__ = [
    "VariationalConfig",
    "WeightedRows",
    "VariationalFit",
    "collapse_rows",
    "fit_variational",
    "InMemoryRows",
    "FIRST_INDUCING",
]
