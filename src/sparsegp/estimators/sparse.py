"""SparseGPRegressor: SoR, DTC, FITC and VFE side by side behind one scikit-learn interface."""

from __future__ import annotations

import numpy as np

from .._docstrings import fill
from ..approximations.augmented import full_data_predict
from ..approximations.base import prediction_mode
from ..approximations.common import sparse_predict, unexplained_variance
from ..approximations.registry import APPROXIMATIONS
from ..approximations.sparse_host import host_sparse_predict, loo_function
from ..backends import is_dask_collection
from ..backends.replicates import Rows
from ..errors import InputError
from ..fitting.calibration import warn_if_sor_too_narrow
from ..fitting.config import sparse_config
from ..fitting.pipeline import fit_sparse
from ..likelihoods import regression_named
from ..linalg import INDUCING_JITTER
from ..options import ALIASES, DEPRECATED, flat_options, grouped_options, set_grouped
from . import persistence
from . import sparse_variational as variational
from .base import COMMON_JSON_PARAMS, PREDICT_OPTIONS
from .sparse_file import sparse_from_state, sparse_state
from .sparse_fitted import apply_fit, checkpoint_writer, final_checkpoint
from .sparse_objective import keep_noise_variance, log_objective, objective_rows


@fill()
@persistence.register
class SparseGPRegressor(variational.LikelihoodRegressorBase):
    """Sparse GP regression with m inducing inputs, O(n m^2) per objective evaluation.

    Parameters
    ----------
    kernel : Kernel or None
        ``None`` means SquaredExponential with ARD length-scales, each starting at its column's standard deviation.
        Fitting runs in units where the inputs have unit spread, so the result does not depend on the units of X.
    likelihood : {"gaussian", "student-t", "poisson"} or TargetLikelihood
        p(y | f). "gaussian" (the default): Gaussian noise of variance ``noise``, fitted by the collapsed
        objective of ``approximation``. "student-t" (:class:`~sparsegp.likelihoods.StudentT`: degrees of freedom and
        scale learnt; targets with outliers) and "poisson" (:class:`~sparsegp.likelihoods.Poisson`: counts, the log
        link): the uncollapsed variational bound over every row (Hensman, Matthews & Ghahramani 2015, eq. 3), the
        classifier's fit (:mod:`sparsegp.fitting.variational`), with ``q_mu_``, ``q_sqrt_``, ``mean_`` and
        ``likelihood_`` fitted; ``predict(X, return_std=True)`` gives y's predictive mean and sd,
        :meth:`predict_quantiles` its intervals. There ``approximation``, ``prediction``, ``noise`` and the
        re-selecting schedules do not apply (an error says so), the growth's ``tol`` is 1e-3 nats per row unless
        ``Joint(tol=...)`` gives one, and arrays are fitted in memory.
    approximation : {"vfe", "dtc", "fitc", "sor"}
        VFE: Titsias's variational bound (the default; never above the exact evidence). DTC: Seeger et al.'s
        projected process. FITC: Snelson & Ghahramani's SPGP. SoR: Quiñonero-Candela & Rasmussen's reduced-rank GP.
    inducing : "auto", Auto, int, int array of shape (m,), float array of shape (m, D), Selector or KMeans
        "auto" (the default; ``Auto(max_inducing, time_budget)`` of :mod:`sparsegp.options` sets its limits): the
        fit chooses m (:mod:`sparsegp.fitting.growth`): all distinct inputs, the exact GP, where there are at most
        ``max_inducing`` (under None, also where the exact GP costs less than the
        sparse objective at the device's cap: up to 2.12 times it); else doubling m from 256 until the last doubling raised the
        objective, or the gap falls, below 0.01 nats per row, or a budget is reached. An int m draws m distinct
        training inputs at random (``random_state``); an integer array names training rows
        (the papers' active set I); a float array gives the initial inducing inputs themselves; a selector from
        :mod:`sparsegp.selection` (``InfoGain(256)``, ``VFEGreedy(128)``, ...) chooses training rows greedily at the
        initial hyper-parameters; ``KMeans(m)`` starts free inducing inputs at k-means centres.
    prediction : {"standard", "augmented", "nystrom"}
        "standard": the approximation's own predictive (O(m) mean, O(m^2) variance per test point). "augmented":
        Quiñonero-Candela & Rasmussen's extra weight per test point (eqs. 28-29, O(n m) per point; keeps the
        training inputs). "nystrom": their eq. 39 (may give negative variances). The last two need approximation
        "sor", "dtc" or "vfe".
    optimize : {True, "hyperparameters", "inducing", False}
        What the fit learns. True: the kernel hyper-parameters, the noise and the inducing inputs jointly (Titsias
        sec. 4, SPGP). "hyperparameters": the kernel and noise, the inducing inputs kept where they started (the
        papers' fixed active sets). "inducing": only the inducing inputs, at the given kernel and noise (Titsias's
        Boston experiment, Fig. 2 a-c). False: nothing; everything as given.
    noise : float, array of shape (k,) or Noise
        Initial Gaussian noise variance sigma^2 (normalised targets), as in :class:`ExactGPRegressor`.
        An array of k values, for y of k columns, gives each target a noise variance of its own (``noise_`` then
        holds k). ``Noise(value, prior=..., minimum=...)`` (:mod:`sparsegp.options`) adds a hyper-prior on it
        (:mod:`sparsegp.priors`) and its lower bound during optimisation (1e-6).
    schedule : "joint" or Schedule
        How the fit runs, and its limits (:mod:`sparsegp.options`). "joint" (``Joint()``): everything ``optimize``
        names learnt at once. With a selector as ``inducing`` and ``optimize="hyperparameters"``, ``Alternate``
        (Quiñonero-Candela & Rasmussen's HPEV-SGEV / HPEV-SGGP), ``VariationalEM`` (Titsias's variational EM) or
        ``Interleaved`` (Seeger et al.'s re-selection at every search direction) combine selection with learning.
        ``SubsetThenAll(subset)``: the large-n strategy, learnt on ``subset`` rows, refined and finished on all.
        Each carries ``max_iter`` (500), ``n_restarts``, ``tol``, ``chunk_size`` and ``checkpoint`` (a model file
        the fit saves the state it has reached to, :mod:`sparsegp.fitting.checkpoint`); nested parameters set them:
        ``set_params(schedule__max_iter=50)``.
    normalize_y : bool
        Standardise the targets before fitting (predictions are mapped back).
    random_state : int, Generator or None
        Seed for the inducing inputs drawn at random, the subsets and the restarts.
    warm_start : bool
        True: a second ``fit`` continues from the fitted kernel, noise and inducing inputs (scikit-learn's
        convention), on the same rows or on others (rows added since), instead of the data-driven start. With
        ``inducing="auto"`` the growth goes on from the fitted size and its path, without the exact GP's start on a
        subset: the size is converged further and the rules asked again (a larger ``max_inducing`` lets it grow on).
        Where the last optimiser run stopped at ``max_iter``, the next goes on from its L-BFGS-B state: a fit of k
        iterations and a warm fit of k more are one fit of 2k. Not with a schedule that re-selects the set.
    verbose : bool
        Show a progress bar.
    callback : callable or None
        ``callback(iteration, objective, params)`` after each iteration; return True to stop.
    duplicates : {"collapse", "expand", "drop"}
        Rows that share an input. "collapse" (the default) fits every row and sums over one weighted row per
        distinct input (its count, mean target and within-input sum of squares give exactly the objective, gradient
        and posterior of all the rows); "expand" fits every row as a row of its own (the same model, slower; for
        checks); "drop" fits exact copies of a record (inputs and target) once.
    jitter : float
        Relative jitter added to K_uu (times its mean diagonal).
    n_restarts, max_iter, tol, chunk_size, checkpoint, reselect, n_rounds, subset, refine_iter, max_inducing, time_budget, noise_prior, min_noise
        Deprecated, removed in the next version (a FutureWarning at ``fit``): the options of ``schedule``,
        ``inducing=Auto(...)`` and ``noise=Noise(...)``, which a given alias overrides.

    Attributes
    ----------
    kernel_ : Kernel
        The fitted kernel (in the units of X).
    noise_ : float or ndarray of shape (k,)
        The fitted noise variance (normalised targets); one per target where ``noise`` gave one each.
    Z_ : ndarray of shape (m, D)
        The fitted inducing inputs.
    inducing_indices_ : ndarray of int or None
        Training rows of the initial inducing inputs (None where they were given as inputs).
    selection_ : Selection or None
        The last :class:`~sparsegp.selection.Selection` when a selector chose the set.
    stages_ : list of dict
        With ``SubsetThenAll``, one record per stage: rows used and the optimiser's report; with
        ``inducing="auto"`` on more than 512 rows, first the exact GP's start on a subset (rows, iterations,
        seconds, each candidate start's bound and the one ``chosen``).
    rounds_ : list of dict
        With ``Alternate`` / ``VariationalEM``, one record per round (size, objective after each step).
    objective_ : float
        The approximation's objective at the fit: its log marginal likelihood, or VFE's bound F_V; where the
        inducing inputs are every distinct training input, the exact GP's log p(y | theta), which every
        approximation equals there. ``log_marginal_likelihood(X=X, y=y)`` on the training data returns it.
    objective_name_ : str
        What ``objective_`` and :meth:`log_marginal_likelihood` are: the approximation's description, or the
        exact GP's log marginal likelihood where Z is every training input.
    on_host_ : bool
        Whether the posterior, the standard predictions and the leave-one-out figures run in NumPy and LAPACK on
        the host, without a JAX program (a fit that ends with every distinct input inducing, on small data with a
        kernel that has a host form: :mod:`sparsegp.approximations.sparse_host`).
    stop_reason_ : str or None
        With ``inducing="auto"``, why m stopped growing; None otherwise. "interrupted ..." after a
        KeyboardInterrupt during ``fit``: the estimator then holds the best state reached (the current size's best
        iterate, its posterior recomputed), warns and lets the KeyboardInterrupt go on.
    inducing_path_ : list of dict or None
        With ``inducing="auto"``, one record per size: m, the objective, the certificate's lower and upper
        bound, iterations, seconds.
    estimates_ : list of dict
        The fit's estimates of its own wall time, made as it ran (:mod:`sparsegp.fitting.estimate`): seconds
        ``elapsed`` and ``total`` estimated, the size ``m`` and ``iteration``, the ``final_m`` assumed, and the
        ``message`` that ``verbose`` prints. With ``inducing="auto"`` the first comes when the first size's run
        ends, before the set grows.
    upper_bound_ : float
        An upper bound on the exact GP's log p(y | theta) at the fitted kernel and noise:
        F_V <= log p(y | theta) <= ``upper_bound_``.
    gap_ : float
        ``upper_bound_`` - F_V (VFE's bound at the fitted values), which bounds KL(q || exact posterior).
    certificate_ : dict
        Which upper bound ``upper_bound_`` is (:mod:`sparsegp.approximations.upper_bounds`), its cost and how it was
        made: "bound" is "exact" (log p(y) itself by a dense Cholesky: up to 20,000 distinct inputs in memory, and
        at Z = X, so ``gap_`` is the KL divergence itself), "cg" (conjugate gradients on the quadratic form and a
        second-order bound on the log-determinant: up to 100,000) or "trace" (Titsias's bound from the trace of
        K - Q: beyond, and on dask arrays); "seconds" what it cost beyond the trace bound; "detail".
    loo_log_predictive_, loo_coverage_, loo_z_, loo_rows_ : float, float, ndarray, int
        The leave-one-out check of the error bars, as in :class:`ExactGPRegressor`, of the approximation's
        own predictive.
    optimizer_report_ : OptimizeReport
        The optimiser's report.
    n_iter_ : int
        Optimiser iterations.
    noise_variance_given_ : bool
        Whether ``fit`` was given a per-row ``noise_variance``.
    train_noise_variance_, train_fingerprint_ : ndarray or None, str or None
        That ``noise_variance`` and a SHA-256 of the training X and y (rows in memory; None otherwise): the
        default of :meth:`log_marginal_likelihood` on the same data.

    See Also
    --------
    ExactGPRegressor : the exact GP, O(n^3), the reference.

    Examples
    --------
    The defaults choose m and certify how far the fit is from the exact GP:

    {toy_regression}
    >>> from sparsegp import SparseGPRegressor
    >>> from sparsegp.options import Auto
    >>> model = SparseGPRegressor(inducing=Auto(max_inducing=16), random_state=0).fit(X, y)
    >>> model.Z_.shape
    (16, 1)
    >>> bool(model.objective_ <= model.upper_bound_), bool(model.gap_ / len(y) < 0.01)  # nats per row
    (True, True)
    >>> mean, std = model.predict(np.array([[0.5]]), return_std=True)
    >>> bool(abs(mean[0] - np.sin(1.0)) < 0.05)
    True

    Another approximation on a set chosen by one of the papers' greedy criteria:

    >>> from sparsegp.selection import InfoGain
    >>> dtc = SparseGPRegressor(approximation="dtc", inducing=InfoGain(12), optimize="hyperparameters").fit(X, y)
    >>> len(dtc.inducing_indices_)
    12
    """

    _json_params = (
        *COMMON_JSON_PARAMS,
        *("approximation", "prediction", "jitter", "chunk_size", "reselect", "n_rounds", "subset", "refine_iter"),
        "likelihood",
        *("inducing", "max_inducing", "time_budget", "tol"),
    )

    def __init__(
        self,
        kernel=None,
        *,
        approximation="vfe",
        likelihood="gaussian",
        inducing="auto",
        prediction="standard",
        noise=1.0,
        optimize=True,
        schedule="joint",
        normalize_y=True,
        duplicates="collapse",
        jitter=INDUCING_JITTER,
        random_state=None,
        warm_start=False,
        verbose=False,
        callback=None,
        # deprecated aliases of the grouped options (sparsegp.options), kept for one version
        n_restarts=DEPRECATED,
        max_iter=DEPRECATED,
        tol=DEPRECATED,
        chunk_size=DEPRECATED,
        checkpoint=DEPRECATED,
        reselect=DEPRECATED,
        n_rounds=DEPRECATED,
        subset=DEPRECATED,
        refine_iter=DEPRECATED,
        max_inducing=DEPRECATED,
        time_budget=DEPRECATED,
        noise_prior=DEPRECATED,
        min_noise=DEPRECATED,
    ):
        self.kernel, self.approximation, self.likelihood = kernel, approximation, likelihood
        self.inducing, self.prediction = inducing, prediction
        self.noise, self.optimize, self.schedule = noise, optimize, schedule
        self.normalize_y, self.duplicates, self.jitter = normalize_y, duplicates, jitter
        self.random_state, self.warm_start = random_state, warm_start
        self.verbose, self.callback = verbose, callback
        given = locals()  # the deprecated aliases, kept as given (scikit-learn's clone reads them back)
        vars(self).update({name: given[name] for name in ALIASES})

    def set_params(self, **params):
        """scikit-learn's ``set_params``; a nested ``schedule__max_iter``, ``inducing__max_inducing`` or
        ``noise__prior`` puts a modified copy of the option object in (starting from the default's object where
        the parameter holds a plain value such as ``"joint"``, ``"auto"`` or a number).

        Parameters
        ----------
        **params
            Parameters by name, nested ones as ``group__option``.

        Returns
        -------
        SparseGPRegressor
            self.

        Examples
        --------
        >>> from sparsegp import SparseGPRegressor
        >>> model = SparseGPRegressor().set_params(schedule__max_iter=50, inducing__max_inducing=64)
        >>> model.schedule, model.inducing
        (Joint(max_iter=50), Auto(max_inducing=64))
        """
        set_grouped(self, params, super().set_params)
        return self

    def fit(self, X, y, noise_variance=None):
        """Fit what ``optimize`` names (hyper-parameters, inducing inputs), cache the posterior, compute the
        certificate (``upper_bound_``, ``gap_``) and check the error bars by leave-one-out.

        X and y may be dask arrays: the statistics are then computed on the workers of the current
        ``dask.distributed`` client, partition by partition, and never gathered.

        Parameters
        ----------
        X : array, DataFrame or dask array of shape (n, D)
            Training inputs.
        y : array or dask array of shape (n,) or (n, k)
            Targets; k columns are k targets fitted with one kernel, noise and set of inducing inputs.
        noise_variance : float or array of shape (n,), optional
            A known noise variance per row, in the units of y squared, added to the learnt noise: the likelihood
            N(y_i | f(x_i), ``noise_`` + ``noise_variance[i]``). Routed by scikit-learn's metadata routing
            (``set_fit_request(noise_variance=True)``).

        Returns
        -------
        SparseGPRegressor
            self, fitted.

        Raises
        ------
        InputError
            If X, y or a setting is malformed, or settings contradict each other.
        NumericalError
            If K_uu or the approximation's m x m system cannot be factorised even with the largest jitter.
        """
        if self._fits_variationally(noise_variance):
            return variational.fit(self, X, y, regression_named(self.likelihood))
        config = sparse_config(self)
        data, names = self._training_data(X, y, config, noise_variance)
        keep_noise_variance(self, X, y, noise_variance)
        try:
            self._set_data_attributes(data.moments, len(data.moments.column_var), names)
            fit = fit_sparse(config, data, save=checkpoint_writer(self, config, data, names))
        finally:
            data.close()
        apply_fit(self, fit, config)
        self._set_loo(fit.loo)
        final_checkpoint(self, config)
        self._raise_if_interrupted(fit.stop_reason)
        return self

    def _loo_batch(self, X, y, known=None):
        method = APPROXIMATIONS[self.approximation]
        fn = loo_function(method, self.kernel_, self.posterior_, self.noise_, self.prediction, self.on_host_)
        return fn(X, y) if known is None else fn(X, y, known)

    def _objective_data(self, X, y, noise_variance=None):
        return objective_rows(self, X, y, noise_variance)

    def _log_objective(self, kernel, noise, rows: Rows):
        return log_objective(self, kernel, noise, rows)

    # ---- prediction ------------------------------------------------------------
    def _mean_var(self, X, full_cov: bool):
        """Latent mean and variance (or covariance) on the internal, normalised scale."""
        mode = prediction_mode(self.prediction)
        if full_cov and mode.marginals_only:
            raise InputError(
                f"return_cov is not available with prediction={self.prediction!r}: it adds one weight per "
                "test point (QC&R eq. 28), which defines marginals only; use prediction='standard'"
            )
        if not mode.full_data:
            degenerate = APPROXIMATIONS[self.approximation].degenerate
            predict = host_sparse_predict if self.on_host_ else sparse_predict  # NumPy, or one JAX program

            def fn(Xb):
                return predict(self.kernel_, self.posterior_, Xb, full_cov=full_cov, degenerate=degenerate)

            return self._predict_in_batches(fn, X, full_cov=full_cov, batch_size=4096, on_host=self.on_host_)

        def augmented(Xb):
            return full_data_predict(
                self.kernel_, self.posterior_, self.noise_, self.train_cache_, Xb, method=self.prediction
            )

        # O(n m) per test point: small batches bound the (chunk x batch) blocks.
        return self._predict_in_batches(augmented, X, full_cov=False, batch_size=256)

    @fill(predict_options=PREDICT_OPTIONS)
    def predict(self, X, return_std=False, return_cov=False, include_noise=True, noise_variance=None):
        """Predictive mean, and optionally std or full covariance, of the targets y (noise included).

        ``include_noise=False`` gives the latent f instead. The default matches scikit-learn's
        ``GaussianProcessRegressor`` with a ``WhiteKernel``, so its std scores test targets directly.
        A dask array X gives dask arrays, computed block by block on the workers.

        Parameters
        ----------
        X : array or dask array of shape (t, D)
            Test inputs.
        {predict_options}

        Raises
        ------
        NotFittedError
            Before ``fit``.
        InputError
            If X is malformed, or ``prediction="nystrom"`` gives negative variances where a std is asked for
            (use :meth:`predict_var`).
        """
        if variational.is_variational(self):
            return variational.predict(self, X, return_std, return_cov, include_noise, noise_variance)
        if is_dask_collection(X):
            from ..backends.dask_partitions import predict_blocks

            if noise_variance is not None:
                raise InputError("noise_variance is not available with dask test inputs: add it to the variances")
            return predict_blocks(self, X, return_std=return_std, return_cov=return_cov, include_noise=include_noise)
        X = self._validate_test_inputs(X)
        mean, var = self._mean_var(X, full_cov=return_cov)
        if return_std or return_cov:
            self._check_degenerate_variances(X, np.diagonal(var, axis1=0, axis2=1).T if return_cov else var)
        if prediction_mode(self.prediction).negative_variances and return_std:
            total = var + (self.noise_ if include_noise else 0.0)
            if np.any(total < 0):
                raise InputError(
                    f"{int(np.sum(total < 0))} of {len(total)} Nyström predictive variances are negative (a known "
                    "property of eq. 39 of Quiñonero-Candela & Rasmussen, not a numerical failure), so no std "
                    "exists there; use predict_var() to get the variances as computed, or prediction='augmented'"
                )
        return self._finish_prediction(
            mean, var, return_std=return_std, return_cov=return_cov, include_noise=include_noise,
            noise_variance=noise_variance,
        )  # fmt: skip

    def predict_var(self, X, include_noise=True):
        """The predictive mean and variance as computed, no square root taken: Nyström's latent variances may be
        negative (Quiñonero-Candela & Rasmussen eq. 39), and this is where to see them.

        Parameters
        ----------
        X : array of shape (t, D)
            Test inputs.
        include_noise : bool
            The variance of y (True) or of the latent f (False).

        Returns
        -------
        mean, var : ndarray of shape (t,)

        Raises
        ------
        NotFittedError
            Before ``fit``.
        """
        if variational.is_variational(self):
            mean, sd = variational.predict(self, X, return_std=True, include_noise=include_noise)
            return mean, sd**2
        X = self._validate_test_inputs(X)
        mean, var = self._mean_var(X, full_cov=False)
        self._check_degenerate_variances(X, var)
        var = var + (self.noise_ if include_noise else 0.0)
        var = var[:, None] if np.ndim(self.y_std_) == 1 and np.ndim(var) == 1 else var  # k targets, one variance
        return mean * self.y_std_ + self.y_mean_, var * self.y_std_**2

    def _check_degenerate_variances(self, X, var):
        """SoR's own variances against the prior variance they leave out (:func:`warn_if_sor_too_narrow`)."""
        full_data = prediction_mode(self.prediction).full_data
        if not APPROXIMATIONS[self.approximation].degenerate or full_data or X.shape[0] == 0:
            return
        omitted, _ = self._predict_in_batches(
            lambda Xb: (unexplained_variance(self.kernel_, self.posterior_, Xb),) * 2, X, full_cov=False
        )
        warn_if_sor_too_narrow(omitted, np.asarray(var) + self.noise_, stacklevel=4)

    # ---- persistence -------------------------------------------------------------
    # a model file keeps the flat options (every format has)
    _options_to_file = staticmethod(flat_options)
    _options_from_file = staticmethod(grouped_options)

    def _get_state(self):
        return variational.state(self) if variational.is_variational(self) else sparse_state(self)

    @classmethod
    def _from_state(cls, meta, arrays):
        if meta.get("variational") is True:
            return variational.from_state(cls, meta, arrays)
        return sparse_from_state(cls, meta, arrays)
