"""Claims as predicates: the registry, missing results as "not run", verdicts computed from numbers."""

import re
from pathlib import Path

import numpy as np
import pytest

from sparsegp.experiments.claims import claims_of, evaluate, verdict_section
from sparsegp.experiments.claims.base import BEGIN, END, STATUSES, Claim, NotRun, Verdict, claim, need, verdict_table
from sparsegp.experiments.index import agreement_outside_verdicts, numbers_not_in_results, refresh, with_verdicts


def test_need_walks_dicts_and_lists_and_reports_what_is_missing():
    r = {"a": {"b": [1.0, {"c": 2.0}]}}
    assert need(r, "a/b/0") == 1.0 and need(r, "a/b/1/c") == 2.0
    for path in ("a/x", "a/b/2", "a/b/0/c", "z"):
        with pytest.raises(NotRun, match=path):
            need(r, path)


def test_a_verdict_has_one_of_three_statuses():
    with pytest.raises(ValueError, match="status"):
        Verdict("agrees")
    assert [Verdict(s).status for s in STATUSES] == ["holds", "fails", "not run"]


def test_a_claim_key_is_registered_once():
    assert "snelson-values" in [c.key for c in claims_of("titsias2009")]
    with pytest.raises(ValueError, match="twice"):
        claim("titsias2009", "snelson-values", "4.1", "again", kind="about")(lambda r: Verdict("holds"))


def test_missing_results_give_not_run_with_the_missing_path():
    rows = evaluate("titsias2009", {})
    assert rows and all(v.status == "not run" and v.criterion.startswith("needs ") for _, v in rows)
    table = verdict_table(rows)
    assert f"{len(rows)} claims: 0 holds, 0 fails, {len(rows)} not run." in table


def _boston(var, rspp, sd, m=(10, 25, 456)):
    kl = {name: [[v, v] for v in values] for name, values in (("vfe", var), ("rspp", rspp), ("sd", sd))}
    return {"boston_fixed": {"m": list(m), "n_train": 456, "kl": kl}}


def test_titsias_fig2b_order_is_decided_by_the_numbers_at_every_m_below_n():
    (c,) = [c for c in claims_of("titsias2009") if c.key == "boston-var-rspp-sd"]
    assert c.check(_boston([5.0, 2.0, 0.0], [6.0, 3.0, 0.0], [7.0, 4.0, 0.0])).status == "holds"
    broken = c.check(_boston([5.0, 2.0, 0.0], [6.0, 5.0, 0.0], [7.0, 4.0, 0.0]))
    assert broken.status == "fails" and "at m = [25]" in broken.ours


def test_titsias_fig2b_significantly_needs_the_paired_tests_over_the_repeats():
    """'Significantly improves': the order of the means is not enough; each step is a one-sided paired test over the
    repeats, and the largest p-value is printed with the verdict."""
    (c,) = [c for c in claims_of("titsias2009") if c.key == "boston-var-rspp-sd"]
    wobble = np.array([0.5, -0.5, 0.4, -0.4, 0.3, -0.3, 0.2, -0.2, 0.1, -0.1])

    def results(step):
        kl = {
            k: [(base + i * step + wobble * (i + 1)).tolist(), [0.0] * 10]
            for i, (k, base) in enumerate((("vfe", 5.0), ("rspp", 5.0), ("sd", 5.0)))
        }
        return {"boston_fixed": {"m": [10, 456], "n_train": 456, "kl": kl}}

    clear, noisy = c.check(results(3.0)), c.check(results(0.05))
    assert clear.status == "holds" and clear.p < 0.05
    assert noisy.status == "fails" and noisy.p >= 0.05 and "not significant" in noisy.ours


def test_titsias_snelson_values_compare_at_the_papers_precision():
    (c,) = [c for c in claims_of("titsias2009") if c.key == "snelson-values"]
    paper = {"vfe_bound": -55.5708, "exact_log_marginal": -55.5647}

    def run(bound, exact):
        return {"snelson200": {"paper": paper, "vfe": {"objective": bound}, "exact": {"log_marginal": exact}}}

    assert c.check(run(-55.57077, -55.56471)).status == "holds"
    assert c.check(run(-55.5712, -55.56471)).status == "fails"


def test_every_paper_registers_claims_with_wording_and_section():
    from sparsegp.experiments.registry import papers

    for paper in papers():
        claims = claims_of(paper)
        assert len(claims) >= 5, paper
        assert len({c.key for c in claims}) == len(claims)
        assert all(c.wording and c.section and c.paper == paper for c in claims)


