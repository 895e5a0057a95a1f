"""Rows that share an input: one weighted row per distinct input gives the all-rows computation exactly.

Every method (VFE, DTC, SoR, FITC on the JAX program and on the host sums; the exact GP): objective,
gradient and predictions against the same functions on every row, to 1e-10 relative; the estimators fit
every row by default, with ``duplicates="drop"`` as the old behaviour.
"""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.flatten_util import ravel_pytree

from sparsegp import DataWarning, ExactGPRegressor, InputError, SparseGPRegressor, load_model
from sparsegp.approximations.augmented import full_data_predict, training_cache
from sparsegp.approximations.common import sparse_predict
from sparsegp.approximations.dtc import dtc_log_marginal, dtc_posterior
from sparsegp.approximations.exact_gp import exact_log_marginal, exact_posterior, exact_predict
from sparsegp.approximations.fitc import fitc_log_marginal, fitc_posterior
from sparsegp.approximations.host_objective import HostObjective
from sparsegp.approximations.vfe import vfe_bound, vfe_posterior
from sparsegp.backends.replicates import collapse, repeated_records
from sparsegp.kernels import SquaredExponential
from sparsegp.options import Joint
from sparsegp.transforms import to_raw

OBJECTIVES = {"vfe": vfe_bound, "dtc": dtc_log_marginal, "fitc": fitc_log_marginal}
POSTERIORS = {"vfe": vfe_posterior, "dtc": dtc_posterior, "fitc": fitc_posterior}


def repeated(n_inputs=40, D=3, seed=0, copies=4):
    """Rows at n_inputs inputs, 1..copies rows each, in shuffled order, targets noisy at every row."""
    r = np.random.default_rng(seed)
    Xd = r.normal(size=(n_inputs, D))
    X = np.repeat(Xd, r.integers(1, copies + 1, size=n_inputs), axis=0)
    y = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] + 0.2 * r.normal(size=X.shape[0])
    order = r.permutation(X.shape[0])
    return X[order], y[order]


