"""The large-n strategy: hyper-parameters and inducing inputs from a subset, refined on all rows."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from sparsegp import InputError, SparseGPRegressor
from sparsegp.fitting.pipeline import inducing_rows
from sparsegp.options import Alternate, Joint, SubsetThenAll
from sparsegp.selection import InfoGain

# one xdist worker runs this module, so its module-scoped fixture is computed once
pytestmark = pytest.mark.xdist_group("large-n")


def problem(n=1500, seed=0):
    r = np.random.default_rng(seed)
    X = r.normal(size=(n, 3))
    return X, np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] + 0.1 * r.normal(size=n)


COMMON = dict(inducing=15, random_state=0)


@pytest.fixture(scope="module")
def fits():
    X, y = problem()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return {
            k: SparseGPRegressor(**COMMON, schedule=SubsetThenAll(subset=300, refine_iter=k, max_iter=60)).fit(X, y)
            for k in (0, 4)
        }


@pytest.mark.slow  # the module's fits of the large-n path, end to end
def test_the_refinement_raises_the_objective_on_all_rows(fits):
    stage, refined = fits[0], fits[4]
    assert [s["rows"] for s in stage.stages_] == [300]
    assert [s["rows"] for s in refined.stages_] == [300, 1500]
    assert refined.stages_[1]["report"].n_iter == 4
    assert refined.n_iter_ == refined.stages_[0]["report"].n_iter + 4
    # objective_ is always the bound on all 1,500 rows; the subset stage alone is the same in both fits
    assert refined.stages_[0]["report"].objective == stage.stages_[0]["report"].objective
    assert refined.objective_ > stage.objective_ + 1.0


@pytest.mark.slow  # the module's fits of the large-n path, end to end
def test_the_subset_stage_is_a_fit_on_its_rows(fits):
    X, y = problem()
    model = fits[0]
    # the rows: drawn from the random_state's stream after the initial inducing rows
    rng = np.random.default_rng(0)
    assert np.array_equal(inducing_rows(model.inducing, 1500, rng), model.inducing_indices_)
    rows = np.sort(rng.choice(1500, size=300, replace=False))
    assert rows.shape == (300,) and np.all(np.diff(rows) > 0)
    # without refinement the fitted values are the subset stage's optimum: its reported objective is the
    # bound on exactly those rows (no hyper-priors here), and not the bound on any other 300 rows
    on_rows = model.log_marginal_likelihood(X=X[rows], y=y[rows])
    assert -model.stages_[0]["report"].objective == pytest.approx(on_rows, rel=1e-9)
    other = np.setdiff1d(np.arange(1500), rows)[:300]
    assert abs(model.log_marginal_likelihood(X=X[other], y=y[other]) - on_rows) > 1.0


@pytest.mark.slow  # two whole fits
def test_a_subset_as_large_as_the_data_is_the_ordinary_fit():
    X, y = problem(300)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        a = SparseGPRegressor(**COMMON, schedule=Joint(max_iter=60)).fit(X, y)
        b = SparseGPRegressor(**COMMON, schedule=SubsetThenAll(subset=300, max_iter=60)).fit(X, y)
    assert b.stages_ is None and a.objective_ == b.objective_


@pytest.mark.slow  # the module's fits of the large-n path, end to end
def test_the_refinement_stops_at_its_iterations_without_a_warning(fits):
    X, y = problem()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = SparseGPRegressor(
            inducing=15, optimize="hyperparameters", random_state=0, schedule=SubsetThenAll(subset=300, refine_iter=2)
        ).fit(X, y)
    assert model.stages_[0]["report"].success and not model.stages_[1]["report"].success
    assert not [w for w in caught if issubclass(w.category, ConvergenceWarning)]


def test_bad_strategy_options_are_named():
    X, y = problem(200)
    with pytest.raises(InputError, match="subset"):
        SparseGPRegressor(schedule=SubsetThenAll(subset=1)).fit(X, y)
    with pytest.raises(InputError, match="refine_iter"):
        SparseGPRegressor(schedule=SubsetThenAll(subset=50, refine_iter=-1)).fit(X, y)
    with pytest.raises(InputError, match="reselect"), pytest.warns(FutureWarning, match="subset= is deprecated"):
        # only the deprecated aliases can still ask for both
        SparseGPRegressor(inducing=InfoGain(10), optimize="hyperparameters", schedule=Alternate(), subset=50).fit(X, y)
