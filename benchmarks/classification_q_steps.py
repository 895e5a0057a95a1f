"""q(v) alone, the kernel and Z held: natural-gradient steps against L-BFGS, on MNIST rows (robust-max, 10 classes).

    python -m benchmarks classification_q_steps [--n 10000] [--m 64] [--max-iter 300]

The classifier's start (SE-ARD at its default length-scales, Z by its start rule, q = the prior, b = 0); then (a) natural steps of size 1, each kept only where it raises the bound (halved otherwise), 30
passes over the rows; (b) L-BFGS-B over q_mu, q_sqrt and b (the former q-first stage). Prints the bound
after each natural step and every 20 L-BFGS iterations, with the seconds since each began.
"""

from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np

from benchmarks.harness import mnist_start
from sparsegp.classification import svgp
from sparsegp.fitting.training import minimize
from sparsegp.fitting.variational import _select
from sparsegp.likelihoods import RobustMax


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--m", type=int, default=64)
    ap.add_argument("--max-iter", type=int, default=300)
    ap.add_argument("--chunk", type=int, default=2000)
    a = ap.parse_args()
    Xs, y, _, kernel, _ = mnist_start(a.n)
    lik = RobustMax()
    Z = _select(kernel, np.zeros((0, Xs.shape[1])), Xs, a.m, np.random.default_rng(0))
    q_mu, q_sqrt = svgp.whitened_prior(a.m, 10)
    start = {"kernel": kernel, "Z": jnp.asarray(Z), "q_mu": jnp.asarray(q_mu), "q_sqrt": jnp.asarray(q_sqrt)}
    start["mean"] = jnp.zeros(10)
    start["likelihood"] = lik
    args = (jnp.asarray(Xs), jnp.asarray(y), jnp.ones(a.n))

    def value(p, e):
        return float(e) - float(svgp.kl_whitened(p["q_mu"], p["q_sqrt"]))

    p, rho = dict(start), 1.0
    P, h, e = svgp.site_sums(svgp.posterior_of(p), lik, *args, a.chunk)
    best = value(p, e)
    t = time.perf_counter()
    for step in range(30):
        q_mu, q_sqrt = svgp.natural_update(p["q_mu"], p["q_sqrt"], P, h, rho)
        trial = dict(p, q_mu=q_mu, q_sqrt=q_sqrt)
        P_t, h_t, e_t = svgp.site_sums(svgp.posterior_of(trial), lik, *args, a.chunk)
        v = value(trial, e_t)
        if np.isfinite(v) and v > best:
            p, P, h, best, rho = trial, P_t, h_t, v, min(1.0, 2 * rho)
        else:
            rho *= 0.5
        print(f"natural step {step + 1}: bound {best:.1f}, step {rho:g}, {time.perf_counter() - t:.1f} s", flush=True)

    held = jax.tree_util.tree_map(lambda v: np.zeros(np.shape(v), bool), kernel)
    mask = {
        "kernel": held,
        "Z": np.zeros(Z.shape, bool),
        "q_mu": np.ones((a.m, 10), bool),
        "q_sqrt": svgp.lower_mask(a.m, 10),
        "mean": np.ones(10, bool),
        "likelihood": lik,
    }
    t = time.perf_counter()

    def report(i, v, _):
        if i % 20 == 0:
            print(f"L-BFGS iteration {i}: bound {-v:.1f}, {time.perf_counter() - t:.1f} s", flush=True)

    _, rep = minimize(svgp.NegativeBound(a.chunk), start, args=args, mask=mask, max_iter=a.max_iter, callback=report)
    print(f"L-BFGS end: {rep.n_iter} iterations, bound {-rep.objective:.1f}, {time.perf_counter() - t:.1f} s")


if __name__ == "__main__":
    main()
