"""The variational GP with every distinct training input inducing, q(f) in its site form (Opper & Archambeau
2009, "The variational Gaussian approximation revisited", eqs. 5-6), as functions of NumPy arrays.

Per latent function, with g = f - b the zero-mean part of the latent function at the n training inputs, prior
g ~ N(0, K) (K with the whitened form's jitter, :data:`~sparsegp.classification.svgp.JITTER` times its mean
diagonal, so that both forms describe one q), and q(g) = N(mu, S):

    S = (K^-1 + Lambda)^-1,  mu = S nu,  Lambda = diag(lambda), lambda >= 0,

2 n numbers (``lam``, ``nu``) for q instead of n (n + 3) / 2. At a stationary point of the bound over q every
Gaussian q has this form (:func:`~sparsegp.classification.svgp.site_moments`). With s = lambda^1/2 and
B = I + diag(s) K diag(s) = L_B L_B^T (Rasmussen & Williams sec. 3.4.3's factor):

    alpha = K^-1 mu = nu - s B^-1 (s K nu),  mu = K alpha,
    S_ii = (1 - (B^-1)_ii) / lambda_i,
    KL(q || p) = 1/2 (tr B^-1 + mu^T alpha - n + log |B|),

so a q costs one factorisation of B and the inverse of its factor, L_B^-1 (B^-1 = L_B^-T L_B^-1 is read through
it), and no inverse of K. The variance follows from
S = K - K s B^-1 s K and s K s = B - I: (K s B^-1 s K)_ii = (B - 2 I + B^-1)_ii / lambda_i. Where
1 - (B^-1)_ii is small (lambda_i near 0: a site that barely moves the prior) that difference loses digits, and
those rows take S_ii = K_ii - (s K)_i^T B^-1 (s K)_i instead (:data:`DIRECT_BELOW`). The bound is HMG 2015 eq. 3
at Z = X (``svgp``'s, which :func:`to_whitened` converts to).

**Natural step** (Khan & Lin 2017, "Conjugate-computation variational inference", eq. 10; ``svgp.natural_update``
in these coordinates): q's natural parameters (S^-1, S^-1 mu) = (K^-1 + Lambda, nu) move towards the prior times
the rows' current sites, lambda_i = |w_i (-2 dE_i/dv_i)| and nu_i = w_i dE_i/dmu_i + lambda_i mu_i; K^-1 is in
both, so the step is the convex combination of the old and the new sites and q stays in the form.

**Gradient in the kernel** with q held at its optimum (the envelope theorem: the bound's derivative in q vanishes
there, so the profiled bound's gradient is the partial one): dL/dK = 1/2 (alpha alpha^T - s B^-1 s), from
dKL/dK = 1/2 (K^-1 - K^-1 (S + mu mu^T) K^-1) and K^-1 S K^-1 = K^-1 - s B^-1 s.

Shapes: ``K`` (n, n); ``lam``, ``nu``, ``mu``, ``var`` (n, L), one column per latent function.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.linalg import cho_solve, cholesky, lapack, solve_triangular

from ..errors import NumericalError
from ..linalg import host_inverse_gram, host_inverse_lower

# rows whose 1 - (B^-1)_ii is below this take the variance as K_ii minus its explained part (the module docstring)
DIRECT_BELOW = 1e-4


class SitePosterior(NamedTuple):
    """q(g) of every latent function from its sites: ``mu`` and ``var`` (n, L) the marginals, ``alpha`` (n, L)
    K^-1 mu, ``kl`` summed over the latent functions, and per latent function L_B^-1 and s."""

    mu: np.ndarray
    var: np.ndarray
    alpha: np.ndarray
    kl: float
    factors: tuple  # ((L_B^-1, s), ...) per latent function


def posterior(K: np.ndarray, lam: np.ndarray, nu: np.ndarray) -> SitePosterior:
    """q(g) of the module docstring from the sites ``lam`` >= 0 and ``nu``, both (n, L). B^-1 = L_B^-T L_B^-1 is
    read through L_B^-1 (its diagonal as column norms, its products as two triangular ones): the whole matrix is
    made only for the kernel cotangent, once an evaluation."""
    n, L = lam.shape
    diag = np.diag(K)
    mu, var, alpha = np.empty((n, L)), np.empty((n, L)), np.empty((n, L))
    kl, factors = 0.0, []
    for l in range(L):
        s = np.sqrt(lam[:, l])
        B = s[:, None] * K * s[None, :]
        B[np.diag_indices(n)] += 1.0
        # eigenvalues of B are at least 1: no jitter needed. B is symmetric, so its C-ordered buffer is the
        # Fortran order LAPACK reads (no copy); the factor's upper triangle is left as B's and never read.
        LB, info = lapack.dpotrf(B.T, lower=1, clean=0, overwrite_a=1)
        if info != 0:
            raise NumericalError(f"site_form.posterior: B = I + s K s is not positive definite (order {int(info)})")
        LB_inv = host_inverse_lower(LB)
        a = nu[:, l] - s * (LB_inv.T @ (LB_inv @ (s * (K @ nu[:, l]))))
        mu[:, l], alpha[:, l] = K @ a, a
        inv_diag = np.einsum("ij,ij->j", LB_inv, LB_inv)
        gap = 1.0 - inv_diag
        direct = gap < DIRECT_BELOW
        v = np.divide(gap, lam[:, l], out=np.zeros(n), where=~direct)
        if direct.any():
            W = LB_inv @ (s[:, None] * K[:, direct])
            v[direct] = diag[direct] - np.einsum("ij,ij->j", W, W)
        var[:, l] = np.maximum(v, 0.0)
        kl += 0.5 * (float(np.sum(inv_diag)) + float(mu[:, l] @ a) - n + 2.0 * float(np.sum(np.log(np.diag(LB)))))
        factors.append((LB_inv, s))
    return SitePosterior(mu, var, alpha, kl, tuple(factors))


def target_sites(q: SitePosterior, g: np.ndarray, lam_rows: np.ndarray):
    """The rows' current sites (lambda, nu) from dE/dmu (``g``) and -2 dE/dv (``lam_rows``), both weighted and
    (n, L): |lambda| where the expected log density is convex in the mean, as in ``svgp.site_sums``."""
    lam = np.abs(lam_rows)
    return lam, g + lam * q.mu


def pack(lam, nu) -> np.ndarray:
    """The sites as one vector (the fixed-point iteration's state)."""
    return np.concatenate([lam.ravel(), nu.ravel()])


def unpack(x: np.ndarray, shape) -> tuple[np.ndarray, np.ndarray]:
    """(lam, nu) of :func:`pack`'s vector, lam clipped at 0."""
    k = x.size // 2
    return np.maximum(x[:k], 0.0).reshape(shape), x[k:].reshape(shape)


def anderson(history) -> np.ndarray:
    """The next state of the fixed-point iteration x <- x + r(x) from ``history``, its last states and residuals
    [(x_k, r_k), ...] (Anderson 1965; Walker & Ni 2011, "Anderson acceleration for fixed-point iterations",
    eq. 2.1 with mixing 1): x + r - (dX + dR) gamma, gamma the least-squares fit of the last residual by the
    residuals' differences. Natural steps of size 1 converge linearly, by a factor that nears 1 where the prior
    is strong against the sites; the extrapolation reads that factor from the steps."""
    x, r = history[-1]
    if len(history) < 2:
        return x + r
    dX = np.stack([b[0] - a[0] for a, b in zip(history[:-1], history[1:])], axis=1)
    dR = np.stack([b[1] - a[1] for a, b in zip(history[:-1], history[1:])], axis=1)
    gamma = np.linalg.lstsq(dR, r, rcond=None)[0]
    return x + r - (dX + dR) @ gamma


def kernel_cotangent(q: SitePosterior) -> np.ndarray:
    """dL/dK at q held, summed over the latent functions (the module docstring): 1/2 (alpha alpha^T - s B^-1 s)."""
    G = 0.5 * (q.alpha @ q.alpha.T)
    for LB_inv, s in q.factors:
        G -= 0.5 * (s[:, None] * host_inverse_gram(LB_inv) * s[None, :])
    return G


def to_whitened(K: np.ndarray, lam: np.ndarray, nu: np.ndarray):
    """(q_mu, q_sqrt) of ``svgp``'s whitened q(v), v = L_K^-1 g with L_K = chol(K), for the same q: q_mu =
    L_K^-1 mu and S_v = (I + L_K^T Lambda L_K)^-1 (its precision), per latent function."""
    n, L = lam.shape
    LK = cholesky(K, lower=True, check_finite=False)
    q = posterior(K, lam, nu)
    q_mu = solve_triangular(LK, q.mu, lower=True, check_finite=False)
    q_sqrt = np.empty((L, n, n))
    for l in range(L):
        sL = np.sqrt(lam[:, l])[:, None] * LK
        P = sL.T @ sL
        P[np.diag_indices(n)] += 1.0
        RP = cholesky(P, lower=True, check_finite=False)
        S = cho_solve((RP, True), np.eye(n), check_finite=False)
        q_sqrt[l] = cholesky(0.5 * (S + S.T), lower=True, check_finite=False)
    return q_mu, q_sqrt


__all__ = [
    "SitePosterior",
    "posterior",
    "target_sites",
    "pack",
    "unpack",
    "anderson",
    "kernel_cotangent",
    "to_whitened",
]
