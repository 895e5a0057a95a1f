"""Augmented RRGP and Nyström predictions against their dense definitions (QC&R eqs. 29, 39)."""

import jax.numpy as jnp
import numpy as np
import pytest

from mp_reference import PROBLEMS
from mp_reference import predictions as mp_predictions
from mp_reference import problem as accuracy_problem
from sparsegp.approximations.augmented import full_data_predict, training_cache
from sparsegp.approximations.dtc import dtc_posterior
from sparsegp.approximations.exact_gp import exact_posterior, exact_predict
from sparsegp.approximations.sor import sor_posterior
from sparsegp.kernels import SquaredExponential


def problem(n=40, seed=0):
    r = np.random.default_rng(seed)
    X = r.uniform(-3, 3, size=(n, 2))
    y = np.sin(X[:, 0]) + 0.1 * r.normal(size=n)
    return SquaredExponential([0.9, 1.4], 1.1), jnp.asarray(X), jnp.asarray(y), 0.04


def dense(k, Z, noise, X, y, Xs, method):
    Kuu = np.asarray(k.K(Z)) + 1e-10 * np.mean(np.diag(np.asarray(k.K(Z)))) * np.eye(len(Z))
    Knm = np.asarray(k.K(X, Z))
    Qt = Knm @ np.linalg.solve(Kuu, Knm.T) + noise * np.eye(len(y))
    means, variances = [], []
    for xs in np.asarray(Xs):
        ks = np.asarray(k.K(X, xs[None]))[:, 0]
        kz = np.asarray(k.K(Z, xs[None]))[:, 0]
        kss = float(k.K(xs[None])[0, 0])
        C = Qt
        if method == "augmented":
            v = ks - Knm @ np.linalg.solve(Kuu, kz)
            c = kss - kz @ np.linalg.solve(Kuu, kz)
            C = Qt + np.outer(v, v) / c
        means.append(ks @ np.linalg.solve(C, np.asarray(y)))
        variances.append(kss - ks @ np.linalg.solve(C, ks))
    return np.array(means), np.array(variances)


@pytest.mark.parametrize("method", ["augmented", "nystrom"])
@pytest.mark.parametrize("chunk", [7, 40])
@pytest.mark.slow
def test_matches_dense_definition(method, chunk):
    k, X, y, noise = problem()
    Z = X[::5]
    Xs = jnp.asarray(np.random.default_rng(3).uniform(-5, 5, size=(9, 2)))
    post = sor_posterior(k, Z, noise, X, y, chunk=chunk, jitter=1e-10)
    cache = training_cache(k, post, noise, X, y, chunk)
    mean, var = full_data_predict(k, post, noise, cache, Xs, method=method)
    dmean, dvar = dense(k, Z, noise, X, y, Xs, method)
    np.testing.assert_allclose(mean, dmean, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(var, dvar, rtol=1e-6, atol=1e-9)


def test_augmented_is_exact_when_support_set_is_all_data():
    k, X, y, noise = problem(n=25)
    Xs = jnp.asarray(np.random.default_rng(4).uniform(-3, 3, size=(10, 2)))
    post = sor_posterior(k, X, noise, X, y, chunk=10, jitter=1e-12)
    mean, var = full_data_predict(k, post, noise, training_cache(k, post, noise, X, y, 10), Xs)
    emean, evar = exact_predict(k, exact_posterior(k, noise, X, y), Xs)
    np.testing.assert_allclose(mean, emean, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(var, evar, rtol=1e-5, atol=1e-8)


def test_augmented_variance_is_positive_and_never_below_exact_far_from_support():
    k, X, y, noise = problem(n=60)
    Z = X[:6]
    Xs = jnp.asarray(np.random.default_rng(5).uniform(-6, 6, size=(50, 2)))
    post = sor_posterior(k, Z, noise, X, y, chunk=16, jitter=1e-10)
    cache = training_cache(k, post, noise, X, y, 16)
    _, var = full_data_predict(k, post, noise, cache, Xs)
    assert np.all(np.asarray(var) > 0)


@pytest.mark.slow
def test_nystrom_gives_negative_variances_on_a_known_case():
    """The documented property: Nyström's variance is not guaranteed positive (QC&R sec. 6)."""
    r = np.random.default_rng(0)
    X = jnp.asarray(r.uniform(-1, 1, size=(200, 1)))
    y = jnp.asarray(np.sin(3 * np.asarray(X[:, 0])))
    k = SquaredExponential([0.3], 1.0)
    noise = 1e-4
    Z = X[:4]
    post = sor_posterior(k, Z, noise, X, y, chunk=64, jitter=1e-10)
    cache = training_cache(k, post, noise, X, y, 64)
    Xs = jnp.asarray(np.linspace(-1, 1, 101)[:, None])
    _, var = full_data_predict(k, post, noise, cache, Xs, method="nystrom")
    _, dvar = dense(k, Z, noise, X, y, Xs[::10], "nystrom")
    np.testing.assert_allclose(np.asarray(var)[::10], dvar, rtol=1e-5, atol=1e-6)
    assert np.min(var) < -1e-3
    _, avar = full_data_predict(k, post, noise, cache, Xs, method="augmented")
    assert np.min(avar) > 0


@pytest.mark.parametrize("method", ["augmented", "nystrom"])
@pytest.mark.parametrize(
    "name,noise", [("well conditioned", 1e-6), ("ill conditioned", 1e-4), ("ill conditioned", 1e-6)]
)
@pytest.mark.slow
def test_within_1e6_of_a_40_digit_reference_at_small_noise(name, noise, method):
    """Reliability items 8-9: sigma^2 down to 1e-6, cond(K_mm) = 2.6e4 and 1.4e11 (mpmath, 40 digits)."""
    D, n, m, ell = PROBLEMS[name]
    X, y, Z, Xs = accuracy_problem(D, n, m)
    k = SquaredExponential([ell] * D, 1.0)
    Xj, yj = jnp.asarray(X), jnp.asarray(y)
    post = dtc_posterior(k, jnp.asarray(Z), noise, Xj, yj, chunk=64, jitter=1e-10)
    mean, var = map(
        np.asarray,
        full_data_predict(k, post, noise, training_cache(k, post, noise, Xj, yj, 64), jnp.asarray(Xs), method=method),
    )
    ref_mean, ref_var = mp_predictions(X, Z, Xs, y, [ell] * D, 1.0, noise, 1e-10, method)
    assert np.linalg.norm(mean - ref_mean) <= 1e-6 * np.linalg.norm(ref_mean)
    assert np.linalg.norm(var - ref_var) <= 1e-6 * np.linalg.norm(ref_var)
    if method == "augmented":  # positive variances: every point, including those 1e-8 small
        assert np.all(np.abs(var - ref_var) <= 1e-6 * ref_var)
