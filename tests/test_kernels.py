import logging
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st
from jax.flatten_util import ravel_pytree

from sparsegp.errors import InputError
from sparsegp.kernels import (
    Constant,
    Linear,
    Matern12,
    Matern32,
    Matern52,
    Periodic,
    Product,
    RationalQuadratic,
    SquaredExponential,
    Sum,
    kernel_from_dict,
)
from sparsegp.priors import Gamma, GammaPrecision, LogNormal, prior_from_dict
from tiers import slow_beyond


def make_kernels(D, r):
    ell = r.uniform(0.3, 3.0, size=D)
    return {
        "se-ard": SquaredExponential(lengthscale=ell, variance=1.7),
        "se-iso-bias": SquaredExponential(lengthscale=0.8, variance=0.5, bias=0.1),
        "matern12": Matern12(lengthscale=ell, variance=1.3),
        "matern32": Matern32(lengthscale=ell, variance=0.9),
        "matern52": Matern52(lengthscale=1.1, variance=2.0),
        "linear": Linear(variance=r.uniform(0.5, 2.0, size=D)),
        "sum": SquaredExponential(lengthscale=ell) + Linear(variance=0.3),
        "product": Matern32(lengthscale=1.0) * (Linear(0.5) + Constant(0.2)),
        "rq": RationalQuadratic(lengthscale=ell, variance=1.2, alpha=0.7),
        "periodic": Periodic(period=r.uniform(1.0, 3.0, size=D), lengthscale=0.9, variance=1.1),
    }


KERNEL_NAMES = list(make_kernels(2, np.random.default_rng(0)))


@jax.jit
def _gram_and_diag(k, X):
    return k.K(X), k.diag(X)


