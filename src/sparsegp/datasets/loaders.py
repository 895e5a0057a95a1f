"""Readers for the shipped files (gzip CSV and ``.npz``; never pickle)."""

from __future__ import annotations

import gzip
from importlib import resources

import numpy as np

from ..errors import InputError


def data_path(*parts):
    """Path of a shipped data file inside the installed package."""
    return resources.files("sparsegp.datasets").joinpath("data", *parts)


def read_csv(*parts, dtype=np.float64):
    """(header, values) of a gzip-compressed CSV with one header row."""
    with data_path(*parts).open("rb") as raw, gzip.open(raw, "rt") as f:
        header = f.readline().strip().split(",")
        values = np.loadtxt(f, delimiter=",", dtype=dtype, ndmin=2)
    return header, values


def read_npz(*parts):
    with data_path(*parts).open("rb") as f, np.load(f, allow_pickle=False) as d:
        return {k: d[k] for k in d.files}


def uci_split(name, split):
    """(X_train, y_train, X_test, y_test, feature names) of a uci_datasets folder or its fixed split."""
    if split == "fixed":
        try:
            h, tr = read_csv(name, f"{name}_train.csv.gz")
            _, te = read_csv(name, f"{name}_test.csv.gz")
        except FileNotFoundError:
            raise InputError(f"dataset {name!r} has no fixed split; use an integer split 0..9") from None
        return tr[:, :-1], tr[:, -1], te[:, :-1], te[:, -1], h[:-1]
    if isinstance(split, bool) or not isinstance(split, (int, np.integer)) or not 0 <= split <= 9:
        raise InputError(f"split for {name!r} must be an integer 0..9 or 'fixed', got {split!r}")
    h, data = read_csv(name, "data.csv.gz")
    _, mask = read_csv(name, "test_mask.csv.gz", dtype=np.int64)
    test = mask[:, int(split)].astype(bool)
    return data[~test, :-1], data[~test, -1], data[test, :-1], data[test, -1], h[:-1]


def snelson(split):
    d = read_npz("snelson", "snelson.npz")
    x, y = d["x_train"][:, None], d["y_train"]
    if split == "every10":
        x, y = x[::10], y[::10]
    elif split != "all":
        raise InputError(f"split for 'snelson' must be 'all' or 'every10', got {split!r}")
    return x, y, d["x_test"][:, None], None, ["x"]


def abalone(split, train_size):
    with data_path("abalone", "abalone.csv.gz").open("rb") as raw, gzip.open(raw, "rt") as f:
        header = f.readline().strip().split(",")
        rows = [line.strip().split(",") for line in f if line.strip()]
    sex = {"M": 1.0, "F": -1.0, "I": 0.0}  # the data README's suggested coding, keeps 8 inputs
    data = np.array([[sex[r[0]]] + [float(v) for v in r[1:]] for r in rows])
    if isinstance(split, bool) or not isinstance(split, (int, np.integer)) or split < 0:
        raise InputError(f"split for 'abalone' is a non-negative integer seed, got {split!r}")
    train_size = 3133 if train_size is None else train_size
    if isinstance(train_size, bool) or not isinstance(train_size, (int, np.integer)) or not 1 <= train_size < len(data):
        raise InputError(f"train_size for 'abalone' must be an integer in 1..{len(data) - 1}, got {train_size!r}")
    perm = np.random.default_rng(int(split)).permutation(len(data))
    tr, te = perm[:train_size], perm[train_size:]
    return data[tr, :-1], data[tr, -1], data[te, :-1], data[te, -1], header[:-1]


def mnist(split):
    if split != "official":
        raise InputError(f"split for 'mnist' must be 'official', got {split!r}")
    tr, te = read_npz("mnist", "mnist_train.npz"), read_npz("mnist", "mnist_test.npz")
    names = [f"px{i}" for i in range(784)]
    return (
        tr["images"].astype(np.float64),
        tr["labels"].astype(np.int64),
        te["images"].astype(np.float64),
        te["labels"].astype(np.int64),
        names,
    )


def banana(split):
    h, data = read_csv("banana", "banana.csv.gz")
    mh, mask = read_csv("banana", "test_mask.csv.gz", dtype=np.int64)
    if split not in mh:
        raise InputError(f"split for 'banana' must be one of {mh}, got {split!r}")
    test = mask[:, mh.index(split)].astype(bool)
    y = data[:, -1].astype(np.int64)
    return data[~test, :-1], y[~test], data[test, :-1], y[test], h[:-1]
