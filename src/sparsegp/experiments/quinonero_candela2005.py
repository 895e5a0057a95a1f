"""Quiñonero-Candela & Rasmussen (2005): the sinc toy (Fig. 2) and degenerate vs full predictive variance (Fig. 1).

Sec. 5's toy: 100 training inputs equally spaced in [-10, 10], targets
sin(x)/x plus Gaussian noise of variance 0.01, 1,000 test inputs equally spaced
in [-12, 12]; SE kernel with length-scale 1, signal sd 1 and the true noise
variance 0.01, all fixed. The support set is grown greedily by the evidence
(SGEV, eqs. 30-33) and by Smola & Bartlett's posterior (SGGP); for each size m
the test squared error of the RRGP mean, the negative log evidence and SGGP's
relative gap are recorded. The paper: both test errors have a minimum around
m = 8-10 and rise again; the evidence has its minimum in the same region; the
gap falls monotonically and its 0.025 threshold says nothing about
generalisation.
"""

from __future__ import annotations

import os

import numpy as np

from .steps import direct

PAPER = {"test_error_minimum_m": (8, 10), "gap_threshold": 0.025}
TABLE1 = {  # the upper subtable on disjoint blocks, the lower one on folds of the pooled rows
    "quick": {
        "upper": dict(n_train=200, n_test=200, repeats=2, m=16, rounds=2, max_iter=10),
        "lower": dict(n_train=600, n_test=200, repeats=2, m=16, rounds=1, max_iter=20, folds=True),
    },
    "full": {
        "upper": dict(n_train=2000, n_test=2000, repeats=10, m=512, rounds=10, max_iter=50),
        "lower": dict(n_train=36000, n_test=4000, repeats=10, m=512, rounds=1, max_iter=80, folds=True),
    },
}


FIG1_M = 10  # Fig. 1's support points
FAR = 10.5  # Fig. 1: |x| beyond this is outside the training inputs' range [-10, 10]


def sinc_toy(seed: int = 0):
    x = np.linspace(-10, 10, 100)
    y = np.sinc(x / np.pi) + np.sqrt(0.01) * np.random.default_rng(seed).normal(size=100)
    xt = np.linspace(-12, 12, 1000)
    return x[:, None], y, xt[:, None], np.sinc(xt / np.pi)


def _rrgp_mean(K, Kt, y, I, noise):
    """The RRGP (SoR) predictive mean with support I (QC&R eq. 27): K_*m (sigma^2 K_mm + K_mn K_nm)^-1 K_mn y."""
    Knm = K[:, I]
    A = noise * K[np.ix_(I, I)] + Knm.T @ Knm
    return Kt[:, I] @ np.linalg.solve(A + 1e-10 * np.trace(A) / len(I) * np.eye(len(I)), Knm.T @ y)


