"""Joint draws of the predictive distribution (sample_y) against predict(return_cov=True)."""

import numpy as np
import pytest

from sparsegp import ExactGPRegressor, InputError, SparseGPRegressor

N_DRAWS = 20_000


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(5)
    X = rng.uniform(-3, 3, size=(50, 2))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.normal(size=50)
    models = {
        "exact": ExactGPRegressor(max_iter=30).fit(X, y),
        "vfe": SparseGPRegressor(inducing=6, max_iter=30, random_state=0).fit(X, y),
    }
    return models, X


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", ["exact", "vfe"])
@pytest.mark.parametrize("include_noise", [True, False])
def test_the_draws_mean_and_covariance_are_the_predictive_within_monte_carlo_error(fitted, name, include_noise):
    models, X = fitted
    model = models[name]
    Xs = np.vstack([X[:3], X[:1], np.random.default_rng(6).uniform(-4, 4, size=(6, 2))])  # a repeated input
    mean, cov = model.predict(Xs, return_cov=True, include_noise=include_noise)
    draws = model.sample_y(Xs, N_DRAWS, random_state=1, include_noise=include_noise)
    assert draws.shape == (Xs.shape[0], N_DRAWS)
    # Five Monte Carlo standard errors: of a mean, sd / sqrt(N); of a covariance entry of Gaussian draws,
    # sqrt((C_ij^2 + C_ii C_jj) / N).
    sd = np.sqrt(np.diag(cov))
    assert np.all(np.abs(draws.mean(axis=1) - mean) <= 5 * sd / np.sqrt(N_DRAWS) + 1e-12)
    err = np.sqrt((cov**2 + np.outer(np.diag(cov), np.diag(cov))) / N_DRAWS)
    assert np.all(np.abs(np.cov(draws) - cov) <= 5 * err + 1e-12)
    if not include_noise:  # f at a repeated input is the same in every draw
        np.testing.assert_allclose(draws[0], draws[3], atol=1e-6 * sd[0])


@pytest.mark.filterwarnings("ignore")
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
    with pytest.raises(InputError, match="n_samples must be an integer"):
        model.sample_y(X[:4], 2.5)
