"""Dot-product kernels."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from ..errors import InputError
from .base import HostForm, Kernel


class Linear(Kernel):
    """k(x, z) = sum_d variance_d x_d z_d (one shared or D ARD variances)."""

    _input_power = {"variance": 2}

    def __init__(self, variance=1.0, *, priors=None, fixed=()):
        if np.ndim(variance) > 1:
            raise InputError("Linear.variance must be a scalar or a 1-D array (ARD)")
        self._set_params({"variance": variance}, priors, fixed)

    def check_input_dim(self, D):
        v = self._raw["variance"]
        if v.ndim == 1 and v.shape[0] != D:
            raise InputError(f"Linear has {v.shape[0]} ARD variances but the inputs have {D} dimensions")

    def evaluate(self, x, z):
        return jnp.sum(self.variance * x * z)

    def K(self, X, Z=None):
        Z = X if Z is None else Z
        return (X * self.variance) @ Z.T

    def diag(self, X):
        return jnp.sum(X * X * self.variance, axis=1)


class Constant(Kernel):
    """k(x, z) = variance (a constant offset; the v_b of Seeger et al. on its own)."""

    def __init__(self, variance=1.0, *, priors=None, fixed=()):
        self._set_params({"variance": variance}, priors, fixed)

    def evaluate(self, x, z):
        return self.variance * jnp.ones(())

    def K(self, X, Z=None):
        Z = X if Z is None else Z
        return jnp.full((X.shape[0], Z.shape[0]), self.variance)

    def diag(self, X):
        return jnp.full(X.shape[0], self.variance)

    def host_form(self) -> HostForm:
        return HostForm(None, 0.0, float(np.asarray(self.variance)))
