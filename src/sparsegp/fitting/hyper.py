"""The start and the hyper-parameter stage every regressor's fit shares: data-driven initial values, the
optimiser's bounds, weak hyper-priors on tiny data, one L-BFGS-B stage and its convergence warnings.

Pure functions of a :class:`~sparsegp.fitting.config.FitConfig`: each stage returns what it fitted
(:class:`Stage`), nothing is kept between calls.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from sklearn.exceptions import ConvergenceWarning

from ..errors import DataWarning, InputError
from ..kernels import Kernel, SquaredExponential
from ..options import spelled
from ..priors import LogNormal
from ..transforms import RAW_MAX, to_positive, to_raw
from ..validation import check_int, check_positive
from .config import FitConfig
from .training import minimize

# Weak hyper-priors used when there are fewer than two samples per free hyper-parameter (see
# tiny_data_prior): sd of the log-normals, and the noise's prior median (normalised targets).
TINY_DATA_LOG_SD = 1.0
TINY_DATA_NOISE = 0.1
CONSTANT_SPREAD = 1e-8  # a column's spread, relative to the inputs' RMS spread, below which it counts as constant


def input_scale(X: np.ndarray) -> float:
    """The inputs' RMS spread sqrt(mean_d var(X_d)) (1 for constant or overflowing inputs).

    The regressors fit on X / s: the start, the optimiser's steps and the bounds then follow the
    units of X exactly, so the same data in other units give the same fit up to rounding.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        return scale_from_variances(np.var(X, axis=0))


def scale_from_variances(variances) -> float:
    """:func:`input_scale` from the columns' variances (computed elsewhere, e.g. by Dask)."""
    with np.errstate(over="ignore", invalid="ignore"):
        spread = float(np.sqrt(np.mean(variances)))
    return spread if np.isfinite(spread) and spread > 0 else 1.0


def params_for_scaled_inputs(params: dict, s: float) -> dict:
    """``params`` (kernel, noise, optional inducing inputs Z) rewritten for inputs divided by ``s``."""
    out = dict(params, kernel=params["kernel"].for_scaled_inputs(s))
    if "Z" in out:
        out["Z"] = out["Z"] / s
    return out


def too_few(n_samples: int, n_free: int) -> bool:
    """Fewer than two samples per free hyper-parameter."""
    return bool(n_free) and n_samples < 2 * n_free


def initial_kernel(config: FitConfig, column_std, n_samples: int) -> Kernel:
    """The starting kernel for inputs with these columns' standard deviations, divided by s.

    The default is an ARD squared exponential with each length-scale at its column's standard
    deviation (1 for a constant column, or one that varies by less than CONSTANT_SPREAD of the RMS spread), so the start does not depend on the units either; with fewer
    than two samples per hyper-parameter it carries weak log-normal priors about that start.
    """
    s = config.input_scale
    D = np.size(column_std)
    if config.warm is not None:  # warm_start: the fitted kernel
        try:
            config.warm.kernel.check_input_dim(D)
        except InputError as exc:
            raise InputError(f"warm_start=True continues from the fitted kernel, but X has {D} features ({exc}): "
                             "fit with warm_start=False") from None  # fmt: skip
        return config.warm.kernel.for_scaled_inputs(s)
    if config.kernel is None:
        spread = np.asarray(column_std, dtype=float) / s
        # a column whose spread is rounding error (a constant column standardised elsewhere) starts at 1:
        # a length-scale at its spread would make K's entries hang on that rounding
        lengthscale = np.where(spread > CONSTANT_SPREAD, spread, 1.0)
        return se_ard_start(lengthscale, config.optimize is True and too_few(n_samples, D + 2))
    return users_kernel(config.kernel, D, s)


def se_ard_start(lengthscale, weak_priors: bool) -> Kernel:
    """The default start of every fit: SE-ARD at ``lengthscale`` with variance 1, and where ``weak_priors``
    (too few rows per hyper-parameter) weak log-normal priors about that start (sd TINY_DATA_LOG_SD in log)."""
    priors = None
    if weak_priors:
        priors = {
            "lengthscale": LogNormal(np.log(lengthscale), TINY_DATA_LOG_SD),
            "variance": LogNormal(0.0, TINY_DATA_LOG_SD),
        }
    return SquaredExponential(lengthscale=lengthscale, variance=1.0, priors=priors)


