"""Dense linear algebra shared by every method (layer 2).

* :func:`cholesky` - eager Cholesky with a jitter policy: try the matrix as
  it is, then add ``jitter * mean(diag)`` escalating tenfold up to a cap, then
  raise :class:`~sparsegp.errors.NumericalError` naming the matrix and what to do.
* :func:`cholesky_fixed` - traceable Cholesky with one fixed relative jitter
  for use inside jitted objectives (a failure shows as NaN, which the trainer
  turns into a rejected step).
* :func:`chol_extension`, :func:`chol_append`, :func:`forward_row` - the rank-one
  append of a Cholesky factor (and of L^-1 B) behind every incremental state: the active
  set, the Smola-Bartlett dual, the held-out monitor and the IVM. O(d^2) instead of O(d^3).
* :func:`solve_lower`, :func:`solve_upper`, :func:`cho_solve`, :func:`logdet_from_chol`.
* The host forms, NumPy in and out through LAPACK, for the paths that run without a JAX program
  (:mod:`sparsegp.approximations.exact_host`): :func:`host_cholesky`, :func:`host_solve_lower`,
  :func:`host_solve_upper`, :func:`host_cho_solve`, :func:`host_inverse_lower`, :func:`host_cho_inverse`,
  :func:`host_inverse_gram`,
  :func:`lapack_nll`, :func:`lapack_inverse`, and
  :func:`single_threaded_blas` around their loops.
"""

from __future__ import annotations

import functools

import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
import scipy.linalg as sl
from threadpoolctl import ThreadpoolController

from . import _config  # noqa: F401  (JAX in float64 before this module uses it)
from ._compile import all_finite
from ._config import LOG_2PI, on_cpu
from .errors import NumericalError

# The jitter defaults, relative to the mean of the diagonal: the first rung of a factorisation's ladder
# (DEFAULT_JITTER: a matrix such as K + sigma^2 I already holds its noise), and K_uu's at the inducing inputs of
# every sparse model, whose diagonal holds no noise (INDUCING_JITTER); MAX_JITTER caps the ladder.
DEFAULT_JITTER = 1e-10
INDUCING_JITTER = 1e-8
MAX_JITTER = 1e-4

_CONTROLLER = ThreadpoolController()  # built once: each limit then costs microseconds, not a library scan


def single_threaded_blas():
    """A context in which BLAS and LAPACK run on one thread: the host loops of a few hundred rows between JAX
    programs, where OpenBLAS's second thread cost more than it saved (BENCHMARKS.md, "One BLAS thread")."""
    return _CONTROLLER.limit(limits=1, user_api="blas")


def jitter_ladder(start: float, cap: float):
    """The jitters to try in turn: ``start``, then tenfold steps while they stay within ``cap``."""
    j = start
    yield j
    while j * 10.0 <= cap * (1 + 1e-12):
        j *= 10.0
        yield j


def cholesky(A, *, name: str = "matrix", jitter: float = DEFAULT_JITTER, max_jitter: float = MAX_JITTER):
    """Lower Cholesky factor of a symmetric PSD matrix, escalating jitter on failure.

    Tries ``A`` unchanged, then ``A + j * mean(diag A) * I`` for
    ``j = jitter, 10 jitter, ...`` up to ``max_jitter``. Returns ``(L, used)``
    where ``used`` is the absolute jitter added (0.0 when none was needed).
    """
    A = jnp.asarray(A)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise NumericalError(f"cholesky of {name}: expected a square matrix, got shape {A.shape}")
    if not all_finite(A):
        raise NumericalError(
            f"cholesky of {name}: the matrix contains NaN or inf; the hyper-parameters have probably "
            "diverged (try a larger noise lower bound or hyper-priors)"
        )
    L = jnp.linalg.cholesky(A)
    if all_finite(L):
        return L, 0.0
    scale = float(jnp.mean(jnp.abs(jnp.diag(A)))) or 1.0
    for j in jitter_ladder(jitter, max_jitter):
        L = jnp.linalg.cholesky(A + (j * scale) * jnp.eye(A.shape[0], dtype=A.dtype))
        if all_finite(L):
            return L, j * scale
    raise NumericalError(_not_positive_definite(name, A.shape[0], max_jitter))


