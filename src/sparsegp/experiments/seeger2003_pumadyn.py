"""Seeger, Williams & Lawrence (2003) on pumadyn-32nm: Fig. 2, Fig. 3 and Table 2.

Data: the canonical 7,168 / 1,024 split, footnote-8 preprocessing (a linear
regression fit subtracted, attributes at unit variance); SE-ARD kernel over 32
attributes. Only four attributes matter; an exact GP on n_MS rows finds them
when its length-scales start at 5 (from 1 it stops at once at the all-noise
optimum, average squared error 0.48 = what a linear fit leaves).

Fig. 2: learning curves of info-gain, random and smo-bart on all 7,168 rows at
the exact GP's hyper-parameters (n_MS = 1,024). Fig. 3: along the exact GP's
optimisation trajectory (n_MS = 1,024), the PP (DTC) approximate criterion
with I re-selected at every recorded iterate by info-gain or random, against
the exact criterion. Table 2: sparse model selection on n_MS = 2,048 rows, I
re-selected at each new search direction (info-gain, random) or drawn once
(fixed); a run succeeds when its average squared test error is below 0.03. Fig. 4: the criterion
curves of one run of Table 2 in which the methods succeeded, and the largest w_j^(1/2). Footnote 9: full
GPR with the RBF kernel (W = w I) on all attributes and on the four the ARD fit singles out. Every model
has the paper's bias v_b and hyper-priors (:func:`~sparsegp.experiments.protocols.seeger_model`).
"""

from __future__ import annotations

import os
import time

import numpy as np

from .. import datasets
from ..estimators import ExactGPRegressor, SparseGPRegressor
from ..options import Interleaved, Joint, Noise
from ..progress import progress_bar
from ..transforms import to_positive
from .protocols import exact_on_subset, fixed_sparse, seeger_model
from .seeger2003_paper import PAPER_TABLE2
from .steps import direct

INIT_LENGTHSCALE = 5.0
SUCCESS = 0.03
PAPER_FULL_ERROR = 0.0225  # sec. 4.1: full GPR on n_MS = 1,024


def _data():
    return datasets.load("pumadyn32nm", split="fixed", preprocessing="linear")


def trajectory(n_ms, d_values, max_iter, every, seed=0, verbose=False):
    """Fig. 3: exact criterion and the info-gain / random PP criteria along the exact GP's trajectory, each the
    paper's phi(theta) - log P(theta) (sec. 2.3): the negative log marginal likelihood, exact or approximate, minus the
    log hyper-prior of the same hyper-parameters (the exact one is the optimiser's own objective)."""
    from ..priors import log_hyper_prior
    from ..selection import InfoGain, Random

    X, y, _, _ = _data()
    noise_prior = seeger_model(X.shape[1], INIT_LENGTHSCALE)[1]
    path = []

    def record(it, value, params):
        log_prior = float(log_hyper_prior(params, noise_prior))
        path.append((it, value, params["kernel"], float(to_positive(params["raw_noise"])), log_prior))

    _, ms = exact_on_subset(
        X, y, n_ms, INIT_LENGTHSCALE, seed=seed, max_iter=max_iter, callback=record, paper_model=True, verbose=verbose
    )
    X, y = X[ms], y[ms]
    keep = [p for p in path if (p[0] - 1) % every == 0 or p is path[-1]]  # iterations 1, 1 + every, ... and the last
    out = {
        "iteration": [int(p[0]) for p in keep],
        "exact": [float(p[1]) for p in keep],
        "log_prior": [p[4] for p in keep],
        "criteria_include_the_prior": True,
    }
    with progress_bar(total=len(keep) * len(d_values) * 2, desc="pumadyn trajectory", verbose=verbose) as bar:
        for name, selector in (("info-gain", InfoGain), ("random", Random)):
            for d in d_values:
                vals = []
                for it, _, kernel, noise, log_prior in keep:
                    model = fixed_sparse(kernel, noise, selector(d), random_state=it).fit(X, y)
                    vals.append(-float(model.objective_) - log_prior)
                    bar.update(1)
                out[f"{name} d={d}"] = vals
    return out