@settings(max_examples=25, deadline=None)
@given(
    name=st.sampled_from(KERNEL_NAMES),
    # a few shapes, so that the examples share compiled programs (each new shape compiles anew)
    n=st.sampled_from([1, 2, 9, 25]),
    D=st.sampled_from([1, 3]),
    seed=st.integers(0, 2**31 - 1),
    spread=st.floats(0.01, 10.0),
)
@pytest.mark.slow
def test_gram_symmetric_psd_and_diag(name, n, D, seed, spread):
    r = np.random.default_rng(seed)
    k = make_kernels(D, r)[name]
    X = jnp.asarray(spread * r.normal(size=(n, D)))
    K, diag = (np.asarray(a) for a in _gram_and_diag(k, X))
    assert K.shape == (n, n)
    np.testing.assert_allclose(K, K.T, rtol=0, atol=1e-12 * max(1.0, np.abs(K).max()))
    eig = np.linalg.eigvalsh(0.5 * (K + K.T))
    assert eig.min() >= -1e-9 * max(1.0, eig.max())
    np.testing.assert_allclose(diag, np.diag(K), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", KERNEL_NAMES)
@pytest.mark.slow
def test_matrix_form_equals_pairwise_evaluation(name, rng):
    k = make_kernels(3, rng)[name]
    X, Z = jnp.asarray(rng.normal(size=(7, 3))), jnp.asarray(rng.normal(size=(5, 3)))
    pairwise = jax.vmap(lambda x: jax.vmap(lambda z: k.evaluate(x, z))(Z))(X)
    np.testing.assert_allclose(np.asarray(k.K(X, Z)), np.asarray(pairwise), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("name", ["se-ard", "sum", "product"])
def test_eager_calls_run_one_program_and_traces_stay_inline(name, rng, caplog):
    """Outside a trace K and diag run as one compiled program; inside one, the plain method is inlined."""
    k = make_kernels(3, rng)[name]
    X, Z = rng.normal(size=(6, 3)), rng.normal(size=(4, 3))
    traced_K = jax.jit(lambda k, X, Z: k.K(X, Z))(k, X, Z)
    np.testing.assert_allclose(np.asarray(k.K(X, Z)), np.asarray(traced_K), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(np.asarray(k.diag(X)), np.diag(np.asarray(k.K(X))), rtol=1e-13)
    jaxpr = str(jax.make_jaxpr(lambda X: k.K(X, jnp.asarray(Z)))(X))
    assert not re.search(r"name=(K|diag)\b", jaxpr), "a kernel call inside a trace added a program"
    X_new = rng.normal(size=(9, 3))  # a shape not compiled yet
    with caplog.at_level(logging.WARNING, logger="jax"), jax.log_compiles(True):
        k.K(X_new)
    compiled = [r.getMessage() for r in caplog.records if "Finished XLA compilation" in r.getMessage()]
    assert len(compiled) == 1, compiled


# the fast tier checks the SE's gradient and the sum and product rules; each other kernel's in the slow tier
@pytest.mark.parametrize("name", slow_beyond(KERNEL_NAMES, {"se-ard", "sum", "product"}))
@pytest.mark.slow
def test_hyperparameter_gradients_match_central_differences(name, rng):
    k = make_kernels(3, rng)[name]
    X, Z = jnp.asarray(rng.normal(size=(9, 3))), jnp.asarray(rng.normal(size=(6, 3)))
    W = jnp.asarray(rng.normal(size=(9, 6)))
    Wsq = jnp.asarray(rng.normal(size=(9, 9)))
    theta0, unravel = ravel_pytree(k)

    @jax.jit
    def f(theta):
        kk = unravel(theta)
        # Cross-covariance and square Gram matrix (its zero-distance diagonal matters for Matérn).
        return jnp.sum(W * kk.K(X, Z)) + jnp.sum(Wsq * kk.K(X)) + jnp.sum(kk.diag(X))

    g = np.asarray(jax.grad(f)(theta0))
    h = 1e-5
    fd = np.array([(f(theta0.at[i].add(h)) - f(theta0.at[i].add(-h))) / (2 * h) for i in range(theta0.size)])
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("cls", [SquaredExponential, Matern12, Matern32, Matern52])
def test_stable_distances_for_inputs_offset_by_1e6(cls, rng):
    k = cls(lengthscale=np.array([0.5, 1.0]), variance=1.0)
    X, Z = rng.normal(size=(20, 2)), rng.normal(size=(15, 2))
    K0 = np.asarray(k.K(jnp.asarray(X), jnp.asarray(Z)))
    K1 = np.asarray(k.K(jnp.asarray(X + 1e6), jnp.asarray(Z + 1e6)))
    # The naive |a|^2 + |b|^2 - 2ab expansion loses every digit here (errors of order 1e-4 * 1e12).
    np.testing.assert_allclose(K1, K0, rtol=0, atol=1e-8)
    Kself = np.asarray(k.K(jnp.asarray(X + 1e6)))
    np.testing.assert_allclose(np.diag(Kself), 1.0, atol=1e-12)
    assert Kself.min() >= 0


@pytest.mark.parametrize("cls", [SquaredExponential, pytest.param(Matern32, marks=pytest.mark.slow)])
@pytest.mark.slow
def test_a_length_scale_far_below_its_columns_spread_keeps_k_uu_positive_definite(cls, rng):
    """A column that identifies a group (patients) with a length-scale 1e-7 of its spread: rows of one group
    are at distance 0 in it. The expansion |a|^2 + |b|^2 - 2 a.b rounds there at eps |a|^2 ~ 1e-2, which made
    K_uu indefinite; the distances are summed over coordinates instead."""
    from sparsegp.kernels.gram import HostGram, JaxGram, gram

    group = rng.integers(0, 12, size=200) * 0.17
    X = np.column_stack([group, rng.normal(size=200), rng.normal(size=200)])
    ell = np.array([1e-7 * np.std(group), 0.8, 1.5])
    k = cls(lengthscale=ell, variance=1.3)
    a = X / ell
    r2 = np.sum((a[:, None, :] - a[None, :, :]) ** 2, axis=-1)
    ref = k.profile(jnp.asarray(r2)) * 1.3
    K = np.asarray(k.K(jnp.asarray(X)))
    np.testing.assert_allclose(K, ref, rtol=0, atol=1e-13)
    np.testing.assert_allclose(np.asarray(k.K(jnp.asarray(X[:50]), jnp.asarray(X))), ref[:50], rtol=0, atol=1e-13)
    np.linalg.cholesky(K + 1e-8 * 1.3 * np.eye(200))  # raises where K is indefinite beyond the jitter

    def direct(kk, Z):  # the reference: differences per coordinate, differentiated by JAX
        a, b = jnp.asarray(X) / kk.lengthscale, Z / kk.lengthscale
        return kk.variance * kk.profile(jnp.sum((a[:, None, :] - b[None, :, :]) ** 2, axis=-1))

    W = jnp.asarray(rng.normal(size=(200, 40)))
    Z = jnp.asarray(X[::5])
    got = jax.grad(lambda kk, z: jnp.sum(W * kk.K(jnp.asarray(X), z)), argnums=(0, 1))(k, Z)
    want = jax.grad(lambda kk, z: jnp.sum(W * direct(kk, z)), argnums=(0, 1))(k, Z)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-9, atol=1e-9)
    if cls is SquaredExponential:  # greedy selection's engine: the host expansion is not used on such inputs
        G = gram(k, X)
        assert isinstance(G, JaxGram)
        np.testing.assert_allclose(G.block(np.arange(30), np.arange(200)), ref[:30], rtol=0, atol=1e-13)
        assert isinstance(gram(SquaredExponential(lengthscale=[1.0, 0.8, 1.5]), X), HostGram)


def test_se_matches_seeger_form_with_bias(rng):
    ell = np.array([0.7, 2.0])
    k = SquaredExponential(lengthscale=ell, variance=1.5, bias=0.25)
    x, z = rng.normal(size=2), rng.normal(size=2)
    W = np.diag(ell**-2)
    expected = 1.5 * np.exp(-0.5 * (x - z) @ W @ (x - z)) + 0.25
    assert np.isclose(float(k.evaluate(jnp.asarray(x), jnp.asarray(z))), expected, rtol=1e-14)


@pytest.mark.slow
def test_bias_is_non_negative_and_a_fit_can_drive_it_to_zero():
    """v_b has the identity transform boxed to [0, 1e12]: 0 is a value, reached exactly by L-BFGS-B."""
    from sparsegp import ExactGPRegressor
    from sparsegp.transforms import MIN_VALUE, to_raw

    RAW_MIN = float(to_raw(MIN_VALUE))

    k = SquaredExponential(lengthscale=1.0, variance=1.0, bias=0.0)
    assert float(k.bias) == 0.0 and float(k.replace(bias=0.3).bias) == 0.3
    lower, upper = k.raw_bounds()
    assert [float(v) for v in jax.tree_util.tree_leaves(lower)] == [RAW_MIN, RAW_MIN, 0.0]
    assert float(jax.tree_util.tree_leaves(upper)[2]) == 1e12
    assert kernel_from_dict(k.to_dict()) == k
    with pytest.raises(InputError, match="bias must be >= 0"):
        SquaredExponential(bias=-0.1)
    with pytest.raises(InputError, match="lengthscale must be strictly positive"):
        SquaredExponential(lengthscale=0.0)
    # centred data with no constant offset: the evidence falls as v_b grows, so the fit ends at 0
    X = np.linspace(-3, 3, 60)[:, None]
    y = np.sin(2 * X[:, 0]) + 0.1 * np.random.default_rng(0).normal(size=60)
    model = ExactGPRegressor(SquaredExponential(1.0, 1.0, bias=0.5), normalize_y=False).fit(X, y - y.mean())
    assert float(model.kernel_.bias) == 0.0
    nobias = ExactGPRegressor(SquaredExponential(1.0, 1.0), normalize_y=False).fit(X, y - y.mean())
    assert model.log_marginal_likelihood_ == pytest.approx(nobias.log_marginal_likelihood_, abs=1e-6)


def test_composition_flattens_and_evaluates(rng):
    a, b, c = SquaredExponential(1.0), Linear(0.5), Constant(0.3)
    s = a + b + c
    assert isinstance(s, Sum) and len(s.kernels) == 3
    p = a * b * c
    assert isinstance(p, Product) and len(p.kernels) == 3
    X = jnp.asarray(rng.normal(size=(4, 2)))
    np.testing.assert_allclose(s.K(X), a.K(X) + b.K(X) + c.K(X), rtol=1e-14)
    np.testing.assert_allclose(p.K(X), a.K(X) * b.K(X) * c.K(X), rtol=1e-14)
    assert set(s.parameters()) == {"k0.lengthscale", "k0.variance", "k1.variance", "k2.variance"}
    s2 = s.replace(**{"k1.variance": 2.0})
    assert float(s2.kernels[1].variance) == pytest.approx(2.0)
    assert float(s.kernels[1].variance) == pytest.approx(0.5)  # immutable


def test_immutability_and_replace():
    k = SquaredExponential(lengthscale=[1.0, 2.0])
    with pytest.raises(AttributeError, match="immutable"):
        k.variance = 3.0
    k2 = k.replace(lengthscale=[3.0, 4.0])
    np.testing.assert_allclose(k2.parameters()["lengthscale"], [3.0, 4.0])
    np.testing.assert_allclose(k.parameters()["lengthscale"], [1.0, 2.0])
    with pytest.raises(InputError, match="shape"):
        k.replace(lengthscale=[1.0, 2.0, 3.0])
    with pytest.raises(InputError, match="no hyper-parameter"):
        k.replace(period=1.0)


@pytest.mark.parametrize("bad", [0.0, -1.0, np.nan, np.inf, [1.0, -2.0]])
def test_non_positive_hyperparameters_rejected(bad):
    with pytest.raises(InputError, match="lengthscale"):
        SquaredExponential(lengthscale=bad)


def test_ard_dimension_mismatch_is_reported():
    with pytest.raises(InputError, match="3 ARD length-scales but the inputs have 2"):
        SquaredExponential(lengthscale=[1.0, 1.0, 1.0]).check_input_dim(2)


@pytest.mark.parametrize("name", KERNEL_NAMES)
def test_dict_round_trip(name, rng):
    k = make_kernels(2, rng)[name]
    k2 = kernel_from_dict(k.to_dict())
    assert type(k2) is type(k) and set(k2.parameters()) == set(k.parameters())
    for name, value in k.parameters().items():
        np.testing.assert_allclose(k2.parameters()[name], value, rtol=1e-14)
    X = jnp.asarray(rng.normal(size=(5, 2)))
    # JSON holds the positive values; the inverse transform may move raw by one ulp.
    np.testing.assert_allclose(np.asarray(k.K(X)), np.asarray(k2.K(X)), rtol=1e-14)


def test_kernel_from_dict_rejects_garbage():
    with pytest.raises(InputError, match="unknown kernel type"):
        kernel_from_dict({"type": "Spline", "params": {}})
    with pytest.raises(InputError, match=r"must give each of \['alpha', 'lengthscale', 'variance'\]"):
        kernel_from_dict({"type": "RationalQuadratic", "params": {"lengthscale": 1.0, "variance": 1.0}})
    with pytest.raises(InputError):
        kernel_from_dict({"type": "SquaredExponential", "params": {"lengthscale": -1.0, "variance": 1.0}})
    with pytest.raises(InputError):
        kernel_from_dict({"type": "SquaredExponential", "params": {"wrong": 1.0}})
    with pytest.raises(InputError):
        kernel_from_dict({"type": "Sum", "kernels": []})


def test_priors_match_scipy_and_enter_log_prior():
    ln, ga = LogNormal(0.3, 0.7), Gamma(2.0, 3.0)
    for v in [0.1, 1.0, 4.0]:
        assert float(ln.log_prob(v)) == pytest.approx(
            scipy.stats.lognorm(s=0.7, scale=np.exp(0.3)).logpdf(v), rel=1e-12
        )
        assert float(ga.log_prob(v)) == pytest.approx(scipy.stats.gamma(a=2.0, scale=1 / 3.0).logpdf(v), rel=1e-12)
    k = SquaredExponential(lengthscale=[0.5, 2.0], variance=1.5, priors={"lengthscale": ln, "variance": ga})
    from sparsegp.transforms import log_jacobian, to_raw

    jac = float(log_jacobian(jnp.asarray(to_raw([0.5, 2.0])))) + float(log_jacobian(jnp.asarray(to_raw(1.5))))
    # d softplus / d raw = sigmoid(raw) = 1 - e^-value
    assert jac == pytest.approx(float(np.sum(np.log(-np.expm1(-np.array([0.5, 2.0, 1.5]))))), rel=1e-12)
    expected = ln.log_prob(jnp.asarray([0.5, 2.0])) + ga.log_prob(1.5) + jac
    assert float(k.log_prior()) == pytest.approx(float(expected), rel=1e-12)
    with pytest.raises(InputError, match="unknown hyper-parameter"):
        SquaredExponential(priors={"period": ln})
    with pytest.raises(InputError, match="sigma"):
        LogNormal(0.0, -1.0)


def test_gamma_precision_is_the_gamma_density_of_w_carried_to_the_lengthscale():
    import scipy.integrate

    prior = GammaPrecision(1.5, 4.0)
    for ell in [0.2, 1.0, 3.0]:  # p(l) = Gamma(l^-2) |dw/dl|, dw/dl = -2 l^-3
        expected = scipy.stats.gamma(a=1.5, scale=1 / 4.0).logpdf(ell**-2) + np.log(2 * ell**-3)
        assert float(prior.log_prob(ell)) == pytest.approx(expected, rel=1e-12)
    total, _ = scipy.integrate.quad(lambda v: np.exp(float(prior.log_prob(v))), 0, np.inf)
    assert total == pytest.approx(1.0, rel=1e-8)
    # an ARD vector sums the elements' log densities
    vec = float(prior.log_prob(jnp.asarray([0.5, 2.0])))
    assert vec == pytest.approx(float(prior.log_prob(0.5)) + float(prior.log_prob(2.0)), rel=1e-12)
    assert prior_from_dict(prior.to_dict()) == prior
    with pytest.raises(InputError, match="shape and rate"):
        GammaPrecision(0.0, 1.0)


def test_fixed_parameters_are_masked():
    k = SquaredExponential(lengthscale=1.0, variance=2.0, bias=0.1, fixed=("bias",))
    mask = k.trainable_mask()
    flat, _ = ravel_pytree(mask)
    assert list(np.asarray(flat)) == [True, True, False]  # lengthscale, variance, bias


@pytest.mark.parametrize("name", slow_beyond(KERNEL_NAMES, {"se-ard", "sum"}))
def test_prior_draws_have_the_kernel_as_covariance(name, rng):
    """Random features with features of their own per draw: the draws' covariance is k, within five Monte
    Carlo standard errors, however few the features; a kernel with no such form says so."""
    k = make_kernels(2, rng)[name]
    X = rng.normal(size=(6, 2))
    if name in ("product", "periodic"):
        with pytest.raises(InputError, match="no random-feature form"):
            k.prior_draws(10, 8, 2, rng)
        return
    n = 20_000
    F = k.prior_draws(n, 16, 2, np.random.default_rng(1))(X)
    K = np.asarray(k.K(jnp.asarray(X)))
    err = np.sqrt((K**2 + np.outer(np.diag(K), np.diag(K))) / n)
    assert np.all(np.abs(F @ F.T / n - K) <= 5 * err)
