"""Lawrence, Seeger & Herbrich (2003), sec. 4: MNIST 13 x 13, ten c-against-rest tasks, IVM against an SVM.

Errors are in percent of the 10,000 test images; times are training seconds of the final fits. Each
verdict is taken at the paper's IVM selection index (500) when the run has it, else at the run's first;
the other indexes' figures are printed beside it.
"""

from __future__ import annotations

import numpy as np

from ..lawrence2003_paper import PAPER, PAPER_COMBINED, speed_reason
from .base import EXPONENT_TOLERANCE, NotRun, claim, exponent, need, verdict

P = "lawrence2003"
STABLE = 0.1  # "stable" training times: a coefficient of variation at most this (our reading)
SV_FACTOR = 1.25  # support-vector counts "as in Table 1": within this factor (our reading)


def _runs(r):
    """(index, rows, summary) for each selection index of the run, the verdict's index first."""
    sizes = need(r, "index_sizes")
    first = 500 if 500 in sizes else sizes[0]
    order = [first] + [i for i in sizes if i != first]
    return [(i, need(r, f"by_index/{i}/rows"), need(r, f"by_index/{i}/summary")) for i in order]


def _others(r, text):
    """``text(index, rows, summary)`` for each selection index other than the verdict's, as a suffix."""
    more = [text(i, rows, s) for i, rows, s in _runs(r)[1:]]
    return f"; at index {'; at index '.join(more)}" if more else ""


@claim(
    P,
    "comparable-error",
    "4, Table 1",
    "Note that IVM shows comparable performance to the SVM.",
    kind="about",
)
def _comparable(r):
    def largest(rows):
        return max(abs(x["ivm_error"] - x["svm_error"]) for x in rows)

    index, rows, _ = _runs(r)[0]
    return verdict(
        largest(rows) <= 0.2,
        f"index {index}: largest |IVM - SVM| test error {largest(rows):.2f} points over {len(rows)} tasks "
        f"(means: IVM {np.mean([x['ivm_error'] for x in rows]):.3f} %, SVM {np.mean([x['svm_error'] for x in rows]):.3f} %)"
        + _others(r, lambda i, rows, s: f"{i}: {largest(rows):.2f}"),
        "within 0.2 percentage points on every task (the paper's largest difference is 0.13)",
    )


@claim(
    P,
    "ivm-faster-every-task",
    "4, Table 1",
    "[The IVM achieves] significantly lower training times.",
    kind="order",
)
def _faster(r):
    def slower(rows):
        return [x["c"] for x in rows if x["ivm_s"] >= x["svm_s"]]

    def median(rows):
        return np.median([x["ivm_s"] / x["svm_s"] for x in rows])

    def why():
        d = {flag: [x["d"] for x in rows if (x["c"] in late) == flag] for flag in (True, False)}
        split = (
            f" The IVM's cost grows as n d^2 with d = the SVM's support vectors: median d {np.median(d[True]):.0f} "
            f"on the tasks where it is slower, {np.median(d[False]):.0f} where it is faster."
            if d[False]
            else ""
        )
        return speed_reason(r) + split

    index, rows, _ = _runs(r)[0]
    late = slower(rows)
    from scipy import stats

    faster = len(rows) - len(late)  # a sign test over the tasks: this many or more faster at even odds
    return verdict(
        not late,
        f"selection index {index}: IVM faster on {len(rows) - len(late)} of {len(rows)} tasks, median time ratio "
        f"{median(rows):.2f}"
        + (f" (slower on c = {late})" if late else "")
        + _others(r, lambda i, rows, s: f"{i}: {len(rows) - len(slower(rows))} of {len(rows)}, {median(rows):.2f}"),
        "IVM's training time below the SVM's on every task (the paper: all ten, ratios 0.49-0.70; p: a sign test over "
        "the tasks)",
        why,
        p=float(stats.binom.sf(faster - 1, len(rows), 0.5)),
    )


def _ranges(f, mask) -> str:
    """The stretches of the rejection rates ``f`` where ``mask`` holds, as "a-b %" (or "none")."""
    out, start = [], None
    for i, on in enumerate(list(mask) + [False]):
        if on and start is None:
            start = i
        elif not on and start is not None:
            lo, hi = f[start], f[i - 1]
            out.append(f"{lo:.1%}" if lo == hi else f"{lo:.1%}-{hi:.1%}")
            start = None
    return ", ".join(out) or "none"


