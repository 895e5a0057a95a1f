"""Several targets (y of shape (n, k)) fitted with one kernel, one noise and shared inducing inputs.

The objective of k targets is the sum of each target's (every method, and the certificate's bounds); the sums'
hand-written backward passes against autodiff and central differences with k columns; at fixed hyper-parameters
each target's predictions and leave-one-out figures equal a fit of that target alone; repeated inputs group
exactly; a model file keeps every target.
"""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.flatten_util import ravel_pytree

from _reference import whitened_stats_autodiff
from host_check import assert_host_equals_jax_and_differences
from sparsegp import ExactGPRegressor, InputError, SparseGPRegressor, load_model
from sparsegp.approximations.certificate import certify
from sparsegp.approximations.exact_gp import exact_log_marginal
from sparsegp.approximations.host_objective import HostObjective
from sparsegp.approximations.registry import APPROXIMATIONS
from sparsegp.backends.jax_sums import whitened_stats
from sparsegp.backends.replicates import collapse
from sparsegp.kernels import SquaredExponential
from sparsegp.options import Joint
from sparsegp.selection import InfoGain
from sparsegp.transforms import to_raw

KERNEL = SquaredExponential([0.9, 1.3], 1.2)
NOISE = 0.05


def problem(n=70, seed=0):
    r = np.random.default_rng(seed)
    X = r.normal(size=(n, 2))
    Y = np.column_stack([np.sin(2 * X[:, 0]), 3 * np.cos(X[:, 1]) + 2, X[:, 0] * X[:, 1]])
    return X, Y + 0.1 * r.normal(size=Y.shape)


@pytest.mark.parametrize("approximation", ["vfe", "dtc", "sor", "fitc"])
@pytest.mark.slow
def test_the_objective_of_k_targets_is_the_sum_of_each_targets(approximation):
    X, Y = problem()
    Z = jnp.asarray(X[:9] + 0.01)
    objective = APPROXIMATIONS[approximation].objective

    def value(y):
        return float(objective(KERNEL, Z, NOISE, jnp.asarray(X), jnp.asarray(y), chunk=16, jitter=1e-10))

    each = sum(value(Y[:, j]) for j in range(Y.shape[1]))
    assert abs(value(Y) - each) <= 1e-10 * abs(each)


def test_the_exact_gp_and_the_certificate_of_k_targets_are_sums():
    X, Y = problem(seed=1)
    Xj, Z = jnp.asarray(X), jnp.asarray(X[:12] + 0.01)
    exact = float(exact_log_marginal(KERNEL, NOISE, Xj, jnp.asarray(Y)))
    assert abs(exact - sum(float(exact_log_marginal(KERNEL, NOISE, Xj, jnp.asarray(y))) for y in Y.T)) <= 1e-10 * abs(
        exact
    )
    cert = certify(KERNEL, Z, NOISE, Xj, jnp.asarray(Y), chunk=16, jitter=1e-10)
    each = [certify(KERNEL, Z, NOISE, Xj, jnp.asarray(y), chunk=16, jitter=1e-10) for y in Y.T]
    assert abs(cert.upper - sum(c.upper for c in each)) <= 1e-10 * abs(cert.upper)
    assert abs(cert.lower - sum(c.lower for c in each)) <= 1e-10 * abs(cert.lower)
    assert cert.lower <= exact <= cert.upper


@pytest.mark.slow
def test_the_unit_weight_backward_pass_with_k_targets_equals_autodiff():
    X, Y = problem(seed=2)
    Z = jnp.asarray(X[:8] + 0.01)
    Luu = jnp.linalg.cholesky(KERNEL.K(Z) + 1e-10 * jnp.eye(8))
    cts = jax.random.normal(jax.random.PRNGKey(0), (8 * 8 + 8 * 3 + 3,))

    def scalar(stats_fn):
        def f(kernel, Z, Luu, y):
            st = stats_fn(kernel, Z, Luu, jnp.asarray(X), y, 16)
            return (
                jnp.sum(cts[:64].reshape(8, 8) * st.S)
                + jnp.sum(cts[64:88].reshape(8, 3) * st.v)
                + (cts[88] * st.yy + cts[89] * st.trK + cts[90] * st.trQ)
            )

        return jax.grad(f, argnums=(0, 1, 2, 3))(KERNEL, Z, Luu, jnp.asarray(Y))

    hand, auto = ravel_pytree(scalar(whitened_stats))[0], ravel_pytree(scalar(whitened_stats_autodiff))[0]
    assert np.max(np.abs(hand - auto)) <= 1e-9 * np.max(np.abs(auto))


