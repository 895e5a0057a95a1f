"""A :class:`~sparsegp.SparseGPRegressor` with a non-Gaussian likelihood (``likelihood="student-t"``,
``"poisson"`` or a :class:`~sparsegp.likelihoods.TargetLikelihood`): the classifier's variational fit over every
row (:mod:`sparsegp.fitting.variational`, Hensman, Matthews & Ghahramani 2015, eq. 3), with the regressor's
predictions. A Gaussian likelihood never comes here: its optimal q(u) has a closed form and the regressor
maximises the collapsed bound (Titsias 2009, eq. 9) instead.

The functions take the estimator; :class:`~sparsegp.SparseGPRegressor` calls them where its fitted likelihood is
not conjugate. Targets are fitted in the units the likelihood names (``target_units``: a robust centre and spread
for a Student-t, the counts themselves for a Poisson) and every prediction is mapped back.
"""

from __future__ import annotations

import time
from functools import partial
from typing import Any

import jax.numpy as jnp
import numpy as np
from scipy.special import ndtri
from sklearn.base import clone

from ..approximations.base import prediction_mode
from ..approximations.registry import APPROXIMATIONS
from ..backends import is_dask_collection
from ..classification.svgp import FAMILY
from ..errors import InputError
from ..fitting.calibration import summarise_scores
from ..fitting.checkpoint import as_checkpoint
from ..fitting.config import VariationalConfig
from ..fitting.variational import InMemoryRows, WeightedRows, collapse_rows, fit_variational
from ..likelihoods import Gaussian, TargetLikelihood, likelihood_from_dict, regression_named
from ..options import Auto, Joint, as_schedule
from ..validation import as_float_matrix, as_float_targets, check_int, check_positive, feature_names_of
from . import persistence
from .base import GPRegressorBase as _Base
from .base import copy_result, raise_if_interrupted
from .sparse_file import growth_from_meta, path_for_json

# optimize= of the regressor: (learn the kernel and the likelihood's parameters, move the inducing inputs)
OPTIMIZE = {True: (True, True), "hyperparameters": (True, False), "inducing": (False, True), False: (False, False)}
DEFAULT_TOL = 1e-3  # nats per row: the growth's rule where the schedule gives no tol (the classifier's default)
VARIATIONAL_STATE = ("Z", "q_mu", "q_sqrt", "mean")


def is_variational(estimator) -> bool:
    """Whether a fitted regressor holds a variational fit (a non-conjugate likelihood)."""
    return hasattr(estimator, "q_mu_")


def _refuse(estimator, likelihood) -> None:
    """Options of the Gaussian fit that mean nothing here: an InputError for each given."""
    p = estimator.get_params(deep=False)
    name = f"likelihood={likelihood.name!r}"
    approximation = APPROXIMATIONS.get(p["approximation"])
    if approximation is None or not approximation.trace_term:  # the variational bound's collapsed form is VFE's
        raise InputError(
            f"approximation={p['approximation']!r} is a Gaussian-noise approximation; with {name} the fit is the "
            "uncollapsed variational bound over every row (leave approximation='vfe')"
        )
    if prediction_mode(p["prediction"]).full_data:
        raise InputError(f"prediction={p['prediction']!r} needs a Gaussian likelihood; with {name} leave 'standard'")
    if not (isinstance(p["noise"], (int, float)) and float(p["noise"]) == 1.0):
        raise InputError(
            f"noise is the Gaussian likelihood's variance; with {name} the likelihood's own parameters are learnt "
            "(pass a likelihood object, e.g. StudentT(scale=...), to start them elsewhere)"
        )
    if p["duplicates"] not in ("collapse", "expand"):
        raise InputError(f"duplicates={p['duplicates']!r}: with {name}, 'collapse' or 'expand'")


