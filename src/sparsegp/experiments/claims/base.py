"""The machinery of the papers' claims: :class:`Claim`, :class:`Verdict`, the :func:`claim` decorator that
registers a check, helpers for writing checks, and the rendering of a verdict table."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from ...tables import markdown_table

STATUSES = ("holds", "fails", "not run")
SIGNIFICANCE = 0.05  # "significantly" where the paper names no level: a test at this level
# The kinds of sentence a claim can be, each with the one rule by which its verdict reads the run's numbers.
KINDS = {
    "order": "an order the paper states (A below B, A the best): holds when the run's numbers are in that order; "
    "where they come from repeats the claim can pair (or tasks, for a sign test), the one-sided test's p-value is "
    "printed beside the verdict and does not decide it",
    "significant order": "an order the paper calls significant: holds only when a test over the run's repeats "
    f"rejects at the paper's level (at {SIGNIFICANCE:g} where it names none); the p-value is printed",
    "no difference": "the paper finds no significant difference: holds when the test over the run's repeats does "
    "not reject at the paper's level; the smallest p-value is printed",
    "about": "a level the paper states without a spread ('about', a bare figure): holds within the tolerance the "
    "criterion names, our reading, since the paper gives none",
    "within spread": "a level with a spread the paper states: holds when the run's figure is within two standard "
    "errors of the paper's (of the difference of two means where the paper's ± is the spread of what it averages; "
    "binomial for a rate over many trials), or, for a count over a few runs, when a one-sided binomial test at "
    f"{SIGNIFICANCE:g} does not put it below the paper's",
    "bound": "a limit the paper states ('less than', 'below', 'at most'): holds when the run's number is on its side",
    "property": "a qualitative property (a shape, a count, a sign, a trend): holds when the run's numbers show it "
    "as the criterion defines it",
}


@dataclass(frozen=True)
class Verdict:
    """``status`` in :data:`STATUSES`; ``ours``: our numbers behind it; ``criterion``: the test applied;
    ``reason``: where the claim fails, the most likely reason, with the measurement from the run behind it;
    ``p``: the p-value of the test behind the verdict (for several, the one that decides it), None without one;
    ``kind``: the claim's kind in :data:`KINDS` (set by :meth:`Claim.judge`)."""

    status: str
    ours: str = ""
    criterion: str = ""
    reason: str = ""
    p: float | None = None
    kind: str = ""

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"verdict status must be one of {STATUSES}, got {self.status!r}")
        if self.kind and self.kind not in KINDS:
            raise ValueError(f"verdict kind must be one of {tuple(KINDS)}, got {self.kind!r}")

    def reading(self) -> str:
        """The verdict as the table prints it: the status and, for an order with a test, its p-value and whether
        the order is beyond the run's noise."""
        if self.status == "not run" or self.p is None:
            return f"**{self.status}**"
        if self.kind == "order" and self.status == "holds" and not self.p < SIGNIFICANCE:
            return f"**holds**, not beyond the run's noise (p = {self.p:.2g})"
        return f"**{self.status}** (p = {self.p:.2g})"


class NotRun(LookupError):
    """The results lack what a claim needs (raised by :func:`need`, reported as ``not run``)."""


@dataclass(frozen=True)
class Claim:
    """One claim of a paper: ``key`` (unique in the paper), ``section`` and ``wording`` as published, and its
    ``kind`` of sentence (:data:`KINDS`), which says how its verdict reads the run's numbers."""

    paper: str
    key: str
    section: str
    wording: str
    check: Callable[[dict], Verdict]
    kind: str = "property"

    def judge(self, results: dict) -> Verdict:
        """The verdict on ``results``, with this claim's kind (``not run`` where the results lack what it needs)."""
        try:
            v = self.check(results)
        except NotRun as missing:
            v = not_run(missing.args[0])
        return replace(v, kind=self.kind)


_REGISTRY: dict[str, dict[str, Claim]] = {}


