"""Repeated records: every row fitted (collapsed, expanded) against removing the copies, beside scikit-learn.

    python -m benchmarks repeated_records [--sections synthetic floor speed shipped] [--sklearn-rows 2000]

synthetic: ``sparsegp.datasets.synthetic.repeated_records`` (10,000 training records, 53 % repeating an
earlier record exactly; 2,000 test records, 61 % at a training input; 8 inputs). On its first
``--sklearn-rows`` training records: scikit-learn's GaussianProcessRegressor (constant x ARD RBF + white
noise, normalize_y) and ExactGPRegressor with the copies removed and with every row; on all 10,000:
SparseGPRegressor(inducing=256) both ways, ExactGPRegressor both ways, and DTC with every row.
floor: on the first ``--sklearn-rows`` rows, scikit-learn with its noise bounded below by our min_noise, and
ExactGPRegressor with min_noise at scikit-learn's bound: copies of records drive the noise to its bound.
speed: the same fits with every row, collapsed (the default) and expanded (each row its own), wall time
of the whole fit and per objective evaluation.
shipped: concrete (exact GP and scikit-learn) and pol (SparseGPRegressor(inducing=256)), splits 0 to N-1,
the two shipped datasets with repeated records: every row against the copies removed.

Each row: fit seconds, test SMSE and SNLP, the fit's leave-one-out 2-sd coverage and SNLP, and whether it
raised a CalibrationWarning. One process, the default 2 threads.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from sparsegp import CalibrationWarning, ExactGPRegressor, SparseGPRegressor, datasets, metrics
from sparsegp.backends.replicates import collapse
from sparsegp.backends.replicates import repeated_records as count_copies
from sparsegp.datasets.synthetic import repeated_records


def sklearn_gpr(D, min_noise=1e-9):
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, WhiteKernel
    from sklearn.gaussian_process.kernels import ConstantKernel as C

    kernel = C(1.0, (1e-5, 1e5)) * RBF(np.ones(D), (1e-5, 1e5)) + WhiteKernel(1e-2, (min_noise, 1e2))
    return GaussianProcessRegressor(kernel, normalize_y=True, random_state=0)


def measure(label, model, X, y, Xt, yt):
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(X, y)
    seconds = time.perf_counter() - t0
    mean, sd = model.predict(Xt, return_std=True)
    out = {
        "label": label,
        "n": X.shape[0],
        "seconds": seconds,
        "smse": metrics.smse(yt, mean),
        "snlp": metrics.snlp(yt, mean, sd**2, y),
        "beyond4": float(np.mean(np.abs(yt - mean) > 4 * sd)),
        "loo_cov": getattr(model, "loo_coverage_", None),
        "loo_snlp": None if getattr(model, "loo_check_", None) is None else model.loo_check_.snlp,
        "warned": any(issubclass(w.category, CalibrationWarning) for w in caught),
        "evals": getattr(getattr(model, "optimizer_report_", None), "n_evals", None),
    }
    report = getattr(model, "optimizer_report_", None)
    if report is not None:
        out["per_eval"] = report.seconds / max(report.n_evals, 1)
    return out


def fmt(r):
    loo = "-" if r["loo_cov"] is None else f"{r['loo_cov']:.3f} / {r['loo_snlp']:+.3f}"
    return (
        f"| {r['label']} | {r['n']} | {r['seconds']:.1f} | {r['smse']:.4f} | {r['snlp']:+.3f} | {r['beyond4']:.3f} "
        f"| {loo} | {'yes' if r['warned'] else 'no'} |"
    )


HEADER = (
    "| model | rows | fit s | test SMSE | test SNLP | test beyond 4 sd | LOO 2-sd coverage / SNLP | CalibrationWarning |\n"
    "|---|---|---|---|---|---|---|---|"
)


def synthetic(sklearn_rows):
    X, y, Xt, yt = repeated_records()
    D = X.shape[1]
    g = collapse(X, y)
    print(
        f"\nsynthetic: {X.shape[0]} training records, {count_copies(X, y)} repeat an earlier one "
        f"({count_copies(X, y) / X.shape[0]:.0%}), {g.X.shape[0]} distinct inputs; "
        f"{np.mean([tuple(r) in set(map(tuple, X)) for r in Xt]):.0%} of {len(Xt)} test inputs are training inputs\n"
    )
    print(HEADER)
    Xs, ys = X[:sklearn_rows], y[:sklearn_rows]
    cases = [
        (f"scikit-learn GaussianProcessRegressor, first {sklearn_rows} rows", lambda: sklearn_gpr(D), Xs, ys),
        (
            f"ExactGPRegressor(duplicates='drop'), first {sklearn_rows}",
            lambda: ExactGPRegressor(duplicates="drop"),
            Xs,
            ys,
        ),
        (f"ExactGPRegressor(), first {sklearn_rows}", ExactGPRegressor, Xs, ys),
        (
            "SparseGPRegressor(inducing=256, duplicates='drop')",
            lambda: SparseGPRegressor(inducing=256, duplicates="drop", random_state=0),
            X,
            y,
        ),
        ("SparseGPRegressor(inducing=256)", lambda: SparseGPRegressor(inducing=256, random_state=0), X, y),
        ("ExactGPRegressor(duplicates='drop')", lambda: ExactGPRegressor(duplicates="drop"), X, y),
        ("ExactGPRegressor()", ExactGPRegressor, X, y),
        (
            "SparseGPRegressor(approximation='dtc', inducing=256)",
            lambda: SparseGPRegressor(approximation="dtc", inducing=256, random_state=0),
            X,
            y,
        ),
    ]
    for label, make, Xf, yf in cases:
        print(fmt(measure(label, make(), Xf, yf, Xt, yt)), flush=True)


def floor(sklearn_rows):
    """Where copies of records drive the noise to its lower bound, the bound decides the error bars at the
    copies: scikit-learn's WhiteKernel stops at 1e-9, ExactGPRegressor at min_noise=1e-6 (normalised)."""
    X, y, Xt, yt = repeated_records()
    Xs, ys = X[:sklearn_rows], y[:sklearn_rows]
    print(f"\nfloor: the noise variance's lower bound, first {sklearn_rows} rows\n")
    print(
        HEADER.replace("| CalibrationWarning |", "| CalibrationWarning | noise (normalised) |").replace(
            "|---|\n", "|---|---|\n"
        )
    )
    cases = [
        (
            "scikit-learn GaussianProcessRegressor, WhiteKernel bounded below by 1e-6",
            lambda: sklearn_gpr(X.shape[1], 1e-6),
        ),
        ("ExactGPRegressor(min_noise=1e-9)", lambda: ExactGPRegressor(min_noise=1e-9)),
        ("ExactGPRegressor()", ExactGPRegressor),
    ]
    for label, make in cases:
        model = make()
        r = measure(label, model, Xs, ys, Xt, yt)
        noise = (
            model.kernel_.k2.noise_level if hasattr(model, "kernel_") and hasattr(model.kernel_, "k2") else model.noise_
        )
        print(f"{fmt(r)} {noise:.3g} |", flush=True)


