"""The sparse variational GP classifier's bound and posterior as pure functions (Hensman, Matthews &
Ghahramani 2015, "Scalable Variational Gaussian Process Classification").

Whitened inducing variables: u = L_uu v with L_uu = chol(K_uu) and q(v) = N(m, S), S = L_S L_S^T (one m and
L_S per latent function; the latent functions share the kernel and Z), and a constant mean b per latent
function. Row i's latent marginal under q is (HMG 2015, eq. 16 in the whitened form)

    f_i ~ N(mu_i, v_i),  a_i = L_uu^-1 k_u(x_i),  mu_i = a_i^T m + b,
    v_i = k_ii - |a_i|^2 + |L_S^T a_i|^2,

and the bound on log p(y) (HMG 2015, eq. 3; Titsias's bound without collapsing q) is

    L = sum_i w_i E_q[log p(y_i | f_i)] - KL(q(v) || N(0, I)),
    KL = 1/2 (tr S + m^T m - M - log |S|)     (per latent function).

The sum over rows runs over chunks of rows with ``lax.scan`` under ``jax.checkpoint``, so memory is
O(m^2 + chunk m) per latent function whatever n is, and the sum adds up across Dask partitions. Row weights
w_i are 1, 0 for padding, or a count of rows that share one input and one label.

Shapes: ``Z`` (M, D), ``q_mu`` (M, L), ``q_sqrt`` (L, M, M) lower-triangular, ``mean`` (L,), ``X`` (n, D),
``y`` (n,) integer class codes.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from .._compile import compiled_when_eager
from ..backends.jax_sums import chunk_rows
from ..linalg import INDUCING_JITTER, cholesky_fixed, solve_lower
from ..priors import negative_log_posterior

# Relative jitter on K_uu (times its mean diagonal) in the bound and in prediction: a learnt Z may bring two
# inducing inputs close, and the whitened form stays accurate with a jitter far below the latent variance.
JITTER = INDUCING_JITTER


class Posterior(NamedTuple):
    """What prediction needs: the kernel, Z, L_uu^-1, q(v) (``q_mu`` and S = L_S L_S^T, ``q_cov``) and the
    mean ``b`` (made by :func:`posterior_of`)."""

    kernel: Any
    Z: jnp.ndarray
    Luu_inv: jnp.ndarray
    q_mu: jnp.ndarray
    q_cov: jnp.ndarray
    mean: jnp.ndarray


def inducing_inverse(kernel, Z, jitter: float = JITTER):
    """L_uu^-1 for L_uu = chol(K_uu + jitter mean(diag K_uu) I) (NaN where the factorisation fails)."""
    L = cholesky_fixed(kernel.K(Z), jitter)
    return solve_lower(L, jnp.eye(Z.shape[0], dtype=Z.dtype))


def marginals(post: Posterior, X):
    """Latent marginals (mu, v) of shape (n, L) at inputs X (the module docstring), and A = L_uu^-1 K_uf."""
    A = post.Luu_inv @ post.kernel.K(post.Z, X)  # (M, n)
    mu = A.T @ post.q_mu + post.mean
    prior = post.kernel.diag(X) - jnp.sum(A * A, axis=0)
    var = jnp.maximum(prior, 0.0)[:, None] + quadratic_forms(post.q_cov, A)
    return mu, var, A


@jax.custom_vjp
def quadratic_forms(S, A):
    """a_i^T S_l a_i for every column a_i of A (M, n) and every symmetric S_l of S (L, M, M): shape (n, L).

    The hand-written VJP reuses the forward's S A: the A-cotangent is 2 (S_l a_i) g_il summed over l, and the
    S-cotangent A diag(g_l) A^T, so a gradient costs two n M^2 L products after the forward's one (automatic
    differentiation of L_S^T A adds two more). These products are most of the bound's cost at large m."""
    return _quadratic_forms_fwd(S, A)[0]


def _quadratic_forms_fwd(S, A):
    SA = jnp.einsum("lij,jn->lin", S, A)
    return jnp.sum(A[None] * SA, axis=1).T, (A, SA)


def _quadratic_forms_bwd(res, g):
    A, SA = res
    A_bar = 2.0 * jnp.einsum("lin,nl->in", SA, g)
    S_bar = (A[None] * g.T[:, None, :]) @ A.T
    return S_bar, A_bar


