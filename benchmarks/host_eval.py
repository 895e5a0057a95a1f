"""Seconds per exact-GP objective + gradient: the host path (NumPy and LAPACK) with OpenBLAS on one thread and on
its default threads, against the JAX program, by rows and inputs.

    python -m benchmarks host_eval [--sizes 300x4 512x8 1000x4 2000x4] [--repeats 10]

SE-ARD at unit hyper-parameters, noise 0.1, standard normal inputs and targets; each figure the mean of
``--repeats`` calls after a first (the JAX program's first call, compilation included, is printed beside it,
with the persistent compilation cache as the environment sets it).
"""

from __future__ import annotations

import argparse
import time


def _mean_seconds(fn, repeats: int) -> float:
    fn()
    t = time.perf_counter()
    for _ in range(repeats):
        fn()
    return (time.perf_counter() - t) / repeats


def _row(size: str, repeats: int, r) -> str:
    """One size's figures, ``size`` as "ROWSxINPUTS"."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    from sparsegp.approximations.exact_host import HostExactNegative
    from sparsegp.fitting.negatives import ExactNegative
    from sparsegp.kernels import SquaredExponential
    from sparsegp.linalg import single_threaded_blas
    from sparsegp.transforms import to_raw

    n, d = (int(v) for v in size.split("x"))
    X, y = r.normal(size=(n, d)), r.normal(size=n)
    params = {"kernel": SquaredExponential(np.ones(d), 1.0), "raw_noise": jnp.asarray(to_raw(0.1))}
    host = HostExactNegative(X, y)
    values = [np.asarray(v, dtype=np.float64) for v in host._naturals(params)]

    def one_thread():
        with single_threaded_blas():
            host._host(*values)

    negative = ExactNegative(None)
    program = jax.jit(jax.value_and_grad(lambda p: negative(p, jnp.asarray(X), jnp.asarray(y))))
    t = time.perf_counter()
    jax.block_until_ready(program(params))
    first = time.perf_counter() - t
    compiled = _mean_seconds(lambda: jax.block_until_ready(program(params)), repeats)
    single = _mean_seconds(one_thread, repeats)
    default = _mean_seconds(lambda: host._host(*values), repeats)
    return f"{size:>14s} {single:15.4f} {default:14.4f} {compiled:9.4f} {first:10.2f}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", default=["300x4", "512x4", "512x8", "700x4", "1000x4", "2000x4"])
    parser.add_argument("--repeats", type=int, default=10)
    opts = parser.parse_args(argv)
    import numpy as np

    r = np.random.default_rng(0)
    print(f"{'rows x inputs':>14s} {'host, 1 thread':>15s} {'host, default':>14s} {'JAX':>9s} {'JAX first':>10s}")
    for size in opts.sizes:
        print(_row(size, opts.repeats, r))


if __name__ == "__main__":
    main()
