"""GPflow SVGP with a non-Gaussian likelihood on a regression table (runs in ``.venv-anchors``; NumPy and GPflow).

    python anchors_regression_likelihood.py DATA.npz OUT.json --likelihood poisson --m 64 --max-iter 1000

DATA.npz holds X, y, X_test, y_test and Z (the inducing inputs to start from, the same rows sparsegp is given).
SE-ARD kernel from length-scales 1 and variance 1 (the inputs are standardised), whitened q(u), a constant mean
function (learnt, from the likelihood's start as sparsegp's), L-BFGS-B (GPflow's Scipy optimiser) for
``--max-iter`` iterations. Writes the test log predictive density per row (GPflow's ``predict_log_density``),
the predictive mean of y at the test inputs, the fit's seconds and iterations.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("out")
    ap.add_argument("--likelihood", choices=("poisson", "student-t"), required=True)
    ap.add_argument("--m", type=int, required=True)
    ap.add_argument("--max-iter", type=int, default=1000)
    a = ap.parse_args()
    import gpflow

    gpflow.config.set_default_float(np.float64)
    with np.load(a.data, allow_pickle=False) as f:
        d = {k: f[k] for k in f.files}
    X, y, Xt, yt = d["X"], d["y"][:, None], d["X_test"], d["y_test"][:, None]
    Z = d["Z"][: a.m].copy()
    kernel = gpflow.kernels.SquaredExponential(lengthscales=np.ones(X.shape[1]), variance=1.0)
    if a.likelihood == "poisson":
        lik = gpflow.likelihoods.Poisson()
        start = np.log(max(float(np.mean(y)), 1e-3))
    else:
        lik = gpflow.likelihoods.StudentT(df=4.0, scale=0.1)
        start = float(np.median(y))
    mean = gpflow.functions.Constant(np.array([start]))
    model = gpflow.models.SVGP(kernel, lik, Z, mean_function=mean, whiten=True, num_data=X.shape[0])
    t = time.perf_counter()
    result = gpflow.optimizers.Scipy().minimize(
        model.training_loss_closure((X, y), compile=True), model.trainable_variables,
        options={"maxiter": a.max_iter},
    )  # fmt: skip
    fit_s = time.perf_counter() - t
    lpd = np.asarray(model.predict_log_density((Xt, yt)))
    ymean = np.asarray(model.predict_y(Xt)[0])[:, 0]
    out = {
        "log_predictive": float(np.mean(lpd)),
        "mean": ymean.tolist(),
        "fit_s": fit_s,
        "iterations": int(result.nit),
        "bound": float(-model.training_loss((X, y))),
    }
    with open(a.out, "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
