"""Seeger, Williams & Lawrence (2003): the published Tables 1 and 2 (shared by the experiments and their
claims)."""

from __future__ import annotations

from typing import NamedTuple

PAPER_TIMES = {  # Table 1, seconds; d = 100 200 300 400 500 1000 1250
    2000: {
        "info-gain": [1.0, 2.0, 5.0, 9.0, 13.5, 53.5, 85.0],
        "random": [1.0, 2.0, 4.0, 7.0, 11.0, 48.0, 76.0],
        "smo-bart": [17.0, 54.0, 110.0, 185.0, 281.0, 1088.0, 1714.5],
    },
    10000: {
        "info-gain": [5.0, 13.0, 25.5, 42.0, 62.5, 230.0, 352.0],
        "random": [3.0, 10.0, 21.0, 35.5, 55.0, 215.0, 338.5],
        "smo-bart": [88.0, 265.0, 530.5, 885.0, 1327.5, 4977.0, 7794.5],
    },
}
PAPER_D = [100, 200, 300, 400, 500, 1000, 1250]


class Table2Row(NamedTuple):
    """One row of Table 2 (pumadyn-32nm, n_MS = 1,024): successful runs of 10, then the medians over the
    successful runs (none published where at most one run succeeded)."""

    successes: int
    error: float | None
    iterations: float | None
    seconds: float | None


PAPER_TABLE2 = {  # keyed as the experiment's rows: "full GPR", "<method> d=<d>"
    "full GPR": Table2Row(10, 0.0236, 200, 22100.5),
    "info-gain d=500": Table2Row(10, 0.0296, 200, 9079),
    "info-gain d=200": Table2Row(10, 0.0259, 177.5, 1833.5),
    "info-gain d=100": Table2Row(9, 0.0252, 200, 836),
    "random d=500": Table2Row(8, 0.0244, 95, 4412),
    "fixed d=500": Table2Row(9, 0.0239, 200, 9203),
    "info-gain d=50": Table2Row(1, None, None, None),
    "random d=100": Table2Row(0, None, None, None),
    "fixed d=100": Table2Row(0, None, None, None),
}
PAPER_TABLE2_MEDIANS = {k: row for k, row in PAPER_TABLE2.items() if row.error is not None}
