"""Joint draws of the predictive distribution (sample_y) and draws of functions (sample_functions) against
predict(return_cov=True)."""

import numpy as np
import pytest

from sparsegp import ExactGPRegressor, InputError, SparseGPRegressor
from sparsegp.kernels import Periodic, SquaredExponential
from sparsegp.options import Joint

N_DRAWS = 20_000


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(5)
    X = rng.uniform(-3, 3, size=(50, 2))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.normal(size=50)
    models = {
        "exact": ExactGPRegressor(max_iter=30).fit(X, y),
        "vfe": SparseGPRegressor(inducing=6, random_state=0, schedule=Joint(max_iter=30)).fit(X, y),
        "sor": SparseGPRegressor(approximation="sor", inducing=6, random_state=0, schedule=Joint(max_iter=30)).fit(
            X, y
        ),
    }
    return models, X


def inputs_at(X):
    return np.vstack([X[:3], X[:1], np.random.default_rng(6).uniform(-4, 4, size=(6, 2))])  # X[0] twice


def assert_moments(draws, mean, cov):
    """Five Monte Carlo standard errors: of a mean, sd / sqrt(N); of a covariance entry of Gaussian draws,
    sqrt((C_ij^2 + C_ii C_jj) / N)."""
    n = draws.shape[1]
    sd = np.sqrt(np.diag(cov))
    assert np.all(np.abs(draws.mean(axis=1) - mean) <= 5 * sd / np.sqrt(n) + 1e-12)
    err = np.sqrt((cov**2 + np.outer(np.diag(cov), np.diag(cov))) / n)
    assert np.all(np.abs(np.cov(draws) - cov) <= 5 * err + 1e-12)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", ["exact", pytest.param("vfe", marks=pytest.mark.slow)])  # one algebra for both
@pytest.mark.parametrize("include_noise", [True, False])
@pytest.mark.slow
def test_the_draws_mean_and_covariance_are_the_predictive_within_monte_carlo_error(fitted, name, include_noise):
    models, X = fitted
    model = models[name]
    Xs = inputs_at(X)
    mean, cov = model.predict(Xs, return_cov=True, include_noise=include_noise)
    draws = model.sample_y(Xs, N_DRAWS, random_state=1, include_noise=include_noise)
    assert draws.shape == (Xs.shape[0], N_DRAWS)
    assert_moments(draws, mean, cov)
    if not include_noise:  # f at a repeated input is the same in every draw
        np.testing.assert_allclose(draws[0], draws[3], atol=1e-6 * np.sqrt(cov[0, 0]))


@pytest.mark.filterwarnings("ignore")
@pytest.mark.slow
def test_shapes_seeds_and_bad_options(fitted):
    models, X = fitted
    model = models["exact"]
    assert model.sample_y(X[:4]).shape == (4, 1)  # scikit-learn's default: one draw
    np.testing.assert_array_equal(model.sample_y(X[:4], 3), model.sample_y(X[:4], 3))  # seed 0 by default
    a = model.sample_y(X[:4], 3, random_state=np.random.default_rng(2))
    b = model.sample_y(X[:4], 3, random_state=np.random.RandomState(2))
    assert a.shape == b.shape == (4, 3) and not np.allclose(a, model.sample_y(X[:4], 3, random_state=3))
    with pytest.raises(InputError, match="n_samples must be >= 1"):
        model.sample_y(X[:4], 0)
    # function draws take scikit-learn's seeds too: the same RandomState seed, the same functions
    f, g = (model.sample_functions(2, random_state=np.random.RandomState(4), n_features=16) for _ in range(2))
    np.testing.assert_array_equal(f(X[:4]), g(X[:4]))
    with pytest.raises(InputError, match="n_samples must be an integer"):
        model.sample_y(X[:4], 2.5)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", ["exact", "vfe", "sor"])
@pytest.mark.slow
def test_function_draws_are_functions_with_the_posteriors_moments(fitted, name):
    models, X = fitted
    model = models[name]
    Xs = inputs_at(X)
    draws = model.sample_functions(8_000, random_state=2, n_features=64)  # features of its own for each draw
    values = draws(Xs)
    assert values.shape == (Xs.shape[0], 8_000) and draws.n_samples == 8_000
    np.testing.assert_array_equal(draws(Xs), values)  # the same function on every call
    np.testing.assert_allclose(draws(Xs[4:]), values[4:], rtol=1e-12)  # and with other inputs beside
    np.testing.assert_array_equal(values[0], values[3])
    mean, cov = model.predict(Xs, return_cov=True, include_noise=False)
    assert_moments(values, mean, cov)


@pytest.mark.filterwarnings("ignore")
def test_function_draws_refuse_what_has_no_function_form(fitted):
    models, X = fitted
    y = np.sin(X[:, 0])
    with pytest.raises(InputError, match="Periodic has no random-feature form"):
        ExactGPRegressor(Periodic(2.0), optimize=False).fit(X, y).sample_functions()
    with pytest.raises(InputError, match="Product has no random-feature form"):
        ExactGPRegressor(SquaredExponential(1.0) * SquaredExponential(2.0), optimize=False).fit(X, y).sample_functions()
    augmented = SparseGPRegressor(inducing=6, prediction="augmented", optimize=False, random_state=0).fit(X, y)
    with pytest.raises(InputError, match="prediction='augmented' has no such form"):
        augmented.sample_functions()
    with pytest.raises(InputError, match="n_features must be >= 1"):
        models["exact"].sample_functions(2, n_features=0)
