import hashlib

import numpy as np
import pytest

from sparsegp import InputError, datasets
from sparsegp.datasets.loaders import data_path

EXPECTED = {
    # name, split: (n_train, n_test, D)
    ("kin40k", "fixed"): (10000, 30000, 8),
    ("kin40k", 0): (36000, 4000, 8),
    ("pumadyn32nm", "fixed"): (7168, 1024, 32),
    ("housing", 0): (456, 50, 13),
    ("snelson", "all"): (200, 301, 1),
    ("snelson", "every10"): (20, 301, 1),
    ("abalone", 0): (3133, 1044, 8),
    ("banana", "ratsch_1"): (400, 4900, 2),
    ("pol", "fixed"): (10000, 5000, 26),
}


@pytest.mark.parametrize("key", list(EXPECTED))
def test_shapes_of_canonical_splits(key):
    name, split = key
    d = datasets.load(name, split=split)
    n_tr, n_te, D = EXPECTED[key]
    assert d.X_train.shape == (n_tr, D) and d.y_train.shape == (n_tr,)
    assert d.X_test.shape == (n_te, D)
    assert d.y_test is None if name == "snelson" else d.y_test.shape == (n_te,)
    assert np.all(np.isfinite(d.X_train))


def test_mnist_official_split():
    d = datasets.load("mnist")
    assert d.X_train.shape == (60000, 784) and d.X_test.shape == (10000, 784)
    assert np.bincount(d.y_train).tolist() == [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949]
    assert d.X_train.max() == 255.0


def test_default_split_of_kin40k_is_the_fixed_one():
    assert datasets.load("kin40k").X_train.shape == (10000, 8)
    assert "non-commercial" in datasets.load("kin40k").licence


@pytest.mark.parametrize("prep", ["standardize", "center", "linear", "none"])
def test_preprocessing_options(prep):
    d = datasets.load("housing", split=1, preprocessing=prep)
    raw = datasets.load("housing", split=1, preprocessing="none")
    if prep == "none":
        np.testing.assert_array_equal(d.X_train, raw.X_train)
        np.testing.assert_array_equal(d.y_train, raw.y_train)
        return
    np.testing.assert_allclose(d.X_train.mean(0), 0.0, atol=1e-10)
    np.testing.assert_allclose(d.X_train.std(0), 1.0, atol=1e-10)
    assert abs(d.y_train.mean()) < 1e-10
    if prep == "center":
        assert d.y_train.std() == pytest.approx(raw.y_train.std())
    else:
        assert d.y_train.std() == pytest.approx(1.0)
    if prep == "linear":
        # Residual of a least-squares fit: orthogonal to every standardised input.
        np.testing.assert_allclose(d.X_train.T @ d.y_train / len(d.y_train), 0.0, atol=1e-10)
    # Test targets follow the training-set transform and invert exactly.
    back = d.inverse_transform_y(d.y_test, d.X_test)
    np.testing.assert_allclose(back, raw.y_test, rtol=1e-10, atol=1e-10)


def test_n_train_keeps_the_first_rows():
    full = datasets.load("kin40k", split=0, preprocessing="none")
    sub = datasets.load("kin40k", split=0, preprocessing="none", n_train=2000)
    np.testing.assert_array_equal(sub.X_train, full.X_train[:2000])
    np.testing.assert_array_equal(sub.X_test, full.X_test)
    # on abalone too: n_train cuts the training part, train_size sets the random split
    ab = datasets.load("abalone", split=1, preprocessing="none", train_size=4000)
    assert (len(ab.y_train), len(ab.y_test)) == (4000, 177)
    cut = datasets.load("abalone", split=1, preprocessing="none", train_size=4000, n_train=100)
    np.testing.assert_array_equal(cut.X_train, ab.X_train[:100])
    np.testing.assert_array_equal(cut.X_test, ab.X_test)


def test_unpacks_as_four_arrays():
    X, y, Xs, ys = datasets.load("housing")
    assert X.shape[1] == Xs.shape[1] == 13 and len(y) == len(X) and len(ys) == len(Xs)


def test_available_lists_sources_and_licences():
    info = {d["name"]: d for d in datasets.available()}
    assert {"kin40k", "pumadyn32nm", "housing", "snelson", "abalone", "mnist", "banana"} <= set(info)
    for d in info.values():
        assert d["source"] and d["licence"] and d["rows"] > 0 and d["features"] > 0
    assert "non-commercial" in info["kin40k"]["licence"]
    assert "non-commercial" in info["pumadyn32nm"]["licence"]
    for name in ("kin40k", "pumadyn32nm", "pol"):
        assert "non-commercial" in data_path(name, "LICENSE-fgp.txt").read_text()


def test_bad_requests_are_named():
    with pytest.raises(InputError, match="unknown dataset 'sarcos'"):
        datasets.load("sarcos")
    with pytest.raises(InputError, match="split for 'housing' must be an integer 0..9 or 'fixed'"):
        datasets.load("housing", split=12)
    with pytest.raises(InputError, match="has no fixed split"):
        datasets.load("housing", split="fixed")
    with pytest.raises(InputError, match="preprocessing must be one of"):
        datasets.load("housing", preprocessing="whiten")
    with pytest.raises(InputError, match="exceeds"):
        datasets.load("housing", n_train=10_000)
    with pytest.raises(InputError, match="train_size is for datasets split at random"):
        datasets.load("housing", train_size=100)
    with pytest.raises(InputError, match="train_size for 'abalone' must be an integer in 1..4176"):
        datasets.load("abalone", train_size=4177)


def _manifest(path):
    out = {}
    with open(path) as f:
        for line in f:
            digest, rel = line.split()
            out[rel] = digest
    return out


def _sha256(rel):
    return hashlib.sha256(data_path(*rel.split("/")).read_bytes()).hexdigest()


def test_shipped_files_match_shipped_manifest():
    manifest = _manifest(str(data_path("MANIFEST.sha256")))
    assert len(manifest) >= 30
    for rel, digest in manifest.items():
        assert _sha256(rel) == digest, rel
