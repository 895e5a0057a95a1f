"""``inducing="auto"``: the greedy extension against a dense recomputation, the growth's stopping rules, the
path it records, its model file, and the optimiser's progress rule."""

import json
import warnings

import jax.numpy as jnp
import numpy as np
import pytest

from sparsegp import ExactGPRegressor, InducingWarning, InputError, SparseGPRegressor, load_model
from sparsegp.fitting import growth
from sparsegp.fitting.config import sparse_config
from sparsegp.fitting.growth import START_GAIN_PER_ROW
from sparsegp.fitting.training import minimize
from sparsegp.kernels import SquaredExponential
from sparsegp.options import Auto, Joint, SubsetThenAll
from sparsegp.selection.extend import extend_conditional_variance


@pytest.fixture(autouse=True)
def small_start(monkeypatch):
    """The growth's first size smaller than the default, so that these small problems grow."""
    monkeypatch.setattr(growth, "START_M", 16)


def data(n=300, D=2, seed=0, noise=0.1, freq=2.0):
    r = np.random.default_rng(seed)
    X = r.uniform(-2, 2, size=(n, D))
    y = np.sin(freq * X[:, 0]) * np.cos(X[:, 1]) + noise * r.normal(size=n)
    return X, y


def se(A, B, ell, var):
    """The squared exponential in NumPy (the dense reference does not go through the kernels' JAX code)."""
    d = (A[:, None, :] - B[None, :, :]) / ell
    return var * np.exp(-0.5 * np.sum(d * d, axis=-1))


def exact_log_p(model, X, y):
    """log p(y) of the exact GP at a model's fitted kernel and noise, by NumPy's dense algebra."""
    yn = (y - model.y_mean_) / model.y_std_
    A = np.asarray(model.kernel_.K(jnp.asarray(X))) + model.noise_ * np.eye(len(y))
    return -0.5 * (np.linalg.slogdet(A)[1] + yn @ np.linalg.solve(A, yn) + len(y) * np.log(2 * np.pi))


def dense_extension(ell, var, Z, X, k, jitter=1e-8):
    """The greedy choice recomputed from scratch at every step: diag(K_ff - K_fu K_uu^-1 K_uf) for the set so far."""
    chosen = []
    for _ in range(k):
        U = np.vstack([Z, X[chosen]]) if chosen else Z
        Kuu = se(U, U, ell, var)
        Kuu = Kuu + jitter * np.mean(np.diag(Kuu)) * np.eye(len(U))
        Kuf = se(U, X, ell, var)
        residual = var - np.einsum("ij,ij->j", Kuf, np.linalg.solve(Kuu, Kuf))
        residual[chosen] = -np.inf
        chosen.append(int(np.argmax(residual)))
    return np.asarray(chosen)


@pytest.mark.parametrize("m", [1, 7])
def test_extension_equals_dense_greedy(m):
    X, _ = data(120, D=3)
    ell, var = np.array([0.7, 1.1, 0.9]), 1.3
    Z = np.random.default_rng(1).normal(size=(m, 3))  # inducing inputs that are not training rows
    got = extend_conditional_variance(SquaredExponential(ell, var), Z, X, 15)
    np.testing.assert_array_equal(got, dense_extension(ell, var, Z, X, 15))


def test_extension_stops_when_nothing_is_left():
    X, _ = data(30)
    kernel = SquaredExponential([1.0, 1.0], 1.0)
    got = extend_conditional_variance(kernel, X[:25], np.vstack([X, X[:5]]), 20)
    assert set(got) == set(range(25, 30))  # only the five inputs not in Z carry residual variance