def reproduce(out_dir: str, mode: str = "quick", verbose: bool = False, command: str | None = None, step=direct) -> str:
    from ..estimators import ExactGPRegressor, SparseGPRegressor
    from ..kernels import SquaredExponential
    from ..selection import Evidence, SmolaBartlett
    from .report import Report

    m_max = 30 if mode == "quick" else 60
    seeds = [0] if mode == "quick" else list(range(10))
    kernel, noise = SquaredExponential(1.0, 1.0), 0.01
    rep = Report("quinonero-candela2005", "Quiñonero-Candela & Rasmussen (2005): reduced-rank GPs", mode, command)
    up, low = TABLE1[mode]["upper"], TABLE1[mode]["lower"]
    rep.protocol("sinc toy: noise draws", 1, len(seeds), "ten draws show the spread of the arg-mins")
    rep.protocol(
        "Table 1 upper: training / test / repeats",
        "2,000 / 2,000 / 10",
        f"{up['n_train']:,} / {up['n_test']:,} / {up['repeats']}",
        "the --quick mode subsamples",
    )
    rep.protocol("Table 1: support set m", 512, up["m"], "the --quick mode subsamples")
    rep.protocol("Table 1 upper: alternation rounds", 10, up["rounds"], "time: 2 cores")
    rep.protocol("L-BFGS iterations per round", "not stated", up["max_iter"], "a cap has to be set")
    rep.protocol(
        "Table 1 lower: training / test / repeats",
        "36,000 / 4,000 / 10",
        f"{low['n_train']:,} / {low['n_test']:,} / {low['repeats']}",
        "time: 2 cores",
    )
    rep.protocol(
        "Table 1 targets",
        "centred",
        "the shipped targets (standardised by the data's source, sd 1), centred",
        "the shipped kin40k is standardised; losses compare as orderings and differences",
    )
    rep.protocol(
        "Table 1: SGGP's and SGEV's hyper-parameters",
        "'carefully selected' (how is not stated)",
        "those HPEV-rand learnt on the same training cases",
        "the paper does not say how they were chosen",
    )
    rep.protocol(
        "Table 1: HPEV-rand's iterations",
        "not stated",
        f"upper {up['max_iter'] * up['rounds']}, lower {low['max_iter'] * low['rounds']} (one run: the "
        "alternating methods' rounds times their iterations per round)",
        "a cap has to be set; the same budget as the alternating methods",
    )
    rep.protocol(
        "Fig. 1: data and model",
        "5 training inputs, hyper-parameters all 1",
        f"the sinc toy's 100 rows, m = {FIG1_M} support points chosen by SGEV; SE length-scale "
        f"{float(kernel.lengthscale):g}, variance {float(kernel.variance):g}, noise {noise:g}",
        "the paper's 5 inputs are not given; the sinc toy of Fig. 2 shows the same collapse away from the "
        "support points",
    )
    curves: dict[str, list] = {"SGEV": [], "SGGP": [], "evidence": [], "gap": [], "upper": [], "lower": []}
    optimum: list[float] = []  # the negative log posterior Q at its minimiser over all n rows (m = n), per draw
    argmins: dict[str, list] = {"SGEV": [], "SGGP": [], "evidence": []}
    for seed in seeds:
        X, y, Xt, ft = sinc_toy(seed)
        K, Kt = np.asarray(kernel.K(X)), np.asarray(kernel.K(Xt, X))
        # seeded: the duality gap's dual steps draw random candidates even where the selection scans every row
        sgev = Evidence(m_max, candidates="full").select(kernel, noise, X, y, random_state=seed, verbose=verbose)
        sggp = SmolaBartlett(m_max, eps=None, candidates="full").select(
            kernel, noise, X, y, random_state=seed, verbose=verbose
        )
        for name, sel in (("SGEV", sgev), ("SGGP", sggp)):
            err = [
                float(np.mean((_rrgp_mean(K, Kt, y, sel.indices[:m], noise) - ft) ** 2))
                for m in range(1, len(sel.indices) + 1)
            ]
            curves[name].append(err)
            argmins[name].append(int(np.argmin(err)) + 1)
        ev = -sgev.curve("dtc_log_marginal")  # the paper plots the negative log evidence
        curves["evidence"].append(ev.tolist())
        argmins["evidence"].append(int(np.argmin(ev)) + 1)
        curves["gap"].append(sggp.curve("gap").tolist())
        # Fig. 2 (bottom): SGGP's upper bound Q(alpha) and lower bound -sigma^2 Q*(alpha*) - y^T y / 2 (eqs. 35-36)
        curves["upper"].append(sggp.curve("primal").tolist())
        curves["lower"].append((-noise * sggp.curve("dual") - 0.5 * float(y @ y)).tolist())
        optimum.append(float(-0.5 * y @ K @ np.linalg.solve(K + noise * np.eye(len(y)), y)))
    # a draw can end early when every remaining point lies in the span of the support set: common length
    m_common = min(len(c) for k in curves for c in curves[k])
    curves = {k: [c[:m_common] for c in v] for k, v in curves.items()}
    gap = np.mean(curves["gap"], axis=0)
    m_gap = int(np.argmax(gap < PAPER["gap_threshold"]) + 1) if np.any(gap < PAPER["gap_threshold"]) else None
    monotone = bool(all(np.all(np.diff(g) <= 1e-12) for g in curves["gap"]))
    rep.text(f"""{len(seeds)} noise draw(s) of the toy (the paper shows one); support sets grown to m = {m_common} by full
greedy search at the fixed, true hyper-parameters. Test error: mean squared error of the RRGP mean against
sin(x)/x on the {len(Xt):,} test inputs.""")
    rep.table(
        ["quantity", "ours (median over draws)", "paper"],
        [
            ["m at the SGEV test-error minimum", float(np.median(argmins["SGEV"])), "8-10"],
            ["m at the SGGP test-error minimum", float(np.median(argmins["SGGP"])), "8-10"],
            [
                "m at the minimum of the negative log evidence",
                float(np.median(argmins["evidence"])),
                "8-10 (same region)",
            ],
            ["m where the mean SGGP gap first falls below 0.025", m_gap if m_gap is not None else "not reached", "-"],
            ["gap non-increasing in m on every draw", str(monotone), "always"],
        ],
        caption="Fig. 2: where the curves turn",
        digits=4,
    )
    _plot_fig2(os.path.join(out_dir, "sinc_fig2.png"), curves, m_gap)
    rep.figure("sinc_fig2.png", "Fig. 2: test error (SGEV, SGGP), negative log evidence and the SGGP gap against m")

    # Fig. 1: the degenerate RRGP's predictive sd collapses away from the support set; the augmented one does not
    X, y, Xt, _ = sinc_toy(0)
    sup = sgev_first = (
        Evidence(FIG1_M, candidates="full").select(kernel, noise, X, y, random_state=0, verbose=False).indices
    )
    exact = ExactGPRegressor(kernel, noise=noise, optimize=False, normalize_y=False).fit(X, y)
    _, sd_exact = exact.predict(Xt, return_std=True, include_noise=False)
    sds = {"full GP": sd_exact}
    for pred in ("standard", "augmented"):
        m = SparseGPRegressor(
            kernel, approximation="sor", inducing=sup, noise=noise, optimize=False, normalize_y=False, prediction=pred
        ).fit(X, y)
        sds["RRGP " + ("degenerate" if pred == "standard" else "augmented")] = m.predict(
            Xt, return_std=True, include_noise=False
        )[1]
    far = np.abs(Xt[:, 0]) > FAR
    rep.table(
        [f"predictive sd (noise included), |x| > {FAR:g}", "mean", "vs full GP"],
        [[k, float(np.mean(v[far])), float(np.mean(v[far]) / np.mean(sd_exact[far]))] for k, v in sds.items()],
        caption=f"Fig. 1: predictive sd beyond the training range, |x| > {FAR:g}",
    )
    _plot_fig1(os.path.join(out_dir, "sinc_fig1.png"), Xt[:, 0], sds, X[sup, 0])
    rep.figure("sinc_fig1.png", "Fig. 1: predictive standard deviation, m = 10 support points chosen by SGEV")

    # Table 1 on KIN40K
    from . import quinonero_candela2005_table1 as t1

    X_all, y_all = t1.kin40k_pool()
    subtables = {}
    for key, methods in (("upper", t1.METHODS_UPPER), ("lower", t1.METHODS_LOWER)):
        subtables[key] = step(
            f"table1-{key}",
            t1.run_subtable,
            X_all,
            y_all,
            methods=methods,
            text=key == "upper",
            verbose=verbose,
            **TABLE1[mode][key],
        )
    rep.text("""### KIN40K, Table 1

HPEV runs start from unit hyper-parameters (ARD SE) and unit noise; the upper subtable alternates selection
and evidence maximisation for the given rounds (at most the given L-BFGS iterations each); HPEV-rand gets
rounds x iterations in one run. SGGP and SGEV select at HPEV-rand's learned hyper-parameters.""")
    t1.report(rep, subtables)
    text = t1.text_summary(subtables["upper"])
    rep.table(
        ["quantity (upper subtable's training sets, SGGP's hyper-parameters)", "ours", "paper"],
        [
            ["SGGP support size at gap < 0.025, median", float(np.median(text["sggp_m_gap"])), "about 250"],
            ["(repeats on which the gap fell below 0.025)", sum(text["sggp_gap_reached"]), "-"],
            [
                "NTL of an exact GP on SGGP's support set alone, mean",
                float(np.mean(text["support_gp_ntl"])),
                "about 0.3",
            ],
            ["test points with a negative Nyström latent variance", text["nystrom_negative_fraction"], "some"],
            ["least augmented RRGP latent variance", text["augmented_min_variance"], "positive"],
        ],
        caption="Sec. 5-6 in numbers: the gap threshold, the support-set GP, Nyström's variances",
    )
    rep.results = {
        "curves": curves,
        "sggp_optimum": optimum,
        "argmins": argmins,
        "m_gap_below_threshold": m_gap,
        "gap_monotone": monotone,
        "support_fig1": [int(i) for i in sgev_first],
        "fig1_far_sd": {k: float(np.mean(v[far])) for k, v in sds.items()},
        "fig1_far_beyond": FAR,
        "sinc_m": m_common,
        "sinc_n_test": int(len(Xt)),
        "table1": subtables,
        "kin40k_text": text,
    }
    return rep.write(out_dir)


