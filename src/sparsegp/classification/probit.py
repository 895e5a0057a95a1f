"""The probit noise model with bias and its ADF site update (Lawrence, Seeger & Herbrich 2003, eq. 2).

P(y | u) = Phi(y (u + b)), y in {-1, +1}. Including point i into the active set
multiplies the current Gaussian marginal N(u_i | h_i, a_ii) by P(y_i | u_i) and
projects back onto a Gaussian (moment matching). Everything here is vectorised
over points and works in log space so that confidently misclassified points
(z << 0) do not overflow N(z) / Phi(z).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import log_ndtr, ndtri

from ..errors import InputError

_LOG_SQRT_2PI = 0.5 * np.log(2.0 * np.pi)


@dataclass(frozen=True)
class Sites:
    """The quantities of eq. 2 for each point (arrays of equal length)."""

    z: np.ndarray  # y (h + b) / sqrt(1 + a)
    alpha: np.ndarray  # d log Z / d h
    nu: np.ndarray  # -d^2 log Z / d h^2
    log_Z: np.ndarray  # log Phi(z): the ADF normaliser of this inclusion

    def precision(self, a) -> np.ndarray:
        """p_i = nu_i / (1 - a_ii nu_i): the site precision."""
        return self.nu / (1.0 - a * self.nu)


def inverse_mills(z):
    """N(z) / Phi(z), stable for very negative z."""
    z = np.asarray(z, dtype=np.float64)
    return np.exp(-0.5 * z * z - _LOG_SQRT_2PI - log_ndtr(z))


def site_update(y, h, a, b: float) -> Sites:
    """Eq. 2 of Lawrence, Seeger & Herbrich (2003): the ADF quantities for points with labels y and marginals
    N(h, a) under the probit likelihood Phi(y (u + b)):
    z = y (h + b) / sqrt(1 + a), alpha = y N(z) / (Phi(z) sqrt(1 + a)), nu = alpha (alpha + (h + b) / (1 + a)).

    Parameters
    ----------
    y : array of shape (k,)
        Labels in {-1, +1}.
    h, a : array of shape (k,)
        The points' current marginal means and variances.
    b : float
        The probit bias.

    Returns
    -------
    Sites
        z, alpha, nu and log Z = log Phi(z) per point.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsegp.classification import site_update
    >>> sites = site_update(np.array([1.0, -1.0]), np.zeros(2), np.ones(2), 0.0)
    >>> sites.alpha, sites.log_Z  # alpha = +-N(0) / (Phi(0) sqrt 2); log Phi(0) = -log 2
    (array([ 0.5642, -0.5642]), array([-0.6931, -0.6931]))
    """
    y, h, a = (np.asarray(v, dtype=np.float64) for v in (y, h, a))
    s = np.sqrt(1.0 + a)
    z = y * (h + b) / s
    alpha = y * inverse_mills(z) / s
    nu = alpha * (alpha + (h + b) / (1.0 + a))
    return Sites(z, alpha, nu, log_ndtr(z))


def entropy_score(a, nu):
    """Eq. 4: Delta_j = -1/2 log(1 - a_jj nu_j), the reduction of Q's entropy from including point j.

    Parameters
    ----------
    a : array
        The points' marginal variances diag(A).
    nu : array
        Their nu of eq. 2 (:func:`site_update`).

    Returns
    -------
    ndarray
        One score per point; the IVM includes the largest.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsegp.classification import entropy_score, site_update
    >>> sites = site_update(np.array([1.0]), np.zeros(1), np.ones(1), 0.0)
    >>> entropy_score(np.ones(1), sites.nu)
    array([0.1916])
    """
    return -0.5 * np.log1p(-a * nu)


def info_gain_score(a, alpha, nu):
    """The information gain KL(Q_new || Q) of including point j, in O(1): only u_j's marginal changes, from
    N(h, a) to N(h + a alpha, a (1 - a nu)), so the KL is that of two 1-D Gaussians,
    1/2 (a alpha^2 - a nu - log(1 - a nu)).

    Parameters
    ----------
    a : array
        The points' marginal variances diag(A).
    alpha, nu : array
        Their alpha and nu of eq. 2 (:func:`site_update`).

    Returns
    -------
    ndarray
        One score per point.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsegp.classification import info_gain_score, site_update
    >>> sites = site_update(np.array([1.0, 1.0]), np.array([0.0, 3.0]), np.ones(2), 0.0)
    >>> info_gain_score(np.ones(2), sites.alpha, sites.nu)  # a point already classified with confidence gains little
    array([0.1916, 0.001 ])
    """
    return 0.5 * (a * alpha * alpha - a * nu - np.log1p(-a * nu))


def probit_bias(n_positive: int, n: int) -> float:
    """b = Phi^-1(r) with r the fraction of +1 labels, so that Phi(b) is the prior P(y = +1) at u = 0.

    The paper calls r "the ratio between +1 and -1 patterns"; the fraction n+/n is used here so that b
    exists for any class balance (for MNIST's roughly 1:9 tasks the two differ by about 0.06).

    Parameters
    ----------
    n_positive : int
        Points labelled +1.
    n : int
        All points.

    Returns
    -------
    float

    Raises
    ------
    InputError
        If there is no point of one of the classes.

    Examples
    --------
    >>> from sparsegp.classification import probit_bias
    >>> round(probit_bias(100, 1000), 4)
    -1.2816
    """
    if not 0 < n_positive < n:
        raise InputError(f"probit_bias needs points of both classes: {n_positive} of {n} are +1")
    return float(ndtri(n_positive / n))


def predictive_probability(mean, var, b: float):
    """Eq. 5: P(y* = +1 | x*) = Phi((mu + b) / sqrt(1 + sigma^2)); returned as log P(+1), log P(-1)."""
    z = (np.asarray(mean) + b) / np.sqrt(1.0 + np.asarray(var))
    return log_ndtr(z), log_ndtr(-z)