def relative(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


def test_collapse_groups_rows_by_input_in_first_row_order():
    X = np.array([[1.0, 2.0], [3.0, 4.0], [1.0, 2.0], [-0.0, 5.0], [0.0, 5.0], [1.0, 2.0]])
    y = np.array([1.0, 2.0, 3.0, 4.0, 6.0, 5.0])
    g = collapse(X, y)
    np.testing.assert_array_equal(g.X, [[1.0, 2.0], [3.0, 4.0], [0.0, 5.0]])
    np.testing.assert_array_equal(g.counts, [3, 1, 2])
    np.testing.assert_allclose(g.y, [3.0, 2.0, 5.0])
    np.testing.assert_allclose(g.scatter, [8.0, 0.0, 2.0])  # (1-3)^2 + 0 + (5-3)^2; (4-5)^2 + (6-5)^2
    np.testing.assert_array_equal(g.group, [0, 1, 0, 2, 2, 0])
    np.testing.assert_array_equal(g.first, [0, 1, 3])
    assert g.repeated and repeated_records(X, y) == 0
    assert repeated_records(np.vstack([X, X[:2]]), np.concatenate([y, y[:2]])) == 2
    # nothing repeats: the rows themselves, bit for bit, weight 1
    Xu, yu = X[:2], y[:2]
    gu = collapse(Xu, yu)
    assert not gu.repeated and np.array_equal(gu.X, Xu) and np.array_equal(gu.y, yu) and np.all(gu.counts == 1)


@pytest.mark.slow
@pytest.mark.parametrize("approximation", ["vfe", "dtc", "fitc"])
def test_collapsed_objective_and_gradient_equal_all_rows(approximation):
    X, y = repeated()
    g = collapse(X, y)
    assert g.X.shape[0] == 40 and X.shape[0] > 80
    kernel, Z, noise = SquaredExponential([0.9, 1.3, 0.7], 1.2), jnp.asarray(g.X[:9] + 0.05), 0.07
    fn = OBJECTIVES[approximation]

    def every(k, z, s):
        return fn(k, z, s, jnp.asarray(X), jnp.asarray(y), chunk=23)

    def grouped(k, z, s):
        return fn(k, z, s, jnp.asarray(g.X), jnp.asarray(g.y), chunk=11, counts=g.counts, scatter=g.scatter)

    v0, g0 = jax.value_and_grad(every, argnums=(0, 1, 2))(kernel, Z, noise)
    v1, g1 = jax.value_and_grad(grouped, argnums=(0, 1, 2))(kernel, Z, noise)
    assert abs(float(v1 - v0)) <= 1e-10 * abs(float(v0))
    assert relative(ravel_pytree(g1)[0], ravel_pytree(g0)[0]) <= 1e-10
    # the host sums (BLAS, written-out backward pass) with weights, against the JAX program on every row
    params = {"kernel": kernel, "raw_noise": jnp.asarray(to_raw(noise)), "Z": Z}
    host = HostObjective(approximation, g.X, g.y, chunk=7, jitter=1e-8, counts=g.counts, scatter=g.scatter)
    every_host = HostObjective(approximation, X, y, chunk=31, jitter=1e-8)
    f1, h1 = host(params)
    f0, h0 = every_host(params)
    assert abs(f1 - f0) <= 1e-10 * abs(f0) and abs(f1 + float(v0)) <= 1e-10 * abs(f0)
    assert relative(ravel_pytree(h1)[0], ravel_pytree(h0)[0]) <= 1e-10


@pytest.mark.slow
@pytest.mark.parametrize("approximation", ["vfe", "dtc", "sor", "fitc"])
def test_collapsed_posterior_predicts_as_all_rows(approximation):
    X, y = repeated(seed=1)
    g = collapse(X, y)
    kernel, Z, noise = SquaredExponential([0.8, 1.1, 0.9], 1.5), jnp.asarray(g.X[:10] + 0.03), 0.05
    post = POSTERIORS.get(approximation, dtc_posterior)
    p0 = post(kernel, Z, noise, jnp.asarray(X), jnp.asarray(y), chunk=17)
    p1 = post(kernel, Z, noise, jnp.asarray(g.X), jnp.asarray(g.y), chunk=9, counts=g.counts, scatter=g.scatter)
    Xs = jnp.asarray(np.random.default_rng(5).normal(size=(13, 3)))
    for full_cov in (False, True):
        m0, v0 = sparse_predict(kernel, p0, Xs, full_cov=full_cov, degenerate=approximation == "sor")
        m1, v1 = sparse_predict(kernel, p1, Xs, full_cov=full_cov, degenerate=approximation == "sor")
        assert relative(m1, m0) <= 1e-10 and relative(v1, v0) <= 1e-10
    if approximation != "fitc":  # the O(n m) predictions over the training rows, with the rows' weights
        c0 = training_cache(kernel, p0, noise, jnp.asarray(X), jnp.asarray(y), 17)
        c1 = training_cache(kernel, p1, noise, jnp.asarray(g.X), jnp.asarray(g.y), 9, counts=g.counts)
        for method in ("augmented", "nystrom"):
            m0, v0 = full_data_predict(kernel, p0, noise, c0, Xs, method=method)
            m1, v1 = full_data_predict(kernel, p1, noise, c1, Xs, method=method)
            assert relative(m1, m0) <= 1e-9 and relative(v1, v0) <= 1e-9


@pytest.mark.slow
def test_collapsed_exact_gp_equals_all_rows():
    X, y = repeated(seed=2)
    g = collapse(X, y)
    kernel, noise = SquaredExponential([0.8, 1.1, 0.9], 1.5), 0.05

    def every(k, s):
        return exact_log_marginal(k, s, jnp.asarray(X), jnp.asarray(y))

    def grouped(k, s):
        return exact_log_marginal(k, s, jnp.asarray(g.X), jnp.asarray(g.y), counts=g.counts, scatter=g.scatter)

    v0, g0 = jax.value_and_grad(every, argnums=(0, 1))(kernel, noise)
    v1, g1 = jax.value_and_grad(grouped, argnums=(0, 1))(kernel, noise)
    assert abs(float(v1 - v0)) <= 1e-10 * abs(float(v0))
    assert relative(ravel_pytree(g1)[0], ravel_pytree(g0)[0]) <= 1e-10
    p0 = exact_posterior(kernel, noise, jnp.asarray(X), jnp.asarray(y))
    p1 = exact_posterior(kernel, noise, jnp.asarray(g.X), jnp.asarray(g.y), counts=g.counts)
    Xs = jnp.asarray(np.random.default_rng(5).normal(size=(13, 3)))
    for full_cov in (False, True):
        m0, c0 = exact_predict(kernel, p0, Xs, full_cov=full_cov)
        m1, c1 = exact_predict(kernel, p1, Xs, full_cov=full_cov)
        assert relative(m1, m0) <= 1e-10 and relative(c1, c0) <= 1e-10


ESTIMATORS = {
    "exact": lambda **kw: ExactGPRegressor(**kw),
    **{
        a: (lambda a=a, **kw: SparseGPRegressor(approximation=a, inducing=12, random_state=0, **kw))
        for a in ("vfe", "dtc", "sor", "fitc")
    },
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_estimators_fit_every_row_collapsed_as_expanded(name):
    """At the same hyper-parameters (optimize=False) a collapsed and an expanded fit are the same model:
    objective, predictions, the leave-one-out check and log_marginal_likelihood with its gradient."""
    X, y = repeated(seed=3)
    Xs = np.random.default_rng(7).normal(size=(11, 3))
    make = ESTIMATORS[name]
    kernel = SquaredExponential([0.9, 1.2, 1.0], 1.1)
    fits = {}
    for mode in ("collapse", "expand"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fits[mode] = make(kernel=kernel, noise=0.08, optimize=False, duplicates=mode).fit(X, y)
    a, b = fits["collapse"], fits["expand"]
    for f in ("predict",):
        ma, sa = getattr(a, f)(Xs, return_std=True)
        mb, sb = getattr(b, f)(Xs, return_std=True)
        assert relative(ma, mb) <= 1e-10 and relative(sa, sb) <= 1e-10
    objective = "log_marginal_likelihood_" if name == "exact" else "objective_"
    assert abs(getattr(a, objective) - getattr(b, objective)) <= 1e-10 * abs(getattr(b, objective))
    assert abs(a.loo_log_predictive_ - b.loo_log_predictive_) <= 1e-10 * abs(b.loo_log_predictive_)
    assert a.loo_coverage_ == b.loo_coverage_ and a.loo_rows_ == b.loo_rows_ == X.shape[0]
    np.testing.assert_allclose(a.loo_z_, b.loo_z_, rtol=1e-9, atol=1e-12)
    data = {} if name == "exact" else {"X": X, "y": y}
    la, ga = a.log_marginal_likelihood(eval_gradient=True, **data)
    lb, gb = b.log_marginal_likelihood(eval_gradient=True, **data)
    assert abs(la - lb) <= 1e-10 * abs(lb) and relative(ga, gb) <= 1e-10
    if name == "exact":
        assert a.X_train_.shape[0] == collapse(X, y).X.shape[0] and b.X_train_.shape[0] == X.shape[0]
        assert np.sum(a.train_counts_) == X.shape[0]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["exact", "vfe"])
def test_every_row_is_fitted_by_default_and_drop_keeps_the_records_once(name, tmp_path):
    X, y = repeated(n_inputs=60, seed=4, copies=1)
    X3, y3 = np.vstack([X] * 3), np.concatenate([y] * 3)  # every record three times
    make = ESTIMATORS[name]
    with pytest.warns(DataWarning, match="120 of 180 training rows repeat an earlier row exactly.*Every row is fitted"):
        every = make(max_iter=40).fit(X3, y3)
    with pytest.warns(DataWarning, match="with duplicates='drop' each record is fitted once"):
        dropped = make(max_iter=40, duplicates="drop").fit(X3, y3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        once = make(max_iter=40).fit(X, y)
    Xs = np.random.default_rng(8).normal(size=(9, 3))
    np.testing.assert_allclose(dropped.predict(Xs), once.predict(Xs), rtol=1e-10, atol=1e-12)
    # three copies of every record say the noise is smaller than one copy does
    assert every.noise_ < once.noise_
    # the collapsed model file round-trips (counts and sums of squares kept for the exact GP)
    loaded = load_model(every.save(tmp_path / "m.npz"))
    np.testing.assert_array_equal(loaded.predict(Xs), every.predict(Xs))
    assert loaded.loo_coverage_ == every.loo_coverage_ and np.array_equal(loaded.loo_z_, every.loo_z_)
    if name == "exact":
        assert loaded.log_marginal_likelihood_ == pytest.approx(every.log_marginal_likelihood_, rel=1e-12)
        assert loaded.X_train_.shape[0] == 60 and np.all(loaded.train_counts_ == 3)


def test_inputs_that_repeat_with_other_targets_are_data_without_a_warning():
    X, y = repeated(seed=5)
    assert repeated_records(X, y) == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataWarning)
        warnings.simplefilter("ignore", UserWarning)
        model = ExactGPRegressor(max_iter=30).fit(X, y)
    assert model.X_train_.shape[0] == 40 and np.sum(model.train_counts_) == X.shape[0]


def test_bad_duplicates_option_and_one_distinct_input_are_named():
    X, y = repeated(seed=6)
    with pytest.raises(InputError, match="duplicates must be one of"):
        ExactGPRegressor(duplicates="keep").fit(X, y)
    with pytest.raises(InputError, match="duplicates must be one of"):
        SparseGPRegressor(duplicates=None).fit(X, y)
    with pytest.raises(InputError, match="1 distinct input"):
        ExactGPRegressor().fit(np.vstack([X[:1]] * 3), [1.0, 2.0, 3.0])


def test_an_int_m_draws_distinct_inputs():
    X, y = repeated(n_inputs=30, seed=9, copies=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = SparseGPRegressor(inducing=30, random_state=0, schedule=Joint(max_iter=5)).fit(X, y)
    assert np.unique(model.Z_, axis=0).shape[0] == 30
    assert np.all(np.diff(model.inducing_indices_) > 0)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["exact", "vfe"])
def test_whole_fits_collapsed_and_expanded_reach_the_same_optimum(name):
    """The optimiser's path may differ (an expanded K + sigma^2 I with identical rows fails to factorise at
    trial points the collapsed K + sigma^2 C^-1 passes), but both fits converge to the same model."""
    X, y = repeated(n_inputs=50, seed=11)
    make = ESTIMATORS[name]
    fits = [make(max_iter=1000, duplicates=mode).fit(X, y) for mode in ("collapse", "expand")]
    assert all(f.optimizer_report_.success for f in fits)
    objective = "log_marginal_likelihood_" if name == "exact" else "objective_"
    a, b = (getattr(f, objective) for f in fits)
    assert a == pytest.approx(b, rel=1e-6)
    Xs = np.random.default_rng(12).normal(size=(9, 3))
    np.testing.assert_allclose(fits[0].predict(Xs), fits[1].predict(Xs), rtol=1e-3, atol=1e-4)