def config_for(estimator, likelihood: TargetLikelihood, D: int, warm) -> VariationalConfig:
    """The variational fit's configuration from the regressor's options, checked."""
    _refuse(estimator, likelihood)
    p = estimator.get_params(deep=False)
    schedule = as_schedule(p["schedule"])
    if type(schedule) is not Joint:
        raise InputError(
            f"schedule={schedule!r} re-selects or subsets for the Gaussian fit; with likelihood={likelihood.name!r} "
            "use 'joint' (Joint(max_iter=...))"
        )
    inducing, max_inducing = p["inducing"], None
    if isinstance(inducing, Auto) or (isinstance(inducing, str) and inducing == "auto"):
        auto = inducing if isinstance(inducing, Auto) else Auto()
        max_inducing = None if auto.max_inducing is None else check_int(auto.max_inducing, "max_inducing", minimum=1)
        inducing = "auto"
    elif isinstance(inducing, (int, np.integer)) and not isinstance(inducing, bool):
        inducing = check_int(inducing, "inducing", minimum=1)
    elif isinstance(inducing, np.ndarray) and inducing.ndim == 2:
        inducing = as_float_matrix(inducing, "inducing", n_features=D, owner=type(estimator).__name__)
    else:
        raise InputError(
            f"with likelihood={likelihood.name!r}, inducing must be 'auto', Auto(...), an int m or an (m, D) array "
            f"of inputs, got {inducing!r}"
        )
    if p["optimize"] not in OPTIMIZE or isinstance(p["optimize"], (int, float)) and not isinstance(p["optimize"], bool):
        raise InputError(f"optimize must be one of {list(OPTIMIZE)}, got {p['optimize']!r}")
    learn, move = OPTIMIZE[p["optimize"]]
    return VariationalConfig(
        owner=type(estimator).__name__,
        kernel=p["kernel"],
        likelihood=likelihood,
        inducing=inducing,
        max_inducing=max_inducing,
        tol=DEFAULT_TOL if schedule.tol is None else float(check_positive(schedule.tol, "tol")),
        max_iter=check_int(schedule.max_iter, "max_iter", minimum=1),
        optimize=learn,
        learn_inducing=move,
        chunk_size=None if schedule.chunk_size is None else check_int(schedule.chunk_size, "chunk_size", minimum=1),
        random_state=p["random_state"],
        verbose=bool(p["verbose"]),
        callback=p["callback"],
        checkpoint=as_checkpoint(schedule.checkpoint),
        warm=warm,
    )


def _warm(estimator, D: int):
    """With ``warm_start`` and a fitted variational model, what the fit continues from."""
    if not (estimator.warm_start and is_variational(estimator)):
        return None
    if D != estimator.n_features_in_:
        raise InputError(
            f"warm_start=True continues from a model of {estimator.n_features_in_} features, but X has {D}: "
            "fit with warm_start=False"
        )
    params = {"kernel": estimator.kernel_, "likelihood": estimator.likelihood_}
    params.update({k: getattr(estimator, f"{k}_") for k in VARIATIONAL_STATE})
    return {"params": params, "path": list(estimator.inducing_path_), "units": (estimator.y_mean_, estimator.y_std_)}


def fit(estimator, X, y, likelihood: TargetLikelihood):
    """Fit ``estimator`` (a SparseGPRegressor) by the variational fit with ``likelihood``; returns it."""
    t0 = time.perf_counter()
    rows = _dask_rows if is_dask_collection(X) or is_dask_collection(y) else _memory_rows
    data, names, D, config, (shift, scale) = rows(estimator, X, y, likelihood)
    context = (D, names, shift, scale)

    def save(reached):  # a checkpoint: the state reached, in a copy of the estimator
        persistence.save_model(_apply(clone(estimator), reached, *context, warn=False), config.checkpoint.path)

    result = fit_variational(config, data, save=save if config.checkpoint is not None else None)
    _apply(estimator, result, *context)
    estimator.fit_time_ = time.perf_counter() - t0
    if config.checkpoint is not None:
        persistence.save_model(estimator, config.checkpoint.path)
    raise_if_interrupted(estimator, result.stop_reason)
    return estimator


def _memory_rows(estimator, X, y, likelihood):
    """(rows in memory, feature names, D, the fit's configuration, (shift, scale)) for arrays X and y."""
    names = feature_names_of(X)
    X = as_float_matrix(X, "X", min_rows=2, owner=type(estimator).__name__)
    y = as_float_targets(y, X.shape[0])
    if y.ndim != 1:
        raise InputError(f"likelihood={likelihood.name!r} fits one target; y has {y.shape[1]} columns")
    y = likelihood.check_targets(y)
    config = config_for(estimator, likelihood, X.shape[1], _warm(estimator, X.shape[1]))
    shift, scale = _units(estimator, config, likelihood, y)
    ys = (y - shift) / scale
    if estimator.duplicates == "expand":
        rows = WeightedRows(X, ys, np.ones(y.size), y.size, 1)
    else:
        rows = collapse_rows(X, ys, 1)
    return InMemoryRows(rows), names, X.shape[1], config, (shift, scale)


