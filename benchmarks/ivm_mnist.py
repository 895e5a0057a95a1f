"""Lawrence, Seeger & Herbrich (2003) Table 1 and Fig. 1: the IVM against an SVM on MNIST 13 x 13.

    python benchmarks/ivm_mnist.py [--tasks 0 1 ... 9] [--n-train 59000] [--index-size 500] [--out reports/lawrence2003]

The protocol is :mod:`sparsegp.experiments.lawrence2003` (also behind
``sparsegp reproduce lawrence2003``): 59,000 training and 1,000 validation
images (seeded random split of the official 60,000), the official 10,000 test
images, down-sampled to 13 x 13; per task, six kernel settings per method
(SVM: C_svm in {1, 10} x gamma in {16.9, 33.8, 67.6}; IVM: C in {10, 100} x
the same gamma, plus v_b = 1/10) chosen by validation error after training on
one shared random subset of 5,000; then both train on all 59,000 images and
the IVM's d is the SVM's number of support vectors. IVM: 2 random inclusions,
198 by full greedy search, then a selection index (``--index-size``, paper 500)
keeping the best fraction ``--tau`` (paper 1/2); b = Phi^-1(fraction of +1).

Prints Table 1 beside the paper's, the median IVM/SVM fit-time ratio, the
combined ten-class error and the c = 9 reject curve; ``--out`` also writes
results.json and reject_c9.png. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import sys


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tasks", type=int, nargs="+", default=list(range(10)))
    p.add_argument("--n-train", type=int, default=59000, help="training images (the paper: 59,000)")
    p.add_argument("--n-select", type=int, default=5000, help="model-selection subset size")
    p.add_argument("--index-size", type=int, default=500, help="IVM selection index size (paper: 500)")
    p.add_argument("--tau", type=float, default=0.5, help="IVM retained fraction (paper: 1/2)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=None, help="folder for results.json and reject_c9.png")
    p.add_argument("--verbose", action="store_true")
    a = p.parse_args(argv)

    from sparsegp.experiments.lawrence2003 import PAPER, PAPER_COMBINED, plot_reject, run_tasks

    out = run_tasks(
        tasks=a.tasks,
        n_train=a.n_train,
        n_select=a.n_select,
        index_size=a.index_size,
        tau=a.tau,
        seed=a.seed,
        verbose=a.verbose,
        log=lambda m: print(m, file=sys.stderr, flush=True),
    )
    rows, summary = out["rows"], out["summary"]
    print(
        f"# MNIST 13x13, {summary['n_train']} training images, test 10,000; IVM selection index {a.index_size}, "
        f"tau {a.tau}; one run (paper: means of 10 runs, 2003 hardware)"
    )
    print(
        "| c | SVM gen % | SVs | SVM s | IVM gen % | d | IVM s | IVM/SVM time | paper SVM gen % / SVs / s | "
        "paper IVM gen % / d / s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        ps = PAPER[r["c"]]
        print(
            f"| {r['c']} | {r['svm_error']:.2f} | {r['n_sv']} | {r['svm_s']:.1f} | {r['ivm_error']:.2f} | {r['d']} | "
            f"{r['ivm_s']:.1f} | {r['ivm_s'] / r['svm_s']:.2f} | {ps[0]:.2f} / {ps[1]} / {ps[2]} | "
            f"{ps[3]:.2f} / {ps[4]} / {ps[5]} |"
        )
    print(
        f"median IVM/SVM training-time ratio {summary['median_time_ratio']:.2f}; IVM faster on "
        f"{summary['ivm_faster_tasks']} of {len(rows)} tasks; |IVM - SVM| test error <= 0.2 points on "
        f"{summary['within_0.2pp_tasks']} of {len(rows)} (largest {summary['max_abs_error_difference_pp']:.2f})"
    )
    if "combined_ivm_error" in summary:
        print(
            f"combined ten-class test error: IVM {summary['combined_ivm_error']:.2f} %, SVM "
            f"{summary['combined_svm_error']:.2f} % (paper: IVM {PAPER_COMBINED['IVM']} %, SVM {PAPER_COMBINED['SVM']} %)"
        )
    if "reject_ivm" in summary:
        for f in (0.0, 0.05, 0.1, 0.2):
            k = int(round(f / 0.005))
            print(
                f"c=9, reject {f:.2f}: IVM error {100 * summary['reject_ivm'][k]:.3f} %, "
                f"SVM {100 * summary['reject_svm'][k]:.3f} %"
            )
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "results.json"), "w") as f:
            json.dump({"args": vars(a), **out}, f, indent=1)
        if "reject_ivm" in summary:
            plot_reject(summary, os.path.join(a.out, "reject_c9.png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
