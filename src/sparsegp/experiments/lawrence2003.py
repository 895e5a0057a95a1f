"""Lawrence, Seeger & Herbrich (2003): the IVM against an SVM on MNIST 13 x 13 (Table 1, Fig. 1, combined error).

Protocol (sec. 4): MNIST's official training images split into a training set
and 1,000 validation images (seeded random split), the official 10,000 test
images, down-sampled to 13 x 13; ten c-against-rest tasks. Kernel
``C exp(-(gamma / (2 * 169)) ||x - x'||^2)``; the SVM is scikit-learn's SVC
(libsvm, RBF, sklearn gamma = gamma / 338). Per task both methods choose among
six kernel settings by validation error after training on one random subset
(shared); then both train on the whole training set and the IVM's active-set
size d is set to the SVM's number of support vectors, as in the paper.
"""

from __future__ import annotations

import os
import time

import numpy as np

from .lawrence2003_paper import PAPER, PAPER_COMBINED
from .steps import direct

GAMMAS = (16.9, 33.8, 67.6)
SVM_C = (1.0, 10.0)
IVM_C = (10.0, 100.0)
D = 169
MODES = {
    "quick": dict(n_train=2000, n_select=1000, index_sizes=(500, 100), timing_runs=2),
    "full": dict(n_train=59000, n_select=5000, index_sizes=(500, 100), timing_runs=5),
}
PAPER_INDEX = 500


def rbf(C, gamma):
    from ..kernels import SquaredExponential

    return SquaredExponential(lengthscale=np.sqrt(D / gamma), variance=C)


def reject_curve(wrong, confidence, fractions):
    """Error rate on the kept points after rejecting the least confident fraction."""
    order = np.argsort(confidence, kind="stable")  # least confident first
    n = len(wrong)
    return [float(np.mean(wrong[order[int(round(f * n)) :]])) for f in fractions]


def _ivm_row(ivm, sel, Xt, ytc, fit_s):
    k = ivm.kernel_.kernels[0]
    return {
        "ivm_error": 100 * float(np.mean(ivm.predict(Xt) != ytc)),
        "ivm_s": fit_s,
        "d": int(ivm.active_.size),
        "ivm_params": {"C": float(k.variance), "gamma": float(D / k.lengthscale**2)},
        "ivm_selection": [
            {
                "C": float(r["params"]["kernel"].variance),
                "gamma": float(D / r["params"]["kernel"].lengthscale ** 2),
                "error": r["error"],
                "fit_s": r["fit_s"],
            }
            for r in sel["results"]
        ],
    }


def _summary(rows, scores, yt):
    """Table 1's aggregates, the combined ten-class error and the c = 9 reject curves of one selection index."""
    ratios = np.array([r["ivm_s"] / r["svm_s"] for r in rows])
    diffs = np.array([r["ivm_error"] - r["svm_error"] for r in rows])
    summary = {
        "median_time_ratio": float(np.median(ratios)),
        "ivm_faster_tasks": int(np.sum(ratios < 1)),
        "tasks": len(rows),
        "max_abs_error_difference_pp": float(np.max(np.abs(diffs))),
        "within_0.2pp_tasks": int(np.sum(np.abs(diffs) <= 0.2 + 1e-12)),
    }
    if sorted(scores) == list(range(10)):
        ivm_pred = np.argmax(np.column_stack([scores[c][0] for c in range(10)]), axis=1)
        svm_pred = np.argmax(np.column_stack([scores[c][2] for c in range(10)]), axis=1)
        summary["combined_ivm_error"] = 100 * float(np.mean(ivm_pred != yt))
        summary["combined_svm_error"] = 100 * float(np.mean(svm_pred != yt))
        # the images exactly one of the two gets wrong: McNemar's test of the paired predictions
        summary["combined_only_ivm_wrong"] = int(np.sum((ivm_pred != yt) & (svm_pred == yt)))
        summary["combined_only_svm_wrong"] = int(np.sum((svm_pred != yt) & (ivm_pred == yt)))
    fr = np.linspace(0, 0.2, 41)
    curves = {}
    for c, (_, P, dec) in sorted(scores.items()):  # every task's reject curves (the paper plots c = 9)
        ytc = (yt == c).astype(int)
        curves[str(c)] = {
            "ivm": reject_curve((P > 0.5).astype(int) != ytc, np.abs(P - 0.5), fr),
            "svm": reject_curve((dec > 0).astype(int) != ytc, np.abs(dec), fr),
        }
    if curves:
        summary["reject_by_task"] = curves
    if 9 in scores:
        fr = np.linspace(0, 0.2, 41)
        ytc = (yt == 9).astype(int)
        _, P, dec = scores[9]
        summary["reject_fractions"] = fr.tolist()
        summary["reject_ivm"] = reject_curve((P > 0.5).astype(int) != ytc, np.abs(P - 0.5), fr)
        summary["reject_svm"] = reject_curve((dec > 0).astype(int) != ytc, np.abs(dec), fr)
    return summary


