"""Evaluation metrics of the five papers (layer 9). NumPy in, float out.

Regression (Titsias 2009; Rasmussen & Williams 2006, sec. 2.5; Quiñonero-Candela
& Rasmussen 2005, sec. 6): SMSE, SNLP (= MSLL), MAE, MSE, NTL. Gaussians: KL
divergence, diagonal and full. Classification (Lawrence et al. 2003): error
rate, log loss, reject curve.
"""

from __future__ import annotations

import numpy as np

from ._config import LOG_2PI
from ._docstrings import fill
from .errors import InputError
from .validation import as_float_vector

__all__ = [
    "mse",
    "mae",
    "smse",
    "gaussian_nlpd",
    "ntl",
    "snlp",
    "nlpd_scorer",
    "kl_gaussian_diag",
    "kl_gaussian",
    "error_rate",
    "log_loss",
    "reject_curve",
    "expected_calibration_error",
    "brier_score",
]


# Sections several metrics share, written once (see _docstrings.fill).
_POINT_ERROR_SECTIONS = """
Parameters
----------
y_true, y_pred : array of shape (n,)
    Targets and predictions.

Returns
-------
float

Raises
------
InputError
    If the arrays are not finite vectors of one length.
"""
_DENSITY_PARAMETERS = """
y_true, mean : array of shape (n,)
    Targets and predictive means.
var : array of shape (n,)
    Predictive variances of y (the latent variance plus the noise), all positive.
"""


def _pair(y_true, y_pred, name="y_pred"):
    y_true = as_float_vector(y_true, "y_true")
    y_pred = as_float_vector(y_pred, name, n=y_true.shape[0])
    return y_true, y_pred


def _variance(var, n, name="var"):
    var = as_float_vector(var, name, n=n)
    if np.any(var <= 0):
        raise InputError(f"{name} must be strictly positive (predictive variances), min is {var.min():.3g}")
    return var


@fill(point_error_sections=_POINT_ERROR_SECTIONS)
def mse(y_true, y_pred) -> float:
    """Mean squared error, mean((y - y_pred)^2).

    {point_error_sections}

    Examples
    --------
    >>> from sparsegp import metrics
    >>> metrics.mse([1.0, 2.0, 3.0], [1.0, 2.0, 5.0])
    1.3333333333333333
    """
    y_true, y_pred = _pair(y_true, y_pred)
    return float(np.mean((y_true - y_pred) ** 2))


@fill(point_error_sections=_POINT_ERROR_SECTIONS)
def mae(y_true, y_pred) -> float:
    """Mean absolute error, mean(abs(y - y_pred)) (Quiñonero-Candela & Rasmussen 2005, sec. 6).

    {point_error_sections}

    Examples
    --------
    >>> from sparsegp import metrics
    >>> metrics.mae([1.0, 2.0, 3.0], [1.0, 2.0, 5.0])
    0.6666666666666666
    """
    y_true, y_pred = _pair(y_true, y_pred)
    return float(np.mean(np.abs(y_true - y_pred)))


def smse(y_true, y_pred) -> float:
    """Standardised mean squared error: mean((y - y_pred)^2) / var(y) (Titsias 2009; Rasmussen & Williams
    sec. 2.5). 1 is the error of predicting the test targets' own mean; smaller is better.

    Parameters
    ----------
    y_true, y_pred : array of shape (n,)
        Test targets and predictive means.

    Returns
    -------
    float

    Raises
    ------
    InputError
        If the arrays are not finite vectors of one length, or the test targets have no variance.

    Examples
    --------
    >>> from sparsegp import metrics
    >>> metrics.smse([0.0, 1.0, 2.0, 3.0], [1.5, 1.5, 1.5, 1.5])
    1.0
    """
    y_true, y_pred = _pair(y_true, y_pred)
    v = np.var(y_true)
    if v <= 0:
        raise InputError("smse needs test targets with non-zero variance")
    return float(np.mean((y_true - y_pred) ** 2) / v)


@fill(density_parameters=_DENSITY_PARAMETERS)
def gaussian_nlpd(y_true, mean, var) -> np.ndarray:
    """Negative log density of each target under its Gaussian predictive N(mean, var).

    Parameters
    ----------
    {density_parameters}

    Returns
    -------
    ndarray of shape (n,)
        0.5 (log 2 pi + log var + (y - mean)^2 / var) per point.

    Raises
    ------
    InputError
        If a variance is not positive or the lengths differ.

    Examples
    --------
    >>> from sparsegp import metrics
    >>> metrics.gaussian_nlpd([0.0, 1.0], [0.0, 0.0], [1.0, 1.0])
    array([0.9189, 1.4189])
    """
    y_true, mean = _pair(y_true, mean, "mean")
    var = _variance(var, y_true.shape[0])
    return 0.5 * (LOG_2PI + np.log(var) + (y_true - mean) ** 2 / var)


