"""The grouped options of :class:`~sparsegp.SparseGPRegressor`: each object carries the options of one choice, as a
selector does for ``inducing=``.

- ``schedule=``: how the optimisation runs. :class:`Joint` (the default, ``"joint"``) learns everything at once;
  :class:`Alternate`, :class:`VariationalEM` and :class:`Interleaved` combine a selector's greedy choice with
  learning the hyper-parameters (the papers' schemes); :class:`SubsetThenAll` is the large-n strategy. Each
  carries the optimiser's limits (``max_iter``, ``n_restarts``, ``tol``), the statistics' ``chunk_size`` and the
  ``checkpoint``.
- ``inducing=``: :class:`Auto` (``"auto"``) lets the fit choose m, up to ``max_inducing`` or a ``time_budget``.
- ``noise=``: :class:`Noise` adds a hyper-prior and a lower bound to the initial noise variance.

Each is immutable: ``set_params(schedule__max_iter=50)`` (and a grid search over it) puts a modified copy in the
estimator, never changing an object another estimator holds. The fit reads them through :func:`flat_options`,
which is also the form a model file keeps.
"""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass
from typing import Any, ClassVar

from ._docstrings import fill
from .errors import InputError

DEPRECATED = "deprecated"  # the default of a constructor alias kept for one version

# the options every schedule carries (the numpydoc entries of each)
LIMITS = """max_iter : int
    L-BFGS-B iterations per start (per round with :class:`Alternate` / :class:`VariationalEM`; on the subset
    with :class:`SubsetThenAll`).
n_restarts : int
    Extra L-BFGS-B starts from perturbed initial points; the best is kept.
tol : float or None
    Convergence on progress: a run stops once the objective rose by less than ``tol`` nats per training row
    per iteration (averaged over ten iterations; 10 ``tol`` for the sizes ``inducing="auto"`` passes through).
    None: 1e-4 with ``inducing="auto"``; with an explicit set, L-BFGS-B's own tests only (``max_iter`` caps
    either way).
chunk_size : int or None
    Training rows per chunk of the statistics (None: about 8 MiB of K_uf).
checkpoint : str, path, Checkpoint or None
    A model file the fit saves the state it has reached to, at most every 60 seconds
    (``Checkpoint(path, every=seconds)`` for another interval; :mod:`sparsegp.fitting.checkpoint`), and the
    fitted model at the end. :func:`~sparsegp.load_model` reads it; with ``warm_start=True`` a fit goes on from
    it.
"""


