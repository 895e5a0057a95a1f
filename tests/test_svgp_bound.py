"""The sparse variational classifier's mathematics against dense computations (classification/svgp.py)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.integrate
import scipy.linalg as sl
from jax.flatten_util import ravel_pytree
from scipy.special import expit, log_ndtr

from sparsegp.classification import svgp
from sparsegp.kernels import SquaredExponential
from sparsegp.likelihoods import Bernoulli, Gaussian, RobustMax, Softmax


def problem(n=60, M=12, L=1, seed=0, D=2):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, D))
    kernel = SquaredExponential(lengthscale=np.full(D, 0.9), variance=1.7)
    q_sqrt = np.tril(0.2 * rng.standard_normal((L, M, M))) + 0.6 * np.eye(M)
    params = {
        "kernel": kernel,
        "Z": jnp.asarray(X[:M] + 0.05),
        "q_mu": jnp.asarray(0.5 * rng.standard_normal((M, L))),
        "q_sqrt": jnp.asarray(q_sqrt),
        "mean": jnp.asarray(0.3 * rng.standard_normal(L)),
    }
    return X, params, rng


def dense_marginals(params, X):
    """q(f) at X from the unwhitened q(u) = N(L m, L S L^T), with K_uu's jitter as in the bound."""
    k, Z = params["kernel"], np.asarray(params["Z"])
    Kuu = np.asarray(k.K(Z))
    Kuu = Kuu + svgp.JITTER * np.mean(np.diag(Kuu)) * np.eye(Z.shape[0])
    Luu = np.linalg.cholesky(Kuu)
    Kuf = np.asarray(k.K(Z, X))
    P = sl.cho_solve((Luu, True), Kuf)  # K_uu^-1 K_uf
    mus, covs = [], []
    for ell in range(params["q_mu"].shape[1]):
        Ls = np.tril(np.asarray(params["q_sqrt"][ell]))
        mu_u, Sig_u = Luu @ np.asarray(params["q_mu"][:, ell]), Luu @ Ls @ Ls.T @ Luu.T
        mus.append(P.T @ mu_u + float(params["mean"][ell]))
        covs.append(np.asarray(k.K(X)) - Kuf.T @ P + P.T @ Sig_u @ P)
    return np.array(mus), np.array(covs), Luu


def dense_kl(params, Luu):
    """KL(q(u) || p(u)) in the unwhitened form."""
    total = 0.0
    Kuu = Luu @ Luu.T
    for ell in range(params["q_mu"].shape[1]):
        Ls = np.tril(np.asarray(params["q_sqrt"][ell]))
        mu_u, Sig_u = Luu @ np.asarray(params["q_mu"][:, ell]), Luu @ Ls @ Ls.T @ Luu.T
        M = mu_u.size
        total += 0.5 * (
            np.trace(np.linalg.solve(Kuu, Sig_u))
            + mu_u @ np.linalg.solve(Kuu, mu_u)
            - M
            + np.linalg.slogdet(Kuu)[1]
            - np.linalg.slogdet(Sig_u)[1]
        )
    return total


@pytest.mark.parametrize("link", ["probit", "logit"])
@pytest.mark.slow
def test_bound_against_dense_monte_carlo(link):
    X, params, rng = problem()
    y = (np.sin(2 * X[:, 0]) > 0).astype(np.int32)
    lik = Bernoulli(link)
    value = float(svgp.bound(params, jnp.asarray(X), jnp.asarray(y), jnp.ones(X.shape[0]), lik, 16))
    mu, cov, Luu = dense_marginals(params, X)
    # each f_i from its marginal of the dense q(f), 200,000 draws (the bound needs the marginals only)
    draws = mu[0][:, None] + np.sqrt(np.diag(cov[0]))[:, None] * rng.standard_normal((X.shape[0], 200_000))
    sign = (2 * y - 1)[:, None]
    logp = log_ndtr(sign * draws) if link == "probit" else np.log(expit(sign * draws))
    total = logp.sum(axis=0)
    mc = total.mean() - dense_kl(params, Luu)
    se = total.std() / np.sqrt(total.size)
    assert abs(value - mc) < 5 * se, (value, mc, se)
    assert se < 0.03  # the check can fail: 5 standard errors are at most 0.15 nats here