def users_kernel(kernel, D: int, s: float) -> Kernel:
    """The kernel a user gave, checked against the D inputs and rewritten for inputs divided by ``s``."""
    if not isinstance(kernel, Kernel):
        raise InputError(f"kernel must be a sparsegp.kernels.Kernel, got {type(kernel).__name__}")
    kernel.check_input_dim(D)
    return kernel.for_scaled_inputs(s)


def initial_noise(config: FitConfig, targets: int = 0):
    """The noise's start, at least ``min_noise``: a float, or one per target where ``noise`` is a vector (then y has
    ``targets`` > 0 columns, as many as its entries: :mod:`sparsegp.approximations.per_target`)."""
    min_noise = float(check_positive(config.min_noise, spelled(config.owner, "min_noise")))
    if config.warm is not None:  # warm_start: the fitted noise
        return _warm_noise(config.warm.noise, targets, min_noise)
    if np.ndim(config.noise) == 0:
        return max(float(check_positive(config.noise, "noise")), min_noise)
    noise = check_positive(config.noise, "noise")
    if noise.ndim != 1 or noise.size != targets:
        raise InputError(
            f"noise of shape {noise.shape} gives one noise variance per target, so y needs {noise.size} columns "
            f"(got {'one target' if targets == 0 else f'{targets} columns'}); pass one number for a noise shared by "
            "every target"
        )
    return np.maximum(noise, min_noise)


def _warm_noise(noise, targets: int, min_noise: float):
    """A fitted noise as the start of a warm-started fit on data with ``targets`` columns (0: one target)."""
    if np.ndim(noise) == 0:
        return max(float(noise), min_noise)
    if np.size(noise) != targets:
        raise InputError(
            f"warm_start=True continues from the fitted noise of {np.size(noise)} targets, but y has "
            f"{'one target' if targets == 0 else f'{targets} columns'}: fit with warm_start=False"
        )
    return np.maximum(np.asarray(noise, dtype=float), min_noise)


def n_targets(moments) -> int:
    """The number of target columns of the training data's ``moments`` (0 for one target, y a vector)."""
    return 0 if np.ndim(moments.y_mean) == 0 else int(np.size(moments.y_mean))


def noise_value(raw_noise):
    """The noise variance of a raw noise: a float, or an array of one per target."""
    value = np.asarray(to_positive(raw_noise))
    return float(value) if value.ndim == 0 else value


def raw_noise_like(raw_noise, value: float):
    """The variance ``value`` as a raw noise of the shape of ``raw_noise`` (every target's, where one per target)."""
    return jnp.full(jnp.shape(raw_noise), to_raw(float(value)))


def raw_bounds(params, min_noise: float):
    """Bounds on the raw parameters: each kernel hyper-parameter's from its transform ([1e-12, 1e12]
    for a positive one, [0, 1e12] for a non-negative one), the noise in [min_noise, 1e12] (value
    space), any other entry (free inducing inputs) unbounded."""
    lower, upper = params["kernel"].raw_bounds()
    lower, upper = {"kernel": lower}, {"kernel": upper}
    lower["raw_noise"] = raw_noise_like(params["raw_noise"], min_noise)
    upper["raw_noise"] = jnp.full(jnp.shape(params["raw_noise"]), RAW_MAX)
    for key, leaf in params.items():
        if key not in lower:
            lower[key] = jax.tree_util.tree_map(lambda a: jnp.full(jnp.shape(a), -jnp.inf), leaf)
            upper[key] = jax.tree_util.tree_map(lambda a: jnp.full(jnp.shape(a), jnp.inf), leaf)
    return lower, upper