@dataclass(frozen=True, repr=False)
class _Options:
    def get_params(self, deep=True):
        """The options by name (scikit-learn's nested ``schedule__max_iter`` reads them here)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    def __repr__(self):
        """Only the options that differ from their defaults, as scikit-learn prints an estimator."""
        changed = [
            f"{f.name}={getattr(self, f.name)!r}"
            for f in dataclasses.fields(self)
            if repr(getattr(self, f.name)) != repr(f.default)
        ]
        return f"{type(self).__name__}({', '.join(changed)})"

    def replace(self, **changes):
        """A copy with ``changes``, or an :class:`~sparsegp.InputError` naming an option it does not have."""
        unknown = set(changes) - set(self.get_params())
        if unknown:
            raise InputError(
                f"{type(self).__name__} has no option {sorted(unknown)[0]!r}; it has {sorted(self.get_params())}"
            )
        return dataclasses.replace(self, **changes)


@fill(limits=LIMITS)
@dataclass(frozen=True, kw_only=True, repr=False)
class Schedule(_Options):
    """How a fit runs, and its limits: the base of the schedules.

    Parameters
    ----------
    {limits}

    Examples
    --------
    >>> from sparsegp.options import Joint, Schedule
    >>> isinstance(Joint(), Schedule), Joint().max_iter
    (True, 500)
    """

    reselect: ClassVar[str | None] = None  # the fit's name for the scheme
    max_iter: int = 500
    n_restarts: int = 0
    tol: Any = None
    chunk_size: Any = None
    checkpoint: Any = None


@fill(limits=LIMITS)
@dataclass(frozen=True, kw_only=True, repr=False)
class Joint(Schedule):
    """The default schedule: every part that ``optimize`` names learnt at once by L-BFGS-B on all rows (Titsias
    sec. 4, SPGP). ``schedule="joint"`` is ``Joint()``.

    Parameters
    ----------
    {limits}

    Examples
    --------
    >>> from sparsegp.options import Joint
    >>> Joint(max_iter=50)
    Joint(max_iter=50)
    """


@fill(limits=LIMITS)
@dataclass(frozen=True, kw_only=True, repr=False)
class Alternate(Schedule):
    """``n_rounds`` rounds of selection at fixed hyper-parameters, then evidence maximisation at the fixed set
    (Quiñonero-Candela & Rasmussen's HPEV-SGEV / HPEV-SGGP, 10 rounds; ``max_iter`` per round). Needs a selector
    as ``inducing`` and ``optimize="hyperparameters"``.

    Parameters
    ----------
    n_rounds : int
        Rounds of selection and learning.
    {limits}

    Examples
    --------
    >>> from sparsegp.options import Alternate
    >>> Alternate(n_rounds=5, max_iter=100)
    Alternate(max_iter=100, n_rounds=5)
    """

    reselect: ClassVar[str | None] = "alternate"
    n_rounds: int = 10


@fill(limits=LIMITS)
@dataclass(frozen=True, kw_only=True, repr=False)
class VariationalEM(Schedule):
    """Titsias's variational EM: the set grown in ``n_rounds`` E-steps (greedy inclusions at fixed
    hyper-parameters), each followed by an M-step (``max_iter`` L-BFGS-B iterations at the fixed set); with
    ``approximation="vfe"`` the bound never decreases. Needs a selector as ``inducing`` and
    ``optimize="hyperparameters"``.

    Parameters
    ----------
    n_rounds : int
        E-steps, each followed by an M-step.
    {limits}

    Examples
    --------
    >>> from sparsegp import SparseGPRegressor
    >>> from sparsegp.options import VariationalEM
    >>> from sparsegp.selection import VFEGreedy
    >>> model = SparseGPRegressor(inducing=VFEGreedy(128), optimize="hyperparameters", schedule=VariationalEM(n_rounds=8))
    >>> model.schedule.n_rounds
    8
    """

    reselect: ClassVar[str | None] = "em"
    n_rounds: int = 10


@fill(limits=LIMITS)
@dataclass(frozen=True, kw_only=True, repr=False)
class Interleaved(Schedule):
    """Seeger et al.'s scheme: the set re-selected at every new search direction of an L-BFGS-B run and held
    fixed during its line search. Needs a selector as ``inducing`` and ``optimize="hyperparameters"``.

    Parameters
    ----------
    {limits}

    Examples
    --------
    >>> from sparsegp.options import Interleaved
    >>> Interleaved(max_iter=200).reselect
    'interleaved'
    """

    reselect: ClassVar[str | None] = "interleaved"


@fill(limits=LIMITS)
@dataclass(frozen=True, kw_only=True, repr=False)
class SubsetThenAll(Schedule):
    """The large-n strategy: learn the hyper-parameters and inducing inputs on ``subset`` training rows drawn at
    random (``max_iter`` iterations at O(subset m^2) each), refine them on all rows for ``refine_iter`` iterations
    (each one or more passes over the data), and compute the posterior from all rows in one pass.

    Parameters
    ----------
    subset : int
        Training rows of the first stage.
    refine_iter : int
        L-BFGS-B iterations on all rows after the subset stage (0: none).
    {limits}

    Examples
    --------
    >>> from sparsegp.options import SubsetThenAll
    >>> SubsetThenAll(subset=2000, max_iter=100).refine_iter
    3
    """

    subset: Any = None
    refine_iter: int = 3


@dataclass(frozen=True, repr=False)
class Auto(_Options):
    """``inducing=Auto(...)``: the fit chooses m (:mod:`sparsegp.fitting.growth`); ``inducing="auto"`` is
    ``Auto()``.

    Parameters
    ----------
    max_inducing : int or None
        The largest m. None: the device's, 1,024 on a CPU and more on an accelerator with the memory
        (:func:`sparsegp.fitting.growth.max_inducing`).
    time_budget : float or None
        Seconds after which the set stops growing.

    Examples
    --------
    >>> from sparsegp.options import Auto
    >>> Auto(max_inducing=64)
    Auto(max_inducing=64)
    """

    max_inducing: Any = None
    time_budget: Any = None


@dataclass(frozen=True, repr=False)
class Noise(_Options):
    """``noise=Noise(...)``: the initial Gaussian noise variance with its hyper-prior and lower bound; a number
    for ``noise=`` is ``Noise(value)``.

    Parameters
    ----------
    value : float or array of shape (k,)
        Initial noise variance sigma^2 (normalised targets); k values give each of k targets its own.
    prior : prior or None
        Hyper-prior on the noise variance (:mod:`sparsegp.priors`).
    minimum : float
        Lower bound on the noise variance during optimisation.

    Examples
    --------
    >>> from sparsegp.options import Noise
    >>> Noise(0.1, minimum=1e-4).minimum
    0.0001
    """

    value: Any = 1.0
    prior: Any = None
    minimum: float = 1e-6


SCHEDULES = {"joint": Joint}
GROUPS = ("schedule", "inducing", "noise")  # the parameters that hold option objects
# the flat names the fit and a model file use, by the group that holds them now
_SCHEDULE_FIELDS = ("max_iter", "n_restarts", "tol", "chunk_size", "checkpoint")
ALIASES = {
    **{name: "schedule" for name in (*_SCHEDULE_FIELDS, "reselect", "n_rounds", "subset", "refine_iter")},
    "max_inducing": "inducing",
    "time_budget": "inducing",
    "noise_prior": "noise",
    "min_noise": "noise",
}
_BY_RESELECT: dict[str | None, type[Schedule]] = {
    kind.reselect: kind for kind in (Alternate, VariationalEM, Interleaved)
}


# an alias's option within its group, where the names differ
_OPTION = {"noise_prior": "prior", "min_noise": "minimum"}


def spelled(owner: str, name: str) -> str:
    """An option as ``owner``'s constructor takes it, for messages: :class:`~sparsegp.SparseGPRegressor`'s
    grouped options by their nested names (``schedule__max_iter``), the other estimators' as they are."""
    if owner != "SparseGPRegressor" or name not in ALIASES:
        return name
    return f"{ALIASES[name]}__{_OPTION.get(name, name)}"


