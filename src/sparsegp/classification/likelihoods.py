"""Likelihoods of the sparse variational GP classifier: each an object with its expected log density.

The bound of Hensman, Matthews & Ghahramani (2015, eq. 3) needs, for every row, E_q[log p(y_i | f_i)] under the
Gaussian marginal q(f_i) = N(mu_i, v_i) of each latent function; prediction needs the predictive probability
int p(y | f) q(f) df. Both are low-dimensional integrals:

* :class:`Bernoulli` (binary, y in {-1, +1}): p(y | f) = link(y f), probit (Phi) or logit (the logistic
  sigmoid). E_q[log p] by Gauss-Hermite quadrature in one dimension; the probit predictive is exact,
  Phi(mu / sqrt(1 + v)), the logit predictive by the same quadrature.
* :class:`Softmax` (C classes, y in {0, ..., C-1}): p(y = c | f) = exp(f_c) / sum_j exp(f_j) over C latent
  functions. E_q[log p] = mu_y - E_q[log sum_j exp f_j]: the C-dimensional expectation by a fixed set of
  quasi-random normal points (the same for every row and evaluation, so the bound stays a deterministic
  function for L-BFGS).
* :class:`RobustMax` (C classes): p(y = c | f) = 1 - eps where f_c is the largest, eps / (C - 1) otherwise
  (Girolami & Rogers 2006; GPflow's ``MultiClass``). E_q[log p] needs P(f_y is the largest), a one-dimensional
  integral by Gauss-Hermite quadrature.

Every function takes ``mu`` and ``var`` of shape (n, L) (L latent functions: 1 for binary, C otherwise) and
integer-coded labels ``y`` of shape (n,); they are pure JAX and differentiable in ``mu`` and ``var``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import log_ndtr
from scipy.stats import qmc

from ..errors import InputError

GH_POINTS = 20  # Gauss-Hermite nodes: exact for polynomials of degree 39; log Phi and log sigmoid are smooth
SOFTMAX_POINTS = 64  # quasi-random points of the softmax expectation (a scrambled Sobol' set, fixed seed)
ROBUST_EPS = 1e-3  # GPflow's default for the robust-max likelihood


def gauss_hermite(points: int = GH_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """Nodes t and weights w with sum_k w_k g(t_k) ~ E[g(T)] for T ~ N(0, 1) (probabilists' Hermite rule)."""
    t, w = np.polynomial.hermite_e.hermegauss(points)
    return t, w / np.sqrt(2.0 * np.pi)


def _expect_1d(g, mu, var, points: int = GH_POINTS):
    """E[g(F)] for F ~ N(mu, var), elementwise, by Gauss-Hermite quadrature."""
    t, w = gauss_hermite(points)
    f = mu[..., None] + jnp.sqrt(var)[..., None] * jnp.asarray(t)
    return jnp.sum(g(f) * jnp.asarray(w), axis=-1)


class Likelihood:
    """A classification likelihood: how many latent functions it needs, E_q[log p(y | f)] and p(y | x)."""

    name: ClassVar[str] = ""

    def latent_count(self, n_classes: int) -> int:
        raise NotImplementedError

    def expected_log_density(self, mu, var, y):
        """E_q[log p(y_i | f_i)] for each row: (n,)."""
        raise NotImplementedError

    def predict_log_proba(self, mu, var):
        """log int p(y = c | f) q(f) df for each row and class: (n, C)."""
        raise NotImplementedError

    def initial_mean(self, class_weights: np.ndarray) -> np.ndarray:
        """The constant mean b that gives the class frequencies at f = b (the fit's start); 0 by default."""
        return np.zeros(class_weights.size)

    def check_classes(self, n_classes: int) -> None:
        """An InputError where this likelihood cannot model ``n_classes`` classes (binary ones need two)."""

    def to_dict(self) -> dict:
        return {"name": self.name}

    def __eq__(self, other):
        return type(self) is type(other) and self.to_dict() == other.to_dict()

    def __hash__(self):
        return hash((type(self).__name__, tuple(sorted(self.to_dict().items()))))

    def __repr__(self):
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.to_dict().items() if k != 'name')})"