def model_selection(n_ms, configs, runs, max_iter, verbose=False, step=direct):
    """Table 2: full GPR (``runs`` runs) and sparse model selection (``configs``: (method, d, runs)) from the
    same start; medians over successful runs. At Fig. 4's d (the largest) each run keeps its criterion
    curve, its hyper-parameters and the test error of full GPR at those hyper-parameters. Each row is one
    ``step`` (``pumadyn-table2-<method>-<d>``), so that a stopped reproduction keeps the rows it finished."""
    d_fig4 = max(d for _, d, _ in configs)
    records = {}
    with progress_bar(total=runs + sum(k for *_, k in configs), desc="pumadyn model selection", verbose=verbose) as bar:
        for method, d, k in [("full GPR", None, runs)] + list(configs):
            name = "pumadyn-table2-" + method.replace(" ", "-") + (f"-{d}" if d else "")
            rec = step(name, _table2_row, method, d, k, n_ms, max_iter, d == d_fig4)
            records[f"{method} d={d}" if d else method] = rec
            bar.update(k)
    for rec in records.values():
        ok = [q for q in rec["runs"] if q["error"] < SUCCESS]
        rec["successes"] = len(ok)
        rec["median_error"] = float(np.median([q["error"] for q in ok])) if ok else None
        rec["median_iter"] = float(np.median([q["n_iter"] for q in ok])) if ok else None
        rec["median_seconds"] = float(np.median([q["seconds"] for q in ok])) if ok else None
        rec["median_error_all"] = float(np.median([q["error"] for q in rec["runs"]]))
    return records


def _table2_row(method, d, runs, n_ms, max_iter, at_fig4_d):
    """One row of Table 2: ``runs`` fits of ``method`` (full GPR when ``d`` is None), run r on the n_MS rows
    drawn with seed 100 + r."""
    from ..selection import InfoGain, Random
    from .learning_curves import avg_sq_error

    X, y, Xt, yt = _data()
    D = X.shape[1]
    rec = {"method": method, "d": d, "runs": []}
    for r in range(runs):
        ms = np.random.default_rng(100 + r).permutation(len(X))[:n_ms]
        Xm, ym = X[ms], y[ms]
        kernel, noise_prior = seeger_model(D, np.full(D, INIT_LENGTHSCALE))
        t0 = time.perf_counter()
        if method == "full GPR":
            model = ExactGPRegressor(
                kernel, noise=0.1, noise_prior=noise_prior, normalize_y=False, max_iter=max_iter
            ).fit(Xm, ym)
        else:
            model = SparseGPRegressor(
                kernel,
                approximation="dtc",
                inducing=InfoGain(d) if method == "info-gain" else Random(d),
                noise=Noise(0.1, prior=noise_prior),
                optimize="hyperparameters",
                normalize_y=False,
                schedule=(Joint if method == "fixed" else Interleaved)(max_iter=max_iter),
                random_state=r,
            ).fit(Xm, ym)
        run = {"error": avg_sq_error(model, Xt, yt), "n_iter": int(model.n_iter_)}
        run["seconds"] = time.perf_counter() - t0
        # where and why the run stopped: the ARD weights and the noise tell the two profiles apart
        run.update(
            w=(np.asarray(model.kernel_.lengthscale, dtype=float) ** -2).tolist(),
            noise=float(model.noise_),
            stop=model.optimizer_report_.reason,
        )
        if d is None or at_fig4_d:
            run["history"] = [float(v) for v in model.optimizer_report_.history]
            if d is not None:  # full GPR at the sparse method's hyper-parameters (sec. 4.2)
                gp = ExactGPRegressor(model.kernel_, noise=model.noise_, optimize=False, normalize_y=False)
                run["exact_error_at_hypers"] = avg_sq_error(gp.fit(Xm, ym), Xt, yt)
        rec["runs"].append(run)
    return rec


PLATEAU_TOL, PLATEAU_DROP = 1e-3, 0.01  # Fig. 4's plateau: relative change per iteration under, then a fall over


def longest_plateau(history, tol=PLATEAU_TOL, drop=PLATEAU_DROP) -> int:
    """Fig. 4's flat plateau: the longest stretch of iterations whose criterion changes by less than
    ``tol`` (relative, |f| + 1) per iteration and after which it falls again by more than ``drop`` (relative)."""
    f = np.asarray(history, dtype=float)
    flat = np.abs(np.diff(f)) < tol * (np.abs(f[:-1]) + 1)
    best, i = 0, 0
    while i < len(flat):
        if not flat[i]:
            i += 1
            continue
        j = i
        while j < len(flat) and flat[j]:
            j += 1
        if j < len(flat) and f[j] - f[j:].min() > drop * (abs(f[j]) + 1):
            best = max(best, j - i)
        i = j
    return int(best)


