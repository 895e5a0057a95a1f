"""Dot-product kernels."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from .._docstrings import fill
from ..errors import InputError
from . import features
from .base import FIT_PARAMETERS, HostForm, Kernel


@fill(fit_parameters=FIT_PARAMETERS)
class Linear(Kernel):
    """The linear (dot-product) kernel, k(x, z) = sum_d variance_d x_d z_d.

    Parameters
    ----------
    variance : float or array of shape (D,)
        One shared variance or one per dimension (ARD).
    {fit_parameters}

    Examples
    --------
    >>> import numpy as np
    >>> from sparsegp.kernels import Linear
    >>> np.asarray(Linear([1.0, 2.0]).K(np.array([[1.0, 1.0]]), np.array([[3.0, 1.0]])))
    array([[5.]])
    """

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

    def prior_draws(self, n_samples, n_features, D, rng):
        v = np.broadcast_to(np.asarray(self.variance, dtype=np.float64), (D,))
        return features.none(n_samples, D)._replace(lin=np.sqrt(v) * rng.standard_normal((n_samples, D)))


@fill(fit_parameters=FIT_PARAMETERS)
class Constant(Kernel):
    """A constant kernel, k(x, z) = variance: an offset of unknown size (the v_b of Seeger et al. on its own).

    Parameters
    ----------
    variance : float
        The offset's prior variance.
    {fit_parameters}

    Examples
    --------
    >>> import numpy as np
    >>> from sparsegp.kernels import Constant
    >>> np.asarray(Constant(0.5).diag(np.zeros((3, 2))))
    array([0.5, 0.5, 0.5])
    """

    def __init__(self, variance=1.0, *, priors=None, fixed=()):
        self._set_params({"variance": variance}, priors, fixed)

    def evaluate(self, x, z):
        return self.variance * jnp.ones(())

    def K(self, X, Z=None):
        Z = X if Z is None else Z
        return jnp.full((X.shape[0], Z.shape[0]), self.variance)

    def diag(self, X):
        return jnp.full(X.shape[0], self.variance)

    def host_parts(self) -> HostForm:
        return HostForm(None, 0.0, self.variance)

    def prior_draws(self, n_samples, n_features, D, rng):
        return features.constant(float(np.asarray(self.variance)), n_samples, D, rng)
