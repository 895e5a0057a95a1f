"""Seeger, Williams & Lawrence (2003), sec. 4: kin-40k learning curves and Table 1 (4.1), pumadyn-32nm
learning curves, the criterion along full GPR's trajectory (Fig. 3) and sparse model selection (Table 2).

Methods: info-gain (#1), random (#2), smo-bart (#3, kappa = 30); d = the active set size. Errors are
average squared errors (1/2)(y - mu)^2 on the test set; medians over the run's repeats.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from ..seeger2003_paper import PAPER_D, PAPER_TABLE2_MEDIANS, PAPER_TIMES
from .base import (
    EXPONENT_TOLERANCE,
    SIGNIFICANCE,
    NotRun,
    Verdict,
    above,
    binomial_below,
    claim,
    exponent,
    need,
    one_sided_t,
    verdict,
)

P = "seeger2003"
METHODS = ("info-gain", "random", "smo-bart")
SUCCESS_ERROR = 0.03  # the paper's two profiles: "below 0.03" or "close to 0.5"
NOISE_ERROR = 0.3  # at or above: the second profile, the noise explaining the targets
ACCEPTABLE = 0.1  # Fig. 3's "acceptable" approximation of the criterion: a relative error (our reading)


def _curve(r, method, n, base="curves"):
    c = need(r, f"{base}/{method} n={n}")
    return np.asarray(c["d"]), np.asarray(c["avg_sq_error"], dtype=float), np.asarray(c["time_s"], dtype=float)


def _error_runs(r, method, n, base="curves"):
    """(repeats, d) average squared errors of ``method``'s runs (None where the run kept one value per d)."""
    runs = np.asarray(need(r, f"{base}/{method} n={n}").get("avg_sq_error_runs", []), dtype=float)
    return runs if runs.ndim == 2 and runs.shape[0] >= 2 else None


def _worst_p(r, n, a, b, at, base="curves") -> list[float]:
    """One-sided paired p-values (over the repeats) that ``a``'s error is above ``b``'s at each index of ``at``."""
    ra, rb = _error_runs(r, a, n, base), _error_runs(r, b, n, base)
    if ra is None or rb is None or ra.shape != rb.shape:
        return []
    return [above(ra[:, j], rb[:, j]) for j in at]


def _kin_ns(r):
    return sorted({int(k.split("n=")[1]) for k in need(r, "curves")})


def paper_ratio_range(method: str) -> str:
    """The range of ``method``'s time over info-gain's in the paper's Table 1, at every n and d, as the
    criterion quotes it."""
    ratios = [t / base for times in PAPER_TIMES.values() for t, base in zip(times[method], times["info-gain"])]
    digits = 2 if max(ratios) < 10 else 0
    return f"the paper's table: {min(ratios):.{digits}f}-{max(ratios):.{digits}f}"


def _time_ratio(r, method, lo, hi, paper):
    """Verdict: ``method``'s time over info-gain's within [lo, hi] at every n and d of Table 1."""
    ratios = [
        row["ratio_to_info_gain"]
        for row in need(r, "rows")
        if row["method"] == method and row.get("ratio_to_info_gain") is not None
    ]
    if not ratios:
        raise NotRun(f"Table 1 rows of {method}")
    ours = f"{method} / info-gain time {min(ratios):.2f}-{max(ratios):.2f} over every n and d"
    if method == "smo-bart":  # the same selections scored one candidate at a time, as in 2003
        seq = [row["ratio_to_info_gain"] for row in need(r, "rows") if row["method"] == "smo-bart-seq"]
        ours += (
            f"; scoring its kappa candidates one at a time (smo-bart-seq) {min(seq):.1f}-{max(seq):.1f}" if seq else ""
        )
    return verdict(
        lo <= min(ratios) and max(ratios) <= hi,
        ours,
        f"between {lo} and {hi} at every n and d ({paper})",
        lambda: _ratio_reason(r, method),
    )


def _ratio_reason(r, method) -> str:
    """Where Table 1's time ratio leaves the paper's band: how it moves with n and d, and info-gain's time there."""
    rows = [row for row in need(r, "rows") if row["method"] == method and row.get("ratio_to_info_gain") is not None]
    base = {(row["n"], row["d"]): row["time_s"] for row in need(r, "rows") if row["method"] == "info-gain"}
    parts = []
    for n in sorted({row["n"] for row in rows}):
        at = sorted((row["d"], row["ratio_to_info_gain"]) for row in rows if row["n"] == n)
        (d0, r0), (d1, r1) = at[0], at[-1]
        parts.append(
            f"n = {n:,}: {r0:.1f} at d = {d0} (info-gain {base[(n, d0)]:.2f} s) to {r1:.1f} at d = {d1} "
            f"(info-gain {base[(n, d1)]:.1f} s)"
        )
    return (
        f"The ratio is not constant here as in the paper's table: {'; '.join(parts)}. Where info-gain takes "
        "hundredths of a second its fixed per-inclusion costs (not the O(n d) arithmetic) set its time, and the "
        f"ratio is high; at large n and d {method} scores its candidates in one matrix product (a BLAS-3 call, "
        "where arithmetic is cheapest per flop) and the ratio falls: our reading of the times above; how each "
        "method's time splits into fixed costs and arithmetic is not profiled. The paper's ratio is flat in n and d."
    )


@claim(
    P, "t1-random-as-fast", "4.1, Table 1", "While random and info-gain have similar training times [...]", kind="about"
)
def _random_fast(r):
    return _time_ratio(r, "random", 0.5, 1.5, paper_ratio_range("random"))


@claim(
    P,
    "t1-smo-bart-thirty-times",
    "4.1, Table 1",
    "smo-bart is about thirty times slower (we used selection sets of size k = 30 for smo-bart).",
    kind="about",
)
def _smo_bart_slow(r):
    return _time_ratio(r, "smo-bart", 15, 60, "a factor 2 around thirty; " + paper_ratio_range("smo-bart"))


