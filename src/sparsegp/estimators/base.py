"""Shared machinery of the regression estimators: validation, target scaling, persistence."""

from __future__ import annotations

import warnings
from dataclasses import replace

import jax
import jax.numpy as jnp
import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.exceptions import ConvergenceWarning

from ..errors import DataWarning, InputError, NotFittedError, NumericalError
from ..kernels import Kernel, SquaredExponential
from ..priors import LogNormal
from ..replicates import Replicates, Rows, collapse, distinct_records, repeated_records
from ..training import minimize
from ..transforms import MAX_VALUE, MIN_VALUE, POSITIVE, RAW_MAX, to_positive, to_raw
from ..validation import (
    as_float_matrix,
    as_float_vector,
    check_feature_names,
    check_int,
    check_positive,
    feature_names_of,
)
from . import persistence
from .calibration import LOO_Z_LEVELS, LOOCheck, loo_sample, summarise, warn_if_miscalibrated
from .objectives import noise_log_prior

# Fewer distinct training inputs than this are refused: from two the targets' scale has one degree of
# freedom, and 2-sd error bars covered 0.05 to 0.26 of test targets on the worst draws (BENCHMARKS.md,
# "Tiny training sets").
MIN_INPUTS = 3

# Weak hyper-priors used when there are fewer than two samples per free hyper-parameter (see
# GPRegressorBase._few_samples): sd of the log-normals, and the noise's prior median (normalised targets).
TINY_DATA_LOG_SD = 1.0
TINY_DATA_NOISE = 0.1


def too_few_inputs(distinct: int, rows: int) -> str:
    """The error for training data with fewer than MIN_INPUTS distinct inputs."""
    return (
        f"X has {distinct} distinct input(s) in {rows} rows; at least {MIN_INPUTS} are required: from fewer, the "
        "targets' scale rests on one degree of freedom and no error bars can be trusted (BENCHMARKS.md, 'Tiny "
        "training sets')"
    )


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


DUPLICATES = ("collapse", "expand", "drop")
# Constructor parameters both regressors save in a model file (JSON values); each adds its own.
COMMON_JSON_PARAMS = (
    "noise",
    "optimize",
    "n_restarts",
    "max_iter",
    "normalize_y",
    "min_noise",
    "duplicates",
    "verbose",
)


