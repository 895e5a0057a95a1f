"""IVMClassifier and OneVsRestIVMClassifier: the Informative Vector Machine behind scikit-learn's interface."""

from __future__ import annotations

import time
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.exceptions import DataConversionWarning

from .._docstrings import fill
from ..classification.adf import predict_latent, site_means
from ..classification.ivm import ivm_select
from ..classification.model_selection import (
    MIN_CLASS_ROWS,
    PROBE_SIZE,
    default_kernel_grid,
    validation_folds,
    validation_search,
)
from ..classification.probit import predictive_probability, probit_bias
from ..errors import InputError, NotFittedError
from ..fitting.config import IVMConfig, ivm_config
from ..fitting.hyper import input_scale
from ..fitting.ivm_kernel import learn_kernel
from ..kernels import Constant, Kernel, SquaredExponential
from ..kernels.gram import gram
from ..validation import as_float_matrix, check_label_values, feature_names_of
from . import persistence
from .base import FeatureNamesMixin


def _labels(y, n: int) -> np.ndarray:
    if y is None:
        raise InputError("requires y to be passed, but the target y is None")
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        warnings.warn(
            "A column-vector y was passed when a 1d array was expected; it was flattened.",
            DataConversionWarning,
            stacklevel=3,
        )
        y = y[:, 0]
    if y.ndim != 1:
        raise InputError(f"y has shape {y.shape}; expected a 1-D array of class labels")
    if y.shape[0] != n:
        raise InputError(f"X has {n} rows but y has {y.shape[0]} labels")
    check_label_values(y)
    if y.dtype.kind not in "biufUSO":
        raise InputError(f"y has dtype {y.dtype}; expected class labels (integers or strings)")
    return y


def _require_fitted(est, attr: str) -> None:
    if not hasattr(est, attr):
        raise NotFittedError(
            f"This {type(est).__name__} instance is not fitted yet. Call 'fit' with appropriate arguments "
            "before using this estimator."
        )


def _check_class_counts(y, classes, owner: str) -> None:
    counts = np.array([np.sum(y == c) for c in classes])
    if np.any(counts < 2):
        c = classes[int(np.argmin(counts))]
        c = c.item() if isinstance(c, np.generic) else c
        raise InputError(f"{owner}: class {c!r} has {int(counts.min())} example(s); every class needs at least 2")


# The test-input parameter of every prediction method, written once (see _docstrings.fill).
_TEST_INPUTS = """
Parameters
----------
X : array of shape (n, D)
    Test inputs, with the training inputs' columns.
"""

_JSON_PARAMS = (
    "size",
    "learn_kernel",
    "bias",
    "bias_variance",
    "criterion",
    "n_random",
    "n_full",
    "index_size",
    "tau",
    "stop",
    "monitor_size",
    "check_every",
    "patience",
    "random_state",
    "verbose",
)


