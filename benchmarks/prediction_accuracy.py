"""Augmented and Nyström predictions against a 40-digit evaluation of the same formulas.

    python -m benchmarks prediction_accuracy        # markdown table, about 2 minutes

Two problems with a fixed squared-exponential kernel (variance 1), the support set the first m rows
(tests/mp_reference.py, shared with tests/test_augmented.py):
  "well conditioned": D = 2, n = 120, m = 10, x ~ U(-3, 3)^2, length-scale 3.4, cond(K_mm) = 2.6e4;
  "ill conditioned":  D = 1, n = 200, m = 15, x ~ U(-1, 1), length-scale 0.215, cond(K_mm) = 1.4e11;
y = sin(3 x1) (+ x2^2 / 2), noise variance 1e-1 ... 1e-6, 16 test points (12 random, 2 training rows,
2 inducing inputs). The reference (tests/mp_reference.py) takes the float64 inputs as exact and works
at 40 digits through an independent route (Woodbury on the support set, kernel values in mpmath); its
own error is estimated against 60 digits. Errors are normwise relative, ||x - ref|| / ||ref||, over the
test points. "dense float64" solves the n x n system C of the same definition with numpy.linalg.solve.
"""

from __future__ import annotations

import sys

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)

from tests.mp_reference import PROBLEMS, problem  # noqa: E402
from tests.mp_reference import predictions as reference  # noqa: E402

from sparsegp.approximations.augmented import full_data_predict, training_cache  # noqa: E402
from sparsegp.approximations.common import sparse_predict  # noqa: E402
from sparsegp.approximations.dtc import dtc_posterior  # noqa: E402
from sparsegp.kernels import SquaredExponential  # noqa: E402

JITTER = 1e-10
NOISES = (1e-1, 1e-4, 1e-5, 1e-6)


def ours(kernel, X, y, Z, Xs, noise, method):
    X, y, Z, Xs = map(jnp.asarray, (X, y, Z, Xs))
    post = dtc_posterior(kernel, Z, noise, X, y, chunk=64, jitter=JITTER)
    if method == "standard":
        return map(np.asarray, sparse_predict(kernel, post, Xs))
    cache = training_cache(kernel, post, noise, X, y, 64)
    return map(np.asarray, full_data_predict(kernel, post, noise, cache, Xs, method=method))


def dense(kernel, X, y, Z, Xs, noise, method):
    """The definitions with an n x n float64 solve (K_mm^-1 applied by a Cholesky solve)."""
    Kmm = np.asarray(kernel.K(Z))
    Kmm = Kmm + JITTER * np.mean(np.diag(Kmm)) * np.eye(len(Z))
    Knm = np.asarray(kernel.K(X, Z))
    C = Knm @ np.linalg.solve(Kmm, Knm.T) + noise * np.eye(len(X))
    means, variances = [], []
    for xs in Xs:
        ks = np.asarray(kernel.K(X, xs[None]))[:, 0]
        kz = np.asarray(kernel.K(Z, xs[None]))[:, 0]
        kss = float(kernel.diag(xs[None])[0])
        G = C
        if method == "augmented":
            v = ks - Knm @ np.linalg.solve(Kmm, kz)
            G = C + np.outer(v, v) / (kss - kz @ np.linalg.solve(Kmm, kz))
        elif method == "standard":
            ks = Knm @ np.linalg.solve(Kmm, kz)
        means.append(ks @ np.linalg.solve(G, y))
        variances.append(kss - ks @ np.linalg.solve(G, ks))
    return np.array(means), np.array(variances)


def rel(a, ref):
    return float(np.linalg.norm(a - ref) / np.linalg.norm(ref))


def main():
    lines = [
        "| problem | sigma^2 | method | mean: ours | variance: ours | variance: ours, worst point | mean: dense float64 "
        "| variance: dense float64 | smallest reference variance | reference 40 vs 60 digits |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    worst = 0.0
    for name, (D, n, m, ell) in PROBLEMS.items():
        X, y, Z, Xs = problem(D, n, m)
        kernel = SquaredExponential([ell] * D, 1.0)
        print(f"{name}: cond(K_mm) = {np.linalg.cond(np.asarray(kernel.K(jnp.asarray(Z)))):.2g}", file=sys.stderr)
        for noise in NOISES:
            for method in ("standard", "augmented", "nystrom"):
                rm, rv = reference(X, Z, Xs, y, [ell] * D, 1.0, noise, JITTER, method)
                hm, hv = reference(X, Z, Xs, y, [ell] * D, 1.0, noise, JITTER, method, dps=60)
                om, ov = ours(kernel, X, y, Z, Xs, noise, method)
                dm, dv = dense(kernel, X, y, Z, Xs, noise, method)
                if method != "standard":
                    worst = max(worst, rel(om, rm), rel(ov, rv))
                lines.append(
                    f"| {name} | {noise:g} | {method} | {rel(om, rm):.1e} | {rel(ov, rv):.1e} | {np.max(np.abs(ov - rv) / np.abs(rv)):.1e} "
                    f"| {rel(dm, rm):.1e} "
                    f"| {rel(dv, rv):.1e} | {rv.min():.2e} | {max(rel(rm, hm), rel(rv, hv)):.0e} |"
                )
                print(lines[-1], file=sys.stderr)
    print("\n".join(lines))
    print(f"\nLargest error of the augmented and Nyström predictions: {worst:.1e}")


if __name__ == "__main__":
    main()
