"""DTC / projected process (Seeger, Williams & Lawrence 2003)."""

from __future__ import annotations

from dataclasses import dataclass

from .base import Approximation


@dataclass(frozen=True)
class DTC(Approximation):
    """The likelihood approximation P(y | u) = N(y | P^T u, sigma^2 I), P = K_I^-1 K_I,. (sec. 2).

    It gives the approximate marginal likelihood log N(y | 0, sigma^2 I + Q_nn) = -phi of their Appendix A.2
    (without their hyper-prior terms), the predictive mean l_M*^T beta and the variance
    K_** - |l_*|^2 + sigma^2 |l_M*|^2 (their sec. 2.1), which equals K_** - Q_** + K_*u Sigma K_u* as
    :func:`~.common.sparse_predict` computes it.
    """

    name: str = "dtc"
    description: str = "DTC/PP approximate log marginal likelihood"


dtc = DTC()
dtc_log_marginal, dtc_posterior = dtc.objective, dtc.posterior
