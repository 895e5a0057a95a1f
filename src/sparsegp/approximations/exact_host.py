"""The exact GP on the host: NumPy and LAPACK for kernels ``variance * exp(-|x - z|^2_ell / 2) + constant``.

On a few hundred rows a JAX program costs more to trace and compile than the fit it serves takes to run.
For a kernel with a host form (:meth:`~sparsegp.kernels.Kernel.host_parts`: the squared exponential, with a
bias or constant terms) and one noise variance, on a CPU, the exact GP's pieces are computed here without
one: the log marginal likelihood (Rasmussen & Williams eq. 2.30) and its gradient (eq. 5.9,
1/2 tr((alpha alpha^T - Q^-1) dQ/dtheta)), the posterior (eqs. 2.25-2.26) and the predictions from it;
the leave-one-out figures are :func:`~.loo.host_exact_loo`. Distances are summed over the coordinates'
differences (exact at 0, no cancellation however far apart the inputs are in length-scales), the factor
and inverse are LAPACK's (:func:`~sparsegp.linalg.lapack_nll`, as the JAX path's own callback).

Only the map from the raw hyper-parameters to the host form's values, the hyper-priors and the chain rule
back through them stay in JAX (:func:`_programs`: two programs of a few operations, the same for every
data size). The values agree with the JAX path's (:func:`~.exact_gp.exact_log_marginal`,
:func:`~.exact_gp.exact_posterior`, :func:`~.exact_gp.exact_predict`) to rounding: the tests hold them
against each other and the gradient against central differences.
"""

from __future__ import annotations

from functools import lru_cache

import jax
import jax.numpy as jnp
import numpy as np

from .._config import on_cpu
from ..linalg import host_cho_solve, host_cholesky, host_solve_lower, lapack_inverse, lapack_nll, single_threaded_blas
from ..priors import negative_log_posterior
from ..transforms import to_positive
from .exact_gp import ExactPosterior

# The host path's size: n^2 D coordinate differences kept for a fit (32 MB). Beyond it the JAX path's
# O(n^3) LAPACK work dominates whichever path runs it.
HOST_ENTRIES = 4_000_000


def on_host(kernel, noise, X, counts=None, known=None) -> bool:
    """Whether the exact GP of ``kernel`` and ``noise`` on the inputs ``X`` runs on the host: a CPU, a kernel
    with a squared-exponential host form, one noise variance, every row on its own (no grouped rows or
    known noise variances), and n^2 D at most :data:`HOST_ENTRIES`."""
    n, d = np.shape(X)
    if not on_cpu() or np.ndim(noise) != 0 or counts is not None or known is not None or n * n * d > HOST_ENTRIES:
        return False
    form = kernel.host_form()
    return form is not None and form.lengthscale is not None


def squared_differences(A, B=None) -> np.ndarray:
    """(a_id - b_jd)^2 for every pair and coordinate, shape (D, n, m) (B = A when None)."""
    B = A if B is None else B
    return np.stack([np.subtract.outer(a, b) ** 2 for a, b in zip(A.T, B.T)])


def scaled_exponential(squares, ell):
    """(E, ell_d): E = exp(-sum_d D_d / (2 ell_d^2)) from the squared differences D (:func:`squared_differences`),
    the host form's kernel without its variance and constant, and the length-scales per coordinate."""
    ell_d = np.broadcast_to(ell, (squares.shape[0],))
    return np.exp(-0.5 * np.tensordot(ell_d**-2.0, squares, axes=1)), ell_d


def form_cotangents(squares, W, E, ell, ell_d, variance):
    """The cotangents of the host form's (length-scales, variance, constant) of <W, variance E + constant>, given
    W = d value / dK: variance sum(W o E o D_d) / ell_d^3 (summed for one length-scale), sum(W o E), sum(W)."""
    M = W * E
    g_ell = variance * np.tensordot(squares, M, axes=([1, 2], [0, 1])) / ell_d**3
    return g_ell if np.ndim(ell) else np.sum(g_ell), np.sum(M), np.sum(W)


def _scaled_distances(ell, A, B) -> np.ndarray:
    """sum_d (a_id - b_jd)^2 / ell_d^2, shape (n, m), summed coordinate by coordinate."""
    ell = np.broadcast_to(np.asarray(ell, dtype=np.float64), (A.shape[1],))
    r2 = np.zeros((A.shape[0], B.shape[0]))
    for a, b, e in zip(A.T, B.T, ell):
        r2 += np.subtract.outer(a / e, b / e) ** 2
    return r2


def host_gram(form, A, B=None) -> np.ndarray:
    """K(A, B) of the host form ``form`` (:class:`~sparsegp.kernels.base.HostForm`), NumPy in and out."""
    A = np.asarray(A, dtype=np.float64)
    B = A if B is None else np.asarray(B, dtype=np.float64)
    return form.variance * np.exp(-0.5 * _scaled_distances(form.lengthscale, A, B)) + form.constant