def test_progress_rule_stops_converged():
    def rosenbrock(p):
        x = p["x"]
        return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)

    _, full = minimize(rosenbrock, {"x": jnp.zeros(10)}, max_iter=500)
    _, report = minimize(rosenbrock, {"x": jnp.zeros(10)}, progress=0.05, max_iter=500)
    assert report.success and report.reason.startswith("progress below tol")
    h = np.asarray(report.history)
    assert h[-11] - h[-1] < 0.05 * 10  # the rule, read off the history
    assert all(h[k - 10] - h[k] >= 0.05 * 10 for k in range(10, len(h) - 1))  # and not before

    assert report.n_iter < full.n_iter and report.objective > full.objective


def test_progress_rule_waits_for_its_warmup():
    def rosenbrock(p):
        x = p["x"]
        return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)

    _, early = minimize(rosenbrock, {"x": jnp.zeros(10)}, progress=0.05, max_iter=500)
    after = early.n_iter + 5
    _, late = minimize(rosenbrock, {"x": jnp.zeros(10)}, progress=0.05, progress_after=after, max_iter=500)
    assert early.reason.startswith("progress below tol")
    k = early.n_iter
    np.testing.assert_allclose(late.history[:k], early.history)  # the same run up to where the rule stopped it,
    assert late.n_iter > k  # then on: no window within the first `after` iterations is read
    assert not late.reason.startswith("progress below tol") or late.n_iter > after + 10
    assert late.objective < early.objective


def spy_on_runs(patch):
    """Every optimiser run of the growth from now on, as ``(progress, report)`` (the list fills as it runs)."""
    runs = []
    real = growth.optimise

    def spy(*args, **kwargs):
        stage = real(*args, **kwargs)
        runs.append((kwargs["progress"], stage.report))
        return stage

    patch.setattr(growth, "optimise", spy)
    return runs


def no_climb(patch):
    """The growth without its climb (every size fitted in turn), for the tests of what it does at each size."""
    patch.setattr(growth, "climb", lambda config, data, params, Z, idx, Xc, rows_c, m_cap, lower: (Z, idx, lower, None))


@pytest.fixture(scope="module")
def grown():
    """One growth to the cap (16, then 32 inducing points; no climb), with every optimiser run it made and the
    warnings it gave: ``(X, y, model, runs, caught)``."""
    X, y = data(300, freq=3.0, noise=0.05)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(growth, "START_M", 16)
        no_climb(patch)
        runs = spy_on_runs(patch)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = SparseGPRegressor(
                inducing=Auto(max_inducing=32), random_state=0, schedule=Joint(max_iter=3000)
            ).fit(X, y)
    return X, y, model, runs, caught


@pytest.mark.slow  # the `grown` fixture is a whole growth
@pytest.mark.xdist_group("grown")
def test_auto_grows_records_its_path_and_stops_for_a_reason(grown):
    X, y, model, _, _ = grown
    path = model.inducing_path_
    assert model.stop_reason_ is not None and len(path) >= 1
    assert path[0]["m"] == growth.START_M and all(b["m"] == 2 * a["m"] for a, b in zip(path, path[1:]))
    for step in path:
        assert step["lower"] <= step["upper"] and step["n_iter"] >= 0 and step["seconds"] >= 0
    n = len(y)
    # the model is the last size fitted: VFE's fitted objective is its bound, and the certificate its own
    assert model.Z_.shape[0] == path[-1]["m"]
    assert model.objective_ == pytest.approx(path[-1]["lower"], rel=1e-9)
    # the path records the trace bound of each size; the model's certificate is the exact log p(y) (n <= 20,000)
    assert model.certificate_["bound"] == "exact"
    assert 0 <= model.gap_ <= path[-1]["upper"] - path[-1]["lower"] + 1e-6
    assert model.objective_ + model.gap_ == pytest.approx(exact_log_p(model, X, y), rel=1e-9)
    # every size but the last was left because twice its inputs promised at least START_GAIN_PER_ROW per row
    for step in path[:-1]:
        assert (step["next_start"] - step["lower"]) / n >= START_GAIN_PER_ROW


