"""Inputs that once gave silently wrong answers: each case here must fail loudly or be handled."""

import json
import zipfile

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


def _fitted_models():
    from sparsegp import IVMClassifier

    X, y = toy_regression(40, 2)
    yield "exact", ExactGPRegressor(max_iter=10).fit(X, y), X
    yield "sparse", SparseGPRegressor(inducing=6, max_iter=10, random_state=0).fit(X, y), X
    yield "ivm", IVMClassifier(size=10).fit(X, np.where(y > np.median(y), 1, -1)), X


@pytest.mark.parametrize("which", ["exact", "sparse", "ivm"])
def test_single_byte_corruptions_give_model_file_error_or_the_same_model(which, tmp_path):
    name, model, X = next(m for m in _fitted_models() if m[0] == which)
    path = model.save(tmp_path / "m.npz")
    original = open(path, "rb").read()
    expected = load_model(path).predict(X[:5])  # the intact file's model
    positions = np.unique(np.linspace(0, len(original) - 1, 100).astype(int))
    outcomes = {"error": 0, "same": 0}
    for pos in positions:
        data = bytearray(original)
        data[pos] ^= 0xFF
        bad = tmp_path / "bad.npz"
        bad.write_bytes(bytes(data))
        try:
            loaded = load_model(bad)
        except ModelFileError:
            outcomes["error"] += 1
            continue
        np.testing.assert_array_equal(loaded.predict(X[:5]), expected, err_msg=f"byte {pos} flipped")
        outcomes["same"] += 1
    assert outcomes["error"] >= len(positions) // 2  # most bytes matter; the rest are unused zip fields


@pytest.mark.parametrize("content, message", [
    (b"x,y\n1,2\n", "not a sparsegp model file"),
    (b"just some text", "not a sparsegp model file"),
    (b"\x93NUMPY\x01\x00garbage", "single .npy array"),
    (b"\x80\x04K\x01.", "pickled data"),
])
def test_files_that_are_not_archives_are_named_for_what_they_are(content, message, tmp_path):
    path = tmp_path / "m.npz"
    path.write_bytes(content)
    with pytest.raises(ModelFileError, match=message):
        load_model(path)


def _zip_with_member_flag(src, dst, *, compress_type=None, flag_bits=None):
    """Copy an archive, editing the central-directory entry of its first member (method or flags)."""
    data = bytearray(open(src, "rb").read())
    at = data.index(b"PK\x01\x02")
    if flag_bits is not None:
        data[at + 8 : at + 10] = flag_bits.to_bytes(2, "little")
    if compress_type is not None:
        data[at + 10 : at + 12] = compress_type.to_bytes(2, "little")
    open(dst, "wb").write(bytes(data))


@pytest.mark.parametrize("edit", [dict(compress_type=99), dict(flag_bits=1)])
def test_unsupported_or_encrypted_members_give_model_file_error(edit, tmp_path):
    X, y = toy_regression(20, 2)
    path = ExactGPRegressor(max_iter=5).fit(X, y).save(tmp_path / "m.npz")
    bad = tmp_path / "bad.npz"
    _zip_with_member_flag(path, bad, **edit)
    with pytest.raises(ModelFileError, match="cannot be read|not a readable"):
        load_model(bad)


def test_a_member_that_is_not_an_npy_array_gives_model_file_error(tmp_path):
    X, y = toy_regression(20, 2)
    path = ExactGPRegressor(max_iter=5).fit(X, y).save(tmp_path / "m.npz")
    with zipfile.ZipFile(path, "a") as z:
        z.writestr("extra.txt", b"not an array")
    with pytest.raises(ModelFileError):
        load_model(path)
    with pytest.raises(ModelFileError):
        load_model(tmp_path)
