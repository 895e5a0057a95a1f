"""SparseGPClassifier: the sparse variational GP classifier behind scikit-learn's interface."""

from __future__ import annotations

import time

import jax.numpy as jnp
import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone

from .._docstrings import fill
from ..backends.dask_sums import is_dask_collection
from ..classification.svgp import FAMILY
from ..errors import InputError
from ..fitting.calibration import warn_if_overconfident
from ..fitting.config import VariationalConfig, classifier_config
from ..fitting.variational import InMemoryRows, as_record, collapse_rows, fit_variational
from ..likelihoods import Likelihood, likelihood_from_dict
from ..metrics import expected_calibration_error
from ..validation import as_float_matrix, feature_names_of
from . import persistence
from .base import FeatureNamesMixin, copy_result, raise_if_interrupted
from .classifier import _TEST_INPUTS, IVMClassifier, OneVsRestIVMClassifier, _labels, _require_fitted
from .sparse_file import growth_from_meta, path_for_json
from .sparse_variational import read_q

_JSON_PARAMS = (
    "likelihood",
    "inducing",
    "max_inducing",
    "tol",
    "max_iter",
    "optimize",
    "learn_inducing",
    "chunk_size",
    "random_state",
    "warm_start",
    "verbose",
)


PROBA_ROWS = 1024  # the likelihood's predictive runs on rows padded to this many, or to a power of two above it


def _log_proba(likelihood: Likelihood, mean, var) -> np.ndarray:
    """The likelihood's log p(y = c) at the latent marginals (n, L), as NumPy, computed on rows padded to
    PROBA_ROWS or the next power of two (mean 0, variance 1): the leave-one-out check and a prediction of up to
    that many rows share one compiled program."""
    n = int(np.shape(mean)[0])
    size = max(PROBA_ROWS, 1 << max(n - 1, 0).bit_length())
    pad = ((0, size - n), (0, 0))
    out = likelihood.predict_log_proba(
        jnp.asarray(np.pad(np.asarray(mean, dtype=np.float64), pad)),
        jnp.asarray(np.pad(np.asarray(var, dtype=np.float64), pad, constant_values=1.0)),
    )
    return np.asarray(out)[:n]


