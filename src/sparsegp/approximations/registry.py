"""The sparse approximations by name: what the estimator, the fit and the command line look up.

Each entry is an :class:`~.base.Approximation`: its objective and posterior from the sums of either engine,
its row weights, its leave-one-out predictive, whether its predictive variance is degenerate, its
description. A new approximation is one module defining its subclass and one line here.
"""

from __future__ import annotations

from .base import Approximation
from .dtc import DTC
from .fitc import FITC
from .sor import SoR
from .vfe import VFE

APPROXIMATIONS: dict[str, Approximation] = {a.name: a for a in (VFE(), DTC(), FITC(), SoR())}

__all__ = ["APPROXIMATIONS", "Approximation"]
