"""Leave-one-out predictive distributions of the training rows, from the fitted posterior alone.

Symbols as in NOTATION.md. Each model here is Gaussian: y ~ N(0, Q + Lambda) with Q = A^T A in the
whitened coordinates a_i = L_uu^-1 k_u(x_i) and B = I + A Lambda^-1 A^T = L_B L_B^T (a row at an input
shared by c rows counted c times). Removing one row j at input x_i changes B by the rank one
-a_i a_i^T / lambda_i, so by Sherman-Morrison its predictive for y_j given every other row is, with
mu_i the fitted latent mean at x_i and h_i = a_i^T B^-1 a_i = |L_B^-1 a_i|^2:

    mean_j = y_j - lambda_i (y_j - mu_i) / (lambda_i - h_i),
    var_j  = lambda_i^2 / (lambda_i - h_i) + e_i,

where lambda_i is the row's noise (sigma^2 for DTC, VFE and SoR; K_ii - Q_ii + sigma^2 for FITC) and e_i
what the method's own predictive adds to the prior it was fitted with (K_ii - Q_ii for DTC and VFE, whose
predictive at x_i is Titsias eq. 6 / Seeger et al. sec. 2.1; 0 for SoR's degenerate predictive, Quiñonero-
Candela & Rasmussen eq. 27, and for FITC). The exact GP is the case Z = the distinct inputs: with
h_i = v_i, its latent variance at x_i, lambda_i = sigma^2 and e_i = 0 this is Rasmussen & Williams
eqs. 5.10-5.12 (var = 1 / [Q^-1]_jj, y_j - mean = [Q^-1 y]_j / [Q^-1]_jj), for c_i rows at x_i as well.

O(m^2) per row for the sparse methods, O(n^2) for the exact GP; no n x n matrix is formed.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp

from ..linalg import solve_lower
from .common import SparsePosterior
from .exact import ExactPosterior


def loo_predictive(y, mu, h, lam, extra):
    """(mean, variance) of each row's leave-one-out predictive for y (the module docstring)."""
    gap = lam - h
    return y - lam * (y - mu) / gap, lam * lam / gap + extra


@partial(jax.jit, static_argnames=("fitc", "degenerate"))
def sparse_loo(kernel, post: SparsePosterior, noise, X, y, *, fitc: bool = False, degenerate: bool = False):
    """Leave-one-out (mean, variance) of training rows (X, y) under a fitted SoR / DTC / VFE / FITC posterior."""
    Kus = kernel.K(post.Z, X)
    V1 = solve_lower(post.Luu, Kus)
    V2 = solve_lower(post.LB, V1)
    mu = Kus.T @ post.w_mean
    h = jnp.sum(V2 * V2, axis=0)
    residual = kernel.diag(X) - jnp.sum(V1 * V1, axis=0)  # K_ii - Q_ii
    if fitc:
        return loo_predictive(y, mu, h, residual + noise, 0.0)
    return loo_predictive(y, mu, h, noise, 0.0 if degenerate else residual)


@jax.jit
def exact_loo(kernel, post: ExactPosterior, noise, X, y):
    """Leave-one-out (mean, variance) of training rows (X, y) under the exact GP's posterior."""
    Ks = kernel.K(post.X, X)
    V = solve_lower(post.L, Ks)
    mu = Ks.T @ post.alpha
    v = kernel.diag(X) - jnp.sum(V * V, axis=0)
    return loo_predictive(y, mu, v, noise, 0.0)


__all__ = ["exact_loo", "loo_predictive", "sparse_loo"]