@claim(
    P,
    "fig1-smo-bart-best-small-d",
    "4.1, Fig. 1",
    "For small sizes d = |I|, smo-bart outperforms the other methods.",
    kind="order",
)
def _smo_small(r):
    out, ok = [], True
    for n in _kin_ns(r):
        errs = {m: _curve(r, m, n)[1][0] for m in METHODS}
        d0 = _curve(r, "info-gain", n)[0][0]
        ok &= errs["smo-bart"] < min(errs["info-gain"], errs["random"])
        out.append(f"n = {n}, d = {d0}: " + ", ".join(f"{m} {e:.4f}" for m, e in errs.items()))
    return verdict(bool(ok), "; ".join(out), "smo-bart's error the least at the smallest d, at every n")


@claim(
    P,
    "fig1-random-worst-large-d",
    "4.1, Fig. 1",
    "For larger d, random seems less effective.",
    kind="order",
)
def _random_large(r):
    out, ok, behind, ps = [], True, [], []
    for n in _kin_ns(r):
        d = _curve(r, "info-gain", n)[0]
        errs = {m: _curve(r, m, n)[1] for m in METHODS}
        larger = d >= np.median(d)  # "larger d": the upper half of the plotted sizes
        ps += _worst_p(r, n, "random", "info-gain", np.flatnonzero(larger))  # smo-bart: one run, no test
        worst = errs["random"] > np.maximum(errs["info-gain"], errs["smo-bart"])
        ok &= bool(np.all(worst[larger]))
        behind += [f"n = {n}, d = {int(x)}" for x, w in zip(d[larger], worst[larger]) if not w]
        out.append(
            f"n = {n}, d = {', '.join(str(int(x)) for x in d[larger])}: random worst at "
            f"{', '.join(str(int(x)) for x in d[larger][worst[larger]]) or 'none'}"
        )

    def why():
        ratio = []
        for n in _kin_ns(r):
            d, ig, rnd = _curve(r, "info-gain", n)[0], _curve(r, "info-gain", n)[1], _curve(r, "random", n)[1]
            ratio += [f"n = {n}, d = {int(x)}: info-gain / random {a / b:.2f}" for x, a, b in zip(d, ig, rnd) if a > b]
        return (
            "Random is not the worst at "
            + "; ".join(behind)
            + ". Info-gain's error is above random's at ("
            + "; ".join(ratio)
            + "). Why info-gain lags at n = 10,000 is not measured."
        )

    return verdict(
        bool(ok),
        "; ".join(out),
        "random's error the largest of the three at every d in the upper half of the plotted sizes (d at or above "
        "their median), at every n (p: the largest of the paired tests of random against info-gain there)",
        why,
        p=max(ps) if ps else None,
    )


@claim(
    P,
    "fig1-info-gain-beats-random-large-d",
    "5",
    "For fixed, well-selected hyperparameter values, small improvements over random selection has been "
    "demonstrated for sufficiently large active sets.",
    kind="order",
)
def _ig_large(r):
    out, ok, ps = [], True, []
    for n in _kin_ns(r):
        d, ig, _ = _curve(r, "info-gain", n)
        _, rnd, _ = _curve(r, "random", n)
        ahead = [int(x) for x, a, b in zip(d, ig, rnd) if a < b]
        ok &= bool(ahead) and ahead == [int(x) for x in d[d >= ahead[0]]]
        ps += _worst_p(r, n, "random", "info-gain", [list(d).index(x) for x in ahead])
        out.append(f"n = {n}: info-gain ahead at d = {ahead or 'none'}")
    return verdict(
        bool(ok),
        "; ".join(out),
        "info-gain's error below random's from some d on, at every larger d, at every n (p: the largest of the paired "
        "tests over the repeats where info-gain is ahead)",
        p=max(ps) if ps else None,
    )


@claim(
    P,
    "fig1-sparse-10000-beats-full-2000",
    "4.1, Fig. 1",
    "Sparse methods on the full training set (n = 10000) can significantly outperform full GPR on a subset "
    "(n = 2000), even though the former employ sparser expansions (d = 1000, 1250).",
    kind="significant order",
)
def _sparse_beats_full(r):
    full = need(r, "full_gp/avg_sq_error")
    n = max(_kin_ns(r))
    full_runs = np.asarray(r["full_gp"].get("avg_sq_error_runs", []), dtype=float)
    tests, ours, ps = {}, [], []
    for m in METHODS:
        c = need(r, f"curves/{m} n={n}")
        d = list(c["d"])
        if not all(x in d for x in (1000, 1250)):
            raise NotRun("learning curves at d = 1000 and 1250")
        runs = np.asarray(c.get("avg_sq_error_runs", []), dtype=float)
        for x in (1000, 1250):
            j = d.index(x)
            if runs.shape[0] >= 2 and np.ptp(runs[:, j]) > 0:  # one-sided: the runs' mean below full GPR's
                # paired with the full GP of the same repeat (its subset and hyper-parameters) where the run fitted
                # one per repeat; else against the one fit
                paired = full_runs.shape == runs[:, j].shape
                p = above(full_runs, runs[:, j]) if paired else one_sided_t(runs[:, j], full, "less")
                ps.append(p)
                tests[(m, x)] = (
                    p < SIGNIFICANCE,
                    f"{np.mean(runs[:, j]):.4f} (p = {p:.2g}, {len(runs)} runs{', paired' if paired else ''})",
                )
            else:
                tests[(m, x)] = (c["avg_sq_error"][j] < full, f"{c['avg_sq_error'][j]:.4f} (one value)")
        ours.append(f"{m} " + " / ".join(tests[(m, x)][1] for x in (1000, 1250)))
    failed = [f"{m} at d = {x}" for (m, x), (ok, _) in tests.items() if not ok]
    return verdict(
        not failed,
        f"full GPR (n = 2,000) {full:.4f}; at n = {n}, d = 1000 / 1250: " + "; ".join(ours),
        f"significantly: the runs' mean error below full GPR's, a one-sided t-test at {SIGNIFICANCE:g}, paired with "
        "each repeat's own full GPR where the run fitted one per repeat (else full GPR's one fit taken as fixed; a "
        "method with one run, or the same error in every run: its error below)",
        lambda: f"Not significantly below full GPR: {', '.join(failed)} (the figures above); not measured further.",
        p=max(ps) if ps else None,
    )


