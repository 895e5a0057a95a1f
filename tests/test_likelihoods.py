"""The likelihood objects of regression beyond Gaussian noise, each against a dense numerical reference, and the
regressor that fits them (:mod:`sparsegp.estimators.sparse_variational`)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.flatten_util import ravel_pytree
from scipy import integrate, stats

from sparsegp import InputError, SparseGPRegressor, load_model
from sparsegp.classification import svgp
from sparsegp.kernels import SquaredExponential
from sparsegp.likelihoods import (
    LIKELIHOODS,
    Bernoulli,
    Gaussian,
    Poisson,
    RobustMax,
    Softmax,
    StudentT,
    likelihood_from_dict,
    regression_named,
)

# (mu, var, y): a latent marginal and a target, from narrow to wide against the likelihood's own spread
CASES = [(0.3, 0.01, 0.5), (-1.0, 0.5, 0.2), (0.7, 0.3, 1.4), (0.0, 0.04, -0.35)]


def _dense_expectation(g, mu, var):
    """E[g(F)] for F ~ N(mu, var) by adaptive quadrature over +-12 sd."""
    sd = np.sqrt(var)
    return integrate.quad(lambda f: g(f) * stats.norm.pdf(f, mu, sd), mu - 12 * sd, mu + 12 * sd, limit=200)[0]


def _t_logpdf(f, y, df, scale):
    return stats.t.logpdf((y - f) / scale, df) - np.log(scale)


@pytest.mark.parametrize("mu, var, y", CASES)
def test_student_t_expected_and_predictive_density_against_dense_quadrature(mu, var, y):
    lik = StudentT(df=3.5, scale=0.3)
    m, v, t = jnp.array([[mu]]), jnp.array([[var]]), jnp.array([y])
    expected = _dense_expectation(lambda f: _t_logpdf(f, y, 3.5, 0.3), mu, var)
    assert float(lik.expected_log_density(m, v, t)[0]) == pytest.approx(expected, rel=1e-5, abs=1e-5)
    predictive = np.log(_dense_expectation(lambda f: np.exp(_t_logpdf(f, y, 3.5, 0.3)), mu, var))
    assert float(lik.log_predictive_density(m, v, t)[0]) == pytest.approx(predictive, rel=1e-6, abs=1e-6)


@pytest.mark.parametrize("mu, var, count", [(0.3, 0.01, 1.0), (-1.0, 0.5, 0.0), (1.2, 0.8, 7.0), (2.0, 0.05, 4.0)])
def test_poisson_expected_and_predictive_density_against_dense_quadrature(mu, var, count):
    lik = Poisson()
    m, v, y = jnp.array([[mu]]), jnp.array([[var]]), jnp.array([count])
    expected = _dense_expectation(lambda f: stats.poisson.logpmf(count, np.exp(f)), mu, var)
    assert float(lik.expected_log_density(m, v, y)[0]) == pytest.approx(expected, rel=1e-9, abs=1e-10)
    predictive = np.log(_dense_expectation(lambda f: stats.poisson.pmf(count, np.exp(f)), mu, var))
    assert float(lik.log_predictive_density(m, v, y)[0]) == pytest.approx(predictive, rel=1e-5, abs=1e-6)
    mean, variance = (float(a[0]) for a in lik.predict_mean_and_var(m, v))
    second = _dense_expectation(lambda f: np.exp(f) + np.exp(2 * f), mu, var)  # E[y^2] = E[lambda + lambda^2]
    assert mean == pytest.approx(_dense_expectation(np.exp, mu, var), rel=1e-8)
    assert variance == pytest.approx(second - mean**2, rel=1e-7)


def test_gaussian_closed_forms_against_dense_quadrature():
    lik = Gaussian(0.2)
    for mu, var, y in CASES:
        m, v, t = jnp.array([[mu]]), jnp.array([[var]]), jnp.array([y])
        ref = _dense_expectation(lambda f, y=y: stats.norm.logpdf(y, f, np.sqrt(0.2)), mu, var)
        assert float(lik.expected_log_density(m, v, t)[0]) == pytest.approx(ref, rel=1e-9)
        assert float(lik.log_predictive_density(m, v, t)[0]) == pytest.approx(
            stats.norm.logpdf(y, mu, np.sqrt(var + 0.2)), rel=1e-12
        )


def test_predictive_moments_and_quantiles_against_monte_carlo():
    """Mean, variance and quantiles of y's predictive, against draws of f then y (1e6 of them)."""
    rng = np.random.default_rng(0)
    mu, var = np.array([0.4, -0.8]), np.array([0.3, 0.05])
    q = np.array([0.05, 0.5, 0.9])
    for lik in (StudentT(df=5.0, scale=0.4), Poisson(), Gaussian(0.3)):
        f = mu[:, None] + np.sqrt(var)[:, None] * rng.standard_normal((2, 1_000_000))
        y = lik.sample(f, rng)
        mean, variance = (
            np.asarray(a) for a in lik.predict_mean_and_var(jnp.asarray(mu)[:, None], jnp.asarray(var)[:, None])
        )
        np.testing.assert_allclose(mean, y.mean(axis=1), rtol=0.01, atol=0.005)
        np.testing.assert_allclose(variance, y.var(axis=1), rtol=0.03)
        quantiles = lik.predictive_quantiles(mu, var, q)
        if lik.discrete:
            np.testing.assert_array_equal(quantiles, np.quantile(y, q, axis=1, method="inverted_cdf").T)
        else:
            np.testing.assert_allclose(quantiles, np.quantile(y, q, axis=1).T, atol=0.01)


