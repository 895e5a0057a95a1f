"""The log predictive density as a method of every regressor and as a scikit-learn scorer."""

import numpy as np
import pytest
from scipy.stats import norm
from sklearn.model_selection import GridSearchCV, cross_val_score

from sparsegp import ExactGPRegressor, InputError, SparseGPRegressor
from sparsegp.metrics import nlpd_scorer
from sparsegp.options import Joint

ESTIMATORS = {
    "exact": lambda: ExactGPRegressor(max_iter=20),
    "vfe": lambda: SparseGPRegressor(inducing=8, random_state=0, schedule=Joint(max_iter=20)),
    "sor": lambda: SparseGPRegressor(approximation="sor", inducing=8, random_state=0, schedule=Joint(max_iter=20)),
}


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(4)
    X = rng.uniform(-3, 3, size=(60, 2))
    y = np.sin(X[:, 0]) * np.cos(X[:, 1]) + 0.1 * rng.normal(size=60)
    return X[:40], y[:40], X[40:], y[40:]


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", list(ESTIMATORS))
@pytest.mark.slow
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
        SparseGPRegressor(random_state=0, schedule=Joint(max_iter=30)), {"inducing": [2, 12]}, cv=2, scoring=nlpd_scorer
    ).fit(X, y)
    assert grid.best_params_ == {"inducing": 12}  # two inducing inputs cannot follow sin(x1) cos(x2)
    scores = cross_val_score(ExactGPRegressor(max_iter=30), X, y, cv=2, scoring=nlpd_scorer)
    assert scores.shape == (2,) and np.all(np.isfinite(scores))


@pytest.mark.slow  # a grid search of whole fits
@pytest.mark.filterwarnings("ignore")
def test_grid_search_routes_the_known_noise_variances(data):
    """``noise_variance`` reaches each fold's fit through scikit-learn's metadata routing, split with the rows."""
    import sklearn
    from sklearn.exceptions import UnsetMetadataPassedError

    X, y, _, _ = data
    known = np.where(X[:, 0] > 0, 0.05, 0.001)
    seen = []

    class Recording(SparseGPRegressor):
        def fit(self, X, y, noise_variance=None):
            seen.append(None if noise_variance is None else np.asarray(noise_variance).copy())
            return super().fit(X, y, noise_variance=noise_variance)

    options = {"max_iter": 10, "random_state": 0, "inducing": 8}
    with sklearn.config_context(enable_metadata_routing=True):
        with pytest.raises(UnsetMetadataPassedError):
            GridSearchCV(SparseGPRegressor(**options), {"inducing": [4, 8]}, cv=2).fit(X, y, noise_variance=known)
        estimator = Recording(**options).set_fit_request(noise_variance=True)
        grid = GridSearchCV(estimator, {"inducing": [4, 8]}, cv=2, scoring=nlpd_scorer).fit(X, y, noise_variance=known)
    assert len(seen) == 5 and all(v is not None for v in seen)  # 2 settings x 2 folds, and the refit
    assert sorted(v.size for v in seen[:4]) == [20, 20, 20, 20] and np.array_equal(seen[-1], known)
    plain = SparseGPRegressor(**dict(options, inducing=grid.best_params_["inducing"])).fit(X, y, noise_variance=known)
    assert grid.best_estimator_.objective_ == plain.objective_