@claim(
    P,
    "pumadyn-full-gpr-error",
    "4.1",
    "Adapting the hyperparameters for n_MS = 1024 using full GPR [...]. The median of the average squared test "
    "errors is 0.0225.",
    kind="about",
)
def _pumadyn_full(r):
    e = need(r, "pumadyn/learning_curves/full_gp/avg_sq_error")

    def why():
        t2 = need(r, "pumadyn/table2/full GPR")
        if t2["median_error"] is None:
            return f"Full GPR with the paper's model did not succeed in Table 2 either ({len(t2['runs'])} runs)."
        spread = [q["error"] for q in t2["runs"]]
        bias = need(r, "pumadyn/learning_curves/full_gp/bias")
        return (
            f"The learning curves' full GPR is one fit (the paper's model: the bias v_b, fitted to {bias:.3g} here, "
            f"and the hyper-priors) on one subset of n_MS = 1,024 rows, ending at {e:.4f}; the paper's 0.0225 is a "
            f"median. Full GPR with the same model in Table 2 (n_MS = 2,048) has median {t2['median_error']:.4f} "
            f"({t2['median_error'] / 0.0225 - 1:+.0%} from 0.0225) over {len(t2['runs'])} runs, {min(spread):.4f} to "
            f"{max(spread):.4f}. Whether the subset of 1,024 rows or the single fit makes the difference is not "
            "measured."
        )

    return verdict(abs(e / 0.0225 - 1) <= 0.1, f"{e:.4f}", "within 10 % of 0.0225", why)


@claim(
    P,
    "pumadyn-four-attributes",
    "4.1",
    "Adapting the hyperparameters for n_MS = 1024 using full GPR leads to four attributes being singled out, "
    "all other w_j ≈ 0.",
    kind="property",
)
def _four(r):
    w = np.sort(np.asarray(need(r, "pumadyn/learning_curves/full_gp/w"), dtype=float))[::-1]
    big = int(np.sum(w > 0.01 * w[0]))
    return verdict(big == 4, f"{big} of {len(w)} w_j above 1 % of the largest", "exactly four")


@claim(
    P,
    "fig2-comparable-at-125",
    "4.1, Fig. 2",
    "All three methods achieve an accuracy comparable to full GPR after the inclusion of d = 125 of the "
    "n = 7168 training cases.",
    kind="about",
)
def _fig2_125(r):
    full = need(r, "pumadyn/learning_curves/full_gp/avg_sq_error")
    errs = {m: dict(zip(*_curve(r, m, 7168, "pumadyn/learning_curves/curves")[:2])) for m in METHODS}
    at = {m: e.get(125) for m, e in errs.items()}
    if None in at.values():
        raise NotRun("pumadyn learning curves at d = 125")
    return verdict(
        max(at.values()) <= 1.1 * full,
        f"full GPR {full:.4f}; d = 125: " + ", ".join(f"{m} {v:.4f}" for m, v in at.items()),
        "every method within 10 % of full GPR's error (or below it) at d = 125",
    )


@claim(
    P,
    "fig2-times",
    "4.1, Fig. 2",
    "The training time median for full GPR is 1102.5s, info-gain, random and smo-bart require 3s, 2s and 66s "
    "respectively.",
    kind="about",
)
def _fig2_times(r):
    full = need(r, "pumadyn/learning_curves/full_gp/fit_s")
    t = {m: dict(zip(*_curve(r, m, 7168, "pumadyn/learning_curves/curves")[::2])) for m in METHODS}
    at = {m: v.get(125) for m, v in t.items()}
    if None in at.values():
        raise NotRun("pumadyn learning curves at d = 125")
    # the machines differ, so the paper's seconds are read as ratios: each within a factor 2 of the paper's
    pairs = {
        "smo-bart / info-gain": (at["smo-bart"] / at["info-gain"], 66 / 3),
        "smo-bart / random": (at["smo-bart"] / at["random"], 66 / 2),
        "full GPR / info-gain": (full / at["info-gain"], 1102.5 / 3),
    }
    off = {k: ours / paper for k, (ours, paper) in pairs.items() if not 0.5 <= ours / paper <= 2}
    return verdict(
        not off,
        f"full GPR {full:.1f} s; d = 125: "
        + ", ".join(f"{m} {v:.2f} s" for m, v in at.items())
        + "; ratios "
        + ", ".join(f"{k} {ours:.1f} (paper {paper:.1f})" for k, (ours, paper) in pairs.items()),
        "each time ratio within a factor 2 of the paper's (smo-bart / info-gain 22, smo-bart / random 33, full GPR "
        "/ info-gain 367.5; our reading of the paper's seconds on other hardware)",
        lambda: (
            "Off by more than a factor 2: "
            + ", ".join(f"{k} {f:.2f} times the paper's" for k, f in off.items())
            + ". Full GPR's time is its model selection on n_MS = 1,024 rows, as the paper's; the ratios of the greedy "
            "methods follow Table 1's (see t1-smo-bart-thirty-times); why each moved is not measured here."
        ),
    )


