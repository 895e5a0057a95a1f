"""The grouped options (sparsegp.options): the estimator's parameters, nested set_params and grid searches, the
deprecated aliases (the same fit, with a FutureWarning) and model files of either form."""

import inspect
import json
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from sparsegp import InputError, SparseGPRegressor, load_model
from sparsegp.options import ALIASES, Alternate, Auto, Interleaved, Joint, Noise, SubsetThenAll, VariationalEM
from sparsegp.priors import LogNormal
from sparsegp.selection import InfoGain


def data(n=80, seed=0):
    r = np.random.default_rng(seed)
    X = r.uniform(-3, 3, size=(n, 2))
    return X, np.sin(X[:, 0]) + 0.3 * X[:, 1] + 0.1 * r.normal(size=n)


def test_the_estimator_takes_at_most_fifteen_parameters_besides_the_deprecated_aliases():
    names = [p for p in inspect.signature(SparseGPRegressor).parameters if p not in ALIASES]
    assert len(names) <= 15, names  # the fifteenth, likelihood, is the noise model (Gaussian, Student-t, Poisson)
    assert set(ALIASES) <= set(inspect.signature(SparseGPRegressor).parameters)


def test_nested_set_params_puts_a_modified_copy_in_and_changes_no_shared_object():
    shared = Joint(max_iter=40)
    a, b = SparseGPRegressor(schedule=shared), SparseGPRegressor(schedule=shared)
    a.set_params(schedule__max_iter=7, noise__minimum=1e-4, inducing__max_inducing=32)
    assert a.schedule == Joint(max_iter=7) and shared.max_iter == 40 and b.schedule is shared
    assert a.noise == Noise(1.0, minimum=1e-4) and a.inducing == Auto(max_inducing=32)
    assert SparseGPRegressor().set_params(schedule__n_restarts=2).schedule == Joint(n_restarts=2)  # from "joint"
    with pytest.raises(InputError, match="Joint has no option 'n_rounds'"):
        SparseGPRegressor().set_params(schedule__n_rounds=3)
    # a selector as inducing is still scikit-learn's nested estimator-like parameter
    c = SparseGPRegressor(inducing=InfoGain(10)).set_params(inducing__size=12)
    assert c.inducing.size == 12
    assert "schedule__max_iter" in SparseGPRegressor(schedule=Joint()).get_params(deep=True)


def test_a_grid_search_over_a_nested_option_fits_each_value():
    X, y = data(60)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warnings.simplefilter("error", FutureWarning)
        search = GridSearchCV(
            SparseGPRegressor(inducing=8, random_state=0, schedule=Joint()),
            {"schedule__max_iter": [2, 30]},
            cv=2,
        ).fit(X, y)
    assert search.best_estimator_.schedule.max_iter == search.best_params_["schedule__max_iter"]
    assert search.best_estimator_.n_iter_ <= search.best_params_["schedule__max_iter"]


@pytest.mark.parametrize(
    "old, new",
    [
        ({"max_iter": 15, "n_restarts": 1}, {"schedule": Joint(max_iter=15, n_restarts=1)}),
        ({"max_inducing": 8, "tol": 1e-3}, {"inducing": Auto(max_inducing=8), "schedule": Joint(tol=1e-3)}),
        (
            {"noise": 0.5, "min_noise": 1e-3, "noise_prior": LogNormal(0.0, 1.0)},
            {"noise": Noise(0.5, minimum=1e-3, prior=LogNormal(0.0, 1.0))},
        ),
        (
            {"inducing": 10, "subset": 40, "refine_iter": 2, "max_iter": 10},
            {"inducing": 10, "schedule": SubsetThenAll(subset=40, refine_iter=2, max_iter=10)},
        ),
        pytest.param(  # two rounds of variational EM, each alias
            {"inducing": InfoGain(6), "optimize": "hyperparameters", "reselect": "em", "n_rounds": 2, "max_iter": 5},
            {"inducing": InfoGain(6), "optimize": "hyperparameters", "schedule": VariationalEM(n_rounds=2, max_iter=5)},
            marks=pytest.mark.slow,
        ),
    ],
)
def test_a_deprecated_alias_warns_and_fits_as_its_grouped_form_bit_for_bit(old, new):
    X, y = data()
    with pytest.warns(FutureWarning, match="is deprecated and will be removed in the next version: use"):
        before = SparseGPRegressor(random_state=0, **old).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        after = SparseGPRegressor(random_state=0, **new).fit(X, y)
    assert after.objective_ == before.objective_
    np.testing.assert_array_equal(after.Z_, before.Z_)
    assert clone(before).get_params()[next(iter(old))] is not None  # clone carries the alias