def _check(paper, key):
    """The claim's verdict as a report reads it (with its kind; ``not run`` where the results lack a part)."""
    (c,) = [c for c in claims_of(paper) if c.key == key]
    return c.judge


def _qcr(aug_shift, n=10, seed=0):
    """Table 1 (upper) results whose augmented losses are the degenerate ones plus ``aug_shift`` and noise."""
    r = np.random.default_rng(seed)
    reps = []
    for _ in range(n):
        rep = {}
        for method in ("HPEV-rand", "SGGP"):
            deg = {loss: float(r.uniform(0.1, 0.2)) for loss in ("MAE", "MSE", "NTL")}
            aug = {loss: v + aug_shift + 1e-3 * float(r.normal()) for loss, v in deg.items()}
            rep[method] = {"non-aug": deg, "aug": aug}
        reps.append(rep)
    return {"table1": {"upper": {"methods": ["HPEV-rand", "SGGP"], "per_repeat": reps}}}


def test_qcr_augmented_superiority_is_a_paired_test_at_one_percent():
    check = _check("quinonero-candela2005", "table1-upper-augmented-superior")
    assert check(_qcr(-0.01)).status == "holds"
    assert check(_qcr(+0.01)).status == "fails"  # augmented worse
    assert check(_qcr(-0.0003)).status == "fails"  # better, but not significantly
    assert check(_qcr(-0.01, n=1)).status == "not run"


def test_seeger_table2_failures_need_every_setting_and_any_success_fails():
    check = _check("seeger2003", "t2-random-fixed-fail-small-d")

    def table(**succ):
        return {
            "pumadyn": {"table2": {k.replace("_", " d="): {"successes": s, "runs": [{}] * 4} for k, s in succ.items()}}
        }

    six = {f"{m}_{d}": 0 for m in ("random", "fixed") for d in (50, 100, 200)}
    assert check(table(**six)).status == "holds"
    assert check(table(**{**six, "fixed_200": 1})).status == "fails"
    partial = check(table(random_100=0))
    assert partial.status == "not run" and "random d=100: 0/4" in partial.ours


def test_seeger_fig4_plateau_counts_a_flat_stretch_only_when_the_criterion_falls_after_it():
    from sparsegp.experiments.seeger2003_pumadyn import longest_plateau

    descent = list(np.linspace(1000.0, 510.0, 6))
    flat = [500.0 - 0.01 * i for i in range(13)]  # 12 steps of 0.01 < 1e-3 x 500
    assert longest_plateau(descent + flat + [300.0, 290.0]) == 12
    assert longest_plateau(descent + flat) == 0  # a converged tail is no plateau: nothing falls after it
    assert longest_plateau(descent + flat[:5] + [300.0] + flat[:3] + [250.0]) == 4


def test_titsias_em_claims_read_the_e_steps_of_each_objective():
    from sparsegp.experiments.titsias2009_em import _steps

    rounds = [
        {"after_selection": -10.0, "after_hyperparameters": -8.0},
        {"after_selection": -8.5, "after_hyperparameters": -7.0},  # the E-step lowered it by 0.5
        {"after_selection": -6.0, "after_hyperparameters": -5.0},
    ]
    seq, e_steps = _steps(rounds)
    assert seq == [-10.0, -8.0, -8.5, -7.0, -6.0, -5.0] and e_steps == [-0.5, 1.0]

    def run(decreases, pp, spgp):
        steps = {"objective_steps": seq, "e_step_changes": [1.0], "decreases": decreases}
        return {
            "variational_em": {
                "vfe": steps,
                "dtc": dict(steps, e_step_changes=pp),
                "fitc": dict(steps, e_step_changes=spgp),
            }
        }

    monotone, others = _check("titsias2009", "em-var-bound-monotone"), _check("titsias2009", "em-pp-spgp-can-decrease")
    assert monotone(run(0, [1.0], [1.0])).status == "holds"
    assert monotone(run(1, [1.0], [1.0])).status == "fails"
    assert others(run(0, [1.0, 2.0], [0.5])).status == "fails"
    assert others(run(0, [1.0, -0.1], [0.5])).status == "holds"


