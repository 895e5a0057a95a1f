"""A known noise variance per row (``fit(X, y, noise_variance=v)``): the Gaussian likelihood N(y | f, diag(sigma^2 +
v_i)) in every method.

Each objective against its dense definition on every row (rows grouped by input and known variance, unequal
variances at a shared input included); the host sums' value and gradient against the JAX program's and finite
differences; the certificate brackets the exact log p(y); equal known variances are the homoscedastic model; the
exact GP is scikit-learn's ``alpha`` model; its leave-one-out equals refits without each row.
"""

import warnings

import jax.numpy as jnp
import numpy as np
import pytest
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF
from sklearn.gaussian_process.kernels import ConstantKernel as C

from host_check import assert_host_equals_jax_and_differences
from sparsegp import ExactGPRegressor, InputError, SparseGPRegressor, load_model
from sparsegp._config import LOG_2PI
from sparsegp.approximations.certificate import certify
from sparsegp.approximations.exact_gp import exact_log_marginal
from sparsegp.approximations.host_objective import HostObjective
from sparsegp.approximations.registry import APPROXIMATIONS
from sparsegp.backends.replicates import collapse
from sparsegp.kernels import SquaredExponential
from sparsegp.transforms import to_raw

KERNEL = SquaredExponential([0.9, 1.3], 1.2)
NOISE = 0.07


def problem(seed=0, n_inputs=30):
    """Rows at n_inputs inputs, some repeated with equal and some with unequal known variances."""
    r = np.random.default_rng(seed)
    Xd = r.normal(size=(n_inputs, 2))
    X = np.repeat(Xd, r.integers(1, 4, size=n_inputs), axis=0)
    known = np.where(X[:, 0] > 0, 0.3, 0.01) * r.choice([1.0, 1.0, 2.0], size=X.shape[0])
    y = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] + np.sqrt(known + NOISE) * r.normal(size=X.shape[0])
    return X, y, known


def dense_objective(approximation, kernel, Z, noise, X, y, known):
    """The method's objective from its definition on every row, with Lambda = diag(sigma^2 + v_i)."""
    K, Kuf = np.asarray(kernel.K(X)), np.asarray(kernel.K(Z, X))
    Q = Kuf.T @ np.linalg.solve(np.asarray(kernel.K(Z)), Kuf)
    d = np.diag(K) - np.diag(Q)
    lam = noise + known + (d if approximation == "fitc" else 0.0)
    cov = Q + np.diag(lam)
    value = -0.5 * (np.linalg.slogdet(cov)[1] + y @ np.linalg.solve(cov, y) + len(y) * LOG_2PI)
    return value - (0.5 * np.sum(d / lam) if approximation == "vfe" else 0.0)


def grouped(X, y, known):
    g = collapse(X, y, known)
    return g, {"counts": g.counts, "scatter": g.scatter, "known": g.known}


@pytest.mark.parametrize("approximation", ["vfe", "dtc", "fitc"])
def test_each_objective_equals_its_dense_definition_on_every_row(approximation):
    X, y, known = problem()
    g, weights = grouped(X, y, known)
    assert g.X.shape[0] < X.shape[0] and np.unique(g.X, axis=0).shape[0] < g.X.shape[0]  # unequal ones kept apart
    Z = jnp.asarray(np.unique(X, axis=0)[:8] + 0.05)
    value = APPROXIMATIONS[approximation].objective(
        KERNEL, Z, NOISE, jnp.asarray(g.X), jnp.asarray(g.y), chunk=17, jitter=0.0, **weights
    )
    reference = dense_objective(approximation, KERNEL, np.asarray(Z), NOISE, X, y, known)
    assert abs(float(value) - reference) <= 1e-9 * abs(reference)


