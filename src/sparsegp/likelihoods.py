"""Likelihoods p(y | f) of the variational fits, each one object: classification and non-Gaussian regression.

The bound of Hensman, Matthews & Ghahramani (2015, eq. 3) needs, for every row, E_q[log p(y_i | f_i)] under the
Gaussian marginal q(f_i) = N(mu_i, v_i) of each latent function; prediction needs the predictive
int p(y | f) q(f) df. Both are low-dimensional integrals, written once here per likelihood:

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
* :class:`Gaussian` (real y): N(y | f, sigma^2), in closed form; the conjugate case, which the regressors fit by the
  collapsed bound (Titsias 2009, eq. 9) and which checks the uncollapsed one.
* :class:`StudentT` (real y with outliers): p(y | f) = t_nu((y - f) / sigma) / sigma, degrees of freedom nu > 1
  and scale sigma learnt; E_q[log p] and the predictive density by Gauss-Hermite quadrature.
* :class:`Poisson` (counts): p(y | f) = Poisson(y; e^f), the log link; E_q[log p] = y mu - e^(mu + v / 2) -
  log y! in closed form.

A likelihood is a :class:`~sparsegp.parameters.Parameterised` pytree: its parameters (a Student-t scale, a Gaussian
variance) are learnt by the same optimiser, within their transforms' boxes and under their priors, as the kernel's;
its configuration (a link, a number of points) is static. Every method takes ``mu`` and ``var`` of shape (n, L)
(L latent functions: one, or C for the multi-class likelihoods) and targets ``y`` of shape (n,): integer class
codes for a :class:`LabelLikelihood`, real values for a :class:`TargetLikelihood`; they are pure JAX and
differentiable in ``mu``, ``var`` and the parameters.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import gammaln, log_ndtr
from scipy.stats import qmc

from . import _config  # noqa: F401  (JAX in float64 before this module uses it)
from ._compile import compiled_when_eager
from .errors import InputError
from .parameters import Parameterised
from .priors import prior_from_dict
from .transforms import above

GH_POINTS = 20  # Gauss-Hermite nodes: exact for polynomials of degree 39; the log densities here are smooth
# Nodes of the predictive density int p(y | f) q(f) df, a sharper integrand than log p where q(f) is wider than
# p(y | f): for a Student-t whose scale is a fifth of q's sd, 20 nodes are 1e-3 nats off and 200 within 5e-5
# (against adaptive quadrature); prediction evaluates it once per test row.
PREDICTIVE_POINTS = 200
# A Student-t's expected log density in the bound: where q's sd is 2.4 times the scale, 20 nodes are 1.3e-4 nats
# per row off, 50 within 3e-6; nearer q's sd is smaller, and the likelihood's share of an evaluation is small.
STUDENT_T_POINTS = 50
SOFTMAX_POINTS = 64  # quasi-random points of the softmax expectation (a scrambled Sobol' set, fixed seed)
ROBUST_EPS = 1e-3  # GPflow's default for the robust-max likelihood
QUANTILE_STEPS = 100  # bisection steps of a continuous predictive quantile (each halves the bracket)


def gauss_hermite(points: int = GH_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """Nodes t and weights w with sum_k w_k g(t_k) ~ E[g(T)] for T ~ N(0, 1) (probabilists' Hermite rule)."""
    t, w = np.polynomial.hermite_e.hermegauss(points)
    return t, w / np.sqrt(2.0 * np.pi)


def _nodes(mu, var, points: int = GH_POINTS):
    """f at the Gauss-Hermite nodes of N(mu, var), elementwise: shape mu.shape + (points,)."""
    t, _ = gauss_hermite(points)
    return mu[..., None] + jnp.sqrt(var)[..., None] * jnp.asarray(t)


def _expect_1d(g, mu, var, points: int = GH_POINTS):
    """E[g(F)] for F ~ N(mu, var), elementwise, by Gauss-Hermite quadrature."""
    _, w = gauss_hermite(points)
    return jnp.sum(g(_nodes(mu, var, points)) * jnp.asarray(w), axis=-1)


def _log_expect_1d(log_g, mu, var, points: int = GH_POINTS):
    """log E[exp(log_g(F))] for F ~ N(mu, var), elementwise, by Gauss-Hermite quadrature in log space."""
    _, w = gauss_hermite(points)
    return jax.nn.logsumexp(log_g(_nodes(mu, var, points)) + jnp.log(jnp.asarray(w)), axis=-1)


class Likelihood(Parameterised):
    """p(y | f): how many latent functions it needs, E_q[log p(y | f)] and the predictive density of y.

    Subclasses call ``self._set_params({...}, priors, fixed)`` in ``__init__`` (an empty dict where the likelihood
    learns nothing) and put their configuration in :meth:`_static`."""

    name: ClassVar[str] = ""
    # True where log p(y | f) is concave in f: then so is E_q[log p(y | f)] in q's mean, each row's site precision
    # -2 dE/dv is >= 0 and the bound's optimal q at every input has the site form of :mod:`.classification.site_form`
    log_concave: ClassVar[bool] = False

    def latent_count(self, n_outputs: int) -> int:
        """Latent functions for ``n_outputs`` classes (or 1 for a real or count target)."""
        raise NotImplementedError

    def expected_log_density(self, mu, var, y):
        """E_q[log p(y_i | f_i)] for each row: (n,)."""
        raise NotImplementedError

    def log_predictive_density(self, mu, var, y):
        """log int p(y_i | f) q(f_i) df for each row: (n,)."""
        raise NotImplementedError

    def initial_mean(self, y, w, latents: int) -> np.ndarray:
        """The constant mean b (one per latent function) the fit starts from, given the targets ``y`` with
        weights ``w`` (for the labels on a cluster, each class once, weighted by its count)."""
        return np.zeros(latents)

    def to_dict(self) -> dict:
        """The likelihood by name with its parameters, priors, fixed names and configuration (model files)."""
        return {"name": self.name, **self._spec()}

    @classmethod
    def _from_spec(cls, params, priors, fixed, config):
        return cls(**params, **config, priors=priors, fixed=fixed)

    def __repr__(self):
        values = {**{k: float(v) for k, v in self.parameters().items()}, **dict(self._static())}
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in values.items())})"


