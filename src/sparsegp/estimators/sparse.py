"""SparseGPRegressor: SoR, DTC, FITC and VFE side by side behind one scikit-learn interface."""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np

from ..approximations.augmented import TrainingCache, full_data_predict, training_cache
from ..approximations.common import SparsePosterior, make_posterior, sparse_predict, unexplained_variance
from ..approximations.dtc import dtc_log_marginal, dtc_posterior
from ..approximations.fitc import fitc_log_marginal, fitc_posterior
from ..approximations.loo import sparse_loo
from ..approximations.objective import HostObjective
from ..approximations.sor import sor_log_marginal, sor_posterior
from ..approximations.vfe import vfe_bound, vfe_posterior
from ..distributed import is_dask_collection
from ..errors import CalibrationWarning, InputError, ModelFileError, NumericalError
from ..linalg import MAX_JITTER, jitter_ladder
from ..replicates import Rows, collapse, distinct_records
from ..selection import KMeans, Selector
from ..stats import chunk_size_for
from ..training import alternate, minimize_reselecting
from ..transforms import to_positive, to_raw
from ..validation import as_float_matrix, as_float_vector, check_int, check_positive
from . import persistence
from .base import COMMON_JSON_PARAMS, GPRegressorBase, input_scale, params_for_scaled_inputs
from .objectives import SparseNegative

APPROXIMATIONS = {
    # name: (objective = log marginal or bound, posterior, degenerate prediction, what the objective is)
    "vfe": (vfe_bound, vfe_posterior, False, "VFE bound F_V (Titsias eq. 9)"),
    "dtc": (dtc_log_marginal, dtc_posterior, False, "DTC/PP approximate log marginal likelihood"),
    "fitc": (fitc_log_marginal, fitc_posterior, False, "FITC log marginal likelihood"),
    "sor": (sor_log_marginal, sor_posterior, True, "SoR/RRGP log evidence (QC&R eq. 23)"),
}
PREDICTIONS = ("standard", "augmented", "nystrom")
RESELECT = (None, "alternate", "em", "interleaved")
OPTIMIZE_PARTS = ("hyperparameters", "inducing")
# SoR's variances are flagged when at more than this share of the test points the prior variance they
# omit exceeds the variance they report (_check_degenerate_variances).
SOR_SHARE = 0.1


