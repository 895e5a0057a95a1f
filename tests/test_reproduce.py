"""`sparsegp reproduce all --quick`: every paper's report, figures and finite numbers."""

import json
import math
import os

import pytest

from sparsegp.cli import main
from sparsegp.experiments.claims import STATUSES, claims_of, evaluate, verdict_section, verdict_table
from sparsegp.experiments.index import agreement_outside_verdicts, numbers_not_in_results
from sparsegp.experiments.registry import papers, reproduce


def _numbers(x):
    if isinstance(x, dict):
        for v in x.values():
            yield from _numbers(v)
    elif isinstance(x, list):
        for v in x:
            yield from _numbers(v)
    elif isinstance(x, (int, float)) and not isinstance(x, bool):
        yield x


@pytest.fixture(scope="session")
def _quick_runs():
    """Output folders of the reproductions run so far in this process, by paper."""
    return {}


# One reproduction per paper. Each paper's tests form one xdist group, so they run in one process and
# the papers run side by side. pytest tears a parametrised fixture down when the next test needs another
# parameter, so the folders are kept in a session cache: each paper runs once whatever the order.
PAPERS = [pytest.param(p, marks=[pytest.mark.xdist_group(f"reproduce-{p}"), pytest.mark.slow], id=p) for p in papers()]
per_paper = pytest.mark.parametrize("quick", PAPERS, indirect=True)


@pytest.fixture
def quick(request, tmp_path_factory, _quick_runs):
    """(paper, its output folder) after ``sparsegp reproduce <paper> --quick``."""
    paper = request.param
    if paper not in _quick_runs:
        d = tmp_path_factory.mktemp("reproduce")
        assert main(["reproduce", paper, "--quick", "--out", str(d), "--quiet"]) == 0
        _quick_runs[paper] = d / paper
    return paper, _quick_runs[paper]


@per_paper
def test_quick_report_exists_with_figures_and_finite_numbers(quick):
    paper, folder = quick
    report = (folder / "report.md").read_text()
    assert report.startswith("# ") and "Command: `sparsegp reproduce" in report and "Date: " in report
    assert "| paper" in report or " paper |" in report  # a column of published values beside ours
    with open(folder / "results.json") as f:
        res = json.load(f)
    assert res["paper"] == paper and res["mode"] == "quick" and res["version"]
    nums = list(_numbers(res["results"]))
    assert len(nums) > 10 and all(math.isfinite(v) for v in nums)
    assert res["figures"], "every paper draws at least one figure"
    for fig in res["figures"]:
        assert os.path.getsize(folder / fig) > 5000 and f"({fig})" in report


def test_all_runs_every_paper_in_order(tmp_path, monkeypatch):
    from sparsegp.experiments import registry

    ran, names = [], papers()

    def entry(name):
        def run(out, mode, verbose, command, step):
            ran.append((name, mode, command))
            return os.path.join(out, "report.md")

        return run

    monkeypatch.setattr(registry, "_entries", lambda: {p: entry(p) for p in names})
    written = reproduce("all", mode="quick", out=str(tmp_path), log=None)
    assert ran == [(p, "quick", "sparsegp reproduce all --quick") for p in names] and len(names) == 5
    assert written == [os.path.join(str(tmp_path), p, "report.md") for p in names]


def test_resume_keeps_only_reports_written_by_this_code_in_this_mode(tmp_path, monkeypatch):
    from sparsegp.experiments import registry, report
    from sparsegp.experiments.steps import direct

    ran, kept, names = [], [], papers()

    def entry(name):
        def run(out, mode, verbose, command, step):
            ran.append(name)
            kept.append(step is not direct)
            return os.path.join(out, "report.md")

        return run

    def finished(paper, mode, revision):
        folder = tmp_path / paper
        folder.mkdir()
        (folder / "report.md").write_text("# done\n\nsparsegp 0.1.0 (commit abc123)\n")
        (folder / "results.json").write_text(
            json.dumps(
                {"paper": paper, "mode": mode, "revision": revision, "date": "2026-11-25", "command": "", "results": {}}
            )
        )

    monkeypatch.setattr(registry, "_entries", lambda: {p: entry(p) for p in names})
    monkeypatch.setattr(report, "source_revision", lambda: "abc123")
    finished(names[0], "full", "abc123")  # kept
    finished(names[1], "quick", "abc123")  # another mode: run again
    finished(names[2], "full", "def456")  # other code: run again
    finished(names[3], "full", None)  # no recorded commit: run again
    written = reproduce("all", mode="full", out=str(tmp_path), log=None, resume=True)
    assert ran == names[1:] and len(written) == 5
    assert kept == [True] * 4  # the papers run again keep their finished steps
    ran.clear(), kept.clear()
    reproduce("all", mode="full", out=str(tmp_path), log=None)  # without --resume everything runs
    assert ran == names and kept == [False] * 5
    ran.clear(), kept.clear()
    monkeypatch.setattr(report, "source_revision", lambda: "abc123+modified")
    reproduce("all", mode="full", out=str(tmp_path), log=None, resume=True)  # uncommitted code keeps nothing
    assert ran == names and kept == [False] * 5


