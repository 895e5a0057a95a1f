"""Digests of fitted models, for comparing two versions of the code: same digests, same bits.

Sparse fits (VFE, DTC, SoR, FITC; free and fixed inducing inputs; the subset-then-all strategy;
variational EM and interleaved re-selection; a tiny set with its weak priors; the default ``inducing="auto"``
fit; a fit on dask arrays on a two-process LocalCluster), exact fits, fits of data with repeated records and
with repeated inputs, and each model's objective, predictions and ``log_marginal_likelihood`` with its
gradient; then the classifiers: the IVM with a given kernel and with its default (learnt) kernel, and
``SparseGPClassifier`` (binary with growth, multiclass), each by its probabilities and fitted state. A part
whose estimator a version lacks prints "absent" (so two versions compare on what both have).

    python -m benchmarks fit_digest [--save A.npz] [--compare A.npz]

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
    from sparsegp.options import Interleaved, Joint, SubsetThenAll, VariationalEM
    from sparsegp.selection import InfoGain

    r = np.random.default_rng(0)
    X = r.normal(size=(300, 3))
    y = np.sin(2 * X[:, 0]) + 0.3 * X[:, 1] + 0.1 * r.normal(size=300)
    Xs = r.normal(size=(37, 3))
    total = hashlib.sha256()

    def add(name, model, X=X, y=y):
        if model is None:
            print(f"{name:28s} absent")
            return
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
        record(name, a, total, arrays, saved)

    for approx in ("vfe", "dtc", "sor", "fitc"):
        add(
            f"{approx} free Z",
            SparseGPRegressor(inducing=15, approximation=approx, random_state=0, schedule=Joint(max_iter=40)).fit(X, y),
        )
        add(
            f"{approx} fixed Z",
            SparseGPRegressor(
                inducing=15,
                approximation=approx,
                optimize="hyperparameters",
                random_state=1,
                schedule=Joint(max_iter=40),
            ).fit(X, y),
        )
    add(
        "vfe subset then all",
        SparseGPRegressor(
            inducing=12, random_state=0, schedule=SubsetThenAll(subset=100, refine_iter=5, max_iter=30)
        ).fit(X, y),
    )
    add(
        "vfe variational EM",
        SparseGPRegressor(
            inducing=InfoGain(12),
            optimize="hyperparameters",
            random_state=0,
            schedule=VariationalEM(n_rounds=2, max_iter=20),
        ).fit(X, y),
    )
    add(
        "dtc interleaved",
        SparseGPRegressor(
            inducing=InfoGain(12),
            approximation="dtc",
            optimize="hyperparameters",
            random_state=0,
            schedule=Interleaved(max_iter=10),
        ).fit(X, y),
    )
    add(
        "vfe tiny (priors)",
        SparseGPRegressor(inducing=5, random_state=0, schedule=Joint(max_iter=40)).fit(X[:8], y[:8]),
        X[:8],
        y[:8],
    )
    add("vfe auto (default)", SparseGPRegressor(random_state=0).fit(X, y))
    add("vfe on dask", dask_fit(X, y))
    add("exact", ExactGPRegressor(max_iter=40).fit(X[:120], y[:120]))
    add("exact tiny (priors)", ExactGPRegressor(max_iter=40).fit(X[:8], y[:8]))
    # Repeated records (the first 60 rows twice over) and repeated inputs with other targets
    Xr, yr = np.vstack([X, X[:60]]), np.concatenate([y, y[:60]])
    yi = np.concatenate([y, y[:60] + 0.1 * r.normal(size=60)])
    for approx in ("vfe", "fitc"):
        add(
            f"{approx} repeated records",
            SparseGPRegressor(inducing=15, approximation=approx, random_state=0, schedule=Joint(max_iter=40)).fit(
                Xr, yr
            ),
            Xr,
            yr,
        )
        add(
            f"{approx} repeated inputs",
            SparseGPRegressor(inducing=15, approximation=approx, random_state=0, schedule=Joint(max_iter=40)).fit(
                Xr, yi
            ),
            Xr,
            yi,
        )
    add("exact repeated records", ExactGPRegressor(max_iter=40).fit(Xr[::2], yr[::2]))
    add(
        "exact repeated inputs",
        ExactGPRegressor(max_iter=40).fit(np.vstack([X[:120], X[:60]]), yi[np.r_[0:120, 300:360]]),
    )
    classifiers(X, r, total, arrays, saved)
    print(f"{'all':28s} {total.hexdigest()[:16]}")
    if opts.save:
        np.savez(opts.save, **arrays)


def record(name, a, total, arrays, saved):
    total.update(a.tobytes())
    arrays[name] = a
    line = f"{name:28s} {hashlib.sha256(a.tobytes()).hexdigest()[:16]}"
    if name in saved and saved[name].shape != a.shape:
        line += f"  {a.size} numbers, {saved[name].size} saved (the fitted state's size changed)"
    elif name in saved and not np.array_equal(saved[name], a):
        err = np.max(np.abs(a - saved[name]) / np.maximum(np.abs(saved[name]), 1.0))
        line += f"  largest difference {err:.2e} (relative where |value| > 1)"
    print(line)


def dask_fit(X, y):
    """VFE on dask arrays (three partitions) on a LocalCluster of two worker processes."""
    import dask.array as da
    from distributed import Client, LocalCluster

    from sparsegp import SparseGPRegressor
    from sparsegp.options import Joint

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with Client(cluster):
            return SparseGPRegressor(inducing=15, random_state=0, schedule=Joint(max_iter=30)).fit(
                da.from_array(X, chunks=100), da.from_array(y, chunks=100)
            )


def classifiers(X, r, total, arrays, saved):
    """The IVM (given and learnt kernel) and SparseGPClassifier (binary with growth, three classes)."""
    import sparsegp
    from sparsegp.kernels import SquaredExponential

    labels = np.where(np.sin(2 * X[:, 0]) + X[:, 1] + 0.5 * r.normal(size=X.shape[0]) > 0, 1, -1)
    three = np.digitize(X[:, 0] + 0.3 * r.normal(size=X.shape[0]), [-0.5, 0.5])
    Xs = r.normal(size=(37, X.shape[1]))

    def add(name, model, state):
        parts = [model.predict_proba(Xs)] + [np.ravel(np.asarray(v, dtype=np.float64)) for v in state(model)]
        parts += [np.ravel(v) for v in model.kernel_.parameters().values()]
        record(name, np.concatenate([np.ravel(np.asarray(p, dtype=np.float64)) for p in parts]), total, arrays, saved)

    def ivm(m):
        return [m.active_, m.beta_, [m.log_marginal_likelihood_]]

    add(
        "ivm given kernel", sparsegp.IVMClassifier(SquaredExponential(1.0), size=40, random_state=0).fit(X, labels), ivm
    )
    add("ivm default", sparsegp.IVMClassifier(size=40, random_state=0).fit(X, labels), ivm)
    if not hasattr(sparsegp, "SparseGPClassifier"):
        print(f"{'SparseGPClassifier':28s} absent")
        return

    def svgp(m):
        return [m.Z_, m.q_mu_, m.q_sqrt_, m.mean_, [m.bound_, m.loo_log_loss_, m.loo_calibration_error_]]

    add("svgp binary auto", sparsegp.SparseGPClassifier(random_state=0, max_inducing=64).fit(X, labels), svgp)
    add("svgp 3 classes", sparsegp.SparseGPClassifier(inducing=10, max_iter=60, random_state=0).fit(X, three), svgp)


if __name__ == "__main__":
    main()