@pytest.mark.parametrize("approximation", ["vfe", "dtc", "fitc"])
@pytest.mark.slow
def test_host_sums_equal_the_jax_program_and_finite_differences(approximation):
    X, y, known = problem(seed=1)
    g, weights = grouped(X, y, known)
    params = {
        "kernel": KERNEL,
        "raw_noise": jnp.asarray(to_raw(NOISE)),
        "Z": jnp.asarray(np.unique(X, axis=0)[:7] + 0.05),
    }
    assert_host_equals_jax_and_differences(approximation, g.X, g.y, weights, params)


@pytest.mark.slow
def test_the_certificate_brackets_the_exact_evidence():
    X, y, known = problem(seed=3)
    g, weights = grouped(X, y, known)
    exact = float(exact_log_marginal(KERNEL, NOISE, jnp.asarray(X), jnp.asarray(y), known=jnp.asarray(known)))
    for m in (4, 25):
        Z = jnp.asarray(np.unique(X, axis=0)[:m] + 0.01)
        cert = certify(KERNEL, Z, NOISE, jnp.asarray(g.X), jnp.asarray(g.y), chunk=11, jitter=1e-10, **weights)
        vfe = float(APPROXIMATIONS["vfe"].objective(KERNEL, Z, NOISE, jnp.asarray(g.X), jnp.asarray(g.y), chunk=11,
                                                    jitter=1e-10, **weights))  # fmt: skip
        assert abs(cert.lower - vfe) <= 1e-10 * abs(vfe)
        assert cert.lower <= exact <= cert.upper
        # the host's two weighted passes give the same pair
        host = HostObjective("vfe", g.X, g.y, chunk=11, jitter=1e-10, **weights)
        pair = host.certificate({"kernel": KERNEL, "raw_noise": jnp.asarray(to_raw(NOISE)), "Z": Z})
        assert abs(pair.upper - cert.upper) <= 1e-9 * abs(cert.upper)


@pytest.mark.filterwarnings("ignore::sparsegp.CalibrationWarning")
def test_exact_gp_equals_scikit_learns_alpha_model():
    X, y, known = problem(seed=4)
    X, y, known = X[:40], y[:40], known[:40]
    model = ExactGPRegressor(kernel=SquaredExponential(0.8, 1.5), optimize=False, noise=1e-3, normalize_y=False)
    model.fit(X, y, noise_variance=known)
    sk = GaussianProcessRegressor(C(1.5, "fixed") * RBF(0.8, "fixed"), alpha=known + 1e-3, optimizer=None).fit(X, y)
    Xs = np.random.default_rng(5).normal(size=(30, 2))
    mean, cov = model.predict(Xs, return_cov=True, include_noise=False)
    mean_sk, cov_sk = sk.predict(Xs, return_cov=True)
    assert np.max(np.abs(mean - mean_sk)) <= 1e-8
    assert np.max(np.abs(cov - cov_sk)) <= 1e-8
    assert abs(model.log_marginal_likelihood_ - sk.log_marginal_likelihood_value_) <= 1e-8


@pytest.mark.parametrize("estimator", ["exact", "vfe", "fitc"])
@pytest.mark.slow
def test_equal_known_variances_are_the_homoscedastic_model(estimator):
    X, y, _ = problem(seed=6)
    c, sigma2 = 0.05, 0.02
    options = {"kernel": KERNEL, "optimize": False, "normalize_y": False}
    if estimator == "exact":
        make = lambda noise: ExactGPRegressor(noise=noise, **options)  # noqa: E731
    else:
        Z = np.unique(X, axis=0)[:9] + 0.01
        make = lambda noise: SparseGPRegressor(approximation=estimator, inducing=Z, noise=noise, **options)  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        known = make(sigma2).fit(X, y, noise_variance=c)
        plain = make(sigma2 + c).fit(X, y)
    Xs = np.random.default_rng(7).normal(size=(25, 2))
    m1, s1 = known.predict(Xs, return_std=True, noise_variance=c)
    m0, s0 = plain.predict(Xs, return_std=True)
    assert np.max(np.abs(m1 - m0)) <= 1e-10 * np.max(np.abs(m0))
    assert np.max(np.abs(s1 - s0)) <= 1e-10 * np.max(s0)
    # without the test rows' own variance only the learnt noise is added
    assert np.all(known.predict(Xs, return_std=True)[1] < s1)
    lml = "log_marginal_likelihood_" if estimator == "exact" else "objective_"
    assert abs(getattr(known, lml) - getattr(plain, lml)) <= 1e-10 * abs(getattr(plain, lml))


