"""Selection criteria: how a candidate for inclusion into the active set is scored (higher is better).

Each criterion is a pure scoring rule on :class:`~.active_set.ActiveSetState`.
The cheap ones (O(1) per point) read p, q, mu and the diagonal only; the
expensive ones (O(n d) per point) also need :meth:`ActiveSetState.extend`, the
new rows that each candidate would create, and so are scored on random
candidate subsets (Smola & Bartlett sec. 4, kappa = 59).
"""

from __future__ import annotations

import numpy as np

from .active_set import ActiveSetState, Extension


class ScoringRule:
    """Base of the scoring rules. ``expensive`` rules need the candidates' kernel columns."""

    name = "rule"
    expensive = False

    def scores(self, state: ActiveSetState, C: np.ndarray, ext: Extension | None, rng) -> np.ndarray:
        raise NotImplementedError


class RandomRule(ScoringRule):
    """Uniformly random choice among the candidates."""

    name = "random"

    def scores(self, state, C, ext, rng):
        return rng.random(len(C))


class InfoGainRule(ScoringRule):
    """Seeger et al. (2003) eq. 3: the approximate information gain D[Q^new || Q] in O(1) per point.

    Delta_i = -log(sigma / l_i) - 1/2 (log xi_i + xi_i (1 - kappa_i) sigma^-2 (y_i - mu_i)^2 - kappa_i + 2),
    kappa_i = xi_i (1 + 2 (sigma / l_i)^2), xi_i = ((sigma / l_i)^2 + 1 - q_i)^-1, l_i^2 = K_ii - p_i.
    """

    name = "info-gain"

    def scores(self, state, C, ext, rng):
        s2 = state.noise
        l2 = state.residual(C)
        r = s2 / l2  # (sigma / l_i)^2
        xi = 1.0 / (r + 1.0 - state.q[C])
        kappa = xi * (1.0 + 2.0 * r)
        e2 = (state.y[C] - state.mu[C]) ** 2
        return 0.5 * np.log(1.0 / r) - 0.5 * (np.log(xi) + xi * (1.0 - kappa) * e2 / s2 - kappa + 2.0)


class DifferentialEntropyRule(ScoringRule):
    """The IVM's entropy score (Lawrence et al. 2003 eq. 4) for Gaussian noise, O(1) per point.

    Adding the true site N(y_i | u_i, sigma^2) to the current posterior Q shrinks its entropy by
    H[Q] - H[Q^new] = -1/2 log(1 - varsigma_i nu_i) = 1/2 log(1 + varsigma_i / sigma^2),
    nu_i = 1 / (sigma^2 + varsigma_i), where varsigma_i = K_ii - p_i + sigma^2 q_i is Q's marginal variance.
    """

    name = "differential-entropy"

    def scores(self, state, C, ext, rng):
        return 0.5 * np.log1p(state.marginal_var(C) / state.noise)


class ConditionalVarianceRule(ScoringRule):
    """The largest residual prior variance K_ii - p_i: pivoted Cholesky / the trace criterion.

    Each inclusion lowers tr(K - Q_nn) (the VFE trace term) by ||v||^2 >= the chosen residual;
    the point with the largest residual is the pivot of a partial pivoted Cholesky of K.
    """

    name = "conditional-variance"

    def scores(self, state, C, ext, rng):
        return state.residual(C)


class SmolaBartlettRule(ScoringRule):
    """Smola & Bartlett (2001) Algorithm 1 scored as in Seeger et al. sec. 3: Delta^SB = beta_{d+1}^2 / 2.

    The decrease of Q(alpha) = -y^T K alpha + 1/2 alpha^T (sigma^2 K + K^T K) alpha (their eq. 5) at its
    minimiser when alpha may use one more component.
    """

    name = "smo-bart"
    expensive = True

    def scores(self, state, C, ext, rng):
        return 0.5 * ext.beta**2


class EvidenceRule(ScoringRule):
    """Quinonero-Candela & Rasmussen (2005) eqs. 30-33: the decrease of the negative log evidence.

    With the new diagonal l_Mi of L_M and new component beta_{d+1} (their App. A.3 incremental Cholesky),
    L_i - L = log l_Mi - 1/2 log sigma^2 - beta_{d+1}^2 / (2 sigma^2): the log-determinant term G_i (eq. 33)
    and the quadratic term Q_i (eq. 32) of the candidate's evidence.
    """

    name = "evidence"
    expensive = True

    def scores(self, state, C, ext, rng):
        return 0.5 * np.log(state.noise) - np.log(ext.lMd) + 0.5 * ext.beta**2 / state.noise


class VFERule(ScoringRule):
    """Titsias (2009) sec. 3.1: the increase of the variational bound F (eq. 9) from including a point.

    F's change is the evidence change (above) plus the trace term's: ||v||^2 / (2 sigma^2), where v is
    the candidate's new row of V (p grows by v^2 element-wise).
    """

    name = "vfe"
    expensive = True

    def scores(self, state, C, ext, rng):
        vv = np.einsum("ij,ij->j", ext.v, ext.v)
        return 0.5 * np.log(state.noise) - np.log(ext.lMd) + 0.5 * (ext.beta**2 + vv) / state.noise
