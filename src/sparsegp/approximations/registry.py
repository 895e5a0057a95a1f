"""The sparse approximations by name: what the estimator, the host objective and the CLI look up.

Each entry names an approximation's objective (the JAX program over the chunked sums), its posterior
(the prediction cache), ``from_stats`` (objective and GaussianTerms from the sums, the O(m^3) algebra that
:class:`~sparsegp.approximations.objective.HostObjective` chains by hand), whether its predictive variance is
degenerate (SoR's, QC&R eq. 27), and what its objective is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from .common import weighted_from_stats
from .dtc import dtc_from_stats, dtc_log_marginal, dtc_posterior
from .fitc import fitc_log_marginal, fitc_posterior
from .sor import sor_log_marginal, sor_posterior
from .vfe import vfe_bound, vfe_from_stats, vfe_posterior


class Approximation(NamedTuple):
    objective: Callable  # (kernel, Z, noise, X, y, *, chunk, jitter, counts, scatter) -> log marginal or bound
    posterior: Callable  # the same arguments -> SparsePosterior
    from_stats: Callable  # (sums, noise) -> (objective, GaussianTerms)
    degenerate: bool  # the predictive variance omits K** - Q** (SoR)
    description: str
    # (1 / Lambda_i-weighted sums, noise) -> (objective, GaussianTerms): FITC's own, and every method's with a
    # known noise variance per row (:func:`~sparsegp.stats.weighted_stats`)
    from_weighted: Callable = lambda st, noise: weighted_from_stats(st, False)


def _marginal_and_terms(g):
    return g.log_marginal, g


def _dtc_terms(st, noise):
    return _marginal_and_terms(dtc_from_stats(st, noise))


APPROXIMATIONS = {
    "vfe": Approximation(
        vfe_bound,
        vfe_posterior,
        vfe_from_stats,
        False,
        "VFE bound F_V (Titsias eq. 9)",
        lambda st, noise: weighted_from_stats(st, True),
    ),
    "dtc": Approximation(
        dtc_log_marginal, dtc_posterior, _dtc_terms, False, "DTC/PP approximate log marginal likelihood"
    ),
    "fitc": Approximation(
        fitc_log_marginal,
        fitc_posterior,
        lambda st, noise: weighted_from_stats(st, False),
        False,
        "FITC log marginal likelihood",
    ),
    # SoR's evidence has DTC's form (QC&R eq. 23); only its predictive variance differs
    "sor": Approximation(sor_log_marginal, sor_posterior, _dtc_terms, True, "SoR/RRGP log evidence (QC&R eq. 23)"),
}

__all__ = ["APPROXIMATIONS", "Approximation"]
