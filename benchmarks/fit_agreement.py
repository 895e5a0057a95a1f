"""How far two correct fits of the same data drift apart: Dask against in memory, and in memory against itself.

Data and model as in tests/test_dask.py: n = 230, D = 3, m = 10 free inducing inputs, random_state 3,
L-BFGS capped at --max-iter iterations (default 15). For each approximation the relative differences of
objective, noise, predictive mean and sd on 50 test rows between

- "dask": the fit on a 2-worker LocalCluster (60-row partitions) and the in-memory fit;
- "chunk 58": two in-memory fits, one with 58-row chunks, the other with the default (one chunk);
- "y + 1 ulp": two in-memory fits, one with y multiplied by (1 + 2^-52).

The last two change nothing but rounding, so they measure how much the optimiser amplifies last-bit
differences along its path: the floor under any agreement between two routes of summation.

    python -m benchmarks fit_agreement [--max-iter 15]
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np


def problem(n=230, D=3, seed=0):
    r = np.random.default_rng(seed)
    X = r.normal(size=(n, D))
    y = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] + 0.1 * r.normal(size=n)
    return X, y


def relative(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


def differences(a, b, Xt):
    ma, sa = a.predict(Xt, return_std=True)
    mb, sb = b.predict(Xt, return_std=True)
    return [relative(a.objective_, b.objective_), relative(a.noise_, b.noise_), relative(ma, mb), relative(sa, sb)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-iter", type=int, default=15)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    import dask.array as da

    from benchmarks.scale_dask import local_cluster
    from sparsegp import SparseGPRegressor
    from sparsegp.options import Joint

    X, y = problem()
    Xt = problem(50, seed=1)[0]
    cluster, client = local_cluster()
    print(f"max_iter = {args.max_iter}; relative differences (objective, noise, predictive mean, predictive sd)")
    print("| approximation | against | objective | noise | mean | sd |")
    print("|---|---|---|---|---|---|")
    try:
        for approximation in ["vfe", "dtc", "sor", "fitc"]:
            common = dict(approximation=approximation, inducing=10, random_state=3)
            joint = Joint(max_iter=args.max_iter)
            base = SparseGPRegressor(**common, schedule=joint).fit(X, y)
            rows = {
                "dask": SparseGPRegressor(**common, schedule=joint).fit(
                    da.from_array(X, chunks=(60, 3)), da.from_array(y, chunks=60)
                ),
                "chunk 58": SparseGPRegressor(**common, schedule=joint.replace(chunk_size=58)).fit(X, y),
                "y + 1 ulp": SparseGPRegressor(**common, schedule=joint).fit(X, y * (1 + 2.0**-52)),
            }
            for name, other in rows.items():
                cells = " | ".join(f"{v:.1e}" for v in differences(other, base, Xt))
                print(f"| {approximation.upper()} | {name} | {cells} |", flush=True)
    finally:
        client.close()
        cluster.close()


if __name__ == "__main__":
    main()
