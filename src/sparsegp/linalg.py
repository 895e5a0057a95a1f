"""Dense linear algebra shared by every method (layer 2).

* :func:`cholesky` - eager Cholesky with a jitter policy: try the matrix as
  it is, then add ``jitter * mean(diag)`` escalating tenfold up to a cap, then
  raise :class:`~sparsegp.errors.NumericalError` naming the matrix and what to do.
* :func:`cholesky_fixed` - traceable Cholesky with one fixed relative jitter
  for use inside jitted objectives (a failure shows as NaN, which the trainer
  turns into a rejected step).
* :func:`chol_append` - the rank-one *append* of a Cholesky factor used by
  every greedy method: O(d^2) instead of O(d^3).
* :func:`solve_lower`, :func:`solve_upper`, :func:`cho_solve`, :func:`logdet_from_chol`.
"""

from __future__ import annotations

import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
import scipy.linalg as sl

from .errors import NumericalError

DEFAULT_JITTER = 1e-10
MAX_JITTER = 1e-4


def cholesky(A, *, name: str = "matrix", jitter: float = DEFAULT_JITTER, max_jitter: float = MAX_JITTER):
    """Lower Cholesky factor of a symmetric PSD matrix, escalating jitter on failure.

    Tries ``A`` unchanged, then ``A + j * mean(diag A) * I`` for
    ``j = jitter, 10 jitter, ...`` up to ``max_jitter``. Returns ``(L, used)``
    where ``used`` is the absolute jitter added (0.0 when none was needed).
    """
    A = jnp.asarray(A)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise NumericalError(f"cholesky of {name}: expected a square matrix, got shape {A.shape}")
    if not bool(jnp.all(jnp.isfinite(A))):
        raise NumericalError(
            f"cholesky of {name}: the matrix contains NaN or inf; the hyper-parameters have probably "
            "diverged (try a larger noise lower bound or hyper-priors)"
        )
    L = jnp.linalg.cholesky(A)
    if bool(jnp.all(jnp.isfinite(L))):
        return L, 0.0
    scale = float(jnp.mean(jnp.abs(jnp.diag(A)))) or 1.0
    j = jitter
    while j <= max_jitter * (1 + 1e-12):
        L = jnp.linalg.cholesky(A + (j * scale) * jnp.eye(A.shape[0], dtype=A.dtype))
        if bool(jnp.all(jnp.isfinite(L))):
            return L, j * scale
        j *= 10.0
    raise NumericalError(
        f"cholesky of {name} ({A.shape[0]}x{A.shape[0]}) failed even with jitter {max_jitter:g} x mean diagonal: "
        "the matrix is not numerically positive definite. Likely causes: duplicated or near-duplicate "
        "inputs/inducing points, a length-scale much larger than the data range, or a noise variance near 0. "
        "Remedies: remove duplicate points, select inducing points greedily (they are then well spread), "
        "raise the noise lower bound, or standardise the inputs."
    )


def cholesky_fixed(A, jitter: float = DEFAULT_JITTER):
    """Traceable lower Cholesky of ``A + jitter * mean(diag A) * I`` (NaN on failure)."""
    scale = jnp.mean(jnp.diag(A))
    return jnp.linalg.cholesky(A + (jitter * scale) * jnp.eye(A.shape[0], dtype=A.dtype))


def solve_lower(L, B):
    """L^-1 B for lower-triangular L."""
    return jsl.solve_triangular(L, B, lower=True)


def solve_upper(L, B):
    """L^-T B for lower-triangular L."""
    return jsl.solve_triangular(L, B, lower=True, trans="T")


def cho_solve(L, B):
    """(L L^T)^-1 B."""
    return solve_upper(L, solve_lower(L, B))


def logdet_from_chol(L):
    """log |L L^T| = 2 sum log diag L."""
    return 2.0 * jnp.sum(jnp.log(jnp.diag(L)))


