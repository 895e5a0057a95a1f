"""Dask: the statistics on a LocalCluster of two worker processes equal the in-memory ones.

Objective and gradient to 1e-9 relative for VFE, DTC, SoR and FITC; fits and predictions on dask
arrays against the same fits on NumPy arrays; a worker killed in the middle of a fit.
"""

import os
import warnings

import jax.numpy as jnp
import numpy as np
import pytest
from jax.flatten_util import ravel_pytree
from sklearn.exceptions import ConvergenceWarning

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from sparsegp import InputError, SparseGPRegressor  # noqa: E402
from sparsegp.approximations.certificate import certify  # noqa: E402
from sparsegp.approximations.host_objective import HostObjective  # noqa: E402
from sparsegp.backends.dask_sums import DaskStats  # noqa: E402
from sparsegp.kernels import SquaredExponential  # noqa: E402
from sparsegp.options import Joint
from sparsegp.transforms import to_raw  # noqa: E402

APPROXIMATIONS = ["vfe", "dtc", "sor", "fitc"]

# one xdist worker runs this module: one LocalCluster for all of it, not one per worker
pytestmark = [pytest.mark.xdist_group("dask"), pytest.mark.slow]


def problem(n=230, D=3, seed=0):
    r = np.random.default_rng(seed)
    X = r.normal(size=(n, D))
    y = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] + 0.1 * r.normal(size=n)
    return X, y


def relative(a, b):
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))) / np.max(np.abs(np.asarray(b))))