class LabelLikelihood(Likelihood):
    """A likelihood of class labels (integer codes 0..C-1)."""

    def predict_log_proba(self, mu, var):
        """log int p(y = c | f) q(f) df for each row and class: (n, C)."""
        raise NotImplementedError

    def log_predictive_density(self, mu, var, y):
        return jnp.take_along_axis(self.predict_log_proba(mu, var), y.astype(jnp.int32)[:, None], axis=1)[:, 0]

    def check_classes(self, n_classes: int) -> None:
        """An InputError where this likelihood cannot model ``n_classes`` classes (binary ones need two)."""


class TargetLikelihood(Likelihood):
    """A likelihood of a real or count target: one latent function, a predictive mean, variance, quantiles and
    draws of y."""

    conjugate: ClassVar[bool] = False  # True where the optimal q(u) has a closed form (the collapsed bound)
    discrete: ClassVar[bool] = False  # integer targets: quantiles are integers

    def latent_count(self, n_outputs: int = 1) -> int:
        return 1

    def log_density(self, f, y):
        """log p(y | f) elementwise, ``y`` broadcast against ``f``."""
        raise NotImplementedError

    def expected_log_density(self, mu, var, y):
        return _expect_1d(lambda f: self.log_density(f, y[:, None]), mu[:, 0], var[:, 0])

    def log_predictive_density(self, mu, var, y):
        return _log_expect_1d(lambda f: self.log_density(f, y[:, None]), mu[:, 0], var[:, 0], PREDICTIVE_POINTS)

    def predict_mean_and_var(self, mu, var):
        """The predictive mean and variance of y for latent marginals (n, 1): both (n,)."""
        raise NotImplementedError

    def cdf(self, y, f):
        """P(Y <= y | f) elementwise (NumPy; for the predictive quantiles)."""
        raise NotImplementedError

    def sample(self, f, rng: np.random.Generator) -> np.ndarray:
        """One y drawn from p(y | f) for each entry of ``f`` (NumPy)."""
        raise NotImplementedError

    def check_targets(self, y: np.ndarray) -> np.ndarray:
        """The targets as float64 (n,), or an InputError that names what this likelihood cannot model."""
        y = np.asarray(y, dtype=np.float64)
        if not np.all(np.isfinite(y)):
            raise InputError("y contains NaN or infinity; every target must be a finite number")
        return y

    def target_units(self, y: np.ndarray, w: np.ndarray) -> tuple[float, float]:
        """(shift, scale) the fit divides the targets by, y' = (y - shift) / scale, and maps the predictions back
        with: the weighted mean and spread for a location-scale likelihood; (0, 1) where y's values are the
        model's (counts)."""
        mean = float(np.average(y, weights=w))
        sd = float(np.sqrt(np.average((y - mean) ** 2, weights=w)))
        return mean, sd if sd > 0 else 1.0

    def predictive_quantiles(self, mu, var, q) -> np.ndarray:
        """Quantiles ``q`` (k,) of the predictive of y (the latent Gaussian mixed by quadrature) for latent
        marginals (n,): (n, k). Continuous targets by bisection of the mixture's CDF; counts as the least
        integer whose CDF reaches q."""
        t, w = gauss_hermite()
        mu, var, q = np.asarray(mu, float), np.asarray(var, float), np.asarray(q, float)
        f = mu[:, None] + np.sqrt(np.maximum(var, 0.0))[:, None] * t  # (n, K)

        def mixture_cdf(y):  # (n, k) -> (n, k)
            return np.einsum("nkj,j->nk", self.cdf(y[:, :, None], f[:, None, :]), w)

        # a bracket [lo, hi] with F(lo) < q <= F(hi), widened until it holds (heavy tails reach far)
        width = np.full((mu.size, q.size), 10.0 * (np.sqrt(np.max(var, initial=0.0)) + 1.0))
        for _ in range(200):
            lo, hi = mu[:, None] - width, mu[:, None] + width
            short = (mixture_cdf(lo) >= q) | (mixture_cdf(hi) < q)
            if not np.any(short):
                break
            width = np.where(short, 2.0 * width, width)
        if self.discrete:
            lo, hi = np.floor(np.maximum(lo, -1.0)), np.ceil(np.maximum(hi, 0.0))
            while np.any(hi - lo > 1):
                mid = np.floor((lo + hi) / 2)
                below = mixture_cdf(mid) < q
                lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
            return hi
        for _ in range(QUANTILE_STEPS):
            mid = 0.5 * (lo + hi)
            below = mixture_cdf(mid) < q
            lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
        return 0.5 * (lo + hi)