@claim(
    P,
    "reject-curve-c9-ivm-below",
    "4, Fig. 1",
    "The IVM line runs below the SVM line exhibiting lower classification errors for identical rejection rates.",
    kind="order",
)
def _reject(r):
    def below(s):
        return np.asarray(need(s, "reject_ivm"), dtype=float) < np.asarray(need(s, "reject_svm"), dtype=float)

    def why():
        (row,) = [x for x in rows if x["c"] == 9]
        wrong = {m: round(row[f"{m}_error"] / 100 * n_test) for m in ("ivm", "svm")}
        paper = PAPER[9]
        return (
            f"The curves start apart: with nothing rejected our c = 9 IVM errs on {wrong['ivm']} test images and "
            f"the SVM on {wrong['svm']} (the paper's Table 1: IVM {paper[3]:.2f} %, SVM {paper[0]:.2f} %, the IVM "
            f"ahead). Then the curves cross: the IVM is below at {_ranges(f, below(s))} rejected and not "
            f"elsewhere. The difference with nothing rejected, {wrong['ivm'] - wrong['svm']} "
            f"images, is {abs(wrong['ivm'] - wrong['svm']) / np.sqrt(wrong['ivm'] + wrong['svm']):.1f} binomial "
            f"sds (the square root of the {wrong['ivm'] + wrong['svm']} errors): one run on one test set does not "
            "settle which classifier is better at c = 9."
        )

    index, rows, s = _runs(r)[0]
    f = np.asarray(need(s, "reject_fractions"), dtype=float)
    ivm, svm = need(s, "reject_ivm"), need(s, "reject_svm")
    n_test = 10000
    k = int(np.argmin(np.abs(f - 0.05)))
    kept = round((1 - f[k]) * n_test)
    return verdict(
        bool(np.mean(below(s)) >= 0.9),
        f"index {index}: IVM below the SVM at {int(below(s).sum())} of {len(f)} rejection rates in "
        f"{f[0]:.0%}-{f[-1]:.0%} (at 0 %: IVM {ivm[0]:.2%}, SVM {svm[0]:.2%}; at {f[k]:.0%} rejected the "
        f"curves are IVM {round(ivm[k] * kept)} and SVM {round(svm[k] * kept)} wrong of {kept:,} kept images)"
        + _others(r, lambda i, rows, s: f"{i}: {int(below(s).sum())} of {len(f)}"),
        "IVM's error below the SVM's at 90 % of the rejection rates or more",
        why,
    )


@claim(
    P,
    "combined-error-ivm-below-svm",
    "4",
    "This combination scheme results in test errors of 1.54% (± 0.0417%) for IVM, 1.62% (± 0.0316%) for SVM.",
    kind="order",
)
def _combined(r):
    index, _, s = _runs(r)[0]
    ivm, svm = need(s, "combined_ivm_error"), need(s, "combined_svm_error")
    gap = round((svm - ivm) * 100)  # images of the 10,000
    # McNemar's sd of the gap: the square root of the images exactly one gets wrong (where the run recorded them;
    # else both methods' errors, which bound them)
    discordant = s.get("combined_only_ivm_wrong", 0) + s.get("combined_only_svm_wrong", 0)
    sd = float(np.sqrt(discordant if "combined_only_ivm_wrong" in s else (ivm + svm) * 100))
    from scipy import stats

    # one-sided McNemar: of the images exactly one method gets wrong, at least this many the SVM's, at even odds
    p = (
        float(stats.binom.sf(s["combined_only_svm_wrong"] - 1, discordant, 0.5))
        if "combined_only_svm_wrong" in s and discordant
        else float(stats.norm.sf(gap / sd))
    )
    return verdict(
        ivm < svm,
        f"index {index}: IVM {ivm:.2f} %, SVM {svm:.2f} % (one run; {gap:+d} images)"
        + _others(
            r,
            lambda i, rows, s: (
                f"{i}: IVM {need(s, 'combined_ivm_error'):.2f} %, SVM {need(s, 'combined_svm_error'):.2f} %"
            ),
        ),
        "the IVM's ten-class error below the SVM's, as the paper's two figures are ordered (p: a one-sided McNemar "
        "test on the paired test predictions; a normal approximation bounded by both methods' errors where the run "
        "did not record the images exactly one method gets wrong)",
        lambda: (
            f"The IVM is not below: the gap is {gap} of 10,000 images ({gap / sd:.1f} McNemar sds of {sd:.1f} "
            "images)."
            + "".join(
                f" At index {i} the order reverses (IVM {need(o, 'combined_ivm_error'):.2f} %)."
                for i, _, o in _runs(r)[1:]
                if need(o, "combined_ivm_error") >= need(o, "combined_svm_error")
            )
        ),
        p=p,
    )


