"""Programs compiled by a process's first small fit, counted by JAX's own compile events.

    python -m benchmarks first_fit_compile [--test-flags]

One ``SparseGPRegressor(inducing=10, schedule=Joint(max_iter=20))`` fit of 40 x 2 data and a prediction, in a fresh process:
its wall time, the XLA compile and lowering time, the number of programs and the most expensive ones.
``--test-flags`` compiles with the test suite's XLA flags (tests/conftest.py).
"""

from __future__ import annotations

import collections
import os
import sys
import time
import warnings

TEST_FLAGS = (
    "--xla_backend_optimization_level=0 --xla_cpu_use_fusion_emitters=false --xla_llvm_disable_expensive_passes=true "
    "--xla_cpu_enable_concurrency_optimized_scheduler=false"
)


def main():
    if "--test-flags" in sys.argv:
        os.environ["XLA_FLAGS"] = TEST_FLAGS
    import jax.monitoring
    import numpy as np

    seconds, count = collections.Counter(), collections.Counter()

    def listen(event, duration, **kwargs):
        if event.endswith(("backend_compile_duration", "jaxpr_to_mlir_module_duration")):
            seconds[kwargs.get("fun_name")] += duration
            count[kwargs.get("fun_name")] += event.endswith("backend_compile_duration")

    jax.monitoring.register_event_duration_secs_listener(listen)
    from sparsegp import SparseGPRegressor
    from sparsegp.options import Joint

    r = np.random.default_rng(0)
    X = r.normal(size=(40, 2))
    y = np.sin(2 * X[:, 0]) + 0.1 * r.normal(size=40)
    warnings.simplefilter("ignore")
    t = time.perf_counter()
    SparseGPRegressor(inducing=10, schedule=Joint(max_iter=20)).fit(X, y).predict(X[:5], return_std=True)
    wall = time.perf_counter() - t
    print(
        f"first fit and prediction {wall:.2f} s; compiling {sum(seconds.values()):.2f} s; {sum(count.values())} programs"
    )
    for name, s in seconds.most_common(12):
        print(f"{s:6.2f} s  {count[name]:3d}  {name}")


if __name__ == "__main__":
    main()
