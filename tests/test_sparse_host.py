"""The every-input sparse posterior on the host (sparsegp.approximations.sparse_host) against the JAX path."""

import jax.numpy as jnp
import numpy as np
import pytest

from sparsegp import ExactGPRegressor, SparseGPRegressor
from sparsegp.approximations.common import sparse_predict
from sparsegp.approximations.loo import sparse_loo
from sparsegp.approximations.registry import APPROXIMATIONS
from sparsegp.approximations.sparse_host import (
    host_sparse_loo,
    host_sparse_posterior,
    host_sparse_predict,
)
from sparsegp.kernels import Constant, SquaredExponential

KERNELS = {
    "SE-ARD": SquaredExponential([1.0, 2.0, 0.5], 1.3),
    "SE with a bias, plus a constant": SquaredExponential(0.7, 1.3, bias=0.2) + Constant(0.3),
}
NOISE, JITTER = 0.05, 1e-8


@pytest.fixture
def data():
    r = np.random.default_rng(3)
    X = r.normal(size=(40, 3))
    return X, np.sin(X[:, 0]) + 0.1 * r.normal(size=40), r.normal(size=(9, 3))


def _jax_posterior(kernel, Z, X, y, name="vfe"):
    return APPROXIMATIONS[name].posterior(
        kernel, jnp.asarray(Z), NOISE, jnp.asarray(X), jnp.asarray(y), chunk=64, jitter=JITTER
    )


@pytest.mark.parametrize("name", KERNELS)
@pytest.mark.parametrize("every", [True, False])
@pytest.mark.parametrize("columns", [1, 2])
def test_posterior_predictions_and_loo_equal_the_jax_path(data, name, every, columns):
    X, y, Xs = data
    Y = y if columns == 1 else np.column_stack([y, y**2])
    kernel = KERNELS[name]
    Z = X if every else X[::3]
    host = host_sparse_posterior(kernel, Z, NOISE, X, Y, JITTER)
    ref = _jax_posterior(kernel, Z, X, Y)
    for field in ("Luu", "LB", "c", "w_mean"):
        np.testing.assert_allclose(getattr(host, field), np.asarray(getattr(ref, field)), rtol=1e-9, atol=1e-10)
    for degenerate in (False, True):
        mean, var = host_sparse_predict(kernel, host, Xs, degenerate=degenerate)
        mean_j, var_j = sparse_predict(kernel, ref, jnp.asarray(Xs), degenerate=degenerate)
        np.testing.assert_allclose(mean, np.asarray(mean_j), rtol=1e-9, atol=1e-10)
        np.testing.assert_allclose(var, np.asarray(var_j), rtol=1e-8, atol=1e-10)
        _, cov = host_sparse_predict(kernel, host, Xs, full_cov=True, degenerate=degenerate)
        _, cov_j = sparse_predict(kernel, ref, jnp.asarray(Xs), full_cov=True, degenerate=degenerate)
        np.testing.assert_allclose(cov, np.asarray(cov_j), rtol=1e-8, atol=1e-10)
        got = host_sparse_loo(kernel, host, NOISE, X, Y, degenerate=degenerate)
        want = sparse_loo(kernel, ref, NOISE, jnp.asarray(X), jnp.asarray(Y), degenerate=degenerate)
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, np.asarray(b), rtol=1e-7, atol=1e-9)


