"""The IVM (Lawrence, Seeger & Herbrich 2003) against direct dense computations."""

import numpy as np
import pytest
from scipy.linalg import solve_triangular
from scipy.special import log_ndtr
from scipy.stats import multivariate_normal, norm

from sparsegp import IVMClassifier, OneVsRestIVMClassifier
from sparsegp.classification import IVMSchedule, IVMState, ivm_select, predict_latent, site_update
from sparsegp.classification.probit import entropy_score, info_gain_score, probit_bias
from sparsegp.errors import InputError, NotFittedError
from sparsegp.kernels import Constant, Matern52, SquaredExponential
from sparsegp.kernels.gram import HostGram, JaxGram, gram

B = 0.2


def _problem(n=50, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = np.where(X[:, 0] - 0.5 * X[:, 1] + 0.4 * rng.normal(size=n) > 0, 1.0, -1.0)
    kernel = SquaredExponential(np.array([0.9, 1.3]), 1.5) + Constant(0.1)
    return X, y, kernel, np.asarray(kernel.K(X))


def _dense_adf(K, y, b, order):
    """ADF on the full covariance: each site moment-matched in turn; returns marginal means/variances after
    each inclusion and the site parameters."""
    n = K.shape[0]
    mean, S = np.zeros(n), K.copy()
    p, m, after = np.zeros(n), np.zeros(n), []
    for i in order:
        s = site_update(y[[i]], mean[[i]], S[[i], [i]], b)
        nu, alpha = s.nu[0], s.alpha[0]
        p[i] = nu / (1.0 - S[i, i] * nu)
        m[i] = mean[i] + alpha / nu
        col = S[:, i].copy()
        mean = mean + alpha * col
        S = S - nu * np.outer(col, col)
        after.append((mean.copy(), np.diag(S).copy(), p.copy(), m.copy()))
    return after


def _dense_A_h(K, p, m):
    """The definitions A = (K^-1 + Pi)^-1 and h = A Pi m, via Woodbury (K^-1 itself is ill-conditioned)."""
    s = np.sqrt(p)
    Bm = np.eye(len(p)) + s[:, None] * K * s[None, :]
    KS = K * s[None, :]
    A = K - KS @ np.linalg.solve(Bm, KS.T)
    return A, A @ (p * m)


def _state(X, y, kernel, d_max):
    # the generic (jitted) kernel path; ivm_select itself takes the SE fast path of Gram
    oracle = JaxGram(kernel, X)
    return IVMState(
        oracle.diag(),
        y,
        B,
        d_max,
        lambda r, c, disjoint=False: oracle.block_at(r, c),
        lambda i: oracle.columns([i])[:, 0],
    )


def test_probit_site_update_matches_quadrature_moments():
    # eq. 2: alpha and nu are the first two derivatives of log Z, so the tilted moments are
    # h + a alpha and a - a^2 nu; check against numerical integration of N(u | h, a) Phi(y (u + b))
    u = np.linspace(-30, 30, 200001)
    for y, h, a in [(1.0, 0.3, 0.7), (-1.0, 1.5, 2.0), (1.0, -4.0, 0.2), (-1.0, -0.2, 5.0)]:
        w = norm.pdf(u, h, np.sqrt(a)) * norm.cdf(y * (u + B))
        Z = np.trapezoid(w, u)
        mean = np.trapezoid(u * w, u) / Z
        var = np.trapezoid((u - mean) ** 2 * w, u) / Z
        s = site_update([y], [h], [a], B)
        assert np.log(Z) == pytest.approx(s.log_Z[0], rel=1e-8)
        assert h + a * s.alpha[0] == pytest.approx(mean, rel=1e-7, abs=1e-9)
        assert a - a * a * s.nu[0] == pytest.approx(var, rel=1e-7)


@pytest.mark.parametrize("index_size", [None, 10])
def test_state_matches_dense_adf_after_every_inclusion(index_size):
    # the active set grows to all n = 50 points; after each inclusion the factored marginals equal
    # dense ADF on the same order to 1e-8, and A = K - M^T M, h equal (K^-1 + Pi)^-1 and A Pi m
    X, y, kernel, K = _problem()
    n = len(y)
    sel = ivm_select(kernel, X, y, B, size=n, index_size=index_size, n_full=5, random_state=3)
    order = sel.state.active_set
    assert sorted(order) == list(range(n))
    dense = _dense_adf(K, y, B, order)
    st = _state(X, y, kernel, n)
    for t, i in enumerate(order):
        st.include(i)
        st.refresh(np.arange(n))
        mean, var, p, m = dense[t]
        np.testing.assert_allclose(st.h, mean, atol=1e-8, rtol=0)
        np.testing.assert_allclose(st.a, var, atol=1e-8, rtol=0)
        A, h = _dense_A_h(K, p, m)
        Mf = st.MT[:, : st.d].T
        np.testing.assert_allclose(K - Mf.T @ Mf, A, atol=1e-8, rtol=0)
        np.testing.assert_allclose(st.h, h, atol=1e-8, rtol=0)
        L = st.L[: st.d, : st.d]
        sp = np.sqrt(p[order[: t + 1]])
        KI = K[np.ix_(order[: t + 1], order[: t + 1])]
        np.testing.assert_allclose(L @ L.T, np.eye(t + 1) + sp[:, None] * KI * sp[None, :], atol=1e-8, rtol=0)


@pytest.mark.parametrize("n, size", [(120, 40), (700, 300)])
@pytest.mark.slow
def test_delayed_columns_equal_eager_ones(n, size):
    # a randomised run leaves most columns behind; bringing them up afterwards gives the eager values
    # (size 300 also crosses the 128-row blocks of the padded factor used for far-behind columns)
    X, y, kernel, K = _problem(n=n, seed=1)
    sel = ivm_select(kernel, X, y, B, size=size, index_size=12, n_full=4, random_state=0)
    st = sel.state
    assert np.any(st.done < st.d)  # some columns really were delayed
    st.refresh(np.arange(len(y)))
    mean, var, _, _ = _dense_adf(K, y, B, st.active_set)[-1]
    np.testing.assert_allclose(st.h, mean, atol=1e-9, rtol=0)
    np.testing.assert_allclose(st.a, var, atol=1e-9, rtol=0)


def _gauss_entropy(S):
    return 0.5 * np.linalg.slogdet(2 * np.pi * np.e * S)[1]


def _kl_gauss(m1, S1, m0, S0):
    k = len(m1)
    S0i = np.linalg.inv(S0)
    d = m0 - m1
    return 0.5 * (np.trace(S0i @ S1) + d @ S0i @ d - k + np.linalg.slogdet(S0)[1] - np.linalg.slogdet(S1)[1])


def test_entropy_and_info_gain_scores_equal_dense_differences():
    # eq. 4 in O(1) vs H[Q] - H[Q_new] on the full n-dimensional Gaussians; the information gain vs
    # KL(Q_new || Q) computed densely
    X, y, kernel, K = _problem(n=25, seed=2)
    K = K + 1e-6 * np.eye(25)  # keep the 25-dimensional log-dets well conditioned
    st = _state(X, y, kernel, 25)
    st.kdiag = st.kdiag + 1e-6
    st.a = st.a + 1e-6
    oracle = JaxGram(kernel, X)
    st.block = lambda r, c, disjoint=False: (
        oracle.block_at(r, c) + 1e-6 * (np.asarray(r)[:, None] == np.asarray(c)[None, :])
    )
    st.column = lambda i: st.block(np.arange(25), [i])[:, 0]
    for i in (4, 11, 17):
        st.include(i)
    st.refresh(np.arange(25))
    Mf = st.MT[:, : st.d].T
    A, h = K - Mf.T @ Mf, st.h.copy()
    s = st.sites(np.arange(25))
    for j in (0, 5, 9, 20):
        col = A[:, j]
        A_new = A - s.nu[j] * np.outer(col, col)
        h_new = h + s.alpha[j] * col
        assert entropy_score(st.a[j], s.nu[j]) == pytest.approx(_gauss_entropy(A) - _gauss_entropy(A_new), rel=1e-6)
        assert info_gain_score(st.a[j], s.alpha[j], s.nu[j]) == pytest.approx(_kl_gauss(h_new, A_new, h, A), rel=1e-6)


def test_log_marginal_likelihood_is_the_gaussian_approximations():
    # sum_i log Phi(z_i) = log N(m_I | 0, K_I + Pi^-1) + sum_i log Ztilde_i, Ztilde_i = Phi(z_i) / N(m_i | h_i, a_i + 1/p_i)
    # with (h_i, a_i) the marginal at inclusion: the product of ADF normalisers is the evidence of the sites
    X, y, kernel, K = _problem(n=40, seed=4)
    st = _state(X, y, kernel, 12)
    logZt = 0.0
    for i in (3, 8, 21, 30, 1, 17, 25):
        st.refresh([i])
        s = st.sites([i])
        a, h = st.a[i], st.h[i]
        p = s.precision(a)[0]
        mi = (h + s.alpha / s.nu)[0]  # the site mean m_i = h_i + alpha_i / nu_i
        logZt += s.log_Z[0] - norm.logpdf(mi, h, np.sqrt(a + 1.0 / p))
        st.include(i)
    I = st.active_set
    p = st.sqrtp[: st.d] ** 2
    ev = multivariate_normal(np.zeros(st.d), K[np.ix_(I, I)] + np.diag(1.0 / p)).logpdf(st.m_site[: st.d])
    assert st.log_marginal_likelihood() == pytest.approx(ev + logZt, rel=1e-9)


def test_prediction_equals_dense_eq5():
    X, y, kernel, K = _problem(n=60, seed=5)
    sel = ivm_select(kernel, X, y, B, size=20, random_state=0)
    pred = sel.state.predictor()
    I = pred["active"]
    p = pred["sqrtp"] ** 2
    m_site = sel.state.m_site[:20]
    Xs = np.random.default_rng(0).normal(size=(7, 2))
    Kxs = np.asarray(kernel.K(X[I], Xs))
    kss = np.asarray(kernel.diag(Xs))
    mean, var = predict_latent(Kxs, kss, pred["L"], pred["sqrtp"], pred["beta"])
    C = K[np.ix_(I, I)] + np.diag(1.0 / p)
    np.testing.assert_allclose(mean, Kxs.T @ np.linalg.solve(C, m_site), atol=1e-10)
    np.testing.assert_allclose(var, kss - np.einsum("ij,ij->j", Kxs, np.linalg.solve(C, Kxs)), atol=1e-10)


def test_latent_variance_is_clamped_only_where_rounding_makes_it_negative():
    # Site precisions of 1e17 pin the latent at the active points: the exact variance there is about
    # 1e-17, below the rounding of k** - ||L^-1 Pi^1/2 k||^2 (about 1e-16 k**), which then falls below 0.
    r = np.random.default_rng(0)
    XI = 0.5 * r.normal(size=(30, 2))
    K = np.exp(-0.5 * ((XI[:, None] - XI[None]) ** 2).sum(-1))
    sqrtp = np.full(30, np.sqrt(1e17))
    L = np.linalg.cholesky(np.eye(30) + sqrtp[:, None] * K * sqrtp[None, :])
    Xs = np.vstack([XI, XI + 4.0])
    Kxs = np.exp(-0.5 * ((XI[:, None] - Xs[None]) ** 2).sum(-1))
    kss = np.ones(len(Xs))
    V = solve_triangular(L, sqrtp[:, None] * Kxs, lower=True)
    raw = kss - np.einsum("ij,ij->j", V, V)
    assert np.any(raw < 0)  # the case the clamp exists for
    _, var = predict_latent(Kxs, kss, L, sqrtp, np.zeros(30))
    assert np.all(var >= 0.0)
    np.testing.assert_array_equal(var[raw >= 0], raw[raw >= 0])  # nothing but the negative entries is touched
    assert np.all(raw[:30] > -1e-14)  # and those are rounding, not a wrong variance
    assert np.all(var[30:] > 0.5)  # far from the active set the prior variance is left


def test_prefix_predictor_equals_a_shorter_run():
    X, y, kernel, _ = _problem(n=80, seed=6)
    long = ivm_select(kernel, X, y, B, size=30, index_size=None, random_state=2)
    short = ivm_select(kernel, X, y, B, size=12, index_size=None, random_state=2)
    a, b = long.state.predictor(12), short.state.predictor()
    np.testing.assert_array_equal(a["active"], b["active"])
    np.testing.assert_allclose(a["beta"], b["beta"], atol=1e-12)
    assert long.state.log_marginal_likelihood(12) == pytest.approx(short.state.log_marginal_likelihood())


def test_stopping_on_the_monitored_error_keeps_the_best_prefix():
    X, y, kernel, _ = _problem(n=300, seed=7)
    sel = ivm_select(
        kernel, X, y, B, size=300, stop="error", check_every=10, patience=2, monitor_size=150, random_state=0
    )
    assert sel.d < 300 and sel.reason.startswith("the monitored error")
    errs = {h["d"]: h["error"] for h in sel.history}
    assert errs[sel.d] == min(errs.values())


def test_the_criteria_are_named_as_the_selection_rules_and_the_older_name_is_read():
    from sparsegp.selection.criteria import DifferentialEntropyRule, InfoGainRule

    X, y, kernel, _ = _problem(n=120, seed=3)
    assert IVMSchedule(size=10).criterion == DifferentialEntropyRule.name
    assert IVMSchedule(size=10, criterion="info-gain").criterion == InfoGainRule.name
    older = ivm_select(kernel, X, y, B, size=20, criterion="entropy", random_state=0)
    named = ivm_select(kernel, X, y, B, size=20, criterion="differential-entropy", random_state=0)
    np.testing.assert_array_equal(older.state.active_set, named.state.active_set)


def test_one_patience_rule_for_every_monitor():
    from sparsegp.selection.stopping import Patience

    curve = Patience(2, margin=0.1)
    readings = [(5.0, 1), (4.0, 2), (3.95, 3), (4.5, 4)]  # 3.95 is within the margin: no improvement
    assert [curve.exhausted(v, d) for v, d in readings] == [False, False, False, True]
    assert (curve.best, curve.best_at) == (4.0, 2)


def test_classifier_fits_any_two_labels_and_is_consistent():
    X, y, kernel, _ = _problem(n=200, seed=8)
    labels = np.where(y > 0, "spam", "ham")
    clf = IVMClassifier(kernel, size=40, bias_variance=0.0, random_state=0).fit(X[:150], labels[:150])
    assert list(clf.classes_) == ["ham", "spam"]
    assert clf.bias_ == pytest.approx(probit_bias(int(np.sum(labels[:150] == "spam")), 150))
    P = clf.predict_proba(X[150:])
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    z = clf.decision_function(X[150:])
    np.testing.assert_allclose(P[:, 1], norm.cdf(z), rtol=1e-10)
    np.testing.assert_array_equal(clf.predict(X[150:]), np.where(z > 0, "spam", "ham"))
    assert clf.score(X[150:], labels[150:]) > 0.8
    np.testing.assert_allclose(clf.predict_log_proba(X[150:])[:, 1], log_ndtr(z))


@pytest.mark.slow  # an IVM fit per class
def test_one_vs_rest_combines_log_probabilities():
    rng = np.random.default_rng(9)
    centres = np.array([[0, 0], [3, 0], [0, 3]])
    y = rng.integers(0, 3, size=240)
    X = centres[y] + 0.8 * rng.normal(size=(240, 2))
    ovr = OneVsRestIVMClassifier(IVMClassifier(size=30, random_state=0)).fit(X[:180], y[:180])
    lp = np.column_stack([e.predict_log_proba(X[180:])[:, 1] for e in ovr.estimators_])
    np.testing.assert_array_equal(ovr.predict(X[180:]), np.argmax(lp, axis=1))
    P = ovr.predict_proba(X[180:])
    np.testing.assert_allclose(P, np.exp(lp) / np.exp(lp).sum(axis=1, keepdims=True), rtol=1e-10)
    assert ovr.score(X[180:], y[180:]) > 0.85


@pytest.mark.parametrize(
    "X, y, match",
    [
        (
            np.zeros((6, 2)),
            np.array([0, 1, 2, 0, 1, 2]),
            "Only binary classification is supported by IVMClassifier, but y has 3 class",
        ),
        (np.zeros((6, 2)), np.array([0, 0, 0, 0, 0, 1]), "class 1 has 1 example"),
        (np.array([[0.0, 1.0], [np.nan, 2.0], [1.0, 1.0], [2.0, 0.0]]), np.array([0, 1, 0, 1]), "NaN"),
        (np.zeros((4, 2)), np.array([0.5, 1.0, 0.0, 1.5]), "non-integer"),
        (np.zeros((4, 2)), np.array([0, 1, 0]), "4 rows but y has 3"),
    ],
)
def test_classifier_bad_input(X, y, match):
    with pytest.raises(InputError, match=match):
        IVMClassifier(size=3).fit(X, y)


def test_predict_before_fit_and_bad_options():
    with pytest.raises(NotFittedError, match="not fitted yet"):
        IVMClassifier().predict(np.zeros((2, 2)))
    with pytest.raises(NotFittedError, match="not fitted yet"):
        OneVsRestIVMClassifier().predict(np.zeros((2, 2)))
    X, y, kernel, _ = _problem(n=20)
    with pytest.raises(InputError, match="criterion"):
        IVMClassifier(kernel, criterion="gini").fit(X, y)
    with pytest.raises(InputError, match="tau"):
        IVMClassifier(kernel, tau=1.5).fit(X, y)
    with pytest.raises(InputError, match="bias_variance"):
        IVMClassifier(kernel, bias_variance=-1).fit(X, y)
    with pytest.raises(InputError, match="OneVsRestIVMClassifier needs at least 2 classes"):
        OneVsRestIVMClassifier().fit(X, np.zeros(20))
    clf = IVMClassifier(kernel, size=5).fit(X, y)
    with pytest.raises(InputError, match="features"):
        clf.predict(np.zeros((3, 5)))


def test_host_gram_equals_the_kernel_and_the_jax_engine():
    rng = np.random.default_rng(10)
    X = rng.normal(size=(30, 4)) + 50.0  # an offset the centring must absorb
    A = rng.normal(size=(6, 4)) + 50.0
    for kernel in (
        SquaredExponential(np.array([0.5, 1, 2, 3.0]), 2.0) + Constant(0.1),
        SquaredExponential(1.5, 0.7, bias=0.2),
    ):
        g, j = gram(kernel, X), JaxGram(kernel, X)
        assert isinstance(g, HostGram)  # the kernel chose the host engine
        K = np.asarray(kernel.K(X))
        np.testing.assert_allclose(g.block(np.arange(30), np.arange(30)), K, atol=1e-12)
        np.testing.assert_allclose(g.column(7), K[:, 7], atol=1e-12)
        np.testing.assert_allclose(g.diag(), np.diag(K), atol=1e-12)
        assert g.block([3, 5], [5, 9])[1, 0] == K[5, 5]
        np.testing.assert_allclose(g.columns([2, 4]), j.columns([2, 4]), atol=1e-12)
        np.testing.assert_allclose(g.cross(A, [1, 3, 8]), j.cross(A, [1, 3, 8]), atol=1e-12)
        np.testing.assert_allclose(g.block_at([0, 2], [4, 6], disjoint=True), j.block_at([0, 2], [4, 6]), atol=1e-12)
    # any other kernel goes through the JAX engine; the host engine refuses it by name
    other = Matern52(1.0, 1.0) + Constant(0.1)
    assert isinstance(gram(other, X), JaxGram)
    with pytest.raises(InputError, match="Sum has no host form"):
        gram(other, X, engine="host")
    with pytest.raises(InputError, match="engine must be one of"):
        gram(other, X, engine="gpu")


def test_mnist_downsampling_averages_2x2_blocks():
    from sparsegp.datasets import mnist_13x13

    img = np.zeros((1, 28, 28), dtype=np.uint8)
    img[0, 1:3, 1:3] = 255  # the top-left 2 x 2 block of the 26 x 26 centre
    img[0, 26, 26] = 51  # one pixel of the bottom-right block
    x = mnist_13x13(img.reshape(1, 784)).reshape(13, 13)
    assert x[0, 0] == 1.0 and x[12, 12] == pytest.approx(0.05) and x.sum() == pytest.approx(1.05)
    with pytest.raises(InputError, match="784"):
        mnist_13x13(np.zeros((2, 100)))


def test_validation_search_ranks_by_error_and_by_evidence():
    from sparsegp.classification.model_selection import validation_search

    X, y, _, _ = _problem(n=160, seed=11)
    grid = {"kernel": [SquaredExponential(ell, 1.0) for ell in (0.05, 1.0)]}
    est = IVMClassifier(size=30, random_state=0)
    out = validation_search(est, grid, X[:100], y[:100], X[100:], y[100:])
    errs = [r["error"] for r in out["results"]]
    assert out["best"] is out["results"][int(np.argmin(errs))]["params"]
    ev = validation_search(est, grid, X[:100], y[:100], scoring="evidence")
    evs = [r["evidence"] for r in ev["results"]]
    assert ev["best"] is ev["results"][int(np.argmax(evs))]["params"]
    with pytest.raises(InputError, match="X_val"):
        validation_search(est, grid, X, y)


def test_save_load_round_trip_and_corrupt_files(tmp_path):
    from sparsegp import load_model
    from sparsegp.errors import ModelFileError

    X, y, kernel, _ = _problem(n=120, seed=12)
    labels = np.where(y > 0, "yes", "no")
    clf = IVMClassifier(kernel, size=25, random_state=0).fit(X, labels)
    path = clf.save(tmp_path / "ivm")
    back = IVMClassifier.load(path)
    Xs = np.random.default_rng(1).normal(size=(9, 2))
    np.testing.assert_array_equal(back.predict(Xs), clf.predict(Xs))
    np.testing.assert_allclose(back.predict_proba(Xs), clf.predict_proba(Xs), rtol=1e-12)
    assert back.get_params()["size"] == 25 and load_model(path).bias_ == clf.bias_
    with np.load(path, allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files}
    arrays["L"] = arrays["L"].T.copy()  # no longer lower triangular
    np.savez(tmp_path / "bad.npz", **arrays)
    with pytest.raises(ModelFileError, match="'L'"):
        load_model(tmp_path / "bad.npz")
    arrays["L"] = arrays["L"].T.copy()
    arrays["beta"] = arrays["beta"][:-1]
    np.savez(tmp_path / "bad2.npz", **arrays)
    with pytest.raises(ModelFileError, match="'beta'"):
        load_model(tmp_path / "bad2.npz")


@pytest.mark.slow
def test_site_evidence_against_dense_and_its_gradient():
    import jax
    import jax.numpy as jnp
    from jax.flatten_util import ravel_pytree
    from scipy.stats import multivariate_normal

    from sparsegp.fitting.ivm_kernel import NegativeSiteEvidence

    rng = np.random.default_rng(0)
    X = rng.normal(size=(15, 2))
    m, v = rng.normal(size=15), rng.uniform(0.2, 2.0, size=15)
    kernel = SquaredExponential(lengthscale=[0.7, 1.3], variance=2.0)
    f = NegativeSiteEvidence()
    value = float(f({"kernel": kernel}, jnp.asarray(X), jnp.asarray(m), jnp.asarray(v)))
    dense = -multivariate_normal(np.zeros(15), np.asarray(kernel.K(X)) + np.diag(v)).logpdf(m)
    assert value == pytest.approx(dense, rel=1e-10)
    flat, unravel = ravel_pytree({"kernel": kernel})
    g = np.asarray(jax.grad(lambda x: f(unravel(x), jnp.asarray(X), jnp.asarray(m), jnp.asarray(v)))(flat))
    for i in range(flat.size):
        e = np.zeros(flat.size)
        e[i] = 1e-6
        fd = (float(f(unravel(flat + e), X, m, v)) - float(f(unravel(flat - e), X, m, v))) / 2e-6
        assert g[i] == pytest.approx(fd, rel=1e-6, abs=1e-8)


@pytest.mark.slow  # whole fits
def test_the_default_ivm_learns_its_kernel_and_a_given_kernel_is_kept():
    from sparsegp.classification.model_selection import default_kernel_grid, validation_folds
    from sparsegp.fitting.config import ivm_config
    from sparsegp.fitting.hyper import input_scale

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    y = np.where(np.sin(2 * X[:, 0]) + X[:, 1] > 0, 1, -1)
    learnt = IVMClassifier(size=40, stop=None, random_state=0, learn_kernel="evidence").fit(X, y)
    assert len(learnt.kernel_history_) == 4 and all(h["active"] == 40 for h in learnt.kernel_history_)
    fixed = IVMClassifier(size=40, random_state=0, learn_kernel=False)
    start = fixed._kernel(X, ivm_config(fixed))
    assert learnt.kernel_ != start
    # the default: the grid kernel with the lowest held-out error (ties: log loss), refitted on every row
    chosen = IVMClassifier(size=40, stop=None, random_state=0).fit(X, y)
    grid = default_kernel_grid(2, float(input_scale(X)))
    assert len(chosen.kernel_history_) == len(grid)
    best = min(
        range(len(grid)), key=lambda i: (chosen.kernel_history_[i]["error"], chosen.kernel_history_[i]["log_loss"])
    )
    assert chosen.kernel_.parameters()["k0.lengthscale"] == pytest.approx(float(grid[best].lengthscale))
    assert chosen.kernel_.parameters()["k0.variance"] == pytest.approx(float(grid[best].variance))
    # small sets are cross-validated: every row held out once, each class in every fold
    codes = (y > 0).astype(int)
    folds = validation_folds(codes, np.random.default_rng(0))
    assert len(folds) == 5 and np.array_equal(np.sort(np.concatenate([v for _, v in folds])), np.arange(200))
    for train, val in folds:
        assert np.intersect1d(train, val).size == 0 and train.size + val.size == 200
        assert set(codes[train]) == set(codes[val]) == {0, 1}
    # larger ones are split once, the held-out rows apart from the training rows
    (train, val), *rest = validation_folds(np.arange(20000) % 3, np.random.default_rng(0))
    assert rest == [] and np.intersect1d(train, val).size == 0
    assert abs(val.size - 2000) <= 3 and abs(train.size - 5000) <= 3  # each class's share rounded
    with pytest.raises(InputError, match="grid"):
        IVMClassifier(SquaredExponential(), learn_kernel="validation").fit(X, y)
    given = SquaredExponential(lengthscale=1.0)
    fixed = IVMClassifier(given, size=40, random_state=0).fit(X, y)
    assert fixed.kernel_history_ == [] and fixed.kernel_.parameters()["k0.lengthscale"] == 1.0
    with pytest.raises(InputError, match="learn_kernel"):
        IVMClassifier(learn_kernel="yes").fit(X, y)


@pytest.mark.parametrize("n", [60, 6000])
def test_validation_folds_keep_two_rows_of_every_class_in_training(n):
    """A class of two or three rows: every training part still holds two of them (the IVM's minimum)."""
    from sparsegp.classification.model_selection import validation_folds

    for small in (2, 3):
        codes = np.zeros(n, int)
        codes[:small] = 1
        folds = validation_folds(codes, np.random.default_rng(0))
        for train, val in folds:
            assert np.intersect1d(train, val).size == 0 and np.sum(codes[train] == 1) >= 2
        held = np.concatenate([v for _, v in folds])
        assert np.sum(codes[held] == 1) == (0 if small == 2 else small if n == 60 else 1)


@pytest.mark.slow
def test_the_default_ivm_fits_a_class_of_two_rows():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = np.zeros(60, int)
    y[:2], X[:2] = 1, X[:2] + 3.0
    clf = IVMClassifier(random_state=0).fit(X, y)
    assert clf.predict_proba(X).shape == (60, 2)
    with pytest.raises(InputError, match="class 1 has 1 example"):
        IVMClassifier(random_state=0).fit(X[1:], y[1:])