quadratic_forms.defvjp(_quadratic_forms_fwd, _quadratic_forms_bwd)


@compiled_when_eager
def kl_whitened(q_mu, q_sqrt):
    """KL(N(m, L_S L_S^T) || N(0, I)) summed over the latent functions (HMG 2015, sec. 3)."""
    L = jnp.tril(q_sqrt)
    diag = jnp.diagonal(L, axis1=1, axis2=2)
    M = q_mu.shape[0]
    return 0.5 * (jnp.sum(L * L) + jnp.sum(q_mu * q_mu) - M * q_mu.shape[1] - jnp.sum(jnp.log(diag * diag)))


POSTERIOR_KEYS = ("kernel", "Z", "q_mu", "q_sqrt", "mean")  # what posterior_of reads


@compiled_when_eager
def posterior_of(params, jitter: float = JITTER) -> Posterior:
    """The :class:`Posterior` of a parameter dict (kernel, Z, q_mu, q_sqrt, mean; a ``likelihood`` is not read)."""
    kernel, Z = params["kernel"], params["Z"]
    L_S = jnp.tril(params["q_sqrt"])
    q_cov = L_S @ jnp.swapaxes(L_S, 1, 2)
    return Posterior(kernel, Z, inducing_inverse(kernel, Z, jitter), params["q_mu"], q_cov, params["mean"])


def expected_log_density_sum(post: Posterior, likelihood, X, y, w, chunk: int):
    """sum_i w_i E_q[log p(y_i | f_i)] over the rows, chunk by chunk (the module docstring)."""
    Xs, ys, ws = chunk_rows(X, y, chunk, w)

    @jax.checkpoint
    def chunk_sum(Xc, yc, wc):
        mu, var, _ = marginals(post, Xc)
        return jnp.sum(wc * likelihood.expected_log_density(mu, var, yc))

    def body(acc, rows):
        return acc + chunk_sum(*rows), None

    total, _ = jax.lax.scan(body, jnp.zeros((), X.dtype), (Xs, ys, ws))
    return total


class NegativeBound:
    """-L (plus the negative log hyper-prior of the kernel and the likelihood) as ``f(params, X, y, w)``, the
    likelihood ``params["likelihood"]`` (its parameters learnt with the rest): hashable and compared by value, so
    :func:`sparsegp.fitting.training.minimize` compiles it once per shapes."""

    def __init__(self, chunk: int, jitter: float = JITTER):
        self.chunk, self.jitter = int(chunk), float(jitter)

    def _key(self):
        return (self.chunk, self.jitter)

    def __eq__(self, other):
        return type(self) is type(other) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __call__(self, params, X, y, w):
        post = posterior_of(params, self.jitter)
        rows = expected_log_density_sum(post, params["likelihood"], X, y, w, self.chunk)
        return negative_log_posterior(rows - kl_whitened(params["q_mu"], params["q_sqrt"]), params)


@partial(jax.jit, static_argnames=("chunk", "jitter"))
def bound(params, X, y, w, likelihood, chunk: int, jitter: float = JITTER):
    """L of the module docstring (without hyper-priors)."""
    post = posterior_of(params, jitter)
    return expected_log_density_sum(post, likelihood, X, y, w, chunk) - kl_whitened(params["q_mu"], params["q_sqrt"])


@jax.jit
def predict_marginals(post: Posterior, X):
    """Latent means and variances (n, L) at test inputs X."""
    mu, var, _ = marginals(post, X)
    return mu, var


@jax.jit
def predict_covariance(post: Posterior, X):
    """The latent functions' joint covariance (L, n, n) at test inputs X: K_xx - A^T A + A^T S_l A."""
    A = post.Luu_inv @ post.kernel.K(post.Z, X)
    prior = post.kernel.K(X) - A.T @ A
    return prior[None] + jnp.einsum("in,lij,jm->lnm", A, post.q_cov, A)


