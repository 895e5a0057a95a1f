"""The full variational GP in its site form (sparsegp.classification.site_form, sparsegp.fitting.every_input)
against dense computations: q's moments and KL, the whitened form it hands on, the profiled gradient against
central differences, q's stationarity at the optimum, and the exact GP where the likelihood is Gaussian."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sparsegp.approximations.exact_gp import exact_log_marginal
from sparsegp.classification import site_form, svgp
from sparsegp.fitting import every_input
from sparsegp.fitting.every_input import ProfiledSites, _gram
from sparsegp.kernels import SquaredExponential
from sparsegp.likelihoods import Bernoulli, Gaussian, Poisson


def rows(n=40, seed=0, classes=2):
    r = np.random.default_rng(seed)
    X = r.uniform(-2, 2, size=(n, 2))
    f = np.sin(2 * X[:, 0]) + X[:, 1]
    if classes == 0:  # a real target
        return X, f + 0.2 * r.standard_normal(n)
    if classes == -1:  # counts
        return X, r.poisson(np.exp(0.5 * f)).astype(float)
    edges = np.quantile(f, np.linspace(0, 1, classes + 1)[1:-1])
    return X, np.searchsorted(edges, f + 0.3 * r.standard_normal(n)).astype(np.int32)


def theta(likelihood, latents=1):
    kernel = SquaredExponential(lengthscale=np.array([0.7, 1.2]), variance=1.8)
    return {"kernel": kernel, "likelihood": likelihood, "mean": jnp.asarray(np.linspace(0.1, 0.3, latents))}


def dense_q(K, lam, nu):
    S = np.linalg.inv(np.linalg.inv(K) + np.diag(lam))
    return S @ nu, S


def dense_kl(mu, S, K):
    n = K.shape[0]
    Kinv = np.linalg.inv(K)
    logdet = np.linalg.slogdet(K)[1] - np.linalg.slogdet(S)[1]
    return 0.5 * (np.trace(Kinv @ S) + mu @ Kinv @ mu - n + logdet)


def test_site_moments_and_kl_against_dense_inverses():
    X, _ = rows(30)
    K = np.asarray(_gram(theta(None)["kernel"], jnp.asarray(X), svgp.JITTER))
    r = np.random.default_rng(1)
    lam = np.column_stack([r.uniform(0.0, 3.0, 30), np.zeros(30)])  # a latent function without sites: the prior
    nu = r.standard_normal((30, 2))
    q = site_form.posterior(K, lam, nu)
    kl = 0.0
    for l in range(2):
        mu, S = dense_q(K, lam[:, l], nu[:, l])
        np.testing.assert_allclose(q.mu[:, l], mu, rtol=1e-7, atol=1e-9)
        np.testing.assert_allclose(q.var[:, l], np.diag(S), rtol=1e-7, atol=1e-9)
        np.testing.assert_allclose(q.alpha[:, l], np.linalg.solve(K, mu), rtol=1e-6, atol=1e-6)
        kl += dense_kl(mu, S, K)
    assert q.kl == pytest.approx(kl, rel=1e-7, abs=1e-9)


def test_the_variance_keeps_its_digits_from_sites_that_barely_move_the_prior_to_sites_that_pin_it():
    """S_ii from 1 - (B^-1)_ii where a site is strong and from K_ii minus its explained part where it is weak
    (site_form.DIRECT_BELOW): both branches against the dense inverse of K^-1 + Lambda, sites spanning 1e-12 to
    1e4 (the difference alone loses four digits on the weakest of them)."""
    X, _ = rows(40)
    K = np.asarray(_gram(theta(None)["kernel"], jnp.asarray(X), svgp.JITTER))
    lam = np.geomspace(1e-12, 1e4, 40)[np.random.default_rng(4).permutation(40)][:, None]
    nu = np.random.default_rng(5).standard_normal((40, 1))
    q = site_form.posterior(K, lam, nu)
    mu, S = dense_q(K, lam[:, 0], nu[:, 0])
    gap = 1.0 - np.diag(np.linalg.inv(np.eye(40) + np.sqrt(lam) * K * np.sqrt(lam).T))
    assert (gap < site_form.DIRECT_BELOW).any() and (gap >= site_form.DIRECT_BELOW).any()  # both branches taken
    np.testing.assert_allclose(q.var[:, 0], np.diag(S), rtol=1e-8)
    np.testing.assert_allclose(q.mu[:, 0], mu, rtol=1e-7, atol=1e-9)
    assert q.kl == pytest.approx(dense_kl(mu, S, K), rel=1e-7)


def test_the_kernel_cotangent_is_the_kl_gradient_at_q_held():
    """dL/dK = -dKL/dK at (mu, S) held, against central differences of the dense KL in one entry pair of K."""
    X, _ = rows(12)
    K = np.asarray(_gram(theta(None)["kernel"], jnp.asarray(X), svgp.JITTER))
    r = np.random.default_rng(2)
    lam, nu = r.uniform(0.1, 2.0, (12, 1)), r.standard_normal((12, 1))
    G = site_form.kernel_cotangent(site_form.posterior(K, lam, nu))
    mu, S = dense_q(K, lam[:, 0], nu[:, 0])
    h = 1e-6
    for i, j in [(0, 0), (3, 7), (5, 5)]:
        E = np.zeros_like(K)
        E[i, j] = E[j, i] = h
        fd = -(dense_kl(mu, S, K + E) - dense_kl(mu, S, K - E)) / (2 * h)
        assert (G[i, j] * (2 if i != j else 1)) == pytest.approx(fd, rel=1e-5, abs=1e-8)


@pytest.mark.parametrize("likelihood", [Bernoulli("probit"), Bernoulli("logit"), Poisson()])
def test_the_whitened_form_has_the_same_bound(likelihood):
    X, y = rows(40, classes=-1 if isinstance(likelihood, Poisson) else 2)
    prof = ProfiledSites(X, y, np.ones(40), 1)
    t = theta(likelihood)
    _, q, value = prof.optimum(t)[:3]
    q_mu, q_sqrt = prof.whitened(t)
    params = dict(t, Z=jnp.asarray(X), q_mu=q_mu, q_sqrt=q_sqrt)
    whitened = float(svgp.bound(params, jnp.asarray(X), jnp.asarray(y), jnp.ones(40), likelihood, 16))
    assert whitened == pytest.approx(value, rel=1e-7)
    # the optimum: the whitened bound's gradient in q vanishes there
    objective = svgp.NegativeBound(16)
    grad = jax.grad(objective)(params, jnp.asarray(X), jnp.asarray(y), jnp.ones(40))
    assert float(jnp.max(jnp.abs(grad["q_mu"]))) < 1e-4
    assert float(jnp.max(jnp.abs(jnp.tril(grad["q_sqrt"][0])))) < 1e-4


def profiled(X, y, w, t, latents=1, host=False):
    """ProfiledSites on the host (the kernel and likelihood given: K and its gradient in NumPy) or in JAX."""
    prof = ProfiledSites(X, y, w, latents, svgp.JITTER, *((t["kernel"], t["likelihood"]) if host else ()))
    assert prof.host == host
    return prof


def profiled_value(X, y, w, t, latents=1, host=False):
    return profiled(X, y, w, t, latents, host)(t)[0]


@pytest.mark.parametrize(
    "likelihood, classes, host",
    [
        (Bernoulli("probit"), 2, False),
        (Bernoulli("probit"), 2, True),
        (Bernoulli("logit"), 2, True),
        (Poisson(), -1, False),
        (Gaussian(0.2), 0, False),
    ],
)
def test_the_profiled_gradient_against_central_differences(likelihood, classes, host, monkeypatch):
    """The gradient at q's optimum, q held (the envelope theorem), against differences of the value with q
    re-optimised from the prior at each point: every kernel parameter, b and the likelihood's parameters, on the
    host (a likelihood without parameters) and in JAX. The gradient's error is first order in q's distance from
    its optimum, so the steps go on to rounding here."""
    monkeypatch.setattr(every_input, "INNER_TOL", 1e-15)
    X, y = rows(40, classes=classes)
    latents = likelihood.latent_count(max(classes, 2) if classes > 0 else 1)
    w = np.random.default_rng(3).integers(1, 3, 40).astype(float)  # weighted rows (repeats collapsed)
    t = theta(likelihood, latents)
    value, grad = profiled(X, y, w, t, latents, host)(t)
    h, checked = 1e-5, 0
    for name in ("kernel", "likelihood", "mean"):
        leaves, tree = jax.tree_util.tree_flatten(t[name])
        grads = jax.tree_util.tree_leaves(grad[name])
        for i, leaf in enumerate(leaves):
            flat = np.ravel(np.asarray(leaf, float))
            for j in range(flat.size):
                moved = []
                for sign in (1.0, -1.0):
                    f = flat.copy()
                    f[j] += sign * h
                    new = [jnp.asarray(f.reshape(np.shape(leaf))) if k == i else v for k, v in enumerate(leaves)]
                    moved.append(
                        profiled_value(
                            X, y, w, dict(t, **{name: jax.tree_util.tree_unflatten(tree, new)}), latents, host
                        )
                    )
                fd = (moved[0] - moved[1]) / (2 * h)
                assert float(np.ravel(grads[i])[j]) == pytest.approx(fd, rel=2e-5, abs=2e-6), (name, i, j)
                checked += 1
    assert checked >= 3 + latents + (1 if isinstance(likelihood, Gaussian) else 0)  # the kernel's, b, the noise


@pytest.mark.parametrize("link", ["probit", "logit"])
def test_the_host_evaluation_equals_the_jax_programs(link):
    """K and the gradient on the host (NumPy: the kernel's host form, and a likelihood without parameters) against
    the JAX programs, at the start and after the optimiser's first points: values to 1e-10, gradients to 1e-7,
    with a hyper-prior on the kernel (its gradient is the JAX part of the host evaluation)."""
    from sparsegp.priors import LogNormal

    X, y = rows(40)
    w = np.random.default_rng(6).integers(1, 3, 40).astype(float)
    kernel = SquaredExponential([0.7, 1.2], 1.8, priors={"lengthscale": LogNormal(0.0, 1.0)})
    t = dict(theta(Bernoulli(link)), kernel=kernel)
    host, jax_path = profiled(X, y, w, t, host=True), profiled(X, y, w, t)
    K_host, parts = host._gram(t)
    assert parts is not None
    np.testing.assert_allclose(K_host, np.asarray(_gram(t["kernel"], jnp.asarray(X), svgp.JITTER)), rtol=1e-12,
                               atol=1e-14)  # fmt: skip
    for scale in (1.0, 0.8, 1.3):  # successive points, each warm from the last
        moved = dict(t, kernel=kernel.replace(lengthscale=np.array([0.7, 1.2]) * scale, variance=1.8 / scale))
        (v_h, g_h), (v_j, g_j) = host(moved), jax_path(moved)
        assert v_h == pytest.approx(v_j, rel=1e-10)
        for a, b in zip(jax.tree_util.tree_leaves(g_h), jax.tree_util.tree_leaves(g_j)):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-7, atol=1e-9)


def test_a_gaussian_likelihood_gives_the_exact_gp():
    """With Gaussian noise the full variational GP's bound at its optimum is the exact log marginal likelihood
    (Titsias 2009: at Z = X the bound is tight), and one natural step of size 1 reaches it."""
    X, y = rows(35, classes=0)
    noise = 0.15
    t = theta(Gaussian(variance=noise))
    prof = ProfiledSites(X, y, np.ones(35), 1)
    value = prof.optimum(t)[2]
    assert prof.steps <= 2  # the step of size 1, then the one that no longer gains
    exact = float(exact_log_marginal(t["kernel"], noise, jnp.asarray(X), jnp.asarray(y - float(t["mean"][0])),
                                     jitter=0.0))  # fmt: skip
    K = np.asarray(_gram(t["kernel"], jnp.asarray(X), svgp.JITTER))  # the bound's K holds the whitened jitter
    Ky = K + noise * np.eye(35)
    r = y - float(t["mean"][0])
    with_jitter = -0.5 * (r @ np.linalg.solve(Ky, r) + np.linalg.slogdet(Ky)[1] + 35 * np.log(2 * np.pi))
    assert value == pytest.approx(with_jitter, rel=1e-9)
    assert value == pytest.approx(exact, rel=1e-6)
