"""ExactGPRegressor: the full GP with a scikit-learn interface."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from ..approximations.exact import exact_log_marginal, exact_posterior, exact_predict
from ..errors import InputError
from ..transforms import to_positive, to_raw
from . import persistence
from .base import GPRegressorBase, input_scale
from .objectives import ExactNegative


@persistence.register
class ExactGPRegressor(GPRegressorBase):
    """Exact Gaussian-process regression, O(n^3): the reference for every sparse method.

    Parameters
    ----------
    kernel : Kernel or None
        Covariance function; ``None`` means SquaredExponential with one
        length-scale per input dimension (ARD), each starting at its column's
        standard deviation. Fitting runs in units where the inputs have unit
        spread, so the result does not depend on the units of X.
    noise : float
        Initial Gaussian noise variance sigma^2 (on the normalised target scale).
    optimize : bool
        Fit hyper-parameters by maximising the log marginal likelihood (plus
        the kernel's and ``noise_prior``'s log hyper-priors). False keeps them.
    n_restarts : int
        Extra L-BFGS-B starts from perturbed initial points; the best is kept.
    max_iter : int
        L-BFGS-B iterations per start.
    normalize_y : bool
        Standardise targets before fitting (predictions are mapped back); from
        fewer than 2 (D + 2) samples the standard deviation is the unbiased one.
    noise_prior : prior or None
        Hyper-prior on the noise variance (:mod:`sparsegp.priors`). With fewer
        than two samples per free hyper-parameter, ``None`` means a weak
        log-normal prior about 0.1 (normalised targets), and the default kernel
        gets weak priors about its start (a ``DataWarning`` says so).
    min_noise : float
        Lower bound on the noise variance during optimisation.
    random_state : int, Generator or None
        Seed for restarts.
    verbose : bool
        Show a progress bar.
    callback : callable or None
        ``callback(iteration, objective, params)`` after each iteration; return True to stop.

    Attributes
    ----------
    kernel_, noise_ : fitted hyper-parameters (noise on the normalised scale).
    log_marginal_likelihood_ : log p(y | X) at the fitted hyper-parameters (normalised targets).
    optimizer_report_ : :class:`~sparsegp.training.OptimizeReport`.
    X_train_, alpha_ : cached for prediction.
    """

    _json_params = ("noise", "optimize", "n_restarts", "max_iter", "normalize_y", "min_noise", "verbose")

    def __init__(
        self,
        kernel=None,
        *,
        noise=1.0,
        optimize=True,
        n_restarts=0,
        max_iter=500,
        normalize_y=True,
        noise_prior=None,
        min_noise=1e-6,
        random_state=None,
        verbose=False,
        callback=None,
    ):
        self.kernel = kernel
        self.noise = noise
        self.optimize = optimize
        self.n_restarts = n_restarts
        self.max_iter = max_iter
        self.normalize_y = normalize_y
        self.noise_prior = noise_prior
        self.min_noise = min_noise
        self.random_state = random_state
        self.verbose = verbose
        self.callback = callback

    def fit(self, X, y):
        """Fit hyper-parameters (if ``optimize``) and cache the posterior. Returns self."""
        X, y = self._validate_training_data(X, y)
        s = input_scale(X)
        kernel = self._initial_kernel(X, s)
        noise = self._initial_noise()
        params = {"kernel": kernel, "raw_noise": jnp.asarray(to_raw(noise))}
        mask = {"kernel": kernel.trainable_mask(), "raw_noise": jnp.asarray(True)}
        params = self._fit_hyperparameters(
            ExactNegative(), params, mask, (jnp.asarray(X / s), jnp.asarray(y)), "ExactGP fit", scale=s
        )
        self.kernel_ = params["kernel"].for_scaled_inputs(1.0 / s)
        self.noise_ = float(to_positive(params["raw_noise"]))
        Xj, yj = jnp.asarray(X), jnp.asarray(y)
        self.log_marginal_likelihood_ = float(exact_log_marginal(self.kernel_, self.noise_, Xj, yj))
        self._cache(X, y)
        return self

    def _objective_data(self, X, y):
        if X is not None or y is not None:
            raise InputError("ExactGPRegressor.log_marginal_likelihood uses its own training data; do not pass X, y")
        return jnp.asarray(self.X_train_), jnp.asarray(self.y_train_)

    def _log_objective(self, kernel, noise, X, y):
        return exact_log_marginal(kernel, noise, X, y)

    def _cache(self, X, y):
        post = exact_posterior(self.kernel_, self.noise_, jnp.asarray(X), jnp.asarray(y))
        self.posterior_ = post
        self.X_train_ = X
        self.y_train_ = y
        self.alpha_ = np.asarray(post.alpha)

    def predict(self, X, return_std=False, return_cov=False, include_noise=True):
        """Predictive mean, and optionally std or full covariance, of the targets y (noise included).

        ``include_noise=False`` gives the latent f instead (the default matches scikit-learn's
        ``GaussianProcessRegressor`` with a ``WhiteKernel``).

        Rounding-level negative variances (at most 1e-8 of the largest) are reported as std 0.
        """
        X = self._validate_test_inputs(X)
        mean, var = self._predict_in_batches(
            lambda Xb: exact_predict(self.kernel_, self.posterior_, Xb, full_cov=return_cov), X, full_cov=return_cov
        )
        return self._finish_prediction(
            mean, var, return_std=return_std, return_cov=return_cov, include_noise=include_noise
        )

    # ---- persistence ---------------------------------------------------------
    def _get_state(self):
        return self._base_state(), {"X_train": self.X_train_, "y_train": self.y_train_}

    @classmethod
    def _from_state(cls, meta, arrays):
        model = cls._restore_base(meta)
        X = persistence.require_array(arrays, "X_train", ndim=2, shape=(None, model.n_features_in_))
        y = persistence.require_array(arrays, "y_train", ndim=1, shape=(X.shape[0],))
        model.optimizer_report_ = None
        model.n_iter_ = 0
        model.log_marginal_likelihood_ = float(
            exact_log_marginal(model.kernel_, model.noise_, jnp.asarray(X), jnp.asarray(y))
        )
        model._cache(X, y)
        return model
