import csv
import json
import pickle

import numpy as np
import pytest

from conftest import toy_regression
from sparsegp.cli import main


def write_csv(path, X, y):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow([f"x{i}" for i in range(X.shape[1])] + ["target"])
        for row, t in zip(X, y):
            w.writerow([*row, t])


def test_datasets_lists_everything(capsys):
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    for name in ("kin40k", "pumadyn32nm", "snelson", "mnist"):
        assert name in out
    assert main(["datasets", "--json"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert any("non-commercial" in r["licence"] for r in records)


def test_fit_on_shipped_dataset_prints_metrics_and_saves(tmp_path, capsys):
    out = tmp_path / "housing.npz"
    assert main(["fit", "--dataset", "housing", "--split", "0", "--max-iter", "30", "--quiet", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    header, _, row = text.splitlines()[:3]
    cells = dict(zip([h.strip() for h in header.split("|")], [c.strip() for c in row.split("|")]))
    assert float(cells["SMSE"]) < 0.5
    assert np.isfinite(float(cells["SNLP"]))
    assert out.exists()


def test_fit_and_predict_on_csv(tmp_path, capsys):
    X, y = toy_regression(40, 2)
    data = tmp_path / "train.csv"
    write_csv(data, X, y)
    model = tmp_path / "m.npz"
    assert main(["fit", "--data", str(data), "--target", "target", "--max-iter", "30", "--quiet", "--out", str(model)]) == 0
    capsys.readouterr()
    preds = tmp_path / "preds.csv"
    assert main(["predict", "--model", str(model), "--data", str(data), "--target", "target", "--out", str(preds)]) == 0
    rows = list(csv.DictReader(open(preds)))
    assert len(rows) == 40 and set(rows[0]) == {"mean", "std"}
    mean = np.array([float(r["mean"]) for r in rows])
    assert np.mean((mean - y) ** 2) < 0.1 * np.var(y)
    assert all(float(r["std"]) > 0 for r in rows)


def test_errors_are_reported_not_raised(tmp_path, capsys):
    X, y = toy_regression(10, 2)
    data = tmp_path / "d.csv"
    write_csv(data, X, y)
    assert main(["fit", "--data", str(data), "--target", "nope", "--quiet"]) == 2
    assert "no column named 'nope'" in capsys.readouterr().err
    evil = tmp_path / "evil.npz"
    evil.write_bytes(pickle.dumps({"a": 1}))
    assert main(["predict", "--model", str(evil), "--data", str(data), "--target", "target"]) == 2
    assert "pickled data" in capsys.readouterr().err
    assert main(["fit", "--dataset", "nonexistent", "--quiet"]) == 2
    assert "unknown dataset" in capsys.readouterr().err


@pytest.mark.parametrize("cmd", [["--help"], ["fit", "--help"], ["predict", "--help"], ["datasets", "--help"]])
def test_help(cmd, capsys):
    with pytest.raises(SystemExit) as exc:
        main(cmd)
    assert exc.value.code == 0
    assert "usage: sparsegp" in capsys.readouterr().out


@pytest.mark.parametrize("model", ["vfe", "fitc"])
def test_fit_sparse_models(model, tmp_path, capsys):
    out = tmp_path / "m.npz"
    args = ["fit", "--dataset", "housing", "--model", model, "--inducing", "16", "--max-iter", "30", "--quiet", "--out", str(out)]
    assert main(args) == 0
    text = capsys.readouterr().out
    header, _, row = text.splitlines()[:3]
    cells = dict(zip([h.strip() for h in header.split("|")], [c.strip() for c in row.split("|")]))
    assert cells["m"] == "16" and float(cells["SMSE"]) < 0.6
    from sparsegp import SparseGPRegressor, load_model

    assert isinstance(load_model(out), SparseGPRegressor)


def test_fit_with_greedy_selection_and_em(capsys):
    argv = ["fit", "--dataset", "housing", "--model", "vfe", "--inducing", "12", "--select", "vfe",
            "--fixed-inducing", "--reselect", "em", "--rounds", "2", "--max-iter", "20", "--quiet"]
    assert main(argv) == 0
    header, _, row = capsys.readouterr().out.splitlines()[:3]
    cells = dict(zip([h.strip() for h in header.split("|")], [c.strip() for c in row.split("|")]))
    assert cells["m"] == "12" and float(cells["SMSE"]) < 0.6
