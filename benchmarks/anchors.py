"""Reference libraries on the same protocol: GPflow SGPR / GPRFITC and GPyTorch SGPR.

Runs inside the anchors virtual environment (``make anchors``: GPflow 2.11 needs
NumPy < 2, so it cannot share sparsegp's environment). Imports only NumPy and
the library under test; reads the prepared protocol data from an .npz and
writes predictions, timings and the final objective to another .npz, so the
metrics are computed by one shared piece of code in the parent process.

    python anchors.py CASE DATA.npz OUT.npz --m 512 --max-iter 300
"""

from __future__ import annotations

import os
import time

import numpy as np


def gpflow_case(kind, d, m, max_iter, trajectory):
    import gpflow
    import tensorflow as tf

    gpflow.config.set_default_float(np.float64)
    X, y, Xs, Z = d["X"], d["y"][:, None], d["X_test"], d["Z"][:m]
    kernel = gpflow.kernels.SquaredExponential(lengthscales=d["ell0"].copy(), variance=float(d["var0"]))
    cls = gpflow.models.SGPR if kind == "sgpr" else gpflow.models.GPRFITC
    model = cls((X, y), kernel=kernel, inducing_variable=Z.copy(), noise_variance=float(d["noise0"]))
    # GPflow's own default L-BFGS memory (SciPy's 10) unless the suite asks for another.
    options = {"maxiter": max_iter}
    if os.environ.get("SPARSEGP_BENCH_GPFLOW_MAXCOR"):
        options["maxcor"] = int(os.environ["SPARSEGP_BENCH_GPFLOW_MAXCOR"])

    def step_callback(step, variables, values):
        trajectory.record(step + 1, lambda: model.predict_y(Xs))

    trajectory.start()
    res = gpflow.optimizers.Scipy().minimize(
        model.training_loss,
        model.trainable_variables,
        options=options,
        compile=True,
        step_callback=step_callback if trajectory.every else None,
    )
    fit_s = trajectory.fit_seconds()
    t0 = time.perf_counter()
    mean, var = model.predict_y(Xs)
    pred_s = time.perf_counter() - t0
    # Steady-state objective + gradient evaluation.
    loss_grad = tf.function(lambda: tf.gradients(model.training_loss(), model.trainable_variables))
    loss_grad()
    t1 = time.perf_counter()
    for _ in range(3):
        loss_grad()
    per_eval = (time.perf_counter() - t1) / 3
    objective = float(model.elbo()) if kind == "sgpr" else float(model.fitc_log_marginal_likelihood())
    return {
        "library": f"GPflow {gpflow.__version__}",
        "method": "SGPR (VFE)" if kind == "sgpr" else "GPRFITC (FITC)",
        "fit_s": fit_s,
        "predict_s": pred_s,
        "s_per_eval": per_eval,
        "objective": -objective,
        "iterations": int(res.nit),
        "mean": np.asarray(mean)[:, 0],
        "var": np.asarray(var)[:, 0],
    }


def gpytorch_case(d, m, max_iter, trajectory):
    import gpytorch
    import torch

    torch.set_default_dtype(torch.float64)
    X, y, Xs, Z = (torch.as_tensor(d[k]) for k in ("X", "y", "X_test", "Z"))
    Z = Z[:m].clone()

    class SGPR(gpytorch.models.ExactGP):
        def __init__(self, X, y, likelihood):
            super().__init__(X, y, likelihood)
            self.mean_module = gpytorch.means.ZeroMean()
            base = gpytorch.kernels.ScaleKernel(gpytorch.kernels.RBFKernel(ard_num_dims=X.shape[1]))
            base.base_kernel.lengthscale = torch.as_tensor(d["ell0"])
            base.outputscale = torch.tensor(float(d["var0"]))
            self.covar_module = gpytorch.kernels.InducingPointKernel(base, inducing_points=Z, likelihood=likelihood)

        def forward(self, x):
            return gpytorch.distributions.MultivariateNormal(self.mean_module(x), self.covar_module(x))

    lik = gpytorch.likelihoods.GaussianLikelihood()
    lik.noise = torch.tensor(float(d["noise0"]))
    model = SGPR(X, y, lik)
    model.train()
    lik.train()
    mll = gpytorch.mlls.ExactMarginalLogLikelihood(lik, model)
    # With a trajectory, L-BFGS runs `every` iterations per step: torch keeps its memory and its iteration count
    # between steps, so the run is the same one, stopped for the records.
    per_step = trajectory.every or max_iter
    opt = torch.optim.LBFGS(
        model.parameters(), lr=1.0, max_iter=per_step, line_search_fn="strong_wolfe", tolerance_change=1e-9
    )
    n_evals = [0]

    def closure():
        opt.zero_grad()
        loss = -mll(model(X), y) * X.shape[0]
        loss.backward()
        n_evals[0] += 1
        return loss

    def predict():
        model.eval()
        lik.eval()
        with torch.no_grad():
            pred = lik(model(Xs))
            out = pred.mean.numpy(), pred.variance.numpy()
        model.train()
        lik.train()
        return out

    def done():
        return int(opt.state[opt._params[0]].get("n_iter", 0))

    trajectory.start()
    while done() < max_iter:
        before = done()
        opt.step(closure)
        if done() == before:  # converged: the step made no iteration
            break
        trajectory.record(done(), predict)
    fit_s = trajectory.fit_seconds()
    t1 = time.perf_counter()
    for _ in range(3):
        closure()
    per_eval = (time.perf_counter() - t1) / 3
    objective = float(closure().detach())
    model.eval()
    lik.eval()
    t0 = time.perf_counter()
    with torch.no_grad():
        pred = lik(model(Xs))
        mean, var = pred.mean.numpy(), pred.variance.numpy()
    pred_s = time.perf_counter() - t0
    return {
        "library": f"GPyTorch {gpytorch.__version__}",
        "method": "SGPR (InducingPointKernel)",
        "fit_s": fit_s,
        "predict_s": pred_s,
        "s_per_eval": per_eval,
        "objective": objective,
        "iterations": int(opt.state[opt._params[0]].get("n_iter", 0)),
        "mean": mean,
        "var": var,
    }


CASES = {
    "gpflow-sgpr": lambda d, m, it, tr: gpflow_case("sgpr", d, m, it, tr),
    "gpflow-fitc": lambda d, m, it, tr: gpflow_case("fitc", d, m, it, tr),
    "gpytorch-sgpr": gpytorch_case,
}


if __name__ == "__main__":
    from benchmarks.case_io import run_cli

    run_cli(CASES)
