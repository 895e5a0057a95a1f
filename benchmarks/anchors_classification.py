"""GPflow SVGP on the CLS protocol (runs in ``.venv-anchors``; NumPy and GPflow only).

    python anchors_classification.py DATA.npz OUT.json --m 64 --max-iter 1000 --every 20

DATA.npz holds X, y (integer codes 0..C-1), X_test, y_test and Z_pool (rows of X in a random order: the first
m are the inducing inputs, GPflow's usual random initialisation). Binary: Bernoulli with the probit link;
more classes: GPflow's MultiClass (robust-max) likelihood with C latent functions. SE-ARD kernel from
length-scales 1 and variance 1 (the inputs are standardised), whitened q(u), L-BFGS-B (GPflow's Scipy
optimiser). Every ``--every`` iterations the test accuracy and log loss are recorded with the clock stopped.
"""

from __future__ import annotations

import argparse
import json
import resource
import time

import numpy as np


def scores(proba, y):
    p = np.clip(proba / proba.sum(axis=1, keepdims=True), 1e-300, 1.0)
    return float(np.mean(p.argmax(axis=1) == y)), float(-np.mean(np.log(p[np.arange(y.size), y])))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("out")
    ap.add_argument("--m", type=int, required=True)
    ap.add_argument("--max-iter", type=int, default=1000)
    ap.add_argument("--every", type=int, default=20)
    a = ap.parse_args()
    import gpflow
    import tensorflow as tf

    gpflow.config.set_default_float(np.float64)
    with np.load(a.data, allow_pickle=False) as f:
        d = {k: f[k] for k in f.files}
    X, y, Xt, yt = d["X"], d["y"].astype(np.int64), d["X_test"], d["y_test"].astype(np.int64)
    C = int(max(y.max(), yt.max()) + 1)
    m = min(a.m, X.shape[0])
    Z = d["Z_pool"][:m].copy()
    kernel = gpflow.kernels.SquaredExponential(lengthscales=np.ones(X.shape[1]), variance=1.0)
    if C == 2:
        lik, L, Y = gpflow.likelihoods.Bernoulli(), 1, y[:, None].astype(np.float64)
    else:
        lik, L, Y = gpflow.likelihoods.MultiClass(C), C, y[:, None].astype(np.float64)
    model = gpflow.models.SVGP(kernel, lik, Z, num_latent_gps=L, whiten=True, num_data=X.shape[0])
    loss = model.training_loss_closure((X, Y), compile=True)

    def proba(Xq):
        if C == 2:
            p1 = np.asarray(model.predict_y(Xq)[0])[:, 0]
            return np.column_stack([1 - p1, p1])
        # MultiClass.predict_mean_and_var returns the per-class probabilities as its mean
        return np.asarray(model.predict_y(Xq)[0])

    records, clock = [], {"paused": 0.0}

    def step_callback(step, variables, values):
        if (step + 1) % a.every:
            return
        t = time.perf_counter()
        acc, ll = scores(proba(Xt), yt)
        records.append([step + 1, round(t - t0 - clock["paused"], 3), acc, ll])
        clock["paused"] += time.perf_counter() - t

    t0 = time.perf_counter()
    res = gpflow.optimizers.Scipy().minimize(
        loss, model.trainable_variables, options={"maxiter": a.max_iter}, compile=True, step_callback=step_callback
    )
    fit_s = time.perf_counter() - t0 - clock["paused"]
    p = proba(Xt)
    acc, ll = scores(p, yt)
    onehot = np.eye(C)[yt]
    out = {
        "library": f"GPflow {gpflow.__version__} SVGP",
        "likelihood": type(lik).__name__,
        "m": m,
        "fit_s": fit_s,
        "iterations": int(res.nit),
        "accuracy": acc,
        "log_loss": ll,
        "brier": float(np.mean(np.sum((p - onehot) ** 2, axis=1))),
        "proba": p.tolist(),
        "elbo": float(model.elbo((X, Y))),
        "records": records,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "tf": tf.__version__,
    }
    with open(a.out, "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
