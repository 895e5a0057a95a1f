"""Extrapolating a periodic function: the Periodic kernel against the default SE-ARD, exact GP on each.

    python -m benchmarks periodic_extrapolation [seeds]

Per seed: f(x) = sin(2 pi x / p) + 0.4 sin(4 pi x / p), p = 1.3, 80 rows drawn uniformly over 4 periods
with noise sd 0.1; the test inputs are 200 points over the next 2 periods. Three exact GPs: the Periodic kernel
started from the periodogram (``Periodic.from_data``), the Periodic kernel started at period 1 with 4 random
restarts, and ``ExactGPRegressor()`` (the SE-ARD default). SMSE of each against the noise-free f, the ratio to
the SE's, the learnt periods and each fit's test SNLP on noisy targets.
"""

from __future__ import annotations

import sys
import warnings

import numpy as np

from sparsegp import ExactGPRegressor
from sparsegp.kernels import Periodic
from sparsegp.metrics import smse, snlp

PERIOD = 1.3


def f(x):
    return np.sin(2 * np.pi * x / PERIOD) + 0.4 * np.sin(4 * np.pi * x / PERIOD)


def main():
    seeds = range(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
    print("seed | start | period | SMSE | / SE's | SNLP")
    for seed in seeds:
        rng = np.random.default_rng(seed)
        x = np.sort(rng.uniform(0, 4 * PERIOD, size=80))
        y = f(x) + 0.1 * rng.normal(size=80)
        xt = np.linspace(4 * PERIOD, 6 * PERIOD, 200)
        yt = f(xt) + 0.1 * rng.normal(size=200)
        X = x[:, None]
        models = {
            "periodogram": ExactGPRegressor(Periodic.from_data(X, y)),
            "period 1, 4 restarts": ExactGPRegressor(
                Periodic(period=1.0, lengthscale=1.0), n_restarts=4, random_state=0
            ),
            "SE-ARD": ExactGPRegressor(),
        }
        scores = {}
        for name, model in models.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model.fit(X, y)
            mean, std = model.predict(xt[:, None], return_std=True)
            scores[name] = (smse(f(xt), mean), snlp(yt, mean, std**2, y))
        for name, (e, s) in scores.items():
            period = f"{float(models[name].kernel_.period):.4f}" if name != "SE-ARD" else "-"
            print(f"{seed} | {name} | {period} | {e:.5f} | {e / scores['SE-ARD'][0]:.4f} | {s:.3f}")


if __name__ == "__main__":
    main()