def _units(estimator, config, likelihood, y) -> tuple[float, float]:
    """(shift, scale) of the targets: a warm start's, the likelihood's for ``y`` with ``normalize_y``, or (0, 1)."""
    if config.warm is not None:
        return config.warm["units"]
    if estimator.normalize_y:
        return likelihood.target_units(y, np.ones(y.size))
    return 0.0, 1.0


def _scaled_targets(y, likelihood, shift: float, scale: float) -> np.ndarray:
    """One partition's targets checked by the likelihood and put in the fit's units (run where it lives)."""
    return (likelihood.check_targets(np.asarray(y, dtype=np.float64)) - shift) / scale


def _dask_rows(estimator, X, y, likelihood):
    """(rows on the cluster, None, D, the fit's configuration, (shift, scale)) for dask arrays X and y: the units from the rows
    the fit brings to the driver (all of them up to POOL_ROWS, as in memory), the targets checked on the workers."""
    import dask.array as da

    from ..backends.dask_rows import DaskRows, pool_rows

    if not (is_dask_collection(X) and is_dask_collection(y)):
        raise InputError("X and y must both be dask arrays, or neither")
    X, y = da.asarray(X), da.asarray(y)
    if X.ndim != 2 or y.ndim != 1 or X.shape[0] != y.shape[0]:
        raise InputError(f"X must be 2-D and y 1-D with one target per row, got shapes {X.shape} and {y.shape}")
    sample = likelihood.check_targets(np.asarray(y[pool_rows(int(y.shape[0]))].compute(), dtype=np.float64))
    D = int(X.shape[1])
    config = config_for(estimator, likelihood, D, _warm(estimator, D))
    units = _units(estimator, config, likelihood, sample)
    rows = DaskRows(X, y, 1, targets=partial(_scaled_targets, likelihood=likelihood, shift=units[0], scale=units[1]))
    return rows, None, D, config, units


def _apply(estimator, result, n_features: int, names, shift: float, scale: float, warn: bool = True):
    """The fitted attributes from a :class:`~sparsegp.fitting.variational.VariationalFit`."""
    estimator.n_features_in_ = n_features
    estimator._set_feature_names(names)
    estimator.y_mean_, estimator.y_std_ = float(shift), float(scale)
    estimator.likelihood_ = result.params["likelihood"]
    set_state(estimator, result.params)
    copy_result(estimator, result, skip=("params", "loo_mean", "loo_var", "loo_targets"))
    estimator.objective_ = estimator.bound_
    estimator.objective_name_ = objective_name(estimator.likelihood_)
    estimator._set_loo(loo_check(estimator.likelihood_, result), warn=warn)
    return estimator


def objective_name(likelihood) -> str:
    return (
        "uncollapsed variational bound on log p(y) (Hensman, Matthews & Ghahramani 2015, eq. 3) with a "
        f"{type(likelihood).__name__} likelihood, on the fitted scale of y"
    )


def set_state(estimator, params) -> None:
    """``kernel_``, ``Z_``, ``q_mu_``, ``q_sqrt_``, ``mean_`` and the posterior prediction reads."""
    estimator.kernel_ = params["kernel"]
    for k in VARIATIONAL_STATE:
        setattr(estimator, f"{k}_", np.asarray(params[k], dtype=np.float64))
    estimator.q_sqrt_ = np.tril(estimator.q_sqrt_)
    state = {k: jnp.asarray(getattr(estimator, f"{k}_")) for k in VARIATIONAL_STATE}
    estimator._posterior = FAMILY.posterior(dict(state, kernel=estimator.kernel_))


def predictive_z(likelihood: TargetLikelihood, mu, var, y) -> np.ndarray:
    """Phi^-1 of each target's predictive CDF (mid-point between F(y - 1) and F(y) for counts): standard normal
    where the predictive is honest (:func:`~sparsegp.fitting.calibration.summarise_scores`)."""
    from ..likelihoods import gauss_hermite

    t, w = gauss_hermite()
    f = np.asarray(mu)[:, None] + np.sqrt(np.maximum(np.asarray(var), 0.0))[:, None] * t
    y = np.asarray(y)[:, None]
    u = likelihood.cdf(y, f) @ w
    if likelihood.discrete:
        u = 0.5 * (u + likelihood.cdf(y - 1.0, f) @ w)
    return ndtri(np.clip(u, 1e-12, 1.0 - 1e-12))


