"""One value and gradient of the classifier's bound with each chunk recomputed in the backward pass
(``jax.checkpoint``) or stored: the 13 x 13 MNIST task 9 rows (59,000 rows, 169 inputs), probit, random rows as Z.

    python -m benchmarks classification_remat {recompute,store} [m ...]     (default m: 128 256)

One mode per process (the peak RSS printed is the process's): the median of three calls after one that compiles,
at the default chunk size and at four times it. ``store`` replaces ``jax.checkpoint`` by the identity in this
process, so the scan keeps every chunk's residuals for the backward pass.
"""

from __future__ import annotations

import resource
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

from benchmarks.classification_suite import splits
from sparsegp.backends.jax_sums import chunk_size_for
from sparsegp.classification import svgp
from sparsegp.kernels import SquaredExponential
from sparsegp.likelihoods import Bernoulli


def main():
    mode, sizes = sys.argv[1], [int(a) for a in sys.argv[2:]] or [128, 256]
    if mode == "store":
        jax.checkpoint = lambda f, **_: f
    X, y, _, _ = splits("mnist13_9", 1)[0]
    n, D = X.shape
    args = (jnp.asarray(X), jnp.asarray(y.astype(np.int32)), jnp.ones(n))
    for m in sizes:
        Z = X[np.random.default_rng(0).choice(n, m, replace=False)]
        params = {
            "kernel": SquaredExponential(np.full(D, 3.0), 1.0),
            "Z": jnp.asarray(Z),
            "q_mu": jnp.zeros((m, 1)),
            "q_sqrt": jnp.asarray(0.5 * np.eye(m)[None]),
            "mean": jnp.zeros(1),
            "likelihood": Bernoulli(),
        }
        for chunk in (chunk_size_for(n, m), 4 * chunk_size_for(n, m)):
            f = jax.jit(jax.value_and_grad(svgp.NegativeBound(chunk)))
            jax.block_until_ready(f(params, *args))
            times = []
            for _ in range(3):
                t = time.perf_counter()
                jax.block_until_ready(f(params, *args))
                times.append(time.perf_counter() - t)
            print(f"m = {m}, chunk {chunk}, {mode}: {np.median(times):.3f} s", flush=True)
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20:.2f} GB")


if __name__ == "__main__":
    main()
