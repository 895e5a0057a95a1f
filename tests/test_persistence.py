import json
import pickle
import zipfile

import numpy as np
import pytest

from sparsegp import ExactGPRegressor, ModelFileError, load_model
from sparsegp.kernels import Matern32, SquaredExponential

# one xdist worker runs this module, so its module-scoped fixture is computed once
pytestmark = pytest.mark.xdist_group("persistence")


@pytest.fixture(scope="module")
def fitted(toy_regression):
    X, y = toy_regression(30, 2)
    k = SquaredExponential([1.0, 1.0], 1.0, bias=0.1) + Matern32(1.0)
    return ExactGPRegressor(k, max_iter=30).fit(X, 3.0 * y + 5.0)


def rewrite(src, dst, edit_meta=None, edit_arrays=None):
    with np.load(src, allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files}
    meta = json.loads(str(arrays.pop("__metadata__")))
    if edit_meta:
        edit_meta(meta)
    if edit_arrays:
        edit_arrays(arrays)
    np.savez(dst, __metadata__=np.array(json.dumps(meta)), **arrays)
    return dst


def test_round_trip_predictions_equal(fitted, tmp_path, rng):
    path = fitted.save(tmp_path / "model")
    assert path.endswith(".npz")
    m2 = load_model(path)
    assert isinstance(m2, ExactGPRegressor)
    Xs = rng.normal(size=(10, 2))
    a, sa = fitted.predict(Xs, return_std=True, include_noise=False)
    b, sb = m2.predict(Xs, return_std=True, include_noise=False)
    np.testing.assert_allclose(a, b, rtol=1e-12)
    np.testing.assert_allclose(sa, sb, rtol=1e-12)
    assert ExactGPRegressor.load(path).noise_ == fitted.noise_


def test_file_is_readable_without_sparsegp(fitted, tmp_path):
    path = fitted.save(tmp_path / "m.npz")
    with np.load(path, allow_pickle=False) as f:
        meta = json.loads(str(f["__metadata__"]))
        assert f["X_train"].shape == (30, 2)
    assert meta["format"] == "sparsegp-model" and meta["format_version"] == 5
    assert meta["estimator"] == "ExactGPRegressor"


@pytest.mark.parametrize(
    "field,edit,message",
    [
        ("format_version", lambda m: m.pop("format_version"), "format_version' is missing"),
        ("format_version", lambda m: m.update(format_version=99), "format_version 99 is not supported"),
        ("format", lambda m: m.update(format="other"), "'format' is 'other'"),
        ("estimator", lambda m: m.update(estimator="Evil"), "unknown estimator type 'Evil'"),
        ("noise", lambda m: m.pop("noise"), "'noise' is missing"),
        ("noise", lambda m: m.update(noise="big"), "'noise' has type str"),
        ("noise", lambda m: m.update(noise=-1.0), "'noise' must be positive"),
        ("kernel", lambda m: m.update(kernel={"type": "Nope"}), "'kernel' is invalid"),
        (
            "kernel",
            lambda m: m["kernel"]["kernels"][0]["params"].update(lengthscale=[-1.0, 1.0]),
            "'kernel' is invalid",
        ),
        ("n_features_in", lambda m: m.update(n_features_in=3), "2 ARD length-scales but the inputs have 3"),
        ("params", lambda m: m["params"].update(evil=1), "unknown entries"),
        ("y_std", lambda m: m.update(y_std=0.0), "y_std"),
    ],
)
def test_corrupt_metadata_fields_are_named(fitted, tmp_path, field, edit, message):
    src = fitted.save(tmp_path / "m.npz")
    bad = rewrite(src, tmp_path / "bad.npz", edit_meta=edit)
    with pytest.raises(ModelFileError, match=message):
        load_model(bad)


def test_corrupt_arrays_are_named(fitted, tmp_path):
    src = fitted.save(tmp_path / "m.npz")
    bad = rewrite(src, tmp_path / "b1.npz", edit_arrays=lambda a: a.pop("X_train"))
    with pytest.raises(ModelFileError, match="'X_train' is missing"):
        load_model(bad)
    bad = rewrite(src, tmp_path / "b2.npz", edit_arrays=lambda a: a.update(y_train=a["y_train"][:-1]))
    with pytest.raises(ModelFileError, match="'y_train' has shape"):
        load_model(bad)

    def nan(a):
        a["X_train"] = a["X_train"].copy()
        a["X_train"][0, 0] = np.nan

    bad = rewrite(src, tmp_path / "b3.npz", edit_arrays=nan)
    with pytest.raises(ModelFileError, match="NaN or inf"):
        load_model(bad)


def test_pickled_file_renamed_to_npz_is_refused(fitted, tmp_path):
    path = tmp_path / "evil.npz"
    with open(path, "wb") as f:
        pickle.dump({"model": [1, 2, 3]}, f)
    with pytest.raises(ModelFileError, match="pickled data"):
        load_model(path)


def test_object_array_inside_npz_is_refused(tmp_path):
    path = tmp_path / "obj.npz"
    np.savez(path, __metadata__=np.array("{}"), X=np.array([{"a": 1}], dtype=object))
    with pytest.raises(ModelFileError):
        load_model(path)


def test_garbage_and_missing_files(tmp_path):
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"\x00\x01not a zip at all")
    with pytest.raises(ModelFileError):
        load_model(junk)
    with pytest.raises(ModelFileError, match="does not exist"):
        load_model(tmp_path / "missing.npz")
    np.save(tmp_path / "arr.npy", np.zeros(3))
    with pytest.raises(ModelFileError, match="single .npy array"):
        load_model(tmp_path / "arr.npy")
    empty = tmp_path / "nometa.npz"
    np.savez(empty, X=np.zeros(3))
    with pytest.raises(ModelFileError, match="no '__metadata__'"):
        load_model(empty)
    badjson = tmp_path / "badjson.npz"
    np.savez(badjson, __metadata__=np.array("{not json"))
    with pytest.raises(ModelFileError, match="not valid JSON"):
        load_model(badjson)
    truncated = tmp_path / "trunc.npz"
    with zipfile.ZipFile(truncated, "w") as z:
        z.writestr("__metadata__.npy", b"\x93NUMPY garbage")
    with pytest.raises(ModelFileError):
        load_model(truncated)