@pytest.mark.slow  # the `grown` fixture is a whole growth
@pytest.mark.xdist_group("grown")
def test_a_cap_reached_while_still_gaining_is_said(grown):
    _, y, model, _, caught = grown
    path = model.inducing_path_
    gain = (path[-1]["objective"] - path[-2]["objective"]) / len(y)
    assert gain > growth.GAIN_PER_ROW  # the cap stopped this growth, not the gain rule
    assert (
        model.stop_reason_
        == f"max_inducing: m = 32; the last doubling still raised the objective by {gain:.3g} nats per row"
    )
    said = [str(w.message) for w in caught if issubclass(w.category, InducingWarning)]
    assert len(said) == 1 and f"{gain:.3g} nats per training row" in said[0], said
    assert f"certified gap is {model.gap_ / len(y):.3g} nats per row" in said[0]


def spy_on_climbs(patch):
    """Every climb from now on, as ``(first m, F_V there, returned m, F_V there, [(size, F_V) of each doubling])``."""
    climbs, ladder = [], []
    real_climb, real_doubled = growth.climb, growth._doubled

    def spy_climb(*args):
        ladder.clear()
        got = real_climb(*args)
        climbs.append((args[3].shape[0], args[-1], got[0].shape[0], got[2], list(ladder)))
        return got

    def spy_doubled(*args):
        got = real_doubled(*args)
        ladder.append((got[0].shape[0], got[2]))
        return got

    patch.setattr(growth, "climb", spy_climb)
    patch.setattr(growth, "_doubled", spy_doubled)
    return climbs


@pytest.mark.slow  # a whole growth
@pytest.mark.xdist_group("grown")
def test_the_first_fit_is_at_the_cap_where_every_doubling_to_it_pays(monkeypatch):
    """The first fit is at max_inducing where every doubling from the first inputs up to it raises F_V at the
    start's values by at least GAIN_PER_ROW per row; else at the first inputs, the ladder cut at the first
    doubling that pays less."""
    X, y = data(300, freq=3.0, noise=0.05)
    n, climbs = len(y), spy_on_climbs(monkeypatch)
    model = SparseGPRegressor(inducing=Auto(max_inducing=64), random_state=0, schedule=Joint(max_iter=3000)).fit(X, y)
    m0, lower, m1, fv, steps = climbs[0]
    assert [size for size, _ in steps] == [32, 64]  # 16 -> 32 paid, 32 -> 64 did not: no climb
    assert steps[0][1] - lower >= growth.GAIN_PER_ROW * n > steps[1][1] - steps[0][1]
    assert m0 == m1 == 16 and fv == lower and model.inducing_path_[0]["m"] == 16
    # with the cap at 32 every doubling to it pays: the first fit is there, and the model says what it promised
    climbs.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        capped = SparseGPRegressor(inducing=Auto(max_inducing=32), random_state=0, schedule=Joint(max_iter=3000)).fit(
            X, y
        )
    m0, lower, m1, fv, steps = climbs[0]
    assert m0 == 16 and m1 == 32 and steps == [(32, fv)] and fv - lower >= growth.GAIN_PER_ROW * n
    assert [p["m"] for p in capped.inducing_path_] == [32]
    assert capped.inducing_path_[0]["start"] == pytest.approx(fv, rel=1e-12)
    gain = (fv - lower) / n
    assert (
        capped.stop_reason_ == f"max_inducing: m = 32; the doubling to it promised {gain:.3g} nats per row at the start"
    )
    said = [str(w.message) for w in caught if issubclass(w.category, InducingWarning)]
    assert len(said) == 1 and f"promised, at the start's values, {gain:.3g} nats per training row" in said[0]


@pytest.mark.xdist_group("grown")
@pytest.mark.slow
def test_a_cap_at_the_first_size_says_nothing_of_gains():
    X, y = data(300, freq=3.0, noise=0.05)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = SparseGPRegressor(inducing=Auto(max_inducing=16), random_state=0, schedule=Joint(max_iter=3000)).fit(
            X, y
        )
    assert model.stop_reason_ == "max_inducing: m = 16"
    assert not [w for w in caught if issubclass(w.category, InducingWarning)]


