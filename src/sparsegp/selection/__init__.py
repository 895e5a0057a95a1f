"""Greedy active-set (inducing-point) selection: the incremental state, criteria, stopping rules.

See :mod:`.active_set` (Seeger et al. App. A.1), :mod:`.criteria`, :mod:`.greedy`,
:mod:`.stopping`, :mod:`.smola_bartlett` (the dual, the gap, sparse error bars) and
:mod:`.selectors` (the user-facing strategy objects).
"""

from .. import _config  # noqa: F401  (JAX in float64 before any of this package's modules use it)
from .active_set import ActiveSetState
from .greedy import Selection, greedy_select
from .selectors import (
    SELECTORS,
    ConditionalVariance,
    DifferentialEntropy,
    Evidence,
    InfoGain,
    KMeans,
    Random,
    Selector,
    SmolaBartlett,
    VFEGreedy,
)
from .smola_bartlett import DualState, ErrorBars, relative_gap, sparse_error_bars
from .stopping import (
    EvidenceMinimum,
    HeldOutError,
    QuadraticFormGap,
    RelativeGap,
    RemainingError,
    StoppingRule,
    TimeBudget,
)

__all__ = [
    "ActiveSetState",
    "ConditionalVariance",
    "DifferentialEntropy",
    "DualState",
    "ErrorBars",
    "Evidence",
    "EvidenceMinimum",
    "HeldOutError",
    "InfoGain",
    "KMeans",
    "Random",
    "QuadraticFormGap",
    "RelativeGap",
    "RemainingError",
    "SELECTORS",
    "Selection",
    "Selector",
    "SmolaBartlett",
    "StoppingRule",
    "TimeBudget",
    "VFEGreedy",
    "greedy_select",
    "relative_gap",
    "sparse_error_bars",
]
