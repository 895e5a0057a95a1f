"""The ``sparsegp`` command line: datasets, fit, predict."""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import os
import sys
import time
import warnings
import zipfile
from collections.abc import Sequence

import numpy as np

from ._atomic import replaced_atomically
from .errors import SparseGPError
from .tables import markdown_table


class _Choices(Sequence):
    """An option's choices, read from the module that owns them when argparse first needs them (a subcommand's
    help, or checking a value), so that ``sparsegp --help`` and ``sparsegp datasets`` import no JAX."""

    def __init__(self, read):
        self._read, self._values = read, None

    def _all(self) -> tuple:
        if self._values is None:
            self._values = tuple(self._read())
        return self._values

    def __getitem__(self, i):
        return self._all()[i]

    def __len__(self) -> int:
        return len(self._all())


def _models():
    from .approximations.registry import APPROXIMATIONS

    return ("exact", *APPROXIMATIONS)


def _config_names(name: str):
    from .fitting import config

    return getattr(config, name)


KERNELS = ("se-ard", "se", "matern12", "matern32", "matern52", "rq", "periodic")


def _kernel(name: str, X):
    """The named kernel: None (the estimators' own default, priors on tiny data included) for "se-ard", otherwise
    the family with its length-scales at the columns' spread, as the default starts."""
    if name == "se-ard":
        return None
    from . import kernels as K

    spread = np.std(X, axis=0)
    spread = np.asarray(spread.compute() if hasattr(spread, "compute") else spread)  # a dask array's: computed
    ard = np.where(spread > 0, spread, 1.0)
    iso = float(np.sqrt(np.mean(spread**2))) or 1.0
    return {
        "se": lambda: K.SquaredExponential(lengthscale=iso),
        "matern12": lambda: K.Matern12(lengthscale=ard),
        "matern32": lambda: K.Matern32(lengthscale=ard),
        "matern52": lambda: K.Matern52(lengthscale=ard),
        "rq": lambda: K.RationalQuadratic(lengthscale=ard, alpha=1.0),
        # a period per input at its spread, a start the fit moves from (the period's likelihood has many modes)
        "periodic": lambda: K.Periodic(period=ard, lengthscale=1.0),
    }[name]()


def read_table(path: str, target: str | None, features=None, delimiter: str = ",", own_target: str | None = None):
    """(X, y or None, feature names) from a CSV with a header row, or an NPZ of named columns.

    ``features`` (the names a model was fitted on) picks the columns by name, in that order; a
    missing feature or a column that is neither a feature nor the target is an error. ``own_target`` (the
    target column a model was fitted on) is the target where ``target`` is None and the file has that column.
    """
    if not os.path.exists(path):
        raise SparseGPError(f"data file {path!r} does not exist")
    if os.path.isdir(path):
        raise SparseGPError(f"data file {path!r} is a directory; give a CSV or NPZ file")
    if path.endswith(".npz"):
        try:
            with np.load(path, allow_pickle=False) as f:
                cols = {k: np.asarray(f[k]) for k in f.files}
        except (OSError, ValueError, zipfile.BadZipFile) as exc:
            raise SparseGPError(f"{path!r} is not a readable NPZ of numeric arrays ({exc})") from None
        if "X" in cols and cols["X"].ndim == 2:
            X = cols["X"].astype(np.float64)
            names = [f"x{i}" for i in range(X.shape[1])]
            if features is not None and list(features) != names:
                raise SparseGPError(
                    f"{path!r} holds an unnamed matrix 'X', but the model was fitted on named "
                    f"columns {list(features)}: store one array per column"
                )
            if target is None and own_target in cols:
                target = own_target
            if target and target not in cols:
                raise SparseGPError(f"{path!r} has no array named {target!r}; it has {sorted(cols)}")
            y = cols[target].astype(np.float64) if target else None
            return X, y, names
        names = list(cols)
    else:
        names, cols = _read_csv(path, delimiter)
    if target is None and own_target in cols:
        target = own_target
    if target is not None and target not in cols:
        raise SparseGPError(f"{path!r} has no column named {target!r}; columns: {names}")
    feats = [n for n in names if n != target]
    if features is not None:
        missing = [n for n in features if n not in cols]
        unknown = [n for n in feats if n not in set(features)]
        if missing or unknown:
            raise SparseGPError(
                f"{path!r}: the columns must be the model's features {list(features)}"
                + (f"; missing {missing}" if missing else "")
                + (f"; unknown {unknown} (name the target with --target)" if unknown else "")
            )
        feats = list(features)
    X = np.column_stack([np.asarray(cols[n], dtype=np.float64) for n in feats])
    y = np.asarray(cols[target], dtype=np.float64) if target is not None else None
    return X, y, feats


