"""Peak memory of one VFE bound evaluation (and one bound + gradient) at n = 10^6, D = 8, m = 256.

Protocol SCALE: y = sin(3 x1) + x2^2 / 2 + noise, x ~ N(0, I_8). Each evaluation
runs in a fresh process and reports its own max RSS (getrusage), which includes
the Python interpreter, JAX and the 64 MB of training inputs.

    python -m benchmarks scale_memory [--n 1000000] [--m 256]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import time

from benchmarks.harness import ROOT, module_command


def child(n, m, grad):
    import jax
    import jax.numpy as jnp
    import numpy as np

    from sparsegp.approximations.vfe import vfe_bound
    from sparsegp.backends.jax_sums import chunk_size_for
    from sparsegp.kernels import SquaredExponential

    r = np.random.default_rng(0)
    X = r.standard_normal((n, 8))
    y = np.sin(3 * X[:, 0]) + X[:, 1] ** 2 / 2 + 0.1 * r.standard_normal(n)
    Z = X[r.choice(n, m, replace=False)]
    X, y, Z = jnp.asarray(X), jnp.asarray(y), jnp.asarray(Z)
    k = SquaredExponential(np.ones(8), 1.0)
    chunk = chunk_size_for(n, m)
    f = lambda k, Z, X, y: vfe_bound(k, Z, 0.1, X, y, chunk=chunk)  # noqa: E731
    fn = jax.jit(jax.value_and_grad(f, argnums=(0, 1)) if grad else f)
    jax.block_until_ready(fn(k, Z, X, y))
    t0 = time.perf_counter()
    out = jax.block_until_ready(fn(k, Z, X, y))
    secs = time.perf_counter() - t0
    value = float(out[0] if grad else out)
    return {
        "n": n,
        "m": m,
        "chunk": chunk,
        "gradient": grad,
        "bound": value,
        "seconds": round(secs, 3),
        "peak_rss_MiB": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=1_000_000)
    p.add_argument("--m", type=int, default=256)
    p.add_argument("--child", choices=["value", "grad"])
    a = p.parse_args()
    if a.child:
        print(json.dumps(child(a.n, a.m, a.child == "grad")))
        return
    rows = []
    for mode in ("value", "grad"):
        out = subprocess.run(
            [*module_command("scale_memory"), "--n", str(a.n), "--m", str(a.m), "--child", mode],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        rows.append(json.loads(out.strip().splitlines()[-1]))
    from benchmarks.harness import format_table

    print("# SCALE: one VFE evaluation, fresh process each")
    print(format_table(rows, ["n", "m", "chunk", "gradient", "bound", "seconds", "peak_rss_MiB"]))


if __name__ == "__main__":
    main()
