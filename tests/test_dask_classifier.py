"""SparseGPClassifier on Dask partitions (a LocalCluster of two worker processes) equals the in-memory fit."""

import jax.numpy as jnp
import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from sparsegp import InputError, SparseGPClassifier  # noqa: E402
from sparsegp.backends.dask_rows import DaskRows  # noqa: E402
from sparsegp.classification.svgp import FAMILY  # noqa: E402
from sparsegp.fitting.training import flat_value_and_grad  # noqa: E402
from sparsegp.fitting.variational import InMemoryRows, collapse_rows  # noqa: E402
from sparsegp.kernels import SquaredExponential  # noqa: E402
from sparsegp.likelihoods import Bernoulli, Softmax  # noqa: E402

pytestmark = [pytest.mark.xdist_group("dask"), pytest.mark.slow]


def problem(n=240, seed=0, classes=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    score = np.sin(2 * X[:, 0]) + X[:, 1] + 0.5 * rng.normal(size=n)  # noisy labels: the bound has a finite optimum
    y = (score > 0).astype(int) if classes == 2 else np.digitize(score, [-0.7, 0.7])
    return X, y


@pytest.mark.parametrize("lik, classes", [(Bernoulli("probit"), 2), (Softmax(), 3)])
def test_bound_and_gradient_equal_in_memory(client, lik, classes):
    X, y = problem(classes=classes)
    L = lik.latent_count(classes)
    rng = np.random.default_rng(1)
    params = {
        "kernel": SquaredExponential([0.9, 1.3, 0.7], 1.2),
        "Z": jnp.asarray(X[:10] + 0.1),
        "q_mu": jnp.asarray(rng.normal(size=(10, L))),
        "q_sqrt": jnp.asarray(np.tril(0.1 * rng.normal(size=(L, 10, 10))) + 0.5 * np.eye(10)),
        "mean": jnp.zeros(L),
        "likelihood": lik,
    }
    memory = InMemoryRows(collapse_rows(X, y, classes))
    objective, args, _ = memory.problem(FAMILY, 32, 1.7)
    f_mem, g_mem = flat_value_and_grad(objective, params)(
        np.concatenate([np.ravel(np.asarray(v)) for v in __import__("jax").tree_util.tree_leaves(params)]), *args
    )
    dask_rows = DaskRows(da.from_array(X, chunks=70), da.from_array(y, chunks=70), classes)
    _, _, value_and_grad = dask_rows.problem(FAMILY, 32, 1.7)
    f_dask, g_dask = value_and_grad(params)
    flat_dask = np.concatenate([np.ravel(np.asarray(v)) for v in __import__("jax").tree_util.tree_leaves(g_dask)])
    assert f_dask == pytest.approx(float(f_mem), rel=1e-10)
    np.testing.assert_allclose(flat_dask, np.asarray(g_mem), rtol=1e-8, atol=1e-10)
    # the rows' sites for the natural steps: summed over partitions as in memory
    for on_dask, in_memory in zip(
        dask_rows.site_sums(FAMILY, params, 32, 1.7), memory.site_sums(FAMILY, params, 32, 1.7)
    ):
        np.testing.assert_allclose(np.asarray(on_dask), np.asarray(in_memory), rtol=1e-10, atol=1e-12)


def test_fit_on_dask_equals_fit_in_memory(client):
    """25 iterations on each: the two L-BFGS runs see the same values to rounding, so their paths agree; over
    hundreds of iterations the rounding of the partitions' sums grows into visibly different iterates."""
    X, y = problem(300)
    labels = np.where(y == 1, "b", "a")
    memory = SparseGPClassifier(inducing=12, random_state=0, max_iter=25, tol=1e-8).fit(X, labels)
    on_dask = SparseGPClassifier(inducing=12, random_state=0, max_iter=25, tol=1e-8).fit(
        da.from_array(X, chunks=100), da.from_array(labels, chunks=100)
    )
    assert list(on_dask.classes_) == ["a", "b"]
    assert on_dask.bound_ == pytest.approx(memory.bound_, rel=1e-6)
    np.testing.assert_allclose(on_dask.predict_proba(X), memory.predict_proba(X), atol=1e-5)
    assert on_dask.loo_log_loss_ == pytest.approx(memory.loo_log_loss_, rel=1e-4)


def test_bad_dask_labels_get_clear_errors(client):
    X, _ = problem(60)
    with pytest.raises(InputError, match="continuous"):
        SparseGPClassifier().fit(da.from_array(X, chunks=30), da.from_array(np.linspace(0, 1, 60), chunks=30))
    with pytest.raises(InputError, match="at least two classes"):
        SparseGPClassifier().fit(da.from_array(X, chunks=30), da.from_array(np.zeros(60, int), chunks=30))


@pytest.mark.parametrize("likelihood", ["student-t", "poisson"])
def test_a_non_gaussian_regression_on_dask_equals_the_fit_in_memory(client, likelihood):
    """The regressor's variational fit on partitions (targets checked and put in the fit's units where they live)
    against the same fit in memory, 25 iterations each."""
    from sparsegp import SparseGPRegressor

    rng = np.random.default_rng(4)
    X = rng.uniform(-2, 2, size=(300, 2))
    f = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1]
    y = rng.poisson(np.exp(f)).astype(float) if likelihood == "poisson" else f + 0.2 * rng.standard_t(2, 300)
    options = {"likelihood": likelihood, "inducing": 12, "random_state": 0, "schedule": "joint"}
    memory = SparseGPRegressor(**options).set_params(schedule__max_iter=25).fit(X, y)
    on_dask = SparseGPRegressor(**options).set_params(schedule__max_iter=25)
    on_dask.fit(da.from_array(X, chunks=100), da.from_array(y, chunks=100))
    assert on_dask.bound_ == pytest.approx(memory.bound_, rel=1e-6)
    np.testing.assert_allclose(on_dask.predict(X), memory.predict(X), rtol=1e-5, atol=1e-6)
    assert (on_dask.y_mean_, on_dask.y_std_) == (memory.y_mean_, memory.y_std_)
    if likelihood == "poisson":  # a bad count in one partition is an error that names it
        bad = y.copy()
        bad[250] = -1.0
        with pytest.raises(InputError, match="negative"):
            SparseGPRegressor(**options).fit(da.from_array(X, chunks=100), da.from_array(bad, chunks=100))