def test_model_files_keep_the_flat_options_and_load_them_grouped(tmp_path):
    X, y = data()
    kinds = [
        Joint(max_iter=12, tol=1e-3),
        Alternate(n_rounds=2, max_iter=5),
        Interleaved(max_iter=5),
        SubsetThenAll(subset=40, refine_iter=1, max_iter=8),
    ]
    for i, schedule in enumerate(kinds):
        selected = not isinstance(schedule, (Joint, SubsetThenAll))
        model = SparseGPRegressor(
            inducing=InfoGain(6) if selected else 6,
            optimize="hyperparameters" if selected else True,
            schedule=schedule,
            noise=Noise(0.3, minimum=1e-4),
            random_state=0,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(X, y)
        path = model.save(tmp_path / f"m{i}.npz")
        with np.load(path, allow_pickle=False) as f:
            params = json.loads(str(f["__metadata__"]))["params"]
        assert "schedule" not in params and params["max_iter"] == schedule.max_iter  # the flat form of every format
        assert params["min_noise"] == 1e-4
        loaded = load_model(path)
        assert loaded.schedule == schedule and loaded.noise == Noise(0.3, minimum=1e-4)
        np.testing.assert_allclose(loaded.predict(X[:5]), model.predict(X[:5]), rtol=1e-12)


def test_the_default_estimator_loads_with_its_plain_defaults(tmp_path):
    X, y = data()
    model = SparseGPRegressor(inducing=6, random_state=0).fit(X, y)
    loaded = load_model(model.save(tmp_path / "m.npz"))
    assert loaded.schedule == "joint" and loaded.noise == 1.0 and loaded.inducing == 6


def test_bad_options_are_named():
    X, y = data(30)
    with pytest.raises(InputError, match="schedule must be 'joint' or a schedule"):
        SparseGPRegressor(schedule={"max_iter": 5}).fit(X, y)
    with pytest.raises(InputError, match="SubsetThenAll needs the size of its subset"):
        SparseGPRegressor(schedule=SubsetThenAll()).fit(X, y)
    with pytest.raises(InputError, match="schedule__max_iter must be >= 1"):
        SparseGPRegressor(schedule=Joint(max_iter=0)).fit(X, y)
    with pytest.raises(InputError, match="noise__minimum must be"):
        SparseGPRegressor(noise=Noise(0.1, minimum=-1.0)).fit(X, y)


def test_messages_name_the_options_as_the_estimator_takes_them():
    from sklearn.exceptions import ConvergenceWarning

    X, y = data(60)
    with pytest.warns(ConvergenceWarning, match="raise schedule__max_iter, or use schedule__n_restarts"):
        SparseGPRegressor(inducing=6, random_state=0, schedule=Joint(max_iter=2)).fit(X, y)


def test_a_new_group_object_and_its_nested_option_in_one_call_apply_in_that_order():
    model = SparseGPRegressor(schedule=Joint(max_iter=9)).set_params(
        schedule__max_iter=5, schedule=Alternate(n_rounds=3)
    )  # as scikit-learn's grid search may pass them
    assert model.schedule == Alternate(n_rounds=3, max_iter=5)