def speed(sklearn_rows):
    X, y, Xt, yt = repeated_records()
    print(
        f"\nspeed: every row fitted, collapsed (default) against expanded; {X.shape[0]} rows, "
        f"{collapse(X, y).X.shape[0]} distinct inputs\n"
    )
    print("| model | duplicates | rows | fit s | evaluations | s per evaluation | test SMSE | test SNLP |")
    print("|---|---|---|---|---|---|---|---|")
    cases = [
        (f"ExactGPRegressor(), first {sklearn_rows}", lambda d: ExactGPRegressor(duplicates=d), sklearn_rows),
        (
            "SparseGPRegressor(inducing=256)",
            lambda d: SparseGPRegressor(inducing=256, duplicates=d, random_state=0),
            None,
        ),
        (
            "SparseGPRegressor(approximation='fitc', inducing=256)",
            lambda d: SparseGPRegressor(approximation="fitc", inducing=256, duplicates=d, random_state=0),
            None,
        ),
    ]
    for label, make, n in cases:
        for mode in ("expand", "collapse"):
            r = measure(label, make(mode), X[:n], y[:n], Xt, yt)
            print(
                f"| {label} | {mode} | {r['n']} | {r['seconds']:.1f} | {r['evals']} | {r['per_eval']:.4f} "
                f"| {r['smse']:.4f} | {r['snlp']:+.3f} |",
                flush=True,
            )