def claim(paper: str, key: str, section: str, wording: str, *, kind: str):
    """Decorator registering ``check(results) -> Verdict`` as the paper's claim ``key`` of ``kind``
    (:data:`KINDS`)."""
    if kind not in KINDS:
        raise ValueError(f"claim {key!r}: kind must be one of {tuple(KINDS)}, got {kind!r}")

    def register(check):
        claims = _REGISTRY.setdefault(paper, {})
        if key in claims:
            raise ValueError(f"claim {key!r} of {paper} is registered twice")
        claims[key] = Claim(paper, key, section, wording, check, kind)
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


def verdict(
    holds: bool, ours: str, criterion: str, reason: str | Callable[[], str] = "", p: float | None = None
) -> Verdict:
    """``holds`` or ``fails``; ``reason`` (or a function computing it) is kept only where the claim fails; ``p``:
    the p-value of the test behind the verdict, if any (printed beside it)."""
    p = None if p is None or not np.isfinite(p) else float(p)
    if holds:
        return Verdict("holds", ours, criterion, p=p)
    if callable(reason):
        try:
            reason = reason()
        except (NotRun, LookupError) as missing:  # an older results.json without the measurement behind it
            reason = f"not computed: the run lacks {missing}"
        except (TypeError, ValueError, ZeroDivisionError) as bad:  # e.g. a median over no successful run
            reason = f"not computed: {type(bad).__name__}: {bad}"
    return Verdict("fails", ours, criterion, reason, p=p)


def paired_t(a, b) -> tuple[float, float]:
    """Mean of ``a - b`` and the two-sided p-value of the paired t-test over matched repeats."""
    from scipy import stats

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape or a.size < 2:
        raise NotRun("at least two paired repeats")
    return float(np.mean(a - b)), float(stats.ttest_rel(a, b).pvalue)


def above(a, b) -> float:
    """One-sided p-value of the paired t-test that ``a``'s mean is above ``b``'s over matched repeats (the p an
    order prints); NaN with fewer than two pairs or where every pair differs alike."""
    from scipy import stats

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape or a.size < 2 or np.ptp(a - b) == 0:
        return np.nan
    return float(stats.ttest_rel(a, b, alternative="greater").pvalue)


EXPONENT_TOLERANCE = 0.5  # a measured scaling exponent this close to the stated one (our reading)


def exponent(sizes, seconds) -> float:
    """The slope of a least-squares line through (log size, log seconds): the measured exponent of a scaling."""
    return float(np.polyfit(np.log(np.asarray(sizes, dtype=float)), np.log(np.asarray(seconds, dtype=float)), 1)[0])


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
    """The markdown table of claims and verdicts, with a count line above it and, under it, the reading rule of
    each kind of claim in the table."""
    counts = {s: sum(v.status == s for _, v in rows) for s in STATUSES}
    head = ", ".join(f"{counts[s]} {s}" for s in STATUSES)
    body = [
        [
            _cell(c.key),
            _cell(c.section),
            f"“{_cell(c.wording)}”",
            c.kind,
            _cell(v.reading()),
            _cell(v.ours),
            _cell(v.criterion),
        ]
        for c, v in rows
    ]
    table = markdown_table(
        ["claim", "section", "the paper says", "kind", "verdict", "ours", "criterion"], body, pad=False
    )
    kinds = [k for k in KINDS if any(c.kind == k for c, _ in rows)]
    rules = "\n*How each kind of claim is read*\n\n" + "\n".join(f"- **{k}**: {KINDS[k]}." for k in kinds) + "\n"
    failed = [f"- **{c.key}**: {v.reason or 'no reason computed.'}" for c, v in rows if v.status == "fails"]
    why = "\n*Where a claim fails: the most likely reason, from this run's numbers*\n\n" + "\n".join(failed) + "\n"
    return f"{len(rows)} claims: {head}.\n\n{table}\n" + rules + (why if failed else "")


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