def test_lawrence_speed_claim_is_taken_at_the_papers_index_and_prints_the_others():
    check = _check("lawrence2003", "ivm-faster-every-task")

    def run(slow_at_500=(), slow_at_100=()):
        def rows(slow):
            return [{"c": c, "ivm_s": 3.0 if c in slow else 1.0, "svm_s": 2.0} for c in range(10)]

        return {
            "index_sizes": [100, 500],
            "by_index": {
                "100": {"rows": rows(slow_at_100), "summary": {}},
                "500": {"rows": rows(slow_at_500), "summary": {}},
            },
        }

    assert check(run(slow_at_100=(1, 2))).status == "holds"
    v = check(run(slow_at_500=(3,)))
    assert (
        v.status == "fails" and "selection index 500: IVM faster on 9 of 10" in v.ours and "slower on c = [3]" in v.ours
    )
    assert "at index 100: 10 of 10" in v.ours
    assert (
        check({"rows": [], "summary": {"index_size": 500}}).status == "not run"
    )  # a results.json from before the per-index runs


def test_smola_bartlett_rapid_convergence_compares_kappas():
    check = _check("smola-bartlett2001", "fig1-kappa-50-rapid")
    assert check({"first_below": {"10": None, "20": 290, "50": 220, "100": 200}}).status == "holds"
    assert check({"first_below": {"10": None, "20": 190, "50": 220, "100": 200}}).status == "fails"
    assert check({"first_below": {"20": 190, "50": None}}).status == "fails"


def test_a_pipe_in_our_numbers_does_not_break_the_table():
    c = Claim("p", "k", "1", "a |x| b", lambda r: Verdict("holds"))
    table = verdict_table([(c, Verdict("holds", "|d| = 3", "c"))])
    assert "a \\|x\\| b" in table and "\\|d\\| = 3" in table
    (row,) = [line for line in table.splitlines() if line.startswith("| k")]
    assert len(re.findall(r"(?<!\\)\|", row)) == 8  # seven cells


def test_verdict_section_is_replaced_in_place_or_put_under_the_header():
    section = f"{BEGIN}\nnew\n{END}\n"
    old = "# T\n\nCommand: x  \nDate: y  \nsparsegp 0.1.0\n\nbody\n"
    inserted = with_verdicts(old, section)
    assert inserted == "# T\n\nCommand: x  \nDate: y  \nsparsegp 0.1.0\n\n" + section + "\nbody\n"
    again = with_verdicts(inserted.replace("new", "stale"), section)
    assert again == inserted
    with pytest.raises(ValueError, match="header"):
        with_verdicts("# no header\n", section)


def test_agreement_words_are_flagged_outside_the_verdicts_only():
    report = (
        f"# T\nsparsegp 0.1.0\n{BEGIN}\n| x | “VAR matches the full GP” | **holds** |\n{END}\n"
        "*Fig. 2 (paper: VAR matches the full GP, log p(y) above)*\nOur bound matches the exact one.\n"
    )
    assert agreement_outside_verdicts(report) == ["Our bound matches the exact one."]


def test_checked_in_readme_and_verdicts_are_the_ones_computed_from_checked_in_results(tmp_path):
    """reports/README.md and each report's verdict table are regenerated from the results.json beside them."""
    import json
    import shutil

    from sparsegp.experiments.registry import papers

    reports = Path(__file__).resolve().parent.parent / "reports"
    copy = tmp_path / "reports"
    shutil.copytree(reports, copy, ignore=shutil.ignore_patterns("*.png"))
    refresh(str(copy), papers())
    assert (copy / "README.md").read_text() == (reports / "README.md").read_text(), (
        "reports/README.md is stale: run `sparsegp reproduce verdicts --out reports`"
    )
    for paper in papers():
        results = json.loads((reports / paper / "results.json").read_text())["results"]
        assert verdict_section(paper, results) in (reports / paper / "report.md").read_text(), paper


def test_a_reason_is_kept_only_where_a_claim_fails_and_rendered_under_the_table():
    from sparsegp.experiments.claims import verdict

    calls = []

    def why():
        calls.append(1)
        return "because of 3.2"

    assert verdict(True, "x", "c", why).reason == "" and not calls  # computed only when needed
    failed = verdict(False, "x", "c", why)
    assert failed.reason == "because of 3.2" and calls == [1]
    c = Claim("p", "k", "1", "w", lambda r: failed)
    table = verdict_table([(c, failed), (Claim("p", "h", "1", "w", lambda r: Verdict("holds")), Verdict("holds"))])
    assert "- **k**: because of 3.2" in table and "**h**:" not in table


