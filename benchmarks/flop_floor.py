"""One VFE bound + gradient (hyper-parameters and inducing inputs) at n = 36,000, m = 512 vs the flop floor.

Both evaluation paths are timed: the JAX program (``lax.scan``; a hand-written VJP for VFE,
autodiff for FITC) and the host statistics with their written-out backward pass
(:class:`sparsegp.approximations.host_objective.HostObjective`, which CPU fits use for FITC).

Protocol K36's data (kin40k uci split 0, all 36,000 training rows, standardised),
SE-ARD kernel, inducing inputs at a random training subset (seed 0). The floor is
2 n m^2 flops (one triangular solve and one Gram product of the m x n block) at
the float64 matrix-product rate measured here, in the same process, for both
NumPy (OpenBLAS) and JAX.

    python -m benchmarks flop_floor [--n 36000] [--m 512] [--repeats 5] [--data kin40k]

``--data``: another shipped dataset (split 0, standardised), its first ``--n`` training rows.
"""

from __future__ import annotations

import argparse

import numpy as np

from benchmarks.harness import best_of  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=36000)
    p.add_argument("--m", type=int, default=512)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--data", default="kin40k", help="a shipped dataset (split 0)")
    a = p.parse_args()

    import jax
    import jax.numpy as jnp

    from sparsegp import datasets
    from sparsegp.approximations.vfe import vfe_bound
    from sparsegp.backends.jax_sums import chunk_size_for
    from sparsegp.kernels import SquaredExponential

    X, y, _, _ = datasets.load(a.data, split=0, preprocessing="standardize")
    X, y = X[: a.n], y[: a.n]
    a.n = len(X)  # the products below are timed at the rows the evaluation has

    # Matrix-product rate: (m x n)(n x m) with two different operands (a general product; NumPy
    # turns A @ A.T into a symmetric rank-k update that does half the flops).
    r = np.random.default_rng(0)
    A, B = r.standard_normal((a.m, a.n)), r.standard_normal((a.m, a.n))
    flops_gemm = 2.0 * a.m * a.m * a.n
    np_best, _ = best_of(lambda: A @ B.T, a.repeats)
    syrk_best, _ = best_of(lambda: A @ A.T, a.repeats)
    Aj, Bj = jnp.asarray(A), jnp.asarray(B)
    gemm = jax.jit(lambda x, z: x @ z.T)
    jax_best, _ = best_of(lambda: gemm(Aj, Bj).block_until_ready(), a.repeats)
    rate_np, rate_jax = flops_gemm / np_best / 1e9, flops_gemm / jax_best / 1e9

    Z = X[np.random.default_rng(0).choice(len(X), a.m, replace=False)]
    k = SquaredExponential(np.ones(X.shape[1]), 1.0)
    chunk = chunk_size_for(len(X), a.m)
    Xj, yj = jnp.asarray(X), jnp.asarray(y)
    vg = jax.jit(jax.value_and_grad(lambda k, Z, s: vfe_bound(k, Z, s, Xj, yj, chunk=chunk), argnums=(0, 1, 2)))
    val = jax.jit(lambda k, Z, s: vfe_bound(k, Z, s, Xj, yj, chunk=chunk))
    Zj = jnp.asarray(Z)
    vg_best, vg_med = best_of(lambda: jax.block_until_ready(vg(k, Zj, 0.1)), a.repeats)
    v_best, v_med = best_of(lambda: jax.block_until_ready(val(k, Zj, 0.1)), a.repeats)

    from sparsegp.approximations.fitc import fitc_log_marginal
    from sparsegp.approximations.host_objective import HostObjective
    from sparsegp.transforms import to_raw

    params = {"kernel": k, "raw_noise": jnp.asarray(to_raw(0.1)), "Z": Zj}
    fitc_vg = jax.jit(
        jax.value_and_grad(lambda k, Z, s: fitc_log_marginal(k, Z, s, Xj, yj, chunk=chunk), argnums=(0, 1, 2))
    )
    fitc_jax_best, _ = best_of(lambda: jax.block_until_ready(fitc_vg(k, Zj, 0.1)), a.repeats)
    host = {}
    for approx in ("vfe", "fitc"):
        objective = HostObjective(approx, X, y, chunk=chunk, jitter=1e-8)
        host[approx] = best_of(lambda objective=objective: objective(params), a.repeats)

    floor_flops = 2.0 * a.n * a.m**2
    rate = max(rate_np, rate_jax)
    floor_s = floor_flops / (rate * 1e9)
    print(f"# VFE bound+gradient vs flop floor, {a.data}, n={a.n}, m={a.m}, chunk={chunk}")
    print(
        f"matmul rate: numpy {rate_np:.1f} GFLOP/s, jax {rate_jax:.1f} GFLOP/s (float64 general product (m x n)(n x m)); "
        f"numpy A @ B.T {np_best:.3f} s, A @ A.T (syrk, m^2 n flops) {syrk_best:.3f} s"
    )
    print(f"floor: 2 n m^2 = {floor_flops / 1e9:.2f} GFLOP -> {floor_s:.3f} s at {rate:.1f} GFLOP/s")
    print(f"bound only:       best {v_best:.3f} s, median {v_med:.3f} s  -> {v_best / floor_s:.2f} x floor")
    print(
        f"bound + gradient (JAX path): best {vg_best:.3f} s, median {vg_med:.3f} s  -> {vg_best / floor_s:.2f} x floor "
        f"(median {vg_med / floor_s:.2f} x)"
    )
    for approx, (b, med) in host.items():
        print(
            f"{approx.upper()} bound + gradient (host path): best {b:.3f} s, median {med:.3f} s  -> "
            f"{b / floor_s:.2f} x floor (median {med / floor_s:.2f} x)"
        )
    print(
        f"FITC bound + gradient (JAX path, autodiff): best {fitc_jax_best:.3f} s -> {fitc_jax_best / floor_s:.2f} x floor"
    )
    print(f"FITC (host) / VFE (JAX), best: {host['fitc'][0] / vg_best:.2f}")


if __name__ == "__main__":
    main()
