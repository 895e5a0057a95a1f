"""The every-input sparse fit's posterior on the host: NumPy and LAPACK where Z is every training input.

Where the default fit ends with every distinct input inducing (growth's every-input stage: the exact GP),
its kernel has a host form and :func:`~.exact_host.on_host` holds for the data, the posterior of
:class:`~.common.SparsePosterior` (Titsias eq. 6 in the factors of :mod:`.common`: L_uu, L_B, c and
w_mean = L_uu^-T L_B^-T c), its predictions (:func:`~.common.sparse_predict`) and its leave-one-out figures
(:func:`~.loo.sparse_loo`) are computed here without a JAX program: on a few hundred rows each program would
cost more to trace and compile than the algebra takes to run. The formulas are the JAX path's, term for term
(the leave-one-out one is shared: :func:`~.loo.loo_from_projections`); the tests hold the two against each
other to rounding.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import scipy.linalg as sl

from ..linalg import MAX_JITTER, host_solve_lower, host_solve_upper, jitter_ladder
from .common import SparsePosterior
from .exact_host import host_gram
from .loo import loo_from_projections


def host_make_posterior(Z, Luu, LB, c) -> SparsePosterior:
    """:func:`~.common.make_posterior` in NumPy: w_mean = L_uu^-T L_B^-T c."""
    Z, Luu, LB, c = (np.asarray(a, dtype=np.float64) for a in (Z, Luu, LB, c))
    return SparsePosterior(Z, Luu, LB, c, host_solve_upper(Luu, host_solve_upper(LB, c)))


def host_sparse_posterior(kernel, Z, noise: float, X, y, jitter: float) -> SparsePosterior | None:
    """The unit-weight (SoR / DTC / VFE) posterior at inducing inputs Z from rows (X, y), one noise: L_uu =
    chol(K_uu + j mean(diag K_uu) I) with j from ``jitter`` up tenfold to MAX_JITTER (as
    :func:`~sparsegp.fitting.pipeline._posterior_in_memory`'s ladder), A = L_uu^-1 K_un, B = I + A A^T / sigma^2
    = L_B L_B^T, c = L_B^-1 A y / sigma^2 (:func:`~.common.unit_from_stats`). None where no jitter factorises."""
    form = kernel.host_form()
    Z = np.asarray(Z, dtype=np.float64)
    Kuu = host_gram(form, Z)
    scale = np.mean(np.diag(Kuu))
    y = np.asarray(y, dtype=np.float64)
    Kun = host_gram(form, Z, X)  # once: only K_uu's jitter changes down the ladder
    for j in jitter_ladder(jitter, MAX_JITTER):
        Luu, info = sl.lapack.dpotrf(Kuu + (j * scale) * np.eye(Z.shape[0]), lower=1, clean=1)
        if info != 0:
            continue
        A = host_solve_lower(Luu, Kun)
        B = np.eye(Z.shape[0]) + (A @ A.T) / noise
        LB, info = sl.lapack.dpotrf(B, lower=1, clean=1)
        if info == 0:
            return host_make_posterior(Z, Luu, LB, host_solve_lower(LB, (A @ y) / noise))
    return None


def host_projections(kernel, post: SparsePosterior, X):
    """:func:`~.common.projections` in NumPy: K_u*, V1 = L_uu^-1 K_u*, V2 = L_B^-1 V1, and the prior's diagonal."""
    form = kernel.host_form()
    Kus = host_gram(form, post.Z, np.asarray(X, dtype=np.float64))
    V1 = host_solve_lower(post.Luu, Kus)
    return Kus, V1, host_solve_lower(post.LB, V1), np.full(Kus.shape[1], form.variance + form.constant)


def host_sparse_predict(kernel, post: SparsePosterior, Xs, full_cov: bool = False, degenerate: bool = False):
    """:func:`~.common.sparse_predict` in NumPy: mean K_*u w_mean, variance K_** - |V1|^2 + |V2|^2 (|V2|^2 alone
    for SoR's ``degenerate`` predictive), or the covariance."""
    Kus, V1, V2, kdiag = host_projections(kernel, post, Xs)
    mean = Kus.T @ post.w_mean
    if full_cov:
        cov = V2.T @ V2
        return mean, cov if degenerate else cov + host_gram(kernel.host_form(), Xs) - V1.T @ V1
    var = np.sum(V2 * V2, axis=0)
    return mean, var if degenerate else var + kdiag - np.sum(V1 * V1, axis=0)


def host_sparse_loo(kernel, post: SparsePosterior, noise, X, y, *, degenerate: bool = False):
    """:func:`~.loo.sparse_loo` of a unit-weight posterior in NumPy: (mean, variance, error of the log density)."""
    Kus, V1, V2, kdiag = host_projections(kernel, post, X)
    return loo_from_projections(np, post, noise, Kus, V1, V2, kdiag, np.asarray(y), degenerate=degenerate)


def loo_function(method, kernel, post: SparsePosterior, noise, prediction: str, on_host: bool):
    """``(X, y[, known]) -> (mean, variance, error)`` of a fitted posterior: the approximation's own
    (:meth:`~.base.Approximation.loo`, a JAX program), or :func:`host_sparse_loo` for a posterior on the host."""
    if on_host:
        return partial(host_sparse_loo, kernel, post, noise, degenerate=method.degenerate)
    return method.loo(kernel, post, noise, prediction)


__all__ = [
    "host_make_posterior",
    "host_projections",
    "host_sparse_loo",
    "host_sparse_posterior",
    "host_sparse_predict",
    "loo_function",
]
