"""Chunked statistics equal the unchunked ones; the hand-written backward pass equals autodiff."""

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.flatten_util import ravel_pytree

from _reference import dense_stats, weighted_dense_stats, whitened_stats_autodiff
from sparsegp.approximations.common import kuu_cholesky
from sparsegp.backends.jax_sums import chunk_size_for, weighted_stats, whitened_stats
from sparsegp.kernels import Matern32, SquaredExponential


def problem(n=57, m=9, D=3, seed=0):
    r = np.random.default_rng(seed)
    X = jnp.asarray(r.normal(size=(n, D)))
    y = jnp.asarray(r.normal(size=n))
    Z = jnp.asarray(r.normal(size=(m, D)))
    k = SquaredExponential(r.uniform(0.5, 2.0, D), 1.3, bias=0.2)
    return k, Z, X, y


@pytest.mark.parametrize("chunk", [1, 7, 16, 57])
@pytest.mark.slow
def test_chunked_equals_dense_to_1e10(chunk):
    k, Z, X, y = problem()
    Luu = kuu_cholesky(k, Z, 1e-10)
    a = whitened_stats(k, Z, Luu, X, y, chunk=chunk)
    b = dense_stats(k, Z, Luu, X, y)
    for x, z in zip(a, b):
        np.testing.assert_allclose(np.asarray(x), np.asarray(z), rtol=1e-10, atol=1e-10)
    f = weighted_stats(k, Z, Luu, 0.1, X, y, chunk, diagonal=1.0)
    g = weighted_dense_stats(k, Z, Luu, 0.1, X, y)
    for x, z in zip(f, g):
        np.testing.assert_allclose(np.asarray(x), np.asarray(z), rtol=1e-10, atol=1e-10)
    # a known noise variance per row, Lambda_i = sigma^2 + v_i (DTC, VFE, SoR)
    known = jnp.linspace(0.0, 0.5, X.shape[0])
    f = weighted_stats(k, Z, Luu, 0.1, X, y, chunk, known=known)
    g = weighted_dense_stats(k, Z, Luu, 0.1, X, y, known=known, diagonal=0.0)
    for x, z in zip(f, g):
        np.testing.assert_allclose(np.asarray(x), np.asarray(z), rtol=1e-10, atol=1e-10)


def test_chunk_size_keeps_padding_small():
    for n in [1, 10, 1000, 36000, 1_000_003]:
        for m in [16, 512]:
            c = chunk_size_for(n, m)
            n_chunks = -(-n // c)
            assert n_chunks * c - n < n_chunks  # at most one padded row per chunk


def _objective(stats_fn, chunk):
    @partial(jax.jit, static_argnums=1)
    def f(theta, unravel, X, y):
        p = unravel(theta)
        Luu = kuu_cholesky(p["k"], p["Z"], 1e-10)
        st = stats_fn(p["k"], p["Z"], Luu, X, y, chunk=chunk)
        # A scalar that touches every statistic non-linearly.
        return jnp.sum(jnp.sin(st.S)) + jnp.sum(st.v**3) + jnp.log(st.yy) + 0.1 * st.trK + jnp.sqrt(st.trQ)

    return f


@pytest.mark.parametrize("kernel_cls", [SquaredExponential, pytest.param(Matern32, marks=pytest.mark.slow)])
def test_custom_backward_equals_autodiff_and_finite_differences(kernel_cls):
    _, Z, X, y = problem()
    k = kernel_cls(np.array([0.7, 1.1, 1.9]), 1.3)
    theta, unravel = ravel_pytree({"k": k, "Z": Z})
    f_custom = _objective(whitened_stats, 16)
    f_auto = _objective(whitened_stats_autodiff, 16)
    g1 = np.asarray(jax.grad(f_custom)(theta, unravel, X, y))
    g2 = np.asarray(jax.grad(f_auto)(theta, unravel, X, y))
    np.testing.assert_allclose(g1, g2, rtol=1e-8, atol=1e-10)
    h = 1e-6
    fd = np.array(
        [
            (f_custom(theta.at[i].add(h), unravel, X, y) - f_custom(theta.at[i].add(-h), unravel, X, y)) / (2 * h)
            for i in range(theta.size)
        ]
    )
    np.testing.assert_allclose(g1, fd, rtol=1e-5, atol=1e-6)


@pytest.mark.slow
def test_custom_backward_gradients_wrt_data():
    k, Z, X, y = problem(n=20, m=5, D=2)

    def f(X, y, fn):
        Luu = kuu_cholesky(k, Z, 1e-10)
        st = fn(k, Z, Luu, X, y, chunk=6)
        return jnp.sum(st.S**2) + jnp.sum(st.v) * st.yy + st.trK

    gx1, gy1 = jax.grad(f, argnums=(0, 1))(X, y, whitened_stats)
    gx2, gy2 = jax.grad(f, argnums=(0, 1))(X, y, whitened_stats_autodiff)
    np.testing.assert_allclose(gx1, gx2, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(gy1, gy2, rtol=1e-9, atol=1e-11)