def _plot_fig2(path, curves, m_gap):
    from ..plotting import pyplot, save_figure

    plt = pyplot()

    m = np.arange(1, len(curves["SGEV"][0]) + 1)
    fig, ax = plt.subplots(1, 3, figsize=(12, 3.4))
    for name, style in (("SGEV", "-"), ("SGGP", "--")):
        ax[0].semilogy(m, np.mean(curves[name], axis=0), style, label=name)
    ax[0].axvspan(8, 10, color="0.85", label="paper: minimum at 8-10")
    ax[0].set(xlabel="support set size m", ylabel="test squared error", title="test error")
    ax[0].legend(fontsize=8, loc="upper center")
    ax[1].plot(m, np.mean(curves["evidence"], axis=0))
    ax[1].axvspan(8, 10, color="0.85")
    ax[1].set(xlabel="support set size m", ylabel="negative log evidence (SGEV)", title="evidence")
    ax[2].semilogy(m, np.mean(curves["gap"], axis=0), label="SGGP relative gap")
    ax[2].axhline(0.025, color="k", ls=":", label="threshold 0.025 (Smola & Bartlett)")
    ax[2].set(xlabel="support set size m", ylabel="gap", title="gap")
    ax[2].legend()
    save_figure(fig, path, dpi=110)


def _plot_fig1(path, xt, sds, xs):
    from ..plotting import pyplot, save_figure

    plt = pyplot()

    fig, ax = plt.subplots(figsize=(6, 3.4))
    for (name, sd), style in zip(sds.items(), ("-", "--", ":")):
        ax.plot(xt, sd, style, label=name)
    ax.plot(xs, np.zeros_like(xs) + 0.1, "k|", ms=12, label="support inputs")
    ax.set(xlabel="x", ylabel="predictive standard deviation", title="sinc toy: degenerate vs full GP")
    ax.legend(fontsize=8)
    save_figure(fig, path, dpi=110)