@compiled_when_eager
def extend_q(post: Posterior, Z_new, jitter: float = JITTER):
    """q(v') over inducing inputs Z_new (which contain the old Z) that gives the same q(f) as ``post``.

    The predictive of f at Z_new under ``post`` is N(mu_u, Sigma_u); in Z_new's whitened coordinates that is
    m' = L'^-1 (mu_u - b), S' = L'^-1 Sigma_u L'^-T. The old q extended by the prior's conditional keeps the
    bound's value (its KL is unchanged), so a grown model starts where the smaller one ended.
    """
    Luu_new_inv = inducing_inverse(post.kernel, Z_new, jitter)
    Kzn = post.kernel.K(post.Z, Z_new)
    A = post.Luu_inv @ Kzn  # (M, M')
    mu_u = A.T @ post.q_mu  # (M', L), without the constant mean
    Knn = post.kernel.K(Z_new)
    prior = Knn - A.T @ A
    Sigma = prior[None] + jnp.einsum("ik,lij,jm->lkm", A, post.q_cov, A)
    q_mu = Luu_new_inv @ mu_u
    S = jnp.einsum("ij,ljk,mk->lim", Luu_new_inv, Sigma, Luu_new_inv)
    S = 0.5 * (S + jnp.swapaxes(S, 1, 2))
    eye = jnp.eye(S.shape[1], dtype=S.dtype)
    scale = jnp.mean(jnp.diagonal(S, axis1=1, axis2=2), axis=1)[:, None, None]
    q_sqrt = jnp.linalg.cholesky(S + 1e-10 * scale * eye)
    return q_mu, q_sqrt


def rows_and_sites(likelihood, mu, var, y, w):
    """sum_i w_i E_q[log p(y_i | f_i)] and its gradient in (mu, var) as the weighted sites (w g, w lambda)."""

    def total(mu_, var_):
        return jnp.sum(w * likelihood.expected_log_density(mu_, var_, y))

    e, (g, dv) = jax.value_and_grad(total, argnums=(0, 1))(mu, var)
    return e, g, -2.0 * dv


def site_moments(likelihood, mu, var, y):
    """The Gaussian site each row contributes at the bound's optimum: g_i = dE/dmu and lambda_i = -2 dE/dv
    (E = E_q[log p(y_i | f_i)]), per row and latent function (n, L).

    At a stationary point of L over q(v) = N(m, S), S^-1 = I + sum_i a_i Lambda_i a_i^T and
    S^-1 m = sum_i a_i (g_i + Lambda_i (mu_i - b)): q is the prior times these Gaussian sites.
    """
    _, g, lam = rows_and_sites(likelihood, mu, var, y, jnp.ones(mu.shape[0], mu.dtype))
    return g, lam


@partial(jax.jit, static_argnames=("chunk",))
def site_sums(post: Posterior, likelihood, X, y, w, chunk: int):
    """The rows' Gaussian sites summed in whitened coordinates, and the rows' part of the bound.

    Returns (P, h, e): P (L, M, M) = sum_i w_i lambda_il a_i a_i^T, h (M, L) = sum_i a_i (w_i g_il +
    w_i lambda_il (mu_il - b_l)) and e = sum_i w_i E_q[log p(y_i | f_i)] (sites of :func:`site_moments`;
    where the expected log density is locally convex in the mean (robust-max far from a row's class), lambda
    counts by its size, so that I + P stays positive definite and still scales the step, as in saddle-free
    Newton steps). A sum over rows: chunks and partitions add.
    """
    Xs, ys, ws = chunk_rows(X, y, chunk, w)
    M, L = post.q_mu.shape

    def body(acc, rows):
        P, h, e = acc
        Xc, yc, wc = rows
        mu, var, A = marginals(post, Xc)
        ec, g, lam = rows_and_sites(likelihood, mu, var, yc, wc)
        lam = jnp.abs(lam)
        P = P + jnp.einsum("in,nl,jn->lij", A, lam, A)
        h = h + A @ (g + lam * (mu - post.mean))
        return (P, h, e + ec), None

    zero = (jnp.zeros((L, M, M), X.dtype), jnp.zeros((M, L), X.dtype), jnp.zeros((), X.dtype))
    (P, h, e), _ = jax.lax.scan(body, zero, (Xs, ys, ws))
    return P, h, e


