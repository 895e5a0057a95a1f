"""FITC / SPGP (Snelson & Ghahramani 2006), as compared in Titsias 2009 sec. 2."""

from __future__ import annotations

from dataclasses import dataclass

from .base import Approximation


@dataclass(frozen=True)
class FITC(Approximation):
    """log N(y | 0, Q_nn + Lambda), Lambda = diag(K_nn - Q_nn) + sigma^2 I (+ diag(v_i) with known noise
    variances per row): the prior's covariance replaced by Q_nn + diag(K_nn - Q_nn) (Titsias eq. 3 with the
    SPGP Q_nn), so its rows are weighted by 1 / Lambda_i, which depend on the inducing inputs.
    """

    name: str = "fitc"
    description: str = "FITC log marginal likelihood"
    diagonal: float = 1.0


fitc = FITC()
fitc_log_marginal, fitc_posterior = fitc.objective, fitc.posterior
