import csv
import json
import pickle
import warnings

import numpy as np
import pytest

from sparsegp import ExactGPRegressor, SparseGPRegressor, load_model, metrics
from sparsegp.cli import main
from sparsegp.options import Joint


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


@pytest.mark.slow
def test_fit_on_shipped_dataset_prints_metrics_and_saves(tmp_path, capsys):
    out = tmp_path / "housing.npz"
    assert main(["fit", "--dataset", "housing", "--split", "0", "--max-iter", "30", "--quiet", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    header, _, row = text.splitlines()[:3]
    cells = dict(zip([h.strip() for h in header.split("|")], [c.strip() for c in row.split("|")]))
    assert float(cells["SMSE"]) < 0.5
    assert np.isfinite(float(cells["SNLP"]))
    assert out.exists()
    assert "gap" not in cells  # the exact GP has no gap to certify
    # a sparse model prints its certificate: the gap it carries, and per training row
    args = ["fit", "--dataset", "housing", "--split", "0", "--model", "vfe", "--inducing", "20", "--max-iter", "30"]
    assert main([*args, "--quiet", "--out", str(tmp_path / "vfe.npz")]) == 0
    header, _, row = capsys.readouterr().out.splitlines()[:3]
    cells = dict(zip([h.strip() for h in header.split("|")], [c.strip() for c in row.split("|")]))
    model = load_model(tmp_path / "vfe.npz")
    assert float(cells["gap"]) == pytest.approx(model.gap_, rel=1e-2) and model.gap_ >= 0
    assert float(cells["gap/n"]) == pytest.approx(model.gap_ / int(cells["n_train"]), rel=1e-1)


@pytest.mark.slow
def test_fit_chooses_m_by_default(tmp_path, capsys, monkeypatch):
    from sparsegp.fitting import growth

    monkeypatch.setattr(growth, "START_M", 32)  # a first size below housing's 455 rows, so that m is chosen
    args = ["fit", "--dataset", "housing", "--split", "0", "--model", "vfe", "--max-iter", "40", "--quiet"]
    assert main([*args, "--out", str(tmp_path / "auto.npz")]) == 0
    header, _, row = capsys.readouterr().out.splitlines()[:3]
    cells = dict(zip([h.strip() for h in header.split("|")], [c.strip() for c in row.split("|")]))
    model = load_model(tmp_path / "auto.npz")
    assert int(cells["m"]) == model.Z_.shape[0] == model.inducing_path_[-1]["m"]
    assert cells["m_stop"] == model.stop_reason_.split(":")[0] and cells["m_stop"] in (
        "gap",
        "gain",
        "every distinct input",
    )
    with pytest.raises(SystemExit) as exit_:
        main(["fit", "--dataset", "housing", "--model", "vfe", "--inducing", "many"])
    assert exit_.value.code == 2 and "expected 'auto' or a whole number" in capsys.readouterr().err


def test_fit_and_predict_on_csv(toy_regression, tmp_path, capsys):
    X, y = toy_regression(40, 2)
    data = tmp_path / "train.csv"
    write_csv(data, X, y)
    model = tmp_path / "m.npz"
    assert (
        main(["fit", "--data", str(data), "--target", "target", "--max-iter", "30", "--quiet", "--out", str(model)])
        == 0
    )
    capsys.readouterr()
    preds = tmp_path / "preds.csv"
    assert main(["predict", "--model", str(model), "--data", str(data), "--target", "target", "--out", str(preds)]) == 0
    rows = list(csv.DictReader(open(preds)))
    assert len(rows) == 40 and set(rows[0]) == {"mean", "std"}
    mean = np.array([float(r["mean"]) for r in rows])
    std = np.array([float(r["std"]) for r in rows])
    assert np.mean((mean - y) ** 2) < 0.1 * np.var(y)
    assert all(std > 0)
    # Without --target the model's own target column is recognised and scored, beside the predictions
    capsys.readouterr()
    assert main(["predict", "--model", str(model), "--data", str(data)]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[0] == "mean,std" and len(out.splitlines()) == 41  # the predictions alone
    table = [[c.strip() for c in line.strip("|").split("|")] for line in err.splitlines() if line.startswith("|")]
    scores = dict(zip(table[0], table[-1]))
    fitted = load_model(model)
    trivial = metrics.ntl(y, np.full(40, fitted.y_mean_), np.full(40, fitted.y_std_**2))
    assert float(scores["SNLP"]) == pytest.approx(metrics.ntl(y, mean, std**2) - trivial, abs=1e-4)
    assert float(scores["coverage_2sd"]) == pytest.approx(np.mean(np.abs(y - mean) <= 2 * std), abs=1e-3)
    assert float(scores["SMSE"]) == pytest.approx(metrics.smse(y, mean), abs=1e-4)


def test_errors_are_reported_not_raised(toy_regression, tmp_path, capsys):
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


@pytest.mark.slow
@pytest.mark.parametrize("model", ["vfe", "fitc"])
def test_fit_sparse_models(model, tmp_path, capsys):
    out = tmp_path / "m.npz"
    args = [
        "fit",
        "--dataset",
        "housing",
        "--model",
        model,
        "--inducing",
        "16",
        "--max-iter",
        "30",
        "--quiet",
        "--out",
        str(out),
    ]
    assert main(args) == 0
    text = capsys.readouterr().out
    header, _, row = text.splitlines()[:3]
    cells = dict(zip([h.strip() for h in header.split("|")], [c.strip() for c in row.split("|")]))
    assert cells["m"] == "16" and float(cells["SMSE"]) < 0.6
    from sparsegp import SparseGPRegressor, load_model

    assert isinstance(load_model(out), SparseGPRegressor)


@pytest.mark.slow
def test_fit_with_greedy_selection_and_em(capsys):
    argv = [
        "fit",
        "--dataset",
        "housing",
        "--model",
        "vfe",
        "--inducing",
        "12",
        "--select",
        "vfe",
        "--fixed-inducing",
        "--reselect",
        "em",
        "--rounds",
        "2",
        "--max-iter",
        "20",
        "--quiet",
    ]
    assert main(argv) == 0
    header, _, row = capsys.readouterr().out.splitlines()[:3]
    cells = dict(zip([h.strip() for h in header.split("|")], [c.strip() for c in row.split("|")]))
    assert cells["m"] == "12" and float(cells["SMSE"]) < 0.6


def _write_columns(path, names, columns):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(names)
        w.writerows(zip(*columns))


@pytest.mark.slow
@pytest.mark.parametrize("model_name", ["exact", "vfe"])
def test_predict_matches_columns_by_name(toy_regression, model_name, tmp_path, capsys):
    X, y = toy_regression(60, 3)
    X[:, 2] *= 3.0  # columns that differ, so a positional mix-up changes the predictions
    train = tmp_path / "train.csv"
    _write_columns(train, ["a", "b", "c", "target"], [X[:, 0], X[:, 1], X[:, 2], y])
    model = tmp_path / "m.npz"
    assert (
        main(
            [
                "fit",
                "--data",
                str(train),
                "--target",
                "target",
                "--model",
                model_name,
                "--inducing",
                "10",
                "--max-iter",
                "20",
                "--quiet",
                "--out",
                str(model),
            ]
        )
        == 0
    )

    def predict(names, columns, *extra):
        data, out = tmp_path / "test.csv", tmp_path / "preds.csv"
        _write_columns(data, names, columns)
        code = main(["predict", "--model", str(model), "--data", str(data), "--out", str(out), *extra])
        return code, (np.array([float(r["mean"]) for r in csv.DictReader(open(out))]) if code == 0 else None)

    code, original = predict(["a", "b", "c"], [X[:, 0], X[:, 1], X[:, 2]])
    assert code == 0
    code, reordered = predict(["c", "a", "b"], [X[:, 2], X[:, 0], X[:, 1]])
    assert code == 0
    np.testing.assert_array_equal(reordered, original)
    code, _ = predict(["c", "b", "target", "a"], [X[:, 2], X[:, 1], y, X[:, 0]], "--target", "target")
    assert code == 0
    capsys.readouterr()
    assert predict(["a", "b"], [X[:, 0], X[:, 1]])[0] == 2
    assert "missing ['c']" in capsys.readouterr().err
    assert predict(["a", "b", "c", "d"], [X[:, 0], X[:, 1], X[:, 2], y])[0] == 2
    assert "unknown ['d']" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("n", [6, 60])
@pytest.mark.parametrize("model_name", ["exact", "vfe"])
def test_the_command_line_fits_the_estimators_model(model_name, n, tmp_path, capsys):
    """The same data and options give the same model from ``sparsegp fit`` as from the estimator: the default
    kernel with its tiny-data priors included (n = 6 rows for 2 inputs is tiny)."""
    r = np.random.default_rng(3)
    X = r.uniform(-2, 2, size=(n, 2))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.1 * r.normal(size=n)
    csv = tmp_path / "train.csv"
    np.savetxt(csv, np.column_stack([X, y]), delimiter=",", header="a,b,y", comments="", fmt="%.17g")
    out = tmp_path / "model.npz"
    args = ["fit", "--data", str(csv), "--target", "y", "--model", model_name, "--max-iter", "30", "--quiet"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main([*args, "--inducing", "4", "--seed", "0", "--out", str(out)]) == 0
        if model_name == "exact":
            direct = ExactGPRegressor(max_iter=30, random_state=0).fit(X, y)
        else:
            direct = SparseGPRegressor(
                approximation=model_name, inducing=4, schedule=Joint(max_iter=30), random_state=0
            ).fit(X, y)
    loaded = load_model(str(out))
    for name, value in direct.kernel_.parameters().items():
        np.testing.assert_array_equal(loaded.kernel_.parameters()[name], value)
    assert loaded.noise_ == direct.noise_
    Xs = r.uniform(-2, 2, size=(5, 2))
    np.testing.assert_array_equal(loaded.predict(Xs), direct.predict(Xs))


@pytest.mark.slow  # an end-to-end run: the classifier's fit and prediction through the CLI
def test_classification_fit_and_predict_on_csv(tmp_path, capsys):
    rng = np.random.default_rng(0)
    X = rng.uniform(-3, 3, size=(120, 2))
    label = (np.sin(X[:, 0]) + 0.5 * X[:, 1] > 0).astype(int)
    data = tmp_path / "cls.csv"
    np.savetxt(data, np.column_stack([X, label]), delimiter=",", header="a,b,label", comments="", fmt="%.10g")
    model = tmp_path / "cls.npz"
    args = ["fit", "--data", str(data), "--target", "label", "--task", "classification", "--inducing", "12"]
    assert main([*args, "--max-iter", "100", "--quiet", "--out", str(model)]) == 0
    out = capsys.readouterr().out
    assert "LOO_log_loss" in out and "svgp" in out
    preds = tmp_path / "p.csv"
    assert main(["predict", "--model", str(model), "--data", str(data), "--target", "label", "--out", str(preds)]) == 0
    table = np.loadtxt(preds, delimiter=",", skiprows=1)
    assert table.shape == (120, 3)
    np.testing.assert_allclose(table[:, 1] + table[:, 2], 1.0, atol=1e-12)
    assert np.mean(table[:, 0] == label) > 0.9
    assert "accuracy" in capsys.readouterr().out
