"""Shared machinery of the regression estimators: validation, target scaling, persistence."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin

from ..errors import InputError, NotFittedError, NumericalError
from ..kernels import Kernel, SquaredExponential
from ..training import minimize
from ..transforms import RAW_MAX, RAW_MIN, log_jacobian, to_positive, to_raw
from ..validation import as_float_matrix, as_float_vector, check_feature_names, check_int, check_positive, feature_names_of
from . import persistence



class GPRegressorBase(persistence.SaveLoadMixin, RegressorMixin, BaseEstimator):
    """Common fit-time validation and predict-time rescaling for GP regressors."""

    # ---- fit helpers ---------------------------------------------------------
    def _validate_training_data(self, X, y, *, min_rows: int = 1):
        if y is None:
            raise InputError(f"{type(self).__name__} requires y to be passed, but the target y is None")
        names = feature_names_of(X)
        X = as_float_matrix(X, "X", min_rows=min_rows)
        y = as_float_vector(y, "y", n=X.shape[0])
        self.n_features_in_ = X.shape[1]
        self._set_feature_names(names)
        if self.normalize_y:
            self.y_mean_ = float(np.mean(y))
            std = float(np.std(y))
            self.y_std_ = std if std > 0 else 1.0
        else:
            self.y_mean_, self.y_std_ = 0.0, 1.0
        return X, (y - self.y_mean_) / self.y_std_

    def _initial_kernel(self, D: int) -> Kernel:
        if self.kernel is None:
            return SquaredExponential(lengthscale=np.ones(D), variance=1.0)
        if not isinstance(self.kernel, Kernel):
            raise InputError(f"kernel must be a sparsegp.kernels.Kernel, got {type(self.kernel).__name__}")
        self.kernel.check_input_dim(D)
        return self.kernel

    def _initial_noise(self) -> float:
        noise = float(check_positive(self.noise, "noise"))
        min_noise = float(check_positive(self.min_noise, "min_noise"))
        return max(noise, min_noise)

    def _noise_log_prior(self, raw_noise):
        if self.noise_prior is None:
            return 0.0
        return self.noise_prior.log_prob(to_positive(raw_noise)) + log_jacobian(raw_noise)

    def _raw_bounds(self, params):
        """Bounds on the raw parameters: kernel hyper-parameters in [1e-12, 1e12], the noise in
        [min_noise, 1e12] (value space), any other entry (free inducing inputs) unbounded."""

        def bounds(value, inner):
            out = {}
            for key, leaf in params.items():
                fill = value if key in ("kernel", "raw_noise") else inner
                out[key] = jax.tree_util.tree_map(lambda a: jnp.full(jnp.shape(a), fill), leaf)
            return out

        lower, upper = bounds(RAW_MIN, -jnp.inf), bounds(RAW_MAX, jnp.inf)
        lower["raw_noise"] = jnp.asarray(to_raw(float(self.min_noise)))
        return lower, upper

    def _fit_hyperparameters(self, objective, params, mask, args, desc, value_and_grad=None):
        """L-BFGS-B over the free entries of ``params`` (a dict with 'kernel' and 'raw_noise').

        Kernel hyper-parameters are boxed to [1e-12, 1e12], the noise variance to [min_noise, 1e12];
        any other entry (free inducing inputs) is unbounded. Sets ``optimizer_report_`` and ``n_iter_``.
        """
        check_int(self.n_restarts, "n_restarts")
        check_int(self.max_iter, "max_iter", minimum=1)
        if not self.optimize:
            self.optimizer_report_, self.n_iter_ = None, 0
            return params

        lower, upper = self._raw_bounds(params)
        params, report = minimize(
            objective,
            params,
            args=args,
            mask=mask,
            lower=lower,
            upper=upper,
            max_iter=self.max_iter,
            n_restarts=self.n_restarts,
            rng=self.random_state,
            verbose=self.verbose,
            callback=self.callback,
            desc=desc,
            value_and_grad=value_and_grad,
        )
        self.optimizer_report_, self.n_iter_ = report, report.n_iter
        return params

    # ---- predict helpers -------------------------------------------------------
    def _check_fitted(self):
        if not hasattr(self, "kernel_"):
            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet. Call 'fit' with appropriate arguments "
                "before using this estimator."
            )

    def _set_feature_names(self, names):
        """``feature_names_in_`` (scikit-learn's attribute): the column names of a DataFrame at fit, else absent."""
        if names is None:
            self.__dict__.pop("feature_names_in_", None)
        else:
            self.feature_names_in_ = np.asarray(names, dtype=object)

    def _validate_test_inputs(self, X):
        self._check_fitted()
        check_feature_names(getattr(self, "feature_names_in_", None), X, type(self).__name__)
        return as_float_matrix(X, "X", n_features=self.n_features_in_, owner=type(self).__name__)

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
            "feature_names": None if getattr(self, "feature_names_in_", None) is None
            else [str(n) for n in self.feature_names_in_],
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
        names = meta.get("feature_names")
        if names is not None:
            if not (isinstance(names, list) and len(names) == model.n_features_in_ and all(isinstance(n, str) for n in names)
                    and len(set(names)) == len(names)):
                raise persistence.ModelFileError(
                    f"metadata field 'feature_names' must be null or {model.n_features_in_} distinct strings"
                )
        model._set_feature_names(names)
        try:
            model.kernel_.check_input_dim(model.n_features_in_)
        except InputError as exc:
            raise persistence.ModelFileError(str(exc)) from None
        return model
