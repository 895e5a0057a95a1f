"""Draws of posterior functions by pathwise conditioning (Wilson, Borovitskiy, Terenin, Mostowsky & Deisenroth
2020, "Efficiently sampling functions from Gaussian process posteriors", sec. 3: Matheron's rule).

A draw of the posterior is a draw of the prior, corrected where the data are:

    exact GP:   f_s(x) = g_s(x) + k(x, X) (K + N)^-1 (y - g_s(X) - eps_s),   eps_s ~ N(0, N);
    sparse:     f_s(x) = g_s(x) + k(x, Z) K_uu^-1 (u_s - g_s(Z)),            u_s ~ q(u);

with g_s a prior draw (:mod:`..kernels.features`). The covariance of the draws is the posterior's: k - k_xX (K +
N)^-1 k_Xx for the exact GP, k - Q + k_xu K_uu^-1 Sigma_u K_uu^-1 k_ux for VFE, DTC and FITC (Titsias eq. 6);
SoR's degenerate prior has no g term, f_s(x) = k(x, Z) K_uu^-1 u_s (Quiñonero-Candela & Rasmussen eq. 27). Each
draw is then one weight vector beta_s on the centres (X or Z), and evaluating it anywhere costs one kernel
row per input: the draw is a function, the same at the same input on every call.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import solve_triangular

from ..errors import InputError
from .base import prediction_mode
from .common import SparsePosterior
from .exact_gp import ExactPosterior
from .registry import APPROXIMATIONS


def exact_weights(post: ExactPosterior, y, prior_at_X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """beta_s = (K + N)^-1 (y - g_s(X) - eps_s) for each draw (columns of ``prior_at_X``, shape (n, S))."""
    L = np.asarray(post.L)
    noise = np.sqrt(np.asarray(post.noise_diag))[:, None] * rng.standard_normal(prior_at_X.shape)
    r = np.asarray(y)[:, None] - prior_at_X - noise
    return solve_triangular(L, solve_triangular(L, r, lower=True), lower=True, trans="T")


def sparse_weights(
    post: SparsePosterior, prior_at_Z: np.ndarray | None, rng: np.random.Generator, n_samples: int
) -> np.ndarray:
    """beta_s = K_uu^-1 (u_s - g_s(Z)) in the whitened form u = Luu v, v ~ N(LB^-T c, (LB LB^T)^-1); ``prior_at_Z``
    None for SoR's degenerate prior (beta_s = Luu^-T v_s)."""
    Luu, LB, c = (np.asarray(a) for a in (post.Luu, post.LB, post.c))
    z = rng.standard_normal((c.shape[0], n_samples))
    v = solve_triangular(LB, c[:, None] + z, lower=True, trans="T")
    if prior_at_Z is not None:
        v = v - solve_triangular(Luu, prior_at_Z, lower=True)
    return solve_triangular(Luu, v, lower=True, trans="T")


def draw_weights(post, prior, rng: np.random.Generator, *, y=None, approximation="vfe", prediction="standard"):
    """(centres, weights, whether the prior term enters) of the draws ``prior`` conditioned on a fitted
    posterior: an :class:`ExactPosterior` with its targets ``y``, or a :class:`SparsePosterior` of
    ``approximation``. The augmented and Nyström predictions have no posterior over functions: refused."""
    if isinstance(post, ExactPosterior):
        return np.asarray(post.X), exact_weights(post, y, prior(np.asarray(post.X)), rng), True
    if prediction_mode(prediction).full_data:
        raise InputError(
            f"sample_functions draws from the approximation's posterior over functions; prediction={prediction!r} "
            "has no such form: refit with prediction='standard'"
        )
    Z, degenerate = np.asarray(post.Z), APPROXIMATIONS[approximation].degenerate
    return Z, sparse_weights(post, None if degenerate else prior(Z), rng, prior.const.shape[0]), not degenerate


class PosteriorFunctions:
    """Draws of a fitted regressor's posterior over functions, each evaluated anywhere, consistently.

    ``draws(X)`` gives an array (n, n_samples): column s is function s at the rows of X, in the targets' units
    (the latent f, without the noise). The same inputs give the same values on every call.
    """

    def __init__(self, kernel, prior, centres, weights, y_mean: float, y_std: float, with_prior: bool):
        self.kernel, self.prior, self.centres, self.weights = kernel, prior, np.asarray(centres), weights
        self.y_mean, self.y_std, self.with_prior = y_mean, y_std, with_prior

    @property
    def n_samples(self) -> int:
        """The number of draws."""
        return self.weights.shape[1]

    def __call__(self, X) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        f = np.asarray(self.kernel.K(X, self.centres)) @ self.weights
        if self.with_prior:
            f = f + self.prior(X)
        return self.y_mean + self.y_std * f

    def __repr__(self):
        return f"PosteriorFunctions(n_samples={self.n_samples}, centres={self.centres.shape[0]})"