@persistence.register
class IVMClassifier(FeatureNamesMixin, persistence.SaveLoadMixin, ClassifierMixin, BaseEstimator):
    """Binary sparse GP classification with the Informative Vector Machine (Lawrence, Seeger & Herbrich 2003).

    Probit likelihood P(y | u) = Phi(y (u + b)); ADF over a greedily selected active set of
    ``size`` training points; prediction by eq. 5. Labels can be any two values; ``classes_[1]``
    is the positive class.

    Parameters
    ----------
    kernel : Kernel or None
        ``None``: an isotropic SquaredExponential chosen by ``learn_kernel`` (by default among a grid, on held-out
        rows), plus the bias variance v_b. A given kernel is kept as given (the paper's fixed kernel) unless
        ``learn_kernel`` is True or "evidence".
    learn_kernel : "auto", "validation", "evidence" or bool
        "validation" (what "auto" does with ``kernel=None``): the paper's sec. 4 model selection inside ``fit``:
        an IVM (d at most 500) is fitted at each kernel of a grid (length-scales 0.35 to 1.4 times sqrt(D) s,
        s the inputs' RMS spread, variances 1, 10 and 100), and the kernel whose IVMs give the lowest error
        on held-out rows (ties: the lowest log loss) is kept (``kernel_history_``): 5-fold cross-validation up to
        5,000 rows, beyond that one fit on up to 5,000 rows scored on up to 2,000 others. "evidence" or True:
        learn the kernel's hyper-parameters (SE-ARD from the default start, or a given kernel's) by the
        approximate marginal likelihood of the active set's Gaussian sites, interleaved with the selection
        (:mod:`sparsegp.fitting.ivm_kernel`; on 13 x 13 MNIST this drives the kernel to one that
        predicts the class frequencies: BENCHMARKS.md). False keeps the kernel (with ``kernel=None``: one
        length-scale sqrt(D) s and variance 1, the paper's ``C exp(-(gamma / (2 D)) ||x - x'||^2)`` at
        C = gamma = 1 on inputs divided by s). "auto" keeps a given kernel.
    size : int
        The active-set size d (the most; ``stop`` can end earlier). The paper's MNIST tasks needed d of 1,000 to
        4,600 (its SVMs' support vectors); at d = 200 the IVM's errors there were several times those.
    bias : "auto" or float
        The bias b; "auto" is Phi^-1(fraction of positive labels), as in the paper's MNIST experiment.
    bias_variance : float
        The variance v_b >= 0 of the bias, a constant added to the kernel for the variance of the bias (paper: 1/10).
    criterion : {"differential-entropy", "info-gain"}
        The differential-entropy score (eq. 4) or the information gain KL(Q_new || Q), the names of the selection's
        scoring rules for the same ideas (:mod:`sparsegp.selection.criteria`); "entropy", the older name of the
        first, is read as it.
    n_random : int
        The first ``n_random`` inclusions are drawn at random (paper: 2).
    n_full : int
        Then ``n_full`` inclusions by full greedy search (paper: 198).
    index_size : int or None
        Then a selection index of ``index_size`` points (paper: 500), re-filled after each inclusion;
        None: full greedy search throughout.
    tau : float
        The fraction of the index retained after each inclusion (paper: 1/2).
    stop : {"loglik", "error", None}
        None: stop at ``size`` (the paper). "loglik" (the default) / "error": every ``check_every`` inclusions
        measure the error rate / negative log predictive probability on ``monitor_size`` random training points
        outside the active set; stop after ``patience`` checks without improvement, keep the best d.
    monitor_size : int
        Training points outside the active set on which ``stop`` measures.
    check_every : int
        Inclusions between two measurements of ``stop``.
    patience : int
        Measurements without improvement after which ``stop`` ends the selection.
    random_state : int, Generator or None
        Seed for the random inclusions, the selection index and the monitored points.
    verbose : bool
        A progress bar over the inclusions.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two labels; ``classes_[1]`` is the positive class.
    bias_ : float
        The probit bias b used.
    kernel_ : Kernel
        The kernel with v_b added (learnt, where ``learn_kernel`` says so).
    kernel_history_ : list of dict
        "validation": each grid kernel's parameters, held-out error, log loss and fit time; "evidence":
        each learning round's active-set size and negative site evidence (empty where the kernel is not learnt).
    active_ : ndarray of int
        Training rows of the active set I, in order of inclusion.
    X_active_ : ndarray of shape (d, D)
        Their inputs.
    beta_ : ndarray of shape (d,)
        Eq. 5's weights.
    log_marginal_likelihood_ : float
        Sum of log Phi(z_i), the Gaussian approximation's marginal likelihood.
    site_mean_, site_precision_ : ndarray of shape (d,)
        The Gaussian sites N(m_i, 1 / pi_i) of the active points, in order of inclusion (ADF's site
        parameters, the paper's m_i and Pi = diag(pi_i)).
    stop_reason_ : str
        Why the selection stopped.
    selection_history_ : list of dict
        The monitored curve.
    fit_time_ : float
        Seconds the fit took.

    See Also
    --------
    OneVsRestIVMClassifier : more than two classes, c against the rest.

    Examples
    --------
    >>> from sparsegp import IVMClassifier, datasets
    >>> from sparsegp.kernels import SquaredExponential
    >>> X, y, X_test, y_test = datasets.load("banana", split="ratsch_1")
    >>> clf = IVMClassifier(SquaredExponential(lengthscale=1.0), size=60, random_state=0).fit(X, y)
    >>> clf.active_.shape, clf.classes_
    ((60,), array([-1,  1]))
    >>> bool(clf.score(X_test, y_test) > 0.85)
    True
    """

    def __init__(
        self,
        kernel=None,
        size: int = 3000,
        *,
        learn_kernel="auto",
        bias="auto",
        bias_variance: float = 0.1,
        criterion: str = "differential-entropy",
        n_random: int = 2,
        n_full: int = 198,
        index_size: int | None = 500,
        tau: float = 0.5,
        stop="loglik",
        monitor_size: int = 2000,
        check_every: int = 50,
        patience: int = 3,
        random_state=None,
        verbose: bool = False,
    ):
        self.kernel = kernel
        self.size = size
        self.learn_kernel = learn_kernel
        self.bias = bias
        self.bias_variance = bias_variance
        self.criterion = criterion
        self.n_random = n_random
        self.n_full = n_full
        self.index_size = index_size
        self.tau = tau
        self.stop = stop
        self.monitor_size = monitor_size
        self.check_every = check_every
        self.patience = patience
        self.random_state = random_state
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def _set_sites(self):
        self.site_precision_ = self.sqrt_site_precision_**2
        self.site_mean_ = site_means(self.L_, self.sqrt_site_precision_, self.beta_)

    # ---- fit ---------------------------------------------------------------------------
    def _validated_kernel(self, X: np.ndarray, y: np.ndarray):
        """The grid kernel (:func:`~sparsegp.classification.model_selection.default_kernel_grid`) whose IVMs,
        fitted on part of the rows, give the lowest error on the others, ties by their log loss (the paper's
        sec. 4 model selection, inside fit; cross-validated on small sets): (kernel, one record per grid point)."""
        codes = np.searchsorted(self.classes_, y)
        folds = validation_folds(codes, np.random.default_rng(self.random_state))
        if not folds:
            counts = " and ".join(f"{int(np.sum(codes == c))} of class {self.classes_.tolist()[c]!r}" for c in range(2))
            raise InputError(
                f"IVMClassifier: y has {y.size} rows ({counts}); with kernel=None the kernel is chosen on held-out "
                f"rows, and every fit keeps {MIN_CLASS_ROWS} rows of each class, so at least one class needs "
                f"{MIN_CLASS_ROWS + 1} rows. Pass a kernel (kernel=SquaredExponential(...)) or learn_kernel=False"
            )
        grid = default_kernel_grid(X.shape[1], input_scale(X))
        probe = clone(self).set_params(
            kernel=grid[0], learn_kernel=False, size=min(int(self.size), PROBE_SIZE), stop=None, verbose=False
        )
        errors, losses, seconds = np.zeros(len(grid)), np.zeros(len(grid)), np.zeros(len(grid))
        for train, val in folds:
            found = validation_search(
                probe, {"kernel": grid}, X[train], y[train], X[val], y[val], scoring="error_log_loss"
            )
            share = val.size / sum(v.size for _, v in folds)
            errors += share * np.array([r["error"] for r in found["results"]])
            losses += share * np.array([r["log_loss"] for r in found["results"]])
            seconds += np.array([r["fit_s"] for r in found["results"]])
        best = min(range(len(grid)), key=lambda i: (errors[i], losses[i]))  # first of the ties, in grid order
        records = [
            {**k.parameters(), "error": float(e), "log_loss": float(ll), "fit_s": float(t)}
            for k, e, ll, t in zip(grid, errors, losses, seconds)
        ]
        return grid[best], records

    def _kernel(self, X: np.ndarray, config: IVMConfig) -> Kernel:
        D = X.shape[1]
        if self.kernel is None and config.learning == "evidence":  # a start for the learnt SE-ARD kernel, in X's units
            spread = np.std(X, axis=0)
            spread = np.where(spread > 1e-8 * input_scale(X), spread, input_scale(X))
            base: Kernel = SquaredExponential(lengthscale=np.sqrt(D) * spread, variance=1.0)
        elif self.kernel is None:  # the kernel is not learned: its length-scale must follow the inputs' units
            base = SquaredExponential(lengthscale=np.sqrt(D) * input_scale(X), variance=1.0)
        elif not isinstance(self.kernel, Kernel):
            raise InputError(f"kernel must be a sparsegp.kernels.Kernel, got {type(self.kernel).__name__}")
        else:
            self.kernel.check_input_dim(D)
            base = self.kernel
        vb = config.bias_variance
        return base + Constant(vb) if vb > 0 else base

    def fit(self, X, y):
        """Select the active set greedily and fit the ADF approximation on it (Lawrence, Seeger & Herbrich 2003,
        sec. 2).

        Parameters
        ----------
        X : array or DataFrame of shape (n, D)
            Training inputs.
        y : array of shape (n,)
            Two distinct labels of any type; ``classes_[1]`` (the larger) is the positive class.

        Returns
        -------
        IVMClassifier
            self, fitted.

        Raises
        ------
        InputError
            If X or y is malformed, there are not exactly two classes, or a class has too few points.
        """
        t0 = time.perf_counter()
        names = feature_names_of(X)
        X = as_float_matrix(X, "X", min_rows=2)
        y = _labels(y, X.shape[0])
        classes = np.unique(y)
        if classes.size != 2:
            raise InputError(
                f"Only binary classification is supported by IVMClassifier, but y has {classes.size} class(es) "
                f"{classes.tolist()[:10]}; use OneVsRestIVMClassifier for more than two classes"
            )
        _check_class_counts(y, classes, "IVMClassifier")
        config = ivm_config(self)
        self.classes_ = classes
        self.n_features_in_ = X.shape[1]
        self._set_feature_names(names)
        ypm = np.where(y == classes[1], 1.0, -1.0)
        self.bias_ = probit_bias(int(np.sum(ypm > 0)), ypm.size) if config.bias is None else config.bias
        kernel = self._kernel(X, config)

        def select(k):
            return ivm_select(k, X, ypm, self.bias_, size=min(config.size, X.shape[0]), **config.select)

        self.kernel_history_ = []
        mode = config.learning
        if mode == "evidence":
            kernel, self.kernel_history_ = learn_kernel(kernel, X, select, scale=input_scale(X))
        elif mode == "validation":
            base, self.kernel_history_ = self._validated_kernel(X, y)
            kernel = base + Constant(config.bias_variance) if config.bias_variance > 0 else base
        self.kernel_ = kernel
        sel = select(kernel)
        pred = sel.state.predictor(sel.d)
        self.active_ = pred["active"]
        self.X_active_ = X[self.active_]
        self.beta_ = pred["beta"]
        self.L_ = pred["L"]
        self.sqrt_site_precision_ = pred["sqrtp"]
        self._set_sites()
        self.log_marginal_likelihood_ = sel.state.log_marginal_likelihood(sel.d)
        self.stop_reason_ = sel.reason
        self.selection_history_ = sel.history
        self.fit_time_ = time.perf_counter() - t0
        return self

    # ---- predict -----------------------------------------------------------------------
    def _check_fitted(self):
        _require_fitted(self, "beta_")

    @fill(test_inputs=_TEST_INPUTS)
    def predict_latent(self, X, batch_size: int = 4096):
        """Eq. 5: the latent predictive mean mu(x*) and variance sigma^2(x*) at each test input (bias not included).

        {test_inputs}
        batch_size : int
            Test inputs per batch (bounds the memory of the cross-covariances).

        Returns
        -------
        mean, var : ndarray of shape (n,)
        """
        self._check_fitted()
        X = self._test_matrix(X)
        oracle = gram(self.kernel_, self.X_active_, engine="jax")
        means, variances = [], []
        for s in range(0, X.shape[0], batch_size):
            Xb = X[s : s + batch_size]
            Kxs = oracle.cross(Xb, np.arange(self.active_.size)).T
            kss = np.asarray(self.kernel_.diag(Xb))
            m, v = predict_latent(Kxs, kss, self.L_, self.sqrt_site_precision_, self.beta_)
            means.append(m)
            variances.append(v)
        return np.concatenate(means), np.concatenate(variances)

    @fill(test_inputs=_TEST_INPUTS)
    def decision_function(self, X):
        """(mu(x*) + b) / sqrt(1 + sigma^2(x*)): positive for ``classes_[1]``, whose probability is Phi of it.

        {test_inputs}

        Returns
        -------
        ndarray of shape (n,)
        """
        mean, var = self.predict_latent(X)
        return (mean + self.bias_) / np.sqrt(1.0 + var)

    @fill(test_inputs=_TEST_INPUTS)
    def predict_log_proba(self, X):
        """Log class probabilities, log Phi(+-(mu + b) / sqrt(1 + sigma^2)), computed without underflow.

        {test_inputs}

        Returns
        -------
        ndarray of shape (n, 2)
            Columns in the order of ``classes_``.
        """
        mean, var = self.predict_latent(X)
        lp, lm = predictive_probability(mean, var, self.bias_)
        return np.column_stack([lm, lp])

    @fill(test_inputs=_TEST_INPUTS)
    def predict_proba(self, X):
        """Class probabilities P(y | x*) = Phi(y (mu + b) / sqrt(1 + sigma^2)) (eq. 5).

        {test_inputs}

        Returns
        -------
        ndarray of shape (n, 2)
            Columns in the order of ``classes_``; rows sum to one.
        """
        return np.exp(self.predict_log_proba(X))

    @fill(test_inputs=_TEST_INPUTS)
    def predict(self, X):
        """The more probable label at each test input.

        {test_inputs}

        Returns
        -------
        ndarray of shape (n,)
            Labels from ``classes_``.
        """
        z = self.decision_function(X)
        return self.classes_[(z > 0).astype(int)]

    # ---- persistence (save / load from persistence.SaveLoadMixin) ---------------------
    def _get_state(self):
        params = {k: v for k, v in self.get_params(deep=False).items() if k in _JSON_PARAMS}
        if not isinstance(params.get("random_state"), (int, type(None))):
            params["random_state"] = None  # a Generator is not JSON; the fitted state does not need it
        meta = {
            "params": params,
            "kernel": self.kernel_.to_dict(),
            "bias": float(self.bias_),
            "classes": self.classes_.tolist(),
            "n_features_in": int(self.n_features_in_),
            "feature_names": self._feature_names_state(),
            "log_marginal_likelihood": float(self.log_marginal_likelihood_),
            "stop_reason": self.stop_reason_,
        }
        arrays = {
            "active": self.active_,
            "X_active": self.X_active_,
            "beta": self.beta_,
            "L": self.L_,
            "sqrt_site_precision": self.sqrt_site_precision_,
        }
        return meta, arrays

    @classmethod
    def _from_state(cls, meta, arrays):
        req = persistence.require
        model = persistence.construct(cls, meta, _JSON_PARAMS)
        model.bias_ = req(meta, "bias", float)
        model.n_features_in_ = req(meta, "n_features_in", int)
        if model.n_features_in_ < 1:
            raise persistence.ModelFileError("metadata field 'n_features_in' must be >= 1")
        model._restore_feature_names(meta)
        model.log_marginal_likelihood_ = req(meta, "log_marginal_likelihood", float)
        model.stop_reason_ = req(meta, "stop_reason", str)
        classes = req(meta, "classes", list)
        if len(classes) != 2 or not (
            all(isinstance(c, str) for c in classes)
            or all(isinstance(c, int) and not isinstance(c, bool) for c in classes)
        ):
            raise persistence.ModelFileError("metadata field 'classes' must hold two labels, both int or both str")
        model.classes_ = np.array(classes)
        if not np.isfinite(model.bias_) or model.n_features_in_ < 1:
            raise persistence.ModelFileError("metadata fields 'bias' (finite) / 'n_features_in' (>= 1) are invalid")
        try:
            model.kernel_.check_input_dim(model.n_features_in_)
        except InputError as exc:
            raise persistence.ModelFileError(str(exc)) from None
        X_active = persistence.require_array(arrays, "X_active", ndim=2, shape=(None, model.n_features_in_))
        d = X_active.shape[0]
        if d < 1:
            raise persistence.ModelFileError("array 'X_active' is empty")
        active = persistence.require_array(arrays, "active", ndim=1, shape=(d,))
        if np.any(active != np.round(active)) or np.any(active < 0):
            raise persistence.ModelFileError("array 'active' must hold non-negative training-row indices")
        model.active_ = active.astype(np.int64)
        model.X_active_ = X_active
        model.beta_ = persistence.require_array(arrays, "beta", ndim=1, shape=(d,))
        L = persistence.require_array(arrays, "L", ndim=2, shape=(d, d))
        if np.any(np.triu(L, 1) != 0) or np.any(np.diag(L) < 1.0 - 1e-12):
            # B = I + Pi^1/2 K Pi^1/2 has eigenvalues >= 1, so its Cholesky factor has diagonal >= 1
            raise persistence.ModelFileError("array 'L' is not the lower Cholesky factor of I + Pi^1/2 K_I Pi^1/2")
        model.L_ = L
        sp = persistence.require_array(arrays, "sqrt_site_precision", ndim=1, shape=(d,))
        if np.any(sp <= 0):
            raise persistence.ModelFileError("array 'sqrt_site_precision' must be positive")
        model.sqrt_site_precision_ = sp
        model._set_sites()
        model.selection_history_ = []
        model.kernel_history_ = []
        model.fit_time_ = 0.0
        return model