@claim(
    P,
    "fig2-info-gain-fluctuates-small-d",
    "4.1, Fig. 2",
    "For unreasonably small values of d, info-gain exhibits some fluctuations, leading to a worse performance "
    "than random.",
    kind="order",
)
def _fig2_small(r):
    d, ig, _ = _curve(r, "info-gain", 7168, "pumadyn/learning_curves/curves")
    _, rnd, _ = _curve(r, "random", 7168, "pumadyn/learning_curves/curves")
    ps = _worst_p(r, 7168, "info-gain", "random", [0], "pumadyn/learning_curves/curves")
    return verdict(
        ig[0] > rnd[0],
        f"d = {d[0]}: info-gain {ig[0]:.4f}, random {rnd[0]:.4f}",
        "info-gain worse at the smallest d (p: a paired test over the repeats)",
        p=ps[0] if ps else None,
    )


@claim(
    P,
    "fig3-random-poor-info-gain-acceptable",
    "4.2, Fig. 3",
    "Along critical parts of the trajectory, the approximation given by random is fairly poor (for d = 100, "
    "200), while the info-gain approximation seems acceptable.",
    kind="about",
)
def _fig3(r):
    t = need(r, "pumadyn/trajectory")
    if not t.get("criteria_include_the_prior"):  # an older run: the exact criterion had the hyper-prior, PP's not
        raise NotRun("the sparse criteria with the hyper-prior's log density, like the exact one's")
    exact = np.asarray(t["exact"], dtype=float)
    out, ok = [], True
    for d in (100, 200):
        rel = {
            m: np.abs(np.asarray(need(t, f"{m} d={d}"), dtype=float) - exact) / np.abs(exact)
            for m in ("info-gain", "random")
        }
        ok &= np.median(rel["info-gain"]) <= ACCEPTABLE < np.median(rel["random"])
        out.append(
            f"d = {d}: median relative error info-gain {np.median(rel['info-gain']):.2f}, random "
            f"{np.median(rel['random']):.2f} (largest {rel['info-gain'].max():.3g} vs {rel['random'].max():.3g})"
        )
    return verdict(
        bool(ok),
        "; ".join(out) + f"; over {len(exact)} iterates, exact criterion {exact.min():.0f} to {exact.max():.0f}",
        f"acceptable: info-gain's |criterion - exact| / |exact| at most {ACCEPTABLE:.0%} at the median iterate, and "
        f"random's above it, at d = 100 and 200 ({ACCEPTABLE:.0%} is our reading; the paper gives no number)",
        lambda: (
            "Both approximations are far from the exact criterion along most of the trajectory; info-gain's relative "
            "error at the first and the last iterate: "
            + ", ".join(
                f"d = {d} {abs(t[f'info-gain d={d}'][0] / exact[0] - 1):.2f} and "
                f"{abs(t[f'info-gain d={d}'][-1] / exact[-1] - 1):.2f}"
                for d in (100, 200)
            )
            + ". Why ours differ from the paper's curves is not measured."
        ),
    )


def _t2(r, key):
    row = need(r, f"pumadyn/table2/{key}")
    return row["successes"], len(row["runs"]), row


def _failures(r, keys) -> str:
    """Where the failed runs of Table 2's ``keys`` ended: their median error and iterations (the measurement
    behind a failed verdict: the paper's second profile, error near 0.5, reached early)."""
    table = need(r, "pumadyn/table2")
    out = []
    for k in keys:
        bad = [q for q in table.get(k, {}).get("runs", []) if q.get("error", 0.0) >= SUCCESS_ERROR]
        if bad:
            out.append(
                f"{k} {np.median([q['error'] for q in bad]):.3f} after {np.median([q['n_iter'] for q in bad]):.0f}"
            )
    return "; failed runs, median error after median iterations: " + ", ".join(out) if out else ""


def _spread(run) -> float:
    """Largest over smallest ARD weight w_j of a run: near 1 when no attribute is singled out."""
    w = np.asarray(run["w"], dtype=float)
    return float(w.max() / w.min())


def _basin_reason(r, keys) -> str:
    """Why Table 2's runs of rows ``keys`` fail: where they end, against where the successful runs of every row
    end, measured on the runs that kept their weights."""
    table = need(r, "pumadyn/table2")
    rows = {k: v["runs"] for k, v in table.items() if k != "full GPR"}
    good = [q for runs in rows.values() for q in runs if "w" in q and q.get("error", 1.0) < SUCCESS_ERROR]
    bad = [q for k in keys for q in rows.get(k, []) if "w" in q and q.get("error", 0.0) >= NOISE_ERROR]
    between = {
        k: [q["error"] for q in rows.get(k, []) if SUCCESS_ERROR <= q.get("error", 0.0) < NOISE_ERROR] for k in keys
    }
    between = {k: v for k, v in between.items() if v}
    if not bad and not between:
        failed = sum(q.get("error", 0.0) >= SUCCESS_ERROR for k in keys for q in rows.get(k, []))
        return (
            f"The {failed} failed runs of these rows did not record their ARD weights, so where they ended cannot be "
            "told from this run."
        )
    text = ""
    if bad:
        spreads = [_spread(q) for q in bad]
        iters = [q["n_iter"] for q in bad]
        stops = Counter(q["stop"] for q in bad if "stop" in q)
        text = (
            f"The {len(bad)} runs near the all-noise error end where no attribute is singled out: their largest w_j "
            f"is at most {max(spreads):.1f} times the smallest (median {np.median(spreads):.1f})"
        )
        if good:
            text += f", against at least {min(_spread(q) for q in good):.0f} times in the {len(good)} successful runs"
        capped = sum(n for stop, n in stops.items() if "max_iter" in stop or "LIMIT" in stop)
        text += (
            f". They end there after {min(iters)} to {max(iters)} iterations"
            + (" (stops: " + "; ".join(f"{n}x {stop}" for stop, n in stops.most_common()) + ")" if stops else "")
            + (f"; the {capped} that ran to the iteration cap did not leave that point either" if capped else "")
            + ". It is the all-noise stationary point of the "
            "criterion, the paper's second profile (error close to 0.5); which basin a run falls into is set by "
            "the start and the hyper-priors, and the paper gives neither its start nor its prior parameters "
            "(Rasmussen 1996's recommendation): ours, in the protocol table, put the runs into that basin at other "
            "rates than the paper's."
        )
    if between:
        text += (
            f" Runs between the two profiles (error from {SUCCESS_ERROR} to {NOISE_ERROR}), counted as failed: "
            + "; ".join(f"{k} {', '.join(f'{e:.4f}' for e in v)}" for k, v in between.items())
            + "."
        )
    return text.strip()


