"""``warm_start=True``: a second ``fit`` goes on from the fitted state.

The optimiser (:mod:`sparsegp.fitting._lbfgsb`) takes SciPy's L-BFGS-B steps call for call, and a run stopped at
``max_iter`` goes on bit for bit: k iterations and k more are the 2k iterations of one run. The regressors carry
their fitted kernel, noise, inducing inputs, the growth's path and that state into the next fit.
"""

import numpy as np
import pytest
import scipy.optimize
from scipy.optimize import rosen, rosen_der

from sparsegp import ExactGPRegressor, InputError, SparseGPClassifier, SparseGPRegressor
from sparsegp.fitting._lbfgsb import lbfgsb
from sparsegp.options import Alternate, Auto, Joint
from sparsegp.selection import InfoGain
from tiers import slow_beyond

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def rosenbrock(x):
    return rosen(x), rosen_der(x)


def bounded_start(seed, n=8):
    r = np.random.default_rng(seed)
    lower, upper = np.full(n, -1.5), np.full(n, np.inf)
    lower[::3] = -np.inf
    return r.uniform(-2, 2, n), lower, upper


OPTIONS = {"maxcor": 7, "ftol": 1e-12, "gtol": 1e-9}


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("maxiter", [5, 40, 1000])
def test_the_driver_takes_scipys_steps(seed, maxiter):
    x0, lower, upper = bounded_start(seed)
    theirs = scipy.optimize.minimize(
        rosenbrock,
        x0,
        jac=True,
        method="L-BFGS-B",
        bounds=list(zip(lower, upper)),
        options=dict(OPTIONS, maxiter=maxiter),
    )
    ours = lbfgsb(rosenbrock, x0, lower, upper, maxiter=maxiter, **OPTIONS)
    assert np.array_equal(ours.x, theirs.x) and ours.fun == theirs.fun
    assert (ours.nit, ours.nfev, ours.message, ours.success) == (
        theirs.nit,
        theirs.nfev,
        theirs.message,
        theirs.success,
    )
    assert (ours.state is not None) == (ours.nit == maxiter)  # a state only where the run stopped at an iterate


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_run_stopped_at_max_iter_goes_on_bit_for_bit(seed):
    x0, lower, upper = bounded_start(seed)
    whole = lbfgsb(rosenbrock, x0, lower, upper, maxiter=40, **OPTIONS)
    first = lbfgsb(rosenbrock, x0, lower, upper, maxiter=20, **OPTIONS)
    second = lbfgsb(rosenbrock, first.x, lower, upper, maxiter=20, resume=first.state, **OPTIONS)
    assert np.array_equal(second.x, whole.x) and second.fun == whole.fun
    afresh = lbfgsb(rosenbrock, first.x, lower, upper, maxiter=20, **OPTIONS)  # no curvature pairs: another path
    assert not np.array_equal(afresh.x, whole.x)


def test_a_state_of_another_objective_or_point_is_not_gone_on_from():
    x0, lower, upper = bounded_start(0)
    first = lbfgsb(rosenbrock, x0, lower, upper, maxiter=20, **OPTIONS)
    afresh = lbfgsb(rosenbrock, first.x, lower, upper, maxiter=20, **OPTIONS)

    def scaled(x):  # the same minimiser, another objective: the stored f and g do not describe it
        f, g = rosenbrock(x)
        return 2.0 * f, 2.0 * g

    other = lbfgsb(scaled, first.x, lower, upper, maxiter=20, resume=first.state, **OPTIONS)
    assert np.array_equal(other.x, lbfgsb(scaled, first.x, lower, upper, maxiter=20, **OPTIONS).x)
    moved = first.x + 1e-3
    elsewhere = lbfgsb(rosenbrock, moved, lower, upper, maxiter=20, resume=first.state, **OPTIONS)
    assert np.array_equal(elsewhere.x, lbfgsb(rosenbrock, moved, lower, upper, maxiter=20, **OPTIONS).x)
    assert not np.array_equal(afresh.x, other.x)


