"""Protocol SCALE, whole fits: the large-n strategy at 10^6 and 10^7 rows, test SMSE and SNLP.

Data as in ``scale_dask.py``: y = sin(3 x1) + x2^2 / 2 + N(0, 0.1^2), x ~ N(0, I_8), training block i
from seed i (10^6 rows per block), 100,000 test rows from seed 999. Model: SparseGPRegressor, VFE,
m inducing inputs started at random training rows (random_state 0), the default kernel (SE, ARD);
``--m auto``: ``SparseGPRegressor(random_state=0)``, the library's defaults (it chooses m and when to stop).

    python -m benchmarks scale_fit --n 1000000 10000000 [--m 256] [--subset 20000] [--max-iter 300]
        [--refine-iter 3] [--dask] [--chunk ROWS]

``--subset 0`` fits on all rows at every iteration (no subset stage). Each n runs in a fresh process;
reported: fit seconds (and per stage: iterations, evaluations, seconds), the process's peak RSS
(getrusage), the JAX backend, and test SMSE / SNLP. ``--dask`` fits on a LocalCluster of 2 worker
processes (1 thread each), the workers generating their own blocks; peak RSS then per worker too.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

import numpy as np

from benchmarks.harness import ROOT, module_command
from benchmarks.scale_dask import block, in_memory, local_cluster, on_workers, peak_rss_MiB  # noqa: E402

BLOCK = 1_000_000
TEST_SEED, TEST_ROWS = 999, 100_000


def child(n, m, subset, max_iter, refine_iter, use_dask, chunk=None):
    import jax

    from sparsegp import SparseGPRegressor
    from sparsegp.metrics import ntl, smse
    from sparsegp.options import Joint, SubsetThenAll

    if m == "auto":  # the library's defaults: it chooses m and when to stop
        model = SparseGPRegressor(random_state=0, verbose=True, schedule=Joint(chunk_size=chunk))
    else:
        model = SparseGPRegressor(
            inducing=int(m),
            random_state=0,
            verbose=True,
            schedule=SubsetThenAll(subset=subset or None, refine_iter=refine_iter, max_iter=max_iter, chunk_size=chunk),
        )
    Xt, yt = block(TEST_SEED, TEST_ROWS)
    row = {
        "n": n,
        "m": m,
        "subset": subset,
        "max_iter": max_iter,
        "refine_iter": refine_iter,
        "backend": jax.default_backend(),
        "device": str(jax.devices()[0].device_kind),
        "dask": use_dask,
    }
    if use_dask:
        import dask

        cluster, client = local_cluster()
        with cluster, client:
            X, y = on_workers(n, BLOCK)
            t0 = time.perf_counter()
            model.fit(X, y)
            row["fit_seconds"] = round(time.perf_counter() - t0, 1)
            row["worker_peak_rss_MiB"] = peak_rss_MiB(client)
            row["bytes_per_evaluation"] = int(model.data_bytes_per_evaluation_)
            ytrain_mean, ytrain_var = (float(v) for v in dask.compute(y.mean(), y.var()))
    else:
        X, y = in_memory(n, BLOCK)
        t0 = time.perf_counter()
        model.fit(X, y)
        row["fit_seconds"] = round(time.perf_counter() - t0, 1)
        ytrain_mean, ytrain_var = float(np.mean(y)), float(np.var(y))
        del X, y
    row["peak_rss_MiB"] = peak_rss_MiB()
    row["stages"] = [
        {
            "rows": st["rows"],
            "iterations": st["report"].n_iter,
            "evaluations": st["report"].n_evals,
            "seconds": round(st["report"].seconds, 1),
        }
        for st in (model.stages_ or [])
    ]
    if model.stages_ is None and model.optimizer_report_ is not None:
        rep = model.optimizer_report_
        row["stages"] = [
            {"rows": n, "iterations": rep.n_iter, "evaluations": rep.n_evals, "seconds": round(rep.seconds, 1)}
        ]
    mean, std = model.predict(Xt, return_std=True)
    row["smse"] = round(smse(yt, mean), 5)
    # SNLP against the trivial N(mean, var) of the training targets (metrics.snlp without the 10^7 targets)
    trivial = ntl(yt, np.full_like(yt, ytrain_mean), np.full_like(yt, ytrain_var))
    row["snlp"] = round(ntl(yt, mean, std**2) - trivial, 4)
    row["noise"] = round(model.noise_, 6)
    row["objective_per_row"] = round(model.objective_ / n, 6)
    if m == "auto":
        row.update(m_chosen=model.Z_.shape[0], stop=model.stop_reason_, gap_per_row=round(model.gap_ / n, 5))
        row["path"] = [(p["m"], p["n_iter"], round(p["seconds"], 1)) for p in model.inducing_path_]
    return row


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, nargs="+", default=[1_000_000, 10_000_000])
    p.add_argument("--m", default="256", help="an int, or auto: the library's defaults (other options ignored)")
    p.add_argument("--subset", type=int, default=20_000)
    p.add_argument("--max-iter", type=int, default=300)
    p.add_argument("--refine-iter", type=int, default=3)
    p.add_argument("--dask", action="store_true")
    p.add_argument("--chunk", type=int, default=None, help="rows per chunk (default: the library's)")
    p.add_argument("--child", action="store_true")
    a = p.parse_args()
    if a.child:
        print(json.dumps(child(a.n[0], a.m, a.subset, a.max_iter, a.refine_iter, a.dask, a.chunk)))
        return
    rows = []
    for n in a.n:
        cmd = (
            [
                *module_command("scale_fit"),
                "--child",
                "--n",
                str(n),
                "--m",
                str(a.m),
                "--subset",
                str(a.subset),
                "--max-iter",
                str(a.max_iter),
                "--refine-iter",
                str(a.refine_iter),
            ]
            + (["--dask"] if a.dask else [])
            + (["--chunk", str(a.chunk)] if a.chunk else [])
        )
        res = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, cwd=ROOT)
        if res.returncode:
            sys.exit(f"n = {n} failed")
        rows.append(json.loads(res.stdout.strip().splitlines()[-1]))
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    print(
        "| n | backend | subset | stages (rows: iterations / evaluations / s) | fit s | peak RSS MiB | test SMSE | test SNLP |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        stages = "; ".join(
            f"{s['rows']:,}: {s['iterations']} / {s['evaluations']} / {s['seconds']}" for s in r["stages"]
        )
        rss = r["peak_rss_MiB"] if not r["dask"] else f"driver {r['peak_rss_MiB']}, workers {r['worker_peak_rss_MiB']}"
        print(
            f"| {r['n']:,} | {r['backend']}{' (Dask)' if r['dask'] else ''} | {r['subset'] or '-'} | {stages} | "
            f"{r['fit_seconds']} | {rss} | {r['smse']} | {r['snlp']} |"
        )
    for r in rows:
        if "m_chosen" in r:
            print(f"n = {r['n']:,}: m = {r['m_chosen']}, gap {r['gap_per_row']} per row, path {r['path']}; {r['stop']}")
    if len(rows) > 1:
        print(
            f"\nSMSE at n = {rows[-1]['n']:,} relative to n = {rows[0]['n']:,}: {rows[-1]['smse'] / rows[0]['smse']:.4f}"
        )


if __name__ == "__main__":
    main()