@claim(
    P,
    "t2-info-gain-reliable",
    "4.2, Table 2",
    "Model selection based on info-gain was reliable even for small sizes d = 100, 200 [9/10 and 10/10 runs].",
    kind="within spread",
)
def _t2_reliable(r):
    return _against_paper_counts(
        r, {"info-gain d=100": 9, "info-gain d=200": 10}, f" (success: error below {SUCCESS_ERROR})"
    )


def _against_paper_counts(r, paper: dict, note: str = "") -> Verdict:
    """Verdict: each Table 2 row's successes not significantly below the paper's count for it (a one-sided
    binomial test at the paper's rate)."""
    got = {k: _t2(r, k)[:2] for k in paper}
    p = {k: binomial_below(s, n, paper[k] / n) for k, (s, n) in got.items()}
    rates = ", ".join(f"{c}/{got[k][1]}" for k, c in paper.items())
    return verdict(
        all(v >= SIGNIFICANCE for v in p.values()),
        ", ".join(f"{k}: {s}/{n} (one-sided p = {p[k]:.3f})" for k, (s, n) in got.items()) + _failures(r, list(got)),
        f"ours not significantly below the paper's rates ({rates}){note}: a one-sided binomial test at "
        f"{SIGNIFICANCE:g}",
        lambda: _basin_reason(r, list(got)),
        p=min(p.values()),
    )


@claim(
    P,
    "t2-random-fixed-fail-small-d",
    "4.2",
    "In fact, random and fixed for d = 50, 100, 200 failed in all runs.",
    kind="property",
)
def _t2_fail(r):
    table = need(r, "pumadyn/table2")
    settings = [f"{m} d={d}" for m in ("random", "fixed") for d in (50, 100, 200)]
    have = {k: (table[k]["successes"], len(table[k]["runs"])) for k in settings if k in table}
    missing = [k for k in settings if k not in table]
    ours = ", ".join(f"{k}: {s}/{n}" for k, (s, n) in have.items()) + (f"; not run: {missing}" if missing else "")
    ours += _failures(r, list(have))
    if any(s > 0 for s, _ in have.values()):
        return verdict(
            False,
            ours,
            "no successful run in any of the six settings",
            "Ours succeed where the paper's never did; the runs that fail and those that succeed differ in where "
            "they stop. " + _basin_reason(r, list(have)),
        )
    if missing:
        return Verdict("not run", ours, "needs all six settings (random and fixed at d = 50, 100, 200)")
    return verdict(True, ours, "no successful run in any of the six settings")


@claim(
    P,
    "t2-info-gain-d50-once",
    "4.2",
    "Info-gain for d = 50 was successful just once.",
    kind="property",
)
def _t2_d50(r):
    s, n, _ = _t2(r, "info-gain d=50")
    return verdict(s <= max(1, round(0.1 * n)), f"{s}/{n}", "at most one success in ten runs")


@claim(
    P,
    "t2-random-fixed-500-succeed",
    "4.2, Table 2",
    "random d = 500: 8 successful runs of 10; fixed d = 500: 9 of 10.",
    kind="within spread",
)
def _t2_500(r):
    return _against_paper_counts(r, {"random d=500": 8, "fixed d=500": 9})


@claim(
    P,
    "t2-info-gain-500-ten",
    "4.2, Table 2",
    "info-gain d = 500: 10 successful runs of 10 (squared error 0.0296).",
    kind="within spread",
)
def _t2_ig500(r):
    # the same reading as every Table 2 count: a success is an error below the paper's 0.03 cut
    return _against_paper_counts(r, {"info-gain d=500": 10}, f" (success: error below {SUCCESS_ERROR})")


def _capped(run) -> bool:
    return "max_iter" in run["stop"] or "ITERATIONS REACHED" in run["stop"]


@claim(
    P,
    "t2-random-spurious-convergence",
    "4.2",
    "The runs for random often converged (to high accuracy) to poor spurious minima of the criterion approximation.",
    kind="property",
)
def _t2_spurious(r):
    table = need(r, "pumadyn/table2")
    failed = {
        m: [q for k, v in table.items() if v.get("method") == m for q in v["runs"] if q["error"] >= NOISE_ERROR]
        for m in ("random", "fixed")
    }
    converged = {m: sum(not _capped(q) for q in runs) for m, runs in failed.items()}
    if not failed["random"]:
        raise NotRun("a failed random run")
    return verdict(
        converged["random"] >= 0.5 * len(failed["random"]),
        f"random's runs at the all-noise point: {len(failed['random'])}, of which {converged['random']} stopped "
        f"converged and {len(failed['random']) - converged['random']} at the iteration cap; fixed's: "
        f"{len(failed['fixed'])}, {converged['fixed']} converged",
        "often: at least half of random's failed runs (error near 0.5) stop converged, not at the iteration cap",
        lambda: (
            f"Random's failed runs sit at the all-noise point without meeting the stopping test: they ran to the "
            f"cap. Fixed, the same runs with I drawn once and kept, stops converged in {converged['fixed']} of its "
            f"{len(failed['fixed'])}: re-selecting I at every iteration is the one difference between the two."
        ),
    )