def host_cholesky(A, *, name: str = "matrix", jitter: float = DEFAULT_JITTER, max_jitter: float = MAX_JITTER):
    """:func:`cholesky` for a NumPy matrix through LAPACK, no JAX program: ``(L, used)``, the same ladder."""
    A = np.asarray(A, dtype=np.float64)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise NumericalError(f"cholesky of {name}: expected a square matrix, got shape {A.shape}")
    if not np.all(np.isfinite(A)):
        raise NumericalError(
            f"cholesky of {name}: the matrix contains NaN or inf; the hyper-parameters have probably "
            "diverged (try a larger noise lower bound or hyper-priors)"
        )
    L, info = sl.lapack.dpotrf(A, lower=1, clean=1)
    if info == 0:
        return L, 0.0
    scale = float(np.mean(np.abs(np.diag(A)))) or 1.0
    for j in jitter_ladder(jitter, max_jitter):
        L, info = sl.lapack.dpotrf(A + (j * scale) * np.eye(A.shape[0]), lower=1, clean=1)
        if info == 0:
            return L, j * scale
    raise NumericalError(_not_positive_definite(name, A.shape[0], max_jitter))


def _not_positive_definite(name: str, n: int, max_jitter: float) -> str:
    return (
        f"cholesky of {name} ({n}x{n}) failed even with jitter {max_jitter:g} x mean diagonal: "
        "the matrix is not numerically positive definite. Likely causes: duplicated or near-duplicate "
        "inputs/inducing points, a length-scale much larger than the data range, or a noise variance near 0. "
        "Remedies: remove duplicate points, select inducing points greedily (they are then well spread), "
        "raise the noise lower bound, or standardise the inputs."
    )


def with_fixed_jitter(A, jitter: float = DEFAULT_JITTER):
    """``A + jitter * mean(diag A) * I``, traceable: the matrix :func:`cholesky_fixed` factorises."""
    scale = jnp.mean(jnp.diag(A))
    return A + (jitter * scale) * jnp.eye(A.shape[0], dtype=A.dtype)


def cholesky_fixed(A, jitter: float = DEFAULT_JITTER):
    """Traceable lower Cholesky of ``A + jitter * mean(diag A) * I`` (NaN on failure)."""
    return jnp.linalg.cholesky(with_fixed_jitter(A, jitter))


def solve_lower(L, B):
    """L^-1 B for lower-triangular L."""
    return jsl.solve_triangular(L, B, lower=True)


def solve_upper(L, B):
    """L^-T B for lower-triangular L."""
    return jsl.solve_triangular(L, B, lower=True, trans="T")


def cho_solve(L, B):
    """(L L^T)^-1 B."""
    return solve_upper(L, solve_lower(L, B))


def host_solve_lower(L, B):
    """:func:`solve_lower` in NumPy (LAPACK), no JAX program."""
    return sl.solve_triangular(L, B, lower=True, check_finite=False)


def host_solve_upper(L, B):
    """:func:`solve_upper` in NumPy (LAPACK), no JAX program."""
    return sl.solve_triangular(L, B, lower=True, trans="T", check_finite=False)


def host_cho_solve(L, B):
    """:func:`cho_solve` in NumPy (LAPACK's ``dpotrs``), no JAX program."""
    return sl.lapack.dpotrs(L, B, lower=1)[0]


def logdet_from_chol(L):
    """log |L L^T| = 2 sum log diag L."""
    return 2.0 * jnp.sum(jnp.log(jnp.diag(L)))


def chol_extension(L, C, a, *, floor: float | None = None, name: str = "matrix", rtol: float = 1e-12):
    """The new last row of chol([[A, c], [c^T, a]]) from L = chol(A), for each column c of ``C`` at once.

    Returns ``(l, l_kk)`` with l = L^-1 c (k x c) and l_kk = sqrt(a - l^T l) (c,) (Seeger et al. 2003,
    App. A.1; Quiñonero-Candela & Rasmussen 2005, App. A.3, eqs. A-48, A-49): O(k^2) per column instead
    of O(k^3). ``a`` holds the new diagonal entries. With ``floor`` the squared pivot is clamped from
    below at it (states whose new pivot is at least a noise variance in exact arithmetic); without, a
    pivot below ``rtol * |a|`` raises :class:`NumericalError` (the column is numerically a combination of
    the others). NumPy float64: greedy selection runs eagerly.
    """
    L = np.asarray(L, dtype=np.float64)
    C = np.asarray(C, dtype=np.float64)
    if C.ndim == 1:
        l, l_kk = chol_extension(L, C[:, None], np.reshape(a, 1), floor=floor, name=name, rtol=rtol)
        return l[:, 0], l_kk[0]
    a = np.asarray(a, dtype=np.float64)
    k = L.shape[0]
    l = sl.solve_triangular(L, C, lower=True, check_finite=False) if k else np.zeros((0, C.shape[1]))
    pivot = a - np.einsum("ij,ij->j", l, l)
    if floor is not None:
        pivot = np.maximum(pivot, floor)
    elif not np.all(pivot > rtol * np.abs(a)):
        raise NumericalError(
            f"chol_extension of {name}: new pivot {float(np.min(pivot)):.3g} <= 0, the appended point is "
            "numerically dependent on the current set (a duplicate or near-duplicate input); skip it or add jitter"
        )
    return l, np.sqrt(pivot)