def test_every_failing_verdict_of_the_checked_in_reports_gives_its_reason():
    """A paper's conclusion that fails in our data comes with the most likely reason, computed from the run."""
    import json

    from sparsegp.experiments.claims import evaluate
    from sparsegp.experiments.registry import papers

    reports = Path(__file__).resolve().parent.parent / "reports"
    for paper in papers():
        results = json.loads((reports / paper / "results.json").read_text())["results"]
        for c, v in evaluate(paper, results):
            if v.status == "fails":
                assert len(v.reason) > 40 and re.search(r"\d", v.reason), (paper, c.key, v.reason)


def test_ntl_offset_recovers_a_scale_and_a_constant_with_its_sign():
    from sparsegp.experiments.quinonero_candela2005_table1 import HALF_LOG_2PI, ntl_offset_text, ntl_offsets

    paper = {"A": (None, 0.04, 0.003, -0.40, 0.03, 0.002, -0.50), "B": (None, 0.05, 0.004, -0.30, 0.04, 0.003, -0.45)}
    s = 0.2  # the paper's units per ours
    rows = {}
    for name, p in paper.items():
        row = [0.0]
        for j in (1, 4):
            row += [p[j] / s, p[j + 1] / s**2, p[j + 2] - np.log(s) - HALF_LOG_2PI]
        rows[name] = row + [1.0]
    off = ntl_offsets(rows, paper)
    assert len(off["cells"]) == 4
    assert off["mean"] == pytest.approx(-HALF_LOG_2PI, abs=1e-12) and off["sd"] < 1e-12
    # ours below the paper's by the constant: the paper's NTL carries it once more than ours, it does not lack it
    assert off["nearest_constant"] == -HALF_LOG_2PI and off["gap_to_nearest_constant"] < 1e-12
    assert "counts twice" in ntl_offset_text({**off, "sd": 0.02})
    assert "leaves out" in ntl_offset_text({**off, "nearest_constant": HALF_LOG_2PI, "sd": 0.02})
    assert "does not explain" in ntl_offset_text({**off, "gap_to_nearest_constant": 0.5, "sd": 0.02})


def test_seeger_basin_reason_counts_the_rows_own_failed_runs_and_the_capped_ones():
    from sparsegp.experiments.claims.seeger2003 import _basin_reason

    def run(error, n_iter, stop, spread):
        return {"error": error, "n_iter": n_iter, "stop": stop, "w": [1.0] * 31 + [spread]}

    table = {
        "full GPR": {"runs": [run(0.02, 100, "converged", 500.0)]},
        "random d=50": {"runs": [run(0.48, 200, "reached max_iter=200", 1.2), run(0.02, 200, "x", 300.0)]},
        "fixed d=50": {"runs": [run(0.48, 30, "CONVERGENCE", 2.5), run(0.04, 200, "x", 900.0)]},
    }
    r = {"pumadyn": {"table2": table}}
    text = _basin_reason(r, ["random d=50"])
    assert "The 1 runs near the all-noise error" in text and "at most 1.2 times" in text
    assert "at least 300 times in the 1 successful runs" in text  # sparse rows only, not full GPR
    assert "the 1 that ran to the iteration cap did not leave that point" in text
    assert "fixed d=50" not in text
    text = _basin_reason(r, ["fixed d=50"])
    assert "at most 2.5 times" in text and "iteration cap" not in text and "fixed d=50 0.0400" in text


def test_checked_in_reports_come_from_one_full_run_of_all_papers_at_one_clean_commit():
    """Every checked-in report was written by `sparsegp reproduce all --full` at one clean commit (an interrupted
    run goes on with `--resume`, which keeps only reports that the very same code wrote in full mode), and its
    header names that command, commit and date."""
    import json

    from sparsegp.experiments.registry import papers

    reports = Path(__file__).resolve().parent.parent / "reports"
    runs = {p: json.loads((reports / p / "results.json").read_text()) for p in papers()}
    for p, r in runs.items():
        assert r["mode"] == "full", p
        assert r["command"] == "sparsegp reproduce all --full", (p, r["command"])
    revisions = {r.get("revision") for r in runs.values()}
    assert len(revisions) == 1, revisions
    (revision,) = revisions
    assert revision and not revision.endswith("+modified"), revision
    for p, r in runs.items():
        head = (reports / p / "report.md").read_text().split("\n## ")[0]
        assert f"Command: `{r['command']}`" in head and f"(commit {revision})" in head, p
        assert f"Date: {r['date']}" in head, p


