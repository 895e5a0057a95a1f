"""Shared machinery of the regression estimators: validation, target scaling, persistence."""

from __future__ import annotations

import warnings
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.exceptions import ConvergenceWarning

from .. import metrics
from .._compile import to_device
from ..approximations.pathwise import PosteriorFunctions, draw_weights
from ..backends import InMemory, is_dask_collection
from ..errors import InputError, NotFittedError, NumericalError
from ..fitting.calibration import (
    LOO_TRUSTED_ERROR,
    LOO_Z_LEVELS,
    LOOCheck,
    warn_if_miscalibrated,
    warn_if_no_signal,
    warn_loo_unavailable,
)
from ..options import spelled
from ..transforms import POSITIVE
from ..validation import (
    as_float_matrix,
    as_float_targets,
    as_float_vector,
    as_noise_variance,
    check_feature_names,
    check_int,
    feature_names_of,
)
from . import persistence


def copy_result(model, result, skip: tuple[str, ...] = ()) -> None:
    """Each field ``f`` of a fit's ``result`` (a NamedTuple of :mod:`sparsegp.fitting`) as ``model``'s fitted
    attribute ``f_``, but those in ``skip`` (which the estimator turns into attributes of its own)."""
    for name in type(result)._fields:
        if name not in skip:
            setattr(model, f"{name}_", getattr(result, name))


def raise_if_interrupted(estimator, reason: str | None, stacklevel: int = 3) -> None:
    """After a fit that a KeyboardInterrupt stopped (``reason`` "interrupted ..."), left fitted with the best state it
    reached: a warning that says so, and the KeyboardInterrupt, so that a script still stops. Every estimator's."""
    if reason is None or not reason.startswith("interrupted"):
        return
    warnings.warn(
        f"{type(estimator).__name__}: the fit was {reason}; the estimator is fitted with that state (stop_reason_) "
        "and predicts; fit again to go on",
        ConvergenceWarning,
        stacklevel=stacklevel,
    )
    raise KeyboardInterrupt(reason)


class FeatureNamesMixin:
    """``feature_names_in_`` (scikit-learn's attribute): a DataFrame's column names at fit, checked at
    predict and kept in the model file; absent when the training inputs had no names."""

    def _set_feature_names(self, names):
        if names is None:
            self.__dict__.pop("feature_names_in_", None)
        else:
            self.feature_names_in_ = np.asarray(names, dtype=object)

    def _test_matrix(self, X):
        """Test inputs as a float matrix, their names (if any) checked against those seen at fit."""
        check_feature_names(getattr(self, "feature_names_in_", None), X, type(self).__name__)
        return as_float_matrix(X, "X", n_features=self.n_features_in_, owner=type(self).__name__)

    def _feature_names_state(self):
        names = getattr(self, "feature_names_in_", None)
        return None if names is None else [str(n) for n in names]

    def _restore_feature_names(self, meta):
        names = meta.get("feature_names")
        if names is not None and not (
            isinstance(names, list)
            and len(names) == self.n_features_in_
            and all(isinstance(n, str) for n in names)
            and len(set(names)) == len(names)
        ):
            raise persistence.ModelFileError(
                f"metadata field 'feature_names' must be null or {self.n_features_in_} distinct strings"
            )
        self._set_feature_names(names)


# The options and outputs both regressors' ``predict`` share, written once (see _docstrings.fill).
PREDICT_OPTIONS = """
return_std : bool
    Also return the predictive standard deviation.
return_cov : bool
    Also return the full predictive covariance (t x t).
include_noise : bool
    Of y (True) or of the latent f (False).
noise_variance : float or array of shape (t,), optional
    The test rows' own known noise variances (units of y squared), added to the variance of y beside the learnt
    noise (with ``include_noise``); without it, only the learnt noise is added.

Returns
-------
mean : ndarray of shape (t,)
std : ndarray of shape (t,), with ``return_std``
cov : ndarray of shape (t, t), with ``return_cov``
"""

