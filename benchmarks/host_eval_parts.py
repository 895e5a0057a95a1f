"""Where one bound + gradient of the host path spends its time, step by step.

    python -m benchmarks host_eval_parts [--data pol] [--m 1024] [--approximation vfe] [--repeats 5]

:class:`sparsegp.approximations.host_objective.HostObjective` evaluates in five steps (its module docstring); each
is timed here alone, in the order an evaluation runs them, at the same point: a shipped dataset (split 0,
standardised, every training row), SE-ARD at unit hyper-parameters, noise 0.1, inducing inputs a random training
subset (seed 0), the default chunk. The steps:

1. ``prep``: L_uu = chol(K_uu + jitter), L_uu^-1 and the noise (one JAX program);
2. ``forward``: the sums over the rows' chunks on the worker threads (the kernel's blocks by JAX, the products by
   BLAS);
3. ``algebra``: the approximation's value and its gradient in the sums and the parameters (one JAX program);
4. ``backward``: the sums' backward pass (the m x m cotangents, the chunks' products, the kernel's VJP by JAX),
   and, for the unit-weight sums, its two per-chunk parts alone: ``products`` (each chunk's K_uf^T M on the worker threads) and
   ``kernel VJPs`` (each chunk's kernel VJP, one JAX program per chunk);
5. ``pull``: the VJP of step 1 back to the raw parameters (one JAX program).

Then the whole evaluation as a fit calls it, and the floor: 2 n m^2 flops at the general product's rate measured
here. Each figure is the best of ``--repeats`` after one call that compiles.
"""

from __future__ import annotations

import argparse

from .harness import best_of


def _best(fn, repeats: int) -> float:
    """Best seconds of ``repeats`` calls, each waited for (JAX dispatches asynchronously)."""
    import jax

    return best_of(lambda: jax.block_until_ready(fn()), repeats)[0]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default="pol")
    p.add_argument("--m", type=int, default=1024)
    p.add_argument("--approximation", default="vfe")
    p.add_argument("--repeats", type=int, default=5)
    a = p.parse_args(argv)

    import jax.numpy as jnp
    import numpy as np

    from sparsegp import datasets
    from sparsegp.approximations.host_objective import HostObjective
    from sparsegp.backends.jax_sums import chunk_size_for
    from sparsegp.kernels import SquaredExponential
    from sparsegp.transforms import to_raw

    X, y, _, _ = datasets.load(a.data, split=0, preprocessing="standardize")
    n = len(X)
    Z = jnp.asarray(X[np.random.default_rng(0).choice(n, a.m, replace=False)])
    params = {"kernel": SquaredExponential(np.ones(X.shape[1]), 1.0), "raw_noise": jnp.asarray(to_raw(0.1)), "Z": Z}
    chunk = chunk_size_for(n, a.m)
    objective = HostObjective(a.approximation, X, y, chunk=chunk, jitter=1e-8)
    weights = objective.approximation.row_weights

    kernel, Zp, Linv, noise, Luu = objective._prep(params)
    Linv_np = np.asarray(Linv)
    st, res = objective.data.forward(kernel, Zp, Linv_np, weights(noise, objective.known))
    st_j = type(st)(*map(jnp.asarray, st))
    _, (_, ct) = objective._value_and_grad(params, st_j)
    k_bar, Z_bar, Linv_bar, noise_bar = objective.data.backward(Linv_np, Luu, st, res, ct)
    cts = (k_bar, Z_bar, jnp.asarray(Linv_bar), jnp.asarray(noise_bar, dtype=Linv.dtype))

    steps = {
        "prep": lambda: objective._prep(params),
        "forward": lambda: objective.data.forward(kernel, Zp, Linv_np, weights(noise, objective.known))[0],
        "algebra": lambda: objective._value_and_grad(params, st_j),
        "backward": lambda: objective.data.backward(Linv_np, Luu, st, res, ct),
        "pull": lambda: objective._pull(params, cts),
    }
    seconds = {name: _best(fn, a.repeats) for name, fn in steps.items()}
    parts = {}
    if len(res) == 2:  # the unit-weight sums (VFE, DTC, SoR): their backward's two per-chunk parts alone
        blocks, kept = res
        data = objective.data
        M = np.asfortranarray(np.eye(a.m))  # the cotangents' shapes and layouts, not their values

        def products():
            def one(i):
                Kt = kept[i] if kept[i] is not None else blocks(i)[0]
                return i, Kt @ M, data.ms[i]

            return data._map(one, range(data.n_chunks))

        items = products()
        parts = {"products": _best(products, a.repeats), "kernel VJPs": _best(lambda: blocks.vjp_all(items), a.repeats)}
    whole = _best(lambda: objective(params), a.repeats)

    r = np.random.default_rng(0)
    A, B = r.standard_normal((a.m, n)), r.standard_normal((a.m, n))
    floor = _best(lambda: A @ B.T, a.repeats)  # 2 n m^2 flops, the general product's own time
    print(f"# {a.approximation.upper()} on the host, {a.data}: n = {n}, m = {a.m}, chunk {chunk}")
    print(f"floor (a general (m x n)(n x m) product): {floor:.3f} s, {2.0 * n * a.m**2 / floor / 1e9:.1f} GFLOP/s")
    for name, s in seconds.items():
        print(f"  {name:9s} {s:7.3f} s  ({s / floor:5.2f} x floor)")
        if name == "backward":
            for part, t in parts.items():
                print(f"    {part:11s} {t:7.3f} s  ({t / floor:5.2f} x floor)")
    print(f"  {'steps':9s} {sum(seconds.values()):7.3f} s")
    print(f"whole evaluation {whole:.3f} s ({whole / floor:.2f} x floor)")


if __name__ == "__main__":
    main()