@claim(
    P,
    "footnote11-random-no-better-than-fixed",
    "4.2, footnote 11",
    "Somewhat surprisingly, random does not behave better than fixed w.r.t. spurious converge (for d = 500, they "
    "both fail in the same run).",
    kind="order",
)
def _footnote11(r):
    runs = {m: _t2(r, f"{m} d=500")[2]["runs"] for m in ("random", "fixed")}
    bad = {m: [i for i, q in enumerate(v) if q["error"] >= NOISE_ERROR] for m, v in runs.items()}
    shared = sorted(set(bad["random"]) & set(bad["fixed"]))
    return verdict(
        len(bad["random"]) >= len(bad["fixed"]) and bool(shared),
        f"d = 500, runs at the all-noise point: random {bad['random']}, fixed {bad['fixed']} (both: {shared})",
        "random fails in at least as many runs as fixed, and both fail in a common run",
    )


@claim(
    P,
    "t2-info-gain-500-overfits",
    "4.2, Table 2",
    "Somewhat surprisingly, info-gain with d = 500 results in larger squared errors than our scheme for smaller d.",
    kind="order",
)
def _t2_overfit(r):
    err = {d: _t2(r, f"info-gain d={d}")[2]["median_error"] for d in (100, 200, 500)}
    if err[500] is None:
        return verdict(False, "info-gain d = 500 never succeeded", "median error over successful runs")
    smaller = [e for d, e in err.items() if d < 500 and e is not None]
    runs = {d: [q["error"] for q in _t2(r, f"info-gain d={d}")[2]["runs"]] for d in err}

    def paired(d):  # repeat i of every d selects from the same n_MS subset: pair the runs both got right
        both = [(a, b) for a, b in zip(runs[500], runs[d]) if max(a, b) < SUCCESS_ERROR]
        return above(*zip(*both)) if len(both) > 1 else np.nan

    return verdict(
        all(err[500] > e for e in smaller),
        ", ".join(f"d = {d}: {e:.4f}" if e is not None else f"d = {d}: no success" for d, e in err.items()),
        "the median error of successful runs at d = 500 above those at d = 100 and 200; p: the larger one-sided "
        "paired t-test over the repeats where both runs succeeded",
        p=max(paired(d) for d in (100, 200)),
    )


@claim(
    P,
    "t2-sparse-faster-than-full",
    "4.2, Table 2",
    "MS time (secs): full GPR 22100.5; info-gain 9079 (d = 500), 1833.5 (200), 836 (100); random 4412; fixed 9203.",
    kind="order",
)
def _t2_time(r):
    table = need(r, "pumadyn/table2")
    full = table["full GPR"]["median_seconds"]
    if full is None:
        raise NotRun("a successful full GPR run")
    times = {k: v["median_seconds"] for k, v in table.items() if k != "full GPR" and v["median_seconds"] is not None}
    slower = [k for k, t in times.items() if t >= full]

    def per_iter(k):  # seconds per optimiser iteration over the successful runs: where the time goes
        ok = [q for q in table[k]["runs"] if q["error"] < SUCCESS_ERROR]
        return np.median([q["seconds"] / max(q["n_iter"], 1) for q in ok])

    def why():
        d_of = {k: table[k]["d"] for k in times}
        n_ms = need(r, "pumadyn").get("table2_n_ms")
        for k in slower:
            same = sorted((d_of[j], per_iter(j)) for j in times if table[j]["method"] == table[k]["method"])
            if len(same) < 2:
                continue
            (d0, t0), (d1, t1) = same[0], same[-1]
            flops = f" ({n_ms:,} x {d1}^2 = {n_ms * d1 * d1:.1e} flops per selection)" if n_ms else ""
            return (
                f"{k}'s time per iteration grows {t1 / t0:.1f}-fold from d = {d0} to d = {d1} ({t0:.2f} to "
                f"{t1:.2f} s), closer to the {d1 / d0:.0f}-fold of a cost per inclusion than the "
                f"{(d1 / d0) ** 2:.0f}-fold of the O(n d^2) arithmetic{flops}: by that scaling the re-selection's {d1} "
                "sequential inclusions per iteration cost a fixed time each (not profiled), while full GPR's work is "
                "a few large O(n^3) BLAS calls. The paper's times (full GPR 22,100.5 s, info-gain at d = 500 9,079 s) scale "
                "with the arithmetic."
            )
        return "A setting with one d only: no per-iteration scaling to measure."

    return verdict(
        not slower,
        f"full GPR {full:.0f} s; "
        + ", ".join(f"{k} {t:.0f} s" for k, t in times.items())
        + "; per iteration: "
        + ", ".join(f"{k} {per_iter(k):.2f} s" for k in ["full GPR", *slower]),
        "every sparse setting with a successful run takes less median time than full GPR",
        why,
    )


@claim(
    P,
    "fig4-random-plateau",
    "4.2, Fig. 4",
    "Note the dangerously flat plateau in the curve for random (fixed has a very similar curve).",
    kind="property",
)
def _fig4(r):
    f4 = need(r, "pumadyn/fig4")
    plateau, d = f4["random_plateau_iterations"], f4["d"]
    others = ", ".join(f"{k} {v}" for k, v in f4["plateau_iterations"].items() if not k.startswith("random"))
    return verdict(
        plateau >= 10,
        f"random d = {d}: {plateau} iterations (Table 2 run {f4['run']}, {f4['run_kind']}); {others}",
        "a plateau of 10 or more iterations changing the criterion by under 1e-3 (relative), then a fall of over 1 %",
        lambda: _no_random_success(r, f4),
    )


def _no_random_success(r, f4) -> str:
    """Fig. 4 needs a random run that found the relevant attributes; where none did, why."""
    key = f"random d={f4['d']}"
    run = need(r, f"pumadyn/table2/{key}")
    if run["successes"]:
        return f"The plotted random run ended at error {f4['errors'][key]:.4f} (run {f4['run']}, {f4['run_kind']})."
    return (
        f"No {key} run succeeded ({run['successes']} of {len(run['runs'])}; see t2-random-fixed-500-succeed), so "
        f"the plotted run stopped at the all-noise point (error {f4['errors'][key]:.3f}) before any plateau could "
        "be crossed; full GPR's own curve shows a plateau of "
        f"{f4['plateau_iterations'].get('full GPR', 0)} iterations. " + _basin_reason(r, [key])
    )


