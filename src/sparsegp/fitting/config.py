"""An estimator's parameters as one frozen, validated configuration: every cross-option rule in one place.

:func:`exact_config` and :func:`sparse_config` read a regressor's ``get_params()`` and raise an
:class:`~sparsegp.errors.InputError` that names the option for anything the fit cannot do; the fit
(:mod:`sparsegp.fitting.pipeline`) then reads only the configuration. Rules that depend on where the data
live (a Dask cluster cannot drop copies, re-select or keep the training rows) are the backend's
(:mod:`sparsegp.backends`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from ..approximations.base import PREDICTIONS, prediction_mode
from ..approximations.registry import APPROXIMATIONS, Approximation
from ..classification.svgp import FAMILY
from ..errors import InputError
from ..likelihoods import Likelihood
from ..likelihoods import named as named_likelihood
from ..linalg import INDUCING_JITTER
from ..options import flat_options, schedule_name
from ..selection import Selector
from ..validation import as_float_matrix, check_int, check_positive
from .checkpoint import as_checkpoint

RESELECT = (None, "alternate", "em", "interleaved")
OPTIMIZE_PARTS = ("hyperparameters", "inducing")
DUPLICATES = ("collapse", "expand", "drop")


class WarmStart(NamedTuple):
    """A fitted regressor's state that a fit with ``warm_start=True`` continues from: the kernel (the inputs'
    units), the noise (normalised targets), and for a sparse model its inducing inputs (the inputs' units), their
    training rows (None unless held at rows) and the growth's path (``inducing="auto"``); ``optimizer``: the last
    L-BFGS-B run's state where it stopped at ``max_iter`` (:mod:`sparsegp.fitting._lbfgsb`), for the first run to go on
    from."""

    kernel: Any
    noise: Any
    Z: Any = None
    idx: Any = None
    path: list | None = None
    optimizer: Any = None


def warm_state(estimator) -> WarmStart | None:
    """What ``estimator``'s next fit continues from: its fitted state where ``warm_start`` is True and it is
    fitted (scikit-learn's convention), else None (a fit from the data-driven start)."""
    if not getattr(estimator, "warm_start", False) or not hasattr(estimator, "kernel_"):
        return None
    return WarmStart(
        estimator.kernel_,
        estimator.noise_,
        Z=getattr(estimator, "Z_", None),
        idx=getattr(estimator, "inducing_indices_", None),
        path=getattr(estimator, "inducing_path_", None),
        optimizer=getattr(getattr(estimator, "optimizer_report_", None), "state", None),
    )


class Learns(NamedTuple):
    """What a fit learns: the kernel's hyper-parameters and the noise; the inducing inputs."""

    hyperparameters: bool
    inducing: bool


@dataclass(frozen=True)
class FitConfig:
    """What every regressor's fit reads (the parameters of :class:`~sparsegp.ExactGPRegressor`)."""

    owner: str  # the estimator's class name, for messages
    kernel: Any
    noise: float
    optimize: Any
    n_restarts: int
    max_iter: int
    normalize_y: bool
    noise_prior: Any
    min_noise: float
    duplicates: str
    random_state: Any
    verbose: bool
    callback: Any
    warm: WarmStart | None = None  # :func:`warm_state`
    # during a fit, what follows it: ``watch(Z, idx, path)`` before each optimiser run over inducing inputs Z, and a
    # call ``(iteration, value, params)`` after each of its iterations (a :class:`~.checkpoint.Checkpointer`, the
    # :class:`~.estimate.Clock`); never stops it
    monitors: tuple = ()
    # the unit the fit measures the inputs in (:func:`~.hyper.scale_from_variances`, set as the fit starts): the
    # optimiser's parameters are for the inputs divided by it, the user sees them in the inputs' own units
    input_scale: float = 1.0

    @property
    def learns(self) -> Learns:
        """What ``optimize`` lets the fit learn."""
        if isinstance(self.optimize, str):
            return Learns(self.optimize == "hyperparameters", self.optimize == "inducing")
        return Learns(bool(self.optimize), bool(self.optimize))


@dataclass(frozen=True)
class SparseConfig(FitConfig):
    """The parameters of :class:`~sparsegp.SparseGPRegressor`, checked together."""

    approximation: str = "vfe"
    inducing: Any = "auto"
    prediction: str = "standard"
    jitter: float = INDUCING_JITTER
    chunk_size: Any = None
    reselect: Any = None
    n_rounds: int = 10
    subset: Any = None
    refine_iter: int = 3
    max_inducing: Any = None
    time_budget: Any = None
    tol: Any = None
    checkpoint: Any = None  # :class:`~.checkpoint.Checkpoint` or None

    @property
    def method(self) -> Approximation:
        return APPROXIMATIONS[self.approximation]

    @property
    def auto(self) -> bool:
        """m chosen by the fit (:mod:`sparsegp.fitting.growth`)."""
        return isinstance(self.inducing, str) and self.inducing == "auto"


def _common(params: dict) -> dict:
    if params["duplicates"] not in DUPLICATES:
        raise InputError(f"duplicates must be one of {DUPLICATES}, got {params['duplicates']!r}")
    if not isinstance(params.get("warm_start", False), (bool, np.bool_)):
        raise InputError(f"warm_start must be True or False, got {params['warm_start']!r}")
    return {
        name: params[name]
        for name in FitConfig.__dataclass_fields__
        if name not in ("owner", "warm", "monitors", "input_scale")
    }


def exact_config(estimator) -> FitConfig:
    """The configuration of an :class:`~sparsegp.ExactGPRegressor`."""
    p = estimator.get_params(deep=False)
    return FitConfig(owner=type(estimator).__name__, warm=warm_state(estimator), **_common(p))


def check_sparse_options(p: dict) -> None:
    """The rules a loaded model must also satisfy (its selector is not saved, so not the selection's)."""
    if p["approximation"] not in APPROXIMATIONS:
        raise InputError(f"approximation must be one of {sorted(APPROXIMATIONS)}, got {p['approximation']!r}")
    prediction_mode(p["prediction"])
    if p["prediction"] not in APPROXIMATIONS[p["approximation"]].predictions:
        allowed = [name for name, a in APPROXIMATIONS.items() if p["prediction"] in a.predictions]
        raise InputError(
            f"prediction={p['prediction']!r} uses the SoR/DTC prior Q_nn + sigma^2 I; "
            f"use approximation {', '.join(map(repr, allowed[:-1]))} or {allowed[-1]!r} with it"
        )
    check_positive(p["jitter"], "jitter")
    _common(p)
    if p["chunk_size"] is not None:
        check_int(p["chunk_size"], "schedule__chunk_size", minimum=1)
    if p["reselect"] not in RESELECT:
        raise InputError(f"reselect must be one of {RESELECT}, got {p['reselect']!r}")
    optimize = p["optimize"]
    if not (isinstance(optimize, (bool, np.bool_)) or optimize in OPTIMIZE_PARTS):
        raise InputError(f"optimize must be True, False or one of {OPTIMIZE_PARTS}, got {optimize!r}")
    if p["subset"] is not None:
        check_int(p["subset"], "schedule__subset", minimum=2)
        if p["reselect"] is not None:
            raise InputError(
                f"subset={p['subset']} and reselect={p['reselect']!r} cannot be combined: the subset "
                "stage learns the inducing inputs by gradient; use schedule=SubsetThenAll(...) alone"
            )
    check_int(p["refine_iter"], "schedule__refine_iter")
    if p["max_inducing"] is not None:
        check_int(p["max_inducing"], "inducing__max_inducing", minimum=1)
    for name, nested in (("time_budget", "inducing__time_budget"), ("tol", "schedule__tol")):
        if p[name] is not None:
            check_positive(p[name], nested)
    if isinstance(p["inducing"], str) and p["inducing"] != "auto":
        raise InputError(f"inducing must be 'auto', a number, row indices, inputs or a selector, got {p['inducing']!r}")


def sparse_config(estimator) -> SparseConfig:
    """The configuration of a :class:`~sparsegp.SparseGPRegressor` about to fit."""
    p = flat_options(estimator.get_params(deep=False), warn=True)
    check_sparse_options(p)
    p["checkpoint"] = as_checkpoint(p["checkpoint"])
    config = SparseConfig(
        owner=type(estimator).__name__,
        warm=warm_state(estimator),
        **_common(p),
        **{name: p[name] for name in SparseConfig.__dataclass_fields__ if name not in FitConfig.__dataclass_fields__},
    )
    if config.reselect is not None:
        kind = f"schedule={schedule_name(config.reselect)}"
        if not isinstance(config.inducing, Selector):
            raise InputError(f"{kind} needs a selector as inducing (e.g. InfoGain(256))")
        if config.learns.inducing:
            raise InputError(
                f"{kind} keeps the inducing inputs at training rows: "
                f"set optimize='hyperparameters' (got optimize={config.optimize!r})"
            )
        check_int(config.n_rounds, "schedule__n_rounds", minimum=1)
        if config.warm is not None:
            raise InputError(
                f"warm_start=True with {kind} is not available (each round re-selects the set from the data); fit "
                "with warm_start=False"
            )
    asked = config.inducing if isinstance(config.inducing, (int, np.integer)) else None
    if config.warm is not None and asked is not None and not isinstance(asked, bool):
        m = np.shape(config.warm.Z)[0]
        if int(asked) != m:
            raise InputError(
                f"warm_start=True continues from the fitted {m} inducing inputs, but inducing={config.inducing} asks "
                "for another number: fit with warm_start=False, or inducing='auto' to let the set grow"
            )
    return config


@dataclass(frozen=True)
class VariationalConfig:
    """What the variational fit reads (:mod:`~sparsegp.fitting.variational`): the parameters of
    :class:`~sparsegp.SparseGPClassifier`, or of a :class:`~sparsegp.SparseGPRegressor` with a non-Gaussian
    likelihood, checked."""

    owner: str
    kernel: Any
    likelihood: Likelihood
    inducing: Any  # "auto", an int m, or an (m, D) array
    max_inducing: Any  # an int, or None: largest_m's device cap
    tol: float
    max_iter: int
    optimize: bool
    learn_inducing: bool
    chunk_size: Any
    random_state: Any
    verbose: bool
    callback: Any = None
    warm: Any = None  # warm_start: {"params": fitted (the inputs' units), "path": the growth's, "classes"}
    input_scale: float = 1.0  # the inputs' unit of the fit (set as it starts): parameters are for X divided by it
    family: Any = FAMILY  # the variational family of q(u) (:class:`~sparsegp.classification.svgp.WhitenedGaussian`)
    checkpoint: Any = None  # :class:`~.checkpoint.Checkpoint` or None
    monitors: tuple = ()  # called ``(iteration, value, params)`` after each optimiser iteration (the checkpointer)


def classifier_config(estimator, n_classes: int, D: int, inducing, warm) -> VariationalConfig:
    """A :class:`~sparsegp.SparseGPClassifier`'s options, checked, for ``n_classes`` classes and ``D`` inputs;
    ``inducing`` resolved by the estimator (an IVM's active set is already rows), ``warm`` its warm-start state."""
    if isinstance(inducing, str):
        if inducing != "auto":
            raise InputError(f"inducing must be 'auto', an int or an (m, D) array, got {inducing!r}")
    elif np.ndim(inducing) == 0:
        inducing = check_int(inducing, "inducing", minimum=1)
    else:
        inducing = as_float_matrix(inducing, "inducing", n_features=D, owner=type(estimator).__name__)
    e = estimator
    return VariationalConfig(
        owner=type(e).__name__,
        kernel=e.kernel,
        likelihood=named_likelihood(e.likelihood, n_classes),
        inducing=inducing,
        max_inducing=None if e.max_inducing is None else check_int(e.max_inducing, "max_inducing", minimum=1),
        tol=float(check_positive(e.tol, "tol")),
        max_iter=check_int(e.max_iter, "max_iter", minimum=1),
        optimize=bool(e.optimize),
        learn_inducing=bool(e.learn_inducing),
        chunk_size=None if e.chunk_size is None else check_int(e.chunk_size, "chunk_size", minimum=1),
        random_state=e.random_state,
        verbose=bool(e.verbose),
        callback=e.callback,
        checkpoint=as_checkpoint(e.checkpoint),
        warm=warm,
    )


__all__ = [
    "DUPLICATES",
    "OPTIMIZE_PARTS",
    "PREDICTIONS",
    "RESELECT",
    "FitConfig",
    "SparseConfig",
    "WarmStart",
    "VariationalConfig",
    "check_sparse_options",
    "classifier_config",
    "exact_config",
    "sparse_config",
    "warm_state",
]


@dataclass(frozen=True)
class IVMConfig:
    """The parameters of :class:`~sparsegp.IVMClassifier`, checked together: how the kernel is learnt
    (``learning``: "validation", "evidence" or None, the kernel kept), the bias (None: "auto", the probit bias of
    the class shares), v_b, and the options of :func:`~sparsegp.classification.ivm.ivm_select`."""

    size: int
    learning: str | None
    bias: float | None
    bias_variance: float
    select: dict


def _ivm_learning(mode, kernel) -> str | None:
    if isinstance(mode, str) and mode == "auto":
        return "validation" if kernel is None else None
    if isinstance(mode, (bool, np.bool_)):
        return "evidence" if mode else None
    if isinstance(mode, str) and mode in ("validation", "evidence"):
        if mode == "validation" and kernel is not None:
            raise InputError("learn_kernel='validation' chooses among its own grid of kernels; leave kernel=None")
        return mode
    raise InputError(f"learn_kernel must be 'auto', 'validation', 'evidence', True or False, got {mode!r}")


def ivm_config(estimator) -> IVMConfig:
    """The configuration of an :class:`~sparsegp.IVMClassifier`, or an :class:`~sparsegp.InputError` naming the
    first parameter out of its range."""
    p = estimator.get_params(deep=False)
    size = check_int(p["size"], "size", minimum=1)
    for name in ("n_random", "n_full", "monitor_size", "check_every", "patience"):
        check_int(p[name], name, minimum=1 if name in ("monitor_size", "check_every", "patience") else 0)
    bias = None
    if isinstance(p["bias"], str):
        if p["bias"] != "auto":
            raise InputError(f"bias must be 'auto' or a number, got {p['bias']!r}")
    else:
        bias = float(np.asarray(p["bias"]))
        if not np.isfinite(bias):
            raise InputError(f"bias must be finite, got {p['bias']!r}")
    vb = float(np.asarray(p["bias_variance"]))
    if not np.isfinite(vb) or vb < 0:
        raise InputError(f"bias_variance (v_b) must be a finite number >= 0, got {p['bias_variance']!r}")
    options = ("criterion", "n_random", "n_full", "index_size", "tau", "stop", "monitor_size", "check_every")
    select = {name: p[name] for name in (*options, "patience", "random_state", "verbose")}
    return IVMConfig(size, _ivm_learning(p["learn_kernel"], p["kernel"]), bias, vb, select)