def _timing_runs(X, yc, svm_params, ivm, runs: int, seed: int) -> dict:
    """Sec. 4's training-time fluctuations: the final SVM fit on ``runs`` shuffles of the training rows, and the
    IVM with the same kernel and size under ``runs`` other seeds of its randomised selection, each timed."""
    from sklearn.svm import SVC

    svm_s, ivm_s = [], []
    for r in range(runs):
        order = np.random.default_rng([seed, 1, r]).permutation(len(yc))
        t0 = time.perf_counter()
        SVC(kernel="rbf", cache_size=2000, **svm_params).fit(X[order], yc[order])
        svm_s.append(time.perf_counter() - t0)
        again = type(ivm)(**{**ivm.get_params(), "random_state": seed + 1 + r, "verbose": False})
        t0 = time.perf_counter()
        again.fit(X, yc)
        ivm_s.append(time.perf_counter() - t0)
    return {"runs": runs, "svm_s": svm_s, "ivm_s": ivm_s}


def run_tasks(
    *,
    tasks=tuple(range(10)),
    n_train=59000,
    n_select=5000,
    index_sizes=(PAPER_INDEX,),
    tau=0.5,
    seed=0,
    timing_runs=0,
    verbose=False,
    log=None,
) -> dict:
    """Model selection, training and testing for each task: the SVM once, the IVM once per selection index.

    Returns ``n_train``, ``n_select``, ``tau``, ``index_sizes`` and ``by_index``: for each index (as a string)
    its ``rows`` (one per task, the SVM's columns repeated beside that index's IVM) and ``summary``.
    """
    from sklearn.svm import SVC

    from .. import datasets
    from ..classification.model_selection import validation_search
    from ..estimators import IVMClassifier

    Xall, yall, Xt, yt = datasets.load("mnist")
    Xall, Xt = datasets.mnist_13x13(Xall), datasets.mnist_13x13(Xt)
    perm = np.random.default_rng(seed).permutation(len(yall))
    val, tr = perm[:1000], perm[1000 : 1000 + n_train]
    X, y, Xv, yv = Xall[tr], yall[tr], Xall[val], yall[val]
    svm_grid = {"C": list(SVM_C), "gamma": [g / (2 * D) for g in GAMMAS]}
    ivm_grid = {"kernel": [rbf(C, g) for C in IVM_C for g in GAMMAS]}
    rows: dict[int, list[dict]] = {i: [] for i in index_sizes}
    timing: dict = {}
    scores: dict[int, dict[int, tuple]] = {i: {} for i in index_sizes}
    for c in tasks:
        yc, yvc, ytc = (y == c).astype(int), (yv == c).astype(int), (yt == c).astype(int)
        sub = np.random.default_rng([seed, c]).choice(len(y), size=min(n_select, len(y)), replace=False)
        sel_svm = validation_search(SVC(kernel="rbf", cache_size=2000), svm_grid, X[sub], yc[sub], Xv, yvc)
        d_sub = int(SVC(kernel="rbf", cache_size=2000, **sel_svm["best"]).fit(X[sub], yc[sub]).n_support_.sum())
        t0 = time.perf_counter()
        svm = SVC(kernel="rbf", cache_size=2000, **sel_svm["best"]).fit(X, yc)
        svm_s = time.perf_counter() - t0
        n_sv = int(svm.n_support_.sum())
        svm_dec = svm.decision_function(Xt)
        svm_row = {
            "c": int(c),
            "svm_error": 100 * float(np.mean((svm_dec > 0).astype(int) != ytc)),
            "svm_s": svm_s,
            "n_sv": n_sv,
            "svm_params": sel_svm["best"],
            "svm_selection": sel_svm["results"],
            "d_selection": d_sub,
        }
        for index in index_sizes:
            common = dict(bias_variance=0.1, index_size=index, tau=tau, stop=None, random_state=seed)
            sel_ivm = validation_search(IVMClassifier(size=d_sub, **common), ivm_grid, X[sub], yc[sub], Xv, yvc)
            ivm = IVMClassifier(sel_ivm["best"]["kernel"], size=n_sv, verbose=verbose, **common)
            t0 = time.perf_counter()
            ivm.fit(X, yc)
            ivm_s = time.perf_counter() - t0
            logp = ivm.predict_log_proba(Xt)
            row = {**svm_row, **_ivm_row(ivm, sel_ivm, Xt, ytc, ivm_s)}
            rows[index].append(row)
            scores[index][int(c)] = (logp[:, 1], np.exp(logp[:, 1]), svm_dec)
            if timing_runs and c == tasks[-1] and index == index_sizes[0]:
                timing = _timing_runs(X, yc, sel_svm["best"], ivm, timing_runs, seed)
            if log:
                log(
                    f"c={c}: SVM {row['svm_error']:.2f}% {svm_s:.1f}s {n_sv} SVs | IVM (index {index}) "
                    f"{row['ivm_error']:.2f}% {ivm_s:.1f}s d={row['d']} {row['ivm_params']}"
                )
    return {
        "n_train": int(len(y)),
        "n_validation": int(len(yv)),
        "n_test": int(len(yt)),
        "n_select": int(min(n_select, len(y))),
        "tau": tau,
        "index_sizes": list(index_sizes),
        "timing": timing,
        "by_index": {str(i): {"rows": rows[i], "summary": _summary(rows[i], scores[i], yt)} for i in index_sizes},
    }