class Bernoulli(LabelLikelihood):
    """p(y | f) = link(y f) for y in {-1, +1} (coded 0 / 1 in ``y``); ``link`` "probit" or "logit"."""

    name = "bernoulli"
    log_concave = True

    def __init__(self, link: str = "probit", *, priors=None, fixed=()):
        if link not in ("probit", "logit"):
            raise InputError(f"link must be 'probit' or 'logit', got {link!r}")
        object.__setattr__(self, "link", link)
        self._set_params({}, priors, fixed)

    def _static(self) -> tuple:
        return (("link", self.link),)

    def latent_count(self, n_outputs: int) -> int:
        return 1

    def check_classes(self, n_classes: int) -> None:
        if n_classes != 2:
            raise InputError(
                f"likelihood {self.link!r} is binary, but y has {n_classes} classes; use 'softmax' or 'robustmax'"
            )

    def initial_mean(self, y, w, latents: int) -> np.ndarray:
        """Phi^-1(p) or logit(p) of the positive class's frequency p."""
        from scipy.special import logit, ndtri

        p = _frequencies(y, w, 2)[1]
        return np.array([ndtri(p) if self.link == "probit" else logit(p)])

    def log_link(self, z):
        return log_ndtr(z) if self.link == "probit" else jax.nn.log_sigmoid(z)

    def expected_log_density(self, mu, var, y):
        sign = 2.0 * y.astype(mu.dtype) - 1.0
        return _expect_1d(lambda f: self.log_link(sign[:, None] * f), mu[:, 0], var[:, 0])

    @compiled_when_eager
    def predict_log_proba(self, mu, var):
        mu, var = mu[:, 0], var[:, 0]
        if self.link == "probit":
            z = mu / jnp.sqrt(1.0 + var)
            return jnp.stack([log_ndtr(-z), log_ndtr(z)], axis=1)
        p1 = _expect_1d(lambda f: jnp.exp(jax.nn.log_sigmoid(f)), mu, var)
        p0 = _expect_1d(lambda f: jnp.exp(jax.nn.log_sigmoid(-f)), mu, var)
        return jnp.log(jnp.stack([p0, p1], axis=1))


