"""Titsias (2009), sec. 4 (experiments): the claims of its text and Figs. 1-3.

VAR = VFE, PP = DTC, SPGP = FITC; RSPP = PP at random training inputs held fixed, SD = a GP on a
random subset of the data. Boston KL values are means over the run's repeats.
"""

from __future__ import annotations

import numpy as np

from . import claim, need, not_run, verdict

P = "titsias2009"


def _mean_kl(results, method):
    return np.mean(np.asarray(need(results, f"boston_fixed/kl/{method}"), dtype=float), axis=1)


@claim(
    P,
    "snelson-values",
    "4.1",
    "The final value of the variational lower bound was -55.5708, while the value of the maximized true "
    "log marginal likelihood was -55.5647.",
)
def _snelson_values(r):
    bound, exact = need(r, "snelson200/vfe/objective"), need(r, "snelson200/exact/log_marginal")
    paper = need(r, "snelson200/paper")
    return verdict(
        round(bound, 4) == paper["vfe_bound"] and round(exact, 4) == paper["exact_log_marginal"],
        f"bound {bound:.5f}, exact {exact:.5f}",
        "equal after rounding to the paper's 4 decimals",
    )


@claim(
    P,
    "snelson-var-reproduces-full-gp",
    "4.1, Fig. 1 (200 points)",
    "The prediction obtained by the variational method almost exactly reproduces the full GP prediction.",
)
def _snelson_var(r):
    kl = {m: need(r, f"snelson200/{m}/kl_exact_to_approx_on_grid") for m in ("vfe", "dtc", "fitc")}
    return verdict(
        kl["vfe"] < 0.1 and kl["vfe"] < min(kl["dtc"], kl["fitc"]),
        ", ".join(f"KL {m} {v:.3g}" for m, v in kl.items()),
        "KL(exact || approx) on the plotting grid below 0.1 nats and below PP's and SPGP's",
    )


@claim(
    P,
    "snelson-var-hyperparameters",
    "4.1",
    "The estimated hyperparameters found by F_V match the hyperparameters found by the full GP.",
)
def _snelson_hyper(r):
    names = ("variance", "lengthscale", "noise")
    rel = {h: abs(need(r, f"snelson200/vfe/{h}") / need(r, f"snelson200/exact/{h}") - 1) for h in names}
    return verdict(
        max(rel.values()) < 0.01,
        ", ".join(f"{h} {v:.2%}" for h, v in rel.items()),
        "every hyper-parameter within 1 % of the full GP's",
    )


@claim(
    P,
    "snelson20-pp-overfits",
    "4.1, Fig. 1 (20 points)",
    "The PP log likelihood leads to a significant overfitting of the training data.",
)
def _snelson20_pp(r):
    pp, exact = need(r, "snelson20/dtc/objective"), need(r, "snelson20/exact/log_marginal")
    return verdict(
        pp > exact,
        f"PP objective {pp:.3f}, exact log p(y) {exact:.3f}",
        "PP's maximised objective above the exact log marginal likelihood (it overstates the evidence)",
    )


@claim(
    P,
    "boston-only-var-matches",
    "4.2, Fig. 2(a)",
    "Only the VAR method is able to match the full GP model; for around 200 points we closely match the "
    "full GP prediction.",
)
def _boston_only_var(r):
    ms = list(need(r, "boston_fixed/m"))
    if 200 not in ms:
        return not_run("boston_fixed at m = 200")
    i = ms.index(200)
    kl = {m: _mean_kl(r, m)[i] for m in ("vfe", "dtc", "fitc")}
    return verdict(
        kl["vfe"] < 1.0 and kl["vfe"] < min(kl["dtc"], kl["fitc"]),
        "m = 200: " + ", ".join(f"KL {m} {v:.3g}" for m, v in kl.items()),
        "VAR's mean KL at m = 200 below 1 nat and below PP's and SPGP's",
    )


@claim(
    P,
    "boston-pp-spgp-differ-at-all-inputs",
    "4.2, Fig. 2(a)",
    "When the inducing inputs are initialized to all training inputs, PP and SPGP still give a different "
    "solution from the full GP model.",
)
def _boston_all_inputs(r):
    ms, n = list(need(r, "boston_fixed/m")), need(r, "boston_fixed/n_train")
    if n not in ms:
        return not_run("boston_fixed at m = n_train")
    i = ms.index(n)
    kl = {m: _mean_kl(r, m)[i] for m in ("dtc", "fitc")}
    return verdict(
        min(kl.values()) > 1e-3,
        f"m = {n}: " + ", ".join(f"KL {m} {v:.2g}" for m, v in kl.items()),
        "PP's and SPGP's mean KL at X_m = X above 1e-3 nats",
    )


@claim(
    P,
    "boston-var-rspp-sd",
    "4.2, Fig. 2(b)",
    "Clearly RSPP significantly improves over the SD prediction, and VAR significantly improves over RSPP.",
)
def _boston_order(r):
    ms = list(need(r, "boston_fixed/m"))
    var, rspp, sd = (_mean_kl(r, m) for m in ("vfe", "rspp", "sd"))
    keep = [i for i, m in enumerate(ms) if m < need(r, "boston_fixed/n_train")]
    bad = [ms[i] for i in keep if not (var[i] < rspp[i] < sd[i])]
    ours = "; ".join(f"m = {ms[i]}: {var[i]:.3g} / {rspp[i]:.3g} / {sd[i]:.3g}" for i in keep)
    return verdict(
        not bad, ours + (f" (order broken at m = {bad})" if bad else ""), "mean KL VAR < RSPP < SD at every m < n"
    )


@claim(
    P,
    "boston-pp-spgp-upper-bounds",
    "4.2, Fig. 2(c)",
    "[PP and SPGP] are not lower bounds to the true log marginal likelihood and as shown in Figure 2(c) "
    "they become upper bounds.",
)
def _boston_bounds(r):
    exact, ms = need(r, "boston_fixed/exact_log_marginal"), list(need(r, "boston_fixed/m"))
    mean = {
        m: np.mean(np.asarray(need(r, f"boston_fixed/objective/{m}"), dtype=float), axis=1) for m in ("dtc", "fitc")
    }
    above = {m: [ms[i] for i, v in enumerate(vals) if v > exact] for m, vals in mean.items()}
    return verdict(
        all(above.values()),
        f"exact {exact:.2f}; m with the mean objective above it: PP {above['dtc'] or 'none'}, "
        f"SPGP {above['fitc'] or 'none'}",
        "PP's and SPGP's mean objectives (theta fixed) above the exact log p(y) at some m",
    )


@claim(
    P,
    "boston-joint-pp-spgp-above-exact",
    "4.2, Fig. 2(f)",
    "The PP and SPGP methods achieve a much higher log likelihood value than the true log marginal likelihood.",
)
def _boston_joint_higher(r):
    exact = need(r, "boston_joint/exact/log_marginal")
    top = {m: float(np.max(need(r, f"boston_joint/{m}/objective"))) for m in ("dtc", "fitc")}
    return verdict(
        min(top.values()) > exact,
        f"exact {exact:.1f}; largest PP {top['dtc']:.1f}, SPGP {top['fitc']:.1f}",
        "the largest objective of each above the exact log p(y)",
    )