@pytest.mark.parametrize("approximation", ["vfe", "fitc"])
@pytest.mark.slow
def test_host_sums_with_k_targets_equal_the_jax_program_and_finite_differences(approximation):
    X, Y = problem(seed=3)
    g = collapse(np.vstack([X, X[:20]]), np.vstack([Y, Y[:20] + 0.1]))  # repeated inputs, grouped
    weights = {"counts": g.counts, "scatter": g.scatter}
    params = {"kernel": KERNEL, "raw_noise": jnp.asarray(to_raw(NOISE)), "Z": jnp.asarray(X[:7] + 0.01)}
    f = assert_host_equals_jax_and_differences(approximation, g.X, g.y, weights, params, seed=4)
    # every row on its own gives the same value
    every = HostObjective(approximation, np.vstack([X, X[:20]]), np.vstack([Y, Y[:20] + 0.1]), chunk=13,
                          jitter=1e-10)  # fmt: skip
    assert abs(every(params)[0] - f) <= 1e-10 * abs(f)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("estimator", ["exact", "vfe", "sor", "fitc"])
@pytest.mark.slow
def test_each_target_equals_a_fit_of_that_target_alone(estimator):
    X, Y = problem(seed=5)
    options = {"kernel": KERNEL, "optimize": False, "noise": NOISE}
    if estimator == "exact":
        make = lambda: ExactGPRegressor(**options)  # noqa: E731
    else:
        make = lambda: SparseGPRegressor(approximation=estimator, inducing=X[:10] + 0.01, **options)  # noqa: E731
    multi = make().fit(X, Y)
    Xs = np.random.default_rng(6).normal(size=(20, 2))
    mean, std = multi.predict(Xs, return_std=True)
    cov = multi.predict(Xs, return_cov=True)[1]
    Ys = mean + 0.1 * np.random.default_rng(7).normal(size=mean.shape)
    densities = []
    assert mean.shape == std.shape == (20, 3) and cov.shape == (20, 20, 3)
    if estimator != "exact":  # predict_var: the shared variance on each target's scale
        np.testing.assert_allclose(multi.predict_var(Xs)[1], std**2, rtol=1e-12)
    assert multi.loo_log_predictive_.shape == multi.loo_coverage_.shape == (3,) and multi.loo_z_.shape[0] == 3
    for j in range(3):
        one = make().fit(X, Y[:, j])
        m1, s1 = one.predict(Xs, return_std=True)
        assert np.max(np.abs(mean[:, j] - m1)) <= 1e-10 * np.max(np.abs(m1))
        assert np.max(np.abs(std[:, j] - s1)) <= 1e-10 * np.max(s1)
        assert abs(multi.loo_log_predictive_[j] - one.loo_log_predictive_) <= 1e-9 * abs(one.loo_log_predictive_)
        densities.append(one.log_predictive_density(Xs, Ys[:, j]))
    assert abs(multi.log_predictive_density(Xs, Ys) - np.mean(densities)) <= 1e-10 * abs(np.mean(densities))
    draws = multi.sample_y(Xs, n_samples=4)
    assert draws.shape == (20, 3, 4) and np.all(np.isfinite(draws))


@pytest.mark.slow  # whole fits
@pytest.mark.filterwarnings("ignore")
def test_learnt_fits_of_several_targets_and_their_model_files(tmp_path):
    X, Y = problem(n=120, seed=7)
    Xs = np.random.default_rng(8).normal(size=(9, 2))
    for model in (
        ExactGPRegressor(max_iter=30),
        SparseGPRegressor(inducing=12, random_state=0, schedule=Joint(max_iter=30)),
    ):
        model.fit(X, Y)
        assert model.y_mean_.shape == (3,) and np.all(np.isfinite(model.predict(Xs)))
        loaded = load_model(model.save(tmp_path / type(model).__name__))
        assert np.array_equal(loaded.predict(Xs, return_std=True)[1], model.predict(Xs, return_std=True)[1])
        assert np.array_equal(loaded.loo_log_predictive_, model.loo_log_predictive_)


def test_several_targets_refuse_what_reads_one_target():
    X, Y = problem(seed=9)
    with pytest.raises(InputError, match="several targets"):
        ExactGPRegressor(optimize=False).fit(X, Y, noise_variance=0.1)
    with pytest.raises(InputError, match=r"greedy selection \(InfoGain\) with several targets"):
        SparseGPRegressor(inducing=InfoGain(5), optimize=False).fit(X, Y)
    with pytest.raises(InputError, match="prediction='augmented' with several targets"):
        SparseGPRegressor(inducing=5, prediction="augmented", optimize=False).fit(X, Y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = ExactGPRegressor(kernel=KERNEL, optimize=False).fit(X, Y[:, :1])  # an (n, 1) column is one target
    assert one.predict(X[:3]).shape == (3,)