@pytest.mark.slow
def test_quadrature_against_adaptive_integration():
    X, params, _ = problem(n=20)
    mu, var, _ = svgp.marginals(svgp.posterior_of(params), jnp.asarray(X[:8]))
    y = np.array([0, 1, 1, 0, 1, 0, 0, 1])
    for link, logf in (("probit", log_ndtr), ("logit", lambda z: np.log(expit(z)))):
        gh = np.asarray(Bernoulli(link).expected_log_density(mu, var, jnp.asarray(y)))
        for i in range(8):
            m, s = float(mu[i, 0]), float(np.sqrt(var[i, 0]))
            sign = 2 * y[i] - 1
            ref = scipy.integrate.quad(
                lambda f, m=m, s=s, sign=sign, logf=logf: (
                    logf(sign * f) * np.exp(-0.5 * ((f - m) / s) ** 2) / (s * np.sqrt(2 * np.pi))
                ),
                m - 12 * s,
                m + 12 * s,
                epsabs=1e-13,
            )[0]
            assert gh[i] == pytest.approx(ref, abs=1e-7)  # 20 nodes: log Phi is not a polynomial


@pytest.mark.parametrize("lik", [Softmax(), pytest.param(RobustMax(), marks=pytest.mark.slow)])
@pytest.mark.slow
def test_multiclass_expectations_against_monte_carlo(lik):
    rng = np.random.default_rng(3)
    mu, var = rng.normal(size=(5, 4)), rng.uniform(0.1, 2.0, size=(5, 4))
    y = np.array([0, 1, 2, 3, 1])
    value = np.asarray(lik.expected_log_density(jnp.asarray(mu), jnp.asarray(var), jnp.asarray(y)))
    f = mu[:, None, :] + np.sqrt(var)[:, None, :] * rng.standard_normal((5, 400_000, 4))
    if isinstance(lik, Softmax):
        logp = f[np.arange(5), :, y] - np.log(np.sum(np.exp(f), axis=2))
        tol = 0.02  # 64 quasi-random points
    else:
        top = f.argmax(axis=2) == y[:, None]
        logp = np.where(top, np.log(1 - lik.eps), np.log(lik.eps / 3))
        tol = 5 * logp.std(axis=1).max() / np.sqrt(400_000) + 1e-6
    np.testing.assert_allclose(value, logp.mean(axis=1), atol=tol)
    p = np.exp(np.asarray(lik.predict_log_proba(jnp.asarray(mu), jnp.asarray(var))))
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12 if isinstance(lik, RobustMax) else 1e-9)


@pytest.mark.parametrize(
    "lik",
    [
        Bernoulli("probit"),
        pytest.param(Bernoulli("logit"), marks=pytest.mark.slow),
        pytest.param(Softmax(), marks=pytest.mark.slow),
        pytest.param(RobustMax(), marks=pytest.mark.slow),
    ],
)
@pytest.mark.slow
def test_gradient_against_finite_differences(lik):
    L = lik.latent_count(3)
    X, params, rng = problem(n=40, M=6, L=L)
    y = rng.integers(0, 2 if L == 1 else 3, size=40)
    obj = svgp.NegativeBound(chunk=16)
    args = (jnp.asarray(X), jnp.asarray(y, dtype=jnp.int32), jnp.ones(40))
    flat, unravel = ravel_pytree(dict(params, likelihood=lik))
    f = jax.jit(lambda x: obj(unravel(x), *args))
    g = np.asarray(jax.jit(jax.grad(lambda x: obj(unravel(x), *args)))(flat))
    for _ in range(3):
        d = rng.standard_normal(flat.size)
        h = 1e-5
        fd = (float(f(flat + h * d)) - float(f(flat - h * d))) / (2 * h)
        assert g @ d == pytest.approx(fd, rel=1e-6, abs=1e-7)