@persistence.register
class SparseGPClassifier(FeatureNamesMixin, persistence.SaveLoadMixin, ClassifierMixin, BaseEstimator):
    """Sparse variational GP classification over every training row (Hensman, Matthews & Ghahramani 2015).

    Inducing inputs Z with a whitened Gaussian q(u); the bound sum_i E_q[log p(y_i | f_i)] - KL(q(u) || p(u))
    over all rows (one-dimensional Gauss-Hermite quadrature for the binary likelihoods) is maximised by
    L-BFGS-B over the kernel, Z, q and a constant mean together, after natural-gradient steps for q alone. By
    default the fit chooses m: it starts from 128 inducing inputs at k-means centres of the rows (in the
    kernel's geometry) and doubles m while a doubling raises the bound
    by at least ``tol`` nats per row (:mod:`sparsegp.fitting.variational`).

    Parameters
    ----------
    kernel : Kernel or None
        ``None``: SquaredExponential with one length-scale per input (ARD), learnt; with fewer than 50 training
        rows per hyper-parameter (breast_cancer's 398 rows of 30 inputs, digits' 1,257 of 64) under weak
        log-normal priors about its start (sd 1 in log), which the fitted ``kernel_`` carries.
    likelihood : {"auto", "probit", "logit", "softmax", "robustmax"} or Likelihood
        "auto": probit for two classes, robust-max for more (C latent functions sharing the kernel and Z; on
        scikit-learn's digits its probabilities were better calibrated than softmax's: BENCHMARKS.md,
        "Classification").
    inducing : "auto", int, array of shape (m, D), or IVMClassifier
        "auto": m chosen by the growth, or, with a binary likelihood ("probit", "logit") and at most 400
        distinct training inputs (``EVERY_INPUT_ROWS`` of :mod:`sparsegp.fitting.variational`) no more than
        ``max_inducing``, every distinct input at once, held, with q at its optimum by natural steps
        (``stop_reason_`` "every distinct input ..."); an int: that many inducing inputs at k-means centres;
        an array: those inputs; an (unfitted) IVMClassifier or OneVsRestIVMClassifier: its active set on the
        training rows (Lawrence, Seeger & Herbrich 2003's differential-entropy selection; for more than two
        classes the union of one-vs-rest sets).
    max_inducing : int or None
        The growth's largest m. None: the regressors' device cap at the same cost per evaluation, which shrinks
        with the number of latent functions: 1,024 for two classes on a CPU, 256 for ten
        (:func:`sparsegp.fitting.variational.largest_m`).
    tol : float
        Nats per training row: the growth stops once a doubling of m gains less.
    max_iter : int
        L-BFGS-B iterations per stage at most.
    optimize : bool
        Learn the kernel's hyper-parameters (q and the mean are always fitted).
    learn_inducing : bool
        Move the inducing inputs with the optimiser.
    chunk_size : int or None
        Rows per chunk of the bound's sum (None: about 8 MiB of cross-covariances).
    random_state : int, Generator or None
        Seeds the candidate rows of the greedy selection.
    warm_start : bool
        True: a second ``fit`` continues from the fitted kernel, inducing inputs, q(u) and class means
        (scikit-learn's convention), on the same rows or others with the same classes; with ``inducing="auto"``
        the growth goes on from the fitted m and its path (the size fitted further, then the rules asked again).
    verbose : bool
        Progress bars.
    checkpoint : str, path or Checkpoint, or None
        Save the state the fit has reached as a model file at most every 60 seconds
        (``Checkpoint(path, every=seconds)``), written atomically, and the fitted model at the end:
        ``load_model(path).set_params(warm_start=True).fit(X, y)`` goes on from it.
    callback : callable or None
        ``callback(iteration, objective, params)`` after each L-BFGS-B iteration (``params`` in the inputs' own
        units); return True to stop that stage. A KeyboardInterrupt (Ctrl-C, or raised here) keeps the best state the
        current size reached: the classifier is fitted with it, ``stop_reason_`` says "interrupted", a
        ConvergenceWarning says so and the KeyboardInterrupt goes on to the caller.

    Attributes
    ----------
    classes_ : ndarray
        The class labels.
    kernel_ : Kernel
        The fitted kernel.
    likelihood_ : Likelihood
        The likelihood used.
    Z_ : ndarray of shape (m, D)
        The fitted inducing inputs.
    q_mu_, q_sqrt_ : ndarray
        The whitened q(v) = N(q_mu, q_sqrt q_sqrt^T), one column / factor per latent function.
    mean_ : ndarray
        The constant mean of each latent function.
    bound_ : float
        The bound on log p(y) at the fit.
    inducing_path_ : list of dict
        One record per size, the regressors' (:class:`~sparsegp.fitting.growth.Step`): m, the bound as
        ``objective`` and ``lower`` (``upper`` NaN: no certificate), iterations (natural steps and L-BFGS-B), seconds,
        the bound where the size started (``start``).
    stop_reason_ : str
        Why the growth (or the fit) stopped; "interrupted ..." after a KeyboardInterrupt.
    loo_log_loss_ : float
        Approximate leave-one-out log loss on the training rows (each row's site removed from q).
    loo_calibration_error_ : float
        The expected calibration error (15 equal-width bins of the top class's probability) of the same
        leave-one-out probabilities.
    estimates_ : list of dict
        The fit's estimates of its own wall time, made as it ran (:mod:`sparsegp.fitting.estimate`), as the
        regressors' ``estimates_``.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsegp import SparseGPClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-3, 3, size=(200, 2))
    >>> y = (np.sin(X[:, 0]) + 0.3 * rng.standard_normal(200) > 0).astype(int)
    >>> clf = SparseGPClassifier(inducing=16, random_state=0).fit(X, y)
    >>> bool(clf.score(X, y) > 0.85), clf.predict_proba(X[:2]).shape, clf.Z_.shape
    (True, (2, 2), (16, 2))
    """

    def __init__(
        self,
        kernel=None,
        likelihood="auto",
        *,
        inducing="auto",
        max_inducing: int | None = None,
        tol: float = 1e-3,
        max_iter: int = 1000,
        optimize: bool = True,
        learn_inducing: bool = True,
        chunk_size=None,
        random_state=None,
        warm_start: bool = False,
        verbose: bool = False,
        callback=None,
        checkpoint=None,
    ):
        self.kernel = kernel
        self.likelihood = likelihood
        self.inducing = inducing
        self.max_inducing = max_inducing
        self.tol = tol
        self.max_iter = max_iter
        self.optimize = optimize
        self.learn_inducing = learn_inducing
        self.chunk_size = chunk_size
        self.random_state = random_state
        self.warm_start = warm_start
        self.verbose = verbose
        self.callback = callback
        self.checkpoint = checkpoint

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        return tags

    def _config(self, n_classes: int, D: int, X=None, y=None) -> VariationalConfig:
        inducing = self.inducing
        if isinstance(inducing, (IVMClassifier, OneVsRestIVMClassifier)):
            inducing = self._ivm_inducing(inducing, X, y)
        return classifier_config(self, n_classes, D, inducing, self._warm(D))

    def _warm(self, D: int):
        """With ``warm_start`` and a fitted model, what the fit continues from (:class:`VariationalConfig`)."""
        if not isinstance(self.warm_start, (bool, np.bool_)):
            raise InputError(f"warm_start must be True or False, got {self.warm_start!r}")
        if not (self.warm_start and hasattr(self, "kernel_")):
            return None
        if D != self.n_features_in_:
            raise InputError(
                f"warm_start=True continues from a model of {self.n_features_in_} features, but X has {D}: "
                "fit with warm_start=False"
            )
        if isinstance(self.inducing, (int, np.integer)) and int(self.inducing) != self.Z_.shape[0]:
            raise InputError(
                f"warm_start=True continues from the fitted {self.Z_.shape[0]} inducing inputs, but "
                f"inducing={self.inducing} asks for another number: fit with warm_start=False"
            )
        params = {"kernel": self.kernel_, "likelihood": self.likelihood_, "Z": self.Z_, "q_mu": self.q_mu_,
                  "q_sqrt": self.q_sqrt_, "mean": self.mean_}  # fmt: skip
        return {"params": params, "path": list(self.inducing_path_), "classes": self.classes_}

    def fit(self, X, y):
        """Fit the kernel, the inducing inputs and q(u) to every training row.

        Parameters
        ----------
        X : array or DataFrame of shape (n, D)
            Training inputs.
        y : array of shape (n,)
            Class labels of any type (two or more classes).

        Returns
        -------
        SparseGPClassifier
            self, fitted.

        Raises
        ------
        InputError
            If X or y is malformed, y holds one class, a continuous target or NaN, or a class has one row.
        """
        t0 = time.perf_counter()
        names = feature_names_of(X)
        if is_dask_collection(X) or is_dask_collection(y):
            classes, data = self._dask_rows(X, y)
        else:
            X = as_float_matrix(X, "X", min_rows=2, owner=type(self).__name__)
            y = _labels(y, X.shape[0])
            classes, codes = np.unique(y, return_inverse=True)
            self._check_classes(classes, np.bincount(codes))
            data = InMemoryRows(collapse_rows(X, codes.astype(np.int64), classes.size))
        config = self._config(classes.size, X.shape[1], X, y)
        if config.warm is not None and not np.array_equal(config.warm["classes"], classes):
            raise InputError(
                f"warm_start=True continues from a model of the classes {config.warm['classes'].tolist()}, but y "
                f"holds {classes.tolist()}: fit with warm_start=False"
            )
        context = (classes, X.shape[1], names)

        def save(reached):  # a checkpoint: the state reached, in a copy of this estimator
            persistence.save_model(clone(self)._apply(reached, *context, warn=False), config.checkpoint.path)

        fit = fit_variational(config, data, save=save if config.checkpoint is not None else None)
        self._apply(fit, *context)
        self.fit_time_ = time.perf_counter() - t0
        if config.checkpoint is not None:  # at the end, the checkpoint file holds the fitted model
            persistence.save_model(self, config.checkpoint.path)
        raise_if_interrupted(self, fit.stop_reason)
        return self

    def _apply(self, fit, classes, n_features: int, names, warn: bool = True):
        """The fitted attributes from ``fit`` (a :class:`~sparsegp.fitting.variational.VariationalFit`)."""
        self.classes_ = classes
        self.n_features_in_ = n_features
        self._set_feature_names(names)
        self.likelihood_ = fit.params["likelihood"]
        self._set_params(fit.params)
        copy_result(self, fit, skip=("params", "loo_mean", "loo_var", "loo_targets"))
        log_proba = _log_proba(self.likelihood_, fit.loo_mean, fit.loo_var)
        self._set_loo(log_proba, fit.loo_targets, warn=warn)
        return self

    @staticmethod
    def _ivm_inducing(template, X, y) -> np.ndarray:
        """The active set of an IVM (for more than two classes, the union of one-vs-rest IVMs' sets) on the
        training rows, as the inducing inputs."""
        if X is None or is_dask_collection(X):
            raise InputError("inducing=<an IVM> selects among training rows in memory; pass an int or an array")
        if np.unique(y).size > 2 and isinstance(template, IVMClassifier):
            template = OneVsRestIVMClassifier(template)
        fitted = clone(template).fit(X, y)
        ivms = fitted.estimators_ if isinstance(fitted, OneVsRestIVMClassifier) else [fitted]
        rows = np.unique(np.concatenate([ivm.active_ for ivm in ivms]))
        return X[rows]

    def _check_classes(self, classes, counts):
        if classes.size < 2:
            raise InputError(
                f"{type(self).__name__} needs at least two classes, but y holds one ({classes.tolist()}); "
                "classification needs examples of each class"
            )
        if np.any(counts < 2):
            c = classes[int(np.argmin(counts))]
            c = c.item() if isinstance(c, np.generic) else c
            raise InputError(
                f"{type(self).__name__}: class {c!r} has {int(counts.min())} example(s); every class needs at least 2"
            )

    def _dask_rows(self, X, y):
        """Dask arrays: the classes and the partitions' rows (:mod:`sparsegp.backends.dask_rows`)."""
        from ..backends.dask_rows import DaskRows, dask_labels

        if not (is_dask_collection(X) and is_dask_collection(y)):
            raise InputError("X and y must both be dask arrays, or neither")
        if X.ndim != 2 or X.shape[0] != y.shape[0]:
            raise InputError(f"X must be 2-D with one row per label, got shapes {X.shape} and {y.shape}")
        classes, codes = dask_labels(y)
        data = DaskRows(X, codes, classes.size)
        self._check_classes(classes, data.class_weights)
        return classes, data

    def _set_params(self, params):
        self.kernel_ = params["kernel"]
        self.Z_ = np.asarray(params["Z"], dtype=np.float64)
        self.q_mu_ = np.asarray(params["q_mu"], dtype=np.float64)
        self.q_sqrt_ = np.tril(np.asarray(params["q_sqrt"], dtype=np.float64))
        self.mean_ = np.asarray(params["mean"], dtype=np.float64)
        self._posterior = FAMILY.posterior(
            {
                "kernel": self.kernel_,
                "Z": jnp.asarray(self.Z_),
                "q_mu": jnp.asarray(self.q_mu_),
                "q_sqrt": jnp.asarray(self.q_sqrt_),
                "mean": jnp.asarray(self.mean_),
            }
        )

    def _set_loo(self, log_proba, codes, warn: bool = True):
        self.loo_log_loss_ = float(-np.mean(log_proba[np.arange(codes.size), codes]))
        self.loo_calibration_error_ = float(expected_calibration_error(codes, np.exp(log_proba)))
        if warn:
            warn_if_overconfident(type(self).__name__, log_proba, codes, stacklevel=4)

    # ---- predict -----------------------------------------------------------------------
    def _check_fitted(self):
        _require_fitted(self, "q_mu_")

    @fill(test_inputs=_TEST_INPUTS)
    def predict_latent(self, X, batch_size: int = 4096):
        """The latent functions' predictive means and variances at X (the constant mean included).

        {test_inputs}
        batch_size : int
            Test inputs per batch.

        Returns
        -------
        mean, var : ndarray of shape (n,) for two classes (the positive class's latent function), else (n, L)
            with one column per class (scikit-learn's ``latent_mean_and_variance`` shapes, and the IVM's).
        """
        mean, var = self._latent(X, batch_size)
        return (mean[:, 0], var[:, 0]) if mean.shape[1] == 1 else (mean, var)

    def _latent(self, X, batch_size: int = 4096):
        """(mean, var) of shape (n, L), one column per latent function."""
        self._check_fitted()
        return FAMILY.predict(self._posterior, self._test_matrix(X), batch_size)

    @fill(test_inputs=_TEST_INPUTS)
    def predict_log_proba(self, X):
        """log p(y = c | x) = log int p(y = c | f) q(f | x) df, columns in the order of ``classes_``.

        {test_inputs}

        Returns
        -------
        ndarray of shape (n, C)
        """
        mean, var = self._latent(X)  # checks the classifier is fitted before its likelihood_ is read
        return _log_proba(self.likelihood_, mean, var)

    @fill(test_inputs=_TEST_INPUTS)
    def predict_proba(self, X):
        """Class probabilities p(y = c | x), columns in the order of ``classes_``; rows sum to one.

        {test_inputs}

        Returns
        -------
        ndarray of shape (n, C)
        """
        p = np.exp(self.predict_log_proba(X))
        return p / p.sum(axis=1, keepdims=True)

    @fill(test_inputs=_TEST_INPUTS)
    def decision_function(self, X):
        """Binary: log p(classes_[1] | x) - log p(classes_[0] | x), positive for ``classes_[1]``; more classes: the
        log probabilities (n, C).

        {test_inputs}

        Returns
        -------
        ndarray of shape (n,) or (n, C)
        """
        lp = self.predict_log_proba(X)
        return lp[:, 1] - lp[:, 0] if self.classes_.size == 2 else lp

    @fill(test_inputs=_TEST_INPUTS)
    def predict(self, X):
        """The most probable class at each test input.

        {test_inputs}

        Returns
        -------
        ndarray of shape (n,)
            Labels from ``classes_``.
        """
        best = np.argmax(self.predict_log_proba(X), axis=1)
        return self.classes_[best]

    @fill(test_inputs=_TEST_INPUTS)
    def score(self, X, y, sample_weight=None):
        """Mean accuracy on (X, y); labels the fit never saw are an error rather than silent mistakes.

        {test_inputs}
        y : array of shape (n,)
            Their labels, each one of ``classes_``.
        sample_weight : array of shape (n,) or None
            Weights of the rows.

        Returns
        -------
        float
        """
        self._check_fitted()
        labels = _labels(y, len(y) if hasattr(y, "__len__") else 0)
        unseen = np.setdiff1d(np.unique(labels), self.classes_)
        if unseen.size:
            raise InputError(
                f"y holds label(s) {unseen.tolist()[:10]} that the fit never saw; the classes are {self.classes_.tolist()}"
            )
        return super().score(X, labels, sample_weight=sample_weight)

    # ---- persistence -------------------------------------------------------------------
    def _get_state(self):
        params = {k: v for k, v in self.get_params(deep=False).items() if k in _JSON_PARAMS}
        if not isinstance(params.get("random_state"), (int, type(None))):
            params["random_state"] = None
        if isinstance(params.get("likelihood"), Likelihood):
            params["likelihood"] = "auto"
        if not isinstance(params.get("inducing"), (str, int)) or isinstance(params.get("inducing"), bool):
            params["inducing"] = "auto"  # the fitted Z_ is stored; the given array is not needed to predict
        meta = {
            "params": params,
            "kernel": self.kernel_.to_dict(),
            "likelihood": self.likelihood_.to_dict(),
            "classes": self.classes_.tolist(),
            "n_features_in": int(self.n_features_in_),
            "feature_names": self._feature_names_state(),
            "bound": float(self.bound_),
            "stop_reason": self.stop_reason_,
            "inducing_path": path_for_json(self.inducing_path_),
            "loo_log_loss": float(self.loo_log_loss_),
            "loo_calibration_error": float(self.loo_calibration_error_),
        }
        arrays = {"Z": self.Z_, "q_mu": self.q_mu_, "q_sqrt": self.q_sqrt_, "mean": self.mean_}
        return meta, arrays

    @classmethod
    def _from_state(cls, meta, arrays):
        req = persistence.require
        model = persistence.construct(cls, meta, _JSON_PARAMS)
        try:
            model.likelihood_ = likelihood_from_dict(req(meta, "likelihood", dict))
        except (InputError, TypeError) as exc:
            raise persistence.ModelFileError(f"metadata field 'likelihood' is invalid: {exc}") from None
        model.n_features_in_ = req(meta, "n_features_in", int)
        if model.n_features_in_ < 1:
            raise persistence.ModelFileError("metadata field 'n_features_in' must be >= 1")
        model._restore_feature_names(meta)
        classes = req(meta, "classes", list)
        if len(classes) < 2 or not (
            all(isinstance(c, str) for c in classes)
            or all(isinstance(c, int) and not isinstance(c, bool) for c in classes)
        ):
            raise persistence.ModelFileError(
                "metadata field 'classes' must hold two or more labels, all int or all str"
            )
        model.classes_ = np.array(classes)
        L = model.likelihood_.latent_count(len(classes))
        Z, q_mu, q_sqrt, mean = read_q(model, arrays, L)
        model.bound_ = req(meta, "bound", float)
        try:  # records of files written before they were the regressors', in the current schema
            path = [as_record(r) for r in req(meta, "inducing_path", list)]
        except (KeyError, TypeError, ValueError):
            raise persistence.ModelFileError("metadata field 'inducing_path' must hold the growth's records") from None
        model.inducing_path_, _ = growth_from_meta(dict(meta, inducing_path=path))
        model.stop_reason_ = req(meta, "stop_reason", str)
        model.loo_log_loss_ = req(meta, "loo_log_loss", float)
        model.loo_calibration_error_ = req(meta, "loo_calibration_error", float)
        model._set_params({"kernel": model.kernel_, "Z": Z, "q_mu": q_mu, "q_sqrt": q_sqrt, "mean": mean})
        model.n_iter_ = 0
        model.fit_time_ = 0.0
        return model