@claim(
    P,
    "combined-error-level",
    "4",
    "Test errors of 1.54% for IVM [in the ten-class combination].",
    kind="within spread",
)
def _combined_level(r):
    return _level_of_combined(r, "IVM")


def _level_of_combined(r, method: str):
    """One rule for both combined-error levels: within two binomial sds of the paper's count on the 10,000 test
    images."""
    index, _, s = _runs(r)[0]
    ours = {m: need(s, f"combined_{m.lower()}_error") for m in PAPER_COMBINED}
    paper = PAPER_COMBINED[method]
    sd = float(np.sqrt(paper * 100)) / 100  # binomial sd of the paper's count, in points
    shifts = ", ".join(f"{m} {ours[m] - PAPER_COMBINED[m]:+.2f}" for m in PAPER_COMBINED)
    return verdict(
        abs(ours[method] - paper) <= 2 * sd,
        f"index {index}: {method} {ours[method]:.2f} % (paper {paper:.2f} %)",
        f"within two binomial sds ({2 * sd:.2f} points) of the paper's {paper:.2f} % on 10,000 test images",
        f"Both methods' combined errors are off the paper's ({shifts} points): a shift common to both methods points "
        "to what they share (the data's split and scaling, the model-selection grid), not to one method; which of "
        "those it is is not measured.",
    )


@claim(
    P,
    "table1-per-task",
    "4, Table 1",
    "Table 1: per task c, the SVM's and the IVM's generalisation error and the SVM's number of support vectors.",
    kind="within spread",
)
def _per_task(r):
    index, rows, _ = _runs(r)[0]
    off, sv = [], []
    for row in rows:
        paper = PAPER[row["c"]]
        for name, ours, theirs in (("SVM", row["svm_error"], paper[0]), ("IVM", row["ivm_error"], paper[3])):
            sd = np.sqrt((ours + theirs) * 100) / 100  # binomial sd of the difference, in points
            if abs(ours - theirs) > 2 * sd:
                off.append(f"c = {row['c']} {name} {ours:.2f} % (paper {theirs:.2f} %)")
        ratio = row["n_sv"] / paper[1]
        if not 1 / SV_FACTOR <= ratio <= SV_FACTOR:
            sv.append(f"c = {row['c']}: {row['n_sv']} (paper {paper[1]})")
    return verdict(
        not off and not sv,
        f"index {index}: errors off the paper's by more than two binomial sds: {'; '.join(off) or 'none'}; "
        f"support vectors outside a factor {SV_FACTOR:g} of the paper's: {'; '.join(sv) or 'none'} "
        f"(of {len(rows)} tasks)",
        f"every task's two errors within two binomial sds of the paper's (on 10,000 test images), and its SVs within "
        f"a factor {SV_FACTOR:g} (our reading; the paper gives no spread)",
        lambda: (
            "Our SVM keeps more support vectors than the paper's on "
            + ", ".join(sv)
            + " with the parameters our grid selected; why the grid differs from the paper's choice is not measured."
            if sv
            else "The errors listed differ by more than the test set's binomial noise; not measured further."
        ),
    )


@claim(
    P,
    "reject-less-pronounced-simpler-tasks",
    "4",
    "For c = 9, the latter is clearly inferior (although the difference is less pronounced for the simpler binary "
    "tasks).",
    kind="property",
)
def _simpler(r):
    index, rows, s = _runs(r)[0]
    curves = need(s, "reject_by_task")
    from scipy import stats

    hard = {row["c"]: row["svm_error"] for row in rows}
    gain = {int(c): float(np.mean(np.subtract(v["svm"], v["ivm"]))) for c, v in curves.items()}
    tasks = sorted(gain)
    rho, p = stats.spearmanr([hard[c] for c in tasks], [gain[c] for c in tasks])
    return verdict(
        bool(rho > 0 and p < 0.05),
        f"index {index}: the SVM's reject curve minus the IVM's, mean over 0-20 % rejected, per task (c: points): "
        + ", ".join(f"{c}: {100 * gain[c]:+.3f}" for c in tasks)
        + f"; Spearman's rho against the task's SVM error {rho:.2f} (p = {p:.2g})",
        "the IVM's advantage grows with the task's difficulty: a positive Spearman correlation at 0.05",
        lambda: f"No such trend over the {len(tasks)} tasks (rho = {rho:.2f}, p = {p:.2g}); not measured further.",
        p=p,
    )