def loo_check(likelihood: TargetLikelihood, result):
    """The leave-one-out figures (:class:`~sparsegp.fitting.calibration.LOOCheck`) from the fit's cavities."""
    mu, var, y = result.loo_mean[:, 0], result.loo_var[:, 0], np.asarray(result.loo_targets, dtype=np.float64)
    logp = np.asarray(
        likelihood.log_predictive_density(jnp.asarray(mu)[:, None], jnp.asarray(var)[:, None], jnp.asarray(y))
    )
    z = predictive_z(likelihood, mu, var, y)
    return summarise_scores(y, z, logp, y_mean=float(np.mean(y)), y_var=max(float(np.var(y)), 1e-12))


class LikelihoodRegressorBase(_Base):
    """What :class:`~sparsegp.SparseGPRegressor` does differently with a non-Gaussian likelihood, each method
    handing a Gaussian model on to the regressors' own (``super()``)."""

    likelihood: Any
    warm_start: bool

    def _fits_variationally(self, noise_variance) -> bool:
        """Whether ``fit`` is the variational fit (the ``likelihood`` option not conjugate); a previous variational
        fit's state is dropped unless a warm start of the same kind continues from it."""
        likelihood = regression_named(self.likelihood)
        if isinstance(self.likelihood, Gaussian):
            raise InputError("pass likelihood='gaussian' and the Gaussian noise variance as noise= (Noise(...))")
        if not likelihood.conjugate and noise_variance is not None:
            raise InputError(f"noise_variance is known Gaussian noise; likelihood={likelihood.name!r} models its own")
        switched = hasattr(self, "kernel_") and is_variational(self) == likelihood.conjugate
        if switched or (not likelihood.conjugate and not self.warm_start):  # the fitted state of another model
            for name in [k for k in vars(self) if k.endswith("_") and not k.startswith("__")] + ["_posterior"]:
                self.__dict__.pop(name, None)
        return not likelihood.conjugate

    def predict_quantiles(self, X, quantiles=(0.025, 0.975)):
        q = self._check_quantiles(quantiles)
        X = self._validate_test_inputs(X)
        if is_variational(self):
            return predict_quantiles(self, X, q)
        return super().predict_quantiles(X, q)

    predict_quantiles.__doc__ = _Base.predict_quantiles.__doc__

    def log_predictive_density(self, X, y, include_noise=True, noise_variance=None) -> float:
        if is_variational(self):
            if not include_noise or noise_variance is not None:
                raise InputError(
                    "with a non-Gaussian likelihood the predictive density is y's own (include_noise=True)"
                )
            return log_predictive_density(self, self._validate_test_inputs(X), y)
        return super().log_predictive_density(X, y, include_noise=include_noise, noise_variance=noise_variance)

    log_predictive_density.__doc__ = _Base.log_predictive_density.__doc__

    def sample_y(self, X, n_samples=1, random_state=0, include_noise=True):
        if is_variational(self):
            X = self._validate_test_inputs(X)
            rng = random_state
            if not isinstance(rng, (np.random.Generator, np.random.RandomState)):
                rng = np.random.default_rng(rng)
            return sample_y(self, X, check_int(n_samples, "n_samples", minimum=1), rng, include_noise)
        return super().sample_y(X, n_samples=n_samples, random_state=random_state, include_noise=include_noise)

    sample_y.__doc__ = _Base.sample_y.__doc__

    def sample_functions(self, n_samples=1, random_state=0, n_features=1024):
        if is_variational(self):
            raise InputError("sample_functions draws the Gaussian fit's posterior; with this likelihood use sample_y")
        return super().sample_functions(n_samples=n_samples, random_state=random_state, n_features=n_features)

    sample_functions.__doc__ = _Base.sample_functions.__doc__

    def hyperparameter_names(self) -> list[str]:
        if is_variational(self):
            names = []
            for prefix, obj in (("", self.kernel_), ("likelihood.", self.likelihood_)):
                for name, value in obj.parameters().items():
                    size = np.size(value)
                    names += [prefix + name] if np.ndim(value) == 0 else [f"{prefix}{name}[{d}]" for d in range(size)]
            return names
        return super().hyperparameter_names()

    hyperparameter_names.__doc__ = _Base.hyperparameter_names.__doc__

    def log_marginal_likelihood(self, theta=None, eval_gradient=False, *, X=None, y=None, noise_variance=None):
        if is_variational(self):
            if theta is not None or eval_gradient or X is not None:
                raise InputError(
                    "with a non-Gaussian likelihood the objective is the variational bound at the fitted q(u), "
                    "kernel and likelihood (objective_); it is not re-evaluated at another theta"
                )
            return float(self.objective_)
        return super().log_marginal_likelihood(theta, eval_gradient, X=X, y=y, noise_variance=noise_variance)

    log_marginal_likelihood.__doc__ = _Base.log_marginal_likelihood.__doc__


