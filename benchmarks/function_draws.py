"""Posterior function draws (``sample_functions``) against the posterior they draw from.

    python -m benchmarks function_draws

A VFE fit (m = 32) and an exact GP on 300 rows of a 3-D function; 20 test inputs (10 among the training
inputs' range, 10 beyond it). For each number of random features per draw: 20,000 draws evaluated at the test
inputs; the largest relative error of the draws' variance against ``predict(return_cov=True,
include_noise=False)``'s over the test inputs, the largest covariance error relative to the largest variance,
the largest excess kurtosis of the draws' marginals (0 for Gaussian draws), and the seconds to draw and to
evaluate 1,000 draws at 1,000 inputs. With 20,000 draws the Monte Carlo standard error of a relative variance
is sqrt(2 / 20,000) = 1 %.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from scipy.stats import kurtosis

from sparsegp import ExactGPRegressor, SparseGPRegressor


def main():
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(300, 3))
    y = np.sin(2 * X[:, 0]) * np.cos(X[:, 1]) + 0.3 * X[:, 2] + 0.1 * rng.normal(size=300)
    Xs = np.vstack([rng.uniform(-2, 2, size=(10, 3)), rng.uniform(2, 4, size=(10, 3))])
    Xbig = rng.uniform(-2, 2, size=(1000, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        models = {
            "VFE m=32": SparseGPRegressor(inducing=32, random_state=0).fit(X, y),
            "exact": ExactGPRegressor().fit(X, y),
        }
    print(
        "model | features | max rel. variance error | max cov. error / max var | max excess kurtosis | draw s | eval s"
    )
    for name, model in models.items():
        mean, cov = model.predict(Xs, return_cov=True, include_noise=False)
        for L in (4, 16, 64, 1024):
            F = model.sample_functions(20_000, random_state=1, n_features=L)(Xs)
            C = np.cov(F)
            rel = np.max(np.abs(np.diag(C) / np.diag(cov) - 1))
            t = time.perf_counter()
            draws = model.sample_functions(1000, random_state=2, n_features=L)
            t_draw = time.perf_counter() - t
            t = time.perf_counter()
            draws(Xbig)
            t_eval = time.perf_counter() - t
            print(
                f"{name} | {L} | {rel:.4f} | {np.max(np.abs(C - cov)) / np.max(np.diag(cov)):.4f} | "
                f"{np.max(np.abs(kurtosis(F, axis=1))):.3f} | {t_draw:.2f} | {t_eval:.2f}"
            )


if __name__ == "__main__":
    main()