@persistence.register
class SparseGPRegressor(GPRegressorBase):
    """Sparse GP regression with m inducing inputs, O(n m^2) per objective evaluation.

    Parameters
    ----------
    kernel : Kernel or None
        ``None`` means SquaredExponential with ARD length-scales, each starting
        at its column's standard deviation. Fitting runs in units where the
        inputs have unit spread, so the result does not depend on the units of X.
    approximation : {"vfe", "dtc", "fitc", "sor"}
        VFE: Titsias's variational bound (the default; never above the exact
        evidence). DTC: Seeger et al.'s projected process. FITC: Snelson &
        Ghahramani's SPGP. SoR: Quiñonero-Candela & Rasmussen's reduced-rank GP.
    inducing : int, integer array (m,), float array (m, D), Selector or KMeans
        An int m draws m distinct training inputs at random (``random_state``);
        an integer array names training rows (the papers' active set I); a
        float array gives the initial inducing inputs themselves; a selector
        from :mod:`sparsegp.selection` (``InfoGain(256)``, ``VFEGreedy(128)``,
        ...) chooses training rows greedily at the initial hyper-parameters;
        ``KMeans(m)`` starts free inducing inputs at k-means centres.
    prediction : {"standard", "augmented", "nystrom"}
        "standard": the approximation's own predictive (O(m) mean, O(m^2)
        variance per test point). "augmented": Quiñonero-Candela & Rasmussen's
        extra weight per test point (eqs. 28-29, O(n m) per point; keeps the
        training inputs). "nystrom": their eq. 39 (may give negative variances).
        The last two need approximation "sor", "dtc" or "vfe".
    reselect : {None, "alternate", "em", "interleaved"}
        With a selector as ``inducing`` and ``optimize="hyperparameters"``, how
        selection and hyper-parameter learning are combined. None: select once
        at the initial hyper-parameters. "alternate": ``n_rounds`` rounds of
        selection at fixed hyper-parameters then evidence maximisation at a
        fixed set (Quinonero-Candela & Rasmussen's HPEV-SGEV / HPEV-SGGP, 10
        rounds; ``max_iter`` per round). "em": Titsias's variational EM, the set
        grown in ``n_rounds`` E-steps (greedy inclusions at fixed
        hyper-parameters) each followed by an M-step (``max_iter`` L-BFGS
        iterations at the fixed set); with ``approximation="vfe"`` the bound
        never decreases. "interleaved": Seeger et al.'s scheme, the set
        re-selected at every new search direction of an L-BFGS run and held
        fixed during its line search.
    n_rounds : int
        Rounds of "alternate" / "em".
    subset : int or None
        The large-n strategy: learn the hyper-parameters and inducing inputs on
        ``subset`` training rows drawn at random (``max_iter`` iterations at
        O(subset m^2) each), then refine them on all rows for ``refine_iter``
        iterations (each one or more passes over the data), and compute the
        posterior from all rows in one pass. None: every iteration on all rows.
    refine_iter : int
        L-BFGS iterations on all rows after the subset stage (0: none).
    optimize : {True, "hyperparameters", "inducing", False}
        What the fit learns. True: the kernel hyper-parameters, the noise and
        the inducing inputs jointly (Titsias sec. 4, SPGP). "hyperparameters":
        the kernel and noise, the inducing inputs kept where they started (the
        papers' fixed active sets). "inducing": only the inducing inputs, at the
        given kernel and noise (Titsias's Boston experiment, Fig. 2 a-c).
        False: nothing; everything as given.
    noise, n_restarts, max_iter, normalize_y, noise_prior, min_noise,
    random_state, verbose, callback : as in :class:`ExactGPRegressor`.
    duplicates : {"collapse", "expand", "drop"}
        Rows that share an input. "collapse" (the default) fits every row and sums over one weighted row
        per distinct input (its count, mean target and within-input sum of squares give exactly the
        objective, gradient and posterior of all the rows); "expand" fits every row as a row of its own
        (the same model, slower; for checks); "drop" fits exact copies of a record (inputs and target) once.
    jitter : float
        Relative jitter added to K_uu (times its mean diagonal).
    chunk_size : int or None
        Training rows per chunk of the statistics (None: about 8 MiB of K_uf).

    Attributes
    ----------
    kernel_, noise_, Z_ : fitted hyper-parameters and inducing inputs.
    inducing_indices_ : training-row indices of the initial inducing inputs (None if given as inputs).
    selection_ : the last :class:`~sparsegp.selection.Selection` when a selector chose the set.
    stages_ : with ``subset``, one record per stage: rows used and the optimiser's report.
    rounds_ : with ``reselect`` "alternate" / "em", one record per round (size, objective after the
        selection step and after the hyper-parameter step).
    objective_ : final value of the approximation's objective (log marginal likelihood or bound).
    loo_log_predictive_, loo_coverage_, loo_z_, loo_rows_ : the leave-one-out check of the error bars, as in
        :class:`ExactGPRegressor`, of the approximation's own predictive.
    optimizer_report_, n_iter_, posterior_.
    """

    _json_params = (
        *COMMON_JSON_PARAMS,
        "approximation",
        "prediction",
        "jitter",
        "chunk_size",
        "reselect",
        "n_rounds",
        "subset",
        "refine_iter",
    )

    def __init__(
        self,
        kernel=None,
        *,
        approximation="vfe",
        inducing=64,
        prediction="standard",
        noise=1.0,
        optimize=True,
        n_restarts=0,
        max_iter=500,
        normalize_y=True,
        noise_prior=None,
        min_noise=1e-6,
        duplicates="collapse",
        jitter=1e-8,
        chunk_size=None,
        reselect=None,
        n_rounds=10,
        subset=None,
        refine_iter=3,
        random_state=None,
        verbose=False,
        callback=None,
    ):
        self.kernel = kernel
        self.approximation = approximation
        self.inducing = inducing
        self.prediction = prediction
        self.noise = noise
        self.optimize = optimize
        self.n_restarts = n_restarts
        self.max_iter = max_iter
        self.normalize_y = normalize_y
        self.noise_prior = noise_prior
        self.min_noise = min_noise
        self.duplicates = duplicates
        self.jitter = jitter
        self.chunk_size = chunk_size
        self.reselect = reselect
        self.n_rounds = n_rounds
        self.subset = subset
        self.refine_iter = refine_iter
        self.random_state = random_state
        self.verbose = verbose
        self.callback = callback

    # ---- option checks ------------------------------------------------------
    def _check_options(self):
        if self.approximation not in APPROXIMATIONS:
            raise InputError(f"approximation must be one of {sorted(APPROXIMATIONS)}, got {self.approximation!r}")
        if self.prediction not in PREDICTIONS:
            raise InputError(f"prediction must be one of {PREDICTIONS}, got {self.prediction!r}")
        if self.prediction != "standard" and self.approximation == "fitc":
            raise InputError(
                f"prediction={self.prediction!r} uses the SoR/DTC prior Q_nn + sigma^2 I; "
                "use approximation 'sor', 'dtc' or 'vfe' with it"
            )
        check_positive(self.jitter, "jitter")
        self._check_duplicates()
        if self.chunk_size is not None:
            check_int(self.chunk_size, "chunk_size", minimum=1)
        if self.reselect not in RESELECT:
            raise InputError(f"reselect must be one of {RESELECT}, got {self.reselect!r}")
        if not (isinstance(self.optimize, (bool, np.bool_)) or self.optimize in OPTIMIZE_PARTS):
            raise InputError(f"optimize must be True, False or one of {OPTIMIZE_PARTS}, got {self.optimize!r}")
        if self.subset is not None:
            check_int(self.subset, "subset", minimum=2)
            if self.reselect is not None:
                raise InputError(
                    f"subset={self.subset} and reselect={self.reselect!r} cannot be combined: the subset "
                    "stage learns the inducing inputs by gradient, use reselect=None"
                )
        check_int(self.refine_iter, "refine_iter")

    @property
    def _learns(self) -> tuple[bool, bool]:
        """(kernel and noise, inducing inputs): what ``optimize`` lets the fit learn."""
        if isinstance(self.optimize, str):
            return self.optimize == "hyperparameters", self.optimize == "inducing"
        return bool(self.optimize), bool(self.optimize)

    def _trainable(self, kernel, noise, Z0):
        """The optimiser's start ``params`` and the ``mask`` of what it may change, from ``optimize``."""
        hyper, inducing = self._learns
        params = {"kernel": kernel, "raw_noise": jnp.asarray(to_raw(noise))}
        mask = {"kernel": kernel.trainable_mask(), "raw_noise": jnp.asarray(hyper)}
        if not hyper:
            mask["kernel"] = jax.tree_util.tree_map(lambda m: jnp.zeros_like(m, dtype=bool), mask["kernel"])
        if inducing:
            params["Z"], mask["Z"] = jnp.asarray(Z0), jnp.ones(Z0.shape, dtype=bool)
        return params, mask

    def _check_selection_options(self):
        """Options that only matter for fitting (a loaded model keeps reselect but not its selector)."""
        if self.reselect is not None:
            if not isinstance(self.inducing, Selector):
                raise InputError(f"reselect={self.reselect!r} needs a selector as inducing (e.g. InfoGain(256))")
            if self._learns[1]:
                raise InputError(
                    f"reselect={self.reselect!r} keeps the inducing inputs at training rows: "
                    f"set optimize='hyperparameters' (got optimize={self.optimize!r})"
                )
            check_int(self.n_rounds, "n_rounds", minimum=1)

    def _initial_inducing(self, X, rng, y=None, kernel=None, noise=None, scale=1.0, first=None):
        """Initial inducing inputs for the (scaled) inputs X, and their training-row indices if rows.

        ``first``: the first row of each distinct input (:class:`~sparsegp.replicates.Replicates`), from
        which an int m draws; None when every row's input is distinct."""
        ind = self.inducing
        self.selection_ = None
        if isinstance(ind, Selector):
            size = ind.size
            if self.reselect == "em":  # the first E-step selects the first share of the final size
                size = max(1, int(np.ceil(check_int(ind.size, "size", minimum=1) / self.n_rounds)))
            sel = ind.select(kernel, noise, X, y, random_state=rng, verbose=self.verbose, size=size)
            self.selection_ = sel
            return X[sel.indices], sel.indices.copy()
        if isinstance(ind, KMeans):
            return ind.centres(X, random_state=int(rng.integers(2**31))), None
        idx = self._inducing_rows(X.shape[0], rng, first)
        if idx is not None:
            return X[idx], idx
        Z = as_float_matrix(ind, "inducing", n_features=X.shape[1], owner="the training data")
        return Z / scale, None

    def _inducing_rows(self, n: int, rng, first=None):
        """Training-row indices named by ``inducing`` (an int m: the first rows of m distinct inputs drawn
        at random, ``first`` holding each distinct input's first row when some repeat; an integer array:
        those rows, the papers' active set), or None for given inducing inputs."""
        ind = self.inducing
        if isinstance(ind, (int, np.integer)) and not isinstance(ind, bool):
            m = int(ind)
            if m < 1:
                raise InputError(f"inducing={m}: at least one inducing point is required")
            if first is not None:
                return first[self._inducing_rows(first.size, rng)]
            if m > n:
                warnings.warn(
                    f"inducing={m} exceeds the {n} distinct training inputs; using all of them",
                    UserWarning,
                    stacklevel=4,
                )
                m = n
            return np.sort(rng.choice(n, size=m, replace=False))
        if ind is None or isinstance(ind, bool):
            raise InputError("inducing must be a number, training-row indices, or an (m, n_features) array")
        arr = np.asarray(ind)
        if arr.ndim == 1 and arr.dtype.kind in "iu":
            if arr.size == 0 or arr.min() < 0 or arr.max() >= n or len(np.unique(arr)) != arr.size:
                raise InputError(f"inducing indices must be distinct integers in 0..{n - 1} (n_samples={n})")
            return arr.astype(np.int64)
        return None

    # ---- objective -------------------------------------------------------------
    def _objective(self):
        """The function to minimise at the current chunk size (its noise prior is set per fit)."""
        objective_fn = APPROXIMATIONS[self.approximation][0]
        return SparseNegative(objective_fn, self._chunk, float(self.jitter), self._fit_noise_prior())

    def _host_objective(self, rows: Rows, Z_fixed=None):
        """FITC's objective with the sums on the host on a CPU backend; None otherwise (the JAX program).

        FITC's hand-written backward pass (:mod:`sparsegp.stats_blas`) beats differentiating its scan;
        for the unit-weight methods the JAX program is as fast on the CPU (BENCHMARKS.md).
        """
        if not self.optimize or self.approximation != "fitc" or jax.default_backend() != "cpu":
            return None
        return HostObjective(
            self.approximation,
            rows.X,
            rows.y,
            chunk=self._chunk,
            jitter=float(self.jitter),
            penalty=self._penalty,
            Z_fixed=Z_fixed,
            **rows.weights(),
        )

    def _penalty(self, params):
        """The negative log hyper-priors (kernel and noise) added to the negative objective."""
        return -params["kernel"].log_prior() - self._noise_log_prior(params["raw_noise"])

    def fit(self, X, y):
        """Fit what ``optimize`` names (hyper-parameters, inducing inputs); cache the posterior.

        X and y may be dask arrays: the statistics are then computed on the workers of the current
        ``dask.distributed`` client, partition by partition (:mod:`sparsegp.estimators.dask_fit`).
        """
        self._check_options()
        self._check_selection_options()
        if is_dask_collection(X) or is_dask_collection(y):
            from .dask_fit import fit_dask

            return fit_dask(self, X, y)
        X, y, groups = self._validate_training_data(X, y)
        s = input_scale(X)
        Xs = X / s  # fit in units where the inputs have unit spread
        kernel = self._initial_kernel(X, s)
        noise = self._initial_noise()
        rng = np.random.default_rng(self.random_state)
        first = groups.first if groups.repeated else None
        Z0, idx = self._initial_inducing(Xs, rng, y, kernel, noise, scale=s, first=first)
        rows = self._objective_rows(X, y, groups, s)
        self._chunk = chunk_size_for(rows.X.shape[0], Z0.shape[0], self.chunk_size)
        Zj = jnp.asarray(Z0)
        params, mask = self._trainable(kernel, noise, Zj)
        Z_fixed = None if self._learns[1] else Z0
        self.rounds_ = self.stages_ = None
        sub = self._subset_rows(X.shape[0], rng)
        if sub is not None:

            def full():  # the objective on all rows, as the ordinary fit evaluates it
                return (Zj, *rows.jax_args()), self._host_objective(rows, Z_fixed), rows.n_records

            sub_rows = self._objective_rows(X[sub], y[sub], collapse(X[sub], y[sub]), s)
            params = self._fit_subset_then_all(params, mask, sub_rows, Z0, full, s)
        elif self.reselect is None:
            params = self._fit_hyperparameters(
                self._objective(),
                params,
                mask,
                (Zj, *rows.jax_args()),
                f"SparseGP ({self.approximation}) fit",
                n_samples=X.shape[0],
                value_and_grad=self._host_objective(rows, Z_fixed),
                scale=s,
            )
        elif self.reselect == "interleaved":
            params, idx = self._fit_interleaved(params, mask, Xs, y, rows, idx, rng)
            Zj = jnp.asarray(Xs[idx])
        else:
            params, idx = self._fit_rounds(params, mask, Xs, y, rows, idx, rng, s)
            Zj = jnp.asarray(Xs[idx])
        params = params_for_scaled_inputs(dict(params, Z=params.get("Z", Zj)), 1.0 / s)
        self.kernel_ = params["kernel"]
        self.noise_ = float(to_positive(params["raw_noise"]))
        self.Z_ = np.asarray(params["Z"])
        if idx is not None and Z_fixed is not None:
            self.Z_ = X[idx]  # the training rows themselves, not a round trip through X / s
        self.inducing_indices_ = idx
        _, posterior_fn, _, name = APPROXIMATIONS[self.approximation]
        self.objective_name_ = name
        user_rows = self._objective_rows(X, y, groups, 1.0)
        self.objective_ = self._value(self.kernel_, self.noise_, self.Z_, user_rows)
        self.posterior_ = self._posterior_with_jitter(posterior_fn, user_rows)
        self.train_cache_ = None
        if self.prediction != "standard":
            self.train_cache_ = training_cache(
                self.kernel_,
                self.posterior_,
                self.noise_,
                jnp.asarray(user_rows.X),
                jnp.asarray(user_rows.y),
                self._chunk,
                counts=user_rows.counts,
            )
        self._check_calibration(X, y)
        return self

    def _loo_batch(self, X, y):
        """The approximation's own leave-one-out predictive (DTC's for the augmented and Nyström predictions)."""
        return sparse_loo(
            self.kernel_,
            self.posterior_,
            self.noise_,
            X,
            y,
            fitc=self.approximation == "fitc",
            degenerate=APPROXIMATIONS[self.approximation][2] and self.prediction == "standard",
        )

    # ---- the large-n strategy --------------------------------------------------------------
    def _subset_rows(self, n, rng):
        """Sorted rows of the subset stage, or None when every iteration uses all ``n`` rows."""
        if self.subset is None or self.subset >= n:
            return None
        return np.sort(rng.choice(n, size=int(self.subset), replace=False))

    def _fit_subset_then_all(self, params, mask, sub: Rows, Z0, full, scale):
        """``max_iter`` iterations on the subset's rows ``sub``, then ``refine_iter`` on all rows.

        ``full()`` returns the all-rows objective as ``(args, value_and_grad, rows)`` for
        :meth:`_fit_hyperparameters`: the JAX program's arguments, or a host evaluation over the rows in
        memory or on a Dask cluster, and the number of training rows. Sets ``stages_``.
        """
        chunk, self._chunk = self._chunk, chunk_size_for(sub.X.shape[0], Z0.shape[0], self.chunk_size)
        Z_fixed = None if self._learns[1] else Z0
        try:
            params = self._fit_hyperparameters(
                self._objective(),
                params,
                mask,
                (jnp.asarray(Z0), *sub.jax_args()),
                f"SparseGP ({self.approximation}) fit on {sub.n_records} rows",
                n_samples=sub.n_records,
                value_and_grad=self._host_objective(sub, Z_fixed),
                scale=scale,
            )
        finally:
            self._chunk = chunk
        stages = [{"rows": sub.n_records, "report": self.optimizer_report_}]
        if self.refine_iter > 0 and self.optimize:
            args, value_and_grad, n_rows = full()
            params = self._fit_hyperparameters(
                self._objective(),
                params,
                mask,
                args,
                f"SparseGP ({self.approximation}) refined on all rows",
                n_samples=n_rows,
                value_and_grad=value_and_grad,
                scale=scale,
                max_iter=int(self.refine_iter),
            )
            stages.append({"rows": int(n_rows), "report": self.optimizer_report_})
        self.stages_ = stages
        self.n_iter_ = sum(st["report"].n_iter for st in stages if st["report"] is not None)
        return params

    # ---- selection combined with hyper-parameter learning ------------------------------
    def _value(self, kernel, noise, Z, rows: Rows) -> float:
        """The approximation's objective (log marginal likelihood or bound) at the given values."""
        objective_fn = APPROXIMATIONS[self.approximation][0]
        X, y = jnp.asarray(rows.X), jnp.asarray(rows.y)
        return float(
            objective_fn(
                kernel, jnp.asarray(Z), noise, X, y, chunk=self._chunk, jitter=float(self.jitter), **rows.weights()
            )
        )

    def _objective_data(self, X, y):
        if X is None or y is None:
            raise InputError(
                "SparseGPRegressor keeps no training data: pass the training X and y to "
                "log_marginal_likelihood(theta, eval_gradient, X=X, y=y)"
            )
        X = self._validate_test_inputs(X)
        y = as_float_vector(y, "y", n=X.shape[0])
        if self.duplicates == "drop":
            keep = distinct_records(X, y)
            X, y = X[keep], y[keep]
        y = (y - self.y_mean_) / self.y_std_
        return self._objective_rows(X, y, collapse(X, y), 1.0)

    def _log_objective(self, kernel, noise, rows: Rows):
        objective_fn = APPROXIMATIONS[self.approximation][0]
        chunk = chunk_size_for(rows.X.shape[0], self.Z_.shape[0], self.chunk_size)
        X, y = jnp.asarray(rows.X), jnp.asarray(rows.y)
        return objective_fn(
            kernel, jnp.asarray(self.Z_), noise, X, y, chunk=chunk, jitter=float(self.jitter), **rows.weights()
        )

    def _select(self, params, X, y, rng, size=None, initial=None):
        sel = self.inducing.select(
            params["kernel"],
            float(to_positive(params["raw_noise"])),
            X,
            y,
            random_state=rng,
            verbose=self.verbose,
            size=size,
            initial=initial,
        )
        self.selection_ = sel
        return sel.indices.copy()

    def _fit_rounds(self, params, mask, X, y, rows: Rows, idx, rng, scale):
        """HPEV-style alternation ("alternate") or Titsias's variational EM ("em"): :func:`training.alternate`.

        Selection sees every training row (X, y); the objective sums over ``rows``."""

        def select(p, size, initial):
            return self._select(p, X, y, rng, size=size, initial=initial)

        def fit(p, idx, r):
            p = self._fit_hyperparameters(
                self._objective(),
                p,
                mask,
                (jnp.asarray(X[idx]), *rows.jax_args()),
                f"SparseGP ({self.approximation}) {self.reselect} round {r + 1}/{self.n_rounds}",
                n_samples=rows.n_records,
                value_and_grad=self._host_objective(rows, X[idx]),
                scale=scale,
            )
            return p, self.optimizer_report_

        def value(p, idx):
            return self._value(p["kernel"], to_positive(p["raw_noise"]), X[idx], rows)

        m_final = min(check_int(self.inducing.size, "size", minimum=1), X.shape[0])
        params, idx, self.rounds_, reports = alternate(
            select, fit, value, params, idx, n_rounds=self.n_rounds, em=self.reselect == "em", m_final=m_final
        )
        self.n_iter_ = sum(rep.n_iter for rep in reports if rep is not None)
        return params, idx

    def _fit_interleaved(self, params, mask, X, y, rows: Rows, idx, rng):
        """Seeger et al. sec. 2.3: re-select at each new search direction, fixed during the line search."""
        chosen = {"idx": idx}

        def reselect(p):
            chosen["idx"] = self._select(p, X, y, rng)
            return jnp.asarray(X[chosen["idx"]])

        lower, upper = self._raw_bounds(params)
        if not self.optimize:
            self.optimizer_report_, self.n_iter_ = None, 0
            return params, idx
        params, report = minimize_reselecting(
            self._objective(),
            params,
            reselect,
            args=rows.jax_args(),
            mask=mask,
            lower=lower,
            upper=upper,
            max_iter=check_int(self.max_iter, "max_iter", minimum=1),
            verbose=self.verbose,
            desc=f"SparseGP ({self.approximation}) interleaved",
        )
        self.optimizer_report_, self.n_iter_ = report, report.n_iter
        self._warn_unconverged(report, params, mask)
        # The final set: selected at the final hyper-parameters.
        return params, self._select(params, X, y, rng)

    def _posterior_with_jitter(self, posterior_fn, rows: Rows) -> SparsePosterior:
        """The prediction cache; if a factorisation fails, retry with tenfold jitter up to MAX_JITTER."""
        X, y, Z = jnp.asarray(rows.X), jnp.asarray(rows.y), jnp.asarray(self.Z_)
        for jitter in jitter_ladder(float(self.jitter), MAX_JITTER):
            post = posterior_fn(self.kernel_, Z, self.noise_, X, y, chunk=self._chunk, jitter=jitter, **rows.weights())
            if all(bool(jnp.all(jnp.isfinite(a))) for a in post):
                return post
        raise NumericalError(
            f"the posterior of the fitted {self.approximation} model could not be factorised even with "
            f"jitter {jitter:g} x mean diag(K_uu): the inducing inputs are (near-)duplicates or the "
            "length-scales are far larger than their spread. Use fewer or better spread inducing inputs "
            "(a greedy selection), or a larger min_noise."
        )

    # ---- prediction ------------------------------------------------------------
    def _mean_var(self, X, full_cov: bool):
        """Latent mean and variance (or covariance) on the internal, normalised scale."""
        if full_cov and self.prediction != "standard":
            raise InputError(
                f"return_cov is not available with prediction={self.prediction!r}: it adds one weight per "
                "test point (QC&R eq. 28), which defines marginals only; use prediction='standard'"
            )
        if self.prediction == "standard":
            degenerate = APPROXIMATIONS[self.approximation][2]

            def fn(Xb):
                return sparse_predict(self.kernel_, self.posterior_, Xb, full_cov=full_cov, degenerate=degenerate)

            return self._predict_in_batches(fn, X, full_cov=full_cov, batch_size=4096)

        def augmented(Xb):
            return full_data_predict(
                self.kernel_, self.posterior_, self.noise_, self.train_cache_, Xb, method=self.prediction
            )

        # O(n m) per test point: small batches bound the (chunk x batch) blocks.
        return self._predict_in_batches(augmented, X, full_cov=False, batch_size=256)

    def predict(self, X, return_std=False, return_cov=False, include_noise=True):
        """Predictive mean, and optionally std or full covariance, of the targets y (noise included).

        ``include_noise=False`` gives the latent f instead. The default matches scikit-learn's
        ``GaussianProcessRegressor`` with a ``WhiteKernel``, so its std scores test targets directly.
        A dask array X gives dask arrays, computed block by block on the workers.
        """
        if is_dask_collection(X):
            from .dask_fit import predict_dask

            return predict_dask(self, X, return_std=return_std, return_cov=return_cov, include_noise=include_noise)
        X = self._validate_test_inputs(X)
        mean, var = self._mean_var(X, full_cov=return_cov)
        if return_std or return_cov:
            self._check_degenerate_variances(X, np.diag(var) if return_cov else var)
        if self.prediction == "nystrom" and return_std:
            total = var + (self.noise_ if include_noise else 0.0)
            if np.any(total < 0):
                raise InputError(
                    f"{int(np.sum(total < 0))} of {len(total)} Nyström predictive variances are negative (a known "
                    "property of eq. 39 of Quiñonero-Candela & Rasmussen, not a numerical failure), so no std "
                    "exists there; use predict_var() to get the variances as computed, or prediction='augmented'"
                )
        return self._finish_prediction(
            mean, var, return_std=return_std, return_cov=return_cov, include_noise=include_noise
        )

    def predict_var(self, X, include_noise=True):
        """(mean, variance of y, or of f with ``include_noise=False``) as computed, no square root taken.

        Nyström's latent variances may be negative (Quiñonero-Candela & Rasmussen eq. 39).
        """
        X = self._validate_test_inputs(X)
        mean, var = self._mean_var(X, full_cov=False)
        self._check_degenerate_variances(X, var)
        var = var + (self.noise_ if include_noise else 0.0)
        return mean * self.y_std_ + self.y_mean_, var * self.y_std_**2

    def _check_degenerate_variances(self, X, var):
        """A CalibrationWarning when SoR's own (degenerate) variances leave out most of the truth at X.

        Quiñonero-Candela & Rasmussen's eq. 27 omits K_** - Q_**, the prior variance the inducing inputs do
        not span; where that exceeds the whole predictive variance reported (noise included) for more than
        ``SOR_SHARE`` of the test points, the error bars are too narrow by more than a factor sqrt(2) there
        (BENCHMARKS.md, "Tiny training sets": 2-sd coverage 0.28 to 0.48 with three to eight points).
        """
        if self.approximation != "sor" or self.prediction != "standard" or X.shape[0] == 0:
            return
        omitted, _ = self._predict_in_batches(
            lambda Xb: (unexplained_variance(self.kernel_, self.posterior_, Xb),) * 2, X, full_cov=False
        )
        share = float(np.mean(omitted > np.asarray(var) + self.noise_))
        if share > SOR_SHARE:
            warnings.warn(
                f"SparseGPRegressor: SoR's predictive variance (Quiñonero-Candela & Rasmussen eq. 27) leaves out "
                f"K** - Q**, the prior variance the inducing inputs do not span; at {share:.0%} of these test points "
                "that part alone exceeds the variance reported, so the error bars are too narrow there. "
                "prediction='augmented' adds it back (eqs. 28-29), or use approximation='vfe'",
                CalibrationWarning,
                stacklevel=3,
            )

    # ---- persistence -------------------------------------------------------------
    def _get_state(self):
        meta = self._base_state()
        meta["objective"] = float(self.objective_)
        meta["objective_name"] = self.objective_name_
        meta["has_inducing_indices"] = self.inducing_indices_ is not None
        arrays = {f"posterior_{k}": np.asarray(v) for k, v in self.posterior_._asdict().items()}
        if self.inducing_indices_ is not None:
            arrays["inducing_indices"] = np.asarray(self.inducing_indices_, dtype=np.int64)
        if self.train_cache_ is not None:
            arrays.update({f"train_{k}": np.asarray(v) for k, v in self.train_cache_._asdict().items()})
        return meta, arrays

    @classmethod
    def _from_state(cls, meta, arrays):
        model = cls._restore_base(_one_optimize_option(meta))
        try:
            model._check_options()
        except InputError as exc:
            raise ModelFileError(f"metadata 'params' are invalid: {exc}") from None
        D = model.n_features_in_
        Z = persistence.require_array(arrays, "posterior_Z", ndim=2, shape=(None, D))
        m = Z.shape[0]
        parts = {"Z": Z}
        for key, shape in (("Luu", (m, m)), ("LB", (m, m)), ("c", (m,)), ("w_mean", (m,))):
            parts[key] = persistence.require_array(arrays, f"posterior_{key}", ndim=len(shape), shape=shape)
        for key in ("Luu", "LB"):
            L = parts[key]
            if np.any(np.triu(L, 1) != 0) or np.any(np.diag(L) <= 0):
                raise ModelFileError(f"array 'posterior_{key}' must be lower triangular with a positive diagonal")
        post = make_posterior(*(jnp.asarray(parts[k]) for k in ("Z", "Luu", "LB", "c")))
        if not np.allclose(np.asarray(post.w_mean), parts["w_mean"], rtol=1e-8, atol=1e-12):
            raise ModelFileError("array 'posterior_w_mean' is inconsistent with the stored factors")
        model.posterior_ = post
        model.Z_ = Z
        model.objective_ = persistence.require(meta, "objective", float)
        model.objective_name_ = persistence.require(meta, "objective_name", str)
        model.inducing_indices_ = None
        if persistence.require(meta, "has_inducing_indices", bool):
            idx = arrays.get("inducing_indices")
            if idx is None or idx.dtype.kind != "i" or idx.shape != (m,):
                raise ModelFileError("array 'inducing_indices' is missing or malformed")
            model.inducing_indices_ = idx
        model.train_cache_ = None
        if model.prediction != "standard":
            Xs = persistence.require_array(arrays, "train_Xs", ndim=3, shape=(None, None, D))
            rs = persistence.require_array(arrays, "train_rs", ndim=2, shape=Xs.shape[:2])
            ms = persistence.require_array(arrays, "train_ms", ndim=2, shape=Xs.shape[:2])
            if not np.all((ms >= 0) & (ms == np.round(ms))):
                raise ModelFileError("array 'train_ms' must hold row weights: whole numbers >= 0 (0 on padding)")
            model.train_cache_ = TrainingCache(jnp.asarray(Xs), jnp.asarray(rs), jnp.asarray(ms))
        model.optimizer_report_, model.n_iter_ = None, 0
        return model


def _one_optimize_option(meta):
    """Format 1 files carry ``optimize_inducing`` beside ``optimize``; format 2 has the one ``optimize``."""
    params = meta.get("params")
    if not isinstance(params, dict) or "optimize_inducing" not in params or meta.get("format_version") != 1:
        return meta
    params = dict(params)
    free = params.pop("optimize_inducing")
    if not isinstance(free, bool):
        raise persistence.ModelFileError(f"metadata 'params' entry 'optimize_inducing' must be a bool, got {free!r}")
    if params.get("optimize", True) is True and not free:
        params["optimize"] = "hyperparameters"
    return {**meta, "params": params}
