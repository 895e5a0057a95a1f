"""The leave-one-out check of the error bars beside the test set, on the shipped regression datasets.

    python -m benchmarks loo_check [--datasets kin40k pol ...] [--exact-max 3500]

For each dataset (canonical split; kin40k and pumadyn32nm: the fixed split, kin40k's first 10,000 training
rows as protocol K10) it fits the library's defaults, ``SparseGPRegressor()`` and, up to ``--exact-max``
training rows, ``ExactGPRegressor()``, and prints the leave-one-out figures of the training rows (what every
fit computes, ``loo_*``) beside the same figures on the test set: the share within 2 predictive sd and the
mean log predictive density, each with its standard error, whether the two agree within two standard errors
of their difference (for the coverages, under their pooled value), the root mean square of the
leave-one-out z and the leave-one-out SNLP, the problems the check names, and whether the fit raised a
CalibrationWarning.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from sparsegp import CalibrationWarning, ExactGPRegressor, SparseGPRegressor, datasets
from sparsegp.fitting.calibration import loo_in_batches, loo_sample, problems

DATASETS = {
    "kin40k": {"split": "fixed", "n_train": 10000},
    "pumadyn32nm": {"split": "fixed"},
    "housing": {},
    "pol": {},
    "elevators": {},
    "concrete": {},
    "energy": {},
    "airfoil": {},
    "yacht": {},
    "skillcraft": {},
    "parkinsons": {},
    "abalone": {},
}


def figures(y, mean, sd):
    """(coverage, its se, mean log density, its se) of targets y under N(mean, sd^2)."""
    z = (y - mean) / sd
    logp = -0.5 * (np.log(2 * np.pi) + 2 * np.log(sd) + z * z)
    cov = np.mean(np.abs(z) <= 2)
    return cov, np.sqrt(cov * (1 - cov) / len(y)), np.mean(logp), np.std(logp) / np.sqrt(len(y))


def loo_figures(model, X, y):
    """:func:`figures` of the leave-one-out predictives of the training rows the fit scored (user units)."""
    rows = loo_sample(X.shape[0])
    yn = (y[rows] - model.y_mean_) / model.y_std_
    mean, var = loo_in_batches(model._loo_batch, X[rows], yn)
    return figures(y[rows], np.asarray(mean) * model.y_std_ + model.y_mean_, np.sqrt(np.asarray(var)) * model.y_std_)


def row(name, label, model, X, y, Xt, yt):
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(X, y)
    seconds = time.perf_counter() - t0
    warned = any(issubclass(w.category, CalibrationWarning) for w in caught)
    mean, sd = model.predict(Xt, return_std=True)
    lc, lcs, lp, lps = loo_figures(model, X, y)
    tc, tcs, tp, tps = figures(yt, mean, sd)
    n1, n2 = min(X.shape[0], loo_sample(X.shape[0]).size), len(yt)
    pooled = (lc * n1 + tc * n2) / (n1 + n2)  # the coverages' difference under equal coverage
    agree = abs(lc - tc) <= 2 * np.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2)) and abs(lp - tp) <= 2 * np.hypot(
        lps, tps
    )
    assert abs(lp - model.loo_log_predictive_) < 1e-9 and abs(lc - model.loo_coverage_) < 1e-12
    check = model.loo_check_
    return (
        f"| {name} | {label} | {X.shape[0]} | {len(yt)} | {seconds:.1f} | {lc:.3f} ± {lcs:.3f} | {tc:.3f} ± {tcs:.3f} "
        f"| {lp:.3f} ± {lps:.3f} | {tp:.3f} ± {tps:.3f} | {check.z_rms:.2f} | {check.snlp:+.3f} | "
        f"{'yes' if agree else 'no'} | {'; '.join(p.split(':')[0] for p in problems(check)) or '-'} "
        f"| {'yes' if warned else 'no'} |"
    )


HEADER = (
    "| dataset | model | n | n test | fit s | LOO 2-sd coverage | test 2-sd coverage | LOO log density | "
    "test log density | LOO rms z | LOO SNLP | agree | problems | CalibrationWarning |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--datasets", nargs="*", default=list(DATASETS))
    p.add_argument("--exact-max", type=int, default=3500)
    a = p.parse_args()
    print(HEADER)
    for name in a.datasets:
        X, y, Xt, yt = datasets.load(name, **DATASETS[name])
        print(row(name, "SparseGPRegressor()", SparseGPRegressor(random_state=0), X, y, Xt, yt), flush=True)
        if X.shape[0] <= a.exact_max:
            print(row(name, "ExactGPRegressor()", ExactGPRegressor(), X, y, Xt, yt), flush=True)


if __name__ == "__main__":
    main()
