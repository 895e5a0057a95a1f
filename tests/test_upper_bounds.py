"""The certificate's tighter upper bounds (:mod:`sparsegp.approximations.upper_bounds`) against dense NumPy
algebra on problems built to be ill-conditioned, and a fitted model's self-reports (objective_, upper_bound_,
gap_, certificate_) against the same reference."""

import json

import jax.numpy as jnp
import numpy as np
import pytest

from sparsegp import ModelFileError, SparseGPRegressor, load_model
from sparsegp.approximations import upper_bounds as ub
from sparsegp.approximations.certificate import certify
from sparsegp.approximations.exact_gp import exact_log_marginal
from sparsegp.backends.replicates import collapse
from sparsegp.kernels import SquaredExponential
from sparsegp.options import Joint, Noise


def problem(n, D, seed, noise_sd=0.1, copies=0.0):
    r = np.random.default_rng(seed)
    X = r.uniform(-2, 2, size=(n, D))
    if copies:  # near-copies of rows: a share of the rows moved by 1e-9
        k = int(copies * n)
        X[:k] = X[n - k :] + 1e-9 * r.normal(size=(k, D))
    y = np.sin(2 * X[:, 0]) * np.cos(X[:, -1]) + noise_sd * r.normal(size=n)
    return X, y - y.mean()


def dense(kernel, noise, X, y, Z=None, jitter=1e-8):
    """(log p(y), log|A|, y^T A^-1 y, log|Q + s I|, F_V) by NumPy, A = K + s I, Q from K_uu plus ``jitter``
    times its mean diagonal."""
    K = np.asarray(kernel.K(jnp.asarray(X)))
    n = len(y)
    A = K + noise * np.eye(n)
    L = np.linalg.cholesky(A)
    a = np.linalg.solve(L, y)
    logdet, quad = 2 * np.sum(np.log(np.diag(L))), a @ a
    log_p = -0.5 * (logdet + quad + n * np.log(2 * np.pi))
    if Z is None:
        return log_p, logdet, quad, None, None
    Kuu = np.array(kernel.K(jnp.asarray(Z)))
    Kuu += jitter * np.mean(np.diag(Kuu)) * np.eye(len(Z))
    Kuf = np.asarray(kernel.K(jnp.asarray(Z), jnp.asarray(X)))
    Q = Kuf.T @ np.linalg.solve(Kuu, Kuf)
    C = Q + noise * np.eye(n)
    logdet_q = np.linalg.slogdet(C)[1]
    f_v = -0.5 * (logdet_q + y @ np.linalg.solve(C, y) + n * np.log(2 * np.pi)) - np.trace(K - Q) / (2 * noise)
    return log_p, logdet, quad, logdet_q, f_v


SETTINGS = {
    "plain": dict(ell=0.8, var=1.0, noise=0.05, n=150, m=20),
    "tiny noise": dict(ell=0.8, var=1.0, noise=1e-6, n=150, m=40),
    "long length-scales": dict(ell=[30.0, 1e3], var=1e3, noise=1e-4, n=150, m=10),
    "short length-scales": dict(ell=0.05, var=1.0, noise=0.01, n=150, m=30),
    "near-copies": dict(ell=0.8, var=1.0, noise=1e-4, n=150, m=20, copies=0.3),
}


@pytest.mark.parametrize(
    "name", [n if n in ("plain", "near-copies") else pytest.param(n, marks=pytest.mark.slow) for n in SETTINGS]
)
def test_the_exact_and_cg_bounds_sit_between_log_p_and_the_trace_bound(name):
    s = SETTINGS[name]
    X, y = problem(s["n"], 2, seed=len(name), copies=s.get("copies", 0.0))
    k = SquaredExponential(s["ell"], s["var"])
    Z = X[np.random.default_rng(0).choice(len(X), s["m"], replace=False)] + 1e-3
    log_p, logdet, quad, logdet_q, _ = dense(k, s["noise"], X, y, Z)
    trace = certify(k, jnp.asarray(Z), s["noise"], jnp.asarray(X), jnp.asarray(y), chunk=32, jitter=1e-8)
    exact = ub.exact_upper(k, s["noise"], X, y, chunk=32)
    cond = np.linalg.cond(np.asarray(k.K(jnp.asarray(X))) + s["noise"] * np.eye(len(y)))
    tol = 1e-15 * cond * (abs(logdet) + abs(quad)) + 1e-9 * abs(log_p)  # the dense reference's own rounding
    assert exact == pytest.approx(log_p, abs=tol)
    upper, _ = ub.cg_upper(k, Z, s["noise"], X, y, chunk=32, jitter=1e-8)
    assert log_p - tol <= upper <= trace.upper + 1e-9 * abs(trace.upper), (log_p, upper, trace.upper)


