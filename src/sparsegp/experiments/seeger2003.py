"""Seeger, Williams & Lawrence (2003): Table 1 timings and Fig. 1 learning curves on kin40k.

Protocol (sec. 4.1): kin40k's fixed 10,000 / 30,000 split, preprocessed as in
their footnote 8 (a linear regression fit subtracted, attributes at unit
variance); SE-ARD hyper-parameters from an exact GP fitted on n_MS random
training rows, which are also the first rows of every training set; active
sets grown with info-gain (full greedy, eq. 3), random, and smo-bart
(Delta^SB over kappa = 30 random candidates). Times are the cumulative
selection time to reach each d (kernel columns included); learning curves are
the average squared error (1/2)(y - mu)^2 of the PP mean on the test rows.
smo-bart is also timed scoring one candidate at a time (``smo-bart-seq``), as
the 2003 implementations did.
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np
import scipy.linalg as sl

from ..fitting.training import FTOL, GTOL
from .learning_curves import avg_sq_error, plot_learning_curves
from .seeger2003_paper import PAPER_D, PAPER_TIMES
from .steps import direct

KIN40K_INIT_LENGTHSCALE = 1.0  # the exact GP's start on kin40k (C = 1, noise 0.1, v_b = 0.1)

MODES: dict[str, dict[str, Any]] = {
    "quick": dict(n=[1000], d=[50, 100, 200], kappa=30, n_ms=500, methods=["info-gain", "random", "smo-bart"]),
    "full": dict(
        n=[2000, 10000],
        d=PAPER_D,
        kappa=30,
        n_ms=2000,
        repeats=10,
        methods=["info-gain", "random", "smo-bart", "smo-bart-seq"],
    ),
}
PUMADYN: dict[str, dict[str, Any]] = {
    "quick": dict(
        curves=dict(
            n=[800], d=[25, 50], kappa=30, n_ms=300, methods=["info-gain", "random", "smo-bart"], ms_max_iter=30
        ),
        traj_n_ms=300,
        traj_d=(25,),
        traj_max_iter=12,
        traj_every=4,
        table2_n_ms=300,
        table2_configs=[("info-gain", 25, 1), ("random", 25, 1), ("fixed", 25, 1)],
        table2_runs=1,
        table2_max_iter=8,
        rbf_max_iter=30,
    ),
    "full": dict(
        curves=dict(
            n=[7168],
            d=[25, 50, 75, 100, 125, 150, 200, 300, 500],
            kappa=30,
            n_ms=1024,
            methods=["info-gain", "random", "smo-bart"],
            repeats=10,
        ),
        traj_n_ms=1024,
        traj_d=(100, 200),
        traj_max_iter=60,
        traj_every=1,
        table2_n_ms=2048,
        # (method, d, runs): the paper's ten runs of every row
        table2_configs=[(m, d, 10) for m in ("info-gain", "random", "fixed") for d in (50, 100, 200, 500)],
        table2_runs=10,
        table2_max_iter=200,
        rbf_max_iter=300,
    ),
}


def prefix_test_error(sel, oracle, Xt, yt, ds):
    """Average squared error (1/2)(y - mu)^2 of the PP predictive mean for each prefix I[:d]."""
    st = sel.state
    Vt = sl.solve_triangular(st.L[: st.d, : st.d], oracle.cross(Xt, st.I).T, lower=True)  # L^-1 K_{I,*}
    out = []
    for d in ds:
        if d > st.d:
            out.append(float("nan"))
            continue
        w = sl.solve_triangular(st.LM[:d, :d], st.beta[:d], lower=True, trans="T")
        out.append(float(np.mean(0.5 * (yt - Vt[:d].T @ w) ** 2)))
    return out


def run_table1(
    *,
    n=(2000, 10000),
    d=tuple(PAPER_D),
    kappa=30,
    n_ms=2000,
    methods=("info-gain", "random", "smo-bart", "smo-bart-seq"),
    log=None,
    dataset="kin40k",
    init_lengthscale=KIN40K_INIT_LENGTHSCALE,
    ms_max_iter=300,
    repeats=1,
    verbose=False,
) -> dict:
    """Selection times and learning curves; ``dataset`` "kin40k" (Table 1, Fig. 1) or "pumadyn32nm" (Fig. 2,
    where the exact GP needs length-scales started at 5: from 1 it stops at the all-noise optimum)."""
    from .. import datasets
    from ..kernels.gram import gram
    from ..selection import greedy_select
    from ..selection.criteria import InfoGainRule, RandomRule, SmolaBartlettRule
    from .protocols import exact_on_subset

    X10, y10, Xt, yt = datasets.load(dataset, split="fixed", preprocessing="linear")
    # one repeat, one model selection: repeat r draws its own n_MS rows (the first of a permutation by seed r)
    # and fits its own full GP on them, so that the repeats vary the hyper-parameters as the paper's do
    perms = [np.random.default_rng(r).permutation(len(X10)) for r in range(repeats)]
    fits, fit_s = [], []
    for r in range(repeats):
        t0 = time.perf_counter()
        gp, _ = exact_on_subset(
            X10, y10, n_ms, init_lengthscale, seed=r, max_iter=ms_max_iter, paper_model=True, verbose=verbose
        )
        fit_s.append(time.perf_counter() - t0)
        fits.append(gp)
    gp = fits[0]
    kernel, noise = gp.kernel_, gp.noise_
    full_errs = [avg_sq_error(g, Xt, yt) for g in fits]
    rules = {
        "info-gain": (InfoGainRule, "full", True),
        "random": (RandomRule, "full", True),
        "smo-bart": (SmolaBartlettRule, kappa, True),
        "smo-bart-seq": (SmolaBartlettRule, kappa, False),
    }

    def training_set(size, r=0):  # repeat r's n_MS rows first, so n = n_MS is exactly its model-selection set
        return X10[perms[r][:size]], y10[perms[r][:size]]

    for size in n:  # compile the kernel evaluators for every shape before timing anything
        for method in methods:
            rule, cand, batched = rules[method]
            greedy_select(
                rule(), kernel, noise, *training_set(size), size=3, candidates=cand, batched=batched, random_state=0
            )
    from ..progress import progress_bar

    rows, curves = [], {}
    n_runs = len(n) * sum(1 if m.startswith("smo-bart") else repeats for m in methods)
    bar = progress_bar(total=n_runs, desc=f"{dataset} selection runs", verbose=verbose, unit="run")
    for size in n:
        ds = [q for q in d if q <= size]
        for method in methods:
            rule, cand, batched = rules[method]
            if log:
                log(f"running {method} n={size} d_max={max(ds)}")
            runs_t, runs_e = [], []
            # smo-bart (30x the cost) and its sequential timing variant run once; info-gain and random `repeats` times
            for r in range(1 if method.startswith("smo-bart") else repeats):
                X, y = training_set(size, r)
                kernel, noise = fits[r].kernel_, fits[r].noise_
                sel = greedy_select(
                    rule(), kernel, noise, X, y, size=max(ds), candidates=cand, batched=batched, random_state=1 + r
                )
                secs = sel.curve("seconds")
                runs_t.append([float(secs[q - 1]) for q in ds])
                runs_e.append(prefix_test_error(sel, gram(kernel, X, engine="jax"), Xt, yt, ds))
                bar.update(1)  # between timed runs, so the bar costs the timings nothing
            times = np.median(runs_t, axis=0).tolist()  # medians over repeats, as the paper quotes
            errs = np.median(runs_e, axis=0).tolist()
            curves[f"{method} n={size}"] = {
                "d": ds,
                "time_s": times,
                "avg_sq_error": errs,
                "runs": len(runs_t),
                "time_s_runs": runs_t,
                "avg_sq_error_runs": runs_e,
            }
            paper = PAPER_TIMES.get(size, {}).get(method.replace("-seq", ""))
            for q, t, e in zip(ds, times, errs):
                row = {"n": size, "method": method, "d": q, "time_s": t, "avg_sq_error": e}
                if paper and q in PAPER_D:
                    row["paper_time_s"] = paper[PAPER_D.index(q)]
                rows.append(row)
    bar.close()
    for row in rows:  # ratios to info-gain at the same n and d
        ref = [q for q in rows if q["n"] == row["n"] and q["d"] == row["d"] and q["method"] == "info-gain"]
        if ref and ref[0]["time_s"] > 0:
            row["ratio_to_info_gain"] = row["time_s"] / ref[0]["time_s"]
            if "paper_time_s" in row:
                row["paper_ratio"] = row["paper_time_s"] / PAPER_TIMES[row["n"]]["info-gain"][PAPER_D.index(row["d"])]
    return {
        "split": [int(len(X10)), int(len(Xt))],
        "rows": rows,
        "curves": curves,
        "full_gp": {  # the median over the repeats' fits (as the paper quotes); w, bias, noise: the first fit's
            "n_ms": n_ms,
            "fits": repeats,
            "avg_sq_error": float(np.median(full_errs)),
            "avg_sq_error_runs": full_errs,
            "fit_s": float(np.median(fit_s)),
            "fit_s_runs": fit_s,
            "n_iter": int(gp.n_iter_),
            "w": (np.asarray(gp.kernel_.lengthscale, dtype=float) ** -2).tolist(),  # the paper's W = diag(w_j)
            "attributes": int(np.size(gp.kernel_.lengthscale)),
            "bias": float(gp.kernel_.host_form().constant),
            "noise": float(gp.noise_),
        },
    }


def reproduce(out_dir: str, mode: str = "quick", verbose: bool = False, command: str | None = None, step=direct) -> str:
    from . import seeger2003_pumadyn as pd
    from .report import Report

    cfg = MODES[mode]
    rep = Report("seeger2003", "Seeger, Williams & Lawrence (2003): fast forward selection", mode, command)
    pcfg = PUMADYN[mode]
    rep.protocol("kin40k n", "2,000, 10,000", ", ".join(f"{q:,}" for q in cfg["n"]), "the --quick mode subsamples")
    rep.protocol("kin40k d", ", ".join(map(str, PAPER_D)), ", ".join(map(str, cfg["d"])), "the --quick mode subsamples")
    reps = cfg.get("repeats", 1)
    rep.protocol("kin40k repeats (info-gain, random / smo-bart)", "10 / 10", f"{reps} / 1", "time: smo-bart is 10-20x")
    rep.protocol(
        "model selection per repeat (kin40k and pumadyn curves)",
        "not stated (each repeat's n_MS subset, our reading of 'experiments are repeated ten times')",
        f"one n_MS subset and full-GP fit per repeat: kin40k {reps}, pumadyn {pcfg['curves'].get('repeats', 1)}",
        "" if reps > 1 else "the --quick mode runs one",
    )
    rep.protocol(
        "hyper-parameters' start",
        "as recommended by Rasmussen (1996), values not stated (footnote 10)",
        f"length-scale {KIN40K_INIT_LENGTHSCALE:g} on kin40k, {pd.INIT_LENGTHSCALE:g} on pumadyn; "
        "C = 1, noise 0.1, v_b = 0.1",
        "Rasmussen's values are not given; on pumadyn a start at 1 stops at the all-noise optimum",
    )
    rep.protocol(
        "optimiser",
        "quasi-Newton, its stopping rule not stated",
        f"L-BFGS-B: relative decrease under {FTOL:g} or projected gradient under {GTOL:g}, or the iteration cap",
        "the paper does not state its optimiser's settings",
    )
    rep.protocol(
        "Table 1 times",
        "training time (not stated whether model selection is included), 2003 hardware",
        "the selection of I only (model selection excluded), this machine (2 cores)",
        "the machines differ; the ratios between methods are compared",
    )
    rep.protocol("smo-bart candidates kappa", 30, cfg["kappa"])
    rep.protocol("pumadyn curves: repeats", 10, pcfg["curves"].get("repeats", 1), "the --quick mode shortens")
    every = "every iteration" if pcfg["traj_every"] == 1 else f"every {pcfg['traj_every']}"
    rep.protocol(
        "Fig. 3: iterates plotted",
        "every iteration of the fit",
        f"{every} of the first {pcfg['traj_max_iter']}",
        "time (every iterate re-selects I per method and d); the fit runs on to convergence (pumadyn curves' full "
        "GPR, the same n_MS, below); the --quick mode thins",
    )
    runs = sorted({k for *_, k in pcfg["table2_configs"]})
    rep.protocol(
        "Table 2: runs per row",
        10,
        f"full GPR {pcfg['table2_runs']}; "
        + ", ".join(f"{m} {d}: {k}" for m, d, k in pcfg["table2_configs"] if k != pcfg["table2_runs"])
        if len(runs) > 1 or runs[0] != pcfg["table2_runs"]
        else pcfg["table2_runs"],
        "time: each d = 500 fit takes about as long as full GPR's" if mode == "full" else "the --quick mode shortens",
    )
    paper_rows = "full GPR; info-gain, random, fixed at d = 50, 100, 200, 500"
    ours_rows = {(m, d) for m, d, _ in pcfg["table2_configs"]}
    rep.protocol(
        "Table 2: rows",
        paper_rows,
        paper_rows
        if ours_rows == {(m, d) for m in ("info-gain", "random", "fixed") for d in (50, 100, 200, 500)}
        else "full GPR; " + ", ".join(f"{m} {d}" for m, d in sorted(ours_rows)),
        "the --quick mode subsamples",
    )
    rep.protocol("Table 2: iteration cap", 200, pcfg["table2_max_iter"], "the --quick mode shortens")
    rep.protocol(
        "hyper-priors",
        "Rasmussen (1996), not stated in the paper",
        "w_j ~ Gamma(shape 1, mean 1/D); log-normal, sd 2 in log, about C = 1 and noise 0.1; none on v_b",
        "the paper does not give Rasmussen's parameters",
    )
    rep.protocol("kernel bias v_b", "fitted", "fitted")
    out = step("kin40k", run_table1, verbose=verbose, **cfg)
    split = out["split"]
    rep.text(f"""kin40k, fixed split ({split[0]:,} / {split[1]:,}), footnote-8 preprocessing; hyper-parameters (with v_b and the
hyper-priors of the protocol table) from an exact GP on
n_MS = {cfg["n_ms"]:,} rows (its test average squared error: {out["full_gp"]["avg_sq_error"]:.4f}); training sets
n = {", ".join(f"{q:,}" for q in cfg["n"])}{"" if mode == "full" else " (the paper: 2,000 and 10,000)"}; medians of
{cfg.get("repeats", 1)} run(s) for info-gain and random, one for smo-bart (the paper: medians of 10). Times on this machine; the paper's on 2003 hardware.""")
    rep.table(
        ["n", "method", "d", "time s", "paper s", "ratio to info-gain", "paper ratio", "avg squared error"],
        [
            [
                r["n"],
                r["method"],
                r["d"],
                r["time_s"],
                r.get("paper_time_s"),
                r.get("ratio_to_info_gain"),
                r.get("paper_ratio"),
                r["avg_sq_error"],
            ]
            for r in out["rows"]
        ],
        caption="Table 1: selection time to reach d, and the learning curves' values",
    )
    plot_learning_curves(os.path.join(out_dir, "learning_curves_kin40k.png"), out, cfg["n"], cfg["methods"])
    rep.figure("learning_curves_kin40k.png", "Fig. 1: average squared test error against d")
    pcfg = PUMADYN[mode]
    curves = step(
        "pumadyn-curves",
        run_table1,
        dataset="pumadyn32nm",
        init_lengthscale=pd.INIT_LENGTHSCALE,
        verbose=verbose,
        **pcfg["curves"],
    )
    traj_args = (pcfg[k] for k in ("traj_n_ms", "traj_d", "traj_max_iter", "traj_every"))
    traj = step("pumadyn-trajectory", pd.trajectory, *traj_args, verbose=verbose)
    table2 = pd.model_selection(
        pcfg["table2_n_ms"], pcfg["table2_configs"], pcfg["table2_runs"], pcfg["table2_max_iter"], verbose, step
    )
    rbf_out = step(
        "pumadyn-rbf", pd.rbf, curves["full_gp"]["n_ms"], curves["full_gp"]["w"], pcfg["rbf_max_iter"], verbose=verbose
    )
    extra = pd.report(rep, out_dir, curves, traj, table2, dict(pcfg["curves"], **pcfg), rbf_out)
    rep.results = {
        **out,
        "pumadyn": {
            "learning_curves": curves,
            "trajectory": traj,
            "table2": table2,
            "table2_n_ms": pcfg["table2_n_ms"],
            **extra,
        },
    }
    return rep.write(out_dir)