def test_seeger_counts_against_the_papers_are_a_one_sided_binomial_test():
    from scipy import stats

    from sparsegp.experiments.claims import binomial_below

    assert binomial_below(6, 10, 0.8) == pytest.approx(sum(stats.binom.pmf(k, 10, 0.8) for k in range(7)))
    check = _check("seeger2003", "t2-random-fixed-500-succeed")

    def table(rnd, fixed):
        rows = {"random d=500": rnd, "fixed d=500": fixed}
        return {"pumadyn": {"table2": {k: {"successes": s, "runs": [{"error": 0.02}] * 10} for k, s in rows.items()}}}

    assert check(table(6, 7)).status == "holds"  # p = 0.12 and 0.07
    assert check(table(5, 9)).status == "fails"  # 5 of 10 at the paper's 8 of 10: p = 0.033


def _w(top4, big=1.0, small=0.001):
    w = np.full(32, small)
    w[list(top4)] = big
    return w.tolist()


def test_seeger_fig4_suboptimal_hypers_must_fall_outside_full_gprs_own_spread():
    check = _check("seeger2003", "fig4-random-hypers-suboptimal")

    def results(at):
        runs = [{"error": e, "w": _w((3, 4, 14, 15))} for e in (0.0223, 0.0239, 0.0230)]
        fig4 = {
            "d": 500,
            "run": 0,
            "run_kind": "every method successful",
            "errors": {"full GPR": 0.0223, "random d=500": 0.0233},
            "exact_error_at_hypers": {"random d=500": at},
            "plateau_iterations": {},
        }
        return {"pumadyn": {"fig4": fig4, "table2": {"full GPR": {"runs": runs}, "random d=500": {"successes": 1}}}}

    inside = check(results(0.0233))
    assert inside.status == "fails" and "inside full GPR's own spread" in inside.reason
    assert check(results(0.0317)).status == "holds"


def test_seeger_info_gain_500_success_is_the_papers_error_cut_as_in_every_table2_count():
    """'10 successful runs of 10' is read as every Table 2 count is: a success is an error below 0.03."""
    check = _check("seeger2003", "t2-info-gain-500-ten")

    def results(errors):
        runs = [{"error": e, "n_iter": 50} for e in errors]
        ok = sum(e < 0.03 for e in errors)
        return {"pumadyn": {"table2": {"info-gain d=500": {"successes": ok, "runs": runs}}}}

    assert check(results([0.0288] * 10)).status == "holds"
    v = check(results([0.0288] * 9 + [0.0312]))
    assert v.status == "fails" and "9/10" in v.ours and v.kind == "within spread"


def test_qcr_ten_rounds_converge_reads_the_last_rounds_share_of_the_move():
    check = _check("quinonero-candela2005", "table1-ten-rounds-converge")

    def results(last_step):
        path = [-1.0, -1.2, -1.25] + [-1.26] * 6 + [-1.26 - last_step]
        rep = {m: {"round_train_nll_per_case": path} for m in ("HPEV-SGEV", "HPEV-SGGP")}
        return {"table1": {"upper": {"per_repeat": [rep, rep]}}}

    assert check(results(0.0)).status == "holds"
    assert check(results(0.02)).status == "fails"  # 0.02 of a 0.28 move: 7 %
    assert (
        check({"table1": {"upper": {"per_repeat": [{}]}}}).status == "not run"
    )  # a run before the rounds were recorded


def test_qcr_train_nll_order_skips_the_papers_near_ties_and_flags_reversals():
    check = _check("quinonero-candela2005", "table1-train-nll-order")

    def results(upper, lower):
        reps = lambda means: [{m: {"train_nll_per_case": v + e} for m, v in means.items()} for e in (0.0, 0.001)]  # noqa: E731
        return {"table1": {"upper": {"per_repeat": reps(upper)}, "lower": {"per_repeat": reps(lower)}}}

    upper = {"HPEV-SGGP": 0.23, "HPEV-SGEV": 0.22, "SGEV": 0.35, "HPEV-rand": 0.48}  # the near-tie reversed: untested
    assert check(results(upper, {"HPEV-rand": 0.0, "SGEV": 0.1})).status == "holds"
    v = check(results(upper, {"HPEV-rand": 0.2, "SGEV": 0.1}))
    assert v.status == "fails" and "lower: SGEV" in v.reason


