"""Digests of fitted models, for comparing two versions of the code: same digests, same bits.

Sparse fits (VFE, DTC, SoR, FITC; free and fixed inducing inputs; the subset-then-all strategy;
variational EM and interleaved re-selection; a tiny set with its weak priors), exact fits, fits of data
with repeated records and with repeated inputs, and each model's objective, predictions and
``log_marginal_likelihood`` with its gradient.

    python benchmarks/fit_digest.py [--save A.npz] [--compare A.npz]

``--save`` keeps the arrays; ``--compare`` prints, for each fit whose digest differs, the largest
difference from the saved arrays, relative where |value| > 1 (for changes meant to agree to rounding).
"""

from __future__ import annotations

import argparse
import hashlib
import warnings

import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--save")
    parser.add_argument("--compare")
    opts = parser.parse_args()
    warnings.simplefilter("ignore")
    saved = dict(np.load(opts.compare)) if opts.compare else {}
    arrays = {}
    from sparsegp import ExactGPRegressor, SparseGPRegressor
    from sparsegp.selection import InfoGain

    r = np.random.default_rng(0)
    X = r.normal(size=(300, 3))
    y = np.sin(2 * X[:, 0]) + 0.3 * X[:, 1] + 0.1 * r.normal(size=300)
    Xs = r.normal(size=(37, 3))
    total = hashlib.sha256()

    def add(name, model, X=X, y=y):
        mean, std = model.predict(Xs, return_std=True)
        lml = model.log_marginal_likelihood(
            eval_gradient=True, **({} if isinstance(model, ExactGPRegressor) else {"X": X, "y": y})
        )
        parts = [mean, std, np.atleast_1d(lml[0]), lml[1], [model.noise_]]
        parts += [np.ravel(v) for v in model.kernel_.parameters().values()]
        if hasattr(model, "Z_"):
            parts += [np.ravel(model.Z_), [model.objective_]]
        a = np.concatenate([np.ravel(np.asarray(p, dtype=np.float64)) for p in parts])
        total.update(a.tobytes())
        arrays[name] = a
        line = f"{name:28s} {hashlib.sha256(a.tobytes()).hexdigest()[:16]}"
        if name in saved and not np.array_equal(saved[name], a):
            err = np.max(np.abs(a - saved[name]) / np.maximum(np.abs(saved[name]), 1.0))
            line += f"  largest difference {err:.2e} (relative where |value| > 1)"
        print(line)

    for approx in ("vfe", "dtc", "sor", "fitc"):
        add(
            f"{approx} free Z",
            SparseGPRegressor(inducing=15, approximation=approx, max_iter=40, random_state=0).fit(X, y),
        )
        add(
            f"{approx} fixed Z",
            SparseGPRegressor(
                inducing=15, approximation=approx, optimize="hyperparameters", max_iter=40, random_state=1
            ).fit(X, y),
        )
    add(
        "vfe subset then all",
        SparseGPRegressor(inducing=12, subset=100, refine_iter=5, max_iter=30, random_state=0).fit(X, y),
    )
    add(
        "vfe variational EM",
        SparseGPRegressor(
            inducing=InfoGain(12), reselect="em", n_rounds=2, optimize="hyperparameters", max_iter=20, random_state=0
        ).fit(X, y),
    )
    add(
        "dtc interleaved",
        SparseGPRegressor(
            inducing=InfoGain(12),
            approximation="dtc",
            reselect="interleaved",
            optimize="hyperparameters",
            max_iter=10,
            random_state=0,
        ).fit(X, y),
    )
    add("vfe tiny (priors)", SparseGPRegressor(inducing=5, max_iter=40, random_state=0).fit(X[:8], y[:8]), X[:8], y[:8])
    add("exact", ExactGPRegressor(max_iter=40).fit(X[:120], y[:120]))
    add("exact tiny (priors)", ExactGPRegressor(max_iter=40).fit(X[:8], y[:8]))
    # Repeated records (the first 60 rows twice over) and repeated inputs with other targets
    Xr, yr = np.vstack([X, X[:60]]), np.concatenate([y, y[:60]])
    yi = np.concatenate([y, y[:60] + 0.1 * r.normal(size=60)])
    for approx in ("vfe", "fitc"):
        add(
            f"{approx} repeated records",
            SparseGPRegressor(inducing=15, approximation=approx, max_iter=40, random_state=0).fit(Xr, yr),
            Xr,
            yr,
        )
        add(
            f"{approx} repeated inputs",
            SparseGPRegressor(inducing=15, approximation=approx, max_iter=40, random_state=0).fit(Xr, yi),
            Xr,
            yi,
        )
    add("exact repeated records", ExactGPRegressor(max_iter=40).fit(Xr[::2], yr[::2]))
    add(
        "exact repeated inputs",
        ExactGPRegressor(max_iter=40).fit(np.vstack([X[:120], X[:60]]), yi[np.r_[0:120, 300:360]]),
    )
    print(f"{'all':28s} {total.hexdigest()[:16]}")
    if opts.save:
        np.savez(opts.save, **arrays)


if __name__ == "__main__":
    main()
