"""Reliability measurements behind issue-level claims: unit invariance and tiny training sets.

    python -m benchmarks reliability [units] [tiny] [battery]   # markdown tables (default: all), about 30 minutes

Units: the same 2-D data (n = 150, y = sin(2 x1) + x2 / 2 + N(0, 0.1^2)) with inputs and targets
multiplied by (1e-6, 1e6), (1, 1), (1e6, 1e-6); test RMSE on the original scale per estimator.
Tiny data: 2-sd coverage of noisy test targets, median predictive sd and RMSE of ExactGPRegressor
over 10 seeds at n = 3 ... 10 (two points are refused since the battery below), fitted with the
library's defaults (below 2 (D + 2) = 8 samples: weak default priors and the unbiased target scale)
against the data-driven start kept fixed.
Tiny-data battery: three 3-D functions (sin + quadratic and a product on normal inputs, Friedman's on the unit
cube), 10 seeds, n = 2 ... 8 training points with noise sd 0.1 and 200 test points: 2-sd coverage, mean over
seeds and the worst seed, of the exact GP, VFE, DTC, SoR and SoR with the augmented prediction (inducing=10,
so every training input is an inducing input); "refused" where the regressor raises InputError.
"""

from __future__ import annotations

import warnings

import numpy as np

from sparsegp import ExactGPRegressor, SparseGPRegressor


def truth(X):
    return np.sin(2 * X[:, 0]) + X[:, 1] / 2


def data(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, 2))
    Xt = rng.uniform(-1.8, 1.8, size=(200, 2))
    return X, truth(X) + 0.1 * rng.normal(size=n), Xt, truth(Xt) + 0.1 * rng.normal(size=200)


ESTIMATORS = {
    "exact": lambda: ExactGPRegressor(),
    "vfe, free Z (m=15)": lambda: SparseGPRegressor(approximation="vfe", inducing=15, random_state=0),
    **{
        f"{a}, fixed rows (m=15)": (
            lambda a=a: SparseGPRegressor(approximation=a, inducing=15, random_state=0, optimize="hyperparameters")
        )
        for a in ("vfe", "dtc", "sor", "fitc")
    },
    "fitc, free Z (m=15, 500 its)": lambda: SparseGPRegressor(approximation="fitc", inducing=15, random_state=0),
}
SCALES = [(1e-6, 1e6), (1.0, 1.0), (1e6, 1e-6)]


def units_table():
    X, y, Xt, _ = data(150, 0)
    ft = truth(Xt)
    lines = [
        "| estimator | " + " | ".join(f"x{sx:g}, y{sy:g}" for sx, sy in SCALES) + " | largest relative difference |",
        "|---|" + "---|" * (len(SCALES) + 1),
    ]
    for name, make in ESTIMATORS.items():
        rmse = []
        for sx, sy in SCALES:
            model = make().fit(X * sx, y * sy)
            rmse.append(float(np.sqrt(np.mean((model.predict(Xt * sx) / sy - ft) ** 2))))
        worst = max(abs(r - rmse[1]) / rmse[1] for r in rmse)
        lines.append(f"| {name} | " + " | ".join(f"{r:.4f}" for r in rmse) + f" | {worst:.1e} |")
    return "\n".join(lines)


def tiny_table(sizes=(3, 5, 7, 10), seeds=10):
    lines = ["| n | hyper-parameters | 2-sd coverage | median sd | median RMSE |", "|---|---|---|---|---|"]
    for n in sizes:
        for label, optimize in (("fitted (defaults)", True), ("data-driven start, not optimised", False)):
            cov, sds, errs = [], [], []
            for seed in range(seeds):
                X, y, Xt, yt = data(n, seed)
                mu, sd = ExactGPRegressor(optimize=optimize).fit(X, y).predict(Xt, return_std=True)
                cov.append(np.mean(np.abs(mu - yt) <= 2 * sd))
                sds.append(np.median(sd))
                errs.append(np.sqrt(np.mean((mu - yt) ** 2)))
            lines.append(f"| {n} | {label} | {np.mean(cov):.3f} | {np.median(sds):.3f} | {np.median(errs):.3f} |")
    return "\n".join(lines)


BATTERY = {
    "sin + quadratic": (lambda X: np.sin(3 * X[:, 0]) + X[:, 1] ** 2 / 2 + 0.5 * X[:, 2], "normal"),
    "product": (lambda X: np.sin(2 * X[:, 0]) * np.cos(2 * X[:, 1]) + 0.3 * X[:, 2], "normal"),
    "Friedman": (lambda X: 10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2, "uniform"),
}
BATTERY_MODELS = {
    "exact": lambda: ExactGPRegressor(),
    **{a: (lambda a=a: SparseGPRegressor(approximation=a, inducing=10, random_state=0)) for a in ("vfe", "dtc", "sor")},
    "sor, augmented": lambda: SparseGPRegressor(
        approximation="sor", prediction="augmented", inducing=10, random_state=0
    ),
}


def battery_table(sizes=(2, 3, 4, 5, 8), seeds=10):
    import sys

    import jax

    from sparsegp import InputError

    lines = [
        "| function | n | " + " | ".join(BATTERY_MODELS) + " |",
        "|---|---|" + "---|" * len(BATTERY_MODELS),
    ]
    for fname, (f, inputs) in BATTERY.items():
        for n in sizes:
            cells = []
            for make in BATTERY_MODELS.values():
                cov = []
                for seed in range(seeds):
                    r = np.random.default_rng(seed)
                    draw = (
                        (lambda k, r=r: r.normal(size=(k, 3)))
                        if inputs == "normal"
                        else (lambda k, r=r: r.uniform(size=(k, 3)))
                    )
                    X, Xt = draw(n), None
                    y = f(X) + 0.1 * r.normal(size=n)
                    Xt = draw(200)
                    yt = f(Xt) + 0.1 * r.normal(size=200)
                    try:
                        mu, sd = make().fit(X, y).predict(Xt, return_std=True)
                    except InputError:
                        break
                    cov.append(np.mean(np.abs(mu - yt) <= 2 * sd))
                cells.append(f"{np.mean(cov):.2f} (worst {np.min(cov):.2f})" if cov else "refused")
            lines.append(f"| {fname} | {n} | " + " | ".join(cells) + " |")
            print(lines[-1], file=sys.stderr, flush=True)
            jax.clear_caches()  # hundreds of programs of new shapes: free them before the process runs out of maps
    return "\n".join(lines)


if __name__ == "__main__":
    import sys

    warnings.simplefilter("ignore")
    parts = sys.argv[1:] or ["units", "tiny", "battery"]
    if "units" in parts:
        print("## Units\n")
        print(units_table())
    if "tiny" in parts:
        print("\n## Tiny training sets\n")
        print(tiny_table())
    if "battery" in parts:
        print("\n## Tiny training sets: the 3-D battery\n")
        print(battery_table())
