"""The host (BLAS-3) objective equals the JAX path in value and gradient, for every approximation."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.flatten_util import ravel_pytree

from sparsegp.approximations.host_objective import HostObjective
from sparsegp.approximations.registry import APPROXIMATIONS
from sparsegp.backends import blas_sums as stats_blas
from sparsegp.backends.jax_sums import RowWeights
from sparsegp.kernels import Matern32, SquaredExponential
from sparsegp.transforms import to_positive, to_raw


def problem(n=103, m=11, D=3, seed=0):
    r = np.random.default_rng(seed)
    X = r.normal(size=(n, D))
    y = np.sin(X[:, 0]) + 0.1 * r.normal(size=n)
    Z = X[:m] + 0.05 * r.normal(size=(m, D))
    return X, y, Z


def jax_reference(approximation, params, X, y, chunk):
    fn = APPROXIMATIONS[approximation].objective

    def f(p):
        value = fn(
            p["kernel"], p["Z"], to_positive(p["raw_noise"]), jnp.asarray(X), jnp.asarray(y), chunk=chunk, jitter=1e-8
        )
        return -value - p["kernel"].log_prior()

    return jax.jit(jax.value_and_grad(f))(params)


KERNELS = {
    "se-ard-bias": lambda: SquaredExponential(np.array([0.9, 1.4, 0.7]), 1.3, bias=0.2),
    "matern32": lambda: Matern32(1.1, 0.8),
}


_REFERENCE: dict = {}


@pytest.mark.slow
@pytest.mark.parametrize("approximation", ["vfe", "dtc", "sor", "fitc"])
@pytest.mark.parametrize("kernel", sorted(KERNELS))
@pytest.mark.parametrize("chunk", [17, 103, 500])
def test_host_objective_equals_jax_path(approximation, kernel, chunk):
    X, y, Z = problem()
    params = {"kernel": KERNELS[kernel](), "raw_noise": jnp.asarray(to_raw(0.05)), "Z": jnp.asarray(Z)}
    # the JAX path in one chunk, computed once per approximation and kernel, against every host chunk size
    if (approximation, kernel) not in _REFERENCE:
        _REFERENCE[approximation, kernel] = jax_reference(approximation, params, X, y, 103)
    f0, g0 = _REFERENCE[approximation, kernel]
    host = HostObjective(approximation, X, y, chunk=chunk, jitter=1e-8)
    f1, g1 = host(params)
    a, b = ravel_pytree(g0)[0], ravel_pytree(g1)[0]
    assert abs(f1 - float(f0)) <= 1e-10 * abs(float(f0))
    np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-8, atol=1e-10 * float(jnp.max(jnp.abs(a))))


@pytest.mark.slow
@pytest.mark.parametrize("approximation", ["vfe", "fitc"])
def test_recomputed_blocks_equal_kept_blocks(approximation, monkeypatch):
    """Above the memory budget the second pass recomputes the blocks: same value and gradient."""
    X, y, Z = problem(n=90)
    params = {"kernel": KERNELS["se-ard-bias"](), "raw_noise": jnp.asarray(to_raw(0.1)), "Z": jnp.asarray(Z)}
    kept = HostObjective(approximation, X, y, chunk=25, jitter=1e-8)(params)
    monkeypatch.setattr(stats_blas, "KEEP_BYTES", 0)
    again = HostObjective(approximation, X, y, chunk=25, jitter=1e-8)(params)
    assert again[0] == pytest.approx(kept[0], rel=1e-13)
    np.testing.assert_allclose(ravel_pytree(again[1])[0], ravel_pytree(kept[1])[0], rtol=1e-11, atol=1e-12)


@pytest.mark.slow
def test_fixed_inducing_inputs_and_finite_differences():
    """With Z fixed the gradient covers kernel and noise; it matches central differences."""
    X, y, Z = problem(n=60, m=8)
    host = HostObjective("vfe", X, y, chunk=16, jitter=1e-8, Z_fixed=Z)
    params = {"kernel": KERNELS["se-ard-bias"](), "raw_noise": jnp.asarray(to_raw(0.07))}
    f, g = host(params)
    flat, unravel = ravel_pytree(params)
    grad = np.asarray(ravel_pytree(g)[0])
    h = 1e-6
    for j in range(flat.size):
        e = np.zeros(flat.size)
        e[j] = h
        fd = (host(unravel(flat + e))[0] - host(unravel(flat - e))[0]) / (2 * h)
        assert fd == pytest.approx(grad[j], rel=1e-5, abs=1e-6)


def test_unfactorisable_kuu_reports_nan():
    """Duplicated inducing inputs with no jitter: NaN, which the trainer turns into a rejected step."""
    X, y, _ = problem(n=40)
    Z = np.repeat(X[:1], 3, axis=0)
    host = HostObjective("vfe", X, y, chunk=16, jitter=1e-300)
    f, _ = host({"kernel": SquaredExponential(1.0, 1.0), "raw_noise": jnp.asarray(to_raw(0.1)), "Z": jnp.asarray(Z)})
    assert np.isnan(f)


@pytest.mark.parametrize("weights", [None, RowWeights(0.1, diagonal=1.0)], ids=["unit", "weighted"])
@pytest.mark.slow
def test_the_sums_do_not_keep_one_m_by_m_term_per_chunk(weights, monkeypatch):
    """Beyond KEEP_BYTES (large n) the chunks run a few at a time and only running sums are kept."""
    import tracemalloc

    monkeypatch.setattr(stats_blas, "KEEP_BYTES", 0)
    X, y, Z = problem(n=8000, m=64)
    kernel = SquaredExponential([1.0, 1.0, 1.0], 1.0)
    Kuu = np.asarray(kernel.K(jnp.asarray(Z), jnp.asarray(Z))) + 1e-6 * np.eye(64)
    Linv = np.linalg.inv(np.linalg.cholesky(Kuu))
    data = stats_blas.BlasStats(X, y, chunk=20)  # 400 chunks: their 64 x 64 terms would hold 13 MB
    data.forward(kernel, Z, Linv, weights)  # compile outside the measurement
    tracemalloc.start()
    data.forward(kernel, Z, Linv, weights)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 6e6


def dense_reference(approximation, params, X, y, jitter=1e-8):
    """Minus the objective from the unchunked sums of ``tests/_reference.py`` (K_uf formed whole, no
    hand-written derivative), differentiated by JAX: the one specification both engines are checked against."""
    from _reference import dense_stats, weighted_dense_stats
    from sparsegp.approximations.common import kuu_cholesky

    Xj, yj = jnp.asarray(X), jnp.asarray(y)

    def f(p):
        kernel, noise = p["kernel"], to_positive(p["raw_noise"])
        Luu = kuu_cholesky(kernel, p["Z"], jitter)
        if approximation == "fitc":
            st = weighted_dense_stats(kernel, p["Z"], Luu, noise, Xj, yj)
        else:
            st = dense_stats(kernel, p["Z"], Luu, Xj, yj)
        return -APPROXIMATIONS[approximation].from_stats(st, noise)[0] - kernel.log_prior()

    return jax.jit(jax.value_and_grad(f))(params)


@pytest.mark.parametrize("engine", ["jax program", "host BLAS"])
@pytest.mark.parametrize("approximation", ["vfe", pytest.param("dtc", marks=pytest.mark.slow), "fitc"])
@pytest.mark.slow
def test_both_engines_equal_one_dense_reference(engine, approximation):
    """The JAX program (chunked scan; a hand-written VJP with respect to L_uu, autodiff for FITC) and the host
    BLAS sums (a written-out backward pass with respect to L_uu^-1) compute the same sums two ways, for speed
    on different devices (BENCHMARKS.md, "The cost of one evaluation"); both equal one dense reference."""
    X, y, Z = problem()
    params = {"kernel": KERNELS["se-ard-bias"](), "raw_noise": jnp.asarray(to_raw(0.05)), "Z": jnp.asarray(Z)}
    f0, g0 = dense_reference(approximation, params, X, y)
    if engine == "jax program":
        f1, g1 = jax_reference(approximation, params, X, y, 17)
    else:
        f1, g1 = HostObjective(approximation, X, y, chunk=17, jitter=1e-8)(params)
    a, b = ravel_pytree(g0)[0], ravel_pytree(g1)[0]
    assert abs(float(f1) - float(f0)) <= 1e-9 * abs(float(f0))
    np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-7, atol=1e-9 * float(jnp.max(jnp.abs(a))))
