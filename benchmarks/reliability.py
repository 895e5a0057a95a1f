"""Reliability measurements behind issue-level claims: unit invariance and tiny training sets.

    python benchmarks/reliability.py            # both tables, markdown, about 2 minutes

Units: the same 2-D data (n = 150, y = sin(2 x1) + x2 / 2 + N(0, 0.1^2)) with inputs and targets
multiplied by (1e-6, 1e6), (1, 1), (1e6, 1e-6); test RMSE on the original scale per estimator.
Tiny data: 2-sd coverage of noisy test targets, median predictive sd and RMSE of ExactGPRegressor
over 10 seeds at n = 2 ... 10, fitted with the library's defaults (below 2 (D + 2) = 8 samples: weak
default priors and the unbiased target scale) against the data-driven start kept fixed.
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


def tiny_table(sizes=(2, 3, 5, 7, 10), seeds=10):
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


if __name__ == "__main__":
    warnings.simplefilter("ignore")
    print("## Units\n")
    print(units_table())
    print("\n## Tiny training sets\n")
    print(tiny_table())