def softmax_points(n_classes: int, points: int = SOFTMAX_POINTS) -> np.ndarray:
    """(points, C) standard normal points from a scrambled Sobol' sequence (fixed seed): the same every call."""
    u = qmc.Sobol(d=n_classes, scramble=True, seed=0).random(points)
    from scipy.special import ndtri

    return ndtri(np.clip(u, 1e-12, 1 - 1e-12))


class Softmax(LabelLikelihood):
    """p(y = c | f) = softmax(f)_c over C latent functions (y coded 0..C-1)."""

    name = "softmax"

    def __init__(self, points: int = SOFTMAX_POINTS, *, priors=None, fixed=()):
        object.__setattr__(self, "points", int(points))
        self._set_params({}, priors, fixed)

    def _static(self) -> tuple:
        return (("points", self.points),)

    def latent_count(self, n_outputs: int) -> int:
        return n_outputs

    def check_classes(self, n_classes: int) -> None:
        _several(self.name, n_classes)

    def initial_mean(self, y, w, latents: int) -> np.ndarray:
        """log p_c of each class's frequency, centred: softmax(b) is the frequencies."""
        log_freq = np.log(_frequencies(y, w, latents))
        return log_freq - np.mean(log_freq)

    def _samples(self, mu, var):
        eps = jnp.asarray(softmax_points(mu.shape[1], self.points), mu.dtype)
        return mu[:, None, :] + jnp.sqrt(var)[:, None, :] * eps[None]  # (n, S, C)

    def expected_log_density(self, mu, var, y):
        f = self._samples(mu, var)
        lse = jax.nn.logsumexp(f, axis=-1)  # (n, S)
        mu_y = jnp.take_along_axis(mu, y.astype(jnp.int32)[:, None], axis=1)[:, 0]
        return mu_y - jnp.mean(lse, axis=1)

    @compiled_when_eager
    def predict_log_proba(self, mu, var):
        logp = jax.nn.log_softmax(self._samples(mu, var), axis=-1)  # (n, S, C)
        return jax.nn.logsumexp(logp, axis=1) - jnp.log(logp.shape[1])


class RobustMax(LabelLikelihood):
    """p(y = c | f) = 1 - eps if f_c is the largest, else eps / (C - 1) (y coded 0..C-1)."""

    name = "robustmax"

    def __init__(self, eps: float = ROBUST_EPS, *, priors=None, fixed=()):
        if not 0.0 < float(eps) < 1.0:
            raise InputError(f"eps must lie in (0, 1), got {eps!r}")
        object.__setattr__(self, "eps", float(eps))
        self._set_params({}, priors, fixed)

    def _static(self) -> tuple:
        return (("eps", self.eps),)

    def latent_count(self, n_outputs: int) -> int:
        return n_outputs

    def check_classes(self, n_classes: int) -> None:
        _several(self.name, n_classes)

    def initial_mean(self, y, w, latents: int) -> np.ndarray:
        return np.zeros(latents)

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

    @compiled_when_eager
    def predict_log_proba(self, mu, var):
        n, C = mu.shape
        p = jnp.stack([self._prob_largest(mu, var, jnp.full(n, c, jnp.int32)) for c in range(C)], axis=1)
        p = p / jnp.sum(p, axis=1, keepdims=True)
        return jnp.log(p * (1.0 - self.eps) + (1.0 - p) * self.eps / (C - 1))


