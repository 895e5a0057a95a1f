"""Seeger, Williams & Lawrence (2003): the published Table 1 (shared by the experiment and its claims)."""

from __future__ import annotations

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
