"""Several targets with a noise each (``noise`` of shape (k,)) against one noise for all.

    python -m benchmarks noise_per_target [n] [m] [repeats]

1. One evaluation of VFE's bound and its gradient (the jitted JAX program a fit in memory runs on a CPU) at n rows
   (default 20,000) of 4 inputs and m inducing inputs (default 256), three targets: one shared noise against
   one per target (which evaluates each target's sums in turn), the best of ``repeats`` (default 5) after a
   warm-up call.
2. Quality: three targets of 2 inputs whose noise sd is 0.02, 0.2 and 0.6 (thirtyfold), 2,000 training rows and
   10,000 test rows; the default ``SparseGPRegressor`` with one noise and with a noise per target: the learnt
   noise variances in the targets' units, each target's test SNLP (mean negative log predictive density less
   that of a Gaussian at the training targets' mean and variance) and 2-sd coverage, the fit's seconds.
"""

from __future__ import annotations

import time
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from benchmarks.harness import best_of, int_arguments
from sparsegp import SparseGPRegressor
from sparsegp.approximations.vfe import vfe_bound
from sparsegp.backends.jax_sums import chunk_size_for
from sparsegp.kernels import SquaredExponential
from sparsegp.transforms import to_positive, to_raw

SD = np.array([0.02, 0.2, 0.6])


def evaluations(n, m, repeats):
    r = np.random.default_rng(0)
    X = r.uniform(size=(n, 4))
    Y = np.column_stack([np.sin(6 * X[:, 0]) + X[:, 1], np.cos(4 * X[:, 1]) * X[:, 2], X[:, 3] ** 2])
    Y = Y + 0.1 * r.normal(size=Y.shape)
    chunk = chunk_size_for(n, m)
    Xj, Yj = jnp.asarray(X), jnp.asarray(Y)
    times = {}
    for name, noise in (("one noise", 0.01), ("a noise per target", np.full(3, 0.01))):
        params = {
            "kernel": SquaredExponential([0.3] * 4, 1.0),
            "raw_noise": jnp.asarray(to_raw(noise)),
            "Z": jnp.asarray(X[:m] + 1e-3),
        }

        def negative(p):
            return -vfe_bound(p["kernel"], p["Z"], to_positive(p["raw_noise"]), Xj, Yj, chunk=chunk)

        program = jax.jit(jax.value_and_grad(negative))
        times[name] = best_of(lambda program=program, params=params: jax.block_until_ready(program(params)), repeats)[0]
    base = times["one noise"]
    for name, t in times.items():
        print(f"evaluation, three targets, n {n}, m {m} | {name} | {t:.3f} s ({t / base:.2f}x)", flush=True)


def problem(n, seed):
    r = np.random.default_rng(seed)
    X = r.uniform(-3, 3, size=(n, 2))
    F = np.column_stack([np.sin(X[:, 0]), np.cos(X[:, 1]), np.sin(X[:, 0] + X[:, 1])])
    return X, F + SD * r.normal(size=F.shape)


def quality():
    X, Y = problem(2000, 1)
    Xs, Ys = problem(10_000, 2)
    trivial = 0.5 * np.log(2 * np.pi * Y.var(axis=0)) + 0.5 * (Ys - Y.mean(axis=0)) ** 2 / Y.var(axis=0)
    for name, noise in (("one noise", 1.0), ("a noise per target", np.ones(3))):
        t = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = SparseGPRegressor(noise=noise, random_state=0).fit(X, Y)
        seconds = time.perf_counter() - t
        mean, std = model.predict(Xs, return_std=True)
        nlpd = 0.5 * np.log(2 * np.pi * std**2) + 0.5 * ((Ys - mean) / std) ** 2
        snlp = np.mean(nlpd - trivial, axis=0)
        coverage = np.mean(np.abs(Ys - mean) <= 2 * std, axis=0)
        learnt = np.atleast_1d(model.noise_) * model.y_std_**2
        warned = sorted({w.category.__name__ for w in caught})
        print(
            f"fit | {name} | m {model.Z_.shape[0]} | {seconds:.1f} s | noise {np.array2string(learnt, precision=5)} "
            f"(true {np.array2string(SD**2, precision=5)}) | SNLP {np.array2string(snlp, precision=3)} | "
            f"coverage {np.array2string(coverage, precision=3)} | warnings {warned}",
            flush=True,
        )


def main():
    n, m, repeats = int_arguments(20_000, 256, 5)
    evaluations(n, m, repeats)
    quality()


if __name__ == "__main__":
    main()
