"""Stationary kernels: squared exponential (with Seeger et al.'s bias), Matérn and rational quadratic.

All take a shared or ARD ``lengthscale`` (ell) and an amplitude ``variance``
(C in Seeger et al. 2003, sigma_f^2 elsewhere). Distances use the scaled
inputs x / ell, so the ARD weight matrix of Seeger et al. is W = diag(ell^-2).
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from .._docstrings import fill
from ..errors import InputError
from ..transforms import NON_NEGATIVE
from . import features
from .base import FIT_PARAMETERS, HostForm, Kernel
from .distance import safe_sqrt, sqdist, wide

SHAPE_PARAMETERS = """
lengthscale : float or array of shape (D,)
    ell: one length-scale shared by every input dimension, or one per dimension (ARD).
variance : float
    The amplitude, k(x, x).
"""


@fill(shape_parameters=SHAPE_PARAMETERS, fit_parameters=FIT_PARAMETERS)
class Stationary(Kernel):
    """A stationary kernel k(x, z) = variance * f(r^2), with r^2 = sum_d (x_d - z_d)^2 / ell_d^2 and f(0) = 1.
    Subclasses define the profile f.

    Parameters
    ----------
    {shape_parameters}
    {fit_parameters}

    Examples
    --------
    >>> from sparsegp.kernels import Matern12, Stationary
    >>> isinstance(Matern12(), Stationary)
    True
    """

    _abstract = True
    _input_power = {"lengthscale": -1}

    def __init__(self, lengthscale=1.0, variance=1.0, *, priors=None, fixed=()):
        self._set_params({"lengthscale": lengthscale, "variance": variance}, priors, fixed)
        if np.ndim(lengthscale) > 1:
            raise InputError(f"{type(self).__name__}.lengthscale must be a scalar or a 1-D array (ARD)")

    def profile(self, r2):
        """The profile f(r^2), with f(0) = 1.

        Parameters
        ----------
        r2 : jax.Array
            Squared scaled distances.

        Returns
        -------
        jax.Array
            Of the same shape.
        """
        raise NotImplementedError

    def distance_scales(self):
        return [np.asarray(self.lengthscale, dtype=np.float64)]

    def spectral_sample(self, rng: np.random.Generator, shape: tuple) -> np.ndarray:
        """Frequencies from the spectral density of the profile at unit length-scale, shape ``shape`` (..., D).

        Parameters
        ----------
        rng : numpy.random.Generator
            The randomness.
        shape : tuple
            The frequencies' shape, the input dimension last.

        Returns
        -------
        ndarray
        """
        raise InputError(f"{type(self).__name__} names no spectral density")

    def prior_draws(self, n_samples, n_features, D, rng):
        omega = self.spectral_sample(rng, (n_samples, n_features, D)) / np.asarray(self.lengthscale, dtype=np.float64)
        return features.cosines(omega, float(np.asarray(self.variance)), rng)

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


def _student_t(rng, shape, dof: float) -> np.ndarray:
    """Multivariate Student-t frequencies with ``dof`` degrees of freedom: a Matérn-nu kernel's spectral density
    at unit length-scale has dof = 2 nu (RW eq. 4.15)."""
    g = rng.chisquare(dof, size=shape[:-1])
    return rng.standard_normal(shape) * np.sqrt(dof / g)[..., None]


@partial(jax.custom_vjp, nondiff_argnums=(4,))
def se_gram(variance, ell, X, Z, square: bool):
    """variance * exp(-|x/ell - z/ell|^2 / 2) for all pairs, with a hand-written VJP.

    The VJP is the closed form (E = K_bar * K, G = -E / 2 the cotangent of r^2):
    a_bar_i = 2 (sum_j G_ij a_i - (G b)_i), b_bar_j = 2 (sum_i G_ij b_j - (G^T a)_j),
    ell_bar = -(sum_i a_bar_i * a_i + sum_j b_bar_j * b_j) / ell with a = X / ell,
    b = Z / ell (both centred; the sums are shift-invariant). It costs three
    passes over the n x m block and two (n x m) x (m x D) products, against
    about ten element-wise passes for the automatic one: the kernel's share of
    a VFE gradient drops from about a third to a tenth (measured at n = 36,000, m = 512).
    Where the inputs are wide in length-scales (:mod:`.distance`) these sums cancel like the distances'
    expansion, and they are summed over the coordinates' differences instead.
    """
    return _se_forward(variance, ell, X, Z, square)[0]


def _se_forward(variance, ell, X, Z, square):
    a, b = X / ell, Z / ell
    centre = jnp.mean(b, axis=0)
    a, b = a - centre, b - centre
    K = variance * jnp.exp(-0.5 * sqdist(a, None if square else b))
    return K, (variance, ell, a, b, K)


def _se_fwd(variance, ell, X, Z, square):
    K, res = _se_forward(variance, ell, X, Z, square)
    return K, res


def _pair_sums_expanded(G, a, b):
    a_bar = 2.0 * (jnp.sum(G, axis=1)[:, None] * a - G @ b)
    b_bar = 2.0 * (jnp.sum(G, axis=0)[:, None] * b - G.T @ a)
    return a_bar, b_bar, jnp.sum(a_bar * a, axis=0) + jnp.sum(b_bar * b, axis=0)


def _pair_sums_direct(G, a, b):
    """:func:`_pair_sums_expanded` from the coordinates' differences, where the expansion cancels (wide inputs,
    :mod:`.distance`): a_bar_i = 2 sum_j G_ij (a_i - b_j), b_bar_j = -2 sum_i G_ij (a_i - b_j), and
    sum_i a_bar_i a_i + sum_j b_bar_j b_j = 2 sum_ij G_ij (a_i - b_j)^2, per coordinate."""
    diff = a[:, None, :] - b[None, :, :]
    Gd = G[:, :, None] * diff
    return 2.0 * jnp.sum(Gd, axis=1), -2.0 * jnp.sum(Gd, axis=0), 2.0 * jnp.sum(Gd * diff, axis=(0, 1))


def _se_bwd(square, res, K_bar):
    variance, ell, a, b, K = res
    E = K_bar * K
    var_bar = jnp.sum(E) / variance
    G = -0.5 * E
    spread = wide(jnp.sum(a * a, axis=1), jnp.sum(b * b, axis=1))
    a_bar, b_bar, t = jax.lax.cond(spread, _pair_sums_direct, _pair_sums_expanded, G, a, b)
    ell_bar = -t / ell
    if jnp.ndim(ell) == 0:
        ell_bar = jnp.sum(ell_bar)
    return var_bar, ell_bar, a_bar / ell, b_bar / ell


se_gram.defvjp(_se_fwd, _se_bwd)


@fill(shape_parameters=SHAPE_PARAMETERS, fit_parameters=FIT_PARAMETERS)
class SquaredExponential(Stationary):
    """k(x, z) = C exp(-1/2 (x - z)^T W (x - z)) + v_b (Seeger et al. 2003, sec. 4), with W = diag(ell^-2),
    C the ``variance`` and v_b the ``bias``. ``RBF`` is the same class.

    Parameters
    ----------
    {shape_parameters}
    bias : float or None
        The constant v_b >= 0 (a fit may drive it to exactly 0); None (the default) leaves it out.
    {fit_parameters}

    Examples
    --------
    >>> import numpy as np
    >>> from sparsegp.kernels import SquaredExponential
    >>> k = SquaredExponential(lengthscale=[1.0, 2.0], variance=1.0)
    >>> np.asarray(k.K(np.zeros((1, 2)), np.ones((1, 2))))  # exp(-(1 + 1/4) / 2)
    array([[0.5353]])
    >>> k.replace(variance=2.0).variance
    Array(2., dtype=float64)
    """

    _transforms = {"bias": NON_NEGATIVE}

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

    def spectral_sample(self, rng, shape):
        return rng.standard_normal(shape)

    def prior_draws(self, n_samples, n_features, D, rng):
        draws = super().prior_draws(n_samples, n_features, D, rng)
        return draws.plus(features.constant(float(np.asarray(self._bias())), n_samples, D, rng))

    def evaluate(self, x, z):
        return super().evaluate(x, z) + self._bias()

    def K(self, X, Z=None):
        square = Z is None
        return se_gram(self.variance, self.lengthscale, X, X if square else Z, square) + self._bias()

    def diag(self, X):
        return super().diag(X) + self._bias()

    def host_parts(self) -> HostForm:
        return HostForm(self.lengthscale, self.variance, self._bias())


RBF = SquaredExponential


@fill(shape_parameters=SHAPE_PARAMETERS, fit_parameters=FIT_PARAMETERS)
class Matern12(Stationary):
    """The Matérn 1/2 (Ornstein-Uhlenbeck) kernel, k = variance * exp(-r).

    Parameters
    ----------
    {shape_parameters}
    {fit_parameters}

    Examples
    --------
    >>> import numpy as np
    >>> from sparsegp.kernels import Matern12
    >>> float(np.asarray(Matern12(2.0).K(np.array([[0.0]]), np.array([[2.0]])))[0, 0])  # e^-1
    0.36787944117144...
    """

    def profile(self, r2):
        return jnp.exp(-safe_sqrt(r2))

    def spectral_sample(self, rng, shape):
        return _student_t(rng, shape, 2 * 0.5)


@fill(shape_parameters=SHAPE_PARAMETERS, fit_parameters=FIT_PARAMETERS)
class Matern32(Stationary):
    """The Matérn 3/2 kernel, k = variance * (1 + sqrt(3) r) exp(-sqrt(3) r): once differentiable samples.

    Parameters
    ----------
    {shape_parameters}
    {fit_parameters}

    Examples
    --------
    >>> import numpy as np
    >>> from sparsegp.kernels import Matern32
    >>> float(np.asarray(Matern32(1.0).K(np.array([[0.0]]), np.array([[1.0]])))[0, 0])
    0.48335...
    """

    def profile(self, r2):
        s = jnp.sqrt(3.0) * safe_sqrt(r2)
        return (1.0 + s) * jnp.exp(-s)

    def spectral_sample(self, rng, shape):
        return _student_t(rng, shape, 2 * 1.5)


@fill(shape_parameters=SHAPE_PARAMETERS, fit_parameters=FIT_PARAMETERS)
class Matern52(Stationary):
    """The Matérn 5/2 kernel, k = variance * (1 + sqrt(5) r + 5 r^2 / 3) exp(-sqrt(5) r): twice differentiable
    samples, a common alternative to the squared exponential on real data.

    Parameters
    ----------
    {shape_parameters}
    {fit_parameters}

    Examples
    --------
    >>> import numpy as np
    >>> from sparsegp.kernels import Matern52
    >>> np.asarray(Matern52(0.5).K(np.array([[0.0], [1.0]])))
    array([[1.    , 0.1387],
           [0.1387, 1.    ]])
    """

    def profile(self, r2):
        s = jnp.sqrt(5.0) * safe_sqrt(r2)
        return (1.0 + s + 5.0 * r2 / 3.0) * jnp.exp(-s)

    def spectral_sample(self, rng, shape):
        return _student_t(rng, shape, 2 * 2.5)


@fill(shape_parameters=SHAPE_PARAMETERS, fit_parameters=FIT_PARAMETERS)
class RationalQuadratic(Stationary):
    """The rational quadratic kernel, k = variance * (1 + r^2 / (2 alpha))^-alpha (Rasmussen & Williams eq. 4.19):
    a scale mixture of squared exponentials whose length-scales vary, by ``alpha`` (the SE as alpha -> inf).
    scikit-learn's ``RationalQuadratic`` with ``length_scale`` = ell.

    Parameters
    ----------
    {shape_parameters}
    alpha : float
        The mixture's shape, alpha > 0: small alpha mixes many length-scales.
    {fit_parameters}

    Examples
    --------
    >>> import numpy as np
    >>> from sparsegp.kernels import RationalQuadratic
    >>> float(np.asarray(RationalQuadratic(1.0, alpha=0.5).K(np.array([[0.0]]), np.array([[1.0]])))[0, 0])  # 2^-0.5
    0.7071067811865...
    """

    def __init__(self, lengthscale=1.0, variance=1.0, alpha=1.0, *, priors=None, fixed=()):
        if np.ndim(lengthscale) > 1:
            raise InputError("RationalQuadratic.lengthscale must be a scalar or a 1-D array (ARD)")
        if np.ndim(alpha) != 0:
            raise InputError("RationalQuadratic.alpha must be a scalar")
        self._set_params({"lengthscale": lengthscale, "variance": variance, "alpha": alpha}, priors, fixed)

    def profile(self, r2):
        alpha = self.alpha
        return jnp.exp(-alpha * jnp.log1p(r2 / (2.0 * alpha)))

    def spectral_sample(self, rng, shape):
        # an SE of precision tau ~ Gamma(alpha, rate alpha) for each feature (RW eq. 4.20)
        alpha = float(np.asarray(self.alpha))
        tau = rng.gamma(alpha, 1.0 / alpha, size=shape[:-1])
        return rng.standard_normal(shape) * np.sqrt(tau)[..., None]