def problem(n, seed=0):
    r = np.random.default_rng(seed)
    X = r.uniform(-3, 3, size=(n, 3))
    return X, np.sin(X[:, 0]) * np.cos(X[:, 1]) + 0.3 * X[:, 2] + 0.1 * r.normal(size=n)


def two_moons(n, seed=0):
    r = np.random.default_rng(seed)
    t = r.uniform(0, np.pi, n)
    label = r.integers(0, 2, n)
    X = np.c_[np.cos(t) + label, np.sin(t) * (1 - 2 * label) + 0.5 * label] + 0.15 * r.normal(size=(n, 2))
    return X, label


@pytest.mark.parametrize("estimator", slow_beyond(["sparse", "exact"], {"sparse"}))
def test_twice_k_iterations_warm_are_one_fit_of_2k(estimator):
    """The acceptance of the warm start: two fits of k iterations reach the objective of one of 2k."""
    X, y = problem(400)
    k = 12

    def model(**options):
        if estimator == "exact":
            return ExactGPRegressor(**options)
        return SparseGPRegressor(
            inducing=24, random_state=0, schedule=Joint(max_iter=options.pop("max_iter")), **options
        )

    def objective(m):
        return m.objective_ if estimator == "sparse" else m.log_marginal_likelihood_

    once = model(max_iter=2 * k).fit(X, y)
    warm = model(max_iter=k, warm_start=True).fit(X, y)
    after_k = objective(warm)
    warm.fit(X, y)
    assert abs(objective(warm) - objective(once)) <= 1e-6 * abs(objective(once))
    assert objective(once) - after_k > 1e-3 * abs(objective(once))  # k iterations alone were well short of it
    cold = model(max_iter=k).fit(X, y).set_params(warm_start=False).fit(X, y)  # no warm start: k again
    assert abs(objective(cold) - after_k) <= 1e-12 * abs(after_k)


@pytest.mark.parametrize("estimator", slow_beyond(["sparse", "exact"], {"sparse"}))
def test_a_warm_start_on_rows_added_since_reaches_the_fit_from_scratch_sooner(estimator):
    """Checked against a single fit, to convergence, on all the rows: the same inducing rows (among the first
    400) and kernel and noise learnt, a unique optimum here."""
    X, y = problem(600, seed=3)
    if estimator == "exact":
        options, objective = {}, "log_marginal_likelihood_"
        model = ExactGPRegressor
    else:
        options = {"inducing": np.arange(0, 400, 17), "optimize": "hyperparameters", "schedule": Joint(max_iter=2000)}
        model, objective = SparseGPRegressor, "objective_"
    scratch = model(**options).fit(X, y)
    warm = model(warm_start=True, **options).fit(X[:400], y[:400])
    warm.fit(X, y)
    assert abs(getattr(warm, objective) - getattr(scratch, objective)) <= 1e-6 * abs(getattr(scratch, objective))
    assert warm.n_iter_ < scratch.n_iter_
    if estimator == "sparse":  # the inducing rows are still rows of the larger data
        assert np.array_equal(warm.inducing_indices_, options["inducing"])


def test_free_inducing_inputs_go_on_moving_on_rows_added_since():
    X, y = problem(600, seed=3)
    options = {"inducing": np.arange(0, 400, 17), "schedule": Joint(max_iter=2000)}
    scratch = SparseGPRegressor(**options).fit(X, y)
    warm = SparseGPRegressor(warm_start=True, **options).fit(X[:400], y[:400])
    first_z = warm.Z_.copy()
    warm.fit(X, y)
    assert not np.array_equal(warm.Z_, first_z) and warm.inducing_indices_ is None
    # at least the converged fit from scratch: free inducing inputs may settle at another optimum
    assert warm.objective_ >= scratch.objective_ - 1e-3 * abs(scratch.objective_)


