"""ExactGPRegressor: the full GP with a scikit-learn interface."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from .._compile import to_device
from .._docstrings import fill
from ..approximations.exact_gp import exact_log_marginal, exact_posterior, exact_predict
from ..approximations.exact_host import host_exact_posterior, host_exact_predict, host_log_marginal, on_host
from ..approximations.loo import exact_loo, host_exact_loo
from ..backends.replicates import Rows, row_index
from ..errors import InputError
from ..fitting.calibration import loo_check
from ..fitting.config import exact_config
from ..fitting.exact_fit import fit_exact
from . import persistence
from .base import COMMON_JSON_PARAMS, PREDICT_OPTIONS, GPRegressorBase, copy_result


@fill()
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
    noise : float or array of shape (k,)
        Initial Gaussian noise variance sigma^2 (on the normalised target scale).
        An array of k values, for y of k columns, gives each target a noise variance of its own (``noise_`` then
        holds k).
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
    duplicates : {"collapse", "expand", "drop"}
        Rows that share an input. "collapse" (the default) fits every row and computes with one row
        per distinct input (its count, mean target and within-input sum of squares give exactly the
        likelihood, gradient and predictions of all the rows, at the cost of the distinct inputs);
        "expand" fits every row as a row of its own (the same model, slower; for checks); "drop" fits
        exact copies of a record (inputs and target) once.
    random_state : int, Generator or None
        Seed for restarts.
    warm_start : bool
        True: a second ``fit`` starts from the fitted kernel and noise (scikit-learn's convention), on the same rows
        or on others, instead of the data-driven start.
    verbose : bool
        Show a progress bar.
    callback : callable or None
        ``callback(iteration, objective, params)`` after each iteration; return True to stop.

    Attributes
    ----------
    kernel_ : Kernel
        The fitted kernel (in the units of X).
    noise_ : float or ndarray of shape (k,)
        The fitted noise variance (normalised targets); one per target where ``noise`` gave one each.
    log_marginal_likelihood_ : float
        log p(y | X) at the fitted hyper-parameters (normalised targets).
    optimizer_report_ : OptimizeReport
        The optimiser's report.
    stop_reason_ : str or None
        None, or "interrupted ..." after a KeyboardInterrupt during ``fit``: the estimator then holds the best
        iterate reached, warns and lets the KeyboardInterrupt go on.
    X_train_, y_train_, alpha_ : ndarray
        Cached for prediction: the training inputs and (normalised) targets, or with
        ``duplicates="collapse"`` and repeated inputs, the distinct inputs and their mean targets.
    train_counts_, train_scatter_ : ndarray
        Rows at each of ``X_train_`` and their targets' within-input sum of squares (ones and zeros when
        each row is its own).
    on_host_ : bool
        Whether the posterior and predictions run in NumPy and LAPACK without a JAX program (small data with a
        kernel that has a host form: :func:`sparsegp.approximations.exact_host.on_host`).
    loo_log_predictive_, loo_coverage_, loo_z_, loo_rows_ : float, float, ndarray, int
        The leave-one-out check of the error bars (:mod:`sparsegp.fitting.calibration`): mean log density
        per training row (the targets' units), the share within 2 sd, the quantiles of
        z = (y - mean) / sd at probabilities ``calibration.LOO_Z_LEVELS``, and how many rows were scored.

    See Also
    --------
    SparseGPRegressor : the sparse approximations, O(n m^2).

    Examples
    --------
    {toy_regression}
    >>> from sparsegp import ExactGPRegressor
    >>> model = ExactGPRegressor(random_state=0).fit(X, y)
    >>> mean, std = model.predict(np.array([[0.5]]), return_std=True)
    >>> bool(abs(mean[0] - np.sin(1.0)) < 0.05), bool(0.09 < std[0] < 0.12)  # the noise sd is 0.1
    (True, True)
    """

    _json_params = COMMON_JSON_PARAMS

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
        duplicates="collapse",
        random_state=None,
        warm_start=False,
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
        self.duplicates = duplicates
        self.random_state = random_state
        self.warm_start = warm_start
        self.verbose = verbose
        self.callback = callback

    def fit(self, X, y, noise_variance=None):
        """Fit the hyper-parameters (if ``optimize``) by maximising the log marginal likelihood, cache the
        posterior, and check the error bars by leave-one-out.

        Parameters
        ----------
        X : array or DataFrame of shape (n, D)
            Training inputs.
        y : array of shape (n,) or (n, k)
            Targets; k columns are k targets fitted with one kernel and noise (predictions then of shape (t, k)).
        noise_variance : float or array of shape (n,), optional
            A known noise variance per row, in the units of y squared, added to the learnt noise: the likelihood
            N(y_i | f(x_i), ``noise_`` + ``noise_variance[i]``) (scikit-learn's ``alpha``, beside a learnt noise). Routed
            by scikit-learn's metadata routing (``set_fit_request(noise_variance=True)``).

        Returns
        -------
        ExactGPRegressor
            self, fitted.

        Raises
        ------
        InputError
            If X or y is malformed (NaN, inf, wrong shape, too few rows).
        NumericalError
            If K + sigma^2 I cannot be factorised even with the largest jitter allowed.
        """
        config = exact_config(self)
        data, names = self._training_data(X, y, config, noise_variance, dask=False)
        self._set_data_attributes(data.moments, data.X.shape[1], names)
        fit = fit_exact(config, data)
        copy_result(self, fit)
        self._cache(data.rows(1.0))
        self._set_loo(loo_check(self._loo_batch, data, self.y_std_))
        self._raise_if_interrupted(fit.stop_reason)
        return self

    def _loo_batch(self, X, y, known=None):
        if self.on_host_:  # NumPy in and out (:mod:`sparsegp.approximations.exact_host`)
            index = row_index(self.X_train_, np.asarray(X))
            return host_exact_loo(self.posterior_, self.noise_, index, np.asarray(y), self.y_train_[index])
        if known is None:
            index = to_device(row_index(self.X_train_, np.asarray(X)))
            return exact_loo(self.posterior_, self.noise_, index, y, to_device(self.y_train_)[index])
        # rows are grouped by input and known variance (sparsegp.backends.replicates)
        groups = np.column_stack([self.X_train_, self.train_known_])
        index = to_device(row_index(groups, np.column_stack([np.asarray(X), np.asarray(known)])))
        return exact_loo(self.posterior_, self.noise_ + known, index, y, to_device(self.y_train_)[index])

    def _objective_data(self, X, y, noise_variance=None):
        if X is not None or y is not None or noise_variance is not None:
            raise InputError(
                "ExactGPRegressor.log_marginal_likelihood uses its own training data and their noise_variance; do "
                "not pass X, y or noise_variance"
            )
        return self._training_rows()

    def _training_rows(self) -> Rows:
        """The rows the likelihood sums over: every row, or one weighted row per distinct input."""
        if np.all(self.train_counts_ == 1) and self.train_known_ is None:
            return Rows(self.X_train_, self.y_train_)
        return Rows(self.X_train_, self.y_train_, self.train_counts_, self.train_scatter_, self.train_known_)

    def _log_objective(self, kernel, noise, rows):
        return exact_log_marginal(kernel, noise, *rows.jax_args()[:2], **self._weights(rows))

    @staticmethod
    def _weights(rows):
        return {} if rows.counts is None else {k: jnp.asarray(v) for k, v in rows.weights().items()}

    def _cache(self, rows):
        """The prediction cache and ``log_marginal_likelihood_`` from the training rows (user-unit inputs); on the host
        without a JAX program where :func:`~sparsegp.approximations.exact_host.on_host` says so."""
        self.on_host_ = on_host(self.kernel_, self.noise_, rows.X, rows.counts, rows.known)
        if self.on_host_:
            self.log_marginal_likelihood_ = host_log_marginal(self.kernel_, self.noise_, rows.X, rows.y)
            post = host_exact_posterior(self.kernel_, self.noise_, rows.X, rows.y)
        else:
            weights = self._weights(rows)
            Xj, yj = jnp.asarray(rows.X), jnp.asarray(rows.y)
            self.log_marginal_likelihood_ = float(exact_log_marginal(self.kernel_, self.noise_, Xj, yj, **weights))
            post = exact_posterior(self.kernel_, self.noise_, Xj, yj, counts=weights.get("counts"), known=rows.known)
        self.posterior_ = post
        self.X_train_ = rows.X
        self.y_train_ = rows.y
        self.train_counts_ = np.ones(rows.X.shape[0]) if rows.counts is None else rows.counts
        self.train_scatter_ = np.zeros(rows.X.shape[0]) if rows.scatter is None else rows.scatter
        self.train_known_ = rows.known  # each group's known noise variance (normalised scale), or None
        alpha = np.asarray(post.alpha)
        self.alpha_ = alpha.T if np.ndim(self.noise_) == 1 else alpha  # (n, k): a noise per target maps over k first

    @fill(predict_options=PREDICT_OPTIONS)
    def predict(self, X, return_std=False, return_cov=False, include_noise=True, noise_variance=None):
        """Predictive mean, and optionally std or full covariance, of the targets y (noise included).

        ``include_noise=False`` gives the latent f instead (the default matches scikit-learn's
        ``GaussianProcessRegressor`` with a ``WhiteKernel``). Rounding-level negative variances (at most
        1e-8 of the largest) are reported as std 0.

        Parameters
        ----------
        X : array of shape (t, D)
            Test inputs.
        {predict_options}

        Raises
        ------
        NotFittedError
            Before ``fit``.
        InputError
            If X is malformed or has another number of columns than the training inputs.
        """
        X = self._validate_test_inputs(X)
        if self.on_host_:
            mean, var = host_exact_predict(self.kernel_, self.posterior_, X, full_cov=return_cov)
        else:
            mean, var = self._predict_in_batches(
                lambda Xb: exact_predict(self.kernel_, self.posterior_, Xb, full_cov=return_cov), X, full_cov=return_cov
            )
        return self._finish_prediction(
            mean, var, return_std=return_std, return_cov=return_cov, include_noise=include_noise,
            noise_variance=noise_variance,
        )  # fmt: skip

    # ---- persistence ---------------------------------------------------------
    def _get_state(self):
        arrays = {"X_train": self.X_train_, "y_train": self.y_train_}
        if self._training_rows().counts is not None:
            arrays.update(train_counts=self.train_counts_, train_scatter=self.train_scatter_)
        if self.train_known_ is not None:
            arrays.update(train_known=self.train_known_)
        return self._base_state(), arrays

    @classmethod
    def _from_state(cls, meta, arrays):
        model = cls._restore_base(meta)
        X = persistence.require_array(arrays, "X_train", ndim=2, shape=(None, model.n_features_in_))
        y = persistence.require_array(
            arrays, "y_train", ndim=1 + np.ndim(model.y_mean_), shape=(X.shape[0],) + np.shape(model.y_mean_)
        )  # (n, k) for k targets
        counts = scatter = None
        if "train_counts" in arrays or "train_scatter" in arrays:
            counts = persistence.require_array(arrays, "train_counts", ndim=1, shape=(X.shape[0],))
            shape = (X.shape[0],) + np.shape(model.y_mean_)  # (n, k): each target's sums of squares
            # summed over the k targets in files written before each target kept its own (one noise for all)
            summed = np.ndim(model.noise_) == 0 and np.ndim(arrays.get("train_scatter")) == 1
            scatter = persistence.require_array(
                arrays, "train_scatter", ndim=1 if summed else len(shape), shape=shape[:1] if summed else shape
            )
            if np.any(counts < 1) or np.any(counts != np.round(counts)) or np.any(scatter < 0):
                raise persistence.ModelFileError(
                    "arrays 'train_counts' / 'train_scatter' must hold counts >= 1 and sums of squares >= 0"
                )
        known = None
        if "train_known" in arrays:
            known = persistence.require_array(arrays, "train_known", ndim=1, shape=(X.shape[0],))
            if counts is None or np.any(known < 0):
                raise persistence.ModelFileError(
                    "array 'train_known' must hold variances >= 0 beside 'train_counts' and 'train_scatter'"
                )
        model.optimizer_report_ = None
        model.n_iter_ = 0
        model.stop_reason_ = None
        model._cache(Rows(X, y, counts, scatter, known))
        return model