def tiny_data_prior(config: FitConfig, mask, n_samples: int, stacklevel: int = 2):
    """The noise prior of a stage fitting ``mask`` on ``n_samples`` rows, with a DataWarning when there are
    fewer than two samples per free kernel and noise hyper-parameter.

    Maximum likelihood on so few points lets the noise fall to min_noise and the error bars
    collapse; log-normal priors (sd TINY_DATA_LOG_SD in log) about the data-driven start keep them
    honest: the default kernel's length-scales about the columns' spread and its variance about 1
    (:func:`initial_kernel`), the noise about TINY_DATA_NOISE of the target variance unless
    ``noise_prior`` is given. Coverage measured in BENCHMARKS.md, "Tiny training sets".
    """
    leaves = jax.tree_util.tree_leaves({"kernel": mask["kernel"], "noise": mask["raw_noise"]})
    n_free = int(sum(np.sum(np.asarray(m)) for m in leaves))
    if not too_few(n_samples, n_free):
        return config.noise_prior
    prior = config.noise_prior
    if prior is None and np.any(mask["raw_noise"]):
        prior = LogNormal(float(np.log(TINY_DATA_NOISE)), TINY_DATA_LOG_SD)
    warnings.warn(
        f"{config.owner}: {n_samples} training samples for {n_free} free hyper-parameters; "
        "maximum-likelihood values are poorly determined from so few points and the error bars tend to be too "
        "narrow, so weak default priors are used (the default kernel's about its start, the noise about "
        f"{TINY_DATA_NOISE:g} of the target variance unless noise_prior is given); to choose, fix some "
        "hyper-parameters (optimize=False, a kernel with fixed=...) or give them priors",
        DataWarning,
        stacklevel=stacklevel + 1,
    )
    return prior


class Stage(NamedTuple):
    """One optimiser stage: the fitted ``params``, the optimiser's ``report`` (None when nothing is fitted)
    and the noise prior it used."""

    params: Any
    report: Any
    noise_prior: Any


class Problem(NamedTuple):
    """What a stage minimises: ``build(noise_prior) -> (objective, args, value_and_grad or None)`` for
    :func:`sparsegp.fitting.training.minimize`, and the number of training rows behind it (the tiny-data rule)."""

    build: Callable
    n_samples: int


def optimise(
    config: FitConfig, problem: Problem, params, mask, desc: str, *, max_iter=None, progress=None, resume=None,
) -> Stage:  # fmt: skip
    """L-BFGS-B over the free entries of ``params`` (a dict with 'kernel' and 'raw_noise').

    Kernel hyper-parameters are boxed to [1e-12, 1e12], the noise variance to [min_noise, 1e12];
    any other entry (free inducing inputs) is unbounded. ``params`` are for the inputs divided by
    ``config.input_scale``; the user's ``callback`` sees them in the inputs' own units. Warns (ConvergenceWarning) when
    the optimiser stopped short of convergence or a hyper-parameter ended at a bound. ``max_iter``
    overrides the configuration's for a stage of a planned length (no restarts, and stopping at it is no
    warning). ``progress``: converged once the objective falls by less than this per iteration (averaged over
    :data:`~sparsegp.fitting.training.PROGRESS_WINDOW` iterations). ``resume``: an earlier run's state to go on from
    (:func:`sparsegp.fitting.training.minimize`).
    """
    check_int(config.n_restarts, spelled(config.owner, "n_restarts"))
    check_int(config.max_iter, spelled(config.owner, "max_iter"), minimum=1)
    if not config.optimize:
        return Stage(params, None, config.noise_prior)
    callback = optimiser_callback(config)

    noise_prior = tiny_data_prior(config, mask, int(problem.n_samples), stacklevel=4)
    objective, args, value_and_grad = problem.build(noise_prior)
    lower, upper = raw_bounds(params, config.min_noise)
    params, report = minimize(
        objective,
        params,
        args=args,
        mask=mask,
        lower=lower,
        upper=upper,
        max_iter=config.max_iter if max_iter is None else max_iter,
        n_restarts=config.n_restarts if max_iter is None else 0,
        rng=config.random_state,
        verbose=config.verbose,
        callback=callback,
        desc=desc,
        value_and_grad=value_and_grad,
        progress=progress,
        resume=resume,
    )
    warn_unconverged(config, report, params, mask, planned_cap=max_iter is not None)
    return Stage(params, report, noise_prior)


