"""Protocol SCALE with the statistics on a Dask cluster: one VFE bound + gradient, in-process and on workers.

Data: y = sin(3 x1) + x2^2 / 2 + N(0, 0.1^2), x ~ N(0, I_8), generated block by block (block i from
seed i), so the in-process run and the workers hold the same rows; the workers generate their own
blocks (nothing is sent from the driver). Inducing inputs: m standard-normal points (seed 12345).

    python -m benchmarks scale_dask [--n 10000000] [--m 256] [--block 1000000]

Each mode runs in a fresh process: "inprocess" holds X, y in memory and evaluates
HostObjective (BLAS-3 sums on the host); "dask" starts a LocalCluster of 2 worker processes
(1 thread each) and evaluates the same HostObjective over DaskStats. Reported: seconds per
evaluation (the second of two), peak RSS of the process / of each worker (getrusage), bytes sent
and returned per evaluation, and the relative differences of the Dask objective and gradient from
the in-process ones. Then a projection (labelled as such) of one evaluation at 10^8 rows on 100
workers from the measured per-row time and per-evaluation traffic.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

from benchmarks.harness import ROOT, module_command


def block(i, rows):
    r = np.random.default_rng(i)
    X = r.standard_normal((rows, 8))
    return X, np.sin(3 * X[:, 0]) + X[:, 1] ** 2 / 2 + 0.1 * r.standard_normal(rows)


def block_X(i, rows):
    return block(i, rows)[0]


def block_y(i, rows):
    return block(i, rows)[1]


def sizes(n, b):
    return [min(b, n - s) for s in range(0, n, b)]


def in_memory(n, b):
    """The n rows of blocks of b rows as NumPy arrays."""
    parts = [block(i, r) for i, r in enumerate(sizes(n, b))]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def local_cluster():
    """(cluster, client): 2 worker processes of 1 thread each, as every Dask row of these benchmarks."""
    from distributed import Client, LocalCluster

    cluster = LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, memory_limit="8GiB"
    )
    return cluster, Client(cluster)


def on_workers(n, b):
    """The same rows as dask arrays whose blocks are generated on the workers (nothing sent from here)."""
    import dask
    import dask.array as da

    rows = sizes(n, b)
    X = da.concatenate([da.from_delayed(dask.delayed(block_X)(i, r), (r, 8), np.float64) for i, r in enumerate(rows)])
    y = da.concatenate([da.from_delayed(dask.delayed(block_y)(i, r), (r,), np.float64) for i, r in enumerate(rows)])
    return X, y


def peak_rss_MiB(client=None):
    """Peak RSS of this process, or sorted over the client's workers."""
    if client is None:
        return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return sorted(
        round(v) for v in client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024).values()
    )


def params_for(m):
    import jax.numpy as jnp

    from sparsegp.kernels import SquaredExponential
    from sparsegp.transforms import to_raw

    Z = np.random.default_rng(12345).standard_normal((m, 8))
    return {
        "kernel": SquaredExponential(np.full(8, 1.5), 1.0),
        "raw_noise": jnp.asarray(to_raw(0.1)),
        "Z": jnp.asarray(Z),
    }


def evaluate(objective, params):
    from jax.flatten_util import ravel_pytree

    objective(params)
    t0 = time.perf_counter()
    f, g = objective(params)
    return float(f), np.asarray(ravel_pytree(g)[0]), time.perf_counter() - t0