@pytest.mark.filterwarnings("ignore::sparsegp.CalibrationWarning")
def test_every_input_posterior_is_the_exact_gp(data):
    """At Z = X the sparse posterior's predictions are the exact GP's (Titsias 2009 sec. 3: Q_nn = K_nn)."""
    X, y, Xs = data
    kernel = KERNELS["SE-ARD"]
    mean, var = host_sparse_predict(kernel, host_sparse_posterior(kernel, X, NOISE, X, y, JITTER), Xs)
    exact = ExactGPRegressor(kernel=kernel, noise=NOISE, optimize=False, normalize_y=False).fit(X, y)
    mean_e, std_e = exact.predict(Xs, return_std=True, include_noise=False)
    np.testing.assert_allclose(mean, mean_e, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(np.sqrt(np.maximum(var, 0)), std_e, rtol=1e-4, atol=1e-5)


def test_duplicate_inducing_inputs_climb_the_jitter_ladder(data):
    X, y, _ = data
    kernel = KERNELS["SE-ARD"]
    Z = np.vstack([X[:10], X[:10]])  # K_uu singular: the first jitter may fail, a larger one factorises
    post = host_sparse_posterior(kernel, Z, NOISE, X, y, 1e-14)
    assert post is not None and np.all(np.isfinite(post.w_mean))
    ref = _jax_posterior(kernel, Z, X, y)
    mean, _ = host_sparse_predict(kernel, post, X)
    mean_j, _ = sparse_predict(kernel, ref, jnp.asarray(X))
    np.testing.assert_allclose(mean, np.asarray(mean_j), rtol=1e-4, atol=1e-5)


def test_small_default_fit_runs_on_the_host_and_survives_a_save(tmp_path):
    r = np.random.default_rng(0)
    X = r.uniform(-3, 3, size=(120, 2))
    y = np.sin(X[:, 0]) + 0.1 * r.normal(size=120)
    Xs = r.uniform(-3, 3, size=(50, 2))
    model = SparseGPRegressor(random_state=0).fit(X, y)
    assert model.on_host_ and model.Z_.shape[0] == 120
    mean, std = model.predict(Xs, return_std=True)
    # the same fitted posterior through the JAX programs
    jax_mean, jax_var = sparse_predict(
        model.kernel_, type(model.posterior_)(*(jnp.asarray(a) for a in model.posterior_)), jnp.asarray(Xs)
    )
    np.testing.assert_allclose(mean, np.asarray(jax_mean) * model.y_std_ + model.y_mean_, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(std**2, (np.asarray(jax_var) + model.noise_) * model.y_std_**2, rtol=1e-8)
    path = tmp_path / "m.npz"
    model.save(path)
    loaded = SparseGPRegressor.load(path)
    assert loaded.on_host_
    mean_l, std_l = loaded.predict(Xs, return_std=True)
    np.testing.assert_array_equal(mean_l, mean)
    np.testing.assert_array_equal(std_l, std)


def test_fitc_and_the_augmented_prediction_stay_on_the_jax_path():
    r = np.random.default_rng(0)
    X = r.uniform(-3, 3, size=(80, 2))
    y = np.sin(X[:, 0]) + 0.1 * r.normal(size=80)
    for options in ({"approximation": "fitc"}, {"prediction": "augmented"}):
        model = SparseGPRegressor(random_state=0, **options).fit(X, y)
        assert model.Z_.shape[0] == 80 and not model.on_host_  # every input inducing, the JAX programs


def test_two_targets_sharing_a_noise_predict_as_the_jax_programs():
    r = np.random.default_rng(0)
    X = r.normal(size=(80, 2))
    Y = np.column_stack([np.sin(X[:, 0]), np.cos(X[:, 1])]) + 0.1 * r.normal(size=(80, 2))
    model = SparseGPRegressor(random_state=0).fit(X, Y)
    assert model.on_host_ and model.loo_coverage_.shape == (2,)
    mean, std = model.predict(X[:7], return_std=True)
    post = type(model.posterior_)(*(jnp.asarray(a) for a in model.posterior_))
    jax_mean, jax_var = sparse_predict(model.kernel_, post, jnp.asarray(X[:7]))
    np.testing.assert_allclose(mean, np.asarray(jax_mean) * model.y_std_ + model.y_mean_, rtol=1e-9, atol=1e-10)
    want = (np.asarray(jax_var)[:, None] + model.noise_) * model.y_std_**2
    np.testing.assert_allclose(std**2, want, rtol=1e-8)
