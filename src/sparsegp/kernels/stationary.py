"""Stationary kernels: squared exponential (with Seeger et al.'s bias) and Matérn.

All take a shared or ARD ``lengthscale`` (ell) and an amplitude ``variance``
(C in Seeger et al. 2003, sigma_f^2 elsewhere). Distances use the scaled
inputs x / ell, so the ARD weight matrix of Seeger et al. is W = diag(ell^-2).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from ..errors import InputError
from .base import Kernel
from .distance import safe_sqrt, sqdist


class Stationary(Kernel):
    """k(x, z) = variance * f(r^2), r^2 = sum_d (x_d - z_d)^2 / ell_d^2."""

    _abstract = True

    def __init__(self, lengthscale=1.0, variance=1.0, *, priors=None, fixed=()):
        self._set_params({"lengthscale": lengthscale, "variance": variance}, priors, fixed)
        if np.ndim(lengthscale) > 1:
            raise InputError(f"{type(self).__name__}.lengthscale must be a scalar or a 1-D array (ARD)")

    def profile(self, r2):
        """f(r^2) with f(0) = 1."""
        raise NotImplementedError

    def check_input_dim(self, D):
        ell = self._raw["lengthscale"]
        if ell.ndim == 1 and ell.shape[0] != D:
            raise InputError(
                f"{type(self).__name__} has {ell.shape[0]} ARD length-scales but the inputs have {D} dimensions"
            )

    def evaluate(self, x, z):
        diff = (x - z) / self.lengthscale
        return self.variance * self.profile(jnp.sum(diff * diff))

    def K(self, X, Z=None):
        ell = self.lengthscale
        return self.variance * self.profile(sqdist(X / ell, None if Z is None else Z / ell))

    def diag(self, X):
        return jnp.full(X.shape[0], self.variance * self.profile(jnp.zeros(())))


class SquaredExponential(Stationary):
    """k(x, z) = C exp(-1/2 (x - z)^T W (x - z)) + v_b  (Seeger et al. 2003, sec. 4).

    ``bias`` is the constant v_b; ``None`` (default) leaves it out.
    """

    def __init__(self, lengthscale=1.0, variance=1.0, bias=None, *, priors=None, fixed=()):
        values = {"lengthscale": lengthscale, "variance": variance}
        if bias is not None:
            values["bias"] = bias
        if np.ndim(lengthscale) > 1:
            raise InputError("SquaredExponential.lengthscale must be a scalar or a 1-D array (ARD)")
        self._set_params(values, priors, fixed)

    def _bias(self):
        return self._value("bias") if "bias" in self._raw else 0.0

    def profile(self, r2):
        return jnp.exp(-0.5 * r2)

    def evaluate(self, x, z):
        return super().evaluate(x, z) + self._bias()

    def K(self, X, Z=None):
        return super().K(X, Z) + self._bias()

    def diag(self, X):
        return super().diag(X) + self._bias()


RBF = SquaredExponential


class Matern12(Stationary):
    """k = variance * exp(-r)  (Ornstein-Uhlenbeck)."""

    def profile(self, r2):
        return jnp.exp(-safe_sqrt(r2))


class Matern32(Stationary):
    """k = variance * (1 + sqrt(3) r) exp(-sqrt(3) r)."""

    def profile(self, r2):
        s = jnp.sqrt(3.0) * safe_sqrt(r2)
        return (1.0 + s) * jnp.exp(-s)


class Matern52(Stationary):
    """k = variance * (1 + sqrt(5) r + 5 r^2 / 3) exp(-sqrt(5) r)."""

    def profile(self, r2):
        s = jnp.sqrt(5.0) * safe_sqrt(r2)
        return (1.0 + s + 5.0 * r2 / 3.0) * jnp.exp(-s)