def test_quadratic_forms_and_their_vjp_against_automatic_differentiation():
    rng = np.random.default_rng(3)
    R = rng.standard_normal((3, 7, 7))
    S = jnp.asarray(R @ np.swapaxes(R, 1, 2))
    A = jnp.asarray(rng.standard_normal((7, 25)))
    g = jnp.asarray(rng.standard_normal((25, 3)))

    def plain(S, A):
        return jnp.einsum("in,lij,jn->nl", A, S, A)

    np.testing.assert_allclose(svgp.quadratic_forms(S, A), plain(S, A), rtol=1e-12)
    got = jax.vjp(svgp.quadratic_forms, S, A)[1](g)
    want = jax.vjp(plain, S, A)[1](g)
    # the plain S-cotangent is not symmetrised; both give the same gradient through S = L L^T
    np.testing.assert_allclose(got[0] + np.swapaxes(got[0], 1, 2), want[0] + np.swapaxes(want[0], 1, 2), rtol=1e-10)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-10)


def collapsed_bound(params, X, y, noise):
    """Titsias (2009) eq. 9 computed densely: log N(y | 0, Q_ff + noise I) - tr(K_ff - Q_ff) / (2 noise)."""
    k, Z = params["kernel"], np.asarray(params["Z"])
    Kuu = np.asarray(k.K(Z))
    Kuu = Kuu + svgp.JITTER * np.mean(np.diag(Kuu)) * np.eye(Z.shape[0])
    Kuf = np.asarray(k.K(Z, X))
    Q = Kuf.T @ np.linalg.solve(Kuu, Kuf)
    C = Q + noise * np.eye(X.shape[0])
    r = y - float(params["mean"][0])
    logN = -0.5 * (r @ np.linalg.solve(C, r) + np.linalg.slogdet(C)[1] + X.shape[0] * np.log(2 * np.pi))
    return logN - np.trace(np.asarray(k.K(X)) - Q) / (2 * noise)


def optimal_gaussian_q(params, X, y, noise):
    """Whitened q(v) that maximises the bound with a Gaussian likelihood: S = (I + A A^T / noise)^-1,
    m = S A (y - b) / noise, A = L_uu^-1 K_uf."""
    A = np.asarray(svgp.inducing_inverse(params["kernel"], params["Z"]) @ params["kernel"].K(params["Z"], X))
    S = np.linalg.inv(np.eye(A.shape[0]) + A @ A.T / noise)
    m = S @ A @ (y - float(params["mean"][0])) / noise
    return dict(params, q_mu=jnp.asarray(m[:, None]), q_sqrt=jnp.asarray(np.linalg.cholesky(S)[None]))


@pytest.mark.parametrize("at_data", [False, True])
@pytest.mark.slow
def test_gaussian_likelihood_recovers_titsias_collapsed_bound(at_data):
    X, params, rng = problem(n=50, M=10)
    if at_data:
        params = dict(params, Z=jnp.asarray(X[:25]))
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.standard_normal(50)
    noise = 0.05
    opt = optimal_gaussian_q(params, X, y, noise)
    value = float(svgp.bound(opt, jnp.asarray(X), jnp.asarray(y), jnp.ones(50), Gaussian(noise), 16))
    assert value == pytest.approx(collapsed_bound(params, X, y, noise), abs=1e-8)
    # any other q gives less
    other = dict(opt, q_mu=opt["q_mu"] + 0.01)
    assert float(svgp.bound(other, jnp.asarray(X), jnp.asarray(y), jnp.ones(50), Gaussian(noise), 16)) < value


