"""Time of one evaluation of the classifier's bound on MNIST's 60,000 training rows (784 inputs, 10 classes).

    python -m benchmarks classification_bound_cost [m ...]     (default: 32 128 256)

For each m (random rows as inducing inputs, the SE-ARD start, q(v) = N(0, I / 4)), the robust-max and the
Gaussian likelihood: the bound's value and gradient (what one L-BFGS evaluation costs) and the site sums of a
natural step, each the median of three calls after one that compiles, at the default chunk size.
"""

from __future__ import annotations

import sys
import time
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from sparsegp import datasets
from sparsegp.backends.jax_sums import chunk_size_for
from sparsegp.classification import svgp
from sparsegp.kernels import SquaredExponential
from sparsegp.likelihoods import Gaussian, RobustMax


def seconds(f, *args, repeats: int = 3):
    """The median time of ``repeats`` calls after a first one that compiles."""
    jax.block_until_ready(f(*args))
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        jax.block_until_ready(f(*args))
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def main():
    sizes = [int(a) for a in sys.argv[1:]] or [32, 128, 256]
    X, y, _, _ = datasets.load("mnist")
    X = X / 255.0
    n, D = X.shape
    Xs = jnp.asarray(X / np.sqrt(np.mean(np.var(X, axis=0))))
    w = jnp.ones(n)
    rng = np.random.default_rng(0)
    for M in sizes:
        for lik, labels in ((RobustMax(), jnp.asarray(y.astype(np.int32))), (Gaussian(1.0), jnp.asarray(y, float))):
            params = {
                "kernel": SquaredExponential(lengthscale=np.full(D, np.sqrt(D)), variance=1.0),
                "Z": Xs[np.sort(rng.choice(n, M, replace=False))],
                "q_mu": jnp.zeros((M, 10)),
                "q_sqrt": 0.5 * jnp.broadcast_to(jnp.eye(M), (10, M, M)),
                "mean": jnp.zeros(10),
                "likelihood": lik,
            }
            chunk = chunk_size_for(n, M * 10, None)
            value_and_grad = jax.jit(jax.value_and_grad(svgp.NegativeBound(chunk)))
            t_vg = seconds(value_and_grad, params, Xs, labels, w)
            post = svgp.posterior_of(params)
            t_ss = seconds(partial(svgp.site_sums, likelihood=lik, X=Xs, y=labels, w=w, chunk=chunk), post)
            print(f"m = {M:4d}  {type(lik).__name__:9s}  chunk {chunk:5d}  value and gradient {t_vg:6.2f} s  "
                  f"site sums {t_ss:6.2f} s", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
