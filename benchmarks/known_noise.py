"""Known per-row noise: a fit told each row's noise variance against the homoscedastic fit.

    python -m benchmarks known_noise [n_train] [seeds]

Per seed: inputs uniform on [0, 1]^2, f(x) = sin(6 x_1) + cos(4 x_2); the noise sd is 0.05 where x_1 < 0.5 (the
quiet region) and 0.5 elsewhere (the noisy region), tenfold. ``n_train`` rows (default 2,000) and 2,500 test rows in
each region. Two default ``SparseGPRegressor()`` fits: one given the true variances (``noise_variance=``, its test
predictions given the test rows' own), one homoscedastic. Reported: test SNLP (against N(mean, var) of the training
targets, scaled as in :func:`sparsegp.metrics.snlp`) and the 2-sd coverage of the noisy test targets in each region.
"""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np

from sparsegp import SparseGPRegressor
from sparsegp.metrics import snlp

TEST_PER_REGION = 2500


def draw(rng, n, quiet=None):
    X = rng.uniform(size=(n, 2))
    if quiet is not None:  # half the rows in each region
        X[:, 0] = np.where(np.arange(n) < n // 2, 0.5 * X[:, 0], 0.5 + 0.5 * X[:, 0])
    sd = np.where(X[:, 0] < 0.5, 0.05, 0.5)
    y = np.sin(6 * X[:, 0]) + np.cos(4 * X[:, 1]) + sd * rng.normal(size=n)
    return X, y, sd**2


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    seeds = range(int(sys.argv[2]) if len(sys.argv) > 2 else 3)
    print("seed | fit | m | seconds | SNLP | coverage quiet | coverage noisy")
    for seed in seeds:
        rng = np.random.default_rng(seed)
        X, y, v = draw(rng, n)
        Xt, yt, vt = draw(rng, 2 * TEST_PER_REGION, quiet=True)
        quiet = Xt[:, 0] < 0.5
        for name, known in (("known variances", True), ("homoscedastic", False)):
            model = SparseGPRegressor(random_state=seed)
            t = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model.fit(X, y, noise_variance=v) if known else model.fit(X, y)
            seconds = time.perf_counter() - t
            mean, std = model.predict(Xt, return_std=True, noise_variance=vt if known else None)
            inside = np.abs(yt - mean) <= 2 * std
            score = snlp(yt, mean, std**2, y)
            print(
                f"{seed} | {name} | {model.Z_.shape[0]} | {seconds:.1f} | {score:.3f} | "
                f"{inside[quiet].mean():.4f} | {inside[~quiet].mean():.4f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
