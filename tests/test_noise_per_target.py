"""Several targets with a noise variance each (``noise`` of shape (k,)): k single-target models sharing the kernel
and the inducing inputs.

The objective is the sum of each target's with its own noise (every method, repeated inputs grouped with each
target's sums of squares), its gradient against central differences, the predictions, covariances and
leave-one-out figures equal each target fitted alone at its noise; learnt, the noises follow the targets' own;
model files and ``log_marginal_likelihood(theta)`` carry one noise per target.
"""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sparsegp import CalibrationWarning, ExactGPRegressor, InputError, SparseGPRegressor, load_model
from sparsegp.approximations.certificate import certify
from sparsegp.approximations.exact_gp import exact_log_marginal
from sparsegp.approximations.registry import APPROXIMATIONS
from sparsegp.backends.replicates import collapse
from sparsegp.fitting.negatives import ExactNegative, SparseNegative
from sparsegp.kernels import SquaredExponential
from sparsegp.transforms import to_raw
from tiers import slow_beyond

KERNEL = SquaredExponential([0.9, 1.3], 1.2)
NOISE = np.array([0.002, 0.05, 0.4])


def problem(n=60, seed=0, sd=(0.05, 0.2, 0.6)):
    r = np.random.default_rng(seed)
    X = r.normal(size=(n, 2))
    F = np.column_stack([np.sin(2 * X[:, 0]), np.cos(X[:, 1]), X[:, 0] * X[:, 1]])
    return X, F + np.asarray(sd) * r.normal(size=F.shape)


def repeated(X, Y, seed=1):
    """Some inputs twice over with other targets: grouped rows then carry each target's sum of squares."""
    r = np.random.default_rng(seed)
    extra = X[:15]
    return np.vstack([X, extra]), np.vstack([Y, Y[:15] + 0.3 * r.normal(size=(15, Y.shape[1]))])


@pytest.mark.parametrize("approximation", slow_beyond(["vfe", "fitc", "exact"], {"vfe", "exact"}))
def test_the_objective_is_the_sum_of_each_targets_at_its_noise_with_inputs_grouped(approximation):
    X, Y = repeated(*problem())
    g = collapse(X, Y)
    assert g.scatter.shape == (g.X.shape[0], 3) and g.repeated
    Z = jnp.asarray(X[:9] + 0.01)
    if approximation == "exact":
        objective = lambda noise, X, y, **w: exact_log_marginal(KERNEL, noise, X, y, **w)  # noqa: E731
    else:
        approx = APPROXIMATIONS[approximation].objective
        objective = lambda noise, X, y, **w: approx(KERNEL, Z, noise, X, y, chunk=16, jitter=1e-10, **w)  # noqa: E731
    joint = float(objective(jnp.asarray(NOISE), jnp.asarray(g.X), jnp.asarray(g.y), counts=g.counts, scatter=g.scatter))
    each = sum(float(objective(NOISE[j], jnp.asarray(X), jnp.asarray(Y[:, j]))) for j in range(3))
    assert abs(joint - each) <= 1e-10 * abs(each)
    if approximation == "vfe":  # the certificate: each target's bounds at its noise, summed
        cert = certify(KERNEL, Z, NOISE, jnp.asarray(g.X), jnp.asarray(g.y), chunk=16, jitter=1e-10, counts=g.counts,
                       scatter=g.scatter)  # fmt: skip
        alone = [
            certify(KERNEL, Z, NOISE[j], jnp.asarray(X), jnp.asarray(Y[:, j]), chunk=16, jitter=1e-10) for j in range(3)
        ]
        assert abs(cert.lower - sum(c.lower for c in alone)) <= 1e-10 * abs(cert.lower)
        assert abs(cert.upper - sum(c.upper for c in alone)) <= 1e-9 * abs(cert.upper)


@pytest.mark.parametrize("approximation", slow_beyond(["vfe", "fitc", "exact"], {"vfe"}))
def test_the_gradient_in_every_parameter_against_central_differences(approximation):
    X, Y = problem(n=40, seed=2)
    params = {"kernel": KERNEL, "raw_noise": jnp.asarray(to_raw(NOISE))}
    if approximation == "exact":
        objective, args = ExactNegative(), (jnp.asarray(X), jnp.asarray(Y))
    else:
        objective = SparseNegative(APPROXIMATIONS[approximation].objective, 16, 1e-10)
        params["Z"] = jnp.asarray(X[:7] + 0.01)
        args = (None, jnp.asarray(X), jnp.asarray(Y))
    flat, unravel = jax.flatten_util.ravel_pytree(params)
    f = jax.jit(lambda v: objective(unravel(v), *args))
    grad = np.asarray(jax.grad(f)(flat))
    eps = 1e-6
    for i in range(flat.size):
        step = jnp.zeros_like(flat).at[i].set(eps)
        numeric = (float(f(flat + step)) - float(f(flat - step))) / (2 * eps)
        assert abs(grad[i] - numeric) <= 1e-5 * max(1.0, abs(numeric)), (i, grad[i], numeric)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("estimator", slow_beyond(["exact", "vfe", "sor"], {"exact", "vfe"}))