@pytest.mark.xdist_group("grown")
@pytest.mark.slow
def test_auto_stops_when_a_fitted_doubling_gains_too_little(monkeypatch):
    monkeypatch.setattr(growth, "GAIN_PER_ROW", 1e9)  # no fitted doubling is ever enough
    X, y = data(300, freq=3.0, noise=0.05)
    model = SparseGPRegressor(inducing=Auto(max_inducing=64), random_state=0, schedule=Joint(max_iter=3000)).fit(X, y)
    path = model.inducing_path_
    assert [p["m"] for p in path] == [16, 32] and model.stop_reason_.startswith("gain: m 16 -> 32")
    assert model.Z_.shape[0] == 32 and model.objective_ == pytest.approx(path[-1]["lower"], rel=1e-9)


@pytest.mark.slow  # a whole growth
def test_auto_stays_where_a_larger_set_cannot_be_factorised(monkeypatch):
    """F_V with twice the inducing inputs not finite (their K_uu unfactorisable): the fit keeps the size it has."""
    certify = growth.certificate

    def failing(config, data, params, Z, chunk, exact=False):
        cert = certify(config, data, params, Z, chunk, exact)
        return cert._replace(lower=float("nan")) if Z.shape[0] > 16 else cert

    monkeypatch.setattr(growth, "certificate", failing)
    X, y = data(300, freq=3.0, noise=0.05)
    model = SparseGPRegressor(inducing=Auto(max_inducing=64), random_state=0).fit(X, y)
    assert [p["m"] for p in model.inducing_path_] == [16] and model.Z_.shape[0] == 16
    assert model.stop_reason_.startswith("factorisation: F_V with twice the inducing inputs is not finite at m = 16")
    assert np.isfinite(model.objective_)