@fill(density_parameters=_DENSITY_PARAMETERS)
def ntl(y_true, mean, var) -> float:
    """Mean negative test log density, NTL (Quiñonero-Candela & Rasmussen 2005, sec. 6).

    Parameters
    ----------
    {density_parameters}

    Returns
    -------
    float
        The mean of :func:`gaussian_nlpd`; smaller is better.

    Raises
    ------
    InputError
        If a variance is not positive or the lengths differ.

    Examples
    --------
    >>> from sparsegp import metrics
    >>> round(metrics.ntl([0.0, 1.0], [0.0, 0.0], [1.0, 1.0]), 4)
    1.1689
    """
    return float(np.mean(gaussian_nlpd(y_true, mean, var)))


@fill(density_parameters=_DENSITY_PARAMETERS)
def snlp(y_true, mean, var, y_train) -> float:
    """Standardised negative log probability, SNLP (Titsias 2009; MSLL in Rasmussen & Williams sec. 2.5):
    :func:`ntl` minus that of the trivial Gaussian N(mean(y_train), var(y_train)).

    Negative is better than the trivial model; a model whose error bars are too narrow can score above 0
    even with a good mean.

    Parameters
    ----------
    {density_parameters}
    y_train : array
        The training targets, which define the trivial model.

    Returns
    -------
    float

    Raises
    ------
    InputError
        If a variance is not positive, the lengths differ, or the training targets have no variance.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsegp import metrics
    >>> y_train = np.array([-1.0, 1.0]); y_test = np.array([0.5, -0.5])
    >>> round(metrics.snlp(y_test, 0.9 * y_test, np.full(2, 0.1), y_train), 3)
    -1.264
    """
    y_train = as_float_vector(y_train, "y_train")
    y_true = as_float_vector(y_true, "y_true")
    v0 = np.var(y_train)
    if v0 <= 0:
        raise InputError("snlp needs training targets with non-zero variance")
    trivial = gaussian_nlpd(y_true, np.full_like(y_true, np.mean(y_train)), np.full_like(y_true, v0))
    return float(np.mean(gaussian_nlpd(y_true, mean, var) - trivial))


def nlpd_scorer(estimator, X, y) -> float:
    """A scikit-learn scorer: the negative NLPD, the mean log predictive density of y at X (greater is better).

    Pass it as ``scoring=`` to ``GridSearchCV``, ``cross_val_score`` and the like, as scikit-learn's
    ``neg_log_loss`` for classifiers: it calls the regressor's ``log_predictive_density(X, y)``, so it scores
    the error bars as well as the mean (a regressor's ``score`` is R^2, which ignores them).

    Parameters
    ----------
    estimator : fitted regressor
        A sparsegp regressor (any estimator with ``log_predictive_density(X, y)``).
    X : array-like of shape (n, D)
        Test inputs.
    y : array-like of shape (n,)
        Their targets.

    Returns
    -------
    float
        Nats per row; the negative of :func:`ntl` of the estimator's predictions.

    Raises
    ------
    InputError
        If the estimator has no predictive density.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.model_selection import cross_val_score
    >>> from sparsegp import ExactGPRegressor
    >>> from sparsegp.metrics import nlpd_scorer
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-3, 3, size=(60, 1)); y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=60)
    >>> scores = cross_val_score(ExactGPRegressor(max_iter=50), X, y, cv=2, scoring=nlpd_scorer)
    >>> bool(np.all(scores > 0.5))  # about 0.9 nats per row: sd 0.1 noise, well predicted
    True
    """
    score = getattr(estimator, "log_predictive_density", None)
    if score is None:
        raise InputError(f"nlpd_scorer needs a regressor with log_predictive_density; got {type(estimator).__name__}")
    return float(score(X, y))


def kl_gaussian_diag(mean_p, var_p, mean_q, var_q) -> float:
    """KL(N(mean_p, diag var_p) || N(mean_q, diag var_q)) between Gaussians with diagonal covariances.

    Parameters
    ----------
    mean_p, var_p : array of shape (n,)
        The first Gaussian's mean and (positive) variances.
    mean_q, var_q : array of shape (n,)
        The second's.

    Returns
    -------
    float
        In nats; 0 when the two are equal.

    Raises
    ------
    InputError
        If a variance is not positive or the lengths differ.

    Examples
    --------
    >>> from sparsegp import metrics
    >>> round(metrics.kl_gaussian_diag([0.0], [1.0], [1.0], [1.0]), 6)
    0.5
    """
    mean_p = as_float_vector(mean_p, "mean_p")
    n = mean_p.shape[0]
    mean_q = as_float_vector(mean_q, "mean_q", n=n)
    var_p, var_q = _variance(var_p, n, "var_p"), _variance(var_q, n, "var_q")
    return float(0.5 * np.sum(np.log(var_q / var_p) + (var_p + (mean_p - mean_q) ** 2) / var_q - 1.0))


