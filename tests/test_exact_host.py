"""The exact GP on the host (sparsegp.approximations.exact_host) against the JAX path and central differences."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sparsegp import ExactGPRegressor
from sparsegp.approximations import exact_host
from sparsegp.approximations.exact_gp import exact_log_marginal, exact_posterior, exact_predict
from sparsegp.approximations.exact_host import (
    HostExactNegative,
    host_exact_posterior,
    host_exact_predict,
    host_log_marginal,
    on_host,
)
from sparsegp.approximations.loo import exact_loo, host_exact_loo
from sparsegp.fitting.negatives import ExactNegative
from sparsegp.fitting.training import _host_flat, _host_unravel
from sparsegp.kernels import Constant, Matern52, SquaredExponential
from sparsegp.linalg import cholesky, host_cholesky
from sparsegp.priors import LogNormal
from sparsegp.transforms import to_raw

KERNELS = {
    "SE-ARD with a prior": (SquaredExponential([1.0, 2.0, 0.5], 1.3, priors={"lengthscale": LogNormal(0.0, 1.0)}),
                            LogNormal(-2.0, 1.0)),
    "SE with a bias, plus a constant": (SquaredExponential(0.7, 1.3, bias=0.2) + Constant(0.3), None),
}  # fmt: skip


@pytest.fixture
def data():
    r = np.random.default_rng(1)
    X = r.normal(size=(40, 3))
    return X, np.sin(X[:, 0]) + 0.1 * r.normal(size=40), r.normal(size=(7, 3))


def _params(kernel, noise=0.05):
    return {"kernel": kernel, "raw_noise": jnp.asarray(to_raw(noise))}


@pytest.mark.parametrize("name", KERNELS)
@pytest.mark.parametrize("columns", [1, 2])
def test_value_and_gradient_equal_the_jax_path(data, name, columns):
    X, y, _ = data
    Y = y if columns == 1 else np.column_stack([y, y**2])
    kernel, prior = KERNELS[name]
    params = _params(kernel)
    f, g = HostExactNegative(X, Y, prior)(params)
    f_jax, g_jax = jax.value_and_grad(lambda p: ExactNegative(prior)(p, jnp.asarray(X), jnp.asarray(Y)))(params)
    assert f == pytest.approx(float(f_jax), rel=1e-12)
    np.testing.assert_allclose(_host_flat(g), _host_flat(g_jax), rtol=1e-10, atol=1e-11)


@pytest.mark.parametrize("name", KERNELS)
def test_gradient_matches_central_differences(data, name):
    X, y, _ = data
    kernel, prior = KERNELS[name]
    params = _params(kernel)
    negative = HostExactNegative(X, y, prior)
    x0, unravel = _host_flat(params), _host_unravel(params)
    _, g = negative(params)
    g = _host_flat(g)
    h = 1e-6
    for i in range(x0.size):
        e = np.zeros_like(x0)
        e[i] = h
        fd = (negative(unravel(x0 + e))[0] - negative(unravel(x0 - e))[0]) / (2 * h)
        assert g[i] == pytest.approx(fd, rel=1e-6, abs=1e-6)


@pytest.mark.parametrize("name", KERNELS)
def test_posterior_predictions_and_loo_equal_the_jax_path(data, name):
    X, y, Xs = data
    kernel = KERNELS[name][0]
    host = host_exact_posterior(kernel, 0.05, X, y)
    ref = exact_posterior(kernel, 0.05, jnp.asarray(X), jnp.asarray(y))
    np.testing.assert_allclose(host.alpha, ref.alpha, rtol=1e-10)
    for full_cov in (False, True):
        for a, b in zip(host_exact_predict(kernel, host, Xs, full_cov=full_cov),
                        exact_predict(kernel, ref, jnp.asarray(Xs), full_cov=full_cov)):  # fmt: skip
            np.testing.assert_allclose(a, np.asarray(b), rtol=1e-10, atol=1e-12)
    lml = float(exact_log_marginal(kernel, 0.05, jnp.asarray(X), jnp.asarray(y)))
    assert host_log_marginal(kernel, 0.05, X, y) == pytest.approx(lml, rel=1e-12)
    index = np.arange(0, 40, 3)
    ours = host_exact_loo(host, 0.05, index, y[index], y[index])
    theirs = exact_loo(ref, 0.05, jnp.asarray(index), jnp.asarray(y[index]), jnp.asarray(y[index]))
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, np.asarray(b), rtol=1e-9)


def test_host_cholesky_takes_the_same_jitter():
    r = np.random.default_rng(0)
    B = r.normal(size=(6, 3))
    A = B @ B.T  # rank 3: needs jitter
    L, used = host_cholesky(A)
    L_ref, used_ref = cholesky(jnp.asarray(A))
    assert used > 0 and used == pytest.approx(used_ref)
    np.testing.assert_allclose(L, np.asarray(L_ref), rtol=1e-8, atol=1e-12)
    with pytest.raises(Exception, match="not numerically positive definite"):
        host_cholesky(-np.eye(3))


def test_which_fits_run_on_the_host(data):
    X = data[0]
    se = SquaredExponential([1.0, 1.0, 1.0])
    assert on_host(se, 0.1, X)
    assert on_host(se + Constant(0.1), 0.1, X)
    assert not on_host(Matern52(1.0), 0.1, X)  # no host form
    assert not on_host(Constant(1.0), 0.1, X)  # no squared exponential
    assert not on_host(se, np.array([0.1, 0.2]), X)  # a noise per target
    assert not on_host(se, 0.1, X, counts=np.ones(len(X)))  # rows grouped by input
    big = np.zeros((int(np.sqrt(exact_host.HOST_ENTRIES / 3)) + 1, 3))
    assert not on_host(se, 0.1, big)


def test_a_host_fit_equals_the_jax_fit(data, monkeypatch):
    X, _, Xs = data
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] * np.cos(X[:, 2])  # every input matters: a well-determined optimum
    y = y + 0.05 * np.random.default_rng(2).normal(size=len(y))
    host = ExactGPRegressor().fit(X, y)
    assert host.on_host_
    monkeypatch.setattr(exact_host, "HOST_ENTRIES", 0)
    ref = ExactGPRegressor().fit(X, y)
    assert not ref.on_host_
    for name, value in host.kernel_.parameters().items():
        np.testing.assert_allclose(value, ref.kernel_.parameters()[name], rtol=1e-5)
    assert host.log_marginal_likelihood_ == pytest.approx(ref.log_marginal_likelihood_, rel=1e-9)
    for a, b in zip(host.predict(Xs, return_std=True), ref.predict(Xs, return_std=True)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-8)
    assert host.loo_log_predictive_ == pytest.approx(ref.loo_log_predictive_, rel=1e-5)


def test_a_host_fit_compiles_nothing_for_a_new_number_of_rows(data):
    """The host path's programs do not depend on n: a second fit on other rows lowers no XLA program."""
    X, y, Xs = data
    ExactGPRegressor().fit(X, y).predict(Xs, return_std=True)
    compiled = []

    def listen(event, duration, **kwargs):
        if event.endswith(("backend_compile_duration", "jaxpr_to_mlir_module_duration")):  # compiled, or lowered
            compiled.append(kwargs.get("fun_name"))

    jax.monitoring.register_event_duration_secs_listener(listen)
    try:
        ExactGPRegressor().fit(X[:31], y[:31]).predict(Xs[:5], return_std=True)
    finally:
        jax.monitoring.unregister_event_duration_listener(listen)
    assert compiled == []