def paper_run(results: dict) -> tuple[int, dict]:
    """The selection index the paper used (500) when the run has it, else the run's first; and its rows/summary."""
    sizes = results["index_sizes"]
    index = PAPER_INDEX if PAPER_INDEX in sizes else sizes[0]
    return index, results["by_index"][str(index)]


def plot_reject(results, path):
    """The reject curve for c = 9 (the paper's Fig. 1): the SVM and the IVM at each selection index."""
    from ..plotting import pyplot, save_figure

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5, 3.6))
    eps = 1e-5  # a zero error rate on a log axis
    for k, index in enumerate(results["index_sizes"]):
        s = results["by_index"][str(index)]["summary"]
        fr = np.asarray(s["reject_fractions"])
        if k == 0:
            ax.semilogy(fr, np.maximum(s["reject_svm"], eps), "k--", label="SVM (|decision value|)")
        ax.semilogy(fr, np.maximum(s["reject_ivm"], eps), "-", label=f"IVM, index {index} (|P(y=+1) - 1/2|)")
    ax.set_xlabel("rejected fraction")
    ax.set_ylabel("test error rate")
    ax.set_title("MNIST 13x13, 9 against the rest")
    ax.legend(fontsize=8)
    save_figure(fig, path, dpi=120)


def _table1(rep, index, rows):
    paper = " (the paper's)" if index == PAPER_INDEX else ""
    header = ["c", "SVM gen %", "paper", "SVs", "paper", "SVM s", "paper", "IVM gen %", "paper", "d", "paper"]
    header += ["IVM s", "paper", "IVM/SVM time", "paper"]
    body = []
    for r in rows:
        p = PAPER[r["c"]]
        body.append(
            [r["c"], r["svm_error"], p[0], r["n_sv"], p[1], r["svm_s"], p[2], r["ivm_error"], p[3], r["d"], p[4]]
            + [r["ivm_s"], p[5], r["ivm_s"] / r["svm_s"], p[5] / p[2]]
        )
    rep.table(header, body, caption=f"Table 1, IVM selection index {index}{paper}: test error, SVs / d, training s")
    s = _summary_line(rows)
    rep.text(s)


def _summary_line(rows):
    ratio = np.array([r["ivm_s"] / r["svm_s"] for r in rows])
    diff = np.array([abs(r["ivm_error"] - r["svm_error"]) for r in rows])
    return (
        f"IVM within 0.2 points of the SVM's test error on {int(np.sum(diff <= 0.2 + 1e-12))} of {len(rows)} tasks "
        f"(largest difference {diff.max():.2f}); IVM faster on {int(np.sum(ratio < 1))} of {len(rows)}; median "
        f"IVM/SVM time ratio {np.median(ratio):.2f} (paper: 0.51)."
    )