def _read_csv(path: str, delimiter: str):
    """(header names, {name: float column}) of a CSV file, every malformed case named."""
    with open(path, newline="") as f:
        reader = csv.reader(f, delimiter=delimiter)
        try:
            names = [h.strip() for h in next(reader)]
        except StopIteration:
            raise SparseGPError(f"{path!r} is empty; expected a CSV with a header row") from None
        rows = [(reader.line_num, r) for r in reader if r]
    if len(names) == 1:
        other = [d for d in (";", "\t", "|", " ") if d in names[0].strip()]
        if other:
            raise SparseGPError(
                f"{path!r}: the header {names[0]!r} is one column; the file looks "
                f"{other[0]!r}-delimited: pass --delimiter {other[0]!r}"
            )
    if not rows:
        raise SparseGPError(f"{path!r} has a header but no data rows")
    for line, row in rows:
        if len(row) != len(names):
            raise SparseGPError(f"{path!r} line {line}: {len(row)} values, but the header has {len(names)} columns")
    try:
        values = np.array([r for _, r in rows], dtype=np.float64)
    except ValueError:
        for line, row in rows:
            bad = [v for v in row if not _is_number(v)]
            if bad:
                raise SparseGPError(f"{path!r} line {line}: {bad[0]!r} is not a number") from None
        raise
    return names, {n: values[:, i] for i, n in enumerate(names)}


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _check_writable(path: str, what: str) -> str:
    """Fail before the work, not after it: the output's folder must exist (or be creatable) and be writable."""
    if os.path.isdir(path):
        raise SparseGPError(f"{what} {path!r} is a directory; give a file name")
    folder = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise SparseGPError(f"cannot create the folder of {what} {path!r}: {exc.strerror}") from None
    if not os.access(folder, os.W_OK):
        raise SparseGPError(f"cannot write {what} {path!r}: the folder {folder!r} is not writable")
    return path


def _table(rows: list[dict]) -> str:
    keys = list(rows[0])
    return markdown_table(keys, [[r[k] for k in keys] for r in rows])


SELECTED_SIZE = 256  # --select without --inducing


def _inducing_count(text: str):
    """``--inducing``: "auto" or a whole number of inducing points."""
    if text == "auto":
        return text
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected 'auto' or a whole number, got {text!r}") from None


def _build_model(args, X):
    from .estimators import ExactGPRegressor, SparseGPRegressor
    from .options import grouped_options

    common = dict(
        kernel=_kernel(args.kernel, X),
        n_restarts=args.restarts,
        max_iter=args.max_iter,
        duplicates=args.duplicates,
        random_state=args.seed,
        verbose=not args.quiet,
    )
    if args.model == "exact":
        return ExactGPRegressor(**common)
    inducing = args.inducing
    if args.select != "random":
        from .selection import SELECTORS

        size = SELECTED_SIZE if inducing == "auto" else inducing  # a greedy set has a size
        inducing = SELECTORS[args.select](size, random_state=args.seed)
    options = dict(
        approximation=args.model,
        inducing=inducing,
        optimize="hyperparameters" if args.fixed_inducing else True,
        prediction=args.prediction,
        reselect=args.reselect,
        n_rounds=args.rounds,
        subset=args.subset,
        refine_iter=args.refine_iter,
        max_inducing=args.max_inducing,
        time_budget=args.time_budget,
        tol=args.tol,
        **common,
    )
    return SparseGPRegressor(**grouped_options(options))  # the command line's flat options, grouped


def cmd_datasets(args):
    from .datasets import available

    rows = [
        {"name": d["name"], "task": d["task"], "rows": d["rows"], "features": d["features"], "splits": d["splits"]}
        for d in available()
    ]
    if args.json:
        print(json.dumps(available(), indent=2))
    else:
        print(_table(rows))
        print("\nSources and licences: sparsegp datasets --json")
    return 0


def _labels_from_table(y):
    """Class labels read from a table as floats: whole numbers become integers (a model file stores int or str)."""
    y = np.asarray(y)
    if y.dtype.kind == "f" and np.all(np.isfinite(y)) and np.all(y == np.round(y)):
        return y.astype(np.int64)
    return y


