"""Greedy selection: incremental state vs dense recomputation, criteria vs their definitions, SB bounds."""

import jax.numpy as jnp
import numpy as np
import pytest

from _reference import dense_state
from sparsegp.approximations.dtc import dtc_log_marginal
from sparsegp.approximations.vfe import vfe_bound
from sparsegp.kernels import Matern52, SquaredExponential
from sparsegp.selection import (
    SELECTORS,
    ActiveSetState,
    ConditionalVariance,
    DifferentialEntropy,
    Evidence,
    EvidenceMinimum,
    HeldOutError,
    InfoGain,
    KMeans,
    QuadraticFormGap,
    Random,
    RelativeGap,
    RemainingError,
    SmolaBartlett,
    TimeBudget,
    VFEGreedy,
    greedy_select,
    sparse_error_bars,
)
from sparsegp.selection.criteria import (
    DifferentialEntropyRule,
    EvidenceRule,
    InfoGainRule,
    SmolaBartlettRule,
    VFERule,
)

NOISE = 0.05


def _problem(n=240, D=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, D))
    y = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] ** 2 + np.sqrt(NOISE) * rng.normal(size=n)
    kernel = SquaredExponential(np.array([0.9, 1.4, 2.0]), 1.7)
    return X, y, kernel, np.asarray(kernel.K(X, X))


def _state_error(st, ds):
    d = st.d
    return max(
        np.max(np.abs(st.L[:d, :d] - ds["L"])),
        np.max(np.abs(st.V[:d] - ds["V"])),
        np.max(np.abs(st.LM[:d, :d] - ds["LM"])),
        np.max(np.abs(st.beta[:d] - ds["beta"])),
        np.max(np.abs(st.p - ds["p"])),
        np.max(np.abs(st.q - ds["q"])),
        np.max(np.abs(st.mu - ds["mu"])),
        abs(st.dtc_log_marginal() - ds["dtc_log_marginal"]) / abs(ds["dtc_log_marginal"]),
        abs(st.vfe_bound() - ds["vfe_bound"]) / abs(ds["vfe_bound"]),
    )


@pytest.mark.parametrize(
    "selector",
    [Random, InfoGain, DifferentialEntropy, ConditionalVariance, SmolaBartlett, Evidence, VFEGreedy],
    ids=lambda s: s.__name__,
)
def test_incremental_state_equals_dense_after_every_inclusion(selector):
    X, y, kernel, K = _problem()
    errors = []

    def check(rec, state):
        errors.append(_state_error(state, dense_state(K, y, NOISE, state.I)))

    sel = selector(50, random_state=3)
    rule = sel.rule_class()
    cand = sel.default_candidates
    out = greedy_select(rule, kernel, NOISE, X, y, size=50, candidates=cand, random_state=3, callback=check)
    assert out.state.d == 50 and len(errors) == 50
    assert len(np.unique(out.indices)) == 50
    assert max(errors) < 1e-8, max(errors)


def test_state_with_matern_and_tau_selection_index():
    X, y, _, _ = _problem(seed=1)
    kernel = Matern52(np.array([1.0, 1.2, 0.8]), 0.7)
    K = np.asarray(kernel.K(X, X))
    out = greedy_select(VFERule(), kernel, NOISE, X, y, size=40, candidates=30, tau=0.5, random_state=0)
    assert _state_error(out.state, dense_state(K, y, NOISE, out.indices)) < 1e-8


def test_state_evidence_and_bound_equal_the_jax_objectives_at_the_active_inputs():
    # the NumPy phi of the active-set state (Seeger et al. App. A.2) and the chunked JAX DTC evidence /
    # VFE bound of sparsegp.approximations, with the active inputs as inducing inputs, are one quantity
    X, y, kernel, _ = _problem()
    out = greedy_select(InfoGainRule(), kernel, NOISE, X, y, size=30, candidates="full", random_state=0)
    Z = jnp.asarray(X[out.indices])
    dtc = dtc_log_marginal(kernel, Z, NOISE, jnp.asarray(X), jnp.asarray(y), chunk=64, jitter=0.0)
    vfe = vfe_bound(kernel, Z, NOISE, jnp.asarray(X), jnp.asarray(y), chunk=64, jitter=0.0)
    assert out.state.dtc_log_marginal() == pytest.approx(float(dtc), rel=1e-10)
    assert out.state.vfe_bound() == pytest.approx(float(vfe), rel=1e-10)