@claim(
    P,
    "fig4-random-hypers-suboptimal",
    "4.2, Fig. 4",
    "Indeed, training full GPR using the hyperparameters found by random, d = 500, results in a squared error "
    "of 0.0317, suggesting that the hyperparameters are suboptimal.",
    kind="order",
)
def _fig4_hypers(r):
    f4 = need(r, "pumadyn/fig4")
    key = f"random d={f4['d']}"
    at, own = f4["exact_error_at_hypers"][key], f4["errors"]["full GPR"]
    spread = [q["error"] for q in need(r, "pumadyn/table2/full GPR/runs")]
    succeeded = f4["errors"][key] < SUCCESS_ERROR  # the paper's premise: a successful random run

    def why():
        if not succeeded:
            return _no_random_success(r, f4)
        return (
            f"Full GPR's error at random's hyper-parameters is {at / own - 1:+.0%} from its own ({at:.4f} against "
            f"{own:.4f}; the paper: 0.0317 against 0.0236 in Table 2, +34 %), inside full GPR's own spread over its "
            f"{len(spread)} Table 2 runs ({min(spread):.4f} to {max(spread):.4f}): random's hyper-parameters are as "
            "good as full GPR's here (see fig4-random-curve-below-larger-w)."
        )

    return verdict(
        succeeded and at > max(spread),
        f"full GPR at random d = {f4['d']}'s hyper-parameters {at:.4f}, at its own {own:.4f}; full GPR's "
        f"{len(spread)} Table 2 runs {min(spread):.4f} to {max(spread):.4f} (Table 2 run {f4['run']}, {f4['run_kind']})",
        "random successful in the run, and full GPR's error at its hyper-parameters above every one of full GPR's "
        "own Table 2 runs (outside their spread)",
        why,
    )


@claim(
    P,
    "fig4-random-curve-below-larger-w",
    "4.2, Fig. 4",
    "The curve runs below the one for full GPR, and the concrete w_j^{1/2} values are significantly larger than "
    "the ones chosen by the latter.",
    kind="order",
)
def _fig4_curve(r):
    f4 = need(r, "pumadyn/fig4")
    key = f"random d={f4['d']}"
    full, rnd = np.asarray(f4["curves"]["full GPR"], dtype=float), np.asarray(f4["curves"][key], dtype=float)
    k = min(len(full), len(rnd))
    below = float(np.mean(rnd[:k] < full[:k]))
    ig = np.asarray(f4["curves"].get("info-gain d=500", [np.nan]), dtype=float)
    ig_below = float(np.mean(ig[:k] < full[: min(k, len(ig))])) if len(ig) >= k else float("nan")
    w_rnd, w_ig = np.asarray(f4["sqrt_w"][key]), np.asarray(f4["sqrt_w"].get("info-gain d=500", []))
    # "significantly larger": above the largest value full GPR reaches at the same rank over its Table 2 runs
    ranked = [
        np.sort(np.sqrt(np.asarray(q["w"], dtype=float)))[::-1][:4] for q in need(r, "pumadyn/table2/full GPR/runs")
    ]
    top = np.max(ranked, axis=0)
    larger = w_rnd.size >= 4 and bool(np.all(w_rnd[:4] > top))
    ig_larger = w_ig.size >= 4 and bool(np.all(w_ig[:4] > top))
    ours = (
        f"random below full GPR at {below:.0%} of the {k} common iterations (last: {rnd[k - 1]:.1f} against "
        f"{full[k - 1]:.1f}); four largest w_j^(1/2): random {np.round(w_rnd[:4], 3).tolist()}, info-gain d = 500 "
        f"{np.round(w_ig[:4], 3).tolist()}, full GPR's largest over its {len(ranked)} Table 2 runs "
        f"{np.round(top, 3).tolist()}"
    )
    return verdict(
        below == 1.0 and larger,
        ours,
        "random's criterion below full GPR's at every common iteration, and each of its four largest w_j^(1/2) above "
        "the largest full GPR reaches at that rank over its Table 2 runs",
        lambda: (
            f"Random's curve is not below full GPR's and its w_j^(1/2) are within full GPR's own spread. Info-gain "
            f"d = 500 shows the pattern instead: its curve below full GPR's at {ig_below:.0%} of the common "
            f"iterations (last: {ig[-1]:.1f}), its four largest w_j^(1/2) "
            + ("each above" if ig_larger else "not all above")
            + " full GPR's largest at that rank. Why random ends elsewhere than the paper's run is not measured."
        ),
    )


@claim(
    P,
    "footnote9-rbf",
    "4.1, footnote 9",
    "Using the RBF kernel [...] resulting in a squared error of 0.4730. However, if only the four relevant "
    "attributes are used, full GPR with the RBF kernel attains a squared error of 0.024.",
    kind="about",
)
def _footnote9(r):
    all_attr, four = need(r, "pumadyn/rbf/all_attributes_error"), need(r, "pumadyn/rbf/four_attributes_error")
    return verdict(
        all_attr > 0.3 and four < SUCCESS_ERROR,
        f"RBF on all attributes {all_attr:.4f}, on the four {four:.4f}",
        f"all attributes near the all-noise error (above 0.3), the four below {SUCCESS_ERROR}",
    )


LEVEL = 0.1  # a level the paper gives without a spread: within 10 % (our reading, as for pumadyn-full-gpr-error)