class Gaussian(TargetLikelihood):
    """p(y | f) = N(y | f, variance) for real y: the conjugate case, where the optimal q(v) has a closed form and
    the bound at it is Titsias's collapsed bound (2009, eq. 9), which the regressors maximise directly."""

    name = "gaussian"
    conjugate = True
    log_concave = True

    def __init__(self, variance: float = 1.0, *, priors=None, fixed=()):
        self._set_params({"variance": variance}, priors, fixed)

    def log_density(self, f, y):
        return -0.5 * (jnp.log(2.0 * jnp.pi * self.variance) + (y - f) ** 2 / self.variance)

    def expected_log_density(self, mu, var, y):
        """E_q[log N(y | f, sigma^2)] = log N(y | mu, sigma^2) - var / (2 sigma^2)."""
        return -0.5 * (jnp.log(2.0 * jnp.pi * self.variance) + ((y - mu[:, 0]) ** 2 + var[:, 0]) / self.variance)

    def log_predictive_density(self, mu, var, y):
        total = var[:, 0] + self.variance
        return -0.5 * (jnp.log(2.0 * jnp.pi * total) + (y - mu[:, 0]) ** 2 / total)

    def predict_mean_and_var(self, mu, var):
        return mu[:, 0], var[:, 0] + self.variance

    def cdf(self, y, f):
        from scipy.special import ndtr

        return ndtr((y - f) / np.sqrt(float(self.variance)))

    def sample(self, f, rng):
        return np.asarray(f) + np.sqrt(float(self.variance)) * rng.standard_normal(np.shape(f))


class StudentT(TargetLikelihood):
    """p(y | f) = Gamma((nu + 1) / 2) / (Gamma(nu / 2) sqrt(nu pi) sigma) (1 + ((y - f) / sigma)^2 / nu)^(-(nu + 1) / 2):
    real y with heavy tails. ``df`` (nu, above 1 so that y's predictive mean exists) and ``scale`` (sigma) are learnt
    unless ``fixed``; the predictive variance of y is v + sigma^2 nu / (nu - 2), infinite where nu <= 2 (gross
    outliers pull nu there: the quantiles of :meth:`predictive_quantiles` are then the error bars to use)."""

    name = "student-t"
    _transforms = {"df": above(1.0)}

    def __init__(self, df: float = 4.0, scale: float = 0.1, *, priors=None, fixed=()):
        self._set_params({"df": df, "scale": scale}, priors, fixed)

    def expected_log_density(self, mu, var, y):
        return _expect_1d(lambda f: self.log_density(f, y[:, None]), mu[:, 0], var[:, 0], STUDENT_T_POINTS)

    def log_density(self, f, y):
        nu, sigma = self.df, self.scale
        z = (y - f) / sigma
        return (
            gammaln(0.5 * (nu + 1.0))
            - gammaln(0.5 * nu)
            - 0.5 * jnp.log(nu * jnp.pi)
            - jnp.log(sigma)
            - 0.5 * (nu + 1.0) * jnp.log1p(z * z / nu)
        )

    def predict_mean_and_var(self, mu, var):
        nu = self.df
        noise = jnp.where(nu > 2.0, self.scale**2 * nu / jnp.maximum(nu - 2.0, 1e-300), jnp.inf)
        return mu[:, 0], var[:, 0] + noise

    def cdf(self, y, f):
        from scipy.stats import t

        return t.cdf((y - f) / float(self.scale), float(self.df))

    def sample(self, f, rng):
        return np.asarray(f) + float(self.scale) * rng.standard_t(float(self.df), size=np.shape(f))

    def initial_mean(self, y, w, latents: int) -> np.ndarray:
        """The weighted median of y: a start that outliers do not move."""
        return np.array([_weighted_median(y, w)])

    def target_units(self, y, w):
        """The weighted median and 1.4826 times the median absolute deviation (the sd of Gaussian data), which
        gross outliers do not inflate as they do the standard deviation; the standard deviation where more than
        half the targets are equal."""
        centre = _weighted_median(y, w)
        spread = 1.4826 * _weighted_median(np.abs(np.asarray(y) - centre), w)
        return (centre, spread) if spread > 0 else (centre, super().target_units(y, w)[1])