class Bernoulli(Likelihood):
    """p(y | f) = link(y f) for y in {-1, +1} (coded 0 / 1 in ``y``); ``link`` "probit" or "logit"."""

    name = "bernoulli"

    def __init__(self, link: str = "probit"):
        if link not in ("probit", "logit"):
            raise InputError(f"link must be 'probit' or 'logit', got {link!r}")
        self.link = link

    def latent_count(self, n_classes: int) -> int:
        return 1

    def check_classes(self, n_classes: int) -> None:
        if n_classes != 2:
            raise InputError(
                f"likelihood {self.link!r} is binary, but y has {n_classes} classes; use 'softmax' or 'robustmax'"
            )

    def initial_mean(self, class_weights: np.ndarray) -> np.ndarray:
        """Phi^-1(p) or logit(p) of the positive class's frequency p."""
        from scipy.special import logit, ndtri

        p = _frequencies(class_weights)[1]
        return np.array([ndtri(p) if self.link == "probit" else logit(p)])

    def log_link(self, z):
        return log_ndtr(z) if self.link == "probit" else jax.nn.log_sigmoid(z)

    def expected_log_density(self, mu, var, y):
        sign = 2.0 * y.astype(mu.dtype) - 1.0
        return _expect_1d(lambda f: self.log_link(sign[:, None] * f), mu[:, 0], var[:, 0])

    def predict_log_proba(self, mu, var):
        mu, var = mu[:, 0], var[:, 0]
        if self.link == "probit":
            z = mu / jnp.sqrt(1.0 + var)
            return jnp.stack([log_ndtr(-z), log_ndtr(z)], axis=1)
        p1 = _expect_1d(lambda f: jnp.exp(jax.nn.log_sigmoid(f)), mu, var)
        p0 = _expect_1d(lambda f: jnp.exp(jax.nn.log_sigmoid(-f)), mu, var)
        return jnp.log(jnp.stack([p0, p1], axis=1))

    def to_dict(self) -> dict:
        return {"name": self.name, "link": self.link}


def softmax_points(n_classes: int, points: int = SOFTMAX_POINTS) -> np.ndarray:
    """(points, C) standard normal points from a scrambled Sobol' sequence (fixed seed): the same every call."""
    u = qmc.Sobol(d=n_classes, scramble=True, seed=0).random(points)
    from scipy.special import ndtri

    return ndtri(np.clip(u, 1e-12, 1 - 1e-12))


class Softmax(Likelihood):
    """p(y = c | f) = softmax(f)_c over C latent functions (y coded 0..C-1)."""

    name = "softmax"

    def __init__(self, points: int = SOFTMAX_POINTS):
        self.points = int(points)

    def latent_count(self, n_classes: int) -> int:
        return n_classes

    def check_classes(self, n_classes: int) -> None:
        _several(self.name, n_classes)

    def initial_mean(self, class_weights: np.ndarray) -> np.ndarray:
        """log p_c of each class's frequency, centred: softmax(b) is the frequencies."""
        log_freq = np.log(_frequencies(class_weights))
        return log_freq - np.mean(log_freq)

    def _samples(self, mu, var):
        eps = jnp.asarray(softmax_points(mu.shape[1], self.points), mu.dtype)
        return mu[:, None, :] + jnp.sqrt(var)[:, None, :] * eps[None]  # (n, S, C)

    def expected_log_density(self, mu, var, y):
        f = self._samples(mu, var)
        lse = jax.nn.logsumexp(f, axis=-1)  # (n, S)
        mu_y = jnp.take_along_axis(mu, y.astype(jnp.int32)[:, None], axis=1)[:, 0]
        return mu_y - jnp.mean(lse, axis=1)

    def predict_log_proba(self, mu, var):
        logp = jax.nn.log_softmax(self._samples(mu, var), axis=-1)  # (n, S, C)
        return jax.nn.logsumexp(logp, axis=1) - jnp.log(logp.shape[1])

    def to_dict(self) -> dict:
        return {"name": self.name, "points": self.points}


