"""Leave-one-out predictive distributions of the training rows, from the fitted posterior alone.

Symbols as in NOTATION.md. Each model here is Gaussian: y ~ N(0, Q + Lambda) with Q = A^T A in the
whitened coordinates a_i = L_uu^-1 k_u(x_i) and B = I + A Lambda^-1 A^T = L_B L_B^T (a row at an input
shared by c rows counted c times). Removing one row j at input x_i changes B by the rank one
-a_i a_i^T / lambda_i, so by Sherman-Morrison its predictive for y_j given every other row is, with
mu_i the fitted latent mean at x_i and h_i = a_i^T B^-1 a_i = |L_B^-1 a_i|^2:

    mean_j = y_j - lambda_i (y_j - mu_i) / (lambda_i - h_i),
    var_j  = lambda_i^2 / (lambda_i - h_i) + e_i,

where lambda_i is the row's noise (sigma^2 for DTC, VFE and SoR; K_ii - Q_ii + sigma^2 for FITC; in general
sigma^2 plus the approximation's ``diagonal`` share of K_ii - Q_ii) and e_i what the method's own predictive
adds to the prior it was fitted with (the rest of K_ii - Q_ii: all of it for DTC and VFE, whose
predictive at x_i is Titsias eq. 6 / Seeger et al. sec. 2.1; 0 for SoR's degenerate predictive, Quiñonero-
Candela & Rasmussen eq. 27, and for FITC). The exact GP is the case Z = the distinct inputs: with
h_i = v_i, its latent variance at x_i, lambda_i = sigma^2 and e_i = 0 this is Rasmussen & Williams
eqs. 5.10-5.12 (var = 1 / [Q^-1]_jj, y_j - mean = [Q^-1 y]_j / [Q^-1]_jj), for c_i rows at x_i as well.

O(m^2) per row for the sparse methods, O(n^2) for the exact GP; no n x n matrix is formed.

**Rounding.** lambda_i - h_i subtracts two numbers that agree to many digits when a row is well predicted by
the others at a small noise (the exact GP with a near-deterministic target: h_i = v_i, the latent variance,
is itself k_ii minus a number close to it). The exact GP therefore never forms v_i: with P = (K + N)^-1,
N = diag(n_i), n_i = sigma^2 / c_i (the factor's jitter, if any, counted as noise in sigma^2 and n_i), the
identity K - K P K = N - N P N gives

    sigma^2 - v_i = (sigma^2 - n_i) + n_i^2 P_ii,     y_j - mu_i = (y_j - ybar_i) + n_i alpha_i,

sums of terms of one sign (ybar_i the mean target at x_i; for one row per input these are Rasmussen &
Williams eqs. 5.10-5.12), with P_ii = |L^-1 e_i|^2. Each row also gets an estimate of the error of its log
density (:func:`log_density_error`) from the backward error of the factor (Higham, *Accuracy and Stability of
Numerical Algorithms*, 2nd ed., Thm. 10.3: L L^T = A + E with |E| at most of order n eps |A|; the estimate
takes eps tr(A), the size rounding errors reach in practice, and tests check it against extended
precision): where it is large the figures are not to be trusted, whatever they say.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from ..linalg import host_solve_lower, host_solve_upper, solve_lower, solve_upper
from .common import SparsePosterior, projections
from .exact_gp import ExactPosterior
from .per_target import batched, last_axis

EPS = float(jnp.finfo(jnp.float64).eps)


def loo_predictive(y, mu, h, lam, extra):
    """(mean, variance) of each row's leave-one-out predictive for y (the module docstring)."""
    gap = lam - h
    return y - lam * (y - mu) / gap, lam * lam / gap + extra


def log_density_error(resid, gap, lam, extra, gap_err, resid_err, xp=jnp):
    """First-order bound on the error of a row's leave-one-out log density, nats, from the errors ``gap_err``
    of lambda_i - h_i (``gap``) and ``resid_err`` of y_j - mu_i (``resid``): var = lambda^2 / gap + extra,
    z = lambda resid / (gap sqrt(var)), log density -1/2 (log 2 pi var + z^2). Infinite where the gap's error
    reaches the gap itself (its sign is then unknown)."""
    var = lam * lam / gap + extra
    rel_gap = gap_err / xp.abs(gap)
    rel_var = (lam * lam / gap) / var * rel_gap
    z = lam * resid / (gap * xp.sqrt(var))
    dz = xp.abs(z) * (rel_gap + 0.5 * rel_var) + lam * resid_err / (xp.abs(gap) * xp.sqrt(var))
    return xp.where(rel_gap < 1.0, 0.5 * rel_var + xp.abs(z) * dz + 0.5 * dz * dz, xp.inf)


