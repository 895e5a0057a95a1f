"""Hyper-priors on positive hyper-parameters (MAP-II, Rasmussen 1996 style).

A prior is a small immutable object with ``log_prob(value)`` evaluated on the
positive (constrained) value. Training adds ``log_prob`` plus the log-Jacobian
of the positive transform (:mod:`sparsegp.transforms`), so the MAP estimate is
that of the density of the parameter actually optimised (GPflow's convention).

:func:`negative_log_posterior` is the one place a log prior meets an objective: every evaluation path
(the JAX program in memory, the host BLAS sums, Dask partitions, the GPU, the grouped-row and per-target
wrappers, the classifiers' bounds) minimises ``-(objective + log p(theta))`` through it.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax.numpy as jnp
import jax.scipy.special as jsp
import numpy as np

from . import _config  # noqa: F401  (JAX in float64 before this module uses it)
from .errors import InputError
from .transforms import log_jacobian, to_positive


@dataclass(frozen=True)
class LogNormal:
    """log(value) ~ N(mu, sigma^2); ``mu`` a number, or one per element of a vector parameter (ARD)."""

    mu: float | tuple | np.ndarray = 0.0  # a vector becomes a tuple
    sigma: float = 1.0

    def __post_init__(self):
        if not (float(self.sigma) > 0):
            raise InputError(f"LogNormal prior: sigma must be > 0, got {self.sigma!r}")
        if np.ndim(self.mu) > 1 or not np.all(np.isfinite(self.mu)):
            raise InputError(f"LogNormal prior: mu must be a finite number or 1-D sequence, got {self.mu!r}")
        if np.ndim(self.mu) == 1:  # a tuple keeps the prior hashable and immutable
            object.__setattr__(self, "mu", tuple(float(v) for v in self.mu))

    def log_prob(self, value):
        z = (jnp.log(value) - jnp.asarray(self.mu)) / self.sigma
        return jnp.sum(-0.5 * z**2 - jnp.log(value) - jnp.log(self.sigma) - 0.5 * jnp.log(2 * jnp.pi))

    def scaled(self, c: float) -> LogNormal:
        """The prior of c * value: log(c value) ~ N(mu + log c, sigma^2)."""
        shifted = np.asarray(self.mu, dtype=float) + np.log(c)
        return LogNormal(tuple(shifted) if shifted.ndim else float(shifted), self.sigma)

    def to_dict(self):
        mu = list(self.mu) if isinstance(self.mu, tuple) else float(self.mu)
        return {"type": "LogNormal", "mu": mu, "sigma": float(self.sigma)}


@dataclass(frozen=True)
class Gamma:
    """value ~ Gamma(shape, rate): density rate^shape value^(shape-1) exp(-rate value) / Gamma(shape)."""

    shape: float = 1.0
    rate: float = 1.0

    def __post_init__(self):
        if not (float(self.shape) > 0 and float(self.rate) > 0):
            raise InputError(f"Gamma prior: shape and rate must be > 0, got {self.shape!r}, {self.rate!r}")

    def log_prob(self, value):
        a, b = self.shape, self.rate
        return jnp.sum(a * jnp.log(b) + (a - 1) * jnp.log(value) - b * value - jsp.gammaln(a))

    def scaled(self, c: float) -> Gamma:
        """The prior of c * value: Gamma(shape, rate / c)."""
        return Gamma(self.shape, float(self.rate / c))

    def to_dict(self):
        return {"type": "Gamma", "shape": float(self.shape), "rate": float(self.rate)}


@dataclass(frozen=True)
class GammaPrecision:
    """value^-2 ~ Gamma(shape, rate): a gamma prior on an inverse squared length-scale w = lengthscale^-2
    (the ARD weights w_j of Seeger et al. 2003 sec. 4, after Rasmussen 1996), as a density of the
    length-scale: log p(l) = log Gamma(l^-2 | shape, rate) + log(2 l^-3). A shape of at most 1 leaves
    room for w_j -> 0, which switches an input off."""

    shape: float = 1.0
    rate: float = 1.0

    def __post_init__(self):
        Gamma(self.shape, self.rate)  # the same validation

    def log_prob(self, value):
        return Gamma(self.shape, self.rate).log_prob(value**-2.0) + jnp.sum(jnp.log(2.0) - 3.0 * jnp.log(value))

    def scaled(self, c: float) -> GammaPrecision:
        """The prior of c * value: (c value)^-2 = w / c^2 ~ Gamma(shape, rate c^2)."""
        return GammaPrecision(self.shape, float(self.rate * c**2))

    def to_dict(self):
        return {"type": "GammaPrecision", "shape": float(self.shape), "rate": float(self.rate)}


Prior = LogNormal | Gamma | GammaPrecision


def noise_log_prior(prior, raw_noise):
    """log p(sigma^2) plus the log-Jacobian of the positive transform (0 without a prior); summed over the targets
    where each has its noise."""
    if prior is None:
        return 0.0
    return jnp.sum(prior.log_prob(to_positive(raw_noise))) + log_jacobian(raw_noise)


def log_hyper_prior(params, noise_prior=None):
    """log p(theta) of the raw parameters ``params`` (a dict with ``kernel`` and, for a regressor, ``raw_noise``;
    for a variational fit, ``likelihood``): the kernel's hyper-priors (:meth:`~sparsegp.kernels.Kernel.log_prior`),
    the likelihood's and the noise's ``noise_prior``, each with its transform's log-Jacobian; 0 without priors.
    Positive where theta is probable a priori."""
    total = params["kernel"].log_prior()
    if "likelihood" in params:
        total = total + params["likelihood"].log_prior()
    if "raw_noise" in params:
        total = total + noise_log_prior(noise_prior, params["raw_noise"])
    return total


def negative_log_posterior(objective, params, noise_prior=None):
    """What every fit minimises: ``-(objective + log p(theta))``, the negative log posterior of the
    hyper-parameters up to a constant (MAP-II), with ``objective`` a log marginal likelihood or a lower bound
    on it (greater is better) and ``log p(theta)`` from :func:`log_hyper_prior`. The only place the library
    composes a prior with an objective: an evaluation path passes its objective here and adds no prior itself."""
    return -(objective + log_hyper_prior(params, noise_prior))


_PRIORS: dict[str, type[LogNormal] | type[Gamma] | type[GammaPrecision]] = {
    "LogNormal": LogNormal,
    "Gamma": Gamma,
    "GammaPrecision": GammaPrecision,
}


def prior_from_dict(d) -> Prior:
    """Rebuild a prior from :meth:`to_dict` output, validating every field."""
    if not isinstance(d, dict) or d.get("type") not in _PRIORS:
        raise InputError(f"unknown prior specification {d!r}; expected type one of {sorted(_PRIORS)}")
    cls = _PRIORS[d["type"]]
    fields = {k: v for k, v in d.items() if k != "type"}
    expected = set(cls.__dataclass_fields__)

    def numeric(v):
        return isinstance(v, (int, float)) and not isinstance(v, bool)

    if cls is LogNormal and isinstance(fields.get("mu"), list) and fields["mu"] and all(map(numeric, fields["mu"])):
        fields = dict(fields, mu=tuple(fields["mu"]))
    if set(fields) != expected or not all(numeric(v) or k == "mu" and isinstance(v, tuple) for k, v in fields.items()):
        raise InputError(f"prior {d['type']} needs numeric fields {sorted(expected)}, got {fields!r}")
    return cls(**fields)