def _fit_classifier(args, X, y, X_test, y_test, source):
    from . import metrics
    from .estimators import SparseGPClassifier

    model = SparseGPClassifier(
        kernel=None if args.kernel == "se-ard" else _kernel(args.kernel, X),
        inducing=args.inducing,
        max_inducing=args.max_inducing,
        tol=args.tol or 1e-3,
        max_iter=args.max_iter,
        random_state=args.seed,
        verbose=not args.quiet,
    )
    t0 = time.perf_counter()
    model.fit(X, _labels_from_table(y))
    row = {"data": source, "model": "svgp", "n_train": len(X), "classes": len(model.classes_), "m": model.Z_.shape[0]}
    row["m_stop"] = model.stop_reason_.split(":")[0]
    row["fit_s"] = f"{time.perf_counter() - t0:.2f}"
    if X_test is not None and y_test is not None:
        p = model.predict_proba(X_test)
        codes = np.searchsorted(model.classes_, _labels_from_table(y_test))
        row["n_test"] = len(X_test)
        row["accuracy"] = f"{np.mean(p.argmax(axis=1) == codes):.4f}"
        row["log_loss"] = f"{-np.mean(np.log(np.maximum(p[np.arange(codes.size), codes], 1e-300))):.4f}"
        row["Brier"] = f"{metrics.brier_score(codes, p):.4f}"
        row["ECE"] = f"{metrics.expected_calibration_error(codes, p):.4f}"
    row["bound"] = f"{model.bound_:.2f}"
    row["LOO_log_loss"] = f"{model.loo_log_loss_:.4f}"
    row["LOO_ECE"] = f"{model.loo_calibration_error_:.4f}"
    if args.out:
        row["saved"] = model.save(args.out)
    print(_table([row]))
    return 0


def cmd_fit(args):
    from . import metrics

    X_test = y_test = None
    if args.dataset:
        from .datasets import load

        split = args.split
        if split is not None and split.lstrip("-").isdigit():
            split = int(split)
        ds = load(args.dataset, split=split, preprocessing=args.preprocessing, n_train=args.n_train)
        X, y, X_test, y_test = ds
        source = f"{args.dataset} (split {ds.split})"
    else:
        if not args.target:
            raise SparseGPError("--target names the target column when fitting on --data")
        if args.dask:
            if args.model == "exact":
                raise SparseGPError("--dask fits the sparse models: choose --model vfe, dtc, fitc or sor")
            from .backends.dask_partitions import read_table as read_dask_table

            X, y, feature_names = read_dask_table(args.data, args.target, args.delimiter)
        else:
            X, y, feature_names = read_table(args.data, args.target, delimiter=args.delimiter)
        source = os.path.basename(args.data.rstrip("/"))
    if args.out:
        _check_writable(args.out, "--out")
    if args.task == "classification":
        if args.dask:
            raise SparseGPError("--task classification runs in memory; --dask fits the sparse regressors")
        return _fit_classifier(args, X, y, X_test, y_test, source)
    if args.dask and not args.data:
        raise SparseGPError("--dask reads --data as a dask dataframe: give --data and --target")
    client = cluster = None
    if args.dask:
        from .backends.dask_partitions import connect

        client, cluster = connect(args.dask, args.workers)
    try:
        model = _build_model(args, X)
        t0 = time.perf_counter()
        model.fit(X, y)
    finally:
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()
    if args.data:  # predict matches the columns of a file by these names (scikit-learn's fitted attribute)
        model.feature_names_in_ = np.asarray(feature_names, dtype=object)
        model.target_name_ = args.target  # and scores against this column where a file has it
    fit_s = time.perf_counter() - t0
    row = {"data": source, "model": args.model, "n_train": len(X)}
    if args.model != "exact":
        row["m"] = model.Z_.shape[0]
        if model.stop_reason_ is not None:  # inducing auto: why m stopped growing
            row["m_stop"] = model.stop_reason_.split(":")[0]
    row["fit_s"] = f"{fit_s:.2f}"
    if X_test is not None and y_test is not None:
        t0 = time.perf_counter()
        mean, std = model.predict(X_test, return_std=True, include_noise=True)
        row["predict_s"] = f"{time.perf_counter() - t0:.2f}"
        row["n_test"] = len(X_test)
        row["SMSE"] = f"{metrics.smse(y_test, mean):.4f}"
        row["SNLP"] = f"{metrics.snlp(y_test, mean, std**2, y):.4f}"
    objective = model.log_marginal_likelihood_ if args.model == "exact" else model.objective_
    row["objective"] = f"{objective:.2f}"
    if args.model != "exact":  # F_V <= log p(y | theta) <= upper bound: the gap bounds KL(q || exact posterior)
        row["gap"] = f"{model.gap_:.3g}"
        row["gap/n"] = f"{model.gap_ / len(X):.2g}"
    if model.loo_rows_ is not None:  # the leave-one-out check of the error bars on the training rows
        row["LOO_2sd"] = f"{model.loo_coverage_:.3f}"
        row["LOO_logp"] = f"{model.loo_log_predictive_:.4f}"
    if args.out:
        path = model.save(args.out)
        row["saved"] = path
    print(_table([row]))
    return 0