def fig4(table2):
    """Fig. 4 from Table 2's runs at its largest d: the first run in which full GPR and every sparse method
    succeeded (else the first in which random did, else run 0), its plateaus and hyper-parameters."""
    d = max(rec["d"] for rec in table2.values() if rec["d"] is not None)
    keys = ["full GPR"] + [f"{m} d={d}" for m in ("info-gain", "random", "fixed")]
    keys = [k for k in keys if k in table2]

    def ok(key, r):
        runs = table2[key]["runs"]
        return r < len(runs) and runs[r]["error"] < SUCCESS

    n = min(len(table2[k]["runs"]) for k in keys)
    every = [r for r in range(n) if all(ok(k, r) for k in keys)]
    rnd = [r for r in range(n) if ok(f"random d={d}", r)]
    run, kind = (
        (every[0], "every method successful")
        if every
        else (rnd[0], "random successful, not every method")
        if rnd
        else (0, "random failed in every run")
    )
    runs = {k: table2[k]["runs"][run] for k in keys}
    return {
        "d": d,
        "run": run,
        "run_kind": kind,
        "curves": {k: v["history"] for k, v in runs.items()},
        "sqrt_w": {k: sorted(np.sqrt(v["w"]).tolist(), reverse=True)[:6] for k, v in runs.items()},
        "plateau_iterations": {k: longest_plateau(v["history"]) for k, v in runs.items()},
        "plateau_tol": PLATEAU_TOL,
        "plateau_drop": PLATEAU_DROP,
        "random_plateau_iterations": longest_plateau(runs[f"random d={d}"]["history"]),
        "errors": {k: v["error"] for k, v in runs.items()},
        "exact_error_at_hypers": {k: v["exact_error_at_hypers"] for k, v in runs.items() if k != "full GPR"},
    }


def rbf(n_ms, w_ard, max_iter, verbose=False):
    """Footnote 9: full GPR with the RBF kernel (W = w I) on the n_MS rows of the ARD fit, on all attributes
    and on the four with the largest ARD w_j."""
    from .learning_curves import avg_sq_error

    X, y, Xt, yt = _data()
    rows = np.random.default_rng(0).permutation(len(X))[:n_ms]  # exact_on_subset's rows, seed 0
    four = sorted(np.argsort(w_ard)[::-1][:4].tolist())
    out = {"n_ms": n_ms, "four_attributes": four}
    for name, cols in (("all_attributes", list(range(X.shape[1]))), ("four_attributes", four)):
        kernel, noise_prior = seeger_model(len(cols), INIT_LENGTHSCALE)
        gp = ExactGPRegressor(
            kernel, noise=0.1, noise_prior=noise_prior, normalize_y=False, max_iter=max_iter, verbose=verbose
        ).fit(X[rows][:, cols], y[rows])
        out[f"{name}_error"] = avg_sq_error(gp, Xt[:, cols], yt)
    return out


def plot_trajectory(path, traj):
    from ..plotting import pyplot, save_figure

    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    it = traj["iteration"]
    for ax, name in zip(axes, ("info-gain", "random")):
        ax.plot(it, traj["exact"], "k-", lw=2, label="full GP")
        for key, vals in traj.items():
            if key.startswith(name):
                ax.plot(it, vals, marker=".", label=key)
        # symlog: the approximations spike by 10^5 at some iterates; the near-exact stretches must stay visible
        ax.set_yscale("symlog", linthresh=1e3)
        ax.set(
            xlabel="iteration of the full-GP optimisation",
            ylabel="negative log marginal likelihood (symlog)",
            title=f"{name}: PP criterion along the full-GP trajectory",
        )
        ax.legend(fontsize=8)
    fig.suptitle("pumadyn-32nm (Seeger et al. 2003, Fig. 3)")
    fig.tight_layout()
    save_figure(fig, path, dpi=100)


def plot_fig4(path, f4):
    from ..plotting import pyplot, save_figure

    plt = pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for key, hist in f4["curves"].items():
        left.plot(np.arange(1, len(hist) + 1), hist, lw=2 if key == "full GPR" else 1, label=key)
    left.set_yscale("symlog", linthresh=1e2)
    left.set(xlabel="iteration of the optimiser", ylabel="criterion (symlog)", title=f"Table 2, run {f4['run']}")
    left.legend(fontsize=8)
    keys = list(f4["sqrt_w"])
    width = 0.8 / len(keys)
    for i, key in enumerate(keys):
        vals = f4["sqrt_w"][key]
        right.bar(np.arange(len(vals)) + i * width, vals, width, label=key)
    right.set(xlabel="rank", ylabel="w_j^(1/2)", title="largest inverse length-scales")
    right.legend(fontsize=8)
    fig.suptitle("pumadyn-32nm (Seeger et al. 2003, Fig. 4)")
    fig.tight_layout()
    save_figure(fig, path, dpi=100)


