"""Regression beyond Gaussian noise: a Student-t likelihood on targets with gross outliers, a Poisson likelihood on
counts, each against a Gaussian fit of the same rows and (counts) GPflow's SVGP with the same likelihood.

    python -m benchmarks likelihoods [--set concrete] [--poisson-m 64] [--parts robust counts] [--json OUT]

ROBUST: a shipped regression set (concrete, split 0, inputs and targets standardised on the training rows); 5 % of
the training targets, drawn with seed 0, are moved by +-10 training sd (sign at random). The defaults of
``SparseGPRegressor()`` (Gaussian) and ``SparseGPRegressor(likelihood="student-t")`` each fit the clean and the
corrupted rows; every model is scored on the clean test rows: SMSE (the test MSE over the
variance of the test targets) and SNLP (minus the mean log predictive density, less that of a Gaussian with the
clean training targets' mean and variance).

COUNTS: (a) simulated: 2,000 training and 2,000 test inputs uniform on [-3, 3]^2, the log rate a draw of a GP
(SE, length-scale 1, variance 1) plus 1, counts Poisson of that rate; (b) abalone's ring counts (split seed 0,
3,133 / 1,044 rows, inputs standardised on the training rows). ``SparseGPRegressor(likelihood="poisson",
inducing=m)`` and GPflow's SVGP with its Poisson likelihood (``anchors_regression_likelihood.py`` in
``.venv-anchors``, started from the same m inducing inputs, 1,000 L-BFGS-B iterations) at the same m, and the
Gaussian default on the counts: the test log predictive density of the counts (nats per row; the Gaussian's as
the probability it puts on [y - 1/2, y + 1/2], a mass like the others') and, simulated, the RMSE of the
predictive mean against the true rate.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
import warnings

import numpy as np
from scipy.special import log_ndtr

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def smse_snlp(model, Xt, yt, y_train):
    mean = model.predict(Xt)
    lpd = model.log_predictive_density(Xt, yt)
    trivial = -0.5 * np.mean(np.log(2 * np.pi * y_train.var()) + (yt - y_train.mean()) ** 2 / y_train.var())
    return float(np.mean((mean - yt) ** 2) / np.var(yt)), float(trivial - lpd)


def robust(name: str) -> dict:
    from sparsegp import SparseGPRegressor, datasets

    X, y, Xt, yt = datasets.load(name)
    rng = np.random.default_rng(0)
    bad = rng.choice(y.size, size=int(round(0.05 * y.size)), replace=False)
    corrupted = y.copy()
    corrupted[bad] += rng.choice([-1.0, 1.0], bad.size) * 10 * y.std()
    rows = {}
    for label, model, target in (
        ("gaussian, clean rows", SparseGPRegressor(random_state=0), y),
        ("gaussian, corrupted rows", SparseGPRegressor(random_state=0), corrupted),
        ("student-t, corrupted rows", SparseGPRegressor(likelihood="student-t", random_state=0), corrupted),
        ("student-t, clean rows", SparseGPRegressor(likelihood="student-t", random_state=0), y),
    ):
        t = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(X, target)
        smse, snlp = smse_snlp(model, Xt, yt, y)
        rows[label] = {"smse": smse, "snlp": snlp, "fit_s": time.perf_counter() - t, "m": int(model.Z_.shape[0])}
        if hasattr(model, "likelihood_"):
            rows[label]["likelihood"] = repr(model.likelihood_)
        print(f"{name} {label:28s} SMSE {smse:.4f}  SNLP {snlp:+.4f}  m {rows[label]['m']}  {rows[label]['fit_s']:.1f} s",
              flush=True)  # fmt: skip
    return {"set": name, "rows": int(y.size), "outliers": int(bad.size), "models": rows}


def simulated_counts(n: int = 2000, seed: int = 0):
    from sparsegp.kernels import SquaredExponential

    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, size=(2 * n, 2))
    K = np.asarray(SquaredExponential(lengthscale=1.0, variance=1.0).K(X)) + 1e-8 * np.eye(2 * n)
    f = 1.0 + np.linalg.cholesky(K) @ rng.standard_normal(2 * n)
    y = rng.poisson(np.exp(f)).astype(float)
    return X[:n], y[:n], X[n:], y[n:], np.exp(f[n:])


def abalone_counts():
    from sparsegp import datasets

    X, y, Xt, yt = datasets.load("abalone", split=0, preprocessing="none")
    mu, sd = X.mean(axis=0), X.std(axis=0)
    return (X - mu) / sd, y, (Xt - mu) / sd, yt, None


def gpflow_poisson(X, y, Xt, yt, Z, m: int, max_iter: int) -> dict:
    py = os.environ.get("SPARSEGP_ANCHORS_PYTHON", os.path.join(ROOT, ".venv-anchors", "bin", "python"))
    with tempfile.TemporaryDirectory() as tmp:
        data, out = os.path.join(tmp, "d.npz"), os.path.join(tmp, "o.json")
        np.savez(data, X=X, y=y, X_test=Xt, y_test=yt, Z=Z)
        script = os.path.join(ROOT, "benchmarks", "anchors_regression_likelihood.py")
        cmd = [py, script, data, out, "--likelihood", "poisson", "--m", str(m), "--max-iter", str(max_iter)]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(out) as f:
            return json.load(f)


def counts(label: str, X, y, Xt, yt, rate, m: int) -> dict:
    from sparsegp import SparseGPRegressor

    out = {}
    t = time.perf_counter()
    ours = SparseGPRegressor(likelihood="poisson", inducing=m, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours.fit(X, y)
    out["sparsegp poisson"] = {"log_predictive": ours.log_predictive_density(Xt, yt), "fit_s": time.perf_counter() - t,
                               "mean": ours.predict(Xt), "bound": float(ours.bound_)}  # fmt: skip
    t = time.perf_counter()
    gauss = SparseGPRegressor(random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gauss.fit(X, y)
    mean, sd = gauss.predict(Xt, return_std=True)
    upper, lower = log_ndtr((yt + 0.5 - mean) / sd), log_ndtr((yt - 0.5 - mean) / sd)
    mass = upper + np.log(-np.expm1(np.minimum(lower - upper, -1e-300)))
    out["sparsegp gaussian"] = {"log_predictive": float(np.mean(mass)), "fit_s": time.perf_counter() - t, "mean": mean}
    g = gpflow_poisson(X, y, Xt, yt, ours.Z_, m, 1000)
    out["gpflow svgp poisson"] = {"log_predictive": g["log_predictive"], "fit_s": g["fit_s"],
                                  "mean": np.asarray(g["mean"]), "iterations": g["iterations"], "bound": g["bound"]}  # fmt: skip
    for name, r in out.items():
        if rate is not None:
            r["rate_rmse"] = float(np.sqrt(np.mean((r["mean"] - rate) ** 2)))
        r.pop("mean")
        extra = f"  rate RMSE {r['rate_rmse']:.4f}" if rate is not None else ""
        print(f"{label} {name:22s} log predictive {r['log_predictive']:+.4f} nats/row{extra}  {r['fit_s']:.1f} s",
              flush=True)  # fmt: skip
    gap = out["sparsegp poisson"]["log_predictive"] - out["gpflow svgp poisson"]["log_predictive"]
    print(f"{label}: sparsegp - GPflow = {gap:+.4f} nats per row (m = {m})", flush=True)
    return {"set": label, "m": m, "rows": int(y.size), "models": out, "gap_to_gpflow": gap}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", default="concrete", help="the shipped regression set of ROBUST")
    ap.add_argument("--poisson-m", type=int, default=64)
    ap.add_argument("--parts", nargs="+", choices=("robust", "counts"), default=("robust", "counts"))
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    result = {"robust": robust(a.set)} if "robust" in a.parts else {}
    if "counts" in a.parts:
        result["simulated counts"] = counts("simulated counts", *simulated_counts(), a.poisson_m)
        result["abalone rings"] = counts("abalone rings", *abalone_counts(), a.poisson_m)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1, default=float)


if __name__ == "__main__":
    main()