def test_student_t_variance_is_infinite_where_df_is_at_most_two():
    _, variance = StudentT(df=1.5, scale=1.0).predict_mean_and_var(jnp.zeros((1, 1)), jnp.ones((1, 1)))
    assert np.isinf(float(variance[0]))


@pytest.mark.parametrize("lik", [StudentT(df=4.0, scale=0.3), Poisson()], ids=["student-t", "poisson"])
def test_bound_gradient_against_finite_differences_likelihood_parameters_included(lik):
    rng = np.random.default_rng(2)
    X = rng.uniform(-2, 2, size=(30, 2))
    y = rng.poisson(2.0, 30).astype(float) if lik.discrete else np.sin(X[:, 0]) + 0.2 * rng.standard_normal(30)
    M = 5
    params = {
        "kernel": SquaredExponential([0.9, 1.4], 1.1),
        "likelihood": lik,
        "Z": jnp.asarray(X[:M] + 0.05),
        "q_mu": jnp.asarray(0.3 * rng.standard_normal((M, 1))),
        "q_sqrt": jnp.asarray(np.tril(0.1 * rng.standard_normal((1, M, M))) + 0.6 * np.eye(M)),
        "mean": jnp.asarray([0.2]),
    }
    args = (jnp.asarray(X), jnp.asarray(y), jnp.ones(30))
    objective = svgp.NegativeBound(chunk=8)
    flat, unravel = ravel_pytree(params)
    f = jax.jit(lambda x: objective(unravel(x), *args))
    g = np.asarray(jax.grad(lambda x: objective(unravel(x), *args))(flat))
    for _ in range(3):
        d = rng.standard_normal(flat.size)
        h = 1e-5
        fd = (float(f(flat + h * d)) - float(f(flat - h * d))) / (2 * h)
        assert g @ d == pytest.approx(fd, rel=1e-6, abs=1e-7)
    lik_grad = unravel(jnp.asarray(g))["likelihood"]
    assert all(np.all(np.asarray(leaf) != 0) for leaf in jax.tree_util.tree_leaves(lik_grad))  # it is learnt


@pytest.mark.parametrize(
    "lik",
    [
        Bernoulli("probit"),
        Bernoulli("logit"),
        Softmax(32),
        RobustMax(0.01),
        Gaussian(0.3),
        StudentT(3.0, 0.2),
        Poisson(),
    ],
    ids=lambda lik: repr(lik),
)
def test_every_likelihood_round_trips_through_its_description(lik):
    back = likelihood_from_dict(lik.to_dict())
    assert type(back) is type(lik) and back.to_dict()["config"] == lik.to_dict()["config"]
    for name, value in lik.parameters().items():  # values are stored and read back to the last digit
        assert float(back.parameters()[name]) == float(value)
    assert lik.name in LIKELIHOODS