@partial(jax.jit, static_argnames=("diagonal", "degenerate"))
def sparse_loo(
    kernel, post: SparsePosterior, noise, X, y, known=None, *, diagonal: float = 0.0, degenerate: bool = False
):
    """Leave-one-out (mean, variance, error of the log density) of training rows (X, y) under a fitted SoR /
    DTC / VFE / FITC posterior; ``known``: the rows' known noise variances (added to sigma^2 in lambda_i);
    ``diagonal``: the share of K_ii - Q_ii in lambda_i (FITC's 1), the rest of it in e_i.
    A posterior of k targets with a noise each (``noise`` (k,)): each target's, the targets last."""
    if batched(post, "LB"):
        one = partial(sparse_loo, kernel, diagonal=diagonal, degenerate=degenerate)
        return tuple(last_axis(a) for a in jax.vmap(one, in_axes=(0, 0, None, 1))(post, noise, X, y))
    noise = noise if known is None else noise + known
    Kus, V1, V2 = projections(kernel, post, X)
    return loo_from_projections(
        jnp, post, noise, Kus, V1, V2, kernel.diag(X), y, diagonal=diagonal, degenerate=degenerate
    )


def loo_from_projections(xp, post, noise, Kus, V1, V2, kdiag, y, *, diagonal: float = 0.0, degenerate: bool = False):
    """The formula of :func:`sparse_loo` in the array module ``xp`` from the rows' projections (K_u*, V1, V2 of
    :func:`~.common.projections`) and the prior's diagonal ``kdiag``: one formula for the JAX program and the host
    (:func:`~.sparse_host.host_sparse_loo`)."""
    mu = Kus.T @ post.w_mean
    h = xp.sum(V2 * V2, axis=0)
    residual = kdiag - xp.sum(V1 * V1, axis=0)  # K_ii - Q_ii
    lam = residual * diagonal + noise if diagonal else noise
    extra = 0.0 if degenerate or diagonal == 1 else residual * (1 - diagonal)
    # h's error through B's backward error E_B (|E_B| ~ eps tr B; |B^-1 a|^2 <= h as B >= I), and
    # for FITC the rounding of K_ii - Q_ii inside lambda
    gap_err = EPS * (xp.sum(post.LB * post.LB) * h + (kdiag * diagonal if diagonal else 0.0))
    if y.ndim == 2:  # k targets (columns of y and mu) share h, lambda and the extra variance
        h, lam, extra, gap_err = (_column(a, xp) for a in (h, lam, extra, gap_err))
    mean, var = loo_predictive(y, mu, h, lam, extra)
    return mean, var, log_density_error(y - mu, lam - h, lam, extra, gap_err, 0.0, xp=xp)


def _column(a, xp=jnp):
    """A per-row vector as a column, to broadcast over k targets (scalars as they are)."""
    return a[:, None] if xp.ndim(a) == 1 else a


@jax.jit
def exact_loo(post: ExactPosterior, noise, index, y, y_bar):
    """Leave-one-out (mean, variance, error of the log density) of training rows with targets y at the
    posterior's inputs ``index`` (mean target ``y_bar`` there), in the cancellation-free form of the module
    docstring. A posterior of k targets with a noise each (``noise`` (k,)): each target's, the targets last."""
    if batched(post, "L"):
        each = jax.vmap(exact_loo, in_axes=(0, 0, None, 1, 1))(post, noise, index, y, y_bar)
        return tuple(last_axis(a) for a in each)
    return _exact_loo(jnp, solve_lower, solve_upper, post, noise, index, y, y_bar)


def host_exact_loo(post: ExactPosterior, noise, index, y, y_bar):
    """:func:`exact_loo` for a posterior of NumPy arrays (one noise) in NumPy and LAPACK, no JAX program
    (:mod:`.exact_host`)."""
    return _exact_loo(np, host_solve_lower, host_solve_upper, post, noise, index, y, y_bar)


def _exact_loo(xp, lower, upper, post, noise, index, y, y_bar):
    """The formula of :func:`exact_loo` in the array module ``xp`` with its triangular solves."""
    n = post.L.shape[0]
    W = lower(post.L, (xp.arange(n)[:, None] == index[None, :]).astype(post.L.dtype))  # L^-1 e_i
    p = xp.sum(W * W, axis=0)  # P_ii
    Pe = upper(post.L, W)  # P e_i
    Pe2 = xp.sum(Pe * Pe, axis=0)
    lam = noise + post.jitter  # the jitter counts as noise, as it does in the posterior
    nd, alpha = post.noise_diag[index], post.alpha[index]
    gap = (lam - nd) + nd * nd * p
    backward = EPS * xp.sum(post.L * post.L)  # |E| ~ eps tr(K + N), E the factor's backward error
    # dP_ii = -(P E P)_ii <= |E| |P e_i|^2; d alpha_i = -(P E alpha)_i <= |E| |P e_i| |alpha|
    gap_err = nd * nd * backward * Pe2
    if y.ndim == 2:  # k targets: the columns of y and alpha share the rest
        lam, nd, gap, gap_err, Pe2 = (_column(a, xp) for a in (lam, nd, gap, gap_err, Pe2))
    resid = (y - y_bar) + nd * alpha
    alpha_norm = xp.linalg.norm(post.alpha) if y.ndim == 1 else xp.linalg.norm(post.alpha, axis=0)
    resid_err = nd * backward * xp.sqrt(Pe2) * alpha_norm
    mean, var = y - lam * resid / gap, lam * lam / gap
    return mean, var, log_density_error(resid, gap, lam, 0.0, gap_err, resid_err, xp=xp)


__all__ = ["exact_loo", "host_exact_loo", "log_density_error", "loo_from_projections", "loo_predictive", "sparse_loo"]
