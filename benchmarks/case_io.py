"""The command line shared by ours.py and anchors.py (NumPy only: it runs in both environments).

    python SCRIPT CASE DATA.npz OUT.npz --m M --max-iter N [--every K]

A case is ``f(data: dict, m: int, max_iter: int, trajectory: Trajectory) -> dict`` whose
result holds ``mean`` and ``var`` arrays plus JSON-ready timings; they are written to OUT.npz.
With ``--every K`` the case records the test SMSE and SNLP every K optimiser iterations with
the fit clock stopped (the TTQ protocol: time to a given quality).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np


def _nlpd(y, mean, var):
    return 0.5 * np.log(2 * np.pi * var) + 0.5 * (y - mean) ** 2 / var


def smse_snlp(y_test, y_train, mean, var):
    """SMSE and SNLP as in the protocols (the anchors' environment cannot import sparsegp.metrics)."""
    smse = float(np.mean((y_test - mean) ** 2) / np.var(y_test))
    trivial = _nlpd(y_test, np.mean(y_train), np.var(y_train))
    return smse, float(np.mean(_nlpd(y_test, mean, np.maximum(var, 1e-300)) - trivial))


class Trajectory:
    """Test metrics along a fit, every ``every`` iterations, with the fit clock stopped meanwhile."""

    def __init__(self, data: dict, every: int):
        self.every, self.y_test, self.y_train = every, data["y_test"], data["y"]
        self.points, self._paused, self._t0 = [], 0.0, None

    def start(self):
        self._t0, self._paused = time.perf_counter(), 0.0

    def fit_seconds(self) -> float:
        return time.perf_counter() - self._t0 - self._paused

    def record(self, iteration: int, predict) -> None:
        """``predict() -> (mean, variance of y)`` on the test inputs, called every ``every`` iterations."""
        if not self.every or iteration % self.every:
            return
        t = time.perf_counter()
        fit_s = t - self._t0 - self._paused
        mean, var = predict()
        smse, snlp = smse_snlp(self.y_test, self.y_train, np.asarray(mean).ravel(), np.asarray(var).ravel())
        self.points.append([int(iteration), round(fit_s, 3), round(smse, 5), round(snlp, 5)])
        self._paused += time.perf_counter() - t


def run_cli(cases: dict) -> None:
    p = argparse.ArgumentParser()
    p.add_argument("case", choices=sorted(cases))
    p.add_argument("data")
    p.add_argument("out")
    p.add_argument("--m", type=int, required=True)
    p.add_argument("--max-iter", type=int, required=True)
    p.add_argument("--every", type=int, default=0, help="record test metrics every K iterations (0: off)")
    a = p.parse_args()
    with np.load(a.data, allow_pickle=False) as f:
        d = {k: f[k] for k in f.files}
    trajectory = Trajectory(d, a.every)
    r = cases[a.case](d, a.m, a.max_iter, trajectory)
    r["trajectory"] = trajectory.points
    arrays = {"mean": r.pop("mean"), "var": r.pop("var")}
    np.savez(a.out, info=np.array(json.dumps(r)), **arrays)