class Poisson(TargetLikelihood):
    """p(y | f) = Poisson(y; lambda), lambda = e^f (the log link), for counts y in {0, 1, 2, ...}. No parameter is
    learnt; the predictive mean of y is e^(mu + v / 2) and its variance that mean plus e^(2 mu + v) (e^v - 1)."""

    name = "poisson"
    discrete = True
    log_concave = True

    def __init__(self, *, priors=None, fixed=()):
        self._set_params({}, priors, fixed)

    def log_density(self, f, y):
        return y * f - jnp.exp(f) - gammaln(y + 1.0)

    def expected_log_density(self, mu, var, y):
        """y mu - e^(mu + v / 2) - log y!, exactly."""
        mu, var = mu[:, 0], var[:, 0]
        return y * mu - jnp.exp(mu + 0.5 * var) - gammaln(y + 1.0)

    def predict_mean_and_var(self, mu, var):
        mu, var = mu[:, 0], var[:, 0]
        mean = jnp.exp(mu + 0.5 * var)
        return mean, mean + jnp.exp(2.0 * mu + var) * jnp.expm1(var)

    def cdf(self, y, f):
        from scipy.stats import poisson

        return poisson.cdf(y, np.exp(f))

    def sample(self, f, rng):
        return rng.poisson(np.exp(np.asarray(f))).astype(np.float64)

    def check_targets(self, y: np.ndarray) -> np.ndarray:
        y = super().check_targets(y)
        if np.any(y < 0):
            raise InputError(
                f"likelihood 'poisson' models counts, but y holds {int(np.sum(y < 0))} negative value(s) "
                f"(the smallest {float(np.min(y)):g})"
            )
        if np.any(y != np.round(y)):
            bad = y[y != np.round(y)]
            raise InputError(
                f"likelihood 'poisson' models counts, but y holds {bad.size} value(s) that are not whole numbers "
                f"(the first {float(bad[0]):g})"
            )
        return y

    def target_units(self, y, w):
        return 0.0, 1.0

    def initial_mean(self, y, w, latents: int) -> np.ndarray:
        """log of the mean count (at least 1e-3 of one, so that a table of zeros starts finite)."""
        return np.array([np.log(max(float(np.average(y, weights=w)), 1e-3))])


def _weighted_median(y, w) -> float:
    order = np.argsort(y)
    cum = np.cumsum(np.asarray(w, float)[order])
    return float(np.asarray(y)[order][np.searchsorted(cum, 0.5 * cum[-1])])


def _frequencies(y, w, n_classes: int) -> np.ndarray:
    counts = np.bincount(np.asarray(y, dtype=np.int64), weights=w, minlength=n_classes)
    return np.clip(counts / np.sum(counts), 1e-6, 1 - 1e-6)


def _several(name: str, n_classes: int) -> None:
    if n_classes < 3:
        raise InputError(f"likelihood {name!r} is for more than two classes; use 'probit' or 'logit'")


