"""scikit-learn's Gaussian-process classification tests (``sklearn/gaussian_process/tests/test_gpc.py``, 1.9.1), ported
to :class:`SparseGPClassifier` and :class:`IVMClassifier` (and, for several classes, :class:`OneVsRestIVMClassifier`)
with scikit-learn's data, assertions and tolerances.

Kernels are translated as in ``test_sklearn_gpr_conformance.py``: ``RBF`` is a squared exponential with its variance
fixed at 1, ``ConstantKernel * RBF`` one with a free variance; the kernel that differs only by its bounds is the
plain ``RBF``. Where scikit-learn compares the Laplace log marginal likelihood at two kernels, the port compares
each classifier's own objective (SparseGPClassifier's bound ``bound_``, the IVM's approximate evidence
``log_marginal_likelihood_``). Each test scikit-learn has that does not apply is listed at the end with its reason.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest
from sklearn.gaussian_process.kernels import RBF
from sklearn.utils._testing import assert_almost_equal, assert_array_equal

from sparsegp import InputError, IVMClassifier, OneVsRestIVMClassifier, SparseGPClassifier
from sparsegp.kernels import SquaredExponential

pytestmark = pytest.mark.slow


def f(x):
    return np.sin(x)


X = np.atleast_2d(np.linspace(0, 10, 30)).T
X2 = np.atleast_2d([2.0, 4.0, 5.5, 6.5, 7.5]).T
y = np.array(f(X).ravel() > 0, dtype=int)
fX = f(X).ravel()
y_mc = np.empty(y.shape, dtype=int)  # multi-class
y_mc[fX < -0.35] = 0
y_mc[(fX >= -0.35) & (fX < 0.35)] = 1
y_mc[fX > 0.35] = 2

KERNELS = {
    "RBF(0.1)": lambda: SquaredExponential(0.1, 1.0, fixed=("variance",)),
    "RBF fixed": lambda: SquaredExponential(1.0, 1.0, fixed=("lengthscale", "variance")),
    "RBF(1)": lambda: SquaredExponential(1.0, 1.0, fixed=("variance",)),
    "C*RBF": lambda: SquaredExponential(1.0, 1.0),
}
NON_FIXED = [k for k in KERNELS if k != "RBF fixed"]
BINARY = ["svgp", "ivm"]


def make(estimator: str, kernel, **options):
    """scikit-learn's ``GaussianProcessClassifier(kernel=kernel)``: the sparse variational classifier, or the IVM
    (one against the rest for several classes) with that kernel."""
    if estimator == "svgp":
        return SparseGPClassifier(kernel, random_state=0, **options)
    if estimator == "ivm":
        return IVMClassifier(kernel, random_state=0, **options)
    return OneVsRestIVMClassifier(IVMClassifier(kernel, random_state=0, **options))


def quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


@functools.cache
def fitted(estimator: str, kernel: str, labels: str = "binary"):
    target = y if labels == "binary" else y_mc
    return quiet(lambda: make(estimator, KERNELS[kernel]()).fit(X, target))


@pytest.mark.parametrize("estimator", BINARY)
@pytest.mark.parametrize("kernel", KERNELS)
def test_predict_consistent(estimator, kernel):
    gpc = fitted(estimator, kernel)
    assert_array_equal(gpc.predict(X), gpc.predict_proba(X)[:, 1] >= 0.5)


@pytest.mark.parametrize("estimator", BINARY)
@pytest.mark.parametrize("kernel", NON_FIXED)
def test_lml_improving(estimator, kernel):
    """Learning the kernel improves the objective: the sparse classifier's bound (q(u) fitted in both), or the IVM's
    approximate evidence (learn_kernel="evidence"), with the kernel learnt against with it held at its start."""
    if estimator == "svgp":
        learnt = fitted("svgp", kernel)
        held = quiet(lambda: make("svgp", KERNELS[kernel](), optimize=False).fit(X, y))
        assert learnt.bound_ > held.bound_
        return
    learnt = quiet(lambda: make("ivm", KERNELS[kernel](), learn_kernel="evidence").fit(X, y))
    held = quiet(lambda: make("ivm", KERNELS[kernel](), learn_kernel=False).fit(X, y))
    assert learnt.log_marginal_likelihood_ > held.log_marginal_likelihood_


@pytest.mark.parametrize("estimator", ["svgp", "one-vs-rest ivm"])
@pytest.mark.parametrize("kernel", KERNELS)
def test_multi_class(estimator, kernel):
    gpc = fitted(estimator, kernel, "multiclass")
    y_prob = gpc.predict_proba(X2)
    assert_almost_equal(y_prob.sum(1), 1)
    y_pred = gpc.predict(X2)
    assert_array_equal(np.argmax(y_prob, 1), y_pred)


@pytest.mark.parametrize("estimator", BINARY)
def test_gpc_fit_error(estimator):
    """A kernel the estimator cannot use is refused at fit with an error that names it (scikit-learn's
    CompoundKernel; here a scikit-learn kernel, which is not a sparsegp kernel)."""
    gpc = make(estimator, RBF())
    with pytest.raises(InputError, match="kernel must be a sparsegp.kernels.Kernel"):
        gpc.fit(X, y)


@pytest.mark.parametrize("estimator", BINARY)
@pytest.mark.parametrize("kernel", KERNELS)
def test_gpc_latent_mean_and_variance_shape(estimator, kernel):
    gpc = fitted(estimator, kernel)
    latent_mean, latent_variance = gpc.predict_latent(X)
    assert latent_mean.shape == (X.shape[0],)
    assert latent_variance.shape == (X.shape[0],)


NOT_APPLICABLE = {
    "test_predict_consistent_structured": "sparsegp's kernels act on numeric inputs (X is validated as a float matrix)",
    "test_latent_mean_and_variance_works_on_structured_kernels": "as test_predict_consistent_structured",
    "test_lml_precomputed": "the classifiers have no log_marginal_likelihood(theta): their objective at the fit is "
    "bound_ (SparseGPClassifier) or log_marginal_likelihood_ (the IVM)",
    "test_lml_without_cloning_kernel": "as test_lml_precomputed",
    "test_converged_to_local_maximum": "as test_lml_precomputed (no gradient at a given theta to inspect)",
    "test_lml_gradient": "as test_lml_precomputed",
    "test_random_starts": "the classifiers' fits have no restarts (n_restarts is a regressor's option)",
    "test_custom_optimizer": "the fit's optimiser is its own L-BFGS-B (no optimizer parameter)",
    "test_multi_class_n_jobs": "there is no n_jobs parameter: one process fits every class",
    "test_warning_bounds": "kernel parameters have no user-set bounds, and a classifier has no noise bound",
    "test_gpc_latent_mean_and_variance_complain_on_more_than_2_classes": "SparseGPClassifier's predict_latent returns "
    "one latent per class for several classes (by design), and IVMClassifier takes two classes only",
}


@pytest.mark.parametrize("name", sorted(NOT_APPLICABLE))
def test_not_applicable(name):
    pytest.skip(f"scikit-learn's {name}: {NOT_APPLICABLE[name]}")