class GPRegressorBase(FeatureNamesMixin, persistence.SaveLoadMixin, RegressorMixin, BaseEstimator):
    """Common fit-time validation and predict-time rescaling for GP regressors."""

    # ---- fit helpers ---------------------------------------------------------
    def _check_duplicates(self):
        if self.duplicates not in DUPLICATES:
            raise InputError(f"duplicates must be one of {DUPLICATES}, got {self.duplicates!r}")

    def _validate_training_data(self, X, y):
        """(X, standardised y, the rows grouped by input) after validation.

        Every row is data (``duplicates`` "collapse" or "expand"): the targets are standardised over all
        rows, and rows that share an input are grouped (:func:`~sparsegp.replicates.collapse`), which
        the objectives use for "collapse". A row that repeats an earlier one exactly, inputs and target,
        gets a DataWarning: copies say the targets do not vary at that input, which pulls the noise
        estimate, and the error bars, down; with ``duplicates="drop"`` such copies are fitted once.
        """
        if y is None:
            raise InputError(f"{type(self).__name__} requires y to be passed, but the target y is None")
        self._check_duplicates()
        names = feature_names_of(X)
        X = as_float_matrix(X, "X", min_rows=2)
        y = as_float_vector(y, "y", n=X.shape[0])
        copies = repeated_records(X, y)
        if copies and self.duplicates == "drop":
            keep = distinct_records(X, y)
            warnings.warn(
                f"{copies} of {X.shape[0]} training rows repeat an earlier row exactly (inputs and target); with "
                f"duplicates='drop' each record is fitted once ({keep.size} rows)",
                DataWarning,
                stacklevel=3,
            )
            X, y = X[keep], y[keep]
        elif copies:
            warnings.warn(
                f"{copies} of {X.shape[0]} training rows repeat an earlier row exactly (inputs and target). Every "
                "row is fitted: copies of a record say that the targets do not vary at that input, which pulls the "
                "noise estimate (and the error bars) down. If they are accidental duplicates rather than repeated "
                "measurements, pass duplicates='drop'",
                DataWarning,
                stacklevel=3,
            )
        self.n_features_in_ = X.shape[1]
        self._set_feature_names(names)
        if self.normalize_y:
            self.y_mean_ = float(np.mean(y))
            # From too few points for the hyper-parameters (see _few_samples) the unbiased estimate: the
            # biased one is far too small there, and the weak default priors sit on this scale.
            ddof = 1 if self._too_few(X.shape[0], X.shape[1] + 2) else 0
            std = float(np.std(y, ddof=ddof))
            self.y_std_ = std if std > 0 else 1.0
        else:
            self.y_mean_, self.y_std_ = 0.0, 1.0
        y = (y - self.y_mean_) / self.y_std_
        groups = collapse(X, y)
        if groups.X.shape[0] < MIN_INPUTS:
            raise InputError(too_few_inputs(groups.X.shape[0], X.shape[0]))
        return X, y, groups

    def _objective_rows(self, X, y, groups: Replicates, scale: float) -> Rows:
        """The rows the objective sums over, inputs divided by ``scale``: one weighted row per distinct
        input with ``duplicates="collapse"`` (when some input repeats), every row otherwise."""
        if self.duplicates == "collapse" and groups.repeated:
            return Rows(groups.X / scale, groups.y, groups.counts, groups.scatter)
        return Rows(X / scale, y)

    # ---- the leave-one-out check --------------------------------------------------
    def _check_calibration(self, X, y):
        """The leave-one-out figures ``loo_*`` of the training rows (X, normalised y), on LOO_ROWS of them at
        most, and a CalibrationWarning when they say the error bars are far from honest."""
        rows = loo_sample(X.shape[0])
        mean, var = self._loo(X[rows], y[rows])
        y_mean, y_var = float(np.mean(y)), float(np.var(y))
        self._set_loo(summarise(y[rows], mean, var, y_mean=y_mean, y_var=y_var, y_std=self.y_std_))

    def _loo(self, X, y, batch: int = 1024):
        """Leave-one-out (mean, variance) of training rows (X, normalised y), on the normalised scale,
        ``batch`` rows at a time (the subclass's ``_loo_batch``). Batches are padded to a power of two rows,
        so fits of other sizes reuse the compiled program."""
        means, variances = [], []
        for i in range(0, len(y), batch):
            Xb, yb = X[i : i + batch], y[i : i + batch]
            pad = min(batch, 1 << max(6, (len(yb) - 1).bit_length())) - len(yb)
            mean, var = self._loo_batch(
                jnp.asarray(np.concatenate([Xb, np.repeat(Xb[-1:], pad, axis=0)])), jnp.asarray(np.pad(yb, (0, pad)))
            )
            means.append(np.asarray(mean)[: len(yb)])
            variances.append(np.asarray(var)[: len(yb)])
        return np.concatenate(means), np.concatenate(variances)

    def _set_loo(self, check: LOOCheck | None, warn: bool = True):
        """``loo_*`` from a :class:`~.calibration.LOOCheck` (None: not computed), and the CalibrationWarning."""
        self._loo_check = check
        if check is None:
            self.loo_log_predictive_ = self.loo_coverage_ = self.loo_z_ = self.loo_rows_ = None
            return
        self.loo_log_predictive_ = check.log_predictive
        self.loo_coverage_ = check.coverage
        self.loo_z_ = np.asarray(check.z_quantiles)
        self.loo_rows_ = check.rows
        if warn:
            warn_if_miscalibrated(check, type(self).__name__, stacklevel=4)

    def _loo_state(self):
        check = self._loo_check
        if check is None:
            return None
        return {k: [float(q) for q in v] if k == "z_quantiles" else v for k, v in check._asdict().items()}

    def _restore_loo(self, meta):
        """``loo_*`` from a model file (absent in files written before the check existed)."""
        loo = meta.get("loo")
        if loo is None:
            return self._set_loo(None)
        if not isinstance(loo, dict) or set(loo) != set(LOOCheck._fields):
            raise persistence.ModelFileError(f"metadata field 'loo' must be null or hold {', '.join(LOOCheck._fields)}")
        z = loo["z_quantiles"]
        if not (isinstance(z, list) and len(z) == len(LOO_Z_LEVELS) and all(isinstance(q, (int, float)) for q in z)):
            raise persistence.ModelFileError(f"metadata 'loo' entry 'z_quantiles' must be {len(LOO_Z_LEVELS)} numbers")
        req = persistence.require
        values = {k: req(loo, k, float, where="'loo'") for k in ("log_predictive", "coverage", "snlp", "z_rms")}
        rows = req(loo, "rows", int, where="'loo'")
        finite = np.all(np.isfinite([*values.values(), *z]))
        if not (finite and 0 <= values["coverage"] <= 1 and values["z_rms"] >= 0 and rows >= 1 and z == sorted(z)):
            raise persistence.ModelFileError("metadata field 'loo' holds out-of-range values")
        self._set_loo(LOOCheck(z_quantiles=np.asarray(z, dtype=float), rows=rows, **values), warn=False)

    def _initial_kernel(self, X: np.ndarray, s: float) -> Kernel:
        """The starting kernel for the inputs X / s (see :func:`input_scale`)."""
        return self._initial_kernel_for(np.std(X, axis=0), X.shape[0], s)

    def _initial_kernel_for(self, column_std, n_samples: int, s: float) -> Kernel:
        """The starting kernel for inputs with these columns' standard deviations, divided by s.

        The default is an ARD squared exponential with each length-scale at its column's standard
        deviation (1 for a constant column), so the start does not depend on the units either.
        """
        D = np.size(column_std)
        if self.kernel is None:
            spread = np.asarray(column_std, dtype=float) / s
            lengthscale = np.where(spread > 0, spread, 1.0)
            priors = None
            if self.optimize is True and self._too_few(n_samples, D + 2):
                priors = {
                    "lengthscale": LogNormal(np.log(lengthscale), TINY_DATA_LOG_SD),
                    "variance": LogNormal(0.0, TINY_DATA_LOG_SD),
                }
            return SquaredExponential(lengthscale=lengthscale, variance=1.0, priors=priors)
        if not isinstance(self.kernel, Kernel):
            raise InputError(f"kernel must be a sparsegp.kernels.Kernel, got {type(self.kernel).__name__}")
        self.kernel.check_input_dim(D)
        return self.kernel.for_scaled_inputs(s)

    def _initial_noise(self) -> float:
        noise = float(check_positive(self.noise, "noise"))
        min_noise = float(check_positive(self.min_noise, "min_noise"))
        return max(noise, min_noise)

    def _fit_noise_prior(self):
        """The noise prior of the current fit: ``noise_prior``, or the weak default of :meth:`_few_samples`."""
        return getattr(self, "_noise_prior_fit", self.noise_prior)

    def _noise_log_prior(self, raw_noise):
        return noise_log_prior(self._fit_noise_prior(), raw_noise)

    @staticmethod
    def _too_few(n_samples: int, n_free: int) -> bool:
        return bool(n_free) and n_samples < 2 * n_free

    def _raw_bounds(self, params):
        """Bounds on the raw parameters: each kernel hyper-parameter's from its transform ([1e-12, 1e12]
        for a positive one, [0, 1e12] for a non-negative one), the noise in [min_noise, 1e12] (value
        space), any other entry (free inducing inputs) unbounded."""
        lower, upper = params["kernel"].raw_bounds()
        lower, upper = {"kernel": lower}, {"kernel": upper}
        lower["raw_noise"], upper["raw_noise"] = jnp.asarray(to_raw(float(self.min_noise))), jnp.asarray(RAW_MAX)
        for key, leaf in params.items():
            if key not in lower:
                lower[key] = jax.tree_util.tree_map(lambda a: jnp.full(jnp.shape(a), -jnp.inf), leaf)
                upper[key] = jax.tree_util.tree_map(lambda a: jnp.full(jnp.shape(a), jnp.inf), leaf)
        return lower, upper

    def _fit_hyperparameters(
        self, objective, params, mask, args, desc, *, n_samples, value_and_grad=None, scale=1.0, max_iter=None
    ):
        """L-BFGS-B over the free entries of ``params`` (a dict with 'kernel' and 'raw_noise').

        ``objective``: an :class:`~.objectives.ExactNegative` or :class:`~.objectives.SparseNegative`,
        whose noise prior is set here (the weak default of :meth:`_few_samples` when data are few).

        Kernel hyper-parameters are boxed to [1e-12, 1e12], the noise variance to [min_noise, 1e12];
        any other entry (free inducing inputs) is unbounded. ``params`` are for the inputs divided by
        ``scale``; the user's ``callback`` sees them in the inputs' own units; ``n_samples`` (the training
        rows) sets the tiny-data rule of :meth:`_few_samples`. Sets
        ``optimizer_report_`` and ``n_iter_``; warns (ConvergenceWarning) when the optimiser stopped
        short of convergence or a hyper-parameter ended at a bound. ``max_iter`` overrides the
        estimator's for a stage of a planned length (no restarts, and stopping at it is no warning).
        """
        check_int(self.n_restarts, "n_restarts")
        check_int(self.max_iter, "max_iter", minimum=1)
        if not self.optimize:
            self.optimizer_report_, self.n_iter_ = None, 0
            return params

        callback = self.callback
        if callback is not None and scale != 1.0:

            def callback(iteration, value, p, user=self.callback):
                return user(iteration, value, params_for_scaled_inputs(p, 1.0 / scale))

        self._few_samples(mask, n_samples=int(n_samples))
        lower, upper = self._raw_bounds(params)
        params, report = minimize(
            replace(objective, noise_prior=self._noise_prior_fit),
            params,
            args=args,
            mask=mask,
            lower=lower,
            upper=upper,
            max_iter=self.max_iter if max_iter is None else max_iter,
            n_restarts=self.n_restarts if max_iter is None else 0,
            rng=self.random_state,
            verbose=self.verbose,
            callback=callback,
            desc=desc,
            value_and_grad=value_and_grad,
        )
        self.optimizer_report_, self.n_iter_ = report, report.n_iter
        self._warn_unconverged(report, params, mask, planned_cap=max_iter is not None)
        return params

    def _few_samples(self, mask, n_samples):
        """Weak default hyper-priors and a DataWarning when there are fewer than two samples per free
        kernel and noise hyper-parameter.

        Maximum likelihood on so few points lets the noise fall to min_noise and the error bars
        collapse; log-normal priors (sd TINY_DATA_LOG_SD in log) about the data-driven start keep them
        honest: the default kernel's length-scales about the columns' spread and its variance about 1
        (set by :meth:`_initial_kernel`), the noise about TINY_DATA_NOISE of the target variance unless
        ``noise_prior`` is given. Coverage measured in BENCHMARKS.md, "Tiny training sets".
        """
        leaves = jax.tree_util.tree_leaves({"kernel": mask["kernel"], "noise": mask["raw_noise"]})
        n_free = int(sum(np.sum(np.asarray(m)) for m in leaves))
        self._noise_prior_fit = self.noise_prior
        if not self._too_few(n_samples, n_free):
            return
        if self.noise_prior is None and bool(mask["raw_noise"]):
            self._noise_prior_fit = LogNormal(float(np.log(TINY_DATA_NOISE)), TINY_DATA_LOG_SD)
        warnings.warn(
            f"{type(self).__name__}: {n_samples} training samples for {n_free} free hyper-parameters; "
            "maximum-likelihood values are poorly determined from so few points and the error bars tend to be too "
            "narrow, so weak default priors are used (the default kernel's about its start, the noise about "
            f"{TINY_DATA_NOISE:g} of the target variance unless noise_prior is given); to choose, fix some "
            "hyper-parameters (optimize=False, a kernel with fixed=...) or give them priors",
            DataWarning,
            stacklevel=4,
        )

    def _warn_unconverged(self, report, params, mask, planned_cap=False):
        """ConvergenceWarning (scikit-learn's class) for a stopped optimiser or a parameter at a bound."""
        name = type(self).__name__
        capped = "iterations reached limit" in report.reason.lower()
        if not report.success and "callback" not in report.reason.lower() and not (planned_cap and capped):
            warnings.warn(
                f"{name}: L-BFGS-B stopped after {report.n_iter} iterations without converging ({report.reason}); "
                "raise max_iter, or use n_restarts for another start",
                ConvergenceWarning,
                stacklevel=4,
            )
        kernel, free = params["kernel"], mask["kernel"]
        free_values = dict(zip(kernel.parameters(), (np.asarray(m) for m in jax.tree_util.tree_leaves(free))))
        transforms = kernel.transforms()
        for pname, value in kernel.parameters().items():
            # a non-negative parameter (lower bound 0) at 0 is a value the data chose, not a bound hit
            low = transforms[pname].lower > 0 and value <= MIN_VALUE * 1.001
            hit = free_values[pname] & (low | (value >= MAX_VALUE * 0.999))
            if np.any(hit):
                warnings.warn(
                    f"{name}: kernel hyper-parameter {pname} ended at its bound ({MIN_VALUE:g} or {MAX_VALUE:g} on "
                    "the inputs' standardised scale); the data do not determine it: fix it or give it a prior",
                    ConvergenceWarning,
                    stacklevel=4,
                )
        noise = float(to_positive(params["raw_noise"]))
        if bool(mask["raw_noise"]) and noise <= float(self.min_noise) * 1.001:
            warnings.warn(
                f"{name}: the noise variance ended at its lower bound min_noise={float(self.min_noise):g} (normalised "
                "targets): the model interpolates the training targets; if they are noisy, raise min_noise or set "
                "a noise_prior",
                ConvergenceWarning,
                stacklevel=4,
            )

    # ---- the objective at given hyper-parameters (scikit-learn's public name) ---------------
    def hyperparameter_names(self) -> list[str]:
        """Names of the entries of ``theta``: the kernel's parameters (ARD entries as ``name[d]``), then 'noise'."""
        self._check_fitted()
        names = []
        for name, value in self.kernel_.parameters().items():
            names += [name] if np.ndim(value) == 0 else [f"{name}[{d}]" for d in range(np.size(value))]
        return names + ["noise"]

    def log_marginal_likelihood(self, theta=None, eval_gradient=False, *, X=None, y=None):
        """The model's objective at ``theta``, and its gradient with respect to ``theta``.

        scikit-learn's name and signature: ``theta`` holds the log of each positive hyper-parameter
        (and the value itself of a non-negative one, such as the bias v_b, which may be 0) in the order
        of :meth:`hyperparameter_names` (None: the fitted values); targets are standardised as at fit
        and the noise is on that scale; hyper-priors are not included. The exact GP's objective is
        log p(y | X, theta) (RW eq. 2.30); a sparse model's is its approximation's
        (``objective_name_``) at the fitted inducing inputs, on the training data ``X, y`` that must
        be passed again (the model keeps only its posterior).
        Returns the value, or ``(value, gradient)`` with ``eval_gradient=True``.
        """
        self._check_fitted()
        data = self._objective_data(X, y)
        leaves, treedef = jax.tree_util.tree_flatten(self.kernel_)
        logged = [t is POSITIVE for t in self.kernel_.transforms().values()]  # in leaf order
        sizes = [int(np.size(leaf)) for leaf in leaves]
        shapes = [np.shape(leaf) for leaf in leaves]
        values = [np.ravel(np.asarray(v)) for v in self.kernel_.parameters().values()]
        theta0 = np.concatenate([np.log(v) if log else v for v, log in zip(values, logged)] + [[np.log(self.noise_)]])
        if theta is None:
            theta = theta0
        theta = as_float_vector(theta, "theta", n=theta0.size)
        unlogged = np.concatenate([np.full(size, not log) for size, log in zip(sizes, logged)] + [[False]])
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
            return self._log_objective(jax.tree_util.tree_unflatten(treedef, raws), values[-1], data)

        if not eval_gradient:
            return float(objective(jnp.asarray(theta)))
        value, grad = jax.value_and_grad(objective)(jnp.asarray(theta))
        return float(value), np.asarray(grad)

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

    def _predict_in_batches(self, fn, X, *, full_cov: bool, batch_size: int = 4096):
        """Run ``fn(X_batch) -> (mean, var)`` over fixed-size row batches (bounded memory, one compile)."""
        if full_cov or X.shape[0] <= batch_size:
            mean, var = fn(jnp.asarray(X))
            return np.asarray(mean), np.asarray(var)
        means, variances = [], []
        for start in range(0, X.shape[0], batch_size):
            chunk = X[start : start + batch_size]
            pad = batch_size - chunk.shape[0]
            if pad:  # pad the last batch so every call has the compiled shape
                chunk = np.vstack([chunk, np.repeat(chunk[-1:], pad, axis=0)])
            mean, var = fn(jnp.asarray(chunk))
            means.append(np.asarray(mean)[: batch_size - pad])
            variances.append(np.asarray(var)[: batch_size - pad])
        return np.concatenate(means), np.concatenate(variances)

    def _finish_prediction(self, mean, var_or_cov, *, return_std, return_cov, include_noise):
        if return_std and return_cov:
            raise InputError("at most one of return_std and return_cov can be requested")
        mean = np.asarray(mean) * self.y_std_ + self.y_mean_
        if not (return_std or return_cov):
            return mean
        cov = np.asarray(var_or_cov)
        if include_noise:
            cov = cov + (np.eye(cov.shape[0]) * self.noise_ if return_cov else self.noise_)
        cov = cov * self.y_std_**2
        if return_cov:
            return mean, cov
        if np.any(cov < 0):
            # Documented policy: a variance below zero at the rounding level (|v| <= 1e-8 of the
            # largest) is reported as std 0; anything more negative is a real failure and raises.
            worst = float(cov.min())
            if worst < -1e-8 * max(1.0, float(np.max(np.abs(cov)))):
                raise NumericalError(
                    f"predictive variance {worst:.3g} < 0 beyond rounding: the model's factorisation is "
                    "ill-conditioned; refit with a larger noise lower bound (min_noise)"
                )
            cov = np.maximum(cov, 0.0)
        return mean, np.sqrt(cov)

    # ---- persistence (save / load from persistence.SaveLoadMixin) ---------------------
    def _base_state(self):
        return {
            "params": {k: v for k, v in self.get_params(deep=False).items() if k in self._json_params},
            "kernel": self.kernel_.to_dict(),
            "noise": float(self.noise_),
            "y_mean": float(self.y_mean_),
            "y_std": float(self.y_std_),
            "n_features_in": int(self.n_features_in_),
            "feature_names": self._feature_names_state(),
            "loo": self._loo_state(),
        }

    @classmethod
    def _restore_base(cls, meta):
        req = persistence.require
        model = persistence.construct(cls, meta, cls._json_params)
        model.noise_ = req(meta, "noise", float)
        model.y_mean_ = req(meta, "y_mean", float)
        model.y_std_ = req(meta, "y_std", float)
        model.n_features_in_ = req(meta, "n_features_in", int)
        if not (model.noise_ > 0 and np.isfinite(model.noise_)):
            raise persistence.ModelFileError(f"metadata field 'noise' must be positive and finite, got {model.noise_}")
        if not (model.y_std_ > 0 and np.isfinite(model.y_std_) and np.isfinite(model.y_mean_)):
            raise persistence.ModelFileError("metadata fields 'y_mean'/'y_std' must be finite with y_std > 0")
        if model.n_features_in_ < 1:
            raise persistence.ModelFileError("metadata field 'n_features_in' must be >= 1")
        model._restore_feature_names(meta)
        model._restore_loo(meta)
        try:
            model.kernel_.check_input_dim(model.n_features_in_)
        except InputError as exc:
            raise persistence.ModelFileError(str(exc)) from None
        return model