def chol_append(L, c, d, *, name: str = "matrix", rtol: float = 1e-12):
    """Cholesky factor of [[A, c], [c^T, d]] given L = chol(A): O(k^2).

    The new row is (l^T, l) with l = L^-1 c and l = sqrt(d - l^T l)
    (Seeger et al. 2003, Appendix A.1; Quiñonero-Candela & Rasmussen A.3).
    Works on NumPy arrays (greedy selection runs eagerly). Raises
    :class:`NumericalError` when the new pivot is below ``rtol * d`` (rounding
    level), which means the appended point is numerically a linear combination
    of the others.
    """
    L = np.asarray(L, dtype=np.float64)
    c = np.asarray(c, dtype=np.float64)
    k = L.shape[0]
    if k:
        lvec = sl.solve_triangular(L, c, lower=True)
    else:
        lvec = np.zeros(0)
    pivot = float(d) - float(lvec @ lvec)
    if not pivot > rtol * abs(float(d)):
        raise NumericalError(
            f"chol_append of {name}: new pivot {pivot:.3g} <= 0, the appended point is numerically "
            "dependent on the current set (a duplicate or near-duplicate input); skip it or add jitter"
        )
    out = np.zeros((k + 1, k + 1))
    out[:k, :k] = L
    out[k, :k] = lvec
    out[k, k] = np.sqrt(pivot)
    return out


# ---------------------------------------------------------------------------
# Dense Gaussian negative log density with a hand-written gradient.
#
# -log N(y | 0, Q) and its gradient with respect to Q, 1/2 (Q^-1 - alpha alpha^T)
# with alpha = Q^-1 y (Rasmussen & Williams eq. 5.9). Differentiating through the
# Cholesky factorisation instead costs about five times more. On the CPU the
# factorisation and the inverse go to LAPACK (potrf / potri) through a host
# callback, which is about twice as fast as XLA's CPU kernels; elsewhere (GPU)
# the same algebra runs in JAX.
# ---------------------------------------------------------------------------

_LOG_2PI = float(np.log(2.0 * np.pi))


def _use_lapack() -> bool:
    import jax

    return jax.default_backend() == "cpu"


def _lapack_forward(Q, y):
    Q = np.asarray(Q, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    L, info = sl.lapack.dpotrf(Q, lower=1, clean=1)
    if info != 0:
        n = Q.shape[0]
        return np.float64(np.nan), np.full((n, n), np.nan), np.full(n, np.nan)
    alpha, _ = sl.lapack.dpotrs(L, y, lower=1)
    val = np.sum(np.log(np.diag(L))) + 0.5 * y @ alpha + 0.5 * len(y) * _LOG_2PI
    return np.float64(val), L, alpha


def _lapack_inverse(L):
    L = np.asarray(L, dtype=np.float64)
    inv, info = sl.lapack.dpotri(L, lower=1)
    if info != 0:
        return np.full_like(L, np.nan)
    inv = np.tril(inv)
    return inv + np.tril(inv, -1).T


def _nll_forward(Q, y):
    import jax

    n = Q.shape[0]
    if _use_lapack():
        shapes = (
            jax.ShapeDtypeStruct((), Q.dtype),
            jax.ShapeDtypeStruct((n, n), Q.dtype),
            jax.ShapeDtypeStruct((n,), Q.dtype),
        )
        return jax.pure_callback(_lapack_forward, shapes, Q, y)
    L = jnp.linalg.cholesky(Q)
    alpha = cho_solve(L, y)
    val = jnp.sum(jnp.log(jnp.diag(L))) + 0.5 * jnp.dot(y, alpha) + 0.5 * n * _LOG_2PI
    return val, L, alpha


def _cho_inverse(L):
    import jax

    if _use_lapack():
        return jax.pure_callback(_lapack_inverse, jax.ShapeDtypeStruct(L.shape, L.dtype), L)
    Linv = solve_lower(L, jnp.eye(L.shape[0], dtype=L.dtype))
    return Linv.T @ Linv


def _make_gaussian_nll():
    import jax

    @jax.custom_vjp
    def gaussian_nll(Q, y):
        """-log N(y | 0, Q) = 1/2 log|Q| + 1/2 y^T Q^-1 y + n/2 log 2 pi (NaN if Q is not PD)."""
        return _nll_forward(Q, y)[0]

    def fwd(Q, y):
        val, L, alpha = _nll_forward(Q, y)
        return val, (L, alpha)

    def bwd(res, g):
        L, alpha = res
        W = 0.5 * (_cho_inverse(L) - jnp.outer(alpha, alpha))
        return g * W, g * alpha

    gaussian_nll.defvjp(fwd, bwd)
    return gaussian_nll


gaussian_nll = _make_gaussian_nll()
