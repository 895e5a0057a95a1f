"""Seconds per VFE bound + gradient (the JAX program) on the current JAX backend, by rows per chunk.

    python -m benchmarks eval_time --n 1000000 --m 256 --chunk 0 32768 131072

Data as in ``scale_dask.py`` (protocol SCALE); ``--chunk 0`` is the library's default. Best of 3 after
one compiling call.
"""

from __future__ import annotations

import argparse
import time

from benchmarks.scale_dask import in_memory, params_for  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=1_000_000)
    p.add_argument("--m", type=int, default=256)
    p.add_argument("--chunk", type=int, nargs="+", default=[0])
    a = p.parse_args()
    import jax
    import jax.numpy as jnp

    from sparsegp.approximations.vfe import vfe_bound
    from sparsegp.backends.jax_sums import chunk_size_for
    from sparsegp.transforms import to_positive

    X, y = (jnp.asarray(v) for v in in_memory(a.n, 1_000_000))
    params = params_for(a.m)
    print(f"backend {jax.default_backend()} ({jax.devices()[0].device_kind}), n = {a.n:,}, m = {a.m}")
    for c in a.chunk:
        chunk = chunk_size_for(a.n, a.m, c or None)
        f = jax.jit(
            jax.value_and_grad(
                lambda p, X, y, chunk=chunk: (
                    -vfe_bound(p["kernel"], p["Z"], to_positive(p["raw_noise"]), X, y, chunk=chunk, jitter=1e-8)
                )
            )
        )
        jax.block_until_ready(f(params, X, y))
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            jax.block_until_ready(f(params, X, y))
            times.append(time.perf_counter() - t0)
        print(f"chunk {chunk:>8,} rows: {min(times):.4f} s per bound + gradient")


if __name__ == "__main__":
    main()
