"""Repeated fits of one model in one process: how much of a small fit is XLA compilation.

Three fits of SparseGPRegressor(inducing=20, schedule=Joint(max_iter=30)) on the same 300 x 3 data (seeds 0, 1, 2),
each configuration in a fresh process: without JAX's persistent compilation cache, with an empty
cache directory, and with that directory warm from the previous run.

    python -m benchmarks refit_compile
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

CHILD = """
import time, warnings
import numpy as np
warnings.simplefilter("ignore")
from sparsegp import SparseGPRegressor
from sparsegp.options import Joint
r = np.random.default_rng(0)
X = r.normal(size=(300, 3))
y = np.sin(X[:, 0]) + 0.1 * r.normal(size=300)
times = []
for seed in range(3):
    t = time.perf_counter()
    SparseGPRegressor(inducing=20, random_state=seed, schedule=Joint(max_iter=30)).fit(X, y)
    times.append(time.perf_counter() - t)
print(" / ".join(f"{t:.2f}" for t in times))
"""


def run(env_extra):
    env = dict(os.environ, **env_extra)
    out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def main():
    with tempfile.TemporaryDirectory() as cache:
        cached = {
            "JAX_COMPILATION_CACHE_DIR": cache,
            "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
            "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0",
        }
        print("| configuration | fit 1 / 2 / 3 (s) |")
        print("|---|---|")
        print(f"| no persistent cache | {run({'JAX_COMPILATION_CACHE_DIR': ''})} |", flush=True)
        print(f"| empty cache directory | {run(cached)} |", flush=True)
        print(f"| the same directory, warm | {run(cached)} |", flush=True)


if __name__ == "__main__":
    main()