# ---- prediction ---------------------------------------------------------------------
def latent(estimator, X):
    """The latent f's mean and variance (n,) at X, on the fitted scale."""
    mu, var = FAMILY.predict(estimator._posterior, X)
    return mu[:, 0], var[:, 0]


def predict(estimator, X, return_std=False, return_cov=False, include_noise=True, noise_variance=None):
    """The predictive mean of y (or of f with ``include_noise=False``), and its std or (for f) covariance."""
    if noise_variance is not None:
        raise InputError("noise_variance is known Gaussian noise; this model's likelihood is not Gaussian")
    X = estimator._validate_test_inputs(X)
    if return_std and return_cov:
        raise InputError("at most one of return_std and return_cov can be requested")
    scale, shift = estimator.y_std_, estimator.y_mean_
    if return_cov:
        if include_noise:
            raise InputError(
                f"return_cov: y's predictive under the {type(estimator.likelihood_).__name__} likelihood is not "
                "Gaussian and its rows are independent given f; ask for the latent f's covariance with "
                "include_noise=False, or draws of y with sample_y"
            )
        mu, _ = latent(estimator, X)
        return mu * scale + shift, FAMILY.predict_cov(estimator._posterior, X)[0] * scale**2
    mu, var = latent(estimator, X)
    if include_noise:
        mean, var = (
            np.asarray(a)
            for a in estimator.likelihood_.predict_mean_and_var(jnp.asarray(mu)[:, None], jnp.asarray(var)[:, None])
        )
    else:
        mean = mu
    mean = mean * scale + shift
    return (mean, np.sqrt(np.maximum(var, 0.0)) * scale) if return_std else mean


def predict_quantiles(estimator, X, quantiles):
    """Quantiles of y's predictive at X: (n, k)."""
    mu, var = latent(estimator, X)
    q = estimator.likelihood_.predictive_quantiles(mu, var, quantiles)
    return q * estimator.y_std_ + estimator.y_mean_


def log_predictive_density(estimator, X, y) -> float:
    """Mean log p(y_i | x_i, training data) per row, in the units of y."""
    y = estimator.likelihood_.check_targets(as_float_targets(y, X.shape[0]))
    mu, var = latent(estimator, X)
    ys = (y - estimator.y_mean_) / estimator.y_std_
    logp = estimator.likelihood_.log_predictive_density(
        jnp.asarray(mu)[:, None], jnp.asarray(var)[:, None], jnp.asarray(ys)
    )
    return float(np.mean(np.asarray(logp)) - np.log(estimator.y_std_))


def sample_y(estimator, X, n_samples: int, rng, include_noise=True) -> np.ndarray:
    """Joint draws of the latent f at X (through its covariance's eigendecomposition), then of each y given its
    f: (n, n_samples)."""
    mu, _ = latent(estimator, X)
    cov = FAMILY.predict_cov(estimator._posterior, X)[0]
    f = estimator._joint_draws(mu, cov, n_samples, rng)
    draws = estimator.likelihood_.sample(f, rng) if include_noise else f
    return draws * estimator.y_std_ + estimator.y_mean_


