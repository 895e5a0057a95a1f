"""Where one VFE bound + gradient spends its time beyond the flop floor, and the changes that were tried for it.

    python -m benchmarks vfe_eval_parts [--m 512 1024] [--repeats 6] [--chunks-only | --profile]

1. The JAX program of ``jax.value_and_grad(vfe_bound)`` (K36: kin40k split 0, 36,000 standardised rows, SE-ARD at
   unit hyper-parameters, inducing inputs a random training subset, the default chunks), timed as fits run it, and
   beside it two variants, each patched into the package for its own trace only:
   - "N blocks" (``--blocks``, default 4): each chunk's two m x m products taken by blocks, A = L_uu^-1 K_uf from
     the lower blocks of the triangular L_uu^-1 only and A A^T's lower blocks only, (k + 1) / 2k of the general
     products' flops;
   - "no cond": the kernel's VJP (:func:`sparsegp.kernels.stationary.se_gram`) taking its sums by the distances'
     expansion alone, without the ``lax.cond`` that chooses the coordinates' differences for inputs many
     length-scales wide (the same numbers where, as here, they are not);
   - "no VJP sums", for timing only (its gradient is wrong): the VJP's sums dropped, the variance's cotangent
     kept, to show what the kernel's VJP costs inside the whole program.
   The programs run in turn, the best of ``--repeats`` each.
2. One chunk of the backward pass alone (m rows of Z, the default chunk of rows, D = 8), each program at top level:
   the product 2 Phi_bar K_uf with its row terms, the kernel's forward and its VJP (with and without the
   conditional), and the whole chunk body; each the best of 20.
3. ``--profile``: JAX's profiler over three evaluations of the general program, and the operations that take the
   most time per evaluation (XLA's own names: the fused products are the ``ynn_fusion`` ones), with their calls.

Figures are seconds; the floor is 2 n m^2 flops at 100 GFLOP/s (this machine's float64 product rate on a good day).
"""

from __future__ import annotations

import argparse
import contextlib
import time


def _best(fn, repeats: int) -> float:
    import jax

    jax.block_until_ready(fn())
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        jax.block_until_ready(fn())
        best = min(best, time.perf_counter() - t)
    return best


def _expanded_bwd(square, res, K_bar):
    """se_gram's VJP with its sums by the expansion alone (no conditional)."""
    from sparsegp.kernels import stationary

    variance, ell, a, b, K = res
    E = K_bar * K
    a_bar, b_bar, t = stationary._pair_sums_expanded(-0.5 * E, a, b)
    ell_bar = -t / ell
    return (E.sum() / variance, ell_bar if ell.ndim else ell_bar.sum(), a_bar / ell, b_bar / ell)


def _variance_only_bwd(square, res, K_bar):
    """For timing only, a wrong VJP: the variance's cotangent, zero for the length-scales and inputs (what the
    evaluation costs without the VJP's sums)."""
    import jax.numpy as jnp

    variance, ell, a, b, K = res
    return jnp.sum(K_bar * K) / variance, jnp.zeros_like(ell), jnp.zeros_like(a), jnp.zeros_like(b)


@contextlib.contextmanager
def _vjp_replaced(bwd):
    """se_gram's VJP replaced by ``bwd`` while the block runs (programs compiled in it keep it)."""
    import jax

    from sparsegp.kernels import stationary

    jax.clear_caches()  # traces of the same functions are cached: each form traced afresh
    stationary.se_gram.defvjp(stationary._se_fwd, bwd)
    try:
        yield
    finally:
        stationary.se_gram.defvjp(stationary._se_fwd, stationary._se_bwd)
        jax.clear_caches()


def _blocked_forward(blocks: int):
    """A replacement for ``jax_sums._chunk_forward`` whose two m x m products are taken by ``blocks`` blocks (the
    sum it makes is the lower block triangle of S; :func:`_mirror` completes it)."""
    import jax.numpy as jnp

    from sparsegp.backends.jax_sums import row_weighted

    def forward(Luu_inv, kernel, Z, Xc, yc, wc):
        m = Z.shape[0]
        edges = [round(i * m / blocks) for i in range(blocks + 1)]
        spans = list(zip(edges[:-1], edges[1:]))
        K = kernel.K(Z, Xc)
        A = jnp.concatenate(
            [sum(Luu_inv[a:b, c:d] @ K[c:d] for c, d in spans[: i + 1]) for i, (a, b) in enumerate(spans)]
        )
        Aw = A * wc
        rows = []
        for i, (a, b) in enumerate(spans):
            row = [Aw[a:b] @ A[c:d].T for c, d in spans[: i + 1]]
            if b < m:
                row.append(jnp.zeros((b - a, m - b), A.dtype))
            rows.append(jnp.concatenate(row, axis=1))
        S = jnp.concatenate(rows, axis=0)
        yy = jnp.sum(row_weighted(wc, yc) * yc)
        return S, Aw @ yc, yy, jnp.sum(wc * kernel.diag(Xc)), jnp.sum(Aw * A)

    return forward