def _inverse_from_factor(L):
    """(L L^T)^-1 = L^-T L^-1 for each lower-triangular factor of a stack (k, M, M)."""
    eye = jnp.eye(L.shape[1], dtype=L.dtype)
    Linv = jax.vmap(lambda a: solve_lower(a, eye))(L)
    return jnp.einsum("lki,lkj->lij", Linv, Linv)


@jax.jit
def natural_update(q_mu, q_sqrt, P, h, rho):
    """One natural-gradient step of size ``rho`` for q(v) (Hensman, Fusi & Lawrence 2013, sec. 3; Salimbeni,
    Eleftheriadis & Hensman 2018, eq. 5): in natural parameters (S^-1, S^-1 m), the step moves q towards the
    prior times the rows' current sites, (I + P, h) of :func:`site_sums`. With a Gaussian likelihood, rho = 1
    lands on the optimal q in one step."""
    eye = jnp.eye(q_mu.shape[0], dtype=q_mu.dtype)
    prec_old = _inverse_from_factor(jnp.tril(q_sqrt))
    h_old = jnp.einsum("lij,jl->il", prec_old, q_mu)
    prec = (1.0 - rho) * prec_old + rho * (eye[None] + P)
    prec = 0.5 * (prec + jnp.swapaxes(prec, 1, 2))
    lam_new = (1.0 - rho) * h_old + rho * h
    cov = _inverse_from_factor(jnp.linalg.cholesky(prec))  # S = P^-1
    q_mu_new = jnp.einsum("lij,jl->il", cov, lam_new)
    return q_mu_new, jnp.linalg.cholesky(cov)


def loo_cavity(post: Posterior, likelihood, X, y):
    """Each training row's leave-one-out latent marginal (mean, variance), both (n, L): its own site removed.

    With q(v) the prior times Gaussian sites (:func:`site_moments`), row i's site acts on t_i = a_i^T v, whose
    marginal under q is N(mu_i - b, s_i) with s_i = |L_S^T a_i|^2. Removing the site gives the cavity
    tau = 1 / s_i - lambda_i, nu = (mu_i - b) / s_i - g_i - lambda_i (mu_i - b); f_i's cavity adds the
    prior's residual k_ii - |a_i|^2: N(b + nu / tau, 1 / tau + k_ii - |a_i|^2). (Each latent function's site
    is removed on its own: for several latent functions the sites' coupling is dropped.) At Z = X with a
    Gaussian likelihood this is the exact GP's leave-one-out predictive (Rasmussen & Williams eqs. 5.10-5.12).
    A row whose cavity precision is not positive (the optimiser has not reached the stationary point) keeps
    its posterior marginal.
    """
    mu, var, A = marginals(post, X)
    prior = jnp.maximum(post.kernel.diag(X) - jnp.sum(A * A, axis=0), 0.0)[:, None]
    s = jnp.maximum(var - prior, 1e-300)
    g, lam = site_moments(likelihood, mu, var, y)
    t = mu - post.mean
    tau = 1.0 / s - lam
    nu = t / s - g - lam * t
    ok = tau > 1e-12 / s
    tau_safe = jnp.where(ok, tau, 1.0)
    return jnp.where(ok, post.mean + nu / tau_safe, mu), jnp.where(ok, 1.0 / tau_safe + prior, var)


_loo_cavity = jax.jit(loo_cavity)


@jax.jit
def loo_log_proba(post: Posterior, likelihood, X, y):
    """Approximate leave-one-out log p(y = c | x_i, y_-i) (n, C): the predictive of :func:`loo_cavity`."""
    return likelihood.predict_log_proba(*loo_cavity(post, likelihood, X, y))


def whitened_prior(M: int, L: int) -> tuple[np.ndarray, np.ndarray]:
    """q(v) = N(0, I) for L latent functions over M inducing inputs: (q_mu, q_sqrt)."""
    return np.zeros((M, L)), np.broadcast_to(np.eye(M), (L, M, M)).copy()


def lower_mask(M: int, L: int) -> np.ndarray:
    """True on and below the diagonal of each q_sqrt: the entries the optimiser moves."""
    return np.broadcast_to(np.tril(np.ones((M, M), dtype=bool)), (L, M, M)).copy()