def test_qcr_sgev_better_on_the_rising_sinc_curves_is_an_order_with_a_paired_p():
    check = _check("quinonero-candela2005", "sinc-sgev-better-where-curve-deteriorates")
    rng = np.random.default_rng(0)
    base = np.r_[np.linspace(0.02, 0.002, 9), np.linspace(0.002, 0.01, 24)]

    def results(shift):
        sgev = base + 0.0005 * rng.standard_normal((10, base.size))
        sggp = sgev + shift + 0.0001 * rng.standard_normal((10, base.size))
        return {
            "curves": {"SGEV": sgev.tolist(), "SGGP": sggp.tolist()},
            "argmins": {"SGEV": [9] * 10, "SGGP": [9] * 10},
        }

    clear, reversed_, noise = check(results(0.002)), check(results(-0.002)), check(results(0.00002))
    assert clear.status == "holds" and clear.p < 0.05
    assert reversed_.status == "fails"
    # the paper states an expectation, an order: it holds, and the verdict says it is not beyond the draws' noise
    assert noise.status == "holds" and noise.p >= 0.05
    assert "not beyond the run's noise" in noise.reading()


def test_titsias_local_maxima_claim_compares_the_optimal_start_with_the_protocols():
    check = _check("titsias2009", "snelson-not-local-maxima")

    def results(factor):
        one = {
            a: {"kl_exact_to_approx_on_grid": 50.0, "from_optimal_start": {"kl_exact_to_approx_on_grid": 50.0 * factor}}
            for a in ("dtc", "fitc")
        }
        return {"snelson200": one, "snelson20": one}

    assert check(results(2.0)).status == "holds"
    assert check(results(0.01)).status == "fails"  # from the optimal start PP and SPGP would recover the full GP
    assert check({"snelson200": {"dtc": {"kl_exact_to_approx_on_grid": 1.0}}}).status == "not run"


def test_titsias_em_reliability_needs_var_em_no_worse_than_pp_and_spgp_em():
    check = _check("titsias2009", "em-var-reliable-convergence")

    def results(var_smse):
        em = {a: {"decreases": 0, "smse": s, "snlp": -s, "objective": -1.0} for a, s in (("dtc", 0.2), ("fitc", 0.19))}
        em["vfe"] = {"decreases": 0, "smse": var_smse, "snlp": -0.3 if var_smse > 0.2 else -0.9, "objective": -2.0}
        return {"variational_em": {**em, "m": 8, "vfe_pseudo_inputs": {"smse": 0.13, "snlp": -0.97, "objective": -1.5}}}

    assert check(results(0.15)).status == "holds"
    v = check(results(0.58))
    assert v.status == "fails" and "monotone" in v.reason


def test_lawrence_combined_order_is_an_order_with_mcnemars_p():
    check = _check("lawrence2003", "combined-error-ivm-below-svm")

    def results(ivm, svm, only_ivm, only_svm):
        s = {
            "combined_ivm_error": ivm,
            "combined_svm_error": svm,
            "combined_only_ivm_wrong": only_ivm,
            "combined_only_svm_wrong": only_svm,
        }
        return {"index_sizes": [500], "by_index": {"500": {"rows": [], "summary": s}}}

    # the paper states an order (1.54 % against 1.62 %): 8 images of 68 discordant ones hold it, within the noise
    weak = check(results(1.38, 1.46, 30, 38))
    assert weak.status == "holds" and weak.p > 0.05 and "not beyond the run's noise" in weak.reading()
    strong = check(results(1.20, 1.46, 0, 26))  # 26 of 26 discordant images
    assert strong.status == "holds" and strong.p < 1e-6 and "noise" not in strong.reading()
    assert check(results(1.46, 1.38, 38, 30)).status == "fails"


def test_smola_bartlett_indistinguishable_is_a_paired_test():
    check = _check("smola-bartlett2001", "generalisation-sparse-equals-full")
    full = np.linspace(1.45, 1.55, 10)
    noise = np.tile([0.001, -0.001], 5)
    same = {"generalisation_mae": {"sparse": (full + noise).tolist(), "full GP": full.tolist()}}
    assert check(same).status == "holds"
    shifted = {"generalisation_mae": {"sparse": (full + 0.01 + noise).tolist(), "full GP": full.tolist()}}
    assert check(shifted).status == "fails"


def test_report_numbers_must_come_from_results_at_their_printed_precision():
    report = (
        "# A paper (2003)\n\nOurs: 0.1234 and 41.5 % of 1,024 rows (paper 0.4730), 3 runs.\n| 99.9 | in a table |\n"
    )
    results = {"a": [0.12341, 1024], "b": {"c": "41.5 % in a protocol cell"}}
    assert numbers_not_in_results(report, results) == []
    assert numbers_not_in_results(report.replace("0.1234", "0.1240"), results) == ["0.1240"]
    assert numbers_not_in_results(report.replace("41.5 %", "42.5 %"), results) == ["42.5"]
    assert numbers_not_in_results(report.replace("(2003)", "(2004)").replace("Ours", "In 2003 ours"), results) == [
        "2003"
    ]
    # a commit recorded in the results is a word, not the number 32 x 10^8795; a huge printed number is inf
    assert numbers_not_in_results(report, {**results, "commit": "32e8795"}) == []
    assert numbers_not_in_results(report + "Then 1e400 rows.\n", results) == ["1e400"]