@pytest.mark.slow  # 200 kernels and likelihoods written and read back
def test_parameter_values_read_back_to_the_last_digit():
    """The inverse softplus is exact to about an ulp, so a third of values written to a model file moved by one
    when read back; the raw leaves are now stepped until the value is the one written. A value no raw leaf gives
    (the forward transform's rounding is not monotone at the last digit) stays within an ulp."""
    from sparsegp.kernels import SquaredExponential, kernel_from_dict

    rng = np.random.default_rng(0)
    written, read = [], []
    for _ in range(200):
        kernel = SquaredExponential(
            lengthscale=np.exp(rng.uniform(-4, 4, 3)), variance=float(np.exp(rng.uniform(-4, 4)))
        )
        raws = [np.asarray(leaf) * (1 + 1e-9) for leaf in jax.tree_util.tree_leaves(kernel)]  # values of a fit
        kernel = jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(kernel), [jnp.asarray(r) for r in raws])
        t = StudentT(df=float(np.exp(rng.uniform(0.1, 3))), scale=float(np.exp(rng.uniform(-4, 2))))
        for obj, back in ((kernel, kernel_from_dict(kernel.to_dict())), (t, likelihood_from_dict(t.to_dict()))):
            written += [np.ravel(v) for v in obj.parameters().values()]
            read += [np.ravel(v) for v in back.parameters().values()]
    written, read = np.concatenate(written), np.concatenate(read)
    assert np.mean(written == read) > 0.995
    assert np.all(np.abs(written - read) <= np.spacing(written))


def test_descriptions_are_checked():
    with pytest.raises(InputError, match="unknown likelihood"):
        likelihood_from_dict({"name": "cauchy"})
    with pytest.raises(InputError, match="must give each of"):
        likelihood_from_dict({"name": "student-t", "params": {"df": 3.0}, "priors": {}, "fixed": [], "config": {}})
    with pytest.raises(InputError, match="above 1"):
        StudentT(df=0.5)
    assert likelihood_from_dict({"name": "bernoulli", "link": "logit"}) == Bernoulli("logit")  # an older file's


def test_the_regressor_names_and_objects():
    assert isinstance(regression_named("student-t"), StudentT) and isinstance(regression_named("poisson"), Poisson)
    with pytest.raises(InputError, match="likelihood must be one of"):
        regression_named("probit")
    with pytest.raises(InputError, match="class labels"):
        regression_named(Bernoulli())


def _outliers(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, size=(n, 1))
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.standard_normal(n)
    bad = rng.random(n) < 0.05
    y[bad] += rng.choice([-1.0, 1.0], bad.sum()) * 10 * np.std(y)
    return X, y


@pytest.mark.slow  # a Student-t and a Gaussian fit of 300 rows
def test_student_t_regression_is_not_moved_by_gross_outliers(tmp_path):
    X, y = _outliers()
    Xt = np.linspace(-2.9, 2.9, 100)[:, None]
    clean = np.sin(2 * Xt[:, 0]) + 0.1 * np.random.default_rng(1).standard_normal(100)
    robust = SparseGPRegressor(likelihood="student-t", inducing=24, random_state=0).fit(X, y)
    with pytest.warns(Warning):  # the Gaussian fit's own check sees the heavy tails
        gaussian = SparseGPRegressor(inducing=24, random_state=0).fit(X, y)
    assert robust.log_predictive_density(Xt, clean) > gaussian.log_predictive_density(Xt, clean) + 1.0
    assert np.sqrt(np.mean((robust.predict(Xt) - np.sin(2 * Xt[:, 0])) ** 2)) < 0.05
    assert isinstance(robust.likelihood_, StudentT) and float(robust.likelihood_.scale) < 0.3
    assert "uncollapsed" in robust.objective_name_ and robust.log_marginal_likelihood() == robust.objective_
    assert robust.hyperparameter_names()[-2:] == ["likelihood.df", "likelihood.scale"]
    low, high = robust.predict_quantiles(Xt, [0.025, 0.975]).T
    assert np.mean((clean >= low) & (clean <= high)) > 0.85
    robust.save(tmp_path / "t.npz")
    back = load_model(tmp_path / "t.npz")
    np.testing.assert_array_equal(back.predict(Xt), robust.predict(Xt))
    assert back.likelihood_.to_dict() == robust.likelihood_.to_dict()
    assert back.loo_coverage_ == robust.loo_coverage_
    draws = back.sample_y(Xt[:5], n_samples=4, random_state=0)
    assert draws.shape == (5, 4) and np.all(np.isfinite(draws))


