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

    @classmethod
    def from_data(cls, X, y, *, priors=None, fixed=()) -> Periodic:
        """A start for a fit: along each input the period whose sinusoid fits the targets best (the peak of
        their Lomb-Scargle periodogram, which allows unevenly spaced inputs), length-scale 1 and the targets'
        variance as the amplitude.

        The period's likelihood has a mode at every multiple and divisor of the true period and a broad one at
        "no period" (a period longer than the data), so a fit from an arbitrary period often ends in the wrong
        one; the periodogram's peak is a start near the right mode. Frequencies from one cycle over an
        input's span to n / 2 cycles (the average spacing's Nyquist rate), 20 n of them. Each input is read
        on its own (its marginal periodogram).

        Parameters
        ----------
        X : array of shape (n, D)
            Training inputs.
        y : array of shape (n,)
            Training targets.
        priors, fixed
            As for the constructor.

        Returns
        -------
        Periodic

        Raises
        ------
        InputError
            If an input column is constant or the targets are.

        Examples
        --------
        >>> import numpy as np
        >>> from sparsegp.kernels import Periodic
        >>> x = np.linspace(0, 10, 60)[:, None]
        >>> round(float(Periodic.from_data(x, np.sin(2 * np.pi * x[:, 0] / 2.5)).period), 1)
        2.5
        """
        from scipy.signal import lombscargle

        from ..validation import as_float_matrix, as_float_vector

        X = as_float_matrix(X, "X", min_rows=3)
        y = as_float_vector(y, "y", n=X.shape[0])
        if np.ptp(y) == 0:
            raise InputError("Periodic.from_data: the targets are constant, so they have no period")
        periods = []
        for d in range(X.shape[1]):
            span = float(np.ptp(X[:, d]))
            if span == 0:
                raise InputError(f"Periodic.from_data: input column {d} is constant, so it has no period")
            n = X.shape[0]
            freqs = np.linspace(1.0 / span, n / (2.0 * span), 20 * n)
            power = lombscargle(X[:, d], y - y.mean(), 2.0 * np.pi * freqs)
            periods.append(1.0 / freqs[int(np.argmax(power))])
        period = periods[0] if len(periods) == 1 else np.asarray(periods)
        return cls(period=period, lengthscale=1.0, variance=float(np.var(y)), priors=priors, fixed=fixed)

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
