"""Seeger et al. (2003) Table 2's random re-selection at d = 500 on pumadyn-32nm: where and why a run stops.

Usage: .venv/bin/python -m benchmarks seeger_reselect [--runs 2] [--d 500]

Each run is Table 2's (the same n_MS = 2,048 rows, start, hyper-priors and 200-iteration cap as
`sparsegp reproduce seeger2003 --full`); printed: the optimiser's stop reason, its iterations, the last
criterion values, the noise, the average squared test error and the seconds.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=2)
    p.add_argument("--d", type=int, default=500)
    a = p.parse_args(argv)

    from sparsegp.estimators import SparseGPRegressor
    from sparsegp.experiments.protocols import seeger_model
    from sparsegp.experiments.seeger2003 import avg_sq_error
    from sparsegp.experiments.seeger2003_pumadyn import INIT_LENGTHSCALE, _data
    from sparsegp.options import Interleaved, Noise
    from sparsegp.selection import Random

    X, y, Xt, yt = _data()
    D = X.shape[1]
    for r in range(a.runs):
        rows = np.random.default_rng(100 + r).permutation(len(X))[:2048]  # Table 2's run r
        kernel, noise_prior = seeger_model(D, np.full(D, INIT_LENGTHSCALE))
        t0 = time.perf_counter()
        model = SparseGPRegressor(
            kernel,
            approximation="dtc",
            inducing=Random(a.d),
            noise=Noise(0.1, prior=noise_prior),
            optimize="hyperparameters",
            normalize_y=False,
            random_state=r,
            schedule=Interleaved(max_iter=200),
        ).fit(X[rows], y[rows])
        rep = model.optimizer_report_
        print(
            f"run {r}: {rep.reason}; {rep.n_iter} iterations; last criterion "
            f"{', '.join(f'{v:.2f}' for v in rep.history[-3:])}; noise {model.noise_:.3f}; "
            f"error {avg_sq_error(model, Xt, yt):.4f}; {time.perf_counter() - t0:.0f} s"
        )


if __name__ == "__main__":
    main()