@pytest.mark.slow  # a Poisson and a Gaussian fit of 300 rows
def test_poisson_regression_of_counts(tmp_path):
    rng = np.random.default_rng(3)
    X = rng.uniform(-3, 3, size=(300, 1))
    rate = np.exp(0.5 + np.sin(X[:, 0]))
    counts = rng.poisson(rate)
    model = SparseGPRegressor(likelihood="poisson", inducing=16, random_state=0).fit(X, counts)
    mean, sd = model.predict(X, return_std=True)
    assert np.sqrt(np.mean((mean - rate) ** 2)) < 0.35 and np.all(sd > 0)
    assert 0.85 < model.loo_coverage_ <= 1.0
    q = model.predict_quantiles(X[:10], [0.1, 0.5, 0.9])
    assert np.all(q == np.round(q)) and np.all(np.diff(q, axis=1) >= 0)
    model.save(tmp_path / "p.npz")
    np.testing.assert_array_equal(load_model(tmp_path / "p.npz").predict(X), mean)
    latent, _ = model.predict(X[:3], return_std=True, include_noise=False)
    np.testing.assert_allclose(latent, np.log(rate[:3]), atol=0.4)  # f is the log rate


@pytest.mark.parametrize(
    "y, match",
    [
        (np.array([1.0, -2.0, 3.0, 0.0]), "negative"),
        (np.array([1.0, 2.5, 3.0, 0.0]), "not whole numbers"),
        (np.array([1.0, np.nan, 3.0, 0.0]), "NaN"),
    ],
)
def test_bad_counts_get_errors_that_name_the_problem(y, match):
    with pytest.raises(InputError, match=match):
        SparseGPRegressor(likelihood="poisson", inducing=2).fit(np.arange(4.0)[:, None], y)


def test_gaussian_options_are_refused_with_another_likelihood():
    X, y = np.arange(10.0)[:, None], np.arange(10.0)
    for option, match in (
        ({"approximation": "fitc"}, "approximation"),
        ({"noise": 0.1}, "noise"),
        ({"prediction": "augmented"}, "prediction"),
    ):
        with pytest.raises(InputError, match=match):
            SparseGPRegressor(likelihood="student-t", inducing=4, **option).fit(X, y)
    with pytest.raises(InputError, match="noise_variance"):
        SparseGPRegressor(likelihood="student-t", inducing=4).fit(X, y, noise_variance=np.ones(10))
    with pytest.raises(InputError, match="likelihood must be one of"):
        SparseGPRegressor(likelihood="cauchy").fit(X, y)


def test_a_likelihood_parameter_at_its_box_warns_by_name_and_a_fixed_one_does_not(recwarn):
    """The variational fit's stages warn for a likelihood parameter the data pushed to its box, as the regressors
    do for a kernel hyper-parameter (one rule: :func:`sparsegp.fitting.hyper.warn_at_bounds`)."""
    from sklearn.exceptions import ConvergenceWarning

    from sparsegp.fitting.hyper import warn_at_bounds

    at_floor = StudentT(df=1.0 + 1.1e-6, scale=0.3)
    with pytest.warns(ConvergenceWarning, match="likelihood parameter df ended at its bound"):
        warn_at_bounds("SparseGPRegressor", "likelihood parameter", at_floor, at_floor.trainable_mask(), "y's scale")
    fixed = StudentT(df=1.0 + 1.1e-6, scale=0.3, fixed=("df",))
    warn_at_bounds("SparseGPRegressor", "likelihood parameter", fixed, fixed.trainable_mask(), "y's scale")
    free = StudentT(df=3.0, scale=0.3)
    warn_at_bounds("SparseGPRegressor", "likelihood parameter", free, free.trainable_mask(), "y's scale")
    assert not [w for w in recwarn if issubclass(w.category, ConvergenceWarning)]