def _table2_levels(r, column: str, field: str, what: str):
    """Verdict: each Table 2 row's median ``field`` over its successful runs within LEVEL of the paper's
    ``column``."""
    paper = {k: getattr(row, column) for k, row in PAPER_TABLE2_MEDIANS.items()}
    rows = {k: need(r, f"pumadyn/table2/{k}") for k in paper}
    got = {k: row[field] for k, row in rows.items() if row.get(field) is not None}
    if not got:
        raise NotRun(f"Table 2's {what}")
    off = {k: v / paper[k] - 1 for k, v in got.items() if abs(v / paper[k] - 1) > LEVEL}
    return verdict(
        len(got) == len(paper) and not off,
        ", ".join(f"{k}: {v:.4g} (paper {paper[k]:g})" for k, v in got.items())
        + "".join(f", {k}: no successful run" for k in paper if k not in got),
        f"each row's median {what} over its successful runs within {LEVEL:.0%} of the paper's",
        lambda: (
            "Outside the band: "
            + ", ".join(f"{k} {f:+.0%}" for k, f in off.items())
            + "".join(f"; {k} has no successful run" for k in paper if k not in got)
            + ". The run's optimiser stops are the protocol table's; not measured further."
        ),
    )


@claim(
    P,
    "t2-error-levels",
    "4.2, Table 2",
    "Squared error: full GPR 0.0236; info-gain 0.0296 (d = 500), 0.0259 (200), 0.0252 (100); random 0.0244 "
    "(500); fixed 0.0239 (500).",
    kind="about",
)
def _t2_errors(r):
    return _table2_levels(r, "error", "median_error", "squared error")


@claim(
    P,
    "t2-iteration-counts",
    "4.2, Table 2",
    "# Iter. optim.: full GPR 200; info-gain 200 (d = 500), 177.5 (200), 200 (100); random 95 (500); fixed 200 (500).",
    kind="about",
)
def _t2_iterations(r):
    return _table2_levels(r, "iterations", "median_iter", "optimiser iterations")


def _exponents(times: dict, n_lo: int, n_hi: int, d: list) -> tuple[float, float]:
    """(the exponent of the time in d at n_hi, a log-log fit over the upper half of d; the exponent in n at the
    largest d, from n_lo to n_hi)."""
    upper = [i for i, x in enumerate(d) if x >= np.median(d)]
    t_hi = np.asarray(times[n_hi], dtype=float)
    return exponent(np.asarray(d)[upper], t_hi[upper]), exponent([n_lo, n_hi], [times[n_lo][-1], t_hi[-1]])


@claim(
    P,
    "t1-scaling-n-d2",
    "1, Table 1",
    "[Sparse methods] typically lead to a more favourable training scaling as well, such as O(n d^2) time.",
    kind="about",
)
def _scaling(r):
    ns = _kin_ns(r)
    if len(ns) < 2:
        raise NotRun("Table 1 at two n")
    out, ok = [], True
    for m in ("info-gain", "random"):
        curves = {n: _curve(r, m, n) for n in ns}
        d = [int(x) for x in curves[ns[-1]][0]]
        ours = _exponents({n: c[2] for n, c in curves.items()}, ns[0], ns[-1], d)
        paper = _exponents({n: PAPER_TIMES[n][m] for n in PAPER_TIMES}, 2000, 10000, PAPER_D)
        ok &= abs(ours[0] - 2) <= EXPONENT_TOLERANCE and abs(ours[1] - 1) <= EXPONENT_TOLERANCE
        out.append(
            f"{m}: time ~ d^{ours[0]:.2f} (paper's table d^{paper[0]:.2f}), n^{ours[1]:.2f} (paper's n^{paper[1]:.2f})"
        )
    return verdict(
        bool(ok),
        "; ".join(out),
        f"the selection time's exponent in d (a log-log fit over the upper half of d at the largest n) within "
        f"{EXPONENT_TOLERANCE} of 2, and in n (at the largest d) within {EXPONENT_TOLERANCE} of 1, for info-gain and "
        "random",
        lambda: (
            "The measured exponents leave the band: at these sizes the selection's fixed costs per inclusion "
            "weigh against the O(n d) arithmetic of each (see t1-random-as-fast); not measured further."
        ),
    )


PAPER_MS_SECONDS = {k: row.seconds for k, row in PAPER_TABLE2_MEDIANS.items()}  # Table 2's MS time (secs)
TIME_FACTOR = 2.0  # a time ratio reproduced "about" on other hardware: within this factor (our reading)


@claim(
    P,
    "t2-ms-time-ratios",
    "4.2, Table 2",
    "MS time (secs): full GPR 22100.5; info-gain 9079 (d = 500), 1833.5 (200), 836 (100); random 4412; fixed 9203 "
    "[as shares of full GPR's].",
    kind="about",
)
def _t2_time_ratios(r):
    table = need(r, "pumadyn/table2")
    full = need(table, "full GPR/median_seconds")
    got = {
        k: (table[k]["median_seconds"] / full, v / PAPER_MS_SECONDS["full GPR"])
        for k, v in PAPER_MS_SECONDS.items()
        if k != "full GPR" and k in table and table[k].get("median_seconds") is not None
    }
    if not got:
        raise NotRun("Table 2's model-selection times")
    off = {k: o / p for k, (o, p) in got.items() if not 1 / TIME_FACTOR <= o / p <= TIME_FACTOR}
    return verdict(
        len(got) == len(PAPER_MS_SECONDS) - 1 and not off,
        ", ".join(f"{k} {o:.2f} of full GPR's (paper {p:.2f})" for k, (o, p) in got.items()),
        f"each sparse row's median MS time as a share of full GPR's within a factor {TIME_FACTOR:g} of the paper's "
        "share (our reading; the machines differ)",
        lambda: (
            "Outside the factor: "
            + ", ".join(f"{k} {f:.1f} times the paper's share" for k, f in off.items())
            + f". Full GPR's model selection took {full:.0f} s here against the paper's 22,100.5 s, "
            f"{PAPER_MS_SECONDS['full GPR'] / full:.0f} times faster, while the sparse rows gained "
            + ", ".join(f"{k} {PAPER_MS_SECONDS[k] / table[k]['median_seconds']:.0f} times" for k in got)
            + ": the exact GP's dense algebra gained most on this machine; not measured further."
        ),
    )
