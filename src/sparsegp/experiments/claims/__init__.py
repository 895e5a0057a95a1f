"""The papers' claims as predicates on a reproduction's results: verdicts computed, not written.

A :class:`Claim` carries the paper's wording and section and a function of the run's ``results``
(results.json's ``"results"``) returning a :class:`Verdict`: ``holds``, ``fails`` or ``not run``
(the run did not compute what the claim needs, as in ``--quick`` mode), our numbers and the
criterion or statistical test applied. Each paper registers its claims in a module of this package;
:func:`evaluate` runs them all and :func:`verdict_section` renders the section each report carries under
its protocol table.
"""

from __future__ import annotations

# importing a paper's module registers its claims
from . import lawrence2003, quinonero_candela2005, seeger2003, smola_bartlett2001, titsias2009  # noqa: F401
from .base import (
    _REGISTRY,
    BEGIN,
    END,
    KINDS,
    SIGNIFICANCE,
    STATUSES,
    Claim,
    NotRun,
    Verdict,
    binomial_below,
    claim,
    need,
    not_run,
    one_sided_t,
    paired_t,
    section_of,
    verdict,
    verdict_table,
)


def claims_of(paper: str) -> list[Claim]:
    """Every registered claim of ``paper``, in the order the paper makes them."""
    return list(_REGISTRY.get(paper, {}).values())


def evaluate(paper: str, results: dict) -> list[tuple[Claim, Verdict]]:
    """Each claim of ``paper`` with its verdict on ``results``."""
    return [(c, c.judge(results)) for c in claims_of(paper)]


def verdict_section(paper: str, results: dict) -> str:
    """The report section of ``paper``'s verdicts on ``results``, between :data:`BEGIN` and :data:`END`."""
    return section_of(evaluate(paper, results))


__all__ = [
    "BEGIN",
    "END",
    "KINDS",
    "SIGNIFICANCE",
    "STATUSES",
    "Claim",
    "NotRun",
    "Verdict",
    "binomial_below",
    "claim",
    "claims_of",
    "evaluate",
    "need",
    "not_run",
    "one_sided_t",
    "paired_t",
    "section_of",
    "verdict",
    "verdict_section",
    "verdict_table",
]