COMMON_JSON_PARAMS = (
    "noise",
    "optimize",
    "n_restarts",
    "max_iter",
    "normalize_y",
    "min_noise",
    "duplicates",
    "warm_start",
    "verbose",
)


def _target_scale(meta):
    """(y_mean, y_std) from a model file: two numbers, or two lists of one number per target."""
    mean, std = meta.get("y_mean"), meta.get("y_std")
    if isinstance(mean, list) and isinstance(std, list):
        if not (len(mean) == len(std) >= 2 and all(isinstance(v, (int, float)) for v in mean + std)):
            raise persistence.ModelFileError("metadata fields 'y_mean'/'y_std' must be numbers or lists of k >= 2")
        return np.asarray(mean, dtype=float), np.asarray(std, dtype=float)
    return persistence.require(meta, "y_mean", float), persistence.require(meta, "y_std", float)


def _noise(meta, y_mean):
    """The fitted noise from a model file: a number, or a list of one per target (as many as ``y_mean``'s)."""
    noise = meta.get("noise")
    if isinstance(noise, list):
        if not (np.ndim(y_mean) == 1 and len(noise) == len(y_mean) and all(isinstance(v, (int, float)) for v in noise)):
            raise persistence.ModelFileError("metadata field 'noise' must be a number or a list of one per target")
        return np.asarray(noise, dtype=float)
    return persistence.require(meta, "noise", float)