class HostExactNegative:
    """``value_and_grad(params) -> (f, grad)`` of ``-(log p(y | X, theta) + log p(theta))``, the exact GP's
    negative log posterior (:class:`~sparsegp.fitting.negatives.ExactNegative`) for the trainer, ``params``
    the dict of ``kernel`` and ``raw_noise``, ``X`` the (scaled) inputs, ``y`` (n,) or (n, k) targets; log
    p(theta) holds the kernel's hyper-priors and ``noise_prior``."""

    def __init__(self, X, y, noise_prior=None):
        self.X = np.asarray(X, dtype=np.float64)
        self.y = np.asarray(y, dtype=np.float64)
        self._squares = squared_differences(self.X)  # fixed for the fit: each evaluation weighs them by ell^-2
        self._naturals, self._pull = _programs(noise_prior)

    def __call__(self, params):
        ell, variance, constant, noise = (np.asarray(v, dtype=np.float64) for v in self._naturals(params))
        with single_threaded_blas():
            value, cotangents = self._host(ell, variance, constant, noise)
        if cotangents is None:  # Q not factorisable here: the line search backs off
            return np.nan, jax.tree_util.tree_map(jnp.zeros_like, params)
        (_, f), grad = self._pull(params, cotangents, -value)
        return float(f), grad

    def _host(self, ell, variance, constant, noise):
        """(-log p(y), the cotangents of the host form's values), or (NaN, None) where Q does not factorise."""
        E, ell_d = scaled_exponential(self._squares, ell)
        Q = variance * E + constant
        Q[np.diag_indices_from(Q)] += noise
        value, L, alpha = lapack_nll(Q, self.y)
        if not np.isfinite(value):
            return np.nan, None
        k = 1 if self.y.ndim == 1 else self.y.shape[1]
        a = alpha.reshape(len(alpha), -1)
        W = 0.5 * (k * lapack_inverse(L) - a @ a.T)  # d value / dQ (Rasmussen & Williams eq. 5.9, negated)
        return value, (*form_cotangents(self._squares, W, E, ell, ell_d, variance), np.trace(W))


def _programs(noise_prior):
    """The two JAX programs of a host evaluation, compiled once per noise prior and parameter layout: the host
    form's values (length-scales, variance, constant, noise) from the raw parameters; and, given the cotangents
    of those values and the log marginal likelihood computed on the host, the gradient of the negative log
    posterior with respect to the raw parameters, with its value (:func:`~sparsegp.priors.negative_log_posterior`
    composes the prior). Fresh programs for a prior that is not hashable."""
    try:
        hash(noise_prior)
    except TypeError:
        return _build(noise_prior)
    return _cached(noise_prior)


def _build(noise_prior):
    def naturals(params):
        form = params["kernel"].host_parts()
        return form.lengthscale, form.variance, form.constant, to_positive(params["raw_noise"])

    def chained(params, cotangents, log_marginal):
        # the log marginal likelihood is an input here: the gradient is the prior's plus J^T cotangents
        negative = negative_log_posterior(log_marginal, params, noise_prior)
        return sum(jnp.sum(c * v) for c, v in zip(cotangents, naturals(params))) + negative, negative

    pull = jax.value_and_grad(chained, has_aux=True)

    return jax.jit(naturals), jax.jit(pull)


_cached = lru_cache(maxsize=8)(_build)


def host_log_marginal(kernel, noise: float, X, y) -> float:
    """log p(y | X, theta, sigma^2) for y ~ N(0, K + sigma^2 I) (:func:`~.exact_gp.exact_log_marginal`) on the host."""
    Q = host_gram(kernel.host_form(), X)
    Q[np.diag_indices_from(Q)] += noise
    return -float(lapack_nll(Q, np.asarray(y, dtype=np.float64))[0])


def host_exact_posterior(kernel, noise: float, X, y) -> ExactPosterior:
    """:func:`~.exact_gp.exact_posterior` on the host: Q = K + sigma^2 I factorised (escalating jitter on failure),
    alpha = Q^-1 y; the fields are NumPy arrays."""
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    noise_diag = np.full(n, float(noise))
    Q = host_gram(kernel.host_form(), X)
    Q[np.diag_indices_from(Q)] += noise_diag
    L, jitter = host_cholesky(Q, name="K + noise*I (exact GP)")
    alpha = host_cho_solve(L, np.asarray(y, dtype=np.float64))
    return ExactPosterior(X=X, L=L, alpha=alpha, noise_diag=noise_diag + jitter, jitter=jitter)


def host_exact_predict(kernel, posterior: ExactPosterior, Xs, full_cov: bool = False):
    """:func:`~.exact_gp.exact_predict` on the host: latent mean k*^T alpha and variance k** - |L^-1 k*|^2 (or the
    covariance), NumPy arrays."""
    form = kernel.host_form()
    Xs = np.asarray(Xs, dtype=np.float64)
    Ks = host_gram(form, posterior.X, Xs)
    mean = Ks.T @ posterior.alpha
    V = host_solve_lower(posterior.L, Ks)
    if full_cov:
        return mean, host_gram(form, Xs) - V.T @ V
    return mean, (form.variance + form.constant) - np.sum(V * V, axis=0)


__all__ = [
    "HOST_ENTRIES",
    "HostExactNegative",
    "form_cotangents",
    "host_exact_posterior",
    "host_exact_predict",
    "host_gram",
    "host_log_marginal",
    "on_host",
    "scaled_exponential",
    "squared_differences",
]