def _k36(m: int):
    """(bound, kernel, Z, chunk, n): K36's VFE bound as a function of (kernel, Z) at noise 0.1, SE-ARD at unit values,
    m inducing inputs at a random training subset (seed 0), the default chunk."""
    import jax.numpy as jnp
    import numpy as np

    from sparsegp import datasets
    from sparsegp.approximations.vfe import vfe_bound
    from sparsegp.backends.jax_sums import chunk_size_for
    from sparsegp.kernels import SquaredExponential

    X, y, _, _ = datasets.load("kin40k", split=0, preprocessing="standardize")
    Z = jnp.asarray(X[np.random.default_rng(0).choice(len(X), m, replace=False)])
    chunk = chunk_size_for(len(X), m)
    Xj, yj = jnp.asarray(X), jnp.asarray(y)

    def bound(k, Z):
        return vfe_bound(k, Z, 0.1, Xj, yj, chunk=chunk)

    return bound, SquaredExponential(np.ones(X.shape[1]), 1.0), Z, chunk, len(X)


def whole(m: int, blocks: int, repeats: int) -> str:
    import jax
    import jax.numpy as jnp
    import numpy as np

    from sparsegp.backends import jax_sums

    bound, k, Z, chunk, n = _k36(m)
    general, stats_forward = jax_sums._chunk_forward, jax_sums._stats_forward
    programs = {}
    try:
        replaced = {"no cond": _expanded_bwd, "no VJP sums": _variance_only_bwd}
        for name in ("general", f"{blocks} blocks", *replaced):
            if name.endswith("blocks"):  # the blocked sum holds S's lower block triangle: mirror it once
                jax_sums._chunk_forward = _blocked_forward(blocks)

                def mirrored_forward(*args, **kw):
                    st = stats_forward(*args, **kw)
                    return st._replace(S=jnp.tril(st.S) + jnp.tril(st.S, -1).T)

                jax_sums._stats_forward = mirrored_forward
            jax.clear_caches()  # each variant traced afresh
            with _vjp_replaced(replaced[name]) if name in replaced else contextlib.nullcontext():
                vg = jax.jit(jax.value_and_grad(bound, argnums=(0, 1)))
                val = jax.jit(bound)
                out = jax.block_until_ready(vg(k, Z))
                jax.block_until_ready(val(k, Z))
            programs[name] = (val, vg, np.asarray(jax.flatten_util.ravel_pytree(out)[0]))
            jax_sums._chunk_forward, jax_sums._stats_forward = general, stats_forward
    finally:
        jax_sums._chunk_forward, jax_sums._stats_forward = general, stats_forward
    ref = programs["general"][2]
    differs = {name: np.max(np.abs(p[2] - ref) / np.maximum(np.abs(ref), 1e-300)) for name, p in programs.items()}
    times = {(name, what): float("inf") for name in programs for what in ("value", "value + gradient")}
    for _ in range(repeats):  # the two programs in turn, so that the machine's speed moves both alike
        for name, (val, vg, _) in programs.items():
            times[name, "value"] = min(times[name, "value"], _best(lambda val=val: val(k, Z), 1))
            times[name, "value + gradient"] = min(times[name, "value + gradient"], _best(lambda vg=vg: vg(k, Z), 1))
    floor = 2.0 * n * m * m / 100e9
    lines = [f"n = {n}, m = {m}, chunk {chunk}; floor {floor:.3f} s; largest relative difference of value and "
             "gradient from the general program's: " + ", ".join(f"{name} {d:.1e}" for name, d in differs.items()
                                                              if name != "no VJP sums")]  # fmt: skip
    for (name, what), t in times.items():
        lines.append(f"  {name:>10s}  {what:<17s} {t:7.3f} s  {t / floor:5.2f}x the floor")
    return "\n".join(lines)