def test_report_names_the_commit_it_was_written_from(tmp_path, monkeypatch):
    from sparsegp.experiments import report

    monkeypatch.setattr(report, "source_revision", lambda: "abc123")
    rep = report.Report("titsias2009", "Titsias (2009)", "quick")
    rep.write(str(tmp_path))
    assert "sparsegp " in (tmp_path / "report.md").read_text()
    assert "(commit abc123)" in (tmp_path / "report.md").read_text()
    assert json.loads((tmp_path / "results.json").read_text())["revision"] == "abc123"


def test_source_revision_is_a_commit_or_none():
    import re

    from sparsegp.experiments.report import source_revision

    revision = source_revision()  # None where the package is not in a git checkout (an installed wheel)
    assert revision is None or re.fullmatch(r"[0-9a-f]{12}(\+modified)?", revision), revision


def test_unknown_paper_and_mode_are_clear_errors(tmp_path):
    from sparsegp.errors import InputError

    with pytest.raises(InputError, match="unknown paper 'nips99'"):
        reproduce("nips99", out=str(tmp_path))
    with pytest.raises(InputError, match="mode"):
        reproduce("titsias2009", mode="medium", out=str(tmp_path))


SECTIONS = {
    "seeger2003": ["Table 1", "pumadyn-32nm", "Fig. 2", "Fig. 3", "Table 2"],
    "titsias2009": ["Snelson", "Boston housing", "Fig. 2 a-b", "Fig. 2 d-f", "Fig. 3"],
    "quinonero-candela2005": ["Fig. 1", "Fig. 2", "Table 1 (upper)", "Table 1 (lower)", "paired t-tests"],
    "lawrence2003": ["Table 1", "reject"],
    "smola-bartlett2001": ["Fig. 1", "Table 2", "Generalisation", "synthetic"],
}


@per_paper
def test_quick_report_covers_every_experiment_of_the_issue(quick):
    paper, folder = quick
    report = (folder / "report.md").read_text()
    missing = [s for s in SECTIONS[paper] if s not in report]
    assert not missing, f"{paper}: no section for {missing}"


@per_paper
def test_quick_run_evaluates_every_registered_claim_and_its_report_shows_them(quick):
    paper, folder = quick
    with open(folder / "results.json") as f:
        results = json.load(f)["results"]
    verdicts = evaluate(paper, results)
    assert verdicts and [c.key for c, _ in verdicts] == [c.key for c in claims_of(paper)]
    report = (folder / "report.md").read_text()
    assert verdict_section(paper, results) in report
    for c, v in verdicts:
        assert v.status in STATUSES
        assert f"| {c.key} | {c.section} |" in report and f"**{v.status}**" in report
    assert f"{len(verdicts)} claims: " in report
    readme = (folder.parent / "README.md").read_text()
    assert f"({paper}/report.md)" in readme and verdict_table(verdicts) in readme
    assert not agreement_outside_verdicts(report), f"{paper}: a sentence outside the verdicts claims agreement"
    with open(folder / "results.json") as f:
        unrecorded = numbers_not_in_results(report, json.load(f))
    assert not unrecorded, f"{paper}: the report states numbers its results.json does not hold: {unrecorded}"


@per_paper
def test_quick_report_starts_with_the_protocol_table_and_says_why_each_setting_differs(quick):
    paper, folder = quick
    report = (folder / "report.md").read_text()
    with open(folder / "results.json") as f:
        protocol = json.load(f)["protocol"]
    assert len(protocol) >= 4
    assert report.index("## Protocol: the paper's and this run's") < report.index("## The paper's claims")
    for row in protocol:
        assert (row["why"] == "-") == (row["paper"] == row["ours"]), row
        assert f"| {row['setting']} | {row['paper']} | {row['ours']} | {row['why']} |" in report
    assert any(row["why"] != "-" for row in protocol)  # the quick mode always differs somewhere
