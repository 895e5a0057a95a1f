import jax.numpy as jnp
import numpy as np
import pytest

from sparsegp.errors import NumericalError
from sparsegp.linalg import cho_solve, chol_append, cholesky, cholesky_fixed, logdet_from_chol, solve_lower, solve_upper


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
    L = np.zeros((0, 0))
    for k in range(12):
        L = chol_append(L, A[:k, k], A[k, k])
        np.testing.assert_allclose(L, np.linalg.cholesky(A[: k + 1, : k + 1]), rtol=1e-10, atol=1e-12)


def test_chol_append_rejects_dependent_point(rng):
    A = spd(3, rng)
    L = np.linalg.cholesky(A)
    # Appending a copy of column 0 makes the extended matrix singular.
    with pytest.raises(NumericalError, match="numerically dependent"):
        chol_append(L, A[:, 0], A[0, 0], name="K_II")