def test_checked_in_reports_state_no_number_outside_their_results():
    import json

    from sparsegp.experiments.registry import papers

    reports = Path(__file__).resolve().parent.parent / "reports"
    for paper in papers():
        report = (reports / paper / "report.md").read_text()
        results = json.loads((reports / paper / "results.json").read_text())
        assert numbers_not_in_results(report, results) == [], paper


def test_lawrence_timing_claim_compares_the_spread_of_repeated_fits():
    check = _check("lawrence2003", "svm-time-fluctuates-ivm-stable")
    steady = [10.0, 10.2, 9.9, 10.1, 10.0]
    assert check({"timing": {"runs": 5, "svm_s": [5.0, 9.0, 6.5, 12.0, 7.0], "ivm_s": steady}}).status == "holds"
    assert check({"timing": {"runs": 5, "svm_s": steady, "ivm_s": steady}}).status == "fails"
    assert check({"timing": {}}).status == "not run"


def test_ten_rounds_holds_when_the_rounds_come_to_rest_and_measures_the_fluctuation_when_not():
    check = _check("quinonero-candela2005", "table1-ten-rounds-converge")

    def results(tail):
        path = [0.4, 0.2, *tail]
        return {
            "table1": {
                "upper": {
                    "per_repeat": [{m: {"round_train_nll_per_case": path} for m in ("HPEV-SGEV", "HPEV-SGGP")}] * 3
                }
            }
        }

    assert check(results([0.19, 0.185, 0.184, 0.184, 0.184, 0.184, 0.184, 0.184])).status == "holds"
    failed = check(results([0.21, 0.23, 0.20, 0.22, 0.21, 0.23, 0.20, 0.22]))
    assert failed.status == "fails"
    assert "band of 0.030" in failed.reason and "last round moves it by 0.020" in failed.reason
    assert "lowers it by 0.200" in failed.reason


def test_seeger_table1_criteria_quote_the_papers_ratios():
    """The Table 1 criteria quote the ratios of the paper's own table (random / info-gain 3/5 = 0.60 to 2/2 = 1.00;
    smo-bart / info-gain 17/1 = 17 to 54/2 = 27), computed from the table's seconds, not retyped."""
    from sparsegp.experiments.claims import claims_of
    from sparsegp.experiments.claims.seeger2003 import paper_ratio_range

    assert paper_ratio_range("random") == "the paper's table: 0.60-1.00"
    assert paper_ratio_range("smo-bart") == "the paper's table: 17-27"
    rows = [
        dict(n=2000, d=100, method=m, time_s=t, ratio_to_info_gain=t) for m, t in [("random", 0.9), ("smo-bart", 20)]
    ]
    checks = {c.key: c for c in claims_of("seeger2003")}
    assert "0.60-1.00" in checks["t1-random-as-fast"].check({"rows": rows}).criterion
    assert "17-27" in checks["t1-smo-bart-thirty-times"].check({"rows": rows}).criterion


def test_every_claim_has_a_kind_whose_rule_the_table_prints_once():
    from sparsegp.experiments.claims import KINDS
    from sparsegp.experiments.registry import papers

    claims = [c for p in papers() for c in claims_of(p)]
    assert claims and all(c.kind in KINDS for c in claims)
    with pytest.raises(ValueError, match="kind must be one of"):
        claim("p", "k", "1", "w", kind="roughly")
    order = Claim("p", "a", "1", "w", lambda r: Verdict("holds"), "order")
    level = Claim("p", "b", "1", "w", lambda r: Verdict("holds"), "about")
    rows = [(order, order.judge({})), (order, Verdict("holds", p=0.3, kind="order")), (level, level.judge({}))]
    table = verdict_table(rows)
    assert table.count(f"**order**: {KINDS['order']}.") == 1 and table.count(f"**about**: {KINDS['about']}.") == 1
    assert "**holds**, not beyond the run's noise (p = 0.3)" in table
    assert "significant order" not in table  # only the kinds in the table are explained


