"""Selection inside SparseGPRegressor: one-shot, HPEV alternation, variational EM, Seeger's interleaving."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from sklearn.base import clone

from sparsegp import SparseGPRegressor
from sparsegp.errors import InputError
from sparsegp.fitting.training import minimize_reselecting
from sparsegp.kernels import SquaredExponential
from sparsegp.options import Alternate, Interleaved, Joint, VariationalEM
from sparsegp.selection import Evidence, InfoGain, KMeans, SmolaBartlett, VFEGreedy


def _data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] ** 2 + 0.2 * rng.normal(size=n)
    return X, y


def _kernel():
    return SquaredExponential(np.ones(3), 1.0)


@pytest.mark.slow  # whole fits after a selection
def test_selector_as_inducing_fixes_the_training_rows():
    X, y = _data()
    m = SparseGPRegressor(
        _kernel(), approximation="dtc", inducing=InfoGain(30), optimize="hyperparameters", schedule=Joint(max_iter=30)
    ).fit(X, y)
    np.testing.assert_array_equal(m.Z_, X[m.inducing_indices_])
    assert len(m.inducing_indices_) == 30 and m.selection_.state.d == 30
    assert np.isfinite(m.objective_)


@pytest.mark.slow
def test_kmeans_initialises_free_inducing_inputs():
    X, y = _data()
    m = SparseGPRegressor(_kernel(), inducing=KMeans(12, random_state=0), schedule=Joint(max_iter=5)).fit(X, y)
    assert m.Z_.shape == (12, 3) and m.inducing_indices_ is None


@pytest.mark.slow
def test_variational_em_never_decreases_the_bound():
    X, y = _data()
    m = SparseGPRegressor(
        _kernel(),
        approximation="vfe",
        inducing=VFEGreedy(40, random_state=0),
        optimize="hyperparameters",
        random_state=0,
        schedule=VariationalEM(n_rounds=4, max_iter=40),
    ).fit(X, y)
    seq = []
    for r in m.rounds_:
        seq += [r["after_selection"], r["after_hyperparameters"]]
    assert [r["size"] for r in m.rounds_] == [10, 20, 30, 40]
    assert np.all(np.diff(seq) >= -1e-8 * np.abs(seq[1:])), seq
    assert m.objective_ == pytest.approx(seq[-1], rel=1e-10)


@pytest.mark.slow  # whole fits alternating with selection
def test_alternation_rounds_and_objective_bookkeeping():
    X, y = _data()
    m = SparseGPRegressor(
        _kernel(),
        approximation="sor",
        inducing=Evidence(25, random_state=1),
        optimize="hyperparameters",
        schedule=Alternate(n_rounds=3, max_iter=30),
    ).fit(X, y)
    assert len(m.rounds_) == 3
    for r in m.rounds_:  # the hyper-parameter step never lowers the evidence at its fixed set
        assert r["after_hyperparameters"] >= r["after_selection"] - 1e-8 * abs(r["after_selection"])


@pytest.mark.slow  # whole fits interleaved with selection
def test_interleaved_selection_improves_on_the_start():
    X, y = _data()
    m = SparseGPRegressor(
        _kernel(),
        approximation="dtc",
        inducing=InfoGain(30),
        optimize="hyperparameters",
        schedule=Interleaved(max_iter=25),
    ).fit(X, y)
    h = m.optimizer_report_.history
    assert h[-1] < h[0] - 10.0  # negative objective: from the all-ones start it must improve a lot
    assert np.isfinite(m.objective_)


def test_reselect_option_errors():
    X, y = _data(50)
    with pytest.raises(InputError, match="needs a selector"):
        SparseGPRegressor(inducing=10, optimize="hyperparameters", schedule=VariationalEM()).fit(X, y)
    with pytest.raises(InputError, match="set optimize='hyperparameters'"):
        SparseGPRegressor(inducing=InfoGain(5), schedule=Alternate()).fit(X, y)
    with pytest.raises(InputError, match="schedule must be 'joint' or a schedule"):
        SparseGPRegressor(inducing=InfoGain(5), schedule="sometimes").fit(X, y)


def test_selectors_clone_like_estimators():
    est = SparseGPRegressor(inducing=SmolaBartlett(100, eps=0.01, random_state=2))
    c = clone(est)
    assert c.inducing is not est.inducing and c.inducing.get_params() == est.inducing.get_params()


def test_minimize_reselecting_reaches_the_minimum_of_a_fixed_function():
    # Rosenbrock with a "set" that never changes: plain L-BFGS must converge to (1, 1).
    def f(p, Z):
        x = p["x"]
        return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2) + 0.0 * jnp.sum(Z)

    p, rep = minimize_reselecting(
        f, {"x": jnp.array([-1.2, 1.0, 0.5])}, lambda p: jnp.zeros(2), max_iter=500, gtol=1e-8
    )
    np.testing.assert_allclose(np.asarray(p["x"]), 1.0, atol=1e-4)
    assert rep.history[-1] < 1e-8


def test_minimize_reselecting_keeps_going_with_a_variable_held_at_its_bound():
    # A coupled quadratic whose unconstrained minimum has x0 < 0; with x0 >= 0 the minimum is on the bound. A
    # direction built from the full gradient mixes the held variable's large pull into the free ones, and the
    # clipped step then stalls the line search before the free variables reach their minimum.
    import scipy.optimize

    A = jnp.array([[10.0, 9.0, 0.0], [9.0, 10.0, 3.0], [0.0, 3.0, 2.0]])
    b = jnp.array([-50.0, 1.0, 1.0])

    def f(p, Z):
        x = p["x"]
        return 0.5 * x @ A @ x - b @ x + 0.0 * jnp.sum(Z)

    lower, upper = {"x": jnp.array([0.0, -jnp.inf, -jnp.inf])}, {"x": jnp.full(3, jnp.inf)}
    p, rep = minimize_reselecting(
        f, {"x": jnp.array([1.0, 1.0, 1.0])}, lambda p: jnp.zeros(2), lower=lower, upper=upper, max_iter=200, gtol=1e-9
    )
    ref = scipy.optimize.minimize(
        lambda x: float(f({"x": jnp.asarray(x)}, jnp.zeros(2))),
        np.ones(3),
        jac=lambda x: np.asarray(jax.grad(lambda v: f({"x": v}, jnp.zeros(2)))(jnp.asarray(x))),
        bounds=[(0, None), (None, None), (None, None)],
        method="L-BFGS-B",
        options={"gtol": 1e-12, "ftol": 1e-15},
    )
    assert ref.x[0] == 0.0  # the bound is active at the minimum
    np.testing.assert_allclose(np.asarray(p["x"]), ref.x, atol=1e-6)
    assert rep.reason != "line search failed to decrease the objective", rep.reason


@pytest.mark.slow
def test_models_fitted_with_selection_save_and_load(tmp_path):
    from sparsegp import load_model

    X, y = _data(150)
    m = SparseGPRegressor(
        _kernel(), inducing=VFEGreedy(12), optimize="hyperparameters", schedule=VariationalEM(n_rounds=2, max_iter=10)
    ).fit(X, y)
    path = tmp_path / "m.npz"
    m.save(path)
    m2 = load_model(path)
    assert m2.schedule == VariationalEM(n_rounds=2, max_iter=10)
    np.testing.assert_allclose(m2.predict(X[:7]), m.predict(X[:7]), rtol=1e-12)
