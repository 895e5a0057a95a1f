"""Time to quality (protocol TTQ): the default ``SparseGPRegressor()`` against GPflow SGPR's best result.

    python -m benchmarks ttq K10 --record                  # GPflow SGPR at m = 128, 256, 512, 1,000 iterations
    python -m benchmarks ttq K10 --seeds 0 1 2 3           # the default fit against the recorded reference
    python -m benchmarks ttq K10 --ours-only --seeds 0     # the default fit alone, at the recorded quality
    python -m benchmarks ttq K10 --gpytorch 1000           # GPyTorch SGPR's time to that quality

``--record`` runs GPflow's SGPR (``make anchors``) from the protocol's start (every hyper-parameter and the
noise at 1, P32: an exact GP on 1,024 rows; inducing inputs at random training rows, seed 0) for 1,000 L-BFGS
iterations at each m, with the test SMSE / SNLP every 20 iterations (GPflow's clock stopped), and saves the
trajectories to ``benchmarks/reference/<data>-gpflow-sgpr.json``. Datasets are protocol names (K10, P32) or
shipped datasets (split 0, standardised). Cases recorded before at other m are kept.

Without ``--record``: the best recorded result over m (lowest SNLP) sets the quality, SMSE within 2 % and SNLP
within 0.02 of it. GPflow's time to that quality is its clock at its first record within the tolerances of its
own 1,000-iteration result, rescaled by its time per evaluation measured again now (a short GPflow run at the
same m in this invocation) over the recorded one. Each seed's default fit runs in its own process (peak RSS of
that process); its time to quality is the fit clock at the first record within the tolerances (records every
20 iterations over all sizes, the clock stopped meanwhile).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile

from benchmarks.harness import ROOT, module_command

HERE = os.path.dirname(os.path.abspath(__file__))
REFERENCE = os.path.join(HERE, "reference")
SMSE_TOL, SNLP_TOL, EVERY, ITERATIONS = 0.02, 0.02, 20, 1000


def reference_path(name: str) -> str:
    return os.path.join(REFERENCE, f"{name}-gpflow-sgpr.json")


def load(name: str):
    from benchmarks.auto_inducing import load as load_data

    return load_data(name, None)


def gpflow_run(name: str, m: int, max_iter: int, every: int) -> dict:
    from benchmarks.sparse_suite import anchors_python, prepare, run_case

    python = anchors_python()
    if python is None:
        raise SystemExit("no anchors environment: make anchors")
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "data.npz")
        prepare(name, data, m)
        info = run_case(python, "anchors", "gpflow-sgpr", data, m, max_iter, tmp, every)
    if "error" in info:
        raise SystemExit(f"GPflow failed: {info['error']}")
    return info


def record(name: str, ms: list[int]) -> None:
    """GPflow SGPR's 1,000-iteration trajectories at each m, saved as the reference."""
    import numpy as np

    from sparsegp import metrics

    _, y, _, ys = load(name)
    cases = []
    for m in ms:
        print(f"GPflow SGPR, {name}, m = {m}, {ITERATIONS} iterations ...", flush=True)
        info = gpflow_run(name, m, ITERATIONS, EVERY)
        var = np.maximum(np.asarray(info.pop("var")), 1e-300)
        mean = info.pop("mean")
        info.update(m=m, SMSE=metrics.smse(ys, mean), SNLP=metrics.snlp(ys, mean, var, y))
        print({k: v for k, v in info.items() if k != "trajectory"}, flush=True)
        cases.append(info)
    os.makedirs(REFERENCE, exist_ok=True)
    kept, commands = [], []
    if os.path.exists(reference_path(name)):  # cases recorded before at other m stay, with their command
        with open(reference_path(name)) as f:
            before = json.load(f)
        kept = [c for c in before["cases"] if c["m"] not in ms]
        commands = [before["command"]] if kept else []
    commands.append(f"python -m benchmarks ttq {name} --record --m {' '.join(map(str, ms))}")
    cases = sorted(kept + cases, key=lambda c: c["m"])
    with open(reference_path(name), "w") as f:
        json.dump({"data": name, "command": "; ".join(commands), "cases": cases}, f, indent=1)
    print(f"saved {reference_path(name)}")


def first_within(trajectory, smse: float, snlp: float):
    """The first record (iteration, seconds, SMSE, SNLP) at or below both, or None."""
    return next((p for p in trajectory if p[2] <= smse and p[3] <= snlp), None)