def test_predictions_and_leave_one_out_equal_each_target_fitted_alone_at_its_noise(estimator, tmp_path):
    X, Y = repeated(*problem(seed=5))
    Xs = np.random.default_rng(6).normal(size=(20, 2))

    def make(noise):
        options = {"kernel": KERNEL, "optimize": False, "noise": noise, "normalize_y": False}
        if estimator == "exact":
            return ExactGPRegressor(**options)
        return SparseGPRegressor(approximation=estimator, inducing=X[:10] + 0.01, **options)

    multi = make(NOISE).fit(X, Y)
    mean, std = multi.predict(Xs, return_std=True)
    latent_cov = multi.predict(Xs, return_cov=True, include_noise=False)[1]
    assert mean.shape == std.shape == (20, 3) and latent_cov.shape == (20, 20, 3)
    if estimator != "exact":  # the variances as computed: each target's
        np.testing.assert_allclose(multi.predict_var(Xs)[1], std**2, rtol=1e-12)
    for j in range(3):
        one = make(NOISE[j]).fit(X, Y[:, j])
        m1, s1 = one.predict(Xs, return_std=True)
        c1 = one.predict(Xs, return_cov=True, include_noise=False)[1]
        assert np.max(np.abs(mean[:, j] - m1)) <= 1e-10 * np.max(np.abs(m1))
        assert np.max(np.abs(std[:, j] - s1)) <= 1e-10 * np.max(s1)
        assert np.max(np.abs(latent_cov[..., j] - c1)) <= 1e-10 * np.max(np.abs(c1))
        assert abs(multi.loo_log_predictive_[j] - one.loo_log_predictive_) <= 1e-9 * abs(one.loo_log_predictive_)
    loaded = load_model(multi.save(tmp_path / "model"))
    np.testing.assert_array_equal(loaded.noise_, multi.noise_)
    np.testing.assert_array_equal(loaded.predict(Xs, return_std=True)[1], std)


def test_theta_holds_one_noise_per_target():
    X, Y = problem(seed=3)
    model = ExactGPRegressor(kernel=KERNEL, noise=NOISE, optimize=False, normalize_y=False).fit(X, Y)
    assert model.hyperparameter_names()[-3:] == ["noise[0]", "noise[1]", "noise[2]"]
    value, grad = model.log_marginal_likelihood(eval_gradient=True)
    assert value == pytest.approx(model.log_marginal_likelihood_, rel=1e-12)
    theta = np.log(np.r_[np.ravel(KERNEL.parameters()["lengthscale"]), 1.2, NOISE])
    eps = 1e-6
    for i in range(theta.size):
        up, down = theta.copy(), theta.copy()
        up[i] += eps
        down[i] -= eps
        numeric = (model.log_marginal_likelihood(up) - model.log_marginal_likelihood(down)) / (2 * eps)
        assert grad[i] == pytest.approx(numeric, rel=1e-5, abs=1e-6)


def test_a_noise_of_the_wrong_shape_is_named():
    X, Y = problem(seed=4)
    with pytest.raises(InputError, match=r"noise of shape \(2,\) .* y needs 2 columns \(got 3 columns\)"):
        ExactGPRegressor(noise=[0.1, 0.2], optimize=False).fit(X, Y)
    with pytest.raises(InputError, match=r"y needs 3 columns \(got one target\)"):
        SparseGPRegressor(noise=NOISE, inducing=5, optimize=False).fit(X, Y[:, 0])
    with pytest.raises(InputError, match="noise must be strictly positive"):
        SparseGPRegressor(noise=[0.1, 0.0, 0.1], inducing=5, optimize=False).fit(X, Y)


@pytest.mark.slow  # whole fits
def test_learnt_noises_follow_each_targets_own():
    """Targets whose noise sd differs thirtyfold: a noise each recovers theirs, covers 95 % of each target's test rows
    within 2 sd and scores them better than one noise for all (whose error bars the leave-one-out check flags)."""
    sd = np.array([0.02, 0.2, 0.6])
    X, Y = problem(n=400, seed=8, sd=sd)
    Xs, Ys = problem(n=2000, seed=9, sd=sd)
    scores = {}
    for name, noise in (("shared", 1.0), ("each", np.ones(3))):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = SparseGPRegressor(noise=noise, random_state=0).fit(X, Y)
        mean, std = model.predict(Xs, return_std=True)
        scores[name] = np.mean(0.5 * np.log(2 * np.pi * std**2) + 0.5 * ((Ys - mean) / std) ** 2, axis=0)
        calibration = [w for w in caught if issubclass(w.category, CalibrationWarning)]
        if name == "each":
            learnt = np.asarray(model.noise_) * model.y_std_**2  # in the targets' units
            assert np.all(np.abs(np.log(learnt / sd**2)) < np.log(1.5)), learnt
            coverage = np.mean(np.abs(Ys - mean) <= 2 * std, axis=0)
            assert np.all(np.abs(coverage - 0.95) < 0.02), coverage
            assert not calibration
        else:
            assert calibration
    # the quietest and the noisiest gain most; the middle one's noise is near the shared compromise
    assert scores["each"][0] < scores["shared"][0] - 1.0 and scores["each"][2] < scores["shared"][2] - 0.1, scores
    assert scores["each"][1] < scores["shared"][1] + 0.02, scores
