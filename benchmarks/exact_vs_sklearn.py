"""Exact GP on kin40k, 2,000 training points: sparsegp vs scikit-learn's GaussianProcessRegressor.

Data: protocol K10's source (kin40k, uci_datasets split 0; inputs standardised
on the training rows), first 2,000 training rows, the full split-0 test set
(4,000 rows). Model: SE-ARD amplitude * RBF(8 length-scales) + white noise,
all hyper-parameters initialised at 1, targets normalised, one L-BFGS-B start,
float64 on both sides.
"""

from __future__ import annotations

import time

import numpy as np

N_TRAIN = 2000


def _data():
    from sparsegp.experiments.protocols import protocol_data

    return protocol_data("K10", n_train=N_TRAIN)


def _scores(y_train, y_test, mean, std):
    from sparsegp import metrics

    return {
        "SMSE": round(metrics.smse(y_test, mean), 4),
        "SNLP": round(metrics.snlp(y_test, mean, std**2, y_train), 4),
    }


def case_sparsegp():
    import sparsegp
    from sparsegp import ExactGPRegressor
    from sparsegp.kernels import SquaredExponential

    X, y, Xs, ys = _data()
    model = ExactGPRegressor(SquaredExponential(np.ones(X.shape[1]), 1.0), noise=1.0, max_iter=1000)
    t0 = time.perf_counter()
    model.fit(X, y)
    fit_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    mean, std = model.predict(Xs, return_std=True, include_noise=True)
    pred_s = time.perf_counter() - t0
    rep = model.optimizer_report_
    return {
        "protocol": "K10 (first 2,000 rows)",
        "library": f"sparsegp {sparsegp.__version__}",
        "method": "exact GP",
        "m": "-",
        "fit_s": round(fit_s, 2),
        "predict_s": round(pred_s, 3),
        **_scores(y, ys, mean, std),
        "objective": round(-model.log_marginal_likelihood_, 3),
        "iterations": rep.n_iter,
        "evaluations": rep.n_evals,
        "s_per_eval": round(fit_s / rep.n_evals, 4),
    }


def case_sklearn():
    import sklearn
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel

    X, y, Xs, ys = _data()
    kernel = ConstantKernel(1.0, (1e-5, 1e5)) * RBF(np.ones(X.shape[1]), (1e-5, 1e5)) + WhiteKernel(1.0, (1e-6, 1e5))
    model = GaussianProcessRegressor(kernel, alpha=0.0, normalize_y=True, n_restarts_optimizer=0, random_state=0)
    t0 = time.perf_counter()
    model.fit(X, y)
    fit_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    mean, std = model.predict(Xs, return_std=True)  # includes the WhiteKernel noise: the predictive std of y
    pred_s = time.perf_counter() - t0
    return {
        "protocol": "K10 (first 2,000 rows)",
        "library": f"scikit-learn {sklearn.__version__}",
        "method": "GaussianProcessRegressor",
        "m": "-",
        "fit_s": round(fit_s, 2),
        "predict_s": round(pred_s, 3),
        **_scores(y, ys, mean, std),
        "objective": round(-model.log_marginal_likelihood_value_, 3),
    }


CASES = {"sparsegp": case_sparsegp, "sklearn": case_sklearn}