def ours(name: str, seed: int, smse: float, snlp: float) -> dict:
    """The default fit of one seed, in this process (``--one``)."""
    from benchmarks.auto_inducing import fit_row

    X, y, Xs, ys = load(name)
    row, _ = fit_row(X, y, Xs, ys, f"SparseGPRegressor(random_state={seed})", every=EVERY, random_state=seed)
    hit = first_within(row.pop("trajectory"), smse, snlp)
    row["ttq_s"], row["ttq_iter"] = (hit[1], hit[0]) if hit else (None, None)
    row["peak_rss_MiB"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return row


def quality(name: str):
    """GPflow's best recorded case and the quality it sets (SMSE within 2 %, SNLP within 0.02)."""
    with open(reference_path(name)) as f:
        ref = json.load(f)
    best = min(ref["cases"], key=lambda c: c["SNLP"])
    return best, best["SMSE"] * (1 + SMSE_TOL), best["SNLP"] + SNLP_TOL


def compare(name: str, seeds: list[int]) -> None:
    best, smse, snlp = quality(name)
    own = first_within(best["trajectory"], smse, snlp)
    print(
        f"{name}: GPflow's best, m = {best['m']}: SMSE {best['SMSE']:.4f}, SNLP {best['SNLP']:.4f}; quality "
        f"SMSE <= {smse:.4f}, SNLP <= {snlp:.4f}; GPflow there at iteration {own[0]}, {own[1]} s recorded "
        f"({best['s_per_eval']:.4f} s per evaluation)",
        flush=True,
    )
    now = gpflow_run(name, best["m"], 5, 0)["s_per_eval"]
    gpflow_ttq = own[1] * now / best["s_per_eval"]
    print(f"GPflow per evaluation now {now:.4f} s: its time to quality now {gpflow_ttq:.1f} s", flush=True)
    for seed in seeds:
        out = subprocess.run(
            [*module_command("ttq"), name, "--one", str(seed), "--quality", str(smse), str(snlp)],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        if out.returncode != 0:
            sys.stderr.write(out.stderr[-3000:])
            continue
        row = json.loads(out.stdout.strip().splitlines()[-1])
        ratio = None if row["ttq_s"] is None else round(row["ttq_s"] / gpflow_ttq, 3)
        print(json.dumps(dict(row, seed=seed, gpflow_ttq_s=round(gpflow_ttq, 1), ttq_ratio=ratio)), flush=True)


def gpytorch_ttq(name: str, max_iter: int) -> None:
    """GPyTorch SGPR from the same protocol start at GPflow's best m, records every EVERY iterations: its time to
    the same quality (its clock, evaluation excluded) and its result after ``max_iter`` iterations."""
    from benchmarks.sparse_suite import anchors_python, prepare, run_case

    best, smse, snlp = quality(name)
    python = anchors_python()
    if python is None:
        raise SystemExit("no anchors environment: make anchors")
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "data.npz")
        prepare(name, data, best["m"])
        info = run_case(python, "anchors", "gpytorch-sgpr", data, best["m"], max_iter, tmp, EVERY)
    if "error" in info:
        raise SystemExit(f"GPyTorch failed: {info['error']}")
    hit = first_within(info["trajectory"], smse, snlp)
    last = info["trajectory"][-1] if info["trajectory"] else None
    print(
        json.dumps(
            {
                "library": info["library"],
                "m": best["m"],
                "s_per_eval": round(info["s_per_eval"], 4),
                "ttq_s": None if hit is None else hit[1],
                "ttq_iter": None if hit is None else hit[0],
                "last_record": last,
                "fit_s": round(info["fit_s"], 1),
            }
        ),
        flush=True,
    )


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("data")
    p.add_argument("--record", action="store_true", help="record GPflow SGPR's reference trajectories")
    p.add_argument("--m", type=int, nargs="+", default=[128, 256, 512], help="with --record: the m to run")
    p.add_argument("--seeds", type=int, nargs="+", default=[0])
    p.add_argument("--one", type=int, help=argparse.SUPPRESS)
    p.add_argument("--quality", type=float, nargs=2, help=argparse.SUPPRESS)
    p.add_argument("--ours-only", action="store_true", help="the default fit of each seed at the recorded quality")
    p.add_argument("--gpytorch", type=int, metavar="MAX_ITER", help="GPyTorch SGPR's time to the same quality")
    a = p.parse_args()
    if a.record:
        record(a.data, a.m)
    elif a.gpytorch:
        gpytorch_ttq(a.data, a.gpytorch)
    elif a.one is not None:
        print(json.dumps(ours(a.data, a.one, *a.quality)))
    elif a.ours_only:  # where GPflow is not installed (a GPU machine): no ratio, the time to quality alone
        for seed in a.seeds:
            print(json.dumps(dict(ours(a.data, seed, *quality(a.data)[1:]), seed=seed)), flush=True)
    else:
        compare(a.data, a.seeds)


if __name__ == "__main__":
    main()
