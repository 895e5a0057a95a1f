"""How heavy-tailed the default exact GP's leave-one-out errors are on shipped regression datasets.

    python -m benchmarks loo_tails yacht housing energy concrete airfoil

Per dataset (default split): ``ExactGPRegressor()``; the share of training rows whose leave-one-out z =
(y - mean) / sd lies beyond 3 and 4 (honest Gaussian error bars: 0.27 % and 0.006 %), the largest |z| and
mean z^2; on the test rows the share beyond 3, the largest |z|, the worst row's log density, the 2-sd
coverage and the SNLP; and whether the fit's CalibrationWarning calls the error bars heavy-tailed (more than
4 % of the rows beyond 3 sd).
"""

from __future__ import annotations

import sys
import warnings

import numpy as np

from sparsegp import CalibrationWarning, ExactGPRegressor
from sparsegp.datasets import load
from sparsegp.metrics import snlp


def main():
    for name in sys.argv[1:]:
        X, y, Xt, yt = load(name)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            m = ExactGPRegressor().fit(X, y)
        heavy = any(w.category is CalibrationWarning and "heavy-tailed" in str(w.message) for w in caught)
        mean, var = (np.asarray(a) for a in m._loo_batch(X, y)[:2])
        z = ((y - m.y_mean_) / m.y_std_ - mean) / np.sqrt(var)
        mu, sd = m.predict(Xt, return_std=True)
        zt = (yt - mu) / sd
        worst = np.min(-0.5 * np.log(2 * np.pi * sd**2) - 0.5 * zt**2)
        print(
            f"| {name} | {len(y)} | {np.mean(abs(z) > 3):.1%} | {np.mean(abs(z) > 4):.1%} | {abs(z).max():.1f} | "
            f"{np.mean(z * z):.2f} | {np.mean(abs(zt) > 3):.1%} | {abs(zt).max():.1f} | {worst:.1f} | "
            f"{np.mean(abs(zt) <= 2):.2f} | {snlp(yt, mu, sd**2, y):+.3f} | {'yes' if heavy else 'no'} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