@pytest.mark.slow
def test_auto_on_all_distinct_inputs_is_the_exact_gp(monkeypatch):
    monkeypatch.setattr(growth, "START_M", 64)  # more than the 40 inputs: the first size is all of them
    X, y = data(40)
    kernel = SquaredExponential([0.8, 1.2], 1.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sparse = SparseGPRegressor(kernel, noise=0.05, optimize=False, jitter=1e-12).fit(X, y)
        exact = ExactGPRegressor(kernel, noise=0.05, optimize=False).fit(X, y)
    assert sparse.Z_.shape[0] == 40 and len(sparse.inducing_path_) == 1
    assert sparse.objective_ == pytest.approx(exact.log_marginal_likelihood_, rel=1e-8)
    assert sparse.gap_ == pytest.approx(0.0, abs=1e-6 * abs(sparse.objective_))
    assert sparse.stop_reason_.startswith("gap")


def test_the_exact_gp_where_it_costs_less_than_the_sparse_objective_at_the_devices_cap(monkeypatch):
    """Under max_inducing=None, d distinct inputs in memory with 2 d^2 <= 9 m^2 (m the device's cap: the exact
    GP's evaluation costs at most the sparse objective's there) are fitted as the exact GP, beyond the cap; an
    explicit max_inducing is kept."""
    monkeypatch.setattr(growth, "CPU_MAX_INDUCING", 16)
    auto, capped_config = (
        sparse_config(SparseGPRegressor()),
        sparse_config(SparseGPRegressor(inducing=Auto(max_inducing=16))),
    )
    assert growth.exact_costs_less(auto, 33, 16) and not growth.exact_costs_less(auto, 34, 16)
    assert not growth.exact_costs_less(capped_config, 20, 16)
    X, y = data(30)
    kernel = SquaredExponential([0.8, 1.2], 1.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sparse = SparseGPRegressor(kernel, noise=0.05, optimize=False, jitter=1e-12).fit(X, y)
        capped = SparseGPRegressor(
            kernel, inducing=Auto(max_inducing=16), noise=0.05, optimize=False, random_state=0
        ).fit(X, y)
        exact = ExactGPRegressor(kernel, noise=0.05, optimize=False).fit(X, y)
    assert sparse.Z_.shape[0] == 30 and len(sparse.inducing_path_) == 1
    assert sparse.objective_ == pytest.approx(exact.log_marginal_likelihood_, rel=1e-8)
    assert sparse.gap_ == pytest.approx(0.0, abs=1e-6 * abs(sparse.objective_))
    assert capped.Z_.shape[0] == 16 and capped.stop_reason_.startswith("max_inducing")


@pytest.mark.slow  # whole growths under each budget
@pytest.mark.xdist_group("grown")  # the same data as the fixture's: the same compiled programs
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_auto_budgets():
    X, y = data(300, freq=3.0, noise=0.05)
    small = SparseGPRegressor(inducing=Auto(max_inducing=40), random_state=0, schedule=Joint(max_iter=30)).fit(X, y)
    assert small.Z_.shape[0] == 40 and small.stop_reason_.startswith("max_inducing")
    timed = SparseGPRegressor(
        inducing=Auto(max_inducing=64, time_budget=1e-3), random_state=0, schedule=Joint(max_iter=30)
    ).fit(X, y)
    assert len(timed.inducing_path_) == 1 and timed.stop_reason_.startswith("time_budget")


@pytest.mark.slow  # the `grown` fixture is a whole growth
@pytest.mark.xdist_group("grown")
def test_auto_model_file_round_trip(grown, tmp_path):
    X, y, model, _, _ = grown
    path = model.save(tmp_path / "auto.npz")
    back = load_model(path)
    assert back.stop_reason_ == model.stop_reason_
    assert json.dumps(back.inducing_path_) == json.dumps(model.inducing_path_)
    np.testing.assert_allclose(back.predict(X[:20]), model.predict(X[:20]), rtol=1e-12)
    explicit = SparseGPRegressor(inducing=10, schedule=Joint(max_iter=5)).fit(X, y)
    assert explicit.stop_reason_ is None and explicit.inducing_path_ is None


@pytest.mark.parametrize(
    "options, message",
    [
        ({"inducing": "many"}, "inducing must be 'auto'"),
        ({"inducing": Auto(max_inducing=0)}, "max_inducing"),
        ({"schedule": Joint(tol=-1.0)}, "tol"),
        ({"inducing": Auto(time_budget=0.0)}, "time_budget"),
        ({"schedule": "staged"}, "schedule must be"),
        ({"schedule": SubsetThenAll()}, "SubsetThenAll needs the size"),
    ],
)
def test_auto_options_are_checked(options, message):
    X, y = data(50)
    with pytest.raises(InputError, match=message):
        SparseGPRegressor(**options).fit(X, y)


def test_the_default_max_inducing_is_sized_to_the_device(monkeypatch):
    config = lambda m: sparse_config(SparseGPRegressor(inducing=Auto(max_inducing=m)))  # noqa: E731
    monkeypatch.setattr(growth, "accelerator_memory", lambda: None)  # a CPU
    assert growth.max_inducing(config(None), 10_000) == growth.CPU_MAX_INDUCING == 1024
    assert growth.max_inducing(config(300), 10_000) == 300
    monkeypatch.setattr(growth, "accelerator_memory", lambda: 80 * 10**9)
    # the largest power of two with 2 n m^2 <= 2e13 flops and 16 m x m float64 arrays in the memory
    for n, m in [(10_000, 16_384), (10**6, 2_048), (10**7, 1_024)]:
        assert growth.max_inducing(config(None), n) == m
        assert 2 * n * (2 * m) ** 2 > growth.ACCELERATOR_FLOPS or 16 * 8 * (2 * m) ** 2 > 80e9  # twice m breaks one
    monkeypatch.setattr(growth, "accelerator_memory", lambda: 4 * 10**9)
    assert growth.max_inducing(config(None), 10_000) == 4_096  # 16 arrays of 8,192^2 would need 8.6 GB of 4
    assert growth.max_inducing(config(64), 10_000) == 64


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.slow
def test_a_column_constant_up_to_rounding_starts_as_constant():
    # elevators' first 10,000 training rows: two columns vary only in the last bit after standardisation
    X, y = data(300, D=3)
    X[:, 2] = 1.0 + np.random.default_rng(0).choice([0.0, 2.2e-16], size=300)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = SparseGPRegressor(inducing=16, random_state=0, schedule=Joint(max_iter=10)).fit(X, y)
    assert model.n_iter_ > 0 and not any("ended at its bound" in str(w.message) for w in caught)


@pytest.mark.slow  # whole growths; every approximation at Z = X is checked directly (test_approximations.py)
@pytest.mark.parametrize("approximation", ["vfe", "fitc"])
def test_auto_under_max_inducing_fits_the_exact_gp(approximation):
    X, y = data(90)
    X = np.vstack([X, X[:10]])  # ten inputs measured twice: 90 distinct inputs
    y = np.concatenate([y, y[:10] + 0.05])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sparse = SparseGPRegressor(inducing=Auto(max_inducing=128), approximation=approximation).fit(X, y)
        exact = ExactGPRegressor().fit(X, y)
    assert sparse.Z_.shape[0] == 90 and len(sparse.inducing_path_) == 1
    assert {tuple(z) for z in sparse.Z_} == {tuple(x) for x in X[:90]}  # the training inputs themselves
    np.testing.assert_allclose(sparse.kernel_.lengthscale, exact.kernel_.lengthscale, rtol=1e-5)
    assert sparse.noise_ == pytest.approx(exact.noise_, rel=1e-5)
    assert sparse.gap_ == pytest.approx(0.0, abs=1e-4 * abs(sparse.objective_))
    mean, std = sparse.predict(X[:5], return_std=True)
    e_mean, e_std = exact.predict(X[:5], return_std=True)
    np.testing.assert_allclose(mean, e_mean, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(std, e_std, rtol=1e-4)


@pytest.mark.slow  # the `grown` fixture is a whole growth
@pytest.mark.xdist_group("grown")
def test_auto_converges_the_last_size_to_tol(grown, monkeypatch):
    """Sizes passed through stop at LOOSE * tol; the size returned is fitted on until tol."""
    X, y, model, runs, _ = grown
    n = len(y)
    tol = growth.TOL * n
    assert [p["m"] for p in model.inducing_path_] == [16, 32] and model.stop_reason_.startswith("max_inducing")
    assert [p for p, _ in runs] == [pytest.approx(growth.LOOSE * tol), pytest.approx(tol)]
    for progress, report in runs:  # each run ends on its own rule, read off its history
        h = np.asarray(report.history)
        assert report.reason.startswith("progress below tol") and (h[-11] - h[-1]) < 10 * progress
    assert model.n_iter_ == sum(r.n_iter for _, r in runs) == sum(p["n_iter"] for p in model.inducing_path_)
    # a stop at a size that was not the cap: that size is fitted on to tol, in one step of the path
    runs = spy_on_runs(monkeypatch)
    no_climb(monkeypatch)
    monkeypatch.setattr(growth, "START_GAIN_PER_ROW", 1e9)  # no doubling is ever worth a fit
    model = SparseGPRegressor(inducing=Auto(max_inducing=64), random_state=0, schedule=Joint(max_iter=3000)).fit(X, y)
    assert [p["m"] for p in model.inducing_path_] == [16] and model.stop_reason_.startswith("gain: twice")
    assert [p for p, _ in runs] == [pytest.approx(growth.LOOSE * tol), pytest.approx(tol)]
    assert model.inducing_path_[0]["n_iter"] == sum(r.n_iter for _, r in runs) == model.n_iter_
    assert runs[1][1].objective <= runs[0][1].objective  # fitting on did not lose ground


@pytest.mark.slow  # the `grown` fixture is a whole growth
@pytest.mark.xdist_group("grown")
def test_a_size_whose_doubling_promises_little_is_converged_before_the_set_grows(grown, monkeypatch):
    """Twice the inputs promising less than GAIN_PER_ROW per row (here every promise, the threshold raised):
    the size is likely the last worth fitting, so it is fitted on to tol before the set grows."""
    X, y, _, _, _ = grown
    tol = growth.TOL * len(y)
    runs = spy_on_runs(monkeypatch)
    monkeypatch.setattr(growth, "GAIN_PER_ROW", 1e9)
    model = SparseGPRegressor(inducing=Auto(max_inducing=32), random_state=0, schedule=Joint(max_iter=3000)).fit(X, y)
    assert [p["m"] for p in model.inducing_path_] == [16, 32]
    assert [p for p, _ in runs] == [pytest.approx(growth.LOOSE * tol), pytest.approx(tol), pytest.approx(tol)]
    first = model.inducing_path_[0]
    assert growth.promises_little(growth.Step(**first), len(y))
    assert first["n_iter"] == runs[0][1].n_iter + runs[1][1].n_iter


@pytest.mark.slow  # a whole growth
def test_inducing_inputs_are_held_where_a_length_scale_is_far_below_its_columns_spread(monkeypatch):
    """A group column with a length-scale 1e-7 of its spread: the bound changes over less than a rounding step
    of Z in that column, so the growth fits the kernel and noise at the inputs held (and says so)."""
    from sparsegp.kernels import SquaredExponential
    from sparsegp.kernels.distance import narrow

    r = np.random.default_rng(0)
    group = r.integers(0, 8, size=300).astype(float)
    X = np.column_stack([group, r.normal(size=300)])
    y = np.sin(2 * group) + 0.3 * X[:, 1] + 0.05 * r.normal(size=300)
    tiny = SquaredExponential(lengthscale=[1e-7, 1.0])
    assert not narrow(tiny, X) and narrow(SquaredExponential(lengthscale=[0.5, 1.0]), X)
    runs = spy_on_runs(monkeypatch)
    descs = []
    real = growth.optimise

    def record(*args, **kwargs):
        descs.append(args[4])
        return real(*args, **kwargs)

    monkeypatch.setattr(growth, "optimise", record)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = SparseGPRegressor(inducing=Auto(max_inducing=32), kernel=tiny, random_state=0).fit(X, y)
    assert descs and all(d.endswith("Z held") for d in descs) and len(runs) == len(descs)
    assert all(r.n_iter > 0 for _, r in runs)
    assert np.all(np.isin(model.Z_[:, 0], group))  # the inputs stay on the groups' values


@pytest.mark.slow  # a whole growth; Z = X at the noise's floor is also checked directly (test_upper_bounds.py)
def test_auto_at_every_input_reports_the_exact_evidence_where_the_noise_is_at_its_floor():
    """Noiseless targets: the noise ends at min_noise, where the sparse algebra at Z = X loses every digit; the
    objective and the certificate are then the exact GP's log p(y) (F_V = log p(y) = U at Z = X)."""
    X, y = data(200, noise=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sparse = SparseGPRegressor(inducing=Auto(max_inducing=256)).fit(X, y)
        exact = ExactGPRegressor(sparse.kernel_, noise=sparse.noise_, optimize=False).fit(X, y)
    assert sparse.noise_ == pytest.approx(1e-6, rel=1e-3) and sparse.Z_.shape[0] == 200
    assert sparse.objective_ == pytest.approx(exact.log_marginal_likelihood_, rel=1e-10)
    assert sparse.upper_bound_ == sparse.objective_ and sparse.gap_ == 0.0
    np.testing.assert_allclose(sparse.predict(X[:5]), exact.predict(X[:5]), atol=1e-3)
