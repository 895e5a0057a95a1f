"""``inducing="auto"``: the m a default fit chooses, its path, time and test quality, and the check that the
stopping rule is honest (a fit with twice the chosen m).

    python -m benchmarks auto_inducing K10                      # the default fit on protocol K10
    python -m benchmarks auto_inducing K10 --double             # and a fit at twice the chosen m
    python -m benchmarks auto_inducing elevators parkinsons     # shipped datasets, split 0
    python -m benchmarks auto_inducing K10 --options max_inducing=512
    python -m benchmarks auto_inducing K10 --every 20 --ttq 0.0392 -1.5562   # time to quality (protocol TTQ)

Datasets are protocol names (K10, P32) or shipped dataset names (split 0, inputs and targets standardised,
all training rows, or the first --n-train). Every row: the chosen m, the stop reason, the fit seconds (whole fit,
compilation included), iterations, test SMSE / SNLP, the objective and the certified gap per row, and the
With --every K the test SMSE / SNLP are recorded every K iterations (counted over all sizes) with the fit
clock stopped, and --ttq SMSE SNLP prints the fit seconds at the first record at or below both.
path (at each size: m, F_V per row before the fit, the fitted objective per row, the gap per row, the gain
per row of twice the inducing inputs at the fitted values, iterations, seconds).
"""

from __future__ import annotations

import argparse
import time
import warnings

from sparsegp.fitting.growth import TOL


def load(name: str, n_train: int):
    from sparsegp import datasets
    from sparsegp.experiments.protocols import PROTOCOL_DATA, protocol_data

    if name in PROTOCOL_DATA:
        return protocol_data(name)
    X, y, Xs, ys = datasets.load(name, split=0, preprocessing="standardize")
    return (X, y, Xs, ys) if n_train is None else (X[:n_train], y[:n_train], Xs, ys)


def parse_options(items):
    out = {}
    for item in items or ():
        key, value = item.split("=", 1)
        out[key] = None if value == "None" else (int(value) if value.isdigit() else float(value))
    return out


def trajectory_callback(X, y, Xs, ys, every: int, trajectory):
    """A fit callback that records (iteration, fit seconds, SMSE, SNLP) every ``every`` iterations of all stages."""
    import numpy as np

    from benchmarks.case_io import Trajectory
    from sparsegp import ExactGPRegressor, SparseGPRegressor
    from sparsegp.transforms import to_positive

    track = Trajectory({"y": y, "y_test": ys}, every)
    count = {"k": 0}

    def predict_at(params):
        noise = float(to_positive(params["raw_noise"]))
        if "Z" not in params:  # every training input held as an inducing input: the exact GP
            exact = ExactGPRegressor(params["kernel"], noise=noise, optimize=False).fit(X, y)
            mean, std = exact.predict(Xs, return_std=True)
            return mean, std**2
        at = SparseGPRegressor(params["kernel"], inducing=np.asarray(params["Z"]), noise=noise, optimize=False)
        return at.fit(X, y).predict_var(Xs)

    def callback(iteration, value, params):
        count["k"] += 1
        track.record(count["k"], lambda: predict_at(params))

    trajectory.append(track)
    return callback


def fit_row(X, y, Xs, ys, label: str, every=0, **options) -> tuple[dict, object]:
    from sparsegp import SparseGPRegressor
    from sparsegp.metrics import smse, snlp

    tracks: list = []
    if every:
        options["callback"] = trajectory_callback(X, y, Xs, ys, every, tracks)
        tracks[0].start()
    t = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = SparseGPRegressor(**{"random_state": 0, **options}).fit(X, y)
    seconds = tracks[0].fit_seconds() if every else time.perf_counter() - t
    mean, std = model.predict(Xs, return_std=True)
    n, test_smse, test_snlp = len(y), smse(ys, mean), snlp(ys, mean, std**2, y)
    row = {
        "case": label,
        "m": model.Z_.shape[0],
        "fit_s": round(seconds, 1),
        "iterations": model.n_iter_,
        "SMSE": round(test_smse, 4),
        "SNLP": round(test_snlp, 4),
        "objective/n": round(model.objective_ / n, 4),
        "gap/n": round(model.gap_ / n, 4),
        "stop": model.stop_reason_,
        "warnings": sorted({type(w.message).__name__ for w in caught}),
    }
    if every:  # the fitted model is a record too: a final stage shorter than `every` iterations has none
        row["trajectory"] = tracks[0].points + [[model.n_iter_, round(seconds, 3), test_smse, test_snlp]]
    if model.inducing_path_:
        row["path"] = [
            (
                p["m"],
                round(p["start"] / n, 4),
                round(p["objective"] / n, 4),
                round((p["upper"] - p["lower"]) / n, 4),
                round((p["next_start"] - p["lower"]) / n, 4),
                p["n_iter"],
                round(p["seconds"], 1),
            )
            for p in model.inducing_path_
        ]
    return row, model


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("datasets", nargs="+")
    p.add_argument("--n-train", type=int, default=None, help="the first rows of a shipped dataset (default: all)")
    p.add_argument("--double", action="store_true", help="also fit at twice the chosen m (same tol)")
    p.add_argument("--options", nargs="*", help="estimator options key=value for the default fit")
    p.add_argument("--every", type=int, default=0, help="record test metrics every K iterations")
    p.add_argument("--ttq", type=float, nargs=2, help="SMSE SNLP: the fit seconds at the first record within both")
    a = p.parse_args()
    options = parse_options(a.options)
    for name in a.datasets:
        d = load(name, a.n_train)
        X, y, Xs, ys = d
        print(f"{name}: {X.shape[0]} training rows, {X.shape[1]} inputs, {Xs.shape[0]} test rows", flush=True)
        row, model = fit_row(X, y, Xs, ys, f"SparseGPRegressor({options or ''})", every=a.every, **options)
        print(row, flush=True)
        if a.ttq:
            hit = [p for p in row.get("trajectory", []) if p[2] <= a.ttq[0] and p[3] <= a.ttq[1]]
            print(
                f"  time to SMSE <= {a.ttq[0]} and SNLP <= {a.ttq[1]}: "
                + (f"{hit[0][1]} s at iteration {hit[0][0]}" if hit else "not reached"),
                flush=True,
            )
        if a.double:
            m2 = 2 * model.Z_.shape[0]
            tol = options.get("tol", TOL)  # the same convergence as the default fit's
            row2, _ = fit_row(X, y, Xs, ys, f"inducing={m2}, tol={tol:g}", inducing=m2, tol=tol)
            print(row2, flush=True)
            print(f"  SNLP gain of doubling m: {row['SNLP'] - row2['SNLP']:+.4f}", flush=True)


if __name__ == "__main__":
    main()