# ---- persistence ----------------------------------------------------------------------
def state(estimator):
    """The model file's (meta, arrays) of a variational regressor."""
    params = {k: v for k, v in estimator._file_params().items() if k in estimator._json_params}
    params = {k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in params.items()}
    if not isinstance(params.get("likelihood"), str):
        params["likelihood"] = estimator.likelihood_.name
    if not isinstance(params.get("random_state"), (int, type(None))):
        params["random_state"] = None
    if not isinstance(params.get("inducing"), (str, int)) or isinstance(params.get("inducing"), bool):
        params["inducing"] = "auto"  # the fitted Z_ is stored
    meta = {
        "params": params,
        "variational": True,
        "kernel": estimator.kernel_.to_dict(),
        "likelihood": estimator.likelihood_.to_dict(),
        "y_mean": float(estimator.y_mean_),
        "y_std": float(estimator.y_std_),
        "n_features_in": int(estimator.n_features_in_),
        "feature_names": estimator._feature_names_state(),
        "bound": float(estimator.bound_),
        "stop_reason": estimator.stop_reason_,
        "inducing_path": path_for_json(estimator.inducing_path_),
        "loo": estimator._loo_state(),
    }
    return meta, {k: getattr(estimator, f"{k}_") for k in VARIATIONAL_STATE}


def read_q(model, arrays, latents: int):
    """(Z, q_mu, q_sqrt, mean) of a variational model file with ``latents`` latent functions, every array's shape,
    finiteness and triangle checked against ``model`` (its ``kernel_`` and ``n_features_in_`` already read)."""
    arr = persistence.require_array
    try:
        model.kernel_.check_input_dim(model.n_features_in_)
    except InputError as exc:
        raise persistence.ModelFileError(str(exc)) from None
    Z = arr(arrays, "Z", ndim=2, shape=(None, model.n_features_in_))
    M = Z.shape[0]
    q_mu = arr(arrays, "q_mu", ndim=2, shape=(M, latents))
    q_sqrt = arr(arrays, "q_sqrt", ndim=3, shape=(latents, M, M))
    mean = arr(arrays, "mean", ndim=1, shape=(latents,))
    if M < 1 or not all(np.all(np.isfinite(a)) for a in (Z, q_mu, q_sqrt, mean)):
        raise persistence.ModelFileError("arrays 'Z', 'q_mu', 'q_sqrt' and 'mean' must be non-empty and finite")
    if np.any(np.triu(q_sqrt, 1) != 0):
        raise persistence.ModelFileError("array 'q_sqrt' must be lower-triangular (the factor of q's covariance)")
    return Z, q_mu, q_sqrt, mean


def from_state(cls, meta, arrays):
    """A variational regressor from a model file, every field checked."""
    req = persistence.require
    model = persistence.construct(cls, meta, cls._json_params)
    try:
        likelihood = likelihood_from_dict(req(meta, "likelihood", dict))
    except (InputError, TypeError) as exc:
        raise persistence.ModelFileError(f"metadata field 'likelihood' is invalid: {exc}") from None
    if not isinstance(likelihood, TargetLikelihood) or likelihood.conjugate:
        raise persistence.ModelFileError(
            f"metadata field 'likelihood' names {likelihood!r}, not a non-Gaussian likelihood of a regressor"
        )
    model.likelihood_ = likelihood
    model.n_features_in_ = req(meta, "n_features_in", int)
    if model.n_features_in_ < 1:
        raise persistence.ModelFileError("metadata field 'n_features_in' must be >= 1")
    model._restore_feature_names(meta)
    model.y_mean_, model.y_std_ = req(meta, "y_mean", float), req(meta, "y_std", float)
    if not (np.isfinite(model.y_mean_) and np.isfinite(model.y_std_) and model.y_std_ > 0):
        raise persistence.ModelFileError("metadata fields 'y_mean'/'y_std' must be finite with y_std > 0")
    Z, q_mu, q_sqrt, mean = read_q(model, arrays, 1)
    model.bound_ = req(meta, "bound", float)
    model.objective_ = model.bound_
    model.objective_name_ = objective_name(likelihood)
    model.inducing_path_, model.stop_reason_ = growth_from_meta(meta)
    if model.inducing_path_ is None or model.stop_reason_ is None:
        raise persistence.ModelFileError("metadata fields 'inducing_path' and 'stop_reason' must be given")
    model._restore_loo(meta)
    set_state(model, {"kernel": model.kernel_, "Z": Z, "q_mu": q_mu, "q_sqrt": q_sqrt, "mean": mean})
    model.n_iter_, model.fit_time_ = 0, 0.0
    return model


__all__ = [
    "LikelihoodRegressorBase",
    "is_variational",
    "fit",
    "predict",
    "predict_quantiles",
    "log_predictive_density",
    "sample_y",
    "state",
]