def report(rep, out_dir, curves, traj, table2, cfg, rbf_out):
    from .learning_curves import plot_learning_curves

    full = curves["full_gp"]
    plot_learning_curves(
        os.path.join(out_dir, "learning_curves_pumadyn.png"),
        curves,
        cfg["n"],
        cfg["methods"],
        dataset="pumadyn-32nm",
        paper_full=PAPER_FULL_ERROR,
    )
    w = np.asarray(full["w"])
    top = np.argsort(w)[::-1]
    rep.text(f"""### pumadyn-32nm

Canonical 7,168 / 1,024 split, footnote-8 preprocessing, SE-ARD over {len(w)} attributes with the bias v_b, started
at length-scale {INIT_LENGTHSCALE:g}. Exact GP on n_MS = {full["n_ms"]:,}: average squared test error
{full["avg_sq_error"]:.4f} (paper: {PAPER_FULL_ERROR}) in {full["fit_s"]:.0f} s ({full["n_iter"]} iterations;
paper 1,102.5 s); its largest w_j: {", ".join(f"attribute {j} {w[j]:.3g}" for j in top[:6])}; v_b
{full["bias"]:.3g}, noise {full["noise"]:.3g}. Footnote 9, the RBF kernel on the same rows: all attributes
{rbf_out["all_attributes_error"]:.4f} (paper 0.4730), the four with the largest ARD w_j
({rbf_out["four_attributes"]}) {rbf_out["four_attributes_error"]:.4f} (paper 0.024).""")
    rows = [[r["method"], r["d"], r["time_s"], r["avg_sq_error"]] for r in curves["rows"]]
    rep.table(
        ["method", "d", "selection s", "avg squared error"],
        rows,
        caption="Fig. 2: learning curves on all 7,168 rows (paper: all three comparable to full GPR at d = 125, "
        "taking 3 s, 2 s and 66 s)",
    )
    rep.figure("learning_curves_pumadyn.png", "Fig. 2: average squared test error against d, pumadyn-32nm")
    plot_trajectory(os.path.join(out_dir, "trajectory_pumadyn.png"), traj)
    exact = np.asarray(traj["exact"])
    gaps = {k: np.abs(np.subtract(v, exact)) for k, v in traj.items() if k not in ("iteration", "exact")}
    rep.table(
        ["criterion", "largest |approx - exact|", "at iteration", "median |approx - exact|"],
        [[k, float(v.max()), traj["iteration"][int(np.argmax(v))], float(np.median(v))] for k, v in gaps.items()],
        caption=f"Fig. 3: {len(traj['iteration'])} iterates of the first {traj['iteration'][-1]} of the full-GP "
        "optimisation (paper: random poor along critical parts for d = 100, 200; info-gain acceptable)",
    )
    rep.figure("trajectory_pumadyn.png", "Fig. 3: approximate criteria along the full-GP trajectory")
    rows = []
    for key, rec in table2.items():
        paper = PAPER_TABLE2.get(key, (None,) * 4)
        rows.append(
            [
                rec["method"],
                rec["d"],
                f"{rec['successes']}/{len(rec['runs'])}",
                paper[0],
                rec["median_error"],
                paper[1],
                rec["median_iter"],
                paper[2],
                rec["median_seconds"],
                paper[3],
                rec["median_error_all"],
            ]
        )
    rep.table(
        [
            "method",
            "d",
            "successes",
            "paper (of 10)",
            "sq. error",
            "paper",
            "iterations",
            "paper",
            "MS s",
            "paper s",
            "median error, all runs",
        ],
        rows,
        caption=f"Table 2: model selection on n_MS = {cfg['table2_n_ms']:,}, at most {cfg['table2_max_iter']} "
        f"iterations; runs per row in the successes column (the paper: 10, 200 iterations); success: "
        f"error < {SUCCESS} (medians over successful runs)",
    )
    f4 = fig4(table2)
    plot_fig4(os.path.join(out_dir, "fig4_pumadyn.png"), f4)
    rep.table(
        ["setting", "error", "longest plateau (iterations)", "full GPR at its hyper-parameters", "largest w_j^(1/2)"],
        [
            [
                k,
                f4["errors"][k],
                f4["plateau_iterations"][k],
                f4["exact_error_at_hypers"].get(k),
                ", ".join(f"{v:.3g}" for v in f4["sqrt_w"][k]),
            ]
            for k in f4["curves"]
        ],
        caption=f"Fig. 4: Table 2's run {f4['run']} ({f4['run_kind']}); a plateau: consecutive iterations changing "
        f"the criterion by under {PLATEAU_TOL:g} relative, followed by a fall of over {PLATEAU_DROP:.0%} (paper: random d = 500 runs a "
        "flat plateau, fixed similar; full GPR at random's hyper-parameters 0.0317)",
    )
    rep.figure("fig4_pumadyn.png", "Fig. 4: criterion curves of one Table 2 run, and the largest w_j^(1/2)")
    return {"fig4": f4, "rbf": rbf_out}