LIKELIHOODS: dict[str, type[Likelihood]] = {
    cls.name: cls for cls in (Bernoulli, Softmax, RobustMax, Gaussian, StudentT, Poisson)
}
# The names an estimator's ``likelihood`` option takes, each a factory. A classifier's "auto" is probit for two
# classes, else robust-max (its probabilities were the better calibrated on digits: BENCHMARKS.md,
# "Classification").
NAMED: dict[str, Callable[[], LabelLikelihood]] = {
    "probit": lambda: Bernoulli("probit"),
    "logit": lambda: Bernoulli("logit"),
    "softmax": Softmax,
    "robustmax": RobustMax,
}
NAMES = ("auto", *NAMED)
REGRESSION_NAMED: dict[str, Callable[[], TargetLikelihood]] = {
    "gaussian": Gaussian,
    "student-t": StudentT,
    "poisson": Poisson,
}


def named(name, n_classes: int) -> LabelLikelihood:
    """The likelihood a classifier's ``likelihood`` option names (or the LabelLikelihood given), for ``n_classes``
    classes, checked against them."""
    if isinstance(name, Likelihood):
        if not isinstance(name, LabelLikelihood):
            raise InputError(f"{name!r} is a likelihood of real or count targets; a classifier takes one of {NAMES}")
        likelihood = name
    elif not isinstance(name, str) or name not in NAMES:
        raise InputError(f"likelihood must be one of {NAMES} or a Likelihood, got {name!r}")
    else:
        likelihood = NAMED[("probit" if n_classes == 2 else "robustmax") if name == "auto" else name]()
    likelihood.check_classes(n_classes)
    return likelihood


def regression_named(name) -> TargetLikelihood:
    """The likelihood a regressor's ``likelihood`` option names (or the TargetLikelihood given)."""
    if isinstance(name, TargetLikelihood):
        return name
    if isinstance(name, Likelihood):
        raise InputError(
            f"{name!r} is a likelihood of class labels; a regressor takes one of {tuple(REGRESSION_NAMED)}"
        )
    if not isinstance(name, str) or name not in REGRESSION_NAMED:
        raise InputError(f"likelihood must be one of {tuple(REGRESSION_NAMED)} or a Likelihood, got {name!r}")
    return REGRESSION_NAMED[name]()


def likelihood_from_dict(d: dict) -> Likelihood:
    """The likelihood a model file names (``to_dict``'s output), every field checked. Files written before
    likelihoods had parameters give the configuration beside the name ({"name": "bernoulli", "link": "probit"})."""
    if not isinstance(d, dict) or d.get("name") not in LIKELIHOODS:
        raise InputError(f"unknown likelihood {d!r}; expected one of {sorted(LIKELIHOODS)}")
    cls = LIKELIHOODS[d["name"]]
    if "params" not in d:
        return cls(**{k: v for k, v in d.items() if k != "name"})
    params, priors, fixed, config = d.get("params"), d.get("priors", {}), d.get("fixed", []), d.get("config", {})
    if not (
        isinstance(params, dict) and isinstance(priors, dict) and isinstance(fixed, list) and isinstance(config, dict)
    ):
        raise InputError(f"likelihood {d['name']!r} has malformed params/priors/fixed/config: {d!r}")
    try:
        likelihood = cls._from_spec(params, {n: prior_from_dict(p) for n, p in priors.items()}, fixed, config)
    except TypeError as exc:
        raise InputError(f"likelihood {d['name']!r} does not match its arguments: {exc}") from None
    if set(likelihood.parameters()) != set(params):
        raise InputError(
            f"likelihood {d['name']!r} must give each of {sorted(likelihood.parameters())}, got {sorted(params)}"
        )
    return likelihood.with_values_exactly(params)  # the values written, to the last digit


__all__ = [
    "Likelihood",
    "LabelLikelihood",
    "TargetLikelihood",
    "Bernoulli",
    "Softmax",
    "RobustMax",
    "Gaussian",
    "StudentT",
    "Poisson",
    "LIKELIHOODS",
    "NAMES",
    "REGRESSION_NAMED",
    "likelihood_from_dict",
    "named",
    "regression_named",
    "gauss_hermite",
    "softmax_points",
]