def child(mode, n, m, b, out):
    import sparsegp  # noqa: F401  (float64)
    from sparsegp.approximations.host_objective import HostObjective
    from sparsegp.backends.jax_sums import chunk_size_for

    chunk = chunk_size_for(b, m)
    params = params_for(m)
    row = {"mode": mode, "n": n, "m": m, "partition_rows": b, "chunk": chunk}
    if mode == "inprocess":
        X, y = in_memory(n, b)
        objective = HostObjective("vfe", X, y, chunk=chunk, jitter=1e-8)
        del X, y
        f, g, secs = evaluate(objective, params)
        row.update(seconds=round(secs, 2), peak_rss_MiB=peak_rss_MiB())
    else:
        from sparsegp.backends.dask_sums import DaskStats

        cluster, client = local_cluster()
        with cluster, client:
            X, y = on_workers(n, b)
            t0 = time.perf_counter()
            data = DaskStats(X, y, chunk, client)
            row["setup_seconds"] = round(time.perf_counter() - t0, 2)
            objective = HostObjective("vfe", data=data, jitter=1e-8)
            f, g, secs = evaluate(objective, params)
            row.update(
                seconds=round(secs, 2),
                worker_peak_rss_MiB=peak_rss_MiB(client),
                driver_peak_rss_MiB=peak_rss_MiB(),
                bytes_per_evaluation=int(data.bytes_moved / data.evaluations),
                partitions=data.n_partitions,
            )
            data.close()
    row["objective"] = f
    np.save(out, g)
    return row


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=10_000_000)
    p.add_argument("--m", type=int, default=256)
    p.add_argument("--block", type=int, default=1_000_000)
    p.add_argument("--child", choices=["inprocess", "dask"])
    p.add_argument("--out")
    a = p.parse_args()
    if a.child:
        print(json.dumps(child(a.child, a.n, a.m, a.block, a.out)))
        return
    rows, grads = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for mode in ("inprocess", "dask"):
            path = os.path.join(tmp, f"{mode}.npy")
            cmd = [
                *module_command("scale_dask"),
                "--n",
                str(a.n),
                "--m",
                str(a.m),
                "--block",
                str(a.block),
                "--child",
                mode,
                "--out",
                path,
            ]
            res = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
            if res.returncode:
                sys.exit(f"{mode} failed:\n{res.stderr[-3000:]}")
            rows.append(json.loads(res.stdout.strip().splitlines()[-1]))
            grads[mode] = np.load(path)
            print(json.dumps(rows[-1]), file=sys.stderr)
    f0, f1 = rows[0]["objective"], rows[1]["objective"]
    g0, g1 = grads["inprocess"], grads["dask"]
    print("| mode | n | m | seconds per bound + gradient | peak RSS (MiB) | bytes per evaluation |")
    print("|---|---|---|---|---|---|")
    print(f"| in-process | {a.n:,} | {a.m} | {rows[0]['seconds']} | {rows[0]['peak_rss_MiB']} | - |")
    print(
        f"| Dask, 2 workers, {rows[1]['partitions']} partitions | {a.n:,} | {a.m} | {rows[1]['seconds']} | workers "
        f"{rows[1]['worker_peak_rss_MiB']}, driver {rows[1]['driver_peak_rss_MiB']} | {rows[1]['bytes_per_evaluation']:,} |"
    )
    print(
        f"\nDask against in-process: objective {abs(f1 - f0) / abs(f0):.1e} relative, gradient "
        f"{np.max(np.abs(g1 - g0)) / np.max(np.abs(g0)):.1e} (largest entry difference over largest entry)."
    )
    per_row = rows[1]["seconds"] * 2 / a.n  # worker-seconds per row (2 workers busy)
    traffic = rows[1]["bytes_per_evaluation"] / rows[1]["partitions"]
    print(
        "\nProjection (not a measurement): one bound + gradient at 10^8 rows on 100 workers, 10^6 rows each, "
        f"from {per_row * 1e6:.2f} worker-seconds per 10^6 rows and {traffic / 1e6:.2f} MB per partition per "
        f"evaluation measured above: about {per_row * 1e6:.1f} s per evaluation (the workers in parallel) plus "
        f"{100 * traffic / 1e9:.2f} GB through the scheduler and driver (at 1 GB/s: {100 * traffic / 1e9:.1f} s)."
    )


if __name__ == "__main__":
    main()