def cmd_predict(args):
    from . import load_model

    model = load_model(args.model)
    X, y, _ = read_table(
        args.data,
        args.target,
        getattr(model, "feature_names_in_", None),
        delimiter=args.delimiter,
        own_target=getattr(model, "target_name_", None),
    )
    if args.out not in (None, "-"):
        _check_writable(args.out, "--out")
    if hasattr(model, "classes_"):
        return _predict_classes(args, model, X, y)
    mean, std = model.predict(X, return_std=True, include_noise=not args.latent)
    with _output(args) as out:
        w = csv.writer(out)
        w.writerow(["mean", "std"])
        for m, s in zip(mean, std):
            w.writerow([repr(float(m)), repr(float(s))])
    if y is not None:  # beside the predictions: on standard error where they went to standard output
        print(_table([_regression_scores(model, y, mean, std, latent=args.latent)]), file=_summary_stream(args))
    return 0


@contextlib.contextmanager
def _output(args):
    """Where predictions go: standard output, or ``--out`` written whole or not at all (:mod:`sparsegp._atomic`)."""
    if args.out in (None, "-"):
        yield sys.stdout
        return
    with replaced_atomically(args.out, "w", newline="") as out:
        yield out


def _summary_stream(args):
    """Where a summary goes: standard output, unless the predictions themselves went there."""
    return sys.stderr if args.out in (None, "-") else sys.stdout


def _regression_scores(model, y, mean, std, *, latent: bool) -> dict:
    """MSE and SMSE; with the noise in the error bars, SNLP against a Gaussian with the training targets' mean
    and standard deviation (the model's normalisation, so only where it normalised them) or else the mean
    negative log density, and the share of targets within 2 sd."""
    from . import metrics

    row = {"n": len(y), "MSE": f"{metrics.mse(y, mean):.4f}", "SMSE": f"{metrics.smse(y, mean):.4f}"}
    if latent or np.any(std <= 0):
        return row
    if getattr(model, "normalize_y", False):
        trivial = metrics.ntl(y, np.full_like(y, model.y_mean_), np.full_like(y, model.y_std_**2))
        row["SNLP"] = f"{metrics.ntl(y, mean, std**2) - trivial:.4f}"
    else:
        row["NLPD"] = f"{metrics.ntl(y, mean, std**2):.4f}"
    row["coverage_2sd"] = f"{float(np.mean(np.abs(y - mean) <= 2 * std)):.3f}"
    return row


def _predict_classes(args, model, X, y):
    """A classifier's predictions: the label, then one probability column per class."""
    p = model.predict_proba(X)
    with _output(args) as out:
        w = csv.writer(out)
        w.writerow(["label"] + [f"p_{c}" for c in model.classes_])
        for label, row in zip(model.classes_[p.argmax(axis=1)], p):
            w.writerow([label] + [repr(float(v)) for v in row])
    if y is not None and args.out not in (None, "-"):
        labels = _labels_from_table(y)
        codes = np.searchsorted(model.classes_, labels)
        if np.any(model.classes_[np.minimum(codes, len(model.classes_) - 1)] != labels):
            raise SparseGPError(f"--target holds labels the model never saw; its classes are {model.classes_.tolist()}")
        ll = -np.mean(np.log(np.maximum(p[np.arange(codes.size), codes], 1e-300)))
        print(_table([{"n": len(X), "accuracy": f"{np.mean(p.argmax(axis=1) == codes):.4f}", "log_loss": f"{ll:.4f}"}]))
    return 0


