"""What the leave-one-out check adds to fits of new data shapes (compilation included).

    python -m benchmarks loo_cost on     # the library as it is
    python -m benchmarks loo_cost off    # the check replaced by a constant (for this measurement only)

Fits SparseGPRegressor (VFE, FITC) and ExactGPRegressor, 20 iterations each, on six small data shapes in
one fresh process and prints the total seconds. Run each mode in its own process.
"""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np


def main(mode: str) -> None:
    warnings.simplefilter("ignore")
    import sparsegp.estimators.exact_regressor as exact
    import sparsegp.fitting.pipeline as pipeline
    from sparsegp import ExactGPRegressor, SparseGPRegressor
    from sparsegp.fitting.calibration import LOOCheck
    from sparsegp.options import Joint

    if mode == "off":
        constant = LOOCheck(0.0, 1.0, np.zeros(5), 1, 0.0, 1.0)
        pipeline.loo_check = exact.loo_check = lambda *args, **kwargs: constant
    r = np.random.default_rng(0)
    t0 = time.perf_counter()
    for n, D, m in [(40, 2, 8), (60, 3, 10), (90, 2, 12), (30, 4, 6), (120, 3, 15), (50, 5, 7)]:
        X = r.normal(size=(n, D))
        y = np.sin(X[:, 0]) + 0.1 * r.normal(size=n)
        for approximation in ("vfe", "fitc"):
            SparseGPRegressor(approximation=approximation, inducing=m, random_state=0, schedule=Joint(max_iter=20)).fit(
                X, y
            )
        ExactGPRegressor(max_iter=20).fit(X, y)
    print(f"{mode}: 18 fits in {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "on")