class OneVsRestIVMClassifier(FeatureNamesMixin, ClassifierMixin, BaseEstimator):
    """c-against-rest IVMs combined as in the paper: decide for the class with the largest log P(y = +1 | x).

    ``predict_proba`` returns the per-class P(y = +1) normalised to sum to one, ``predict_log_proba``
    and ``decision_function`` their logarithms (the argmax is the paper's rule either way).

    Parameters
    ----------
    estimator : IVMClassifier or None
        The template for each class (cloned; its bias "auto" is set per class from that class's
        frequency); None: ``IVMClassifier()``. With two classes a single IVM is fitted.

    Attributes
    ----------
    classes_ : ndarray
        The labels, sorted.
    estimators_ : list of IVMClassifier
        One fitted IVM per class (one in all with two classes).

    See Also
    --------
    IVMClassifier : one binary IVM.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsegp import IVMClassifier, OneVsRestIVMClassifier
    >>> rng = np.random.default_rng(0)
    >>> centres = np.array([[0.0, 3.0], [3.0, -2.0], [-3.0, -2.0]])
    >>> y = np.repeat([0, 1, 2], 40); X = centres[y] + rng.normal(size=(120, 2))
    >>> clf = OneVsRestIVMClassifier(IVMClassifier(size=20, random_state=0)).fit(X, y)
    >>> clf.predict(centres)
    array([0, 1, 2])
    >>> clf.predict_proba(centres).sum(axis=1)
    array([1., 1., 1.])
    """

    def __init__(self, estimator=None):
        self.estimator = estimator

    def fit(self, X, y):
        """Fit one IVM per class against the rest (one IVM in all with two classes).

        Parameters
        ----------
        X : array or DataFrame of shape (n, D)
            Training inputs.
        y : array of shape (n,)
            Labels, at least two distinct values.

        Returns
        -------
        OneVsRestIVMClassifier
            self, fitted.

        Raises
        ------
        InputError
            If X or y is malformed, there are fewer than two classes, or a class has too few points.
        """
        names = feature_names_of(X)
        X = as_float_matrix(X, "X", min_rows=2)
        y = _labels(y, X.shape[0])
        classes = np.unique(y)
        if classes.size < 2:
            raise InputError(f"OneVsRestIVMClassifier needs at least 2 classes; y has {classes.size}")
        _check_class_counts(y, classes, "OneVsRestIVMClassifier")
        template = IVMClassifier() if self.estimator is None else self.estimator
        if not isinstance(template, IVMClassifier):
            raise InputError(f"estimator must be an IVMClassifier, got {type(template).__name__}")
        self.classes_ = classes
        self.n_features_in_ = X.shape[1]
        self._set_feature_names(names)
        if classes.size == 2:
            self.estimators_ = [clone(template).fit(X, y)]
        else:
            self.estimators_ = [clone(template).fit(X, (y == c).astype(np.int64)) for c in classes]
        return self

    def _check_fitted(self):
        _require_fitted(self, "estimators_")

    @fill(test_inputs=_TEST_INPUTS)
    def per_class_log_proba(self, X):
        """log P(y = +1 | x) of each class's own IVM, before normalisation (the paper's combination rule takes
        the largest).

        {test_inputs}

        Returns
        -------
        ndarray of shape (n, n_classes)
        """
        self._check_fitted()
        X = self._test_matrix(X)
        if len(self.estimators_) == 1:
            return self.estimators_[0].predict_log_proba(X)
        return np.column_stack([e.predict_log_proba(X)[:, 1] for e in self.estimators_])

    @fill(test_inputs=_TEST_INPUTS)
    def predict_log_proba(self, X):
        """The per-class log P(y = +1 | x), normalised so that the probabilities sum to one.

        {test_inputs}

        Returns
        -------
        ndarray of shape (n, n_classes)
        """
        lp = self.per_class_log_proba(X)
        top = lp.max(axis=1, keepdims=True)
        return lp - top - np.log(np.sum(np.exp(lp - top), axis=1, keepdims=True))

    @fill(test_inputs=_TEST_INPUTS)
    def predict_proba(self, X):
        """The per-class P(y = +1 | x), normalised to sum to one over the classes.

        {test_inputs}

        Returns
        -------
        ndarray of shape (n, n_classes)
        """
        return np.exp(self.predict_log_proba(X))

    @fill(test_inputs=_TEST_INPUTS)
    def decision_function(self, X):
        """Normalised log-probabilities; with two classes the single IVM's own decision function.

        {test_inputs}

        Returns
        -------
        ndarray of shape (n, n_classes), or (n,) with two classes
        """
        self._check_fitted()
        if len(self.estimators_) == 1:
            return self.estimators_[0].decision_function(self._test_matrix(X))
        return self.predict_log_proba(X)

    @fill(test_inputs=_TEST_INPUTS)
    def predict(self, X):
        """The class whose IVM gives the largest log P(y = +1 | x) (the paper's rule).

        {test_inputs}

        Returns
        -------
        ndarray of shape (n,)
            Labels from ``classes_``.
        """
        scores = self.per_class_log_proba(X)
        return self.classes_[np.argmax(scores, axis=1)]