def as_schedule(value) -> Schedule:
    """``schedule=`` as an object: a :class:`Schedule`, or the name of one (``"joint"``)."""
    if isinstance(value, Schedule):
        return value
    if isinstance(value, str) and value in SCHEDULES:
        return SCHEDULES[value]()
    raise InputError(
        f"schedule must be 'joint' or a schedule of sparsegp.options (Joint, Alternate, VariationalEM, Interleaved, "
        f"SubsetThenAll), got {value!r}"
    )


def _as_group(name, value):
    """The object a nested ``name__option`` modifies: the default's object where the parameter is a plain value."""
    if name == "schedule":
        return as_schedule(value)
    if name == "inducing" and isinstance(value, str) and value == "auto":
        return Auto()
    if name == "noise" and not isinstance(value, Noise):
        return Noise(value)
    return value


def set_grouped(estimator, params: dict, set_params) -> None:
    """scikit-learn's ``set_params`` for ``estimator`` with grouped options: the plain parameters first (through
    ``set_params``, scikit-learn's own), then each nested ``group__option`` as a modified copy of the group's
    object, or through ``set_params`` where the group holds something else (a selector's own options)."""
    set_params(**{k: v for k, v in params.items() if "__" not in k})
    for key, value in params.items():
        group, _, option = key.partition("__")
        if not option:
            continue
        held = _as_group(group, getattr(estimator, group)) if group in GROUPS and "__" not in option else None
        if isinstance(held, _Options):
            setattr(estimator, group, held.replace(**{option: value}))
        else:
            set_params(**{key: value})