@dataclass(frozen=True)
class WhitenedGaussian:
    """The classifier's variational family as one object: q(v) = N(m, L_S L_S^T) per latent function over
    whitened inducing variables (the module docstring). Everything the fit and the estimator ask of q goes
    through it: where it starts, which entries move, its KL term, its posterior and predictive, its natural
    step, how it grows with Z and its leave-one-out predictive; each method is one of the pure functions above."""

    jitter: float = JITTER
    description: str = "whitened full-covariance Gaussian q(u) per latent function (Hensman et al. 2015)"

    def start(self, M: int, L: int):
        """(q_mu, q_sqrt) of the prior, q(v) = N(0, I) (:func:`whitened_prior`)."""
        return whitened_prior(M, L)

    def mask(self, M: int, L: int) -> np.ndarray:
        """The entries of q_sqrt the optimiser moves (:func:`lower_mask`)."""
        return lower_mask(M, L)

    def kl(self, params):
        """KL(q(v) || N(0, I)) (:func:`kl_whitened`)."""
        return kl_whitened(params["q_mu"], params["q_sqrt"])

    def posterior(self, params) -> Posterior:
        """The :class:`Posterior` of a parameter dict (:func:`posterior_of`), read for the keys it uses only, so that
        the fit's dict (with its likelihood) and the estimator's share one compiled program."""
        return posterior_of({k: params[k] for k in POSTERIOR_KEYS}, self.jitter)

    def negative_bound(self, chunk: int) -> NegativeBound:
        """-L as the optimiser's objective ``f(params, X, y, w)`` (:class:`NegativeBound`)."""
        return NegativeBound(chunk, self.jitter)

    def expected_log_density(self, params, X, y, w, chunk: int):
        """sum_i w_i E_q[log p(y_i | f_i)], the rows' part of the bound (:func:`expected_log_density_sum`), the
        likelihood ``params["likelihood"]``."""
        return expected_log_density_sum(self.posterior(params), params["likelihood"], X, y, w, chunk)

    def site_sums(self, params, X, y, w, chunk: int):
        """(P, h, e) at q: the rows' sites for a natural step and the expected log density (:func:`site_sums`)."""
        return site_sums(self.posterior(params), params["likelihood"], X, y, w, chunk)

    def natural_step(self, params, P, h, rho):
        """(q_mu, q_sqrt) after a natural-gradient step of size ``rho`` (:func:`natural_update`)."""
        return natural_update(params["q_mu"], params["q_sqrt"], P, h, rho)

    def extend(self, params, Z_new):
        """(q_mu, q_sqrt) over the inducing inputs ``Z_new`` (the old ones first), q carried over exactly
        (:func:`extend_q`)."""
        return extend_q(self.posterior(params), Z_new, self.jitter)

    def predict(self, post: Posterior, X, batch_size: int = 4096):
        """Latent means and variances (n, L) at X (:func:`predict_marginals`), as NumPy arrays, ``batch_size`` test
        inputs at a time."""
        L = post.q_mu.shape[1]
        out = [predict_marginals(post, jnp.asarray(X[i : i + batch_size])) for i in range(0, X.shape[0], batch_size)]
        if not out:
            return np.zeros((0, L)), np.zeros((0, L))
        return tuple(np.concatenate([np.asarray(o[k]) for o in out]) for k in (0, 1))

    def predict_cov(self, post: Posterior, X):
        """The latent functions' joint covariance (L, n, n) at X (:func:`predict_covariance`)."""
        return np.asarray(predict_covariance(post, jnp.asarray(X)))

    def loo_cavity(self, post: Posterior, likelihood, X, y):
        """Each row's leave-one-out latent marginal (mean, variance), both (n, L) (:func:`loo_cavity`)."""
        return _loo_cavity(post, likelihood, X, y)


FAMILY = WhitenedGaussian()


__all__ = [
    "FAMILY",
    "WhitenedGaussian",
    "JITTER",
    "Posterior",
    "inducing_inverse",
    "marginals",
    "quadratic_forms",
    "kl_whitened",
    "posterior_of",
    "expected_log_density_sum",
    "NegativeBound",
    "bound",
    "predict_marginals",
    "predict_covariance",
    "extend_q",
    "rows_and_sites",
    "site_moments",
    "site_sums",
    "natural_update",
    "loo_cavity",
    "loo_log_proba",
    "whitened_prior",
    "lower_mask",
]
