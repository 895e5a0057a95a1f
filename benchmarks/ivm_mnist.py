"""Lawrence, Seeger & Herbrich (2003) Table 1 and Fig. 1: the IVM against an SVM on MNIST 13 x 13.

    python benchmarks/ivm_mnist.py [--tasks 0 1 ... 9] [--n-train 59000] [--out reports/lawrence2003]

Protocol (the paper's sec. 4): MNIST's official 60,000 training images split
into a training set of 59,000 and a validation set of 1,000 (a seeded random
split), the official 10,000 test images; images down-sampled to 13 x 13
(:func:`sparsegp.datasets.mnist_13x13`); ten c-against-rest tasks. Kernel
``C exp(-(gamma / (2 * 169)) ||x - x'||^2)``; the SVM is scikit-learn's SVC
(libsvm, RBF kernel with sklearn's gamma = gamma / 338, 2 GB kernel cache).

Model selection, per task, as the paper did: every grid point fitted on one
random training subset of 5,000 (the same subset for both methods) and scored
by the error on the 1,000 validation images; both grids have six points (SVM:
C_svm in {1, 10} x gamma in {16.9, 33.8, 67.6}; IVM: C in {10, 100} x the same
gamma). The IVM's active-set size on the subset is the number of support
vectors of the best SVM there. Then both train on all 59,000 with their chosen
parameters; as in the paper, the IVM's d is set to the SVM's number of support
vectors on the same data. IVM settings: the paper's (first 2 points at random,
198 by full greedy search, then a selection index of 500 keeping the best
half; ``--index-size`` and ``--tau`` change the last two), b = Phi^-1(fraction
of +1 labels), v_b = 1/10.

Reports test error (%), training seconds (fit only; model selection excluded,
as in the paper's Table 1), d and number of support vectors, side by side with
the paper's Table 1 (means of 10 runs there, one run here); the median IVM/SVM
time ratio; the combined ten-class error (IVM: largest log P(y = +1), SVM:
largest decision value); the reject curve for c = 9 (IVM by |P(y=+1) - 1/2|,
SVM by |decision value|) plotted into ``--out``. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

PAPER = {  # Table 1: c -> (SVM gen %, SVs, time s, IVM gen %, d, time s)
    0: (0.22, 1247, 1281, 0.18, 1130, 627), 1: (0.20, 798, 864, 0.26, 820, 427),
    2: (0.40, 2240, 2977, 0.40, 2150, 1690), 3: (0.41, 2610, 3687, 0.39, 2500, 2191),
    4: (0.40, 1826, 2442, 0.33, 1740, 1210), 5: (0.29, 2306, 2771, 0.32, 2200, 1758),
    6: (0.28, 1331, 1520, 0.29, 1270, 765), 7: (0.54, 1759, 2251, 0.51, 1660, 1110),
    8: (0.50, 2636, 3909, 0.53, 2470, 2024), 9: (0.58, 2731, 3469, 0.55, 2740, 2444),
}
PAPER_COMBINED = {"IVM": 1.54, "SVM": 1.62}
GAMMAS = (16.9, 33.8, 67.6)
SVM_C = (1.0, 10.0)
IVM_C = (10.0, 100.0)
D = 169


def rbf(C, gamma):
    from sparsegp.kernels import SquaredExponential

    return SquaredExponential(lengthscale=np.sqrt(D / gamma), variance=C)


def reject_curve(wrong, confidence, fractions):
    """Error rate on the kept points after rejecting the least confident fraction."""
    order = np.argsort(confidence)  # least confident first
    n = len(wrong)
    return [float(np.mean(wrong[order[int(round(f * n)):]])) for f in fractions]


def plot_reject(summary, path):
    """The reject curve for c = 9 (the paper's Fig. 1) from the ``summary`` of results.json."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fr = np.asarray(summary["reject_fractions"])
    fig, ax = plt.subplots(figsize=(5, 3.6))
    eps = 1e-5  # a zero error rate on a log axis
    ax.semilogy(fr, np.maximum(summary["reject_svm"], eps), "--", label="SVM (|decision value|)")
    ax.semilogy(fr, np.maximum(summary["reject_ivm"], eps), "-", label="IVM (|P(y=+1) - 1/2|)")
    ax.set_xlabel("rejected fraction")
    ax.set_ylabel("test error rate")
    ax.set_title("MNIST 13x13, 9 against the rest")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tasks", type=int, nargs="+", default=list(range(10)))
    p.add_argument("--n-train", type=int, default=59000, help="training images (the paper: 59,000)")
    p.add_argument("--n-select", type=int, default=5000, help="model-selection subset size")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=None, help="folder for results.json and reject_c9.png")
    p.add_argument("--index-size", type=int, default=500, help="IVM selection index size (paper: 500)")
    p.add_argument("--tau", type=float, default=0.5, help="IVM retained fraction (paper: 1/2)")
    p.add_argument("--verbose", action="store_true")
    a = p.parse_args(argv)

    from sklearn.svm import SVC

    from sparsegp import IVMClassifier, datasets
    from sparsegp.classification.model_selection import validation_search

    Xall, yall, Xt, yt = datasets.load("mnist")
    Xall, Xt = datasets.mnist_13x13(Xall), datasets.mnist_13x13(Xt)
    rng = np.random.default_rng(a.seed)
    perm = rng.permutation(len(yall))
    val, tr = perm[:1000], perm[1000 : 1000 + a.n_train]
    X, y, Xv, yv = Xall[tr], yall[tr], Xall[val], yall[val]
    print(f"# MNIST 13x13: train {len(y)}, validation {len(yv)}, test {len(yt)}; model selection on {a.n_select}",
          file=sys.stderr)

    svm_grid = {"C": list(SVM_C), "gamma": [g / (2 * D) for g in GAMMAS]}
    ivm_grid = {"kernel": [rbf(C, g) for C in IVM_C for g in GAMMAS]}
    rows, test_scores = [], {}
    for c in a.tasks:
        yc, yvc, ytc = (y == c).astype(int), (yv == c).astype(int), (yt == c).astype(int)
        sub = np.random.default_rng([a.seed, c]).choice(len(y), size=min(a.n_select, len(y)), replace=False)
        svm0 = SVC(kernel="rbf", cache_size=2000)
        sel_svm = validation_search(svm0, svm_grid, X[sub], yc[sub], Xv, yvc)
        d_sub = int(SVC(kernel="rbf", cache_size=2000, **sel_svm["best"]).fit(X[sub], yc[sub]).n_support_.sum())
        ivm0 = IVMClassifier(size=d_sub, bias_variance=0.1, index_size=a.index_size, tau=a.tau, random_state=a.seed)
        sel_ivm = validation_search(ivm0, ivm_grid, X[sub], yc[sub], Xv, yvc)

        t0 = time.perf_counter()
        svm = SVC(kernel="rbf", cache_size=2000, **sel_svm["best"]).fit(X, yc)
        svm_s = time.perf_counter() - t0
        n_sv = int(svm.n_support_.sum())
        svm_dec = svm.decision_function(Xt)
        ivm = IVMClassifier(sel_ivm["best"]["kernel"], size=n_sv, bias_variance=0.1, index_size=a.index_size,
                            tau=a.tau, random_state=a.seed, verbose=a.verbose)
        t0 = time.perf_counter()
        ivm.fit(X, yc)
        ivm_s = time.perf_counter() - t0
        ivm_logp = ivm.predict_log_proba(Xt)
        svm_err = 100 * float(np.mean((svm_dec > 0).astype(int) != ytc))
        ivm_err = 100 * float(np.mean(ivm.predict(Xt) != ytc))
        ivm_par = ivm.kernel_.kernels[0]
        row = {
            "c": c, "svm_error": svm_err, "svm_s": svm_s, "n_sv": n_sv, "svm_params": sel_svm["best"],
            "ivm_error": ivm_err, "ivm_s": ivm_s, "d": int(ivm.active_.size),
            "ivm_params": {"C": float(ivm_par.variance), "gamma": float(D / ivm_par.lengthscale**2)},
            "svm_selection": sel_svm["results"],
            "ivm_selection": [{"C": float(r["params"]["kernel"].variance),
                               "gamma": float(D / r["params"]["kernel"].lengthscale ** 2),
                               "error": r["error"], "fit_s": r["fit_s"]} for r in sel_ivm["results"]],
            "d_selection": d_sub,
        }
        rows.append(row)
        test_scores[c] = (ivm_logp[:, 1], ivm.predict_proba(Xt)[:, 1], svm_dec)
        print(f"c={c}: SVM {svm_err:.2f}% {svm_s:.1f}s {n_sv} SVs {sel_svm['best']} | IVM {ivm_err:.2f}% {ivm_s:.1f}s "
              f"d={row['d']} {row['ivm_params']}", file=sys.stderr, flush=True)

    print(f"# MNIST 13x13, {len(y)} training images, test 10,000; IVM selection index {a.index_size}, tau {a.tau}; "
          "one run (paper: means of 10 runs, 2003 hardware)")
    print("| c | SVM gen % | SVs | SVM s | IVM gen % | d | IVM s | IVM/SVM time | paper SVM gen % / SVs / s | "
          "paper IVM gen % / d / s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        ps = PAPER[r["c"]]
        print(f"| {r['c']} | {r['svm_error']:.2f} | {r['n_sv']} | {r['svm_s']:.1f} | {r['ivm_error']:.2f} | {r['d']} | "
              f"{r['ivm_s']:.1f} | {r['ivm_s'] / r['svm_s']:.2f} | {ps[0]:.2f} / {ps[1]} / {ps[2]} | "
              f"{ps[3]:.2f} / {ps[4]} / {ps[5]} |")
    ratios = np.array([r["ivm_s"] / r["svm_s"] for r in rows])
    diffs = np.array([r["ivm_error"] - r["svm_error"] for r in rows])
    summary = {
        "median_time_ratio": float(np.median(ratios)),
        "ivm_faster_tasks": int(np.sum(ratios < 1)),
        "tasks": len(rows),
        "max_abs_error_difference_pp": float(np.max(np.abs(diffs))),
        "within_0.2pp_tasks": int(np.sum(np.abs(diffs) <= 0.2 + 1e-12)),
    }
    print(f"median IVM/SVM training-time ratio {summary['median_time_ratio']:.2f}; IVM faster on "
          f"{summary['ivm_faster_tasks']} of {len(rows)} tasks; |IVM - SVM| test error <= 0.2 points on "
          f"{summary['within_0.2pp_tasks']} of {len(rows)} (largest {summary['max_abs_error_difference_pp']:.2f})")
    if sorted(test_scores) == list(range(10)):
        ivm_pred = np.argmax(np.column_stack([test_scores[c][0] for c in range(10)]), axis=1)
        svm_pred = np.argmax(np.column_stack([test_scores[c][2] for c in range(10)]), axis=1)
        summary["combined_ivm_error"] = 100 * float(np.mean(ivm_pred != yt))
        summary["combined_svm_error"] = 100 * float(np.mean(svm_pred != yt))
        print(f"combined ten-class test error: IVM {summary['combined_ivm_error']:.2f} %, SVM "
              f"{summary['combined_svm_error']:.2f} % (paper: IVM {PAPER_COMBINED['IVM']} %, SVM {PAPER_COMBINED['SVM']} %)")
    if 9 in test_scores:
        fr = np.linspace(0, 0.2, 41)
        ytc = (yt == 9).astype(int)
        _, P, dec = test_scores[9]
        summary["reject_fractions"] = fr.tolist()
        summary["reject_ivm"] = reject_curve((P > 0.5).astype(int) != ytc, np.abs(P - 0.5), fr)
        summary["reject_svm"] = reject_curve((dec > 0).astype(int) != ytc, np.abs(dec), fr)
        for f in (0.0, 0.05, 0.1, 0.2):
            k = int(round(f / 0.005))
            print(f"c=9, reject {f:.2f}: IVM error {100 * summary['reject_ivm'][k]:.3f} %, "
                  f"SVM {100 * summary['reject_svm'][k]:.3f} %")
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "results.json"), "w") as f:
            json.dump({"args": vars(a), "rows": rows, "summary": summary}, f, indent=1)
        if "reject_ivm" in summary:
            plot_reject(summary, os.path.join(a.out, "reject_c9.png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