class GPRegressorBase(FeatureNamesMixin, persistence.SaveLoadMixin, RegressorMixin, BaseEstimator):
    """Common fit-time validation and predict-time rescaling for GP regressors."""

    # one figure, or one per target (k targets): see _set_loo
    loo_check_: Any
    loo_log_predictive_: Any
    loo_coverage_: Any
    loo_z_: Any
    loo_error_: Any

    # ---- fit helpers ---------------------------------------------------------
    def _training_data(self, X, y, config, noise_variance=None, dask: bool = True):
        """The fit's rows as a backend (in memory; on the cluster for dask arrays where ``dask``) and X's feature
        names."""
        if dask and (is_dask_collection(X) or is_dask_collection(y)):
            from ..backends.dask_partitions import DaskPartitions, dask_noise_variance

            known = dask_noise_variance(noise_variance, X)
            options = {"duplicates": config.duplicates, "normalize_y": config.normalize_y}
            return DaskPartitions(X, y, noise_variance=known, **options), None
        X, y, names = self._training_arrays(X, y)
        known = as_noise_variance(noise_variance, X.shape[0])
        data = InMemory.from_training(
            X, y, duplicates=config.duplicates, normalize_y=config.normalize_y, noise_variance=known, stacklevel=3
        )
        return data, names

    def _training_arrays(self, X, y):
        """(X, y) as float arrays and X's feature names, or an InputError that names the problem."""
        if y is None:
            raise InputError(f"{type(self).__name__} requires y to be passed, but the target y is None")
        names = feature_names_of(X)
        X = as_float_matrix(X, "X", min_rows=2)
        return X, as_float_targets(y, X.shape[0]), names

    def _set_data_attributes(self, moments, n_features: int, names=None):
        """``n_features_in_``, ``feature_names_in_``, ``y_mean_`` and ``y_std_`` of a fit."""
        self.n_features_in_ = n_features
        self._set_feature_names(names)
        self.y_mean_, self.y_std_ = moments.y_mean, moments.y_std

    def _raise_if_interrupted(self, reason: str | None) -> None:
        raise_if_interrupted(self, reason, stacklevel=4)

    # ---- the leave-one-out check --------------------------------------------------
    def _set_loo(self, check: LOOCheck | None, warn: bool = True):
        """``loo_*`` from a :class:`~.calibration.LOOCheck` (None: not computed), and the CalibrationWarning.
        Figures that rounding may have spoilt (``loo_error_`` above LOO_TRUSTED_ERROR nats per row) are NaN,
        with a NumericalWarning in place of any verdict on the model."""
        if isinstance(check, list):  # k targets: each target's figures, in arrays
            return self._set_loo_per_target(check, warn)
        self.loo_check_ = check
        if check is None:
            self.loo_log_predictive_ = self.loo_coverage_ = self.loo_z_ = self.loo_rows_ = self.loo_error_ = None
            return
        self.loo_rows_, self.loo_error_ = check.rows, check.error
        if not check.trusted:
            self.loo_log_predictive_ = self.loo_coverage_ = float("nan")
            self.loo_z_ = np.full(len(LOO_Z_LEVELS), np.nan)
            if warn:
                warn_loo_unavailable(check, type(self).__name__, stacklevel=4)
            return
        self.loo_log_predictive_ = check.log_predictive
        self.loo_coverage_ = check.coverage
        self.loo_z_ = np.asarray(check.z_quantiles)
        if warn:
            warn_if_miscalibrated(check, type(self).__name__, stacklevel=4)
            warn_if_no_signal(check, type(self).__name__, stacklevel=4)

    def _set_loo_per_target(self, checks: list, warn: bool):
        """``loo_*`` of a fit of k targets: arrays of k figures (``loo_z_`` of shape (k, levels)), NaN where a
        target's figures are not to be trusted; the warnings name the target."""
        self.loo_check_ = checks
        nan = float("nan")
        self.loo_rows_ = checks[0].rows
        self.loo_error_ = np.array([c.error for c in checks])
        self.loo_log_predictive_ = np.array([c.log_predictive if c.trusted else nan for c in checks])
        self.loo_coverage_ = np.array([c.coverage if c.trusted else nan for c in checks])
        self.loo_z_ = np.array([c.z_quantiles if c.trusted else np.full(len(LOO_Z_LEVELS), nan) for c in checks])
        for j, check in enumerate(checks if warn else []):
            owner = f"{type(self).__name__} (target {j})"
            if not check.trusted:
                warn_loo_unavailable(check, owner, stacklevel=5)
            else:
                warn_if_miscalibrated(check, owner, stacklevel=5)
                warn_if_no_signal(check, owner, stacklevel=5)

    def _loo_state(self):
        check = self.loo_check_
        if isinstance(check, list):
            return [self._loo_record(c) for c in check]
        return self._loo_record(check)

    @staticmethod
    def _loo_record(check):
        if check is None:
            return None
        if not check.trusted:  # the figures are not kept; the error may be infinite
            return {"rows": check.rows, "error": min(check.error, np.finfo(float).max)}
        return {k: [float(q) for q in v] if k == "z_quantiles" else v for k, v in check._asdict().items()}

    def _restore_loo(self, meta):
        """``loo_*`` from a model file (absent in files written before the check existed; ``error`` and ``tail``
        absent in files written before they were)."""
        loo = meta.get("loo")
        if loo is None:
            return self._set_loo(None)
        if isinstance(loo, list) and loo:  # k targets
            return self._set_loo([self._loo_from_record(r) for r in loo], warn=False)
        return self._set_loo(self._loo_from_record(loo), warn=False)

    @staticmethod
    def _loo_from_record(loo) -> LOOCheck:
        """One target's :class:`LOOCheck` from its record in a model file, every field validated."""
        req = persistence.require
        if isinstance(loo, dict) and set(loo) == {"rows", "error"}:
            rows, error = req(loo, "rows", int, where="'loo'"), req(loo, "error", float, where="'loo'")
            if not (rows >= 1 and error > LOO_TRUSTED_ERROR):
                raise persistence.ModelFileError("metadata field 'loo' holds out-of-range values")
            nan = float("nan")
            return LOOCheck(nan, nan, np.full(len(LOO_Z_LEVELS), nan), rows, nan, nan, error)
        fields = set(LOOCheck._fields)
        optional = (fields, fields - {"tail"}, fields - {"error", "tail"})  # files before each was added
        if not isinstance(loo, dict) or set(loo) not in optional:
            raise persistence.ModelFileError(f"metadata field 'loo' must be null or hold {', '.join(LOOCheck._fields)}")
        z = loo["z_quantiles"]
        if not (isinstance(z, list) and len(z) == len(LOO_Z_LEVELS) and all(isinstance(q, (int, float)) for q in z)):
            raise persistence.ModelFileError(f"metadata 'loo' entry 'z_quantiles' must be {len(LOO_Z_LEVELS)} numbers")
        values = {k: req(loo, k, float, where="'loo'") for k in ("log_predictive", "coverage", "snlp", "z_rms")}
        values["error"] = req(loo, "error", float, where="'loo'") if "error" in loo else 0.0
        values["tail"] = req(loo, "tail", float, where="'loo'") if "tail" in loo else 0.0
        rows = req(loo, "rows", int, where="'loo'")
        finite = np.all(np.isfinite([*values.values(), *z]))
        if not (
            finite
            and 0 <= values["coverage"] <= 1
            and values["z_rms"] >= 0
            and 0 <= values["error"] <= LOO_TRUSTED_ERROR
            and 0 <= values["tail"] <= 1
            and rows >= 1
            and z == sorted(z)
        ):
            raise persistence.ModelFileError("metadata field 'loo' holds out-of-range values")
        return LOOCheck(z_quantiles=np.asarray(z, dtype=float), rows=rows, **values)

    # ---- the objective at given hyper-parameters (scikit-learn's public name) ---------------
    def hyperparameter_names(self) -> list[str]:
        """Names of the entries of ``theta``: the kernel's parameters (ARD entries as ``name[d]``), then 'noise' (for
        a :class:`~sparsegp.SparseGPRegressor` with a non-Gaussian likelihood, that likelihood's parameters as
        ``likelihood.name``)."""
        self._check_fitted()
        names = []
        for name, value in self.kernel_.parameters().items():
            names += [name] if np.ndim(value) == 0 else [f"{name}[{d}]" for d in range(np.size(value))]
        k = np.size(self.noise_)
        return names + (["noise"] if np.ndim(self.noise_) == 0 else [f"noise[{j}]" for j in range(k)])

    def log_marginal_likelihood(self, theta=None, eval_gradient=False, *, X=None, y=None, noise_variance=None):
        """The model's objective at ``theta``, and its gradient with respect to ``theta``.

        scikit-learn's name and signature: ``theta`` holds the log of each positive hyper-parameter
        (and the value itself of a non-negative one, such as the bias v_b, which may be 0) in the order
        of :meth:`hyperparameter_names` (None: the fitted values); targets are standardised as at fit
        and the noise is on that scale; hyper-priors are not included. The quantity is the one
        ``objective_name_`` names, and at the fitted values it equals ``objective_``. The exact GP's objective
        is log p(y | X, theta) (RW eq. 2.30) on its own training data; a sparse model's is its approximation's
        at the fitted inducing inputs (the exact log p(y) where those are every training input), on the data
        ``X, y`` that must be passed again (the model keeps only its posterior), with the known per-row
        ``noise_variance`` (units of y squared; by default the fit's own where ``X, y`` are its training data).
        Returns the value, or ``(value, gradient)`` with ``eval_gradient=True``.
        """
        self._check_fitted()
        data = self._objective_data(X, y, noise_variance)
        leaves, treedef = jax.tree_util.tree_flatten(self.kernel_)
        logged = [t is POSITIVE for t in self.kernel_.transforms().values()]  # in leaf order
        sizes = [int(np.size(leaf)) for leaf in leaves]
        shapes = [np.shape(leaf) for leaf in leaves]
        values = [np.ravel(np.asarray(v)) for v in self.kernel_.parameters().values()]
        noise = np.log(np.ravel(self.noise_))  # one entry, or one per target
        theta0 = np.concatenate([np.log(v) if log else v for v, log in zip(values, logged)] + [noise])
        if theta is None:
            theta = theta0
        theta = as_float_vector(theta, "theta", n=theta0.size)
        unlogged = np.concatenate(
            [np.full(size, not log) for size, log in zip(sizes, logged)] + [np.zeros(noise.size, bool)]
        )
        if np.any(theta[unlogged] < 0):
            names = [n for n, u in zip(self.hyperparameter_names(), unlogged) if u]
            raise InputError(f"theta holds the values of the non-negative {names}: they must be >= 0, got {theta}")

        def objective(th):
            values = jnp.where(jnp.asarray(unlogged), th, jnp.exp(th))
            raws, start = [], 0
            for size, shape, log in zip(sizes, shapes, logged):
                v = values[start : start + size].reshape(shape)
                raws.append(v + jnp.log(-jnp.expm1(-v)) if log else v)  # the inverse softplus, traceable
                start += size
            noise = values[-1] if np.ndim(self.noise_) == 0 else values[start:]
            return self._log_objective(jax.tree_util.tree_unflatten(treedef, raws), noise, data)

        if not eval_gradient:
            return float(objective(jnp.asarray(theta)))
        value, grad = jax.value_and_grad(objective)(jnp.asarray(theta))
        return float(value), np.asarray(grad)

    def log_predictive_density(self, X, y, include_noise=True, noise_variance=None) -> float:
        """The mean log predictive density of the targets ``y`` at ``X``, per row (greater is better).

        (1/n) sum_i log N(y_i | mu_i, s_i^2) with mu_i and s_i^2 the predictive mean and variance of
        :meth:`predict` (of y with ``include_noise=True``, of the latent f without), in nats per row in the
        units of y: the negative of :func:`sparsegp.metrics.ntl`, GPflow's ``predict_log_density`` averaged.
        ``score`` stays R^2, as scikit-learn expects of a regressor; :func:`sparsegp.metrics.nlpd_scorer`
        gives this figure to ``GridSearchCV`` and ``cross_val_score``.

        Parameters
        ----------
        X : array-like of shape (n, D)
            Test inputs.
        y : array-like of shape (n,)
            Their targets.
        include_noise : bool
            Whether the predictive variance holds the noise (True, the density of y) or not (that of f).

        Returns
        -------
        float
            Nats per row.

        Raises
        ------
        InputError
            If ``y`` is not a finite vector with one entry per row of ``X``, or a predictive variance is 0
            (possible with ``include_noise=False`` at an input the model interpolates).
        """
        X = self._validate_test_inputs(X)
        y = as_float_targets(y, X.shape[0])
        mean, std = self.predict(X, return_std=True, include_noise=include_noise, noise_variance=noise_variance)
        if y.ndim == 2:  # k targets: the mean over them
            return float(np.mean([-metrics.ntl(y[:, j], mean[:, j], std[:, j] ** 2) for j in range(y.shape[1])]))
        return -metrics.ntl(y, mean, std**2)

    @staticmethod
    def _check_quantiles(quantiles) -> np.ndarray:
        q = np.atleast_1d(np.asarray(quantiles, dtype=np.float64))
        if q.ndim != 1 or q.size == 0 or not np.all((q > 0) & (q < 1)):
            raise InputError(f"quantiles must be probabilities strictly between 0 and 1, got {quantiles!r}")
        return q

    def predict_quantiles(self, X, quantiles=(0.025, 0.975)):
        """Quantiles of y's predictive distribution at X: the Gaussian's mean + sd Phi^-1(q), or for a
        :class:`~sparsegp.SparseGPRegressor` with another likelihood the quantiles of p(y | f) mixed over the latent
        f's Gaussian (Gauss-Hermite quadrature; for counts the least integer whose predictive CDF reaches q).

        Parameters
        ----------
        X : array of shape (t, D)
            Test inputs.
        quantiles : sequence of float in (0, 1)
            The probabilities.

        Returns
        -------
        ndarray of shape (t, k)
            One column per quantile (one target).

        Examples
        --------
        >>> import numpy as np
        >>> from sparsegp import ExactGPRegressor
        >>> X = np.linspace(0, 5, 30)[:, None]
        >>> model = ExactGPRegressor().fit(X, np.sin(X[:, 0]))
        >>> model.predict_quantiles(X[:2], [0.05, 0.5, 0.95]).shape
        (2, 3)
        """
        from scipy.special import ndtri

        q = self._check_quantiles(quantiles)
        mean, std = self.predict(X, return_std=True)
        if np.ndim(mean) != 1:
            raise InputError("predict_quantiles is for one target; this model fits several")
        return mean[:, None] + std[:, None] * ndtri(q)[None, :]

    def sample_y(self, X, n_samples=1, random_state=0, include_noise=True):
        """Joint draws from the predictive distribution at ``X`` (scikit-learn's signature and shapes).

        Each draw is mean + S z with S S^T the predictive covariance of :meth:`predict` (``return_cov=True``)
        and z standard normal: draws of y by default, of the latent f with ``include_noise=False``. S comes from
        the covariance's eigendecomposition, so a singular covariance (the latent f at repeated inputs, or at
        the inducing inputs of a degenerate approximation) is drawn exactly, without added jitter. O(n^3) in
        the number of inputs and O(n^2) memory; draws of functions to evaluate anywhere later are
        :meth:`~sparsegp.SparseGPRegressor.sample_functions`' job.

        Parameters
        ----------
        X : array-like of shape (n, D)
            Inputs at which to draw.
        n_samples : int
            Number of draws.
        random_state : int, numpy Generator or RandomState, or None
            The draws' seed (scikit-learn's default, 0, gives the same draws on every call).
        include_noise : bool
            Draws of y (True) or of f (False).

        Returns
        -------
        ndarray of shape (n, n_samples)

        Raises
        ------
        InputError
            If ``n_samples`` is not a positive integer.
        NumericalError
            If the covariance has an eigenvalue below 0 beyond rounding.
        """
        X = self._validate_test_inputs(X)
        n_samples = check_int(n_samples, "n_samples", minimum=1)
        mean, cov = self.predict(X, return_cov=True, include_noise=include_noise)
        rng = random_state
        if not isinstance(rng, (np.random.Generator, np.random.RandomState)):
            rng = np.random.default_rng(rng)
        if mean.ndim == 2:  # k targets: (t, k, n_samples), as scikit-learn's multi-output sample_y
            return np.stack(
                [self._joint_draws(mean[:, j], cov[..., j], n_samples, rng) for j in range(mean.shape[1])], 1
            )
        return self._joint_draws(mean, cov, n_samples, rng)

    @staticmethod
    def _joint_draws(mean, cov, n_samples: int, rng):
        """``n_samples`` draws of N(mean, cov) as columns, through the eigendecomposition of cov."""
        w, V = np.linalg.eigh(0.5 * (cov + cov.T))
        if w.size and w[0] < -1e-8 * max(1.0, float(w[-1])):  # the policy of predict's variances
            raise NumericalError(
                f"the predictive covariance has an eigenvalue {w[0]:.3g} < 0 beyond rounding: the model's "
                "factorisation is ill-conditioned; refit with a larger noise lower bound (min_noise; "
                "SparseGPRegressor: noise__minimum)"
            )
        z = rng.standard_normal((mean.shape[0], n_samples))
        return mean[:, None] + (V * np.sqrt(np.maximum(w, 0.0))) @ z

    def sample_functions(self, n_samples=1, random_state=0, n_features=1024):
        """Draws of the posterior over latent functions, each to be evaluated at any inputs later.

        Pathwise conditioning (Wilson et al. 2020): each draw is a draw of the prior, as random Fourier
        features, corrected by the data through the fitted posterior (:mod:`sparsegp.approximations.pathwise`).
        The result is a callable: ``draws = model.sample_functions(8); draws(X)`` gives (n, 8), the same at the
        same inputs on every call, in the targets' units and without the noise; Thompson sampling takes the
        argmax of one column. Every draw has random features of its own, so the draws' covariance is the
        posterior's (over draws) whatever ``n_features``; ``n_features`` sets how close each draw's values
        are to Gaussian. Kernels: those with a spectral density (``SquaredExponential``, the Matérn family,
        ``RationalQuadratic``), ``Linear``, ``Constant`` and their sums.

        Parameters
        ----------
        n_samples : int
            Number of function draws.
        random_state : int, numpy Generator or RandomState, or None
            The draws' seed.
        n_features : int
            Random features per draw and stationary part of the kernel.

        Returns
        -------
        PosteriorFunctions
            Callable on inputs of shape (n, D), giving (n, n_samples).

        Raises
        ------
        InputError
            If an option is malformed, or the kernel has no random-feature form (a product, ``Periodic``).
        """
        self._check_fitted()
        if np.ndim(self.y_mean_) == 1:
            raise InputError("sample_functions draws one target's functions; fit each target on its own for them")
        n_samples = check_int(n_samples, "n_samples", minimum=1)
        n_features = check_int(n_features, "n_features", minimum=1)
        rng = random_state if isinstance(random_state, np.random.Generator) else np.random.default_rng(random_state)
        prior = self.kernel_.prior_draws(n_samples, n_features, self.n_features_in_, rng)
        centres, weights, with_prior = draw_weights(
            self.posterior_,
            prior,
            rng,
            y=getattr(self, "y_train_", None),  # the exact GP's (normalised) targets
            approximation=getattr(self, "approximation", "exact"),
            prediction=getattr(self, "prediction", "standard"),
        )
        return PosteriorFunctions(self.kernel_, prior, centres, weights, self.y_mean_, self.y_std_, with_prior)

    # ---- predict helpers -------------------------------------------------------
    def _check_fitted(self):
        if not hasattr(self, "kernel_"):
            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet. Call 'fit' with appropriate arguments "
                "before using this estimator."
            )

    def _validate_test_inputs(self, X):
        self._check_fitted()
        return self._test_matrix(X)

    def _predict_in_batches(self, fn, X, *, full_cov: bool, batch_size: int = 4096, on_host: bool = False):
        """Run ``fn(X_batch) -> (mean, var)`` over fixed-size row batches (bounded memory, one compile); ``on_host``:
        ``fn`` takes and gives NumPy arrays (no device transfer, no padding)."""
        if full_cov or X.shape[0] <= batch_size:
            mean, var = fn(np.asarray(X) if on_host else to_device(X))
            return np.asarray(mean), np.asarray(var)
        means, variances = [], []
        for start in range(0, X.shape[0], batch_size):
            chunk = X[start : start + batch_size]
            pad = 0 if on_host else batch_size - chunk.shape[0]
            if pad:  # pad the last batch so every call has the compiled shape
                chunk = np.vstack([chunk, np.repeat(chunk[-1:], pad, axis=0)])
            mean, var = fn(np.asarray(chunk) if on_host else jnp.asarray(chunk))
            means.append(np.asarray(mean)[: batch_size - pad])
            variances.append(np.asarray(var)[: batch_size - pad])
        return np.concatenate(means), np.concatenate(variances)

    def _finish_prediction(self, mean, var_or_cov, *, return_std, return_cov, include_noise, noise_variance=None):
        if return_std and return_cov:
            raise InputError("at most one of return_std and return_cov can be requested")
        mean = np.asarray(mean) * self.y_std_ + self.y_mean_
        known = as_noise_variance(noise_variance, mean.shape[0])
        if not (return_std or return_cov):
            return mean
        cov = np.asarray(var_or_cov)
        per_target = np.ndim(self.noise_) == 1  # k targets with a noise each: a variance each, targets last
        if include_noise:
            eye = np.eye(cov.shape[0])[..., None] if per_target else np.eye(cov.shape[0])
            cov = cov + (eye * self.noise_ if return_cov else self.noise_)
        if np.ndim(self.y_std_) == 1 and not per_target:  # k targets share the latent variance, each on its scale
            cov = cov[..., None]
        cov = cov * self.y_std_**2
        if include_noise and known is not None:  # the test rows' own known noise, in the targets' units
            own = np.diag(known) if return_cov else known
            cov = cov + (own if cov.ndim == own.ndim else own[..., None])
        if return_cov:
            return mean, cov
        if np.any(cov < 0):
            # Documented policy: a variance below zero at the rounding level (|v| <= 1e-8 of the
            # largest) is reported as std 0; anything more negative is a real failure and raises.
            worst = float(cov.min())
            if worst < -1e-8 * max(1.0, float(np.max(np.abs(cov)))):
                raise NumericalError(
                    f"predictive variance {worst:.3g} < 0 beyond rounding: the model's factorisation is "
                    "ill-conditioned; refit with a larger noise lower bound "
                    f"({spelled(type(self).__name__, 'min_noise')})"
                )
            cov = np.maximum(cov, 0.0)
        return mean, np.sqrt(cov)

    # ---- persistence (save / load from persistence.SaveLoadMixin) ---------------------
    @staticmethod
    def _options_to_file(params: dict) -> dict:
        """The parameters as a model file keeps them (``_json_params`` of these)."""
        return params

    @staticmethod
    def _options_from_file(params: dict) -> dict:
        """The constructor's parameters from a model file's."""
        return params

    def _file_params(self):
        return self._options_to_file(self.get_params(deep=False))

    def _base_state(self):
        return {
            "params": {  # an array (noise, one per target) as a list
                k: v.tolist() if isinstance(v, np.ndarray) else v
                for k, v in self._file_params().items()
                if k in self._json_params
            },
            "kernel": self.kernel_.to_dict(),
            "noise": float(self.noise_) if np.ndim(self.noise_) == 0 else [float(v) for v in self.noise_],
            "y_mean": float(self.y_mean_) if np.ndim(self.y_mean_) == 0 else [float(v) for v in self.y_mean_],
            "y_std": float(self.y_std_) if np.ndim(self.y_std_) == 0 else [float(v) for v in self.y_std_],
            "n_features_in": int(self.n_features_in_),
            "feature_names": self._feature_names_state(),
            "target_name": getattr(self, "target_name_", None),
            "loo": self._loo_state(),
        }

    @classmethod
    def _restore_base(cls, meta):
        req = persistence.require
        model = persistence.construct(cls, meta, cls._json_params)
        model.y_mean_, model.y_std_ = _target_scale(meta)
        model.noise_ = _noise(meta, model.y_mean_)
        model.n_features_in_ = req(meta, "n_features_in", int)
        if not (np.all(model.noise_ > 0) and np.all(np.isfinite(model.noise_))):
            raise persistence.ModelFileError(f"metadata field 'noise' must be positive and finite, got {model.noise_}")
        if not (np.all(model.y_std_ > 0) and np.all(np.isfinite(model.y_std_)) and np.all(np.isfinite(model.y_mean_))):
            raise persistence.ModelFileError("metadata fields 'y_mean'/'y_std' must be finite with y_std > 0")
        if model.n_features_in_ < 1:
            raise persistence.ModelFileError("metadata field 'n_features_in' must be >= 1")
        model._restore_feature_names(meta)
        target = meta.get("target_name")  # absent from files written before it was kept
        if target is not None:
            if not isinstance(target, str) or target in set(getattr(model, "feature_names_in_", [])):
                raise persistence.ModelFileError(
                    "metadata field 'target_name' must be null or a name that is no feature's"
                )
            model.target_name_ = target
        model._restore_loo(meta)
        try:
            model.kernel_.check_input_dim(model.n_features_in_)
        except InputError as exc:
            raise persistence.ModelFileError(str(exc)) from None
        return model
