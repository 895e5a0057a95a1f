"""The machinery of the papers' claims: :class:`Claim`, :class:`Verdict`, the :func:`claim` decorator that
registers a check, helpers for writing checks, and the rendering of a verdict table."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ...tables import markdown_table

STATUSES = ("holds", "fails", "not run")
SIGNIFICANCE = 0.05  # "significantly" where the paper names no level: a test at this level


@dataclass(frozen=True)
class Verdict:
    """``status`` in :data:`STATUSES`; ``ours``: our numbers behind it; ``criterion``: the test applied;
    ``reason``: where the claim fails, the most likely reason, with the measurement from the run behind it."""

    status: str
    ours: str = ""
    criterion: str = ""
    reason: str = ""

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"verdict status must be one of {STATUSES}, got {self.status!r}")


class NotRun(LookupError):
    """The results lack what a claim needs (raised by :func:`need`, reported as ``not run``)."""


@dataclass(frozen=True)
class Claim:
    """One claim of a paper: ``key`` (unique in the paper), ``section`` and ``wording`` as published."""

    paper: str
    key: str
    section: str
    wording: str
    check: Callable[[dict], Verdict]


_REGISTRY: dict[str, dict[str, Claim]] = {}


def claim(paper: str, key: str, section: str, wording: str):
    """Decorator registering ``check(results) -> Verdict`` as the paper's claim ``key``."""

    def register(check):
        claims = _REGISTRY.setdefault(paper, {})
        if key in claims:
            raise ValueError(f"claim {key!r} of {paper} is registered twice")
        claims[key] = Claim(paper, key, section, wording, check)
        return check

    return register


def need(results: dict, path: str):
    """``results`` at the slash-separated ``path``; :class:`NotRun` when any part is missing."""
    node = results
    for part in path.split("/"):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise NotRun(path)
    return node


def verdict(holds: bool, ours: str, criterion: str, reason: str | Callable[[], str] = "") -> Verdict:
    """``holds`` or ``fails``; ``reason`` (or a function computing it) is kept only where the claim fails."""
    if holds:
        return Verdict("holds", ours, criterion)
    if callable(reason):
        try:
            reason = reason()
        except (NotRun, LookupError) as missing:  # an older results.json without the measurement behind it
            reason = f"not computed: the run lacks {missing}"
        except (TypeError, ValueError, ZeroDivisionError) as bad:  # e.g. a median over no successful run
            reason = f"not computed: {type(bad).__name__}: {bad}"
    return Verdict("fails", ours, criterion, reason)


def paired_t(a, b) -> tuple[float, float]:
    """Mean of ``a - b`` and the two-sided p-value of the paired t-test over matched repeats."""
    from scipy import stats

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape or a.size < 2:
        raise NotRun("at least two paired repeats")
    return float(np.mean(a - b)), float(stats.ttest_rel(a, b).pvalue)


def one_sided_t(values, value: float, alternative: str) -> float:
    """p-value of the one-sample t-test that ``values``' mean is ``alternative`` ("less" or "greater") than
    ``value``; NaN with fewer than two values."""
    from scipy import stats

    values = np.asarray(values, dtype=float)
    return float(stats.ttest_1samp(values, value, alternative=alternative).pvalue) if values.size > 1 else np.nan


def binomial_below(successes: int, runs: int, rate: float) -> float:
    """One-sided p-value of ``successes`` or fewer in ``runs`` at the success ``rate`` (a paper's count)."""
    from scipy import stats

    return float(stats.binom.cdf(successes, runs, rate))


def not_run(what: str) -> Verdict:
    """The run did not compute ``what`` (for example a setting only the ``--full`` mode runs)."""
    return Verdict("not run", "", f"needs {what}")


def _cell(text: str) -> str:
    """``text`` safe inside a markdown table cell (a bare ``|`` would end the cell)."""
    return text.replace("|", "\\|") if text else "-"


def verdict_table(rows: list[tuple[Claim, Verdict]]) -> str:
    """The markdown table of claims and verdicts, with a count line above it."""
    counts = {s: sum(v.status == s for _, v in rows) for s in STATUSES}
    head = ", ".join(f"{counts[s]} {s}" for s in STATUSES)
    body = [
        [_cell(c.key), _cell(c.section), f"“{_cell(c.wording)}”", f"**{v.status}**", _cell(v.ours), _cell(v.criterion)]
        for c, v in rows
    ]
    table = markdown_table(["claim", "section", "the paper says", "verdict", "ours", "criterion"], body, pad=False)
    failed = [f"- **{c.key}**: {v.reason or 'no reason computed.'}" for c, v in rows if v.status == "fails"]
    why = "\n*Where a claim fails: the most likely reason, from this run's numbers*\n\n" + "\n".join(failed) + "\n"
    return f"{len(rows)} claims: {head}.\n\n{table}\n" + (why if failed else "")


BEGIN = "<!-- verdicts: computed from results.json by sparsegp.experiments.claims -->"
END = "<!-- /verdicts -->"


def section_of(rows: list[tuple[Claim, Verdict]]) -> str:
    """The verdict section for already evaluated ``rows`` ("" when there are none)."""
    if not rows:
        return ""
    return (
        f"{BEGIN}\n## The paper's claims on this run\n\nEach verdict is computed from this run's results.json "
        "(`sparsegp.experiments.claims`); *not run* marks a claim whose experiment the run did not include.\n\n"
        f"{verdict_table(rows)}{END}\n"
    )