def chol_append(L, k: int, l, l_kk) -> None:
    """Write row k of a lower Cholesky factor held in the preallocated buffer ``L``: L[k, :k] = l, L[k, k] = l_kk.

    The one rank-one append of every incremental state (active set, Smola-Bartlett dual, IVM). The row
    comes from :func:`chol_extension`, or from a state that holds l = L^-1 c already (the active set's
    V = L^-1 K_{I,.} has it as a column, the IVM's M as Pi^{1/2}-scaled column).
    """
    L[k, :k] = l
    L[k, k] = l_kk


def forward_row(V, l, l_kk, b):
    """The row that :func:`chol_append` adds to V = L^-1 B when B gains the row ``b``: (b - V^T l) / l_kk.

    ``V`` (k x n) holds the current rows, ``l`` (k,) or (k x c) and ``l_kk`` the new factor row(s), ``b``
    (n,) or (n x c) the new row(s) of B (forward substitution's last step; Seeger et al. App. A.1).
    """
    return (b - V.T @ l) / l_kk


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


# OpenBLAS's threaded dpotrf (NumPy's, SciPy's and so JAX's on a CPU) crashes on matrices from about n = 16,384
# on this project's machines: larger factors are made by blocks of this many columns.
CHOLESKY_BLOCK = 4096


def blocked_cholesky(A, block: int = CHOLESKY_BLOCK, overwrite: bool = False):
    """(L, info): the lower Cholesky factor of the symmetric positive-definite ``A`` (its lower triangle read),
    left-looking by blocks of ``block`` columns: LAPACK's dpotrf on each diagonal block, matrix products and
    triangular solves for the rest, so that no dpotrf call sees more than a block. ``info`` > 0: the order of
    the leading minor that is not positive definite, as LAPACK's (L is then incomplete)."""
    L = np.asarray(A, dtype=np.float64) if overwrite else np.array(A, dtype=np.float64)
    n = L.shape[0]
    for j in range(0, n, block):
        e = min(j + block, n)
        if j:
            L[j:e, j:e] -= L[j:e, :j] @ L[j:e, :j].T
        Ljj, info = sl.lapack.dpotrf(L[j:e, j:e], lower=1, clean=1)
        if info != 0:
            return L, j + int(info)
        L[j:e, j:e] = Ljj
        L[j:e, e:] = 0.0
        if e < n:
            if j:
                L[e:, j:e] -= L[e:, :j] @ L[j:e, :j].T
            L[e:, j:e] = sl.solve_triangular(Ljj, L[e:, j:e].T, lower=True, check_finite=False).T
    return L, 0


def _use_lapack() -> bool:
    return on_cpu()


