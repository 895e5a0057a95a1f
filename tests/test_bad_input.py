"""Bad input gets a clear error naming the problem, never a crash deep inside JAX."""

import numpy as np
import pytest

from sparsegp import ExactGPRegressor, InputError, NotFittedError
from sparsegp.kernels import SquaredExponential

# one xdist worker runs this module, so its module-scoped fixture is computed once
pytestmark = pytest.mark.xdist_group("bad-input")


@pytest.fixture(scope="module")
def fitted(toy_regression):
    X, y = toy_regression(30, 2)
    return ExactGPRegressor(max_iter=20).fit(X, y)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_X(toy_regression, bad):
    X, y = toy_regression(20, 2)
    X[3, 1] = bad
    with pytest.raises(InputError, match=r"X contains 1 non-finite value\(s\) \(first: (NaN|inf) at row 3, column 1\)"):
        ExactGPRegressor().fit(X, y)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_y(toy_regression, bad):
    X, y = toy_regression(20, 2)
    y[5] = bad
    with pytest.raises(InputError, match=r"y contains 1 non-finite value\(s\) .* index 5"):
        ExactGPRegressor().fit(X, y)


def test_mismatched_lengths(toy_regression):
    X, y = toy_regression(20, 2)
    with pytest.raises(InputError, match="y has 19 entries but X has 20 rows"):
        ExactGPRegressor().fit(X, y[:-1])


def test_one_dimensional_X(toy_regression):
    X, y = toy_regression(20, 1)
    with pytest.raises(InputError, match=r"X is 1-D .*Reshape"):
        ExactGPRegressor().fit(X[:, 0], y)


def test_empty_arrays():
    with pytest.raises(InputError, match="X has 0 sample"):
        ExactGPRegressor().fit(np.zeros((0, 2)), np.zeros(0))
    with pytest.raises(InputError, match=r"0 feature\(s\)"):
        ExactGPRegressor().fit(np.zeros((5, 0)), np.zeros(5))


def test_y_none_and_2d_y(toy_regression):
    X, y = toy_regression(20, 2)
    with pytest.raises(InputError, match="requires y to be passed"):
        ExactGPRegressor().fit(X, None)
    with pytest.raises(InputError, match=r"expected \(n,\) targets, or \(n, k\)"):
        ExactGPRegressor().fit(X, np.stack([np.column_stack([y, y])] * 2, axis=2))


def test_non_numeric_input():
    with pytest.raises(InputError, match="could not be converted"):
        ExactGPRegressor().fit(np.array([["a", "b"], ["c", "d"]]), [1.0, 2.0])


@pytest.mark.parametrize("noise", [0.0, -1.0, np.nan])
def test_non_positive_noise(toy_regression, noise):
    X, y = toy_regression(20, 2)
    with pytest.raises(InputError, match="noise must be"):
        ExactGPRegressor(noise=noise).fit(X, y)


def test_kernel_dimension_mismatch(toy_regression):
    X, y = toy_regression(20, 2)
    with pytest.raises(InputError, match="3 ARD length-scales but the inputs have 2"):
        ExactGPRegressor(SquaredExponential([1.0, 1.0, 1.0])).fit(X, y)


def test_wrong_kernel_type(toy_regression):
    X, y = toy_regression(20, 2)
    with pytest.raises(InputError, match="kernel must be a sparsegp.kernels.Kernel"):
        ExactGPRegressor(kernel="rbf").fit(X, y)


def test_predict_before_fit():
    with pytest.raises(NotFittedError, match="not fitted yet"):
        ExactGPRegressor().predict(np.zeros((2, 2)))


@pytest.mark.parametrize("method", ["predict", "predict_proba", "predict_log_proba", "decision_function"])
def test_the_classifier_says_it_is_not_fitted_before_any_prediction(method):
    from sparsegp import SparseGPClassifier

    with pytest.raises(NotFittedError, match="not fitted yet"):
        getattr(SparseGPClassifier(), method)(np.zeros((2, 2)))


def test_predict_wrong_features_and_nan(fitted):
    with pytest.raises(InputError, match="X has 3 features, but ExactGPRegressor is expecting 2 features"):
        fitted.predict(np.zeros((2, 3)))
    with pytest.raises(InputError, match="NaN"):
        fitted.predict(np.array([[0.0, np.nan]]))
    with pytest.raises(InputError, match="at most one of return_std and return_cov"):
        fitted.predict(np.zeros((2, 2)), return_std=True, return_cov=True)


def test_bad_integer_options(toy_regression):
    X, y = toy_regression(20, 2)
    with pytest.raises(InputError, match="n_restarts must be"):
        ExactGPRegressor(n_restarts=-1).fit(X, y)
    with pytest.raises(InputError, match="max_iter must be an integer"):
        ExactGPRegressor(max_iter=2.5).fit(X, y)
