"""Benchmark harness: run each case in its own process (so peak RSS is its own) and print a table.

A case is a function returning a dict, one row of the results table (protocol name, method, sizes,
seconds and quality columns); the runner adds the peak RSS of the process that ran it.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

from sparsegp.tables import markdown_table

COLUMNS = ["protocol", "library", "method", "m", "fit_s", "predict_s", "SMSE", "SNLP", "objective", "peak_rss_MiB"]


def best_of(fn, repeats: int):
    """(best, median) seconds of ``repeats`` calls of ``fn`` after one warm-up call (compilation excluded)."""
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times), float(np.median(times))


def int_arguments(*defaults: int) -> list[int]:
    """The script's positional arguments as integers, each missing one at its default."""
    given = sys.argv[1 : 1 + len(defaults)]
    return [int(a) for a in given] + list(defaults[len(given) :])


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the repository, where ``-m benchmarks`` runs


def module_command(name: str, python: str = sys.executable) -> list[str]:
    """The command that runs benchmark ``name`` in a fresh interpreter (``python``: another environment's, such as
    the comparison libraries'); run it with ``cwd=ROOT``."""
    return [python, "-m", f"benchmarks.{name}"]


def run_case_in_subprocess(suite: str, case: str) -> dict:
    """Run ``python -m benchmarks run --case SUITE CASE`` and parse its JSON line."""
    cmd = [*module_command("run"), "--case", suite, case]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise RuntimeError(f"benchmark case {suite}/{case} failed (exit {proc.returncode})")
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")][-1]
    row = json.loads(line)
    row["wall_s"] = round(time.perf_counter() - t0, 2)
    return row


def format_table(rows: list[dict], columns=COLUMNS) -> str:
    cols = [c for c in columns if any(c in r for r in rows)]
    return markdown_table(cols, [[r.get(c, "") for c in cols] for r in rows])


def mnist_start(n: int):
    """MNIST's first ``n`` training rows and its test rows (pixels in [0, 1]) with the classifier fit's default
    start for them: ``(X / s, y, X_test / s, kernel, s)``, s the fit's input scale and ``kernel`` its default
    SE-ARD start (the kernel itself, without the priors a fit may add)."""
    from dataclasses import dataclass

    from sparsegp import datasets
    from sparsegp.fitting.hyper import scale_from_variances
    from sparsegp.fitting.variational import initial_kernel

    @dataclass(frozen=True)
    class Start:  # what initial_kernel reads of a classifier's configuration
        input_scale: float
        kernel: None = None
        optimize: bool = False

    X, y, Xt, _ = datasets.load("mnist")
    X, y, Xt = X[:n] / 255.0, y[:n].astype(np.int32), Xt / 255.0
    std = X.std(axis=0)
    s = scale_from_variances(std**2)
    return X / s, y, Xt / s, initial_kernel(Start(s), std, X.shape[0]), s