def optimiser_callback(config):
    """The optimiser's callback: the fit's monitors' (the scaled parameters), then the user's (the inputs' own
    units, its True stops the run); None where there is neither. Every fit's (the regressors' and the classifier's
    configurations both carry ``callback``, ``monitors`` and ``input_scale``)."""
    user, monitors, scale = config.callback, config.monitors, config.input_scale
    if user is None and not monitors:
        return None

    def callback(iteration, value, p):
        for monitor in monitors:
            monitor(iteration, value, p)
        if user is not None:
            return user(iteration, value, params_for_scaled_inputs(p, 1.0 / scale) if scale != 1.0 else p)
        return False

    return callback


def warn_stopped_short(owner: str, report, advice: str, planned_cap=False, stacklevel: int = 5) -> None:
    """ConvergenceWarning (scikit-learn's class) for an optimiser run that stopped short of convergence, but not for
    one its callback stopped or (``planned_cap``) one that ran the planned number of iterations; ``advice`` says what
    to change. Every fit's stages warn through here."""
    capped = "iterations reached limit" in report.reason.lower()
    if not report.success and "callback" not in report.reason.lower() and not (planned_cap and capped):
        warnings.warn(
            f"{owner}: L-BFGS-B stopped after {report.n_iter} iterations without converging ({report.reason}); "
            f"{advice}",
            ConvergenceWarning,
            stacklevel=stacklevel,
        )


KERNEL_UNITS = "the inputs' standardised scale"  # what a kernel hyper-parameter's box is on


def warn_at_bounds(owner: str, kind: str, obj, free, units: str = KERNEL_UNITS, stacklevel: int = 5) -> None:
    """ConvergenceWarning for each free parameter of ``obj`` (a kernel or a likelihood: a
    :class:`~sparsegp.parameters.Parameterised`; ``free`` its trainable mask) that ended at its optimisation box,
    where the data do not determine it (``units``: the scale the bounds are on). A non-negative parameter (lower
    bound 0) at 0 is a value the data chose."""
    free_values = dict(zip(obj.parameters(), (np.asarray(m) for m in jax.tree_util.tree_leaves(free))))
    transforms = obj.transforms()
    for pname, value in obj.parameters().items():
        t = transforms[pname]
        value = np.asarray(value)
        hit = free_values[pname] & (((t.lower > 0) & (value <= t.lower * 1.001)) | (value >= t.upper * 0.999))
        if np.any(hit):
            warnings.warn(
                f"{owner}: {kind} {pname} ended at its bound ({t.lower:g} or {t.upper:g} on {units}); the data "
                "do not determine it: fix it or give it a prior",
                ConvergenceWarning,
                stacklevel=stacklevel,
            )


def warn_unconverged(config: FitConfig, report, params, mask, planned_cap=False, stacklevel: int = 5):
    """ConvergenceWarning (scikit-learn's class) for a stopped optimiser or a parameter at a bound."""
    name = config.owner
    advice = f"raise {spelled(name, 'max_iter')}, or use {spelled(name, 'n_restarts')} for another start"
    warn_stopped_short(name, report, advice, planned_cap, stacklevel=stacklevel + 1)
    warn_at_bounds(name, "kernel hyper-parameter", params["kernel"], mask["kernel"], stacklevel=stacklevel + 1)
    at_floor = np.asarray(to_positive(params["raw_noise"])) <= float(config.min_noise) * 1.001
    if np.any(np.asarray(mask["raw_noise"]) & at_floor):
        warnings.warn(
            f"{name}: the noise variance ended at its lower bound {spelled(name, 'min_noise')}="
            f"{float(config.min_noise):g} (normalised targets): the model interpolates the training targets; if they "
            f"are noisy, raise {spelled(name, 'min_noise')} or set {spelled(name, 'noise_prior')}",
            ConvergenceWarning,
            stacklevel=stacklevel,
        )