def kl_gaussian(mean_p, cov_p, mean_q, cov_q) -> float:
    """KL(N(mean_p, cov_p) || N(mean_q, cov_q)) for full covariances, through their Cholesky factors (Titsias
    2009 compares sparse and exact posteriors this way).

    Parameters
    ----------
    mean_p, mean_q : array of shape (n,)
        The two means.
    cov_p, cov_q : array of shape (n, n)
        The two covariances, positive definite.

    Returns
    -------
    float
        In nats.

    Raises
    ------
    InputError
        If the shapes disagree or a covariance is not positive definite.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsegp import metrics
    >>> round(metrics.kl_gaussian(np.zeros(2), np.eye(2), np.zeros(2), 2 * np.eye(2)), 4)
    0.1931
    """
    mean_p = as_float_vector(mean_p, "mean_p")
    n = mean_p.shape[0]
    mean_q = as_float_vector(mean_q, "mean_q", n=n)
    cov_p, cov_q = np.asarray(cov_p, dtype=float), np.asarray(cov_q, dtype=float)
    if cov_p.shape != (n, n) or cov_q.shape != (n, n):
        raise InputError(f"covariances must have shape ({n}, {n}), got {cov_p.shape} and {cov_q.shape}")
    try:
        Lp = np.linalg.cholesky(cov_p)
        Lq = np.linalg.cholesky(cov_q)
    except np.linalg.LinAlgError:
        raise InputError("kl_gaussian: a covariance is not positive definite") from None
    import scipy.linalg as sl

    A = sl.solve_triangular(Lq, Lp, lower=True)
    b = sl.solve_triangular(Lq, mean_q - mean_p, lower=True)
    logdet = 2.0 * (np.sum(np.log(np.diag(Lq))) - np.sum(np.log(np.diag(Lp))))
    return float(0.5 * (np.sum(A * A) + b @ b - n + logdet))


def error_rate(y_true, y_pred) -> float:
    """Fraction of wrong labels.

    Parameters
    ----------
    y_true, y_pred : array of shape (n,)
        Labels of any type that compares with ``!=``.

    Returns
    -------
    float

    Raises
    ------
    InputError
        If the arrays are empty, not 1-D or of different lengths.

    Examples
    --------
    >>> from sparsegp import metrics
    >>> metrics.error_rate([1, -1, 1, 1], [1, 1, 1, 1])
    0.25
    """
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    if y_true.shape != y_pred.shape or y_true.ndim != 1 or y_true.size == 0:
        raise InputError(
            f"error_rate needs two non-empty 1-D label arrays of equal length, got {y_true.shape}, {y_pred.shape}"
        )
    return float(np.mean(y_true != y_pred))


def log_loss(y_true, p_positive, eps: float = 1e-15) -> float:
    """Mean negative log probability of binary labels given P(y = +1).

    Parameters
    ----------
    y_true : array of shape (n,)
        Labels in {-1, +1} or {0, 1}.
    p_positive : array of shape (n,)
        P(y = +1) for each point, in [0, 1].
    eps : float
        Probabilities are clipped to [eps, 1 - eps].

    Returns
    -------
    float
        In nats per point.

    Raises
    ------
    InputError
        If a probability lies outside [0, 1] or the lengths differ.

    Examples
    --------
    >>> from sparsegp import metrics
    >>> round(metrics.log_loss([1, -1], [0.9, 0.2]), 4)
    0.1643
    """
    y = as_float_vector(y_true, "y_true")
    p = as_float_vector(p_positive, "p_positive", n=y.shape[0])
    if np.any((p < 0) | (p > 1)):
        raise InputError("p_positive must lie in [0, 1]")
    pos = y > 0
    p = np.clip(p, eps, 1 - eps)
    return float(-np.mean(np.where(pos, np.log(p), np.log1p(-p))))


