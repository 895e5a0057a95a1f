"""Quinonero-Candela & Rasmussen (2005) Table 1 on KIN40K, m = 512: a thin wrapper over
:mod:`sparsegp.experiments.quinonero_candela2005_table1` (``sparsegp reproduce quinonero-candela2005`` runs
both subtables with the sinc toy).

    python -m benchmarks qcr_table1 [--subtable upper|lower] [--repeats 5] [--m 512] [--rounds 10] [--max-iter 50]
"""

from __future__ import annotations

import argparse
import json
import sys

from sparsegp.experiments import quinonero_candela2005_table1 as t1
from sparsegp.experiments.report import fmt


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--subtable", choices=("upper", "lower"), default="upper")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--m", type=int, default=512)
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--max-iter", type=int, default=50)
    p.add_argument("--json", default=None, help="write every number here")
    a = p.parse_args(argv)
    X_all, y_all = t1.kin40k_pool()
    if a.subtable == "upper":
        sizes, methods, folds = dict(n_train=2000, n_test=2000), t1.METHODS_UPPER, False
    else:
        sizes, methods, folds = dict(n_train=36000, n_test=4000), t1.METHODS_LOWER, True
    sub = t1.run_subtable(
        X_all,
        y_all,
        repeats=a.repeats,
        methods=methods,
        m=a.m,
        rounds=a.rounds,
        max_iter=a.max_iter,
        folds=folds,
        verbose=True,
        **sizes,
    )
    print(
        f"# QC&R Table 1 ({a.subtable}), {sub['n_train']}/{sub['n_test']}, m={a.m}, {a.repeats} repeats, "
        f"{sub['seconds']:.0f} s"
    )
    print("| method | train NLL/case | non-aug MAE | MSE | NTL | aug MAE | MSE | NTL | fit s |")
    for name, row in t1.summary_rows(sub).items():
        print("| " + " | ".join([name] + [fmt(v) for v in row]) + " |")
    for t in t1.paired_tests(sub):
        print(f"{t['comparison']:45s} {t['loss']:4s} {t['mean_difference']:+.5f}  p = {t['p']:.2g}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(sub, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
