"""Titsias 2009, Snelson 1-D: the paper's numbers (bound -55.5708, exact -55.5647)."""

import os

import pytest

from sparsegp.experiments.titsias2009 import snelson

# one xdist worker runs this module, so its module-scoped fixture is computed once
pytestmark = [pytest.mark.xdist_group("snelson"), pytest.mark.slow]


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    out = tmp_path_factory.mktemp("snelson")
    return snelson(str(out), starts=2), out


def test_vfe_bound_and_exact_evidence_match_the_paper(result):
    r, _ = result
    assert r["exact"]["log_marginal"] == pytest.approx(-55.5647, abs=0.05)
    assert r["vfe"]["objective"] == pytest.approx(-55.5708, abs=0.05)
    assert r["vfe"]["objective"] <= r["exact"]["log_marginal"] + 1e-9
    for key in ("variance", "lengthscale", "noise"):
        assert r["vfe"][key] == pytest.approx(r["exact"][key], rel=0.05)


def test_dtc_and_fitc_are_further_from_the_exact_gp(result):
    r, out = result
    for other in ("dtc", "fitc"):
        assert r[other]["kl_exact_to_approx_on_grid"] > 10 * r["vfe"]["kl_exact_to_approx_on_grid"]
        # Their own objectives overestimate the evidence; the exact evidence at their hyper-parameters is lower.
        assert r[other]["exact_log_marginal_at_its_hyperparameters"] < r["exact"]["log_marginal"] - 1.0
    assert os.path.getsize(os.path.join(out, "snelson.png")) > 10_000