def cmd_reproduce(args):
    from .experiments.registry import reproduce

    reproduce(
        args.paper, mode="full" if args.full else "quick", out=args.out, verbose=not args.quiet, resume=args.resume
    )
    return 0


def build_parser():
    from . import __version__

    p = argparse.ArgumentParser(prog="sparsegp", description="Sparse Gaussian processes from the command line.")
    p.add_argument("--version", action="version", version=f"sparsegp {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    d = sub.add_parser("datasets", help="list the shipped datasets", description="List the shipped datasets.")
    d.add_argument("--json", action="store_true", help="full records with sources and licences, as JSON")
    d.set_defaults(func=cmd_datasets)

    _fit_parser(sub)
    _predict_parser(sub)
    _reproduce_parser(sub)
    return p


def _fit_parser(sub):
    f = sub.add_parser(
        "fit",
        help="fit a model and save it",
        description="Fit a GP regression model (exact, or sparse: vfe, dtc, fitc, sor), report test metrics "
        "(SMSE, SNLP) on a shipped dataset's test split, and save it. The objective column is the log "
        "marginal likelihood (exact, dtc, fitc, sor) or the variational bound (vfe) on normalised targets; "
        "LOO_2sd and LOO_logp are the leave-one-out check of the error bars on the training rows (the share "
        "within 2 sd, about 0.954 when they are honest, and the mean log density per row).",
    )
    _data_options(f)
    f.add_argument(
        "--task",
        default="regression",
        choices=("regression", "classification"),
        help="classification fits SparseGPClassifier (the sparse variational GP classifier; --inducing, "
        "--max-inducing, --tol, --max-iter and --seed apply) and reports accuracy, log loss, Brier score and "
        "the expected calibration error on the test split, and the leave-one-out figures on the training rows",
    )
    _model_options(f)
    f.add_argument(
        "--subset",
        type=int,
        default=None,
        help="large n: learn on this many random rows first, then refine on all rows",
    )
    f.add_argument("--refine-iter", type=int, default=3, help="iterations on all rows after --subset (default 3)")
    f.add_argument(
        "--dask",
        nargs="?",
        const="local",
        default=None,
        metavar="SCHEDULER",
        help="fit on a Dask cluster: --data (CSV files, globs allowed, or a Parquet folder) is read as a "
        "dask dataframe; connect to SCHEDULER (tcp://host:8786) or start a LocalCluster",
    )
    f.add_argument("--workers", type=int, default=2, help="worker processes of the LocalCluster of --dask (default 2)")
    f.add_argument(
        "--duplicates",
        default="collapse",
        choices=_Choices(lambda: _config_names("DUPLICATES")),
        metavar="HOW",
        help="rows that share an input, one of %(choices)s: every row is fitted, computed as one weighted row "
        "per input (collapse, the default: exact) or row by row (expand); drop fits exact copies of a record once",
    )
    f.add_argument("--out", help="where to save the model (.npz)")
    f.add_argument("--quiet", action="store_true", help="no progress bar")
    f.set_defaults(func=cmd_fit)


def _data_options(f):
    """``sparsegp fit``: where the training data come from."""
    src = f.add_mutually_exclusive_group(required=True)
    src.add_argument("--dataset", help="a shipped dataset (see 'sparsegp datasets')")
    src.add_argument("--data", help="a CSV file with a header row, or an NPZ of named columns")
    f.add_argument("--target", help="target column of --data")
    f.add_argument("--delimiter", default=",", help="field separator of a CSV --data (default ',')")
    f.add_argument("--split", default=None, help="split of --dataset (integer, 'fixed', ...; default: canonical)")
    f.add_argument("--n-train", type=int, default=None, help="use only the first N training rows")
    f.add_argument("--preprocessing", default=None, choices=["none", "standardize", "center", "linear"])


def _model_options(f):
    """``sparsegp fit``: the model and how it is fitted."""
    f.add_argument(
        "--model",
        "--approximation",
        dest="model",
        default="exact",
        choices=_Choices(_models),
        metavar="MODEL",
        help="exact GP, or a sparse approximation: one of %(choices)s",
    )
    f.add_argument(
        "--inducing",
        type=_inducing_count,
        default="auto",
        help="number of inducing points (sparse models), or auto (the default): the fit chooses m",
    )
    f.add_argument(
        "--max-inducing",
        type=int,
        default=None,
        help="the largest m --inducing auto may reach (default: 1024 on a CPU, more on a GPU with the memory)",
    )
    f.add_argument("--time-budget", type=float, default=None, help="seconds after which --inducing auto stops growing")
    f.add_argument(
        "--tol",
        type=float,
        default=None,
        help="stop once the objective rises by less than this per training row per iteration (auto: 1e-4)",
    )
    f.add_argument(
        "--fixed-inducing", action="store_true", help="keep the inducing inputs at their initial training points"
    )
    f.add_argument(
        "--select",
        default="random",
        choices=[
            "random",
            "info-gain",
            "differential-entropy",
            "conditional-variance",
            "smo-bart",
            "evidence",
            "vfe",
            "kmeans",
        ],
        help="how the initial inducing points are chosen (greedy criteria choose training rows: --inducing of them, "
        "256 where --inducing is auto)",
    )
    f.add_argument(
        "--reselect",
        default=None,
        choices=_Choices(lambda: _config_names("RESELECT")[1:]),
        metavar="SCHEDULE",
        help="combine selection with hyper-parameter learning, one of %(choices)s (needs --select and "
        "--fixed-inducing)",
    )
    f.add_argument("--rounds", type=int, default=10, help="rounds of --reselect alternate / em")
    f.add_argument(
        "--prediction",
        default="standard",
        choices=_Choices(lambda: _config_names("PREDICTIONS")),
        metavar="MODE",
        help="the predictive distribution: one of %(choices)s",
    )
    f.add_argument("--kernel", default="se-ard", choices=KERNELS)
    f.add_argument("--max-iter", type=int, default=500)
    f.add_argument("--restarts", type=int, default=0)
    f.add_argument("--seed", type=int, default=0)


def _predict_parser(sub):
    q = sub.add_parser(
        "predict", help="predict with a saved model", description="Write predictive mean and std to CSV."
    )
    q.add_argument("--model", required=True, help="a model saved by 'sparsegp fit'")
    q.add_argument("--data", required=True, help="CSV or NPZ with the same feature columns")
    q.add_argument("--delimiter", default=",", help="field separator of a CSV --data (default ',')")
    q.add_argument("--target", help="a target column to drop from the inputs (and score against)")
    q.add_argument("--out", help="output CSV (default: stdout)")
    q.add_argument("--latent", action="store_true", help="std of the latent f instead of the noisy y")
    q.set_defaults(func=cmd_predict)


def _reproduce_parser(sub):
    from .experiments.registry import papers

    r = sub.add_parser(
        "reproduce",
        help="re-run a paper's experiments",
        description="Re-run a paper's experiments and write DIR/<paper>/report.md (ours beside the published "
        "numbers, the paper's claims with computed verdicts), results.json and figures, then DIR/README.md from "
        "every results.json under DIR. --quick: subsampled, under a minute per paper; --full: the paper's "
        "protocol as closely as this machine allows.",
    )
    r.add_argument(
        "paper",
        choices=_Choices(lambda: [*papers(), "all", "verdicts"]),
        metavar="PAPER",
        help="a paper, all of them, or 'verdicts' (one of %(choices)s): 'verdicts' re-evaluates the claims on the "
        "results.json under --out and rewrites DIR/README.md and each report's verdict table, running nothing",
    )
    speed = r.add_mutually_exclusive_group()
    speed.add_argument("--quick", action="store_true", help="subsampled, fewer repeats (the default)")
    speed.add_argument("--full", action="store_true", help="the paper's protocol as far as this machine allows")
    r.add_argument("--out", default="reports", help="output folder (default: reports)")
    r.add_argument("--quiet", action="store_true", help="no progress bars")
    r.add_argument(
        "--resume",
        action="store_true",
        help="keep each paper whose report under --out was written in this mode by this very code (a clean "
        "checkout at the same commit) and run the rest: an interrupted 'all' run goes on where it stopped",
    )
    r.set_defaults(func=cmd_reproduce)


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    with warnings.catch_warnings():
        # A warning is one line that names the command, like an error, not a source location.
        def show(message, category, *_, **__):
            print(f"sparsegp {args.command}: {category.__name__}: {message}", file=sys.stderr)

        warnings.showwarning = show
        return _run(args)


def _run(args) -> int:
    try:
        return args.func(args)
    except (SparseGPError, ValueError, OSError) as exc:
        message = " ".join(str(exc).split())  # one line
        print(f"sparsegp {args.command}: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