def _kl(m1, S1, m0, S0):
    S0i = np.linalg.inv(S0)
    return 0.5 * (
        np.trace(S0i @ S1) + (m0 - m1) @ S0i @ (m0 - m1) - len(m1) + np.linalg.slogdet(S0)[1] - np.linalg.slogdet(S1)[1]
    )


def test_info_gain_equals_kl_of_the_replaced_likelihood():
    """Eq. 3 against D[Q^new || Q] computed densely with likelihood (2), on the whitened u_{I'}."""
    X, y, kernel, K = _problem(n=60)
    st = ActiveSetState(np.diag(K), y, NOISE, 10)
    for i in (0, 7, 19, 33):
        st.include(i, K[:, i])
    d = st.d
    V, M = st.V[:d], NOISE * np.eye(d) + st.V[:d] @ st.V[:d].T
    Minv = np.linalg.inv(M)
    R = np.flatnonzero(~st.active)
    scores = InfoGainRule().scores(st, R, None, None)
    for j, i in enumerate(R[:12]):
        li = np.sqrt(K[i, i] - st.p[i])
        S0 = np.zeros((d + 1, d + 1))
        S0[:d, :d] = NOISE * Minv
        S0[d, d] = 1.0
        m0 = np.concatenate([Minv @ V @ y, [0.0]])
        Phi = np.zeros((len(y), d + 1))
        Phi[:, :d] = V.T
        Phi[i, d] = li  # site i now sees u_i = v_i^T a + l_i a_{d+1}, the true site
        S1 = np.linalg.inv(np.eye(d + 1) + Phi.T @ Phi / NOISE)
        m1 = S1 @ Phi.T @ y / NOISE
        assert scores[j] == pytest.approx(_kl(m1, S1, m0, S0), rel=1e-9, abs=1e-12)


def test_differential_entropy_equals_dense_entropy_difference():
    X, y, kernel, K = _problem(n=50)
    st = ActiveSetState(np.diag(K), y, NOISE, 8)
    for i in (3, 11, 28):
        st.include(i, K[:, i])
    d = st.d
    V = st.V[:d]
    Minv = np.linalg.inv(NOISE * np.eye(d) + V @ V.T)
    Sigma = K - V.T @ V + NOISE * V.T @ Minv @ V  # covariance of Q(u) over all n points
    R = np.flatnonzero(~st.active)
    scores = DifferentialEntropyRule().scores(st, R, None, None)
    for j, i in enumerate(R[:10]):
        e = np.zeros(len(y))
        e[i] = 1.0
        Sigma_new = Sigma - np.outer(Sigma[:, i], Sigma[i]) / (NOISE + Sigma[i, i])
        dH = 0.5 * (np.linalg.slogdet(Sigma)[1] - np.linalg.slogdet(Sigma_new)[1])
        assert scores[j] == pytest.approx(dH, rel=1e-8)


def test_expensive_scores_equal_dense_differences():
    """SB, evidence and VFE scores against the dense objectives with the candidate included."""
    X, y, kernel, K = _problem(n=80)
    st = ActiveSetState(np.diag(K), y, NOISE, 12)
    for i in (1, 5, 40, 66):
        st.include(i, K[:, i])
    base = dense_state(K, y, NOISE, st.I)
    C = np.flatnonzero(~st.active)[:15]
    ext = st.extend(C, K[:, C])
    sb = SmolaBartlettRule().scores(st, C, ext, None)
    ev = EvidenceRule().scores(st, C, ext, None)
    vfe = VFERule().scores(st, C, ext, None)
    for j, c in enumerate(C):
        new = dense_state(K, y, NOISE, np.append(st.I, c))
        assert sb[j] == pytest.approx(0.5 * (new["beta"] @ new["beta"] - base["beta"] @ base["beta"]), rel=1e-8)
        assert ev[j] == pytest.approx(new["dtc_log_marginal"] - base["dtc_log_marginal"], rel=1e-7, abs=1e-9)
        assert vfe[j] == pytest.approx(new["vfe_bound"] - base["vfe_bound"], rel=1e-7, abs=1e-9)
        # Smola & Bartlett's primal Q over support I' at its minimiser, from eq. 12 directly.
        Ip = np.append(st.I, c)
        A = NOISE * K[np.ix_(Ip, Ip)] + K[Ip] @ K[:, Ip]
        b = K[Ip] @ y
        assert -0.5 * b @ np.linalg.solve(A, b) == pytest.approx(-0.5 * new["beta"] @ new["beta"], rel=1e-8)


