"""Several targets with one kernel: the cost of a bound evaluation and of a fit, against one target's.

    python -m benchmarks several_targets [n] [m] [repeats]

Inputs: n rows (default 20,000) of 4 uniform columns; three targets (smooth functions of the inputs plus noise).
1. One evaluation of VFE's bound and its gradient (the jitted JAX program a fit in memory runs on a CPU, and the
   host sums FITC runs) at m inducing inputs (default 256), y of shape (n,) against (n, 3): the best of
   ``repeats`` (default 5) after a warm-up call.
2. A whole fit, ``SparseGPRegressor(inducing=m, random_state=0)`` (VFE, kernel, noise and inducing inputs
   learnt), on the first target against all three, twice in alternation: seconds, iterations and evaluations,
   seconds per iteration, and what the certificate's upper bound cost beyond the trace bound (one target gets
   log p(y) itself up to 20,000 rows; several targets keep the trace bound); and the default
   ``SparseGPRegressor()`` (m chosen by the fit) likewise.
"""

from __future__ import annotations

import time
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from benchmarks.harness import best_of, int_arguments
from sparsegp import SparseGPRegressor
from sparsegp.approximations.host_objective import HostObjective
from sparsegp.approximations.vfe import vfe_bound
from sparsegp.backends.jax_sums import chunk_size_for
from sparsegp.kernels import SquaredExponential
from sparsegp.transforms import to_positive, to_raw


def data(n, seed=0):
    r = np.random.default_rng(seed)
    X = r.uniform(size=(n, 4))
    Y = np.column_stack(
        [np.sin(6 * X[:, 0]) + X[:, 1], np.cos(4 * X[:, 1]) * X[:, 2], np.exp(-3 * (X[:, 3] - 0.5) ** 2)]
    )
    return X, Y + 0.1 * r.normal(size=Y.shape)


def evaluations(X, Y, m, repeats):
    Z = jnp.asarray(X[:m] + 1e-3)
    params = {"kernel": SquaredExponential([0.3] * 4, 1.0), "raw_noise": jnp.asarray(to_raw(0.01)), "Z": Z}
    chunk = chunk_size_for(X.shape[0], m)
    Xj = jnp.asarray(X)

    def negative(p, y):
        return -vfe_bound(p["kernel"], p["Z"], to_positive(p["raw_noise"]), Xj, y, chunk=chunk)

    program = jax.jit(jax.value_and_grad(negative))
    rows = {}
    for name, y in (("one target", Y[:, 0]), ("three targets", Y)):
        yj = jnp.asarray(y)
        t_jax = best_of(lambda yj=yj: jax.block_until_ready(program(params, yj)), repeats)[0]
        host = HostObjective("fitc", X, y, chunk=chunk, jitter=1e-8)
        t_host = best_of(lambda host=host: host(params), repeats)[0]
        rows[name] = (t_jax, t_host)
    for name, (t_jax, t_host) in rows.items():
        r_jax, r_host = t_jax / rows["one target"][0], t_host / rows["one target"][1]
        print(
            f"evaluation | {name} | VFE JAX program {t_jax:.3f} s ({r_jax:.2f}x) | FITC host {t_host:.3f} s ({r_host:.2f}x)"
        )


def fits(X, Y, m):
    for label, options in ((f"inducing={m}", {"inducing": m}), ("default", {})):
        base = None
        # twice, alternating, so a change in the machine's speed shows as a difference between the repeats
        order = (("one target", Y[:, 0]), ("three targets", Y)) * 2
        for name, y in order:
            model = SparseGPRegressor(random_state=0, **options)
            t = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model.fit(X, y)
            seconds = time.perf_counter() - t
            base = seconds if base is None else base
            print(
                f"fit {label} | {name} | {seconds:.1f} s ({seconds / base:.2f}x) | m {model.Z_.shape[0]} | "
                f"{model.n_iter_} iterations, {getattr(model.optimizer_report_, 'n_evals', 0)} evaluations | "
                f"{seconds / max(model.n_iter_, 1):.3f} s per iteration | certificate {model.certificate_['bound']} "
                f"({model.certificate_['seconds']:.1f} s of it; {seconds - model.certificate_['seconds']:.1f} s without)",
                flush=True,
            )


def main():
    n, m, repeats = int_arguments(20_000, 256, 5)
    X, Y = data(n)
    evaluations(X, Y, m, repeats)
    fits(X, Y, m)


if __name__ == "__main__":
    main()