@claim(
    P,
    "svm-time-fluctuates-ivm-stable",
    "4",
    "We also registered (not shown here) significant fluctuations in training time for the SVM runs, while this "
    "figure is stable and a-priori predictable for the IVM.",
    kind="property",
)
def _timing(r):
    t = need(r, "timing")
    if not t:
        raise NotRun("timing runs")
    cv = {k: float(np.std(t[f"{k}_s"], ddof=1) / np.mean(t[f"{k}_s"])) for k in ("svm", "ivm")}
    return verdict(
        cv["svm"] > 2 * cv["ivm"] and cv["ivm"] <= STABLE,
        f"{t['runs']} runs of the last task (the SVM on shuffled rows, the IVM under other seeds): coefficient of "
        f"variation of the training time SVM {cv['svm']:.1%}, IVM {cv['ivm']:.1%}",
        f"the SVM's time varies over twice as much as the IVM's, and the IVM's by at most {STABLE:.0%} (our reading "
        "of 'significant' and 'stable'; the paper shows no figures)",
        lambda: (
            f"SVM {np.round(t['svm_s'], 2).tolist()} s, IVM {np.round(t['ivm_s'], 2).tolist()} s: the SVM's times do "
            "not fluctuate more than the IVM's here; not measured further."
        ),
    )


@claim(
    P,
    "combined-error-svm-level",
    "4",
    "This combination scheme results in test errors of [...] 1.62% (± 0.0316%) for SVM.",
    kind="within spread",
)
def _combined_svm_level(r):
    return _level_of_combined(r, "SVM")


@claim(
    P,
    "ivm-time-at-most-n-d2",
    "1; 3",
    "The scaling of our method is at most O(n · d²).",
    kind="bound",
)
def _ivm_scaling(r):
    index, rows, _ = _runs(r)[0]
    d = [x["d"] for x in rows]
    if len(rows) < 3 or np.ptp(d) == 0:
        raise NotRun("IVM times at three or more active-set sizes")
    ours = exponent(d, [x["ivm_s"] for x in rows])
    paper = exponent([v[4] for v in PAPER.values()], [v[5] for v in PAPER.values()])
    return verdict(
        ours <= 2 + EXPONENT_TOLERANCE,
        f"index {index}: the IVM's training time ~ d^{ours:.2f} over the {len(rows)} tasks (n fixed; the paper's Table "
        f"1: d^{paper:.2f})",
        f"the exponent of a log-log fit of the IVM's time against its active-set size d across the tasks (n fixed) at "
        f"most 2 (+ {EXPONENT_TOLERANCE}, our reading of 'at most' for a fit over ten tasks)",
        lambda: f"The time grows faster than d^2 across the tasks (d^{ours:.2f}); not measured further.",
    )


FACTOR = 2.0  # a figure of the paper's table reproduced "about": within this factor (our reading)


def _per_task_levels(r, ours, paper_of, what: str, why=None):
    """Verdict: ``ours(row)`` within FACTOR of ``paper_of(c)`` on every task (``why``: the reason where not)."""
    index, rows, _ = _runs(r)[0]
    off = [(row["c"], ours(row), paper_of(row["c"])) for row in rows]
    outside = [(c, o, p) for c, o, p in off if not 1 / FACTOR <= o / p <= FACTOR]
    return verdict(
        not outside,
        f"index {index}: " + ", ".join(f"c = {c}: {o:.3g} (paper {p:.3g})" for c, o, p in off),
        f"every task's {what} within a factor {FACTOR:g} of the paper's (our reading; the machines and the SVM "
        "implementation differ)",
        lambda: (
            "Outside the factor: "
            + ", ".join(f"c = {c} ({o / p:.2f} times)" for c, o, p in outside)
            + ". "
            + (why() if why else "Not measured further.")
        ),
    )


@claim(
    P,
    "table1-ivm-active-set-sizes",
    "4, Table 1",
    "Table 1: per task c, the IVM's active-set size d (1130, 820, 2150, 2500, 1740, 2200, 1270, 1660, 2470, 2740).",
    kind="about",
)
def _ivm_sizes(r):
    return _per_task_levels(r, lambda row: row["d"], lambda c: PAPER[c][4], "IVM active-set size d")


@claim(
    P,
    "table1-time-ratios",
    "4, Table 1",
    "Table 1: per task c, the IVM's and the SVM's training times (IVM / SVM 0.49 to 0.70).",
    kind="about",
)
def _time_ratios(r):
    return _per_task_levels(
        r,
        lambda row: row["ivm_s"] / row["svm_s"],
        lambda c: PAPER[c][5] / PAPER[c][2],
        "IVM / SVM training time",
        lambda: speed_reason(r),
    )