def test_vfe_greedy_bound_never_decreases_and_stays_below_exact():
    X, y, kernel, K = _problem()
    sel = VFEGreedy(60, random_state=0).select(kernel, NOISE, X, y)
    bounds = sel.curve("vfe_bound")
    assert np.all(np.diff(bounds) >= -1e-9)
    n = len(y)
    exact = -0.5 * (
        np.linalg.slogdet(K + NOISE * np.eye(n))[1]
        + y @ np.linalg.solve(K + NOISE * np.eye(n), y)
        + n * np.log(2 * np.pi)
    )
    assert bounds[-1] <= exact + 1e-9


def test_smola_bartlett_gap_and_bounds_bracket_exact_minimum():
    X, y, kernel, K = _problem(n=300)
    n = len(y)
    sel = SmolaBartlett(300, eps=0.01, random_state=0).select(kernel, NOISE, X, y)
    Qmin = -0.5 * y @ K @ np.linalg.solve(K + NOISE * np.eye(n), y)
    Qs_min = -0.5 * y @ np.linalg.solve(K + NOISE * np.eye(n), y)
    assert Qmin + NOISE * Qs_min == pytest.approx(-0.5 * y @ y, rel=1e-9)
    gap = sel.curve("gap")
    primal, dual = sel.curve("primal"), sel.curve("dual")
    assert np.all(np.diff(gap) <= 1e-12)
    assert np.all(primal >= Qmin - 1e-9)
    assert np.all(-0.5 * y @ y - NOISE * dual <= Qmin + 1e-9)
    assert np.all(dual >= Qs_min - 1e-9)
    assert gap[-1] < 0.01 and "relative gap" in sel.reason
    assert sel.state.d < n  # stopped by the gap, well before all points


def test_quadratic_form_gap_brackets_the_dense_error_bar_term():
    """Smola & Bartlett's error-bar count: k as targets, -2 Q* <= k^T (K + s^2 I)^-1 k <= (2 Q + |k|^2) / s^2."""
    X, _, kernel, K = _problem(n=250)
    xt = np.array([[0.3, -0.2, 0.1]])
    k = np.asarray(kernel.K(X, xt))[:, 0]
    exact = k @ np.linalg.solve(K + NOISE * np.eye(len(k)), k)
    rule = QuadraticFormGap(0.01)
    sel = greedy_select(
        SmolaBartlettRule(),
        kernel,
        NOISE,
        X,
        k,
        size=250,
        candidates=30,
        track_gap=True,
        dual_kappa=30,
        stop=[rule],
        random_state=1,
    )
    lower, upper = np.array(rule.bounds).T
    assert np.all(lower <= exact * (1 + 1e-9)) and np.all(upper >= exact * (1 - 1e-9))
    assert 2 * (upper[-1] - lower[-1]) / (upper[-1] + lower[-1]) < 0.01 and "quadratic-form gap" in sel.reason
    assert 2 * (upper[0] - lower[0]) / (upper[0] + lower[0]) > 0.01  # one basis function was not enough
    with pytest.raises(ValueError, match="track_gap"):
        greedy_select(SmolaBartlettRule(), kernel, NOISE, X, k, size=5, stop=[QuadraticFormGap()])