def reject_curve(y_true, y_pred, confidence, fractions=None):
    """Error rate on the points kept after rejecting the least confident fraction (Lawrence, Seeger &
    Herbrich 2003, Fig. 1).

    Parameters
    ----------
    y_true, y_pred : array of shape (n,)
        Labels and predicted labels.
    confidence : array of shape (n,)
        How sure each prediction is (for example the winning class's log probability); larger is surer.
    fractions : array or None
        Rejected fractions in [0, 1); None means 0, 0.05, ..., 0.9. For each fraction r the ceil(r n)
        least confident points are dropped.

    Returns
    -------
    fractions : ndarray
        The rejected fractions.
    error_rates : ndarray
        The error rate on the points kept at each.

    Raises
    ------
    InputError
        If the shapes disagree or a fraction lies outside [0, 1).

    Examples
    --------
    >>> from sparsegp import metrics
    >>> fractions, rates = metrics.reject_curve([1, 1, -1, -1], [1, -1, -1, -1], [0.9, 0.1, 0.8, 0.7],
    ...                                         fractions=[0.0, 0.25])
    >>> rates
    array([0.25, 0.  ])
    """
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    conf = as_float_vector(confidence, "confidence", n=y_true.shape[0])
    if y_pred.shape != y_true.shape:
        raise InputError("y_true and y_pred must have the same shape")
    fractions = np.linspace(0.0, 0.9, 19) if fractions is None else np.asarray(fractions, dtype=float)
    if np.any((fractions < 0) | (fractions >= 1)):
        raise InputError("rejected fractions must lie in [0, 1)")
    order = np.argsort(-conf, kind="stable")  # most confident first
    wrong = (y_true != y_pred)[order]
    n = y_true.shape[0]
    rates = []
    for r in fractions:
        keep = n - int(np.ceil(r * n))
        rates.append(float(np.mean(wrong[:keep])) if keep > 0 else 0.0)
    return fractions, np.asarray(rates)


# The inputs and errors of the class-probability metrics, written once (see _docstrings.fill).
_CLASS_PROBABILITIES = """
Parameters
----------
codes : array of shape (n,)
    The true classes as column indices of ``proba``.
proba : array of shape (n, C)
    Predicted class probabilities.
"""
_PROBABILITY_ERRORS = """
Raises
------
InputError
    If the shapes disagree or a probability lies outside [0, 1].
"""


def _class_probabilities(codes, proba):
    codes = np.asarray(codes)
    p = np.asarray(proba, dtype=np.float64)
    if p.ndim != 2 or codes.ndim != 1 or p.shape[0] != codes.shape[0] or p.shape[0] == 0:
        raise InputError(f"expected class codes (n,) and probabilities (n, C), got {codes.shape} and {p.shape}")
    if codes.dtype.kind not in "iu" or np.any(codes < 0) or np.any(codes >= p.shape[1]):
        raise InputError("class codes must be integers in 0 .. C-1 (the columns of the probabilities)")
    if not np.all(np.isfinite(p)) or np.any(p < 0) or np.any(p > 1):
        raise InputError("probabilities must be finite and lie in [0, 1]")
    return codes, p


@fill(class_probabilities=_CLASS_PROBABILITIES, probability_errors=_PROBABILITY_ERRORS)
def expected_calibration_error(codes, proba, bins: int = 15) -> float:
    """Expected calibration error of the top class: over equal-width bins of the top probability, the sum of
    (rows in the bin / n) times the absolute difference between the bin's accuracy and its mean top probability
    (Guo et al. 2017, eq. 3).

    {class_probabilities}
    bins : int
        Equal-width bins over [0, 1].

    Returns
    -------
    float
        In [0, 1]; 0 for perfectly calibrated probabilities.

    {probability_errors}

    Examples
    --------
    >>> from sparsegp import metrics
    >>> round(metrics.expected_calibration_error([1, 0, 1, 1], [[0.2, 0.8], [0.7, 0.3], [0.1, 0.9], [0.6, 0.4]]), 4)
    0.3
    """
    codes, p = _class_probabilities(codes, proba)
    top = p.max(axis=1)
    right = (p.argmax(axis=1) == codes).astype(float)
    which = np.minimum((top * bins).astype(int), bins - 1)
    total = 0.0
    for b in range(bins):
        sel = which == b
        if np.any(sel):
            total += np.sum(sel) / codes.size * abs(np.mean(right[sel]) - np.mean(top[sel]))
    return float(total)


@fill(class_probabilities=_CLASS_PROBABILITIES, probability_errors=_PROBABILITY_ERRORS)
def brier_score(codes, proba) -> float:
    """Mean over rows of sum_c (p_c - [y = c])^2 (Brier 1950; for two classes, twice scikit-learn's
    ``brier_score_loss``).

    {class_probabilities}

    Returns
    -------
    float

    {probability_errors}

    Examples
    --------
    >>> from sparsegp import metrics
    >>> round(metrics.brier_score([1, 0], [[0.2, 0.8], [0.7, 0.3]]), 4)
    0.13
    """
    codes, p = _class_probabilities(codes, proba)
    onehot = np.zeros_like(p)
    onehot[np.arange(codes.size), codes] = 1.0
    return float(np.mean(np.sum((p - onehot) ** 2, axis=1)))
