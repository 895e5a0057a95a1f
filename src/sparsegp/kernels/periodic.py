"""The periodic kernel (MacKay 1998; scikit-learn's ``ExpSineSquared``, GPflow's ``Periodic`` of an SE)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from .._docstrings import fill
from ..errors import InputError
from .base import FIT_PARAMETERS, Kernel


@fill(fit_parameters=FIT_PARAMETERS)
class Periodic(Kernel):
    """k(x, z) = variance * exp(-2 sum_d sin^2(pi (x_d - z_d) / p_d) / ell_d^2) (Rasmussen & Williams eq. 4.31):
    functions that repeat with period p_d along each input.

    In one dimension this is scikit-learn's ``ExpSineSquared(length_scale=ell, periodicity=p)`` times the
    variance; in several it is the product of one such kernel per input (GPflow's ``Periodic`` around an SE
    kernel, whose length-scale is ell / 2). The length-scale ell is measured in the sine's units, not the
    inputs', so it does not move when the inputs are rescaled; the period does.

    Parameters
    ----------
    period : float or array of shape (D,)
        p: one period for every input, or one per input.
    lengthscale : float or array of shape (D,)
        ell: how far, in the sine's units, the function decorrelates within a period.
    variance : float
        The amplitude, k(x, x).
    {fit_parameters}

    Examples
    --------
    >>> import numpy as np
    >>> from sparsegp.kernels import Periodic
    >>> k = Periodic(period=2.0, lengthscale=1.0)
    >>> np.asarray(k.K(np.array([[0.0], [1.0], [2.0]])))  # a period apart: correlation 1
    array([[1.    , 0.1353, 1.    ],
           [0.1353, 1.    , 0.1353],
           [1.    , 0.1353, 1.    ]])
    """

    _input_power = {"period": -1}

    def __init__(self, period=1.0, lengthscale=1.0, variance=1.0, *, priors=None, fixed=()):
        for name, value in (("period", period), ("lengthscale", lengthscale)):
            if np.ndim(value) > 1:
                raise InputError(f"Periodic.{name} must be a scalar or a 1-D array (one per input)")
        self._set_params({"period": period, "lengthscale": lengthscale, "variance": variance}, priors, fixed)

    def check_input_dim(self, D):
        for name in ("period", "lengthscale"):
            value = self._raw[name]
            if value.ndim == 1 and value.shape[0] != D:
                raise InputError(f"Periodic has {value.shape[0]} values of {name} but the inputs have {D} dimensions")

    def _exponent(self, diff):
        s = jnp.sin(jnp.pi * diff / self.period) / self.lengthscale
        return -2.0 * jnp.sum(s * s, axis=-1)

    def evaluate(self, x, z):
        return self.variance * jnp.exp(self._exponent(x - z))

    def K(self, X, Z=None):
        Z = X if Z is None else Z
        return self.variance * jnp.exp(self._exponent(X[:, None, :] - Z[None, :, :]))

    def diag(self, X):
        return jnp.full(X.shape[0], self.variance)
