"""VFE: Titsias's (2009) collapsed variational bound and optimal q(f_m)."""

from __future__ import annotations

from dataclasses import dataclass

from .base import Approximation


@dataclass(frozen=True)
class VFE(Approximation):
    """F_V(X_m) = log N(y | 0, sigma^2 I + Q_nn) - 1/(2 sigma^2) tr(K_nn - Q_nn)  (Titsias eq. 9).

    Q_nn = K_nm K_mm^-1 K_mn. A lower bound on log p(y) for any Z; O(n m^2), chunked. With known noise
    variances v_i per row, sigma^2 I becomes Lambda = diag(sigma^2 + v_i) and the trace term
    sum_i (K_ii - Q_ii) / (2 Lambda_i). Its posterior is the optimal q(f_m) (eq. 10), predicting with eq. 6,
    the same predictive form as DTC's.
    """

    name: str = "vfe"
    description: str = "VFE bound F_V (Titsias eq. 9)"
    trace_term: bool = True


vfe = VFE()
vfe_bound, vfe_posterior = vfe.objective, vfe.posterior
