"""The certificate: F_V <= log p(y | theta) <= U on problems where the exact GP is computed, U = log p(y) when
the inducing inputs are the training inputs, the host pass equal to the JAX program, and the fitted model's."""

import warnings

import jax.numpy as jnp
import numpy as np
import pytest

from sparsegp import CertificateWarning, SparseGPRegressor, load_model
from sparsegp.approximations.certificate import Certificate, certify
from sparsegp.approximations.exact_gp import exact_log_marginal
from sparsegp.approximations.host_objective import HostObjective
from sparsegp.fitting import growth
from sparsegp.kernels import Matern32, SquaredExponential
from sparsegp.options import Joint
from sparsegp.transforms import to_raw

KERNELS = {
    "se-ard": lambda D: SquaredExponential(np.linspace(0.5, 1.5, D), 1.3),
    "matern32": lambda D: Matern32(0.8, 0.7),
    "se-bias": lambda D: SquaredExponential(1.2, 2.0, bias=0.3),
}


def _data(n, D, seed):
    r = np.random.default_rng(seed)
    X = r.normal(size=(n, D))
    y = np.sin(2 * X[:, 0]) + 0.3 * X[:, -1] ** 2 + 0.2 * r.normal(size=n)
    return X, y - y.mean()


# One kernel in the fast tier; the bracket is the same algebra for each (the others in the slow tier)
@pytest.mark.parametrize(
    "kernel", [k if i == 0 else pytest.param(k, marks=pytest.mark.slow) for i, k in enumerate(KERNELS)]
)
@pytest.mark.parametrize(
    "noise", [pytest.param(1e-3, marks=pytest.mark.slow), 0.05, pytest.param(1.0, marks=pytest.mark.slow)]
)
def test_lower_and_upper_bound_bracket_the_exact_evidence(kernel, noise):
    X, y = _data(60, 3, seed=len(kernel))
    k = KERNELS[kernel](3)
    exact = float(exact_log_marginal(k, noise, jnp.asarray(X), jnp.asarray(y)))
    r = np.random.default_rng(1)
    for m in (1, 5, 20, 60):
        Z = X[r.choice(60, m, replace=False)] + (0.05 * r.normal(size=(m, 3)) if m < 60 else 0.0)
        c = certify(k, jnp.asarray(Z), noise, jnp.asarray(X), jnp.asarray(y), chunk=16, jitter=1e-10)
        tol = 1e-7 * max(1.0, abs(exact))
        assert c.lower <= exact + tol and exact <= c.upper + tol, (m, c, exact)
        assert c.gap >= -tol
    # Z = X: Q_nn = K_nn, so both bounds are the exact evidence (up to the jitter on K_uu)
    c = certify(k, jnp.asarray(X), noise, jnp.asarray(X), jnp.asarray(y), chunk=16, jitter=1e-12)
    np.testing.assert_allclose([c.lower, c.upper], exact, rtol=1e-5, atol=1e-5)


@pytest.mark.slow
def test_the_upper_bound_falls_as_inducing_points_are_added_and_the_gap_closes():
    X, y = _data(200, 2, seed=3)
    k = SquaredExponential(np.array([0.7, 1.1]), 1.0)
    gaps = []
    for m in (4, 16, 64, 200):
        c = certify(k, jnp.asarray(X[:m]), 0.04, jnp.asarray(X), jnp.asarray(y), chunk=64, jitter=1e-10)
        gaps.append(c.gap)
    assert gaps[0] > 10 and gaps[-1] < 1e-3 and all(a > b for a, b in zip(gaps, gaps[1:]))


def test_the_host_pass_equals_the_jax_program():
    X, y = _data(90, 3, seed=4)
    k = KERNELS["se-ard"](3)
    Z = X[::9] + 0.01
    c0 = certify(k, jnp.asarray(Z), 0.05, jnp.asarray(X), jnp.asarray(y), chunk=17, jitter=1e-8)
    params = {"kernel": k, "raw_noise": jnp.asarray(to_raw(0.05)), "Z": jnp.asarray(Z)}
    c1 = HostObjective("vfe", X, y, chunk=17, jitter=1e-8).certificate(params)
    np.testing.assert_allclose([c1.lower, c1.upper], [c0.lower, c0.upper], rtol=1e-11)


@pytest.mark.parametrize("approximation", ["vfe", pytest.param("fitc", marks=pytest.mark.slow)])
@pytest.mark.slow
def test_a_fitted_model_carries_its_certificate_and_saves_it(approximation, tmp_path):
    X, y = _data(80, 2, seed=5)
    model = SparseGPRegressor(
        inducing=10, approximation=approximation, random_state=0, schedule=Joint(max_iter=300)
    ).fit(X, y)
    yn = (y - model.y_mean_) / model.y_std_
    exact = float(exact_log_marginal(model.kernel_, model.noise_, jnp.asarray(X), jnp.asarray(yn)))
    lower = model.upper_bound_ - model.gap_
    assert lower <= exact + 1e-8 * abs(exact) <= model.upper_bound_ + 2e-8 * abs(exact)
    if approximation == "vfe":
        np.testing.assert_allclose(lower, model.objective_, rtol=1e-10)
    loaded = load_model(model.save(tmp_path / "m.npz"))
    assert (loaded.upper_bound_, loaded.gap_) == (model.upper_bound_, model.gap_)


def test_a_certificate_that_lost_its_digits_is_said(monkeypatch):
    """U below F_V beyond rounding certifies nothing: the fit says so (a CertificateWarning), and a sound one
    says nothing."""
    r = np.random.default_rng(0)
    X = r.normal(size=(120, 2))
    y = np.sin(X[:, 0]) + 0.1 * r.normal(size=120)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CertificateWarning)
        SparseGPRegressor(inducing=10, random_state=0, schedule=Joint(max_iter=20)).fit(X, y)
    # F_V far above any log p(y) these rows can have: neither the trace bound nor log p(y) itself is above it
    monkeypatch.setattr(growth, "certificate", lambda *a, **k: Certificate(1e6, 1e6 - 1.0))
    with pytest.warns(CertificateWarning, match="not sound"):
        model = SparseGPRegressor(inducing=10, random_state=0, schedule=Joint(max_iter=20)).fit(X, y)
    assert model.gap_ < -1.0 and model.certificate_["bound"] == "exact"