def flat_options(params: dict, *, warn: bool = False) -> dict:
    """The flat options the fit reads (``max_iter``, ``reselect``, ``max_inducing``, ``noise_prior``, ...) from an
    estimator's grouped parameters. A deprecated alias given to the constructor overrides its group's option,
    with a FutureWarning (``warn``)."""
    flat = {k: v for k, v in params.items() if k not in ALIASES}
    schedule = as_schedule(params["schedule"])
    flat.update({name: getattr(schedule, name) for name in _SCHEDULE_FIELDS})
    flat["reselect"] = schedule.reselect
    flat["n_rounds"] = getattr(schedule, "n_rounds", 10)
    flat["subset"] = getattr(schedule, "subset", None)
    flat["refine_iter"] = getattr(schedule, "refine_iter", 3)
    if isinstance(schedule, SubsetThenAll) and schedule.subset is None:
        raise InputError("SubsetThenAll needs the size of its subset: SubsetThenAll(subset=2000)")
    inducing = params["inducing"]
    auto = inducing if isinstance(inducing, Auto) else Auto()
    flat["inducing"] = "auto" if isinstance(inducing, Auto) else inducing
    flat["max_inducing"], flat["time_budget"] = auto.max_inducing, auto.time_budget
    noise = params["noise"] if isinstance(params["noise"], Noise) else Noise(params["noise"])
    flat["noise"], flat["noise_prior"], flat["min_noise"] = noise.value, noise.prior, noise.minimum
    for name in ALIASES:
        value = params.get(name, DEPRECATED)
        if isinstance(value, str) and value == DEPRECATED:
            continue
        if warn:
            warnings.warn(
                f"{name}= is deprecated and will be removed in the next version: use {_new_form(name, value)}",
                FutureWarning,
                stacklevel=4,
            )
        flat[name] = value
    return flat


def schedule_name(reselect) -> str:
    """The schedule that a fit's ``reselect`` names, as a user writes it (for messages)."""
    kind = _BY_RESELECT.get(reselect)
    return "Joint()" if kind is None else f"{kind.__name__}()"


def _new_form(name, value) -> str:
    if name == "reselect":
        return f"schedule={schedule_name(value)}"
    if name in ("subset", "refine_iter"):
        return f"schedule=SubsetThenAll({name}={value!r})"
    if name == "n_rounds":
        return f"schedule=Alternate(n_rounds={value!r}) or VariationalEM(n_rounds={value!r})"
    group = ALIASES[name]
    option = _OPTION.get(name, name)
    holder = {"schedule": "Joint", "inducing": "Auto", "noise": "Noise"}[group]
    return f"{group}={holder}({option}={value!r}) (sparsegp.options), or set_params({group}__{option}=...)"


def grouped_options(params: dict) -> dict:
    """The constructor's grouped parameters from flat options ``params`` (a model file's), the inverse of
    :func:`flat_options`: a plain value where the group holds only defaults."""
    out = {k: v for k, v in params.items() if k not in ALIASES}
    common = {name: params[name] for name in _SCHEDULE_FIELDS if name in params}
    reselect, subset = params.get("reselect"), params.get("subset")
    if subset is not None:
        out["schedule"] = SubsetThenAll(subset=subset, refine_iter=params.get("refine_iter", 3), **common)
    elif reselect is not None:
        kind = _BY_RESELECT.get(reselect)
        if kind is None:
            raise InputError(f"reselect must be one of {sorted(map(str, _BY_RESELECT))} or None, got {reselect!r}")
        extra = {} if kind is Interleaved else {"n_rounds": params.get("n_rounds", 10)}
        out["schedule"] = kind(**common, **extra)
    else:
        out["schedule"] = Joint(**common)
        if out["schedule"] == Joint():
            out["schedule"] = "joint"
    inducing = params.get("inducing", "auto")
    if isinstance(inducing, str) and inducing == "auto":
        auto = Auto(params.get("max_inducing"), params.get("time_budget"))
        out["inducing"] = "auto" if auto == Auto() else auto
    noise = Noise(params.get("noise", 1.0), params.get("noise_prior"), params.get("min_noise", 1e-6))
    out["noise"] = noise.value if (noise.prior, noise.minimum) == (None, 1e-6) else noise
    return out


__all__ = [
    "Alternate",
    "Auto",
    "Interleaved",
    "Joint",
    "Noise",
    "Schedule",
    "SubsetThenAll",
    "VariationalEM",
]