def chunk_parts(m: int) -> str:
    import jax
    import jax.numpy as jnp
    import numpy as np

    from sparsegp.backends.jax_sums import chunk_size_for
    from sparsegp.kernels import SquaredExponential

    c, D = chunk_size_for(36_000, m), 8
    r = np.random.default_rng(0)
    Z, Xc = jnp.asarray(r.standard_normal((m, D))), jnp.asarray(r.standard_normal((c, D)))
    yc, mc = jnp.asarray(r.standard_normal(c)), jnp.ones(c)
    P, bb = jnp.asarray(r.standard_normal((m, m))), jnp.asarray(r.standard_normal(m))
    k = SquaredExponential(np.ones(D), 1.0)

    def body(k, Z, Xc):  # jax_sums._whitened_bwd's chunk: the product, then the kernel's VJP
        Kuf, vjp = jax.vjp(lambda k, z, x: k.K(z, x), k, Z, Xc)
        return vjp((2.0 * (P @ Kuf) + jnp.outer(bb, yc)) * mc)

    def product(k, Z, Xc):
        return (2.0 * (P @ k.K(Z, Xc)) + jnp.outer(bb, yc)) * mc

    def kernel_vjp(k, Z, Xc):
        Kuf, vjp = jax.vjp(lambda k, z, x: k.K(z, x), k, Z, Xc)
        return vjp(Kuf)

    parts = {"chunk body": body, "product": product, "kernel": lambda k, Z, Xc: k.K(Z, Xc), "kernel + VJP": kernel_vjp}
    programs = {name: jax.jit(fn) for name, fn in parts.items()}
    for f in programs.values():
        jax.block_until_ready(f(k, Z, Xc))
    with _vjp_replaced(_expanded_bwd):  # traced here, kept after
        programs["kernel + VJP, no cond"] = jax.jit(kernel_vjp)
        programs["chunk body, no cond"] = jax.jit(body)
        for name in ("kernel + VJP, no cond", "chunk body, no cond"):
            jax.block_until_ready(programs[name](k, Z, Xc))
    flat = [
        jax.flatten_util.ravel_pytree(programs[name](k, Z, Xc))[0] for name in ("kernel + VJP", "kernel + VJP, no cond")
    ]
    same = float(np.max(np.abs(np.asarray(flat[0]) - np.asarray(flat[1]))))
    lines = [f"one backward chunk, m = {m}, {c} rows, D = {D} (2 m^2 c flops at 100 GFLOP/s: {2e-11 * m * m * c * 1e3:.1f} ms); "
             f"the two VJPs' cotangents differ by at most {same:.1e}"]  # fmt: skip
    for name, f in programs.items():
        lines.append(f"  {name:<22s} {1e3 * _best(lambda f=f: f(k, Z, Xc), 20):7.2f} ms")
    return "\n".join(lines)


def profile(m: int, top: int = 12) -> str:
    import collections
    import glob
    import gzip
    import json
    import tempfile

    import jax

    bound, k, Z, chunk, _ = _k36(m)
    vg = jax.jit(jax.value_and_grad(bound, argnums=(0, 1)))
    jax.block_until_ready(vg(k, Z))
    runs = 3
    with tempfile.TemporaryDirectory() as where:
        jax.profiler.start_trace(where)
        t = time.perf_counter()
        for _ in range(runs):
            jax.block_until_ready(vg(k, Z))
        seconds = (time.perf_counter() - t) / runs
        jax.profiler.stop_trace()
        (path,) = glob.glob(f"{where}/**/*.trace.json.gz", recursive=True)
        with gzip.open(path) as f:
            events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
    total: collections.Counter[str] = collections.Counter()
    calls: collections.Counter[str] = collections.Counter()
    for e in events:
        if not e["name"].startswith(("ThunkExecutor", "$")):  # the executor's own spans hold the others
            total[e["name"]] += e["dur"] / 1e6 / runs
            calls[e["name"]] += 1
    lines = [f"profile, m = {m}, chunk {chunk}: {seconds:.3f} s an evaluation (profiled); per evaluation:"]
    for name, t in total.most_common(top):
        lines.append(f"  {t:7.3f} s  {calls[name] // runs:4d} calls  {name}")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--m", type=int, nargs="+", default=[512, 1024])
    parser.add_argument("--blocks", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=6)
    parser.add_argument("--chunks-only", action="store_true", help="only part 2")
    parser.add_argument("--profile", action="store_true", help="only part 3")
    opts = parser.parse_args(argv)
    import jax.flatten_util  # noqa: F401

    for m in opts.m:
        if opts.profile:
            print(profile(m))
            continue
        if not opts.chunks_only:
            print(whole(m, opts.blocks, opts.repeats))
        print(chunk_parts(m))


if __name__ == "__main__":
    main()