def shipped(splits, names=("concrete", "pol")):
    print(f"\nshipped datasets with repeated records, split 0 to {splits - 1} (mean over splits)\n")
    print(
        "| dataset | model | repeated records (mean per split) | test SMSE | test SNLP | LOO 2-sd coverage | CalibrationWarning (splits) |"
    )
    print("|---|---|---|---|---|---|---|")
    cases = [
        ("concrete", "scikit-learn GaussianProcessRegressor", lambda: None),
        ("concrete", "ExactGPRegressor(duplicates='drop')", lambda: ExactGPRegressor(duplicates="drop")),
        ("concrete", "ExactGPRegressor()", lambda: ExactGPRegressor()),
        (
            "pol",
            "SparseGPRegressor(inducing=256, duplicates='drop')",
            lambda: SparseGPRegressor(inducing=256, duplicates="drop", random_state=0),
        ),
        ("pol", "SparseGPRegressor(inducing=256)", lambda: SparseGPRegressor(inducing=256, random_state=0)),
    ]
    results = {}
    for name, label, make in cases:
        if name not in names:
            continue
        res = []
        for split in range(splits):
            X, y, Xt, yt = datasets.load(name, split=split)
            model = make() or sklearn_gpr(X.shape[1])
            r = measure(label, model, X, y, Xt, yt)
            r["copies"] = count_copies(X, y)
            res.append(r)
        results[name, label] = res
        cov = [r["loo_cov"] for r in res if r["loo_cov"] is not None]
        print(
            f"| {name} | {label} | {np.mean([r['copies'] for r in res]):.1f} | {np.mean([r['smse'] for r in res]):.4f} "
            f"| {np.mean([r['snlp'] for r in res]):+.3f} | {np.mean(cov) if cov else float('nan'):.3f} "
            f"| {sum(r['warned'] for r in res)} of {splits} |",
            flush=True,
        )
    print("\nevery row minus the copies removed, per split: mean (standard error) of the paired differences\n")
    print("| dataset | model | SMSE difference | SNLP difference |\n|---|---|---|---|")
    for (name, label), res in results.items():
        dropped = next((v for (n, lab), v in results.items() if n == name and "drop" in lab), None)
        if "drop" in label or "scikit" in label or dropped is None:
            continue
        for key in ("smse", "snlp"):
            d = np.array([a[key] - b[key] for a, b in zip(res, dropped)])
            res[0][f"d_{key}"] = f"{d.mean():+.4f} ({d.std(ddof=1) / np.sqrt(len(d)):.4f})"
        print(f"| {name} | {label} | {res[0]['d_smse']} | {res[0]['d_snlp']} |", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sections", nargs="*", default=["synthetic", "floor", "speed", "shipped"])
    p.add_argument("--sklearn-rows", type=int, default=2000)
    p.add_argument("--splits", type=int, default=10, help="shipped: splits 0 to N-1")
    p.add_argument("--shipped", nargs="*", default=["concrete", "pol"], help="shipped: the datasets")
    a = p.parse_args()
    for section in a.sections:
        {
            "synthetic": lambda: synthetic(a.sklearn_rows),
            "floor": lambda: floor(a.sklearn_rows),
            "speed": lambda: speed(a.sklearn_rows),
            "shipped": lambda: shipped(a.splits, a.shipped),
        }[section]()


if __name__ == "__main__":
    main()
