"""``inducing="auto"``: the m a default fit chooses, its path, time and test quality, and the check that the
stopping rule is honest (a fit with twice the chosen m).

    python benchmarks/auto_inducing.py K10                      # the default fit on protocol K10
    python benchmarks/auto_inducing.py K10 --double             # and a fit at twice the chosen m
    python benchmarks/auto_inducing.py elevators parkinsons     # shipped datasets, split 0
    python benchmarks/auto_inducing.py K10 --options max_inducing=512

Datasets are protocol names (K10, P32) or shipped dataset names (split 0, inputs and targets standardised,
all training rows, or the first --n-train). Every row: the chosen m, the stop reason, the fit seconds (whole fit,
compilation included), iterations, test SMSE / SNLP, the objective and the certified gap per row, and the
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


def fit_row(X, y, Xs, ys, label: str, **options) -> tuple[dict, object]:
    from sparsegp import SparseGPRegressor
    from sparsegp.metrics import smse, snlp

    t = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = SparseGPRegressor(random_state=0, **options).fit(X, y)
    seconds = time.perf_counter() - t
    mean, std = model.predict(Xs, return_std=True)
    n = len(y)
    row = {
        "case": label,
        "m": model.Z_.shape[0],
        "fit_s": round(seconds, 1),
        "iterations": model.n_iter_,
        "SMSE": round(smse(ys, mean), 4),
        "SNLP": round(snlp(ys, mean, std**2, y), 4),
        "objective/n": round(model.objective_ / n, 4),
        "gap/n": round(model.gap_ / n, 4),
        "stop": model.stop_reason_,
        "warnings": sorted({type(w.message).__name__ for w in caught}),
    }
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
    a = p.parse_args()
    options = parse_options(a.options)
    for name in a.datasets:
        d = load(name, a.n_train)
        X, y, Xs, ys = d
        print(f"{name}: {X.shape[0]} training rows, {X.shape[1]} inputs, {Xs.shape[0]} test rows", flush=True)
        row, model = fit_row(X, y, Xs, ys, f"SparseGPRegressor({options or ''})", **options)
        print(row, flush=True)
        if a.double:
            m2 = 2 * model.Z_.shape[0]
            tol = options.get("tol", TOL)  # the same convergence as the default fit's
            row2, _ = fit_row(X, y, Xs, ys, f"inducing={m2}, tol={tol:g}", inducing=m2, tol=tol)
            print(row2, flush=True)
            print(f"  SNLP gain of doubling m: {row['SNLP'] - row2['SNLP']:+.4f}", flush=True)


if __name__ == "__main__":
    main()
