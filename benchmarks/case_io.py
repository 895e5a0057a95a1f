"""The command line shared by ours.py and anchors.py (NumPy only: it runs in both environments).

    python SCRIPT CASE DATA.npz OUT.npz --m M --max-iter N

A case is ``f(data: dict, m: int, max_iter: int) -> dict`` whose result holds
``mean`` and ``var`` arrays plus JSON-ready timings; they are written to OUT.npz.
"""

from __future__ import annotations

import argparse
import json

import numpy as np


def run_cli(cases: dict) -> None:
    p = argparse.ArgumentParser()
    p.add_argument("case", choices=sorted(cases))
    p.add_argument("data")
    p.add_argument("out")
    p.add_argument("--m", type=int, required=True)
    p.add_argument("--max-iter", type=int, required=True)
    a = p.parse_args()
    with np.load(a.data, allow_pickle=False) as f:
        d = {k: f[k] for k in f.files}
    r = cases[a.case](d, a.m, a.max_iter)
    arrays = {"mean": r.pop("mean"), "var": r.pop("var")}
    np.savez(a.out, info=np.array(json.dumps(r)), **arrays)