def reproduce(out_dir: str, mode: str = "quick", verbose: bool = False, command: str | None = None, step=direct) -> str:
    """Write report.md, results.json and reject_c9.png for ``mode`` ("quick" or "full") into ``out_dir``."""
    from .report import Report

    cfg = MODES[mode]
    sizes: tuple[int, ...] = cfg["index_sizes"]  # type: ignore[assignment]
    rep = Report(
        "lawrence2003", "Lawrence, Seeger & Herbrich (2003): the IVM against an SVM on MNIST 13x13", mode, command
    )
    rep.protocol("training images", "59,000", f"{cfg['n_train']:,}", "the --quick mode subsamples")
    rep.protocol("model-selection subset", "5,000", f"{cfg['n_select']:,}", "the --quick mode subsamples")
    rep.protocol(
        "IVM selection index",
        PAPER_INDEX,
        " and ".join(map(str, sizes)),
        "the paper's, and 100 beside it: fewer candidates scored per inclusion",
    )
    rep.protocol("runs", 10, 1, "time: 2 cores; one split, one run per selection index")
    rep.protocol(
        "kernel settings per method",
        "a list of the same size for every method (footnote 6)",
        f"{len(SVM_C) * len(GAMMAS)} each: gamma in {{{', '.join(f'{g:g}' for g in GAMMAS)}}} for both; C in "
        f"{{{', '.join(f'{c:g}' for c in SVM_C)}}} for the SVM, {{{', '.join(f'{c:g}' for c in IVM_C)}}} for the IVM",
        "the lists are not given; an SVM's C (a penalty) and the IVM's C (a process variance) are different quantities",
    )
    rep.protocol(
        "SVM implementation (timed)",
        "not named",
        "scikit-learn's SVC (libsvm), cache 2,000 MB",
        "the library's comparison SVM; times compare libsvm on this machine with the IVM here",
    )
    rep.protocol(
        "training-time spread",
        "over the 10 runs, each with its own model selection",
        f"{cfg['timing_runs']} refits per task at the selected kernel (SVM: shuffled rows; IVM: other seeds)",
        "time: one model selection per task",
    )
    out = step("tasks", run_tasks, **cfg, verbose=verbose)
    index, main = paper_run(out)
    ratios = [r["n_sv"] / PAPER[r["c"]][1] for r in out["by_index"][str(index)]["rows"]]
    rep.protocol(
        "IVM active-set size d",
        "about the SVM's support-vector count of the paper's runs (Table 1)",
        f"this run's SVM's support-vector count per task ({min(ratios):.2f} to {max(ratios):.2f} times the paper's)",
        "one SVM fit of this run sets d, as the paper sets d from its SVMs",
    )
    rep.text(f"""Training images: {out["n_train"]:,} ({"the paper: 59,000" if mode == "full" else "subsampled; the paper: 59,000"}),
validation {out["n_validation"]:,}, test {out["n_test"]:,} (official). Model selection on {out["n_select"]:,} images, six kernel settings per method,
for the SVM once and for the IVM once per selection index. IVM: d = the SVM's number of support vectors, the
selection index keeping the best half of its candidates. One run (the paper: means of 10). Times are this
machine's, the paper's are 2003's. The verdicts above are computed at selection index {index}.""")
    for i in out["index_sizes"]:
        _table1(rep, i, out["by_index"][str(i)]["rows"])
    if "combined_ivm_error" in main["summary"]:
        body = [
            [f"IVM, index {i}", out["by_index"][str(i)]["summary"]["combined_ivm_error"], PAPER_COMBINED["IVM"]]
            for i in out["index_sizes"]
        ]
        body.append(["SVM", main["summary"]["combined_svm_error"], PAPER_COMBINED["SVM"]])
        rep.table(
            ["", "ours %", "paper %"],
            body,
            caption="Combined ten-class test error (largest log P(y=+1) / largest decision value)",
        )
    if "reject_ivm" in main["summary"]:
        os.makedirs(out_dir, exist_ok=True)
        plot_reject(out, os.path.join(out_dir, "reject_c9.png"))
        rep.figure("reject_c9.png", "Fig. 1: test error against rejected fraction, 9 against the rest")
        fr = main["summary"]["reject_fractions"]
        at = [0, 10, 20, 40]  # 0, 5, 10 and 20 % rejected
        body = [["SVM", *[100 * main["summary"]["reject_svm"][k] for k in at]]]
        body += [
            [f"IVM, index {i}", *[100 * out["by_index"][str(i)]["summary"]["reject_ivm"][k] for k in at]]
            for i in out["index_sizes"]
        ]
        rep.table(
            ["c = 9, test error %", *[f"{fr[k]:.0%} rejected" for k in at]],
            body,
            caption="Fig. 1 in numbers: error on the kept test images",
            digits=3,
        )
    rep.results = out
    return rep.write(out_dir)