@pytest.mark.slow  # whole fits; the variances' algebra is checked against dense definitions above
@pytest.mark.filterwarnings("ignore::sparsegp.CalibrationWarning")
def test_exact_leave_one_out_equals_refits_without_each_row():
    X, y, known = problem(seed=8, n_inputs=12)
    kernel = SquaredExponential([0.9, 1.3], 1.2)
    model = ExactGPRegressor(kernel=kernel, optimize=False, noise=0.02, normalize_y=False).fit(
        X, y, noise_variance=known
    )
    from sparsegp.fitting.calibration import loo_in_batches

    Xn = X
    mean, var, _ = loo_in_batches(model._loo_batch, Xn, y, known=known)
    for j in range(X.shape[0]):
        keep = np.arange(X.shape[0]) != j
        refit = ExactGPRegressor(kernel=kernel, optimize=False, noise=0.02, normalize_y=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            refit.fit(X[keep], y[keep], noise_variance=known[keep])
        mu, sd = refit.predict(X[j : j + 1], return_std=True, noise_variance=known[j : j + 1])
        assert abs(mean[j] - mu[0]) <= 1e-8 and abs(var[j] - sd[0] ** 2) <= 1e-8


@pytest.mark.slow  # whole fits; the variances' algebra is checked against dense definitions above
@pytest.mark.filterwarnings("ignore::sparsegp.CalibrationWarning")
def test_sparse_leave_one_out_at_every_input_is_the_exact_gps():
    X, y, known = problem(seed=9, n_inputs=15)
    options = {"kernel": KERNEL, "optimize": False, "noise": 0.02, "normalize_y": False}
    exact = ExactGPRegressor(**options).fit(X, y, noise_variance=known)
    sparse = SparseGPRegressor(approximation="vfe", inducing=np.unique(X, axis=0), jitter=1e-12, **options)
    sparse.fit(X, y, noise_variance=known)
    assert abs(sparse.loo_log_predictive_ - exact.loo_log_predictive_) <= 1e-6


@pytest.mark.slow  # whole fits; the variances' algebra is checked against dense definitions above
def test_model_file_keeps_the_known_variances(tmp_path):
    X, y, known = problem(seed=10, n_inputs=15)
    model = ExactGPRegressor(kernel=KERNEL, optimize=False, noise=0.02).fit(X, y, noise_variance=known)
    loaded = load_model(model.save(tmp_path / "m"))
    Xs = np.random.default_rng(11).normal(size=(9, 2))
    assert np.array_equal(loaded.predict(Xs, return_std=True)[1], model.predict(Xs, return_std=True)[1])
    assert loaded.log_marginal_likelihood_ == model.log_marginal_likelihood_


@pytest.mark.parametrize(
    "value, message",
    [(-1.0, "negative"), (np.full(3, 0.1), "shape"), (np.array([np.nan] + [0.1] * 41), "NaN")],
)
def test_bad_known_variances_are_named(value, message):
    X, y, _ = problem(seed=12, n_inputs=20)
    assert X.shape[0] == 42
    with pytest.raises(InputError, match=message):
        ExactGPRegressor(optimize=False).fit(X, y, noise_variance=value)
    with pytest.raises(InputError, match="noise_variance"):
        SparseGPRegressor(prediction="augmented", inducing=5, optimize=False).fit(X, y, noise_variance=0.1)
