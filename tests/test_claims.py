"""Claims as predicates: the registry, missing results as "not run", verdicts computed from numbers."""

import pytest

from sparsegp.experiments.claims import (
    STATUSES,
    NotRun,
    Verdict,
    claim,
    claims_of,
    evaluate,
    need,
    verdict_table,
)


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
        claim("titsias2009", "snelson-values", "4.1", "again")(lambda r: Verdict("holds"))


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
    assert broken.status == "fails" and "order broken at m = [25]" in broken.ours


def test_titsias_snelson_values_compare_at_the_papers_precision():
    (c,) = [c for c in claims_of("titsias2009") if c.key == "snelson-values"]
    paper = {"vfe_bound": -55.5708, "exact_log_marginal": -55.5647}

    def run(bound, exact):
        return {"snelson200": {"paper": paper, "vfe": {"objective": bound}, "exact": {"log_marginal": exact}}}

    assert c.check(run(-55.57077, -55.56471)).status == "holds"
    assert c.check(run(-55.5712, -55.56471)).status == "fails"
