"""SoR / reduced-rank GP (Quiñonero-Candela & Rasmussen 2005, sec. 4.1-4.2)."""

from __future__ import annotations

from dataclasses import dataclass

from .base import Approximation


@dataclass(frozen=True)
class SoR(Approximation):
    """f = K_nm alpha_m with alpha_m ~ N(0, K_mm^-1) (eq. 22).

    The evidence is N(y | 0, sigma^2 I + K_nm K_mm^-1 K_mn) (eq. 23; the same value as DTC's), its posterior
    mu and Sigma of eq. 26 in factored form, and its prediction the degenerate one of eq. 27: mean
    k(x*)^T mu, variance sigma^2 + k(x*)^T Sigma k(x*), which collapses to the noise far from Z.
    """

    name: str = "sor"
    description: str = "SoR/RRGP log evidence (QC&R eq. 23)"
    degenerate: bool = True


sor = SoR()
sor_log_marginal, sor_posterior = sor.objective, sor.posterior