@pytest.mark.slow
def test_the_cg_bound_parts_bound_their_terms_and_converge():
    """CG's quadratic form from below, within its stopping rule of y^T A^-1 y; the log-determinant's second-order
    term between 0 and log|A| - log|Q + D|; with a tighter rule the bound meets log p(y)."""
    X, y = problem(200, 3, seed=3)
    k, noise = SquaredExponential([0.5, 0.9, 1.3], 1.2), 0.05
    Z = X[::4]
    _, logdet, quad, logdet_q, _ = dense(k, noise, X, y, Z)
    d = np.full(len(y), noise)
    pre = ub._Nystrom(k, Z, X, d, 1e-8)
    assert pre.logdet == pytest.approx(logdet_q, rel=1e-9)
    q, iters = ub._cg_quadratic(k, X, y, d, pre, 64)
    assert quad - 2 * ub.CG_TOL_PER_ROW * len(y) <= q <= quad * (1 + 1e-12) and iters >= 1
    excess = ub._logdet_excess(k, X, d, pre, 64)
    assert 0.0 < excess <= logdet - logdet_q
    # the second-order term against the eigenvalues of M = (Q + D)^-1/2 (K - Q) (Q + D)^-1/2
    K = np.asarray(k.K(jnp.asarray(X)))
    Kuu = np.array(k.K(jnp.asarray(Z)))
    Kuu += 1e-8 * np.mean(np.diag(Kuu)) * np.eye(len(Z))
    Kuf = np.asarray(k.K(jnp.asarray(Z), jnp.asarray(X)))
    Q = Kuf.T @ np.linalg.solve(Kuu, Kuf)
    r = np.random.default_rng(0).normal(size=len(y))  # the preconditioner is (Q + D)^-1
    np.testing.assert_allclose(pre.solve(r), np.linalg.solve(Q + noise * np.eye(len(y)), r), rtol=1e-7, atol=1e-9)
    w, V = np.linalg.eigh(Q + noise * np.eye(len(y)))
    half = V @ np.diag(w**-0.5) @ V.T
    lam = np.linalg.eigvalsh(half @ (K - Q) @ half)
    assert excess == pytest.approx(ub.second_order(np.sum(lam), np.sum(lam**2)), rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("seed", range(6))
def test_the_second_order_log_determinant_bound_holds_on_any_spectrum(seed):
    r = np.random.default_rng(seed)
    lam = r.exponential(scale=10.0 ** r.uniform(-3, 2), size=r.integers(1, 300))
    bound = ub.second_order(np.sum(lam), np.sum(lam**2))
    assert 0.0 <= bound <= np.sum(np.log1p(lam)) * (1 + 1e-12)
    assert bound >= max(np.sum(lam) - 0.5 * np.sum(lam**2), 0.0)


def test_the_bounds_with_repeated_inputs_are_those_of_all_the_rows():
    """Rows collapsed to distinct inputs (counts, mean targets, within-input scatter): log p(all rows) from the
    collapsed rows, and the CG bound above it."""
    r = np.random.default_rng(5)
    base = r.uniform(-2, 2, size=(60, 2))
    X = base[r.integers(0, 60, size=200)]
    y = np.sin(2 * X[:, 0]) + 0.1 * r.normal(size=200)
    k, noise = SquaredExponential(0.7, 1.0), 0.01
    g = collapse(X, y)
    every_row = float(exact_log_marginal(k, noise, jnp.asarray(X), jnp.asarray(y)))
    w = {"counts": g.counts, "scatter": g.scatter}
    assert ub.exact_upper(k, noise, g.X, g.y, chunk=16, **w) == pytest.approx(every_row, rel=1e-9)
    upper, _ = ub.cg_upper(k, g.X[::6], noise, g.X, g.y, chunk=16, jitter=1e-8, **w)
    assert upper >= every_row - 1e-9 * abs(every_row)


@pytest.mark.parametrize("approximation", ["vfe", pytest.param("fitc", marks=pytest.mark.slow)])
@pytest.mark.slow
def test_a_fitted_model_reports_its_distance_to_the_exact_gp(approximation, tmp_path):
    """objective_, upper_bound_ and gap_ against the dense reference at the fitted values: the upper end is
    log p(y) itself (n <= 20,000), so gap_ is log p(y) - F_V; certificate_ says so and survives its file."""
    X, y = problem(200, 2, seed=7, noise_sd=0.02)
    model = SparseGPRegressor(
        approximation=approximation, inducing=15, random_state=0, schedule=Joint(max_iter=200)
    ).fit(X, y)
    yn = (y - model.y_mean_) / model.y_std_
    log_p, _, _, _, f_v = dense(model.kernel_, model.noise_, X, yn, model.Z_)
    assert model.certificate_["bound"] == "exact" and model.certificate_["seconds"] >= 0
    assert model.upper_bound_ == pytest.approx(log_p, rel=1e-8)
    assert model.upper_bound_ - model.gap_ == pytest.approx(f_v, rel=1e-7)
    if approximation == "vfe":
        assert model.objective_ == pytest.approx(f_v, rel=1e-7)
    loaded = load_model(model.save(tmp_path / "m.npz"))
    assert loaded.certificate_ == model.certificate_


@pytest.mark.slow
def test_a_model_file_with_a_malformed_certificate_record_is_refused(tmp_path):
    X, y = problem(60, 1, seed=2)
    path = SparseGPRegressor(inducing=8, random_state=0, schedule=Joint(max_iter=30)).fit(X, y).save(tmp_path / "m.npz")
    with np.load(path, allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files}
    meta = json.loads(str(arrays["__metadata__"]))
    for bad in ({"bound": "guess", "seconds": 0.1, "detail": ""}, {"bound": "cg", "seconds": -1, "detail": ""}):
        arrays["__metadata__"] = np.array(json.dumps(dict(meta, certificate=bad)))
        np.savez(tmp_path / "bad.npz", allow_pickle=False, **arrays)
        with pytest.raises(ModelFileError, match="certificate"):
            load_model(tmp_path / "bad.npz")


@pytest.mark.parametrize("min_noise", [pytest.param(1e-6, marks=pytest.mark.slow), 1e-10])
def test_at_every_training_input_the_fit_is_the_exact_gp_with_gap_zero(min_noise):
    """Z = X named by a fixed size: the kernel and noise fitted on log p(y) itself, gap 0 and finite with a
    smooth target whose noise sits at min_noise, predictions those of the exact GP at the same values."""
    r = np.random.default_rng(0)
    X = r.uniform(-3, 3, size=(120, 2))
    y = np.sin(X[:, 0]) * np.cos(X[:, 1]) + 1e-3 * r.normal(size=120)
    model = SparseGPRegressor(inducing=120, random_state=0, noise=Noise(minimum=min_noise)).fit(X, y)
    assert np.isfinite(model.objective_) and np.isfinite(model.gap_)
    assert model.certificate_["bound"] == "exact" and model.gap_ / len(y) < 0.01
    yn = (y - model.y_mean_) / model.y_std_
    log_p = dense(model.kernel_, model.noise_, X, yn)[0]
    assert model.objective_ == pytest.approx(log_p, rel=1e-6)
    np.testing.assert_array_equal(np.sort(model.Z_, axis=0), np.sort(X, axis=0))


def _mp_reference(kernel, noise, X, y, Z, jitter):
    """(F_V, log p(y), mean leave-one-out log density of the fit's own predictive) in 50-digit arithmetic,
    Q from K_uu plus ``jitter`` times its mean diagonal (Z = None: the exact GP, Q = K)."""
    import mpmath

    mpmath.mp.dps = 50
    n = len(y)
    K = mpmath.matrix(np.asarray(kernel.K(jnp.asarray(X))).tolist())
    if Z is None:
        Q = K
    else:
        Kuu = np.array(kernel.K(jnp.asarray(Z)))
        Kuu += jitter * np.mean(np.diag(Kuu)) * np.eye(len(Z))
        Kuf = mpmath.matrix(np.asarray(kernel.K(jnp.asarray(Z), jnp.asarray(X))).tolist())
        Q = Kuf.T * mpmath.matrix(Kuu.tolist()) ** -1 * Kuf
    yv = mpmath.matrix(y.tolist())

    def log_n(C):
        return -(mpmath.log(mpmath.det(C)) + (yv.T * C**-1 * yv)[0] + n * mpmath.log(2 * mpmath.pi)) / 2

    eye = mpmath.eye(n)
    trace = sum(K[i, i] - Q[i, i] for i in range(n))
    f_v, log_p = log_n(Q + noise * eye) - trace / (2 * noise), log_n(K + noise * eye)
    P = (Q + noise * eye) ** -1
    a = P * yv
    loo = []
    for i in range(n):  # y ~ N(0, Q + s I) without row i, plus K_ii - Q_ii (DTC's and VFE's predictive)
        var = 1 / P[i, i] + (K[i, i] - Q[i, i])
        loo.append(-(mpmath.log(2 * mpmath.pi * var) + (a[i] / P[i, i]) ** 2 / var) / 2)
    return float(f_v), float(log_p), float(sum(loo) / n)


ILL = {  # kernel, noise, rows, inducing inputs
    "tiny noise": (SquaredExponential(1.0, 1.0), 1e-9, 25, 8),
    "huge length-scales": (SquaredExponential([1e3, 3e2], 1e4), 1e-6, 25, 8),
    "near-copies": (SquaredExponential(0.7, 1.0), 1e-6, 25, 8),
    "n < m": (SquaredExponential(0.9, 1.0), 1e-4, 12, 20),
    "Z = X": (SquaredExponential(0.9, 1.0), 1e-8, 25, None),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(ILL))
def test_each_self_report_on_an_ill_conditioned_fit_against_50_digits(name):
    """objective_, upper_bound_, gap_ and loo_log_predictive_ of a VFE fit at given values against 50-digit
    arithmetic: each within its rounding, or (the leave-one-out) reported unavailable with the error it
    estimated above LOO_TRUSTED_ERROR."""
    kernel, noise, n, m = ILL[name]
    r = np.random.default_rng(len(name))
    X = r.uniform(-1, 1, size=(n, 2))
    if name == "near-copies":
        X[:8] = X[-8:] + 1e-8 * r.normal(size=(8, 2))
    y = np.sin(2 * X[:, 0]) + X[:, 1] ** 2
    Z = X if m is None else r.uniform(-1, 1, size=(m, 2))
    model = SparseGPRegressor(kernel, inducing=Z, noise=Noise(noise, minimum=1e-12), optimize=False).fit(X, y)
    yn = (y - model.y_mean_) / model.y_std_
    f_v, log_p, loo = _mp_reference(kernel, noise, X, yn, None if m is None else Z, float(model.jitter))
    cond = np.linalg.cond(np.asarray(kernel.K(jnp.asarray(X))) + noise * np.eye(n))
    tol = 1e-13 * cond * max(1.0, abs(log_p))
    assert model.upper_bound_ == pytest.approx(log_p, abs=tol)
    assert model.upper_bound_ - model.gap_ == pytest.approx(f_v, abs=tol + 1e-9 * abs(f_v))
    assert model.objective_ == pytest.approx(f_v, abs=tol + 1e-9 * abs(f_v))
    if np.isnan(model.loo_log_predictive_):
        assert model.loo_error_ > 0.05
    else:
        assert model.loo_log_predictive_ + np.log(model.y_std_) == pytest.approx(loo, abs=model.loo_error_ + 1e-6)
