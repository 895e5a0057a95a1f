"""An approximation is one object: a new one with row weights is one class and one registry line.

The toy below holds half of the prior's unexplained variance in its noise, Lambda_i = sigma^2 + (K_ii - Q_ii) / 2,
between DTC (none) and FITC (all). Nothing else in the package is told about it, and the estimator fits it on
the host engine, predicts and scores its leave-one-out from the JAX program, each checked against the dense
Gaussian model N(y | 0, Q_nn + Lambda).
"""

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sparsegp import SparseGPRegressor
from sparsegp.approximations.base import Approximation
from sparsegp.approximations.host_objective import HostObjective
from sparsegp.approximations.registry import APPROXIMATIONS
from sparsegp.kernels import SquaredExponential
from sparsegp.options import Joint
from sparsegp.transforms import to_positive, to_raw


@dataclass(frozen=True)
class HalfFITC(Approximation):
    """log N(y | 0, Q_nn + Lambda), Lambda = diag(K_nn - Q_nn) / 2 + sigma^2 I."""

    name: str = "half-fitc"
    description: str = "half of FITC's diagonal correction"
    diagonal: float = 0.5


@pytest.fixture
def half_fitc(monkeypatch):
    monkeypatch.setitem(APPROXIMATIONS, "half-fitc", HalfFITC())  # the one registry line
    return APPROXIMATIONS["half-fitc"]


def _data(n=60, seed=3):
    r = np.random.default_rng(seed)
    X = r.uniform(-3, 3, size=(n, 2))
    return X, np.sin(X[:, 0]) * np.cos(X[:, 1]) + 0.1 * r.normal(size=n)


def _dense(kernel, Z, noise, X):
    """The toy's covariance C = Q_nn + Lambda and K_ii - Q_ii, formed whole."""
    Kuu = np.asarray(kernel.K(Z)) + 1e-8 * np.mean(np.diag(np.asarray(kernel.K(Z)))) * np.eye(len(Z))
    Kuf = np.asarray(kernel.K(Z, X))
    Q = Kuf.T @ np.linalg.solve(Kuu, Kuf)
    r = np.asarray(kernel.diag(X)) - np.diag(Q)
    return Q + np.diag(noise + 0.5 * r), r


def _log_density(C, y):
    sign, logdet = np.linalg.slogdet(C)
    return -0.5 * (len(y) * np.log(2 * np.pi) + logdet + y @ np.linalg.solve(C, y))


@pytest.mark.slow  # a whole fit of the toy approximation
def test_a_toy_approximation_with_row_weights_fits_predicts_and_scores_as_its_dense_model(half_fitc):
    X, y = _data()
    model = SparseGPRegressor(approximation="half-fitc", inducing=8, random_state=0, schedule=Joint(max_iter=25)).fit(
        X, y
    )
    assert model.objective_name_ == "half of FITC's diagonal correction"
    kernel, Z, noise = model.kernel_, np.asarray(model.Z_), float(model.noise_)
    yn = (y - model.y_mean_) / model.y_std_
    C, r = _dense(kernel, Z, noise, X)
    # the fitted objective (the host engine's weighted pass) is the dense model's log density
    assert model.objective_ == pytest.approx(_log_density(C, yn), rel=1e-9)
    # its leave-one-out (the JAX program's posterior): the dense conditional of each row given the others, plus
    # the half of K_ii - Q_ii that the method's own predictive adds back
    P = np.linalg.inv(C)
    mean, var, _ = half_fitc.loo(kernel, model.posterior_, noise)(jnp.asarray(X), jnp.asarray(yn))
    np.testing.assert_allclose(np.asarray(mean), yn - (P @ yn) / np.diag(P), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(np.asarray(var), 1 / np.diag(P) + 0.5 * r, rtol=1e-8)
    assert np.all(np.isfinite(model.predict(X[:5], return_std=True)[1]))


def test_both_engines_give_the_toy_the_same_value_and_gradient(half_fitc):
    X, y = _data(n=45)
    kernel = SquaredExponential(np.array([0.8, 1.3]), 1.1)
    params = {"kernel": kernel, "raw_noise": jnp.asarray(to_raw(0.05)), "Z": jnp.asarray(X[:7] + 0.02)}

    def negative(p):
        return -half_fitc.objective(
            p["kernel"], p["Z"], to_positive(p["raw_noise"]), jnp.asarray(X), jnp.asarray(y), chunk=16
        )

    f_jax, g_jax = jax.jit(jax.value_and_grad(negative))(params)
    f_host, g_host = HostObjective(half_fitc, X, y, chunk=16, jitter=1e-8)(params)
    C, _ = _dense(kernel, np.asarray(params["Z"]), 0.05, X)
    assert float(f_jax) == pytest.approx(-_log_density(C, y), rel=1e-9)
    assert f_host == pytest.approx(float(f_jax), rel=1e-11)
    a, b = (jax.flatten_util.ravel_pytree(g)[0] for g in (g_jax, g_host))
    np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-7, atol=1e-9 * float(jnp.max(jnp.abs(a))))


def test_the_toy_refuses_the_predictions_that_need_a_noise_free_of_the_inputs(half_fitc):
    from sparsegp.errors import InputError

    with pytest.raises(InputError, match="use approximation 'vfe', 'dtc' or 'sor'"):
        SparseGPRegressor(approximation="half-fitc", prediction="augmented").fit(*_data(n=20))
