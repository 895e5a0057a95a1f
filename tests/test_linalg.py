import jax.numpy as jnp
import numpy as np
import pytest
import scipy.linalg

from sparsegp.errors import NumericalError
from sparsegp.linalg import (
    blocked_cholesky,
    cho_solve,
    chol_append,
    chol_extension,
    cholesky,
    cholesky_fixed,
    forward_row,
    host_cho_inverse,
    host_inverse_lower,
    lapack_inverse,
    logdet_from_chol,
    solve_lower,
    solve_upper,
)


def spd(n, r, cond=10.0):
    Q, _ = np.linalg.qr(r.normal(size=(n, n)))
    return Q @ np.diag(np.linspace(1.0, cond, n)) @ Q.T


def test_cholesky_without_jitter_on_spd(rng):
    A = spd(6, rng)
    L, used = cholesky(A)
    assert used == 0.0
    np.testing.assert_allclose(np.asarray(L @ L.T), A, rtol=1e-12, atol=1e-12)


def test_cholesky_escalates_jitter_on_singular_matrix(rng):
    # Rank-deficient Gram matrix (duplicated input): plain Cholesky fails, jitter rescues it.
    X = rng.normal(size=(5, 2))
    X = np.vstack([X, X[:2]])
    A = np.exp(-0.5 * ((X[:, None] - X[None]) ** 2).sum(-1))
    assert not np.all(np.isfinite(np.asarray(jnp.linalg.cholesky(jnp.asarray(A)))))
    L, used = cholesky(A, name="Kmm")
    assert 0.0 < used <= 1e-4 * np.mean(np.diag(A))
    np.testing.assert_allclose(np.asarray(L @ L.T), A + used * np.eye(len(A)), rtol=1e-10, atol=1e-12)


def test_cholesky_gives_clear_error_when_jitter_cap_reached(rng):
    A = spd(5, rng)
    A[0, 0] = -3.0  # indefinite beyond any small jitter
    with pytest.raises(NumericalError, match=r"cholesky of Kmm .*not numerically positive definite.*Remedies"):
        cholesky(A, name="Kmm")
    with pytest.raises(NumericalError, match="NaN or inf"):
        cholesky(np.full((2, 2), np.nan), name="K")


def test_solves_and_logdet(rng):
    A = spd(7, rng)
    L = np.linalg.cholesky(A)
    B = rng.normal(size=(7, 3))
    np.testing.assert_allclose(solve_lower(L, B), np.linalg.solve(L, B), rtol=1e-10)
    np.testing.assert_allclose(solve_upper(L, B), np.linalg.solve(L.T, B), rtol=1e-10)
    np.testing.assert_allclose(cho_solve(L, B), np.linalg.solve(A, B), rtol=1e-10)
    assert float(logdet_from_chol(L)) == pytest.approx(np.linalg.slogdet(A)[1], rel=1e-12)
    np.testing.assert_allclose(cholesky_fixed(jnp.asarray(A), 0.0), L, rtol=1e-12, atol=1e-14)


def test_chol_append_matches_dense_factor_at_every_step(rng):
    A = spd(12, rng, cond=1e3)
    L = np.zeros((12, 12))
    for k in range(12):
        l, l_kk = chol_extension(L[:k, :k], A[:k, k], A[k, k])
        chol_append(L, k, l, l_kk)
        np.testing.assert_allclose(L[: k + 1, : k + 1], np.linalg.cholesky(A[: k + 1, : k + 1]), rtol=1e-10, atol=1e-12)


def test_chol_extension_of_a_batch_equals_each_column_and_forward_row_extends_the_solve(rng):
    A = spd(9, rng, cond=1e2)
    B = rng.normal(size=(9, 5))
    L = np.linalg.cholesky(A[:6, :6])
    l, l_kk = chol_extension(L, A[:6, 6:], np.diag(A)[6:])
    for j in range(3):
        lj, ljj = chol_extension(L, A[:6, 6 + j], A[6 + j, 6 + j])
        np.testing.assert_allclose(l[:, j], lj, rtol=1e-14)
        assert ljj == pytest.approx(l_kk[j], rel=1e-14)
        full = np.linalg.cholesky(A[np.ix_(list(range(6)) + [6 + j], list(range(6)) + [6 + j])])
        np.testing.assert_allclose(np.append(lj, ljj), full[-1], rtol=1e-10, atol=1e-12)
    # the new row of L^-1 B when B gains row 6, from the old rows alone
    V = np.linalg.solve(L, B[:6])
    new = forward_row(V, l[:, 0], l_kk[0], B[6])
    L7 = np.linalg.cholesky(A[:7, :7])
    np.testing.assert_allclose(new, np.linalg.solve(L7, B[:7])[6], rtol=1e-10, atol=1e-12)


def test_chol_extension_rejects_a_dependent_point_or_clamps_at_the_floor(rng):
    A = spd(3, rng)
    L = np.linalg.cholesky(A)
    # Appending a copy of column 0 makes the extended matrix singular.
    with pytest.raises(NumericalError, match="numerically dependent"):
        chol_extension(L, A[:, 0], A[0, 0], name="K_II")
    _, l_kk = chol_extension(L, A[:, 0], A[0, 0], floor=1e-6)
    assert l_kk == pytest.approx(1e-3)


@pytest.mark.parametrize("n, block", [(10, 3), (37, 8), (64, 64), (100, 7), (50, 200)])
def test_the_blocked_cholesky_equals_lapacks_and_reports_where_it_fails(n, block):
    r = np.random.default_rng(n)
    B = r.normal(size=(n, n))
    A = B @ B.T + n * np.eye(n)
    L, info = blocked_cholesky(A, block=block)
    assert info == 0
    np.testing.assert_allclose(L, np.linalg.cholesky(A), rtol=1e-12, atol=1e-12)
    A[n // 2, n // 2] = -1.0  # the leading minor of order n // 2 + 1 is not positive definite
    assert blocked_cholesky(A, block=block)[1] == n // 2 + 1 == scipy.linalg.lapack.dpotrf(A, lower=1)[1]


@pytest.mark.parametrize("n", [1, 5, 64, 65, 130, 301])
def test_the_recursive_triangular_inverse_and_the_spd_inverse_against_lapack(n):
    """host_inverse_lower's halves (leaf INVERSE_LEAF = 64: one leaf, one split, two levels, uneven halves) and
    host_cho_inverse against dense solves and against dpotri's inverse."""
    r = np.random.default_rng(n)
    A = spd(n, r, cond=1e3)
    L = np.linalg.cholesky(A)
    Linv = host_inverse_lower(L)
    assert np.all(np.triu(Linv, 1) == 0.0)
    np.testing.assert_allclose(Linv @ L, np.eye(n), atol=1e-12)
    inv = host_cho_inverse(L)
    np.testing.assert_array_equal(inv, inv.T)
    np.testing.assert_allclose(inv, np.linalg.inv(A), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(inv, lapack_inverse(L), rtol=1e-10, atol=1e-13)


def test_the_triangular_inverse_of_a_singular_factor_is_an_error():
    L = np.tril(np.ones((70, 70)))
    L[10, 10] = 0.0
    with pytest.raises(NumericalError, match="singular"):
        host_inverse_lower(L)