@pytest.mark.parametrize("approximation", APPROXIMATIONS)
def test_objective_and_gradient_equal_in_memory(client, approximation):
    X, y = problem()
    Z = X[:12] + 0.1
    params = {
        "kernel": SquaredExponential([0.9, 1.3, 0.7], 1.2),
        "raw_noise": jnp.asarray(to_raw(0.07)),
        "Z": jnp.asarray(Z),
    }
    local = HostObjective(approximation, X, y, chunk=40, jitter=1e-8)
    data = DaskStats(da.from_array(X, chunks=(70, 3)), da.from_array(y, chunks=70), 40, client)
    remote = HostObjective(approximation, data=data, jitter=1e-8)
    f0, g0 = local(params)
    f1, g1 = remote(params)
    assert abs(f1 - f0) <= 1e-9 * abs(f0)
    assert relative(ravel_pytree(g1)[0], ravel_pytree(g0)[0]) <= 1e-9
    assert data.n_partitions == 4 and data.evaluations == 1
    # each partition's chunks run on as many threads as Dask gave its worker (1 here), not one per core
    assert client.gather([client.submit(lambda part: part.threads, p) for p in data.parts]) == [1, 1, 1, 1]
    m = Z.shape[0]
    # what travels per evaluation: O(m^2 + m D) per partition, nothing of size n
    assert data.bytes_moved < 4 * data.n_partitions * 8 * (3 * m * m + 4 * m * 3 + 64)
    data.close()


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("approximation", APPROXIMATIONS)
def test_fit_and_predict_equal_in_memory(client, approximation):
    X, y = problem()
    Xt = problem(50, seed=1)[0]
    common = dict(approximation=approximation, inducing=10, max_iter=15, random_state=3)
    local = SparseGPRegressor(**common).fit(X, y)
    remote = SparseGPRegressor(**common).fit(da.from_array(X, chunks=(60, 3)), da.from_array(y, chunks=60))
    np.testing.assert_array_equal(remote.inducing_indices_, local.inducing_indices_)
    assert remote.n_iter_ == local.n_iter_
    # Fixed parameters agree to rounding (test above). Along 15 L-BFGS steps the two routes' last-bit
    # differences grow (the in-memory JAX program and the partition sums associate differently) to
    # 2.5e-9 relative on VFE's objective and below 1e-11 on the others; in-memory fits with two chunk
    # sizes differ as much (BENCHMARKS.md).
    assert remote.objective_ == pytest.approx(local.objective_, rel=1e-8)
    assert remote.noise_ == pytest.approx(local.noise_, rel=1e-8)
    mean0, std0 = local.predict(Xt, return_std=True)
    mean1, std1 = remote.predict(Xt, return_std=True)
    assert relative(mean1, mean0) <= 1e-8 and relative(std1, std0) <= 1e-8
    lazy_mean, lazy_std = remote.predict(da.from_array(Xt, chunks=(20, 3)), return_std=True)
    assert isinstance(lazy_mean, da.Array)
    np.testing.assert_allclose(lazy_mean.compute(), mean1, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(lazy_std.compute(), std1, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("approximation", APPROXIMATIONS)
def test_posterior_at_fixed_hyperparameters_equals_in_memory(client, approximation):
    X, y = problem()
    Xt = problem(50, seed=1)[0]
    common = dict(approximation=approximation, inducing=10, optimize=False, random_state=3)
    local = SparseGPRegressor(**common).fit(X, y)
    remote = SparseGPRegressor(**common).fit(da.from_array(X, chunks=(60, 3)), da.from_array(y, chunks=60))
    assert remote.objective_ == pytest.approx(local.objective_, rel=1e-9)
    # the certificate from the partitions' sums (one more pass) equals the in-memory trace bound; rows in
    # memory, the fit's own certificate is log p(y) itself (at most 20,000 rows), never looser
    yn = (y - local.y_mean_) / local.y_std_
    trace = certify(
        local.kernel_, jnp.asarray(local.Z_), local.noise_, jnp.asarray(X), jnp.asarray(yn), chunk=64, jitter=1e-8
    )
    assert (remote.certificate_["bound"], local.certificate_["bound"]) == ("trace", "exact")
    assert remote.upper_bound_ == pytest.approx(trace.upper, rel=1e-9)
    assert remote.gap_ == pytest.approx(trace.gap, rel=1e-7, abs=1e-9 * abs(trace.upper))
    assert local.upper_bound_ <= remote.upper_bound_ + 1e-9 * abs(trace.upper)
    mean0, std0 = local.predict(Xt, return_std=True)
    mean1, std1 = remote.predict(Xt, return_std=True)
    assert relative(mean1, mean0) <= 1e-9 and relative(std1, std0) <= 1e-9


def repeated_problem(seed=0):
    """230 rows at 90 inputs (1 to 4 rows each, in shuffled order, so copies fall in several partitions)."""
    r = np.random.default_rng(seed)
    Xd = r.normal(size=(90, 3))
    X = np.repeat(Xd, r.integers(1, 5, size=90), axis=0)[:230]
    X = X[r.permutation(X.shape[0])]
    y = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] + 0.1 * r.normal(size=X.shape[0])
    return X, y


@pytest.mark.parametrize("approximation", APPROXIMATIONS)
def test_repeated_inputs_grouped_on_the_partitions_equal_every_row_in_memory(client, approximation):
    """Each partition sums over one weighted row per distinct input of its rows: the all-rows sums."""
    X, y = repeated_problem()
    params = {
        "kernel": SquaredExponential([0.9, 1.3, 0.7], 1.2),
        "raw_noise": jnp.asarray(to_raw(0.07)),
        "Z": jnp.asarray(np.unique(X, axis=0)[:12] + 0.1),  # distinct inducing inputs: K_uu well conditioned
    }
    local = HostObjective(approximation, X, y, chunk=40, jitter=1e-8)
    data = DaskStats(da.from_array(X, chunks=(70, 3)), da.from_array(y, chunks=70), 40, client, grouped=True)
    rows = client.gather([client.submit(lambda part: part.rows, p) for p in data.parts])
    assert sum(rows) < X.shape[0]  # fewer rows than records on the partitions
    f0, g0 = local(params)
    f1, g1 = HostObjective(approximation, data=data, jitter=1e-8)(params)
    assert abs(f1 - f0) <= 1e-10 * abs(f0)
    assert relative(ravel_pytree(g1)[0], ravel_pytree(g0)[0]) <= 1e-10
    data.close()


@pytest.mark.parametrize("approximation", ["vfe", "fitc"])
def test_known_noise_variances_on_the_partitions_equal_every_row_in_memory(client, approximation):
    """Rows grouped on each partition by input and known variance: the weighted sums, value and gradient, of every
    row in memory; and a fit given the variances on dask arrays equals the same fit in memory."""
    X, y = repeated_problem()
    known = np.where(X[:, 0] > 0, 0.2, 0.01) * np.random.default_rng(1).choice([1.0, 2.0], size=X.shape[0])
    params = {
        "kernel": SquaredExponential([0.9, 1.3, 0.7], 1.2),
        "raw_noise": jnp.asarray(to_raw(0.07)),
        "Z": jnp.asarray(np.unique(X, axis=0)[:12] + 0.1),
    }
    n = X.shape[0]
    local = HostObjective(
        approximation, X, y, chunk=40, jitter=1e-8, counts=np.ones(n), scatter=np.zeros(n), known=known
    )
    data = DaskStats(
        da.from_array(X, chunks=(70, 3)), da.from_array(y, chunks=70), 40, client, grouped=True,
        known=da.from_array(known, chunks=70),
    )  # fmt: skip
    f0, g0 = local(params)
    remote = HostObjective(approximation, data=data, jitter=1e-8)
    f1, g1 = remote(params)
    assert abs(f1 - f0) <= 1e-10 * abs(f0)
    assert relative(ravel_pytree(g1)[0], ravel_pytree(g0)[0]) <= 1e-10
    assert remote.certificate(params).upper == pytest.approx(local.certificate(params).upper, rel=1e-10)
    data.close()
    Z = np.unique(X, axis=0)[:10] + 0.05
    common = dict(approximation=approximation, inducing=Z, optimize=False, noise=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = SparseGPRegressor(duplicates="expand", **common).fit(X, y, noise_variance=known)
        lazy = SparseGPRegressor(**common).fit(
            da.from_array(X, chunks=(60, 3)), da.from_array(y, chunks=60), noise_variance=known
        )
    assert lazy.objective_ == pytest.approx(fitted.objective_, rel=1e-10)
    assert lazy.upper_bound_ == pytest.approx(fitted.upper_bound_, rel=1e-10)
    assert lazy.loo_log_predictive_ == pytest.approx(fitted.loo_log_predictive_, rel=1e-10)
    Xt = problem(30, seed=2)[0]
    assert relative(lazy.predict(Xt), fitted.predict(Xt)) <= 1e-10


def test_several_targets_on_dask_equal_the_fit_in_memory(client):
    """y of shape (n, 3) on the partitions: the objective, the leave-one-out figures and the predictions of the
    same fit in memory; predictions on dask inputs have shape (t, 3)."""
    X, y = repeated_problem(2)
    Y = np.column_stack([y, 2 * np.cos(X[:, 1]), X[:, 0] * X[:, 2]])
    Z = np.unique(X, axis=0)[:10] + 0.05
    common = dict(inducing=Z, optimize=False, noise=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        local = SparseGPRegressor(**common).fit(X, Y)
        remote = SparseGPRegressor(**common).fit(da.from_array(X, chunks=(60, 3)), da.from_array(Y, chunks=(60, 2)))
    assert remote.objective_ == pytest.approx(local.objective_, rel=1e-10)
    np.testing.assert_allclose(remote.y_std_, local.y_std_, rtol=1e-12)
    np.testing.assert_allclose(remote.loo_log_predictive_, local.loo_log_predictive_, rtol=1e-10)
    Xt = problem(30, seed=3)[0]
    mean, std = remote.predict(da.from_array(Xt, chunks=(10, 3)), return_std=True)
    assert mean.shape == std.shape == (30, 3)
    m0, s0 = local.predict(Xt, return_std=True)
    assert relative(mean.compute(), m0) <= 1e-10 and relative(std.compute(), s0) <= 1e-10


@pytest.mark.parametrize("approximation", ["vfe", "fitc"])
def test_a_fit_with_repeated_inputs_on_dask_equals_every_row_in_memory(client, approximation):
    X, y = repeated_problem(1)
    Xt = problem(50, seed=1)[0]
    Z = np.unique(X, axis=0)[:10] + 0.05
    common = dict(approximation=approximation, inducing=Z, optimize=False, noise=0.1)
    local = SparseGPRegressor(duplicates="expand", **common).fit(X, y)
    remote = SparseGPRegressor(**common).fit(da.from_array(X, chunks=(60, 3)), da.from_array(y, chunks=60))
    assert remote.objective_ == pytest.approx(local.objective_, rel=1e-10)
    mean0, std0 = local.predict(Xt, return_std=True)
    mean1, std1 = remote.predict(Xt, return_std=True)
    assert relative(mean1, mean0) <= 1e-10 and relative(std1, std0) <= 1e-10
    assert remote.loo_rows_ == local.loo_rows_ == X.shape[0] and remote.loo_coverage_ == local.loo_coverage_
    assert remote.loo_log_predictive_ == pytest.approx(local.loo_log_predictive_, rel=1e-10)
    # an int m draws m distinct inputs on the cluster too (rows repeating a drawn input are redrawn)
    drawn = SparseGPRegressor(inducing=60, optimize=False, random_state=0).fit(
        da.from_array(X, chunks=(60, 3)), da.from_array(y, chunks=60)
    )
    assert np.unique(drawn.Z_, axis=0).shape[0] == 60 and np.unique(drawn.inducing_indices_).size == 60
    np.testing.assert_array_equal(drawn.Z_, X[drawn.inducing_indices_])
    with pytest.raises(InputError, match="duplicates='drop' is not available on dask arrays"):
        SparseGPRegressor(duplicates="drop").fit(da.from_array(X, chunks=(60, 3)), da.from_array(y, chunks=60))
    Y = np.column_stack([y, 2 * y])
    with pytest.raises(InputError, match="one noise variance per target is not available on dask arrays"):
        SparseGPRegressor(noise=[0.1, 0.1]).fit(da.from_array(X, chunks=(60, 3)), da.from_array(Y, chunks=(60, 2)))


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_large_n_strategy_on_dask_equals_in_memory(client):
    X, y = problem(600)
    common = dict(inducing=10, max_iter=15, random_state=3, subset=150, refine_iter=3)
    local = SparseGPRegressor(**common).fit(X, y)
    remote = SparseGPRegressor(**common).fit(da.from_array(X, chunks=(150, 3)), da.from_array(y, chunks=150))
    assert [st["rows"] for st in remote.stages_] == [st["rows"] for st in local.stages_] == [150, 600]
    assert remote.n_iter_ == local.n_iter_
    assert remote.stages_[0]["report"].objective == pytest.approx(local.stages_[0]["report"].objective, rel=1e-9)
    assert remote.objective_ == pytest.approx(local.objective_, rel=1e-8)
    Xt = problem(50, seed=1)[0]
    assert relative(remote.predict(Xt), local.predict(Xt)) <= 1e-8


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_dask_fits_are_reproducible_bit_for_bit(client):
    X, y = problem()
    fits = [
        SparseGPRegressor(inducing=10, random_state=3, schedule=Joint(max_iter=10)).fit(
            da.from_array(X, chunks=(60, 3)), da.from_array(y, chunks=60)
        )
        for _ in range(2)
    ]
    assert fits[0].objective_ == fits[1].objective_
    np.testing.assert_array_equal(fits[0].Z_, fits[1].Z_)


def misaligned(a, offset=4):
    """A copy of ``a`` starting ``offset`` bytes past a 64-byte boundary, as a deserialised buffer can."""
    a = np.asarray(a, dtype=np.float64)
    buf = np.zeros(a.nbytes + 64 + offset, dtype=np.uint8)
    start = (-buf.ctypes.data) % 64 + offset
    out = buf[start : start + a.nbytes].view(np.float64).reshape(a.shape)
    out[...] = a
    assert not out.flags.aligned
    return out


def test_partition_results_do_not_depend_on_where_the_arguments_landed():
    from sparsegp.backends.blas_sums import BlasStats
    from sparsegp.backends.dask_sums import _backward, _forward
    from sparsegp.backends.jax_sums import Stats

    X, y = problem(70)
    kernel, Z = SquaredExponential([0.9, 1.3, 0.7], 1.2), X[:12] + 0.1
    L = np.linalg.cholesky(np.asarray(kernel.K(jnp.asarray(Z), jnp.asarray(Z))) + 1e-6 * np.eye(12))
    Linv = np.linalg.inv(L)
    part = BlasStats(X, y, 40)
    fwd = _forward(part, (kernel, Z, Linv))
    moved = _forward(part, (kernel, misaligned(Z), misaligned(Linv)))
    assert np.array_equal(ravel_pytree(moved[0])[0], ravel_pytree(fwd[0])[0])
    ct = Stats(*(np.random.default_rng(1).normal(size=np.shape(v)) for v in fwd[0]))
    here = _backward(part, fwd, (Linv, L, ct))
    there = _backward(part, fwd, (misaligned(Linv), misaligned(L), Stats(*map(misaligned, ct))))
    assert np.array_equal(ravel_pytree(there)[0], ravel_pytree(here)[0])


@pytest.mark.parametrize("name", ["InfoGain", "ConditionalVariance", "DifferentialEntropy"])
def test_greedy_selection_on_partitions_equals_in_memory(client, name):
    from sparsegp import selection
    from sparsegp.selection.dask_select import select_dask

    X, y = problem(300)
    kernel, noise = SquaredExponential([0.9, 1.3, 0.7], 1.2), 0.05
    selector = getattr(selection, name)(25)
    local = selector.select(kernel, noise, X, y)
    remote = select_dask(selector, kernel, noise, da.from_array(X, chunks=(70, 3)), da.from_array(y, chunks=70))
    np.testing.assert_array_equal(remote.indices, local.indices)
    np.testing.assert_allclose(remote.curve("score"), local.curve("score"), rtol=1e-9, atol=1e-12)


def test_a_partition_state_that_was_recomputed_is_detected():
    from sparsegp.selection.dask_select import PartitionState

    X, y = problem(20)
    state = PartitionState(X, y, SquaredExponential([1.0, 1.0, 1.0], 1.0), 0.1, d_max=5, offset=0)
    with pytest.raises(RuntimeError, match="state was lost"):
        state.new_row(2, X[0], np.zeros(2), 1.0)  # the driver has made 2 inclusions, the partition none


def test_a_fit_on_dask_selects_its_inducing_rows_on_the_partitions(client):
    from sparsegp.selection import InfoGain, SmolaBartlett
    from sparsegp.selection.dask_select import select_dask

    X, y = problem()
    common = dict(inducing=InfoGain(12), optimize=False, random_state=0)
    local = SparseGPRegressor(**common).fit(X, y)
    remote = SparseGPRegressor(**common).fit(da.from_array(X, chunks=(60, 3)), da.from_array(y, chunks=60))
    np.testing.assert_array_equal(remote.inducing_indices_, local.inducing_indices_)
    np.testing.assert_array_equal(remote.Z_, local.Z_)
    assert remote.objective_ == pytest.approx(local.objective_, rel=1e-9)
    with pytest.raises(InputError, match="only InfoGain"):
        select_dask(
            SmolaBartlett(5),
            SquaredExponential([1.0, 1.0, 1.0], 1.0),
            0.1,
            da.from_array(X, chunks=(60, 3)),
            da.from_array(y, chunks=60),
        )


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_cli_fits_a_dask_dataframe_on_a_scheduler(client, tmp_path, capsys):
    from sparsegp.backends.dask_partitions import read_table as _read_dask_table
    from sparsegp.cli import main
    from sparsegp.errors import SparseGPError
    from sparsegp.estimators import load_model

    X, y = problem(300)
    path = tmp_path / "train.csv"
    np.savetxt(path, np.column_stack([X, y]), delimiter=",", header="a,b,c,y", comments="")
    common = [
        "fit",
        "--data",
        str(path),
        "--target",
        "y",
        "--model",
        "vfe",
        "--inducing",
        "10",
        "--max-iter",
        "10",
        "--quiet",
    ]
    assert main(common + ["--out", str(tmp_path / "mem.npz")]) == 0
    assert main(common + ["--dask", client.scheduler.address, "--out", str(tmp_path / "dask.npz")]) == 0
    out = capsys.readouterr().out
    assert "train.csv" in out and "300" in out
    mem, remote = load_model(str(tmp_path / "mem.npz")), load_model(str(tmp_path / "dask.npz"))
    assert list(remote.feature_names_in_) == ["a", "b", "c"]
    assert remote.objective_ == pytest.approx(mem.objective_, rel=1e-8)
    assert relative(remote.predict(X[:20]), mem.predict(X[:20])) <= 1e-8
    with pytest.raises(SparseGPError, match="not a column"):
        _read_dask_table(str(path), "z", ",")


def test_bad_dask_inputs_get_clear_errors(client):
    X, y = problem(40)
    bad = X.copy()
    bad[17, 1] = np.nan
    with pytest.raises(InputError, match="NaN"):
        SparseGPRegressor(inducing=5).fit(da.from_array(bad, chunks=(10, 3)), da.from_array(y, chunks=10))
    with pytest.raises(InputError, match="prediction='standard'"):
        SparseGPRegressor(inducing=5, prediction="augmented", approximation="sor").fit(
            da.from_array(X, chunks=(10, 3)), da.from_array(y, chunks=10)
        )
    with pytest.raises(InputError, match="rows"):
        SparseGPRegressor(inducing=5).fit(da.from_array(X, chunks=(10, 3)), da.from_array(y[:-1], chunks=10))


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_a_worker_killed_mid_fit_gives_a_retried_evaluation_with_the_same_result(client):
    X, y = problem()
    common = dict(approximation="vfe", inducing=10, max_iter=8, random_state=0)
    local = SparseGPRegressor(**common).fit(X, y)
    killed = []

    def kill_one_worker(iteration, value, params):
        if iteration == 3 and not killed:
            worker = sorted(client.scheduler_info()["workers"])[0]
            try:
                client.run(os._exit, 1, workers=[worker])  # the process dies; its nanny starts a new one
            except Exception:  # the call itself loses its connection
                pass
            killed.append(worker)
        return False

    remote = SparseGPRegressor(**common, callback=kill_one_worker).fit(
        da.from_array(X, chunks=(60, 3)), da.from_array(y, chunks=60)
    )
    assert killed
    assert remote.objective_ == pytest.approx(local.objective_, rel=1e-8)
    client.wait_for_workers(2, timeout=60)


def failing_sends(client, monkeypatch, every: int):
    """``client.submit`` raising, as an unreachable scheduler would, for every ``every``-th sending of the
    parameters (``every`` = 1: each); the sendings counted."""
    real, calls = client.submit, []

    def submit(fn, *args, **kwargs):
        if getattr(fn, "__name__", "") == "_as_is":
            calls.append(1)
            if len(calls) % every == (1 % every):
                raise OSError("the scheduler's comm closed")
        return real(fn, *args, **kwargs)

    monkeypatch.setattr(client, "submit", submit)
    monkeypatch.setattr("sparsegp.backends.dask_sums.time.sleep", lambda s: None)
    return calls


def test_parameters_that_fail_to_be_sent_are_sent_again(client, monkeypatch):
    """A sending of the parameters that fails (the scheduler's comm closed) is tried again; the fit goes on."""
    X, y = problem()
    common = dict(approximation="vfe", inducing=10, max_iter=5, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        local = SparseGPRegressor(**common).fit(X, y)
        calls = failing_sends(client, monkeypatch, every=3)
        remote = SparseGPRegressor(**common).fit(da.from_array(X, chunks=(60, 3)), da.from_array(y, chunks=60))
    assert len(calls) > 6
    assert remote.objective_ == pytest.approx(local.objective_, rel=1e-8)


def test_a_sending_that_keeps_failing_raises_a_clear_error(client, monkeypatch):
    from sparsegp.errors import DistributedError

    X, y = problem(60)
    failing_sends(client, monkeypatch, every=1)
    with pytest.raises(DistributedError, match="sending the parameters .* failed 3 times .*OSError"):
        SparseGPRegressor(inducing=5, schedule=Joint(max_iter=3)).fit(
            da.from_array(X, chunks=(30, 3)), da.from_array(y, chunks=30)
        )


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_the_same_schedule_runs_on_numpy_and_dask(client):
    """One pipeline for both backends: a greedy start (info-gain over all rows, on the partitions for dask
    arrays) and the large-n strategy (a subset stage on fetched rows, then refinement on all rows)."""
    from sparsegp.selection import InfoGain

    X, y = problem()
    Xt = problem(40, seed=1)[0]
    common = dict(inducing=InfoGain(12), subset=120, refine_iter=2, max_iter=10, random_state=3)
    local = SparseGPRegressor(**common).fit(X, y)
    remote = SparseGPRegressor(**common).fit(da.from_array(X, chunks=(60, 3)), da.from_array(y, chunks=60))
    np.testing.assert_array_equal(remote.inducing_indices_, local.inducing_indices_)
    assert [s["rows"] for s in remote.stages_] == [s["rows"] for s in local.stages_] == [120, 230]
    # the subset stage runs in memory on the same rows either way (the targets' mean and spread come from
    # Dask reductions, equal to NumPy's to rounding): the same iterations and objective
    first = [fit.stages_[0]["report"] for fit in (local, remote)]
    assert first[0].n_iter == first[1].n_iter and first[0].objective == pytest.approx(first[1].objective, abs=1e-8)
    assert remote.objective_ == pytest.approx(local.objective_, rel=1e-8)
    assert relative(remote.predict(Xt), local.predict(Xt)) <= 1e-7


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_auto_growth_equals_in_memory(client, monkeypatch):
    # the same schedule code on both backends: every size of the growth, its certificate and the final model
    from sparsegp.fitting import growth, pretrain

    monkeypatch.setattr(growth, "START_M", 8)  # a first size small enough to grow from on 300 rows
    monkeypatch.setattr(pretrain, "PRETRAIN_ROWS", 100)  # and the exact GP's start on a subset of them
    X, y = problem(300)
    # under 300 (300 inputs would be the exact GP), and high enough that not every doubling up to it pays at the
    # start, so that the set grows rather than the first fit being at the cap (below)
    common = dict(max_iter=8, random_state=3, max_inducing=256)
    local = SparseGPRegressor(**common).fit(X, y)
    remote = SparseGPRegressor(**common).fit(da.from_array(X, chunks=(75, 3)), da.from_array(y, chunks=75))
    start, remote_start = local.stages_[0], remote.stages_[0]
    assert remote_start["chosen"] == start["chosen"] and remote_start["n_iter"] == start["n_iter"] > 0
    for name, score in start["scores"].items():
        assert remote_start["scores"][name] == pytest.approx(score, rel=1e-8)
    assert len(local.inducing_path_) >= 3  # the set grew (8, 16, 32, 64 in-memory today)
    assert [p["m"] for p in remote.inducing_path_] == [p["m"] for p in local.inducing_path_]
    # each size's eight L-BFGS steps, stopped short of convergence, amplify the backends' different summation
    # orders: relative differences of 5e-13, 5e-12, 2e-9 and 1.3e-7 at m = 8, 16, 32, 64 (this machine's OpenBLAS)
    for a, b in zip(remote.inducing_path_, local.inducing_path_):
        tolerance = 1e-10 if a["m"] <= 16 else 1e-6
        for key in ("objective", "lower", "upper", "start"):
            assert a[key] == pytest.approx(b[key], rel=tolerance)
    assert remote.stop_reason_.split(":")[0] == local.stop_reason_.split(":")[0]
    assert remote.objective_ == pytest.approx(local.objective_, rel=1e-6)
    # the same amplification carries them into Z (1.1e-6 at most here, absolute)
    np.testing.assert_allclose(remote.Z_, local.Z_, rtol=1e-6, atol=1e-6)
    # a cap that every doubling to it pays: both backends make their first fit there, from the same inputs
    common["max_inducing"] = 64
    local = SparseGPRegressor(**common).fit(X, y)
    remote = SparseGPRegressor(**common).fit(da.from_array(X, chunks=(75, 3)), da.from_array(y, chunks=75))
    assert [p["m"] for p in local.inducing_path_] == [p["m"] for p in remote.inducing_path_] == [64]
    assert remote.inducing_path_[0]["start"] == pytest.approx(local.inducing_path_[0]["start"], rel=1e-7)
    assert remote.stop_reason_ == local.stop_reason_ and "promised" in local.stop_reason_
    # at most max_inducing inputs: every one of them, held; the exact GP in memory, VFE at Z = X on the cluster
    monkeypatch.setattr(pretrain, "PRETRAIN_ROWS", 512)
    local = SparseGPRegressor(random_state=3, schedule=Joint(max_iter=8)).fit(X, y)
    remote = SparseGPRegressor(random_state=3, schedule=Joint(max_iter=8)).fit(
        da.from_array(X, chunks=(75, 3)), da.from_array(y, chunks=75)
    )
    assert local.Z_.shape == remote.Z_.shape == (300, 3) and len(remote.inducing_path_) == 1
    # beyond the device's cap where the exact GP costs less (2 d^2 <= 9 m^2): every input on both backends too
    monkeypatch.setattr(growth, "CPU_MAX_INDUCING", 200)
    local_beyond = SparseGPRegressor(random_state=3, schedule=Joint(max_iter=8)).fit(X, y)
    remote_beyond = SparseGPRegressor(random_state=3, schedule=Joint(max_iter=8)).fit(
        da.from_array(X, chunks=(75, 3)), da.from_array(y, chunks=75)
    )
    assert local_beyond.Z_.shape == remote_beyond.Z_.shape == (300, 3)
    assert remote_beyond.objective_ == pytest.approx(local_beyond.objective_, rel=1e-4)
    # the same optimum from two objectives that differ by the jitter (VFE's K_uu + jitter), 8 iterations each
    assert remote.objective_ == pytest.approx(local.objective_, rel=1e-4)
    np.testing.assert_allclose(remote.kernel_.lengthscale, local.kernel_.lengthscale, rtol=1e-3)


def test_an_interrupted_fit_on_dask_arrays_keeps_its_best_iterate(client):
    X, y = problem(300)
    calls = []

    def callback(iteration, value, params):
        calls.append(value)
        if len(calls) == 3:
            raise KeyboardInterrupt

    model = SparseGPRegressor(inducing=12, random_state=0, callback=callback)
    with pytest.raises(KeyboardInterrupt), pytest.warns(ConvergenceWarning, match="interrupted"):
        model.fit(da.from_array(X, chunks=(100, 3)), da.from_array(y, chunks=100))
    assert model.stop_reason_.startswith("interrupted (KeyboardInterrupt)") and model.objective_ >= -calls[-1] - 1e-6
    assert np.all(np.isfinite(model.predict(X[:5], return_std=True)[1]))


def test_a_warm_start_on_dask_arrays_goes_on_from_the_stopped_run(client):
    """Two fits of k iterations with warm_start on a cluster: the fit of 2k, as in memory."""
    X, y = problem(300)
    Xd, yd = da.from_array(X, chunks=(100, 3)), da.from_array(y, chunks=100)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        once = SparseGPRegressor(inducing=12, random_state=0, schedule=Joint(max_iter=16)).fit(Xd, yd)
        warm = SparseGPRegressor(inducing=12, random_state=0, warm_start=True, schedule=Joint(max_iter=8)).fit(Xd, yd)
        halfway = warm.objective_
        warm.fit(Xd, yd)
    assert abs(warm.objective_ - once.objective_) <= 1e-9 * abs(once.objective_) < once.objective_ - halfway