class RobustMax(Likelihood):
    """p(y = c | f) = 1 - eps if f_c is the largest, else eps / (C - 1) (y coded 0..C-1)."""

    name = "robustmax"

    def __init__(self, eps: float = ROBUST_EPS):
        if not 0.0 < float(eps) < 1.0:
            raise InputError(f"eps must lie in (0, 1), got {eps!r}")
        self.eps = float(eps)

    def latent_count(self, n_classes: int) -> int:
        return n_classes

    def check_classes(self, n_classes: int) -> None:
        _several(self.name, n_classes)

    @staticmethod
    def _prob_largest(mu, var, c):
        """P(f_c is the largest) for each row's class c (n,): int N(x; mu_c, v_c) prod_{j != c} Phi((x - mu_j) /
        sd_j) dx by Gauss-Hermite quadrature over x (C K normal CDFs per row)."""
        t, w = gauss_hermite()
        sd = jnp.sqrt(var)
        mu_c = jnp.take_along_axis(mu, c[:, None], axis=1)  # (n, 1)
        sd_c = jnp.take_along_axis(sd, c[:, None], axis=1)
        x = mu_c + sd_c * jnp.asarray(t)  # (n, K)
        logcdf = log_ndtr((x[:, None, :] - mu[:, :, None]) / sd[:, :, None])  # (n, C, K)
        own = jnp.arange(mu.shape[1])[None, :, None] == c[:, None, None]
        total = jnp.sum(jnp.where(own, 0.0, logcdf), axis=1)  # (n, K)
        return jnp.clip(jnp.sum(jnp.exp(total) * jnp.asarray(w), axis=-1), 0.0, 1.0)

    def expected_log_density(self, mu, var, y):
        C = mu.shape[1]
        p = self._prob_largest(mu, var, y.astype(jnp.int32))
        return p * np.log(1.0 - self.eps) + (1.0 - p) * np.log(self.eps / (C - 1))

    def predict_log_proba(self, mu, var):
        n, C = mu.shape
        p = jnp.stack([self._prob_largest(mu, var, jnp.full(n, c, jnp.int32)) for c in range(C)], axis=1)
        p = p / jnp.sum(p, axis=1, keepdims=True)
        return jnp.log(p * (1.0 - self.eps) + (1.0 - p) * self.eps / (C - 1))

    def to_dict(self) -> dict:
        return {"name": self.name, "eps": self.eps}


def _frequencies(class_weights: np.ndarray) -> np.ndarray:
    return np.clip(class_weights / np.sum(class_weights), 1e-6, 1 - 1e-6)


def _several(name: str, n_classes: int) -> None:
    if n_classes < 3:
        raise InputError(f"likelihood {name!r} is for more than two classes; use 'probit' or 'logit'")


LIKELIHOODS: dict[str, type[Likelihood]] = {cls.name: cls for cls in (Bernoulli, Softmax, RobustMax)}
# The names an estimator's ``likelihood`` option takes, each a factory; "auto" is probit for two classes, else
# robust-max (its probabilities were the better calibrated on digits: BENCHMARKS.md, "Classification").
NAMED: dict[str, Callable[[], Likelihood]] = {
    "probit": lambda: Bernoulli("probit"),
    "logit": lambda: Bernoulli("logit"),
    "softmax": Softmax,
    "robustmax": RobustMax,
}
NAMES = ("auto", *NAMED)


def named(name, n_classes: int) -> Likelihood:
    """The likelihood an estimator's ``likelihood`` option names (or the Likelihood given), for ``n_classes``
    classes, checked against them."""
    if isinstance(name, Likelihood):
        return name
    if not isinstance(name, str) or name not in NAMES:
        raise InputError(f"likelihood must be one of {NAMES} or a Likelihood, got {name!r}")
    if name == "auto":
        name = "probit" if n_classes == 2 else "robustmax"
    likelihood = NAMED[name]()
    likelihood.check_classes(n_classes)
    return likelihood


def likelihood_from_dict(d: dict) -> Likelihood:
    """The likelihood a model file names (``to_dict``'s output), checked."""
    if not isinstance(d, dict) or d.get("name") not in LIKELIHOODS:
        raise InputError(f"unknown likelihood {d!r}; expected one of {sorted(LIKELIHOODS)}")
    args = {k: v for k, v in d.items() if k != "name"}
    return LIKELIHOODS[d["name"]](**args)


class Gaussian(Likelihood):
    """p(y | f) = N(y | f, noise) for real y: the conjugate case, where the optimal q(v) has a closed form and the
    bound at it is Titsias's collapsed bound (2009, eq. 9). The classifier does not use it; it checks the bound."""

    name = "gaussian"

    def __init__(self, noise: float = 1.0):
        self.noise = float(noise)

    def latent_count(self, n_classes: int) -> int:
        return 1

    def expected_log_density(self, mu, var, y):
        """E_q[log N(y | f, noise)] = log N(y | mu, noise) - var / (2 noise)."""
        return -0.5 * (jnp.log(2.0 * jnp.pi * self.noise) + ((y - mu[:, 0]) ** 2 + var[:, 0]) / self.noise)

    def to_dict(self) -> dict:
        return {"name": self.name, "noise": self.noise}


__all__ = [
    "Likelihood",
    "Bernoulli",
    "Softmax",
    "RobustMax",
    "Gaussian",
    "LIKELIHOODS",
    "NAMES",
    "likelihood_from_dict",
    "named",
    "gauss_hermite",
    "softmax_points",
]