@pytest.mark.slow  # a growth through two or three sizes
@pytest.mark.parametrize("estimator", ["regressor", "classifier"])
def test_a_warm_start_of_an_auto_fit_grows_on_from_its_size_when_the_cap_is_raised(estimator):
    if estimator == "regressor":
        (X, y), model = (
            problem(700, seed=4),
            SparseGPRegressor(inducing=Auto(max_inducing=16), random_state=0, warm_start=True),
        )
    else:
        (X, y), model = two_moons(600, seed=1), SparseGPClassifier(max_inducing=16, random_state=0, warm_start=True)
    path = [p["m"] for p in model.fit(X, y).inducing_path_]
    assert path[-1] == 16
    model.set_params(**{"inducing__max_inducing" if estimator == "regressor" else "max_inducing": 64}).fit(X, y)
    grown = [p["m"] for p in model.inducing_path_]
    assert grown[: len(path)] == path and grown[-1] > 16 and model.Z_.shape[0] == grown[-1]
    if estimator == "regressor":
        assert model.stages_ is None  # no exact GP on a subset: the growth went on from the fitted kernel


@pytest.mark.slow  # whole fits, each refused a different continuation
def test_warm_start_refuses_what_it_cannot_continue():
    X, y = problem(200)
    model = SparseGPRegressor(inducing=12, random_state=0, warm_start=True, schedule=Joint(max_iter=5)).fit(X, y)
    with pytest.raises(InputError, match="warm_start=True continues from the fitted 12 inducing inputs"):
        model.set_params(inducing=20).fit(X, y)
    with pytest.raises(InputError, match="features"):
        model.set_params(inducing=12).fit(X[:, :2], y)
    with pytest.raises(InputError, match="noise of 1 targets|fitted noise"):
        SparseGPRegressor(inducing=12, noise=np.ones(2), warm_start=True, schedule=Joint(max_iter=5)).fit(
            X, np.c_[y, y]
        ).fit(X, y)
    with pytest.raises(InputError, match="warm_start=True with schedule=Alternate"):
        model.set_params(inducing=InfoGain(12), optimize="hyperparameters", schedule=Alternate()).fit(X, y)
    with pytest.raises(InputError, match="warm_start must be True or False"):
        SparseGPRegressor(warm_start="yes").fit(X, y)


@pytest.mark.slow  # three classifier fits
def test_a_warm_classifier_goes_on_from_its_fitted_state():
    X, y = two_moons(300)
    # a tenth of the labels flipped: on separable moons the bound has no finite optimum (the kernel's variance
    # grows along a ridge, and where a run stops on it depends on its path)
    y = np.where(np.random.default_rng(5).random(300) < 0.1, 1 - y, y)
    short = SparseGPClassifier(inducing=12, max_iter=5, random_state=0, warm_start=True).fit(X, y)
    first, first_q = short.bound_, short.q_mu_.copy()
    short.fit(X, y)
    longer = SparseGPClassifier(inducing=12, max_iter=400, random_state=0).fit(X, y)
    assert short.bound_ > first and not np.array_equal(short.q_mu_, first_q)
    # on to convergence from there: the fit from scratch's bound. Each fit restarts L-BFGS without its curvature
    # pairs and ends by the progress rule where the bound is flat, so going on takes a few such runs
    bounds = []
    for _ in range(4):
        bounds.append(short.set_params(max_iter=400).fit(X, y).bound_)
        if bounds[-1] >= longer.bound_ - 1e-3 * abs(longer.bound_):
            break
    assert bounds[-1] >= longer.bound_ - 1e-3 * abs(longer.bound_), bounds
    assert all(b >= a - 1e-9 * abs(a) for a, b in zip(bounds, bounds[1:]))  # each run goes on, never back
    with pytest.raises(InputError, match="classes"):
        short.fit(X, np.where(y == 1, "b", "a"))
    with pytest.raises(InputError, match="inducing=20"):
        short.set_params(inducing=20).fit(X, y)
