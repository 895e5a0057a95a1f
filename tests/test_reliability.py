"""Inputs that once gave silently wrong answers: each case here must fail loudly or be handled."""

import json

import numpy as np
import pytest

from conftest import toy_regression
from sparsegp import ExactGPRegressor, InputError, ModelFileError, SparseGPRegressor, load_model


class Table:
    """The part of a pandas DataFrame the estimators look at: named columns and an array view."""

    def __init__(self, values, columns):
        self.values, self.columns = np.asarray(values, dtype=float), list(columns)

    def __array__(self, dtype=None, copy=None):
        return self.values if dtype is None else self.values.astype(dtype)

    def __len__(self):
        return len(self.values)

    @property
    def shape(self):
        return self.values.shape


ESTIMATORS = [
    lambda: ExactGPRegressor(max_iter=20),
    lambda: SparseGPRegressor(inducing=8, max_iter=20, random_state=0),
]


@pytest.mark.parametrize("make", ESTIMATORS)
def test_feature_names_are_kept_checked_and_saved(make, tmp_path):
    X, y = toy_regression(40, 3)
    model = make().fit(Table(X, ["a", "b", "c"]), y)
    assert model.feature_names_in_.dtype == object and list(model.feature_names_in_) == ["a", "b", "c"]
    same = model.predict(Table(X[:5], ["a", "b", "c"]))
    np.testing.assert_array_equal(same, model.predict(X[:5]))  # a plain array is taken by position
    with pytest.raises(InputError, match="same order"):
        model.predict(Table(X[:5, [2, 0, 1]], ["c", "a", "b"]))
    with pytest.raises(InputError, match="unseen at fit time:\n- d"):
        model.predict(Table(X[:5], ["a", "b", "d"]))
    path = model.save(tmp_path / "m.npz")
    loaded = load_model(path)
    assert list(loaded.feature_names_in_) == ["a", "b", "c"]
    with pytest.raises(InputError, match="same order"):
        loaded.predict(Table(X[:5, [1, 0, 2]], ["b", "a", "c"]))
    refit = make().fit(X, y)  # fitting on an array removes names from an earlier fit
    assert not hasattr(refit, "feature_names_in_")


@pytest.mark.parametrize("names", [["a", "b"], ["a", "a", "b"], [1, 2, 3], "abc"])
def test_malformed_feature_names_in_a_model_file_are_rejected(names, tmp_path):
    X, y = toy_regression(30, 3)
    path = ExactGPRegressor(max_iter=5).fit(Table(X, ["a", "b", "c"]), y).save(tmp_path / "m.npz")
    with np.load(path, allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files}
    meta = json.loads(str(arrays.pop("__metadata__")))
    assert meta["feature_names"] == ["a", "b", "c"]
    meta["feature_names"] = names
    bad = tmp_path / "bad.npz"
    np.savez(bad, __metadata__=np.array(json.dumps(meta)), **arrays)
    with pytest.raises(ModelFileError, match="feature_names"):
        load_model(bad)