@pytest.mark.slow
def test_sparse_error_bars_bracket_the_exact_variance():
    X, y, kernel, K = _problem(n=200)
    n = len(y)
    sel = InfoGain(40).select(kernel, NOISE, X, y)
    Xt = np.random.default_rng(5).normal(size=(12, 3))
    eb = sparse_error_bars(kernel, X, sel.state, Xt, kappa=20, eps=0.02, max_basis=150, random_state=0)
    Ks = np.asarray(kernel.K(X, Xt))
    exact = np.asarray(kernel.diag(Xt)) + NOISE - np.einsum("ij,ij->j", Ks, np.linalg.solve(K + NOISE * np.eye(n), Ks))
    assert np.all(eb.upper >= exact - 1e-10)
    assert np.all(eb.lower <= exact + 1e-10)
    assert np.all((eb.gap < 0.02) | (eb.basis == 150))
    # With every training point as basis the upper bound is exact.
    full = sparse_error_bars(kernel, X, sel.state, Xt[:2], kappa=n, eps=0.0, max_basis=n)
    np.testing.assert_allclose(full.upper, exact[:2], rtol=1e-8)


def test_evidence_minimum_keeps_the_best_prefix():
    X, y, kernel, _ = _problem(n=200)
    rule = EvidenceMinimum(patience=5)
    sel = Evidence(200, stop=[rule], random_state=0).select(kernel, 2.0, X, y)  # large noise: the minimum comes early
    curve = -sel.curve("dtc_log_marginal")
    assert "not improved" in sel.reason
    assert len(sel.indices) == int(np.argmin(curve)) + 1
    assert sel.state.d == len(sel.indices) + 5


def test_heldout_error_tracks_dtc_predictions():
    from sparsegp.approximations.common import sparse_predict
    from sparsegp.approximations.dtc import dtc_posterior

    X, y, kernel, _ = _problem(n=220)
    Xv, yv = X[200:], y[200:]
    rule = HeldOutError(Xv, yv, patience=1000)
    sel = InfoGain(30, stop=[rule]).select(kernel, NOISE, X[:200], y[:200])
    post = dtc_posterior(kernel, X[:200][sel.indices], NOISE, X[:200], y[:200], chunk=200, jitter=0.0)
    mean = sparse_predict(kernel, post, Xv)[0]
    np.testing.assert_allclose(rule.predictions(sel.state), np.asarray(mean), rtol=1e-7, atol=1e-9)


def test_remaining_error_and_time_budget_stop():
    X, y, kernel, _ = _problem()
    sel = Random(200, stop=[TimeBudget(1e-9)]).select(kernel, NOISE, X, y)
    assert sel.state.d == 1 and "time budget" in sel.reason
    sel = InfoGain(200, stop=[RemainingError(patience=3)]).select(kernel, NOISE, X, y)
    assert sel.state.d <= 200


def test_duplicates_are_never_selected_twice():
    X, y, kernel, _ = _problem(n=60)
    X2, y2 = np.vstack([X, X]), np.concatenate([y, y])
    sel = ConditionalVariance(120).select(kernel, NOISE, X2, y2)
    assert len(np.unique(X2[sel.indices], axis=0)) == len(sel.indices)
    assert "no eligible" in sel.reason


def test_relative_gap_needs_tracking_and_kmeans_centres():
    X, y, kernel, _ = _problem(n=100)
    with pytest.raises(ValueError, match="track_gap"):
        InfoGain(10, stop=[RelativeGap()]).select(kernel, NOISE, X, y)
    Z = KMeans(7, random_state=0).centres(X)
    assert Z.shape == (7, 3)
    assert set(SELECTORS) >= {"random", "info-gain", "smo-bart", "evidence", "vfe", "kmeans"}


def test_one_by_one_scoring_selects_the_same_points():
    X, y, kernel, _ = _problem(n=150)
    a = greedy_select(SmolaBartlettRule(), kernel, NOISE, X, y, size=25, candidates=20, random_state=4)
    b = greedy_select(SmolaBartlettRule(), kernel, NOISE, X, y, size=25, candidates=20, random_state=4, batched=False)
    np.testing.assert_array_equal(a.indices, b.indices)
    np.testing.assert_allclose(a.curve("primal"), b.curve("primal"), rtol=1e-10)


def test_initial_rows_are_included_first():
    X, y, kernel, K = _problem(n=120)
    sel = greedy_select(InfoGainRule(), kernel, NOISE, X, y, size=20, initial=[5, 9, 70])
    np.testing.assert_array_equal(sel.indices[:3], [5, 9, 70])
    assert _state_error(sel.state, dense_state(K, y, NOISE, sel.indices)) < 1e-8