def lapack_nll(Q, y):
    """(-log N(y | 0, Q), L, Q^-1 y) through LAPACK on the host (NaNs where Q is not positive definite); for y of
    shape (n, k), the sum over its columns: :func:`gaussian_nll`'s forward pass on a CPU."""
    Q = np.asarray(Q, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if Q.shape[0] > CHOLESKY_BLOCK:
        L, info = blocked_cholesky(Q)
    else:
        L, info = sl.lapack.dpotrf(Q, lower=1, clean=1)
    if info != 0:
        n = Q.shape[0]
        return np.float64(np.nan), np.full((n, n), np.nan), np.full(y.shape, np.nan)
    alpha, _ = sl.lapack.dpotrs(L, y, lower=1)
    if y.ndim == 2:  # k columns, each N(0, Q): the sum of their -log densities
        k = y.shape[1]
        val = k * np.sum(np.log(np.diag(L))) + 0.5 * np.sum(y * alpha) + 0.5 * len(y) * k * LOG_2PI
        return np.float64(val), L, alpha
    val = np.sum(np.log(np.diag(L))) + 0.5 * y @ alpha + 0.5 * len(y) * LOG_2PI
    return np.float64(val), L, alpha


def lapack_inverse(L):
    """(L L^T)^-1 through LAPACK's ``dpotri`` on the host (NaNs where it fails)."""
    L = np.asarray(L, dtype=np.float64)
    inv, info = sl.lapack.dpotri(L, lower=1)
    if info != 0:
        return np.full_like(L, np.nan)
    inv = np.tril(inv)
    return inv + np.tril(inv, -1).T


# Below this order a triangular inverse is LAPACK's dtrtri; above, two halves and two triangular products
# (:func:`host_inverse_lower`). OpenBLAS's dtrsm and dtrtri run at a fraction of its dtrmm's rate at these
# orders (BENCHMARKS.md, "The site form's natural step on the host").
INVERSE_LEAF = 64


@functools.lru_cache(maxsize=8)
def _lower_mask(k: int) -> np.ndarray:
    return np.tri(k, dtype=np.float64)


def host_inverse_lower(L):
    """L^-1 of a lower-triangular ``L`` (its lower triangle read), Fortran order, zero above the diagonal:
    [[A, 0], [C, D]]^-1 = [[A^-1, 0], [-D^-1 C A^-1, D^-1]], the halves recursively, so that nearly every flop is
    a triangular matrix product (BLAS dtrmm)."""
    L = np.asarray(L, dtype=np.float64)
    n = L.shape[0]
    if n <= INVERSE_LEAF:
        inv, info = sl.lapack.dtrtri(L, lower=1)
        if info != 0:
            raise NumericalError(f"host_inverse_lower: the factor is singular (zero pivot at {int(info)})")
        inv *= _lower_mask(n)  # dtrtri leaves the upper triangle as it found it
        return inv
    h = n // 2
    A, D = host_inverse_lower(L[:h, :h]), host_inverse_lower(L[h:, h:])
    out = np.zeros((n, n), order="F")
    out[:h, :h], out[h:, h:] = A, D
    out[h:, :h] = sl.blas.dtrmm(-1.0, D, sl.blas.dtrmm(1.0, A, L[h:, :h], side=1, lower=1), lower=1)
    return out


def host_cho_inverse(L):
    """(L L^T)^-1 from its lower Cholesky factor on the host: L^-T L^-1 from :func:`host_inverse_lower` by LAPACK's
    dlauum, symmetrised. The same matrix as :func:`lapack_inverse` (dpotri: dtrtri then dlauum) to rounding."""
    return host_inverse_gram(host_inverse_lower(L))


def host_inverse_gram(L_inv):
    """L^-T L^-1 (symmetric, NumPy) from the lower-triangular L^-1 of :func:`host_inverse_lower` (zero above its
    diagonal), by LAPACK's dlauum: (L L^T)^-1 where L^-1 is at hand."""
    inv, _ = sl.lapack.dlauum(L_inv, lower=1)  # the upper triangle stays as L^-1's: zero
    out = inv + inv.T
    out[np.diag_indices_from(out)] *= 0.5
    return out


def _nll_forward(Q, y):
    import jax

    n = Q.shape[0]
    if _use_lapack():
        shapes = (
            jax.ShapeDtypeStruct((), Q.dtype),
            jax.ShapeDtypeStruct((n, n), Q.dtype),
            jax.ShapeDtypeStruct(y.shape, Q.dtype),
        )
        # one LAPACK call per target where the targets have a noise each (vmapped, sparsegp.approximations.per_target)
        return jax.pure_callback(lapack_nll, shapes, Q, y, vmap_method="sequential")
    L = jnp.linalg.cholesky(Q)
    alpha = cho_solve(L, y)
    if y.ndim == 2:
        k = y.shape[1]
        val = k * jnp.sum(jnp.log(jnp.diag(L))) + 0.5 * jnp.sum(y * alpha) + 0.5 * n * k * LOG_2PI
        return val, L, alpha
    val = jnp.sum(jnp.log(jnp.diag(L))) + 0.5 * jnp.dot(y, alpha) + 0.5 * n * LOG_2PI
    return val, L, alpha


def _cho_inverse(L):
    import jax

    if _use_lapack():
        return jax.pure_callback(lapack_inverse, jax.ShapeDtypeStruct(L.shape, L.dtype), L, vmap_method="sequential")
    Linv = solve_lower(L, jnp.eye(L.shape[0], dtype=L.dtype))
    return Linv.T @ Linv


def _make_gaussian_nll():
    import jax

    @jax.custom_vjp
    def gaussian_nll(Q, y):
        """-log N(y | 0, Q) = 1/2 log|Q| + 1/2 y^T Q^-1 y + n/2 log 2 pi (NaN if Q is not PD); for y of shape
        (n, k), the sum over its columns."""
        return _nll_forward(Q, y)[0]

    def fwd(Q, y):
        val, L, alpha = _nll_forward(Q, y)
        return val, (L, alpha)

    def bwd(res, g):
        L, alpha = res
        if alpha.ndim == 2:  # k columns: 1/2 (k Q^-1 - alpha alpha^T)
            W = 0.5 * (alpha.shape[1] * _cho_inverse(L) - alpha @ alpha.T)
            return g * W, g * alpha
        W = 0.5 * (_cho_inverse(L) - jnp.outer(alpha, alpha))
        return g * W, g * alpha

    gaussian_nll.defvjp(fwd, bwd)
    return gaussian_nll


gaussian_nll = _make_gaussian_nll()