def test_seeger_fig2_times_are_read_as_the_papers_ratios():
    check = _check("seeger2003", "fig2-times")

    def results(smo_bart, full):
        curves = {
            f"{m} n=7168": {"d": [125], "avg_sq_error": [0.02], "time_s": [t]}
            for m, t in (("info-gain", 3.0), ("random", 2.0), ("smo-bart", smo_bart))
        }
        return {"pumadyn": {"learning_curves": {"curves": curves, "full_gp": {"fit_s": full}}}}

    assert check(results(66.0, 1102.5)).status == "holds"  # the paper's own seconds
    slow = check(results(15.0, 1102.5))  # smo-bart 5x info-gain: the former reading held, the paper's 22x does not
    assert slow.status == "fails" and "smo-bart / info-gain" in slow.reason


def test_titsias_snelson20_overfitting_is_measured_not_the_objective_against_log_p():
    check = _check("titsias2009", "snelson20-pp-overfits")

    def results(at_pp, pp_noise):
        dtc = {"objective": -4.0, "exact_log_marginal_at_its_hyperparameters": at_pp, "noise": pp_noise}
        return {"snelson20": {"dtc": dtc, "exact": {"log_marginal": -14.3, "noise": 0.065}}}

    assert check(results(-19.5, 0.029)).status == "holds"
    assert check(results(-14.5, 0.029)).status == "fails"  # PP's objective overstates log p(y), but no overfitting
    assert check(results(-19.5, 0.08)).status == "fails"


def test_seeger_fig3_compares_criteria_that_all_include_the_hyper_prior():
    check = _check("seeger2003", "fig3-random-poor-info-gain-acceptable")
    t = {"exact": [100.0, 50.0, 40.0]}
    t.update(
        {
            f"{m} d={d}": [101.0, 51.0, 41.0] if m == "info-gain" else [150.0, 90.0, 80.0]
            for m in ("info-gain", "random")
            for d in (100, 200)
        }
    )
    assert check({"pumadyn": {"trajectory": t}}).status == "not run"  # an older run: unlike quantities
    assert check({"pumadyn": {"trajectory": dict(t, criteria_include_the_prior=True)}}).status == "holds"


def test_titsias_var_bound_holds_below_log_p_and_tight_at_all_inputs():
    check = _check("titsias2009", "var-lower-bound-tight-at-all-inputs")

    def results(at_all, joint=-140.0):
        fixed = {
            "m": [10, 456],
            "n_train": 456,
            "exact_log_marginal": -131.0,
            "objective": {"vfe": [[-300.0] * 2, [at_all] * 2]},
        }
        return {"boston_fixed": fixed, "boston_joint": {"m": [10], "vfe": {"objective": [[joint] * 2]}}}

    assert check(results(-131.0)).status == "holds"
    assert check(results(-131.5)).status == "fails"  # not tight at X_m = X
    assert check(results(-130.0)).status == "fails"  # above log p(y)
    assert check(results(-131.0, joint=-120.0)).status == "fails"


def test_qcr_sggp_bounds_straddle_the_optimum():
    check = _check("quinonero-candela2005", "sinc-sggp-bounds")
    upper, lower = [[-7.0, -8.0, -8.3]], [[-9.0, -8.6, -8.4]]
    assert check({"curves": {"upper": upper, "lower": lower}, "sggp_optimum": [-8.35]}).status == "holds"
    assert check({"curves": {"upper": upper, "lower": lower}, "sggp_optimum": [-8.2]}).status == "fails"


def test_scaling_claims_read_the_exponents_of_the_measured_times():
    ivm = _check("lawrence2003", "ivm-time-at-most-n-d2")

    def rows(power):
        return [{"c": c, "d": d, "ivm_s": 1e-6 * d**power} for c, d in enumerate((1000, 1500, 2500, 4000))]

    def results(power):
        return {"index_sizes": [500], "by_index": {"500": {"rows": rows(power), "summary": {}}}}

    assert ivm(results(2.0)).status == "holds" and "d^2.00" in ivm(results(2.0)).ours
    assert ivm(results(3.0)).status == "fails"
    seeger = _check("seeger2003", "t1-scaling-n-d2")
    d = [100, 200, 400, 800]

    def curves(n_power, d_power):
        return {
            "curves": {
                f"{m} n={n}": {"d": d, "avg_sq_error": [0.1] * 4, "time_s": [1e-6 * n**n_power * x**d_power for x in d]}
                for m in ("info-gain", "random", "smo-bart")
                for n in (2000, 10000)
            }
        }

    assert seeger(curves(1.0, 2.0)).status == "holds"
    assert seeger(curves(1.0, 3.0)).status == "fails"
