import jax
import jax.numpy as jnp
import numpy as np
import pytest
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF as SkRBF
from sklearn.gaussian_process.kernels import ConstantKernel, WhiteKernel
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sparsegp import ExactGPRegressor
from sparsegp.approximations.exact_gp import exact_log_marginal
from sparsegp.kernels import SquaredExponential
from sparsegp.priors import Gamma, LogNormal


def sk_model(ell, amp, noise, X, y):
    kern = ConstantKernel(amp, "fixed") * SkRBF(ell, "fixed") + WhiteKernel(noise, "fixed")
    return GaussianProcessRegressor(kern, alpha=0.0, optimizer=None, normalize_y=False).fit(X, y)


def test_log_marginal_likelihood_matches_sklearn_to_1e8(toy_regression, rng):
    X, y = toy_regression(60, 3)
    ell, amp, noise = np.array([0.7, 1.3, 2.1]), 1.8, 0.05
    sk = sk_model(ell, amp, noise, X, y)
    ours = float(exact_log_marginal(SquaredExponential(ell, amp), noise, jnp.asarray(X), jnp.asarray(y)))
    assert ours == pytest.approx(sk.log_marginal_likelihood_value_, rel=1e-8)


def test_predictions_match_sklearn_to_1e8(toy_regression, rng):
    X, y = toy_regression(60, 3)
    Xs = rng.normal(size=(25, 3))
    ell, amp, noise = np.array([0.7, 1.3, 2.1]), 1.8, 0.05
    sk = sk_model(ell, amp, noise, X, y)
    sk_mean, sk_std = sk.predict(Xs, return_std=True)  # sklearn's std includes the WhiteKernel noise
    _, sk_cov = sk.predict(Xs, return_cov=True)
    m = ExactGPRegressor(SquaredExponential(ell, amp), noise=noise, optimize=False, normalize_y=False).fit(X, y)
    mean, std = m.predict(Xs, return_std=True)  # the default is the predictive of y, as sklearn's
    np.testing.assert_allclose(mean, sk_mean, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(std, sk_std, rtol=1e-8)
    _, cov = m.predict(Xs, return_cov=True)
    np.testing.assert_allclose(cov, sk_cov, rtol=1e-8, atol=1e-10)
    assert m.log_marginal_likelihood_ == pytest.approx(sk.log_marginal_likelihood_value_, rel=1e-8)


@pytest.mark.slow
def test_fitted_hyperparameters_match_sklearn_optimum(toy_regression):
    X, y = toy_regression(80, 2, seed=3)
    kern = ConstantKernel(1.0, (1e-5, 1e5)) * SkRBF([1.0, 1.0], (1e-5, 1e5)) + WhiteKernel(1.0, (1e-6, 1e5))
    sk = GaussianProcessRegressor(kern, alpha=0.0, normalize_y=False, n_restarts_optimizer=3, random_state=0).fit(X, y)
    m = ExactGPRegressor(normalize_y=False, n_restarts=3, random_state=0).fit(X, y)
    assert m.log_marginal_likelihood_ == pytest.approx(sk.log_marginal_likelihood_value_, abs=1e-4)
    assert m.log_marginal_likelihood_ >= sk.log_marginal_likelihood_value_ - 1e-4


def test_neg_log_marginal_gradient_matches_finite_differences(toy_regression, rng):
    X, y = toy_regression(30, 2)
    params = {"kernel": SquaredExponential([0.8, 1.5], 1.2, bias=0.3), "log_noise": jnp.log(0.1)}
    from jax.flatten_util import ravel_pytree

    theta, unravel = ravel_pytree(params)

    def f(t):
        p = unravel(t)
        return -exact_log_marginal(p["kernel"], jnp.exp(p["log_noise"]), jnp.asarray(X), jnp.asarray(y))

    g = np.asarray(jax.grad(f)(theta))
    h = 1e-5
    fd = np.array([(f(theta.at[i].add(h)) - f(theta.at[i].add(-h))) / (2 * h) for i in range(theta.size)])
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)


def test_fit_improves_objective_and_reports(toy_regression, rng):
    X, y = toy_regression(50, 2)
    m = ExactGPRegressor(max_iter=200).fit(X, y)
    rep = m.optimizer_report_
    assert rep.n_iter > 0 and len(rep.history) == rep.n_iter
    assert rep.history[-1] <= rep.history[0]
    assert rep.reason
    assert m.score(X, y) > 0.9
    mean, std = m.predict(X, return_std=True, include_noise=False)
    assert np.all(std > 0)


def test_callback_can_stop_early(toy_regression):
    X, y = toy_regression(40, 2)
    seen = []

    def cb(it, value, params):
        seen.append(value)
        return it >= 3

    m = ExactGPRegressor(callback=cb).fit(X, y)
    assert len(seen) == 3 and m.optimizer_report_.n_iter == 3


def test_hyperpriors_pull_the_map_estimate(toy_regression):
    X, y = toy_regression(30, 1, seed=1)
    strong = LogNormal(np.log(5.0), 0.01)
    k = SquaredExponential(1.0, 1.0, priors={"lengthscale": strong})
    m = ExactGPRegressor(k, noise_prior=Gamma(2.0, 20.0)).fit(X, y)
    assert float(m.kernel_.lengthscale) == pytest.approx(5.0, rel=0.05)


def test_fixed_hyperparameter_stays_put(toy_regression):
    X, y = toy_regression(30, 2)
    k = SquaredExponential([1.0, 1.0], 1.0, bias=0.1, fixed=("bias",))
    m = ExactGPRegressor(k).fit(X, y)
    assert float(m.kernel_.bias) == pytest.approx(0.1, rel=1e-12)
    assert not np.allclose(m.kernel_.parameters()["lengthscale"], 1.0)


def test_restarts_keep_the_best_start(toy_regression):
    X, y = toy_regression(40, 2)
    m = ExactGPRegressor(n_restarts=2, random_state=1).fit(X, y)
    rep = m.optimizer_report_
    assert len(rep.starts) == 3
    assert rep.objective == pytest.approx(min(rep.starts))


@pytest.mark.slow  # a grid search of whole fits, like scikit-learn's estimator checks
def test_pipeline_and_grid_search(toy_regression):
    X, y = toy_regression(40, 2)
    pipe = make_pipeline(StandardScaler(), ExactGPRegressor(max_iter=50))
    pipe.fit(X, y)
    assert pipe.score(X, y) > 0.8
    gs = GridSearchCV(ExactGPRegressor(max_iter=30), {"noise": [0.01, 1.0]}, cv=2).fit(X, y)
    # the search's scores are those of independently cloned and fitted estimators with each setting
    for noise, score in zip(gs.cv_results_["param_noise"], gs.cv_results_["mean_test_score"]):
        assert cross_val_score(ExactGPRegressor(max_iter=30, noise=noise), X, y, cv=2).mean() == pytest.approx(
            score, rel=1e-9
        )
    assert gs.best_estimator_.noise == gs.best_params_["noise"]


def test_full_cov_diag_equals_variance(toy_regression, rng):
    X, y = toy_regression(30, 2)
    m = ExactGPRegressor(max_iter=20).fit(X, y)
    Xs = rng.normal(size=(8, 2))
    _, std = m.predict(Xs, return_std=True, include_noise=False)
    _, cov = m.predict(Xs, return_cov=True, include_noise=False)
    np.testing.assert_allclose(np.sqrt(np.diag(cov)), std, rtol=1e-10)