@pytest.mark.slow
def test_leave_one_out_is_the_exact_gp_at_z_equals_x():
    """With a Gaussian likelihood, Z = X and the optimal q, each row's cavity is the exact GP's leave-one-out
    predictive (Rasmussen & Williams eqs. 5.10-5.12)."""
    X, params, rng = problem(n=30, M=30)
    params = dict(params, Z=jnp.asarray(X), mean=jnp.zeros(1))
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.standard_normal(30)
    noise = 0.05
    opt = optimal_gaussian_q(params, X, y, noise)
    mu_c, var_c = svgp.loo_cavity(svgp.posterior_of(opt), Gaussian(noise), jnp.asarray(X), jnp.asarray(y))
    K = np.asarray(params["kernel"].K(X))
    K = K + svgp.JITTER * np.mean(np.diag(K)) * np.eye(30)  # the bound's own K_uu at Z = X
    Kinv = np.linalg.inv(K + noise * np.eye(30))
    loo_mean = y - (Kinv @ y) / np.diag(Kinv)
    loo_var = 1.0 / np.diag(Kinv)  # of y: latent + noise
    np.testing.assert_allclose(np.asarray(mu_c)[:, 0], loo_mean, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(np.asarray(var_c)[:, 0] + noise, loo_var, rtol=1e-6)


@pytest.mark.slow
def test_extend_q_keeps_the_marginals_and_the_bound():
    X, params, rng = problem(n=80, M=8)
    y = (X[:, 0] > 0).astype(np.int32)
    post = svgp.posterior_of(params)
    Z_new = jnp.concatenate([params["Z"], jnp.asarray(X[40:48])])
    q_mu, q_sqrt = svgp.extend_q(post, Z_new)
    grown = dict(params, Z=Z_new, q_mu=q_mu, q_sqrt=q_sqrt)
    before = svgp.predict_marginals(post, jnp.asarray(X))
    after = svgp.predict_marginals(svgp.posterior_of(grown), jnp.asarray(X))
    np.testing.assert_allclose(np.asarray(after[0]), np.asarray(before[0]), atol=1e-7)
    np.testing.assert_allclose(np.asarray(after[1]), np.asarray(before[1]), atol=1e-6)  # K_uu jitter: 1e-8 relative
    args = (jnp.asarray(X), jnp.asarray(y), jnp.ones(80), Bernoulli("probit"), 32)
    assert float(svgp.bound(grown, *args)) == pytest.approx(float(svgp.bound(params, *args)), rel=1e-7)


def test_chunking_and_weights_do_not_change_the_sum():
    X, params, rng = problem(n=50, M=7)
    y = rng.integers(0, 2, size=50)
    lik = Bernoulli("logit")
    one = float(svgp.bound(params, jnp.asarray(X), jnp.asarray(y), jnp.ones(50), lik, 50))
    many = float(svgp.bound(params, jnp.asarray(X), jnp.asarray(y), jnp.ones(50), lik, 7))
    assert many == pytest.approx(one, abs=1e-10)
    # rows 0..9 twice: once with weight 2 equals twice as rows
    Xd, yd = np.vstack([X, X[:10]]), np.concatenate([y, y[:10]])
    w = np.ones(50)
    w[:10] = 2.0
    doubled = float(svgp.bound(params, jnp.asarray(Xd), jnp.asarray(yd), jnp.ones(60), lik, 16))
    weighted = float(svgp.bound(params, jnp.asarray(X), jnp.asarray(y), jnp.asarray(w), lik, 16))
    assert weighted == pytest.approx(doubled, abs=1e-10)


def test_one_natural_step_with_a_gaussian_likelihood_is_the_optimal_q():
    X, params, rng = problem(n=50, M=10)
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.standard_normal(50)
    noise = 0.05
    data = (jnp.asarray(X), jnp.asarray(y), jnp.ones(50))
    P, h, e = svgp.site_sums(svgp.posterior_of(params), Gaussian(noise), *data, 16)
    assert float(e) == pytest.approx(
        float(svgp.bound(params, *data, Gaussian(noise), 16) + svgp.kl_whitened(params["q_mu"], params["q_sqrt"])),
        abs=1e-9,
    )
    q_mu, q_sqrt = svgp.natural_update(params["q_mu"], params["q_sqrt"], P, h, 1.0)
    opt = optimal_gaussian_q(params, X, y, noise)
    np.testing.assert_allclose(np.asarray(q_mu), np.asarray(opt["q_mu"]), atol=1e-9)
    np.testing.assert_allclose(np.asarray(q_sqrt), np.asarray(opt["q_sqrt"]), atol=1e-9)
    value = float(svgp.bound(dict(params, q_mu=q_mu, q_sqrt=q_sqrt), *data, Gaussian(noise), 16))
    assert value == pytest.approx(collapsed_bound(params, X, y, noise), abs=1e-8)


@pytest.mark.parametrize(
    "lik", [Bernoulli("probit"), pytest.param(RobustMax(), marks=pytest.mark.slow)], ids=["probit", "robustmax"]
)
@pytest.mark.slow
def test_site_sums_against_a_dense_computation(lik):
    """P and h summed chunk by chunk over weighted rows equal the dense sums of the rows' sites."""
    L = lik.latent_count(3) if lik.name == "robustmax" else 1
    X, params, rng = problem(n=45, M=9, L=L)
    y = rng.integers(0, 3 if L > 1 else 2, size=45)
    w = rng.integers(1, 4, size=45).astype(float)
    post = svgp.posterior_of(params)
    P, h, e = svgp.site_sums(post, lik, jnp.asarray(X), jnp.asarray(y), jnp.asarray(w), 8)
    mu, var, A = svgp.marginals(post, jnp.asarray(X))
    g, lam = svgp.site_moments(lik, mu, var, jnp.asarray(y))
    A, g, lam, mu = (np.asarray(a) for a in (A, g, lam, mu))
    lam = np.abs(lam)
    for ell in range(L):
        dense_P = (A * (w * lam[:, ell])) @ A.T
        dense_h = A @ (w * (g[:, ell] + lam[:, ell] * (mu[:, ell] - float(params["mean"][ell]))))
        np.testing.assert_allclose(np.asarray(P[ell]), dense_P, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(np.asarray(h[:, ell]), dense_h, rtol=1e-10, atol=1e-12)
    dense_e = np.sum(
        w * np.asarray(lik.expected_log_density(jnp.asarray(mu), jnp.asarray(np.asarray(var)), jnp.asarray(y)))
    )
    assert float(e) == pytest.approx(dense_e, rel=1e-12)


def test_natural_steps_reach_the_stationary_point_of_the_bound():
    """Repeated natural steps (probit) end where the bound's gradient in q vanishes, and each step raises it."""
    X, params, rng = problem(n=80, M=10)
    y = (np.sin(2 * X[:, 0]) > 0).astype(np.int32)
    lik = Bernoulli("probit")
    data = (jnp.asarray(X), jnp.asarray(y), jnp.ones(80))
    values = []
    for _ in range(12):
        P, h, e = svgp.site_sums(svgp.posterior_of(params), lik, *data, 32)
        values.append(float(e - svgp.kl_whitened(params["q_mu"], params["q_sqrt"])))
        q_mu, q_sqrt = svgp.natural_update(params["q_mu"], params["q_sqrt"], P, h, 1.0)
        params = dict(params, q_mu=q_mu, q_sqrt=q_sqrt)
    assert np.all(np.diff(values) > -1e-9)
    grad = jax.grad(lambda p: svgp.bound(p, *data, lik, 32))(params)
    assert float(jnp.max(jnp.abs(grad["q_mu"]))) < 1e-6
    assert float(jnp.max(jnp.abs(jnp.tril(grad["q_sqrt"][0])))) < 1e-6
