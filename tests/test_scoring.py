"""The log predictive density as a method of every regressor and as a scikit-learn scorer."""

import numpy as np
import pytest
from scipy.stats import norm
from sklearn.model_selection import GridSearchCV, cross_val_score

from sparsegp import ExactGPRegressor, InputError, SparseGPRegressor
from sparsegp.metrics import nlpd_scorer

ESTIMATORS = {
    "exact": lambda: ExactGPRegressor(max_iter=20),
    "vfe": lambda: SparseGPRegressor(inducing=8, max_iter=20, random_state=0),
    "sor": lambda: SparseGPRegressor(approximation="sor", inducing=8, max_iter=20, random_state=0),
}


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(4)
    X = rng.uniform(-3, 3, size=(60, 2))
    y = np.sin(X[:, 0]) * np.cos(X[:, 1]) + 0.1 * rng.normal(size=60)
    return X[:40], y[:40], X[40:], y[40:]


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_the_density_is_the_mean_log_normal_density_of_the_predictions(name, data):
    X, y, Xt, yt = data
    model = ESTIMATORS[name]().fit(X, y)
    for include_noise in (True, False):
        mean, std = model.predict(Xt, return_std=True, include_noise=include_noise)
        expected = np.mean(norm.logpdf(yt, mean, std))  # scipy's density, an independent reference
        assert model.log_predictive_density(Xt, yt, include_noise=include_noise) == pytest.approx(expected, rel=1e-12)
    assert nlpd_scorer(model, Xt, yt) == model.log_predictive_density(Xt, yt)
    assert model.score(Xt, yt) == pytest.approx(1 - np.mean((yt - model.predict(Xt)) ** 2) / np.var(yt))  # R^2 kept


@pytest.mark.filterwarnings("ignore")
def test_bad_targets_and_estimators_without_a_density_are_named(data):
    X, y, Xt, yt = data
    model = ExactGPRegressor(max_iter=5).fit(X, y)
    with pytest.raises(InputError, match="y"):
        model.log_predictive_density(Xt, yt[:-1])
    with pytest.raises(InputError, match="y"):
        model.log_predictive_density(Xt, np.where(np.arange(yt.size) == 3, np.nan, yt))
    with pytest.raises(InputError, match="log_predictive_density"):
        nlpd_scorer(object(), Xt, yt)


@pytest.mark.slow  # a grid search of whole fits
@pytest.mark.filterwarnings("ignore")
def test_grid_search_and_cross_validation_rank_by_the_density(data):
    X, y, Xt, yt = data
    grid = GridSearchCV(
        SparseGPRegressor(max_iter=30, random_state=0), {"inducing": [2, 12]}, cv=2, scoring=nlpd_scorer
    ).fit(X, y)
    assert grid.best_params_ == {"inducing": 12}  # two inducing inputs cannot follow sin(x1) cos(x2)
    scores = cross_val_score(ExactGPRegressor(max_iter=30), X, y, cv=2, scoring=nlpd_scorer)
    assert scores.shape == (2,) and np.all(np.isfinite(scores))
