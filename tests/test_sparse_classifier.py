"""SparseGPClassifier: the estimator's interface, labels, growth, persistence and checks."""

import json
import warnings

import numpy as np
import pytest

from sparsegp import CalibrationWarning, InputError, ModelFileError, SparseGPClassifier, load_model
from sparsegp.classification import svgp
from sparsegp.fitting.variational import FIRST_INDUCING, collapse_rows
from sparsegp.kernels import SquaredExponential
from sparsegp.likelihoods import Bernoulli


def binary(n=150, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, size=(n, 2))
    y = np.where(np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.3 * rng.standard_normal(n) > 0, "yes", "no")
    return X, y


def three_classes(n=150, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = np.digitize(np.arctan2(X[:, 1], X[:, 0]), [-1.0, 1.0])
    return X, y


@pytest.fixture(scope="module")
def fitted_binary():
    X, y = binary()
    return X, y, SparseGPClassifier(inducing=16, random_state=0).fit(X, y)


@pytest.mark.slow  # the `fitted_binary` fixture is a whole fit
def test_binary_fit_predicts_well_and_reports(fitted_binary):
    X, y, clf = fitted_binary
    Xt, yt = binary(400, seed=1)
    assert clf.score(Xt, yt) > 0.8
    p = clf.predict_proba(Xt)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)
    assert list(clf.classes_) == ["no", "yes"]
    np.testing.assert_array_equal(clf.predict(Xt), clf.classes_[(clf.decision_function(Xt) > 0).astype(int)])
    mean, var = clf.predict_latent(Xt)
    assert mean.shape == var.shape == (400,) and np.all(var > 0)
    # probit predictive: Phi(mu / sqrt(1 + v))
    from scipy.special import ndtr

    np.testing.assert_allclose(p[:, 1], ndtr(mean / np.sqrt(1 + var)), rtol=1e-10)
    assert clf.Z_.shape == (16, 2) and clf.stop_reason_.startswith("m = 16")
    assert 0 < clf.loo_log_loss_ < np.log(2) and 0 <= clf.loo_calibration_error_ < 0.2


@pytest.mark.slow  # whole fits of several seconds
def test_multiclass_probabilities_sum_to_one():
    X, y = three_classes()
    for lik in ("softmax", "robustmax"):
        clf = SparseGPClassifier(likelihood=lik, inducing=12, random_state=0, max_iter=200).fit(X, y)
        Xt, yt = three_classes(300, seed=2)
        p = clf.predict_proba(Xt)
        assert p.shape == (300, 3)
        np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)
        assert clf.score(Xt, yt) > 0.85, lik
        assert clf.predict_latent(Xt)[0].shape == (300, 3)


@pytest.mark.slow  # whole fits of several seconds
def test_growth_records_its_path_and_why_it_stopped():
    X, y = binary(300)
    clf = SparseGPClassifier(random_state=0, max_inducing=256).fit(X, y)
    ms = [p["m"] for p in clf.inducing_path_]
    # the first stage has FIRST_INDUCING centres, fewer where the others determine one; each doubling adds at
    # most as many again (fewer where no row adds variance)
    assert 0 < ms[0] <= FIRST_INDUCING and all(a < b <= 2 * a for a, b in zip(ms, ms[1:]))
    bounds = [p["objective"] for p in clf.inducing_path_]
    assert all(b >= a - 1e-6 for a, b in zip(bounds, bounds[1:]))  # q carried over: a doubling never loses
    # the regressors' record schema and rule set
    assert set(clf.inducing_path_[0]) == {
        "m",
        "objective",
        "lower",
        "upper",
        "n_iter",
        "seconds",
        "start",
        "next_start",
    }
    assert clf.stop_reason_.split(":")[0] in (
        "gain",
        "max_inducing",
        "every distinct input",
        "every candidate nearly explained",
        "every candidate explained",
    )
    assert clf.Z_.shape[0] == ms[-1] <= 256


@pytest.mark.parametrize(
    "y, message",
    [
        (np.zeros(20), "at least two classes"),
        (np.r_[np.zeros(19), np.nan], "NaN"),
        (np.linspace(0, 1, 20), "continuous"),
        (np.r_[np.zeros(19), 1.0], "at least 2"),
    ],
)
def test_bad_labels_get_clear_errors(y, message):
    X = np.random.default_rng(0).normal(size=(20, 2))
    with pytest.raises(InputError, match=message):
        SparseGPClassifier().fit(X, y)


@pytest.mark.slow  # the `fitted_binary` fixture is a whole fit
def test_unseen_labels_and_bad_options(fitted_binary):
    X, y, clf = fitted_binary
    with pytest.raises(InputError, match="never saw"):
        clf.score(X[:3], ["yes", "maybe", "no"])
    with pytest.raises(InputError, match="likelihood"):
        SparseGPClassifier(likelihood="softmax").fit(X, y)
    with pytest.raises(InputError, match="inducing"):
        SparseGPClassifier(inducing="many").fit(X, y)
    with pytest.raises(InputError, match="X"):
        clf.predict(np.ones((2, 3)))


@pytest.mark.slow  # the `fitted_binary` fixture is a whole fit
def test_model_file_round_trips_and_rejects_damage(fitted_binary, tmp_path):
    X, y, clf = fitted_binary
    path = clf.save(tmp_path / "clf.npz")
    same = load_model(path)
    np.testing.assert_array_equal(same.predict_proba(X), clf.predict_proba(X))
    assert same.stop_reason_ == clf.stop_reason_ and same.loo_log_loss_ == clf.loo_log_loss_
    with np.load(path, allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files}
    bad = dict(arrays, q_sqrt=arrays["q_sqrt"] + np.triu(np.ones_like(arrays["q_sqrt"]), 1))
    np.savez(tmp_path / "bad.npz", **bad)
    with pytest.raises(ModelFileError, match="lower-triangular"):
        load_model(tmp_path / "bad.npz")
    meta = json.loads(str(arrays["__metadata__"]))
    meta["likelihood"] = {"name": "cauchy"}
    np.savez(tmp_path / "bad2.npz", **dict(arrays, __metadata__=np.array(json.dumps(meta))))
    with pytest.raises(ModelFileError, match="likelihood"):
        load_model(tmp_path / "bad2.npz")


@pytest.mark.slow  # whole fits of several seconds
def test_default_kernel_priors_only_with_few_rows_per_hyper_parameter(fitted_binary, tmp_path):
    X, y = binary(60)  # 60 rows for 3 hyper-parameters: fewer than LABELS_PER_PARAMETER each
    clf = SparseGPClassifier(inducing=8, max_iter=30, random_state=0).fit(X, y)
    priors = clf.kernel_.to_dict()["priors"]
    assert set(priors) == {"lengthscale", "variance"}
    # about the start, in the user's units: sqrt(D) times each column's spread (floored), variance 1, sd 1
    std, s = X.std(axis=0), np.sqrt(np.mean(X.var(axis=0)))
    np.testing.assert_allclose(priors["lengthscale"]["mu"], np.log(np.maximum(std, 0.1 * s) * np.sqrt(2)), rtol=1e-12)
    assert priors["lengthscale"]["sigma"] == 1.0 and priors["variance"] == {
        "type": "LogNormal",
        "mu": 0.0,
        "sigma": 1.0,
    }
    # the priors enter the objective: without them the same start learns a different kernel
    unpriored = SparseGPClassifier(
        kernel=SquaredExponential(lengthscale=np.maximum(std, 0.1 * s) * np.sqrt(2)),
        inducing=8,
        max_iter=30,
        random_state=0,
    ).fit(X, y)
    assert not np.allclose(unpriored.kernel_.lengthscale, clf.kernel_.lengthscale, rtol=1e-3)
    assert load_model(clf.save(tmp_path / "c.npz")).kernel_.to_dict() == clf.kernel_.to_dict()
    assert SparseGPClassifier(inducing=8, optimize=False).fit(X, y).kernel_.to_dict()["priors"] == {}
    assert fitted_binary[2].kernel_.to_dict()["priors"] == {}  # 150 rows: 50 per hyper-parameter


def test_repeated_rows_collapse_exactly():
    X, y = binary(60)
    codes = (y == "yes").astype(np.int64)
    Xd, cd = np.vstack([X, X[:20]]), np.concatenate([codes, codes[:20]])
    rows = collapse_rows(Xd, cd, 2)
    assert rows.X.shape[0] == 60 and rows.n == 80 and rows.w.sum() == 80
    rng = np.random.default_rng(0)
    params = {
        "kernel": SquaredExponential([1.0, 1.0]),
        "Z": X[:8],
        "q_mu": rng.normal(size=(8, 1)),
        "q_sqrt": np.eye(8)[None] * 0.7,
        "mean": np.zeros(1),
    }
    lik = Bernoulli("probit")
    full = float(svgp.bound(params, Xd, cd, np.ones(80), lik, 32))
    collapsed = float(svgp.bound(params, rows.X, rows.y, rows.w, lik, 32))
    assert collapsed == pytest.approx(full, abs=1e-10)


@pytest.mark.slow  # whole fits of several seconds
def test_the_fit_follows_the_units_of_x():
    X, y = binary(120)
    a = SparseGPClassifier(inducing=10, random_state=0).fit(X, y)
    b = SparseGPClassifier(inducing=10, random_state=0).fit(X * 1000.0, y)
    # the same fit to within the optimiser's tolerance: these labels leave the kernel's variance nearly free, and
    # rounding in X / s moves where along that direction each fit stops (0.03 of 22)
    assert b.bound_ == pytest.approx(a.bound_, rel=1e-4)
    np.testing.assert_allclose(b.predict_proba(X * 1000.0), a.predict_proba(X), atol=2e-3)


@pytest.mark.slow  # whole fits of several seconds
def test_calibration_warning_when_the_probabilities_are_overconfident():
    """Labels that are pure noise, a kernel held at a short length-scale: the fit memorises the rows and its
    leave-one-out probabilities are far more confident than right."""
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(240, 1))
    y = rng.integers(0, 2, 240)
    from sparsegp.kernels import SquaredExponential

    kernel = SquaredExponential(0.002, 30.0, fixed=("lengthscale", "variance"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf = SparseGPClassifier(kernel, inducing=80, random_state=0, max_iter=200).fit(X, y)
    assert clf.loo_calibration_error_ > 0.05
    assert any(issubclass(w.category, CalibrationWarning) and "over-confident" in str(w.message) for w in caught)


@pytest.mark.slow  # an IVM selection, then a fit
def test_an_ivm_active_set_as_the_inducing_inputs():
    from sparsegp import IVMClassifier

    X, y = binary(150)
    clf = SparseGPClassifier(inducing=IVMClassifier(SquaredExponential([1.0, 1.0]), size=20, random_state=0))
    clf.fit(X, y)
    ivm = IVMClassifier(SquaredExponential([1.0, 1.0]), size=20, random_state=0).fit(X, y)
    assert clf.Z_.shape == (20, 2) and clf.stop_reason_.startswith("m = 20")
    # the fit moves Z from the IVM's active rows; with learn_inducing=False it keeps them
    fixed = SparseGPClassifier(
        inducing=IVMClassifier(SquaredExponential([1.0, 1.0]), size=20, random_state=0), learn_inducing=False
    ).fit(X, y)
    np.testing.assert_allclose(np.sort(fixed.Z_, axis=0), np.sort(X[ivm.active_], axis=0), atol=1e-12)


@pytest.mark.slow
def test_the_growth_rules():
    """Continue after one doubling that paid; stop on a small gain; stop where the gains' decline says the next
    doubling would add less than tol."""
    from types import SimpleNamespace

    from sparsegp.fitting import variational as pipeline
    from sparsegp.fitting.variational import VariationalConfig, _doubled
    from sparsegp.likelihoods import Bernoulli

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    config = VariationalConfig("test", None, Bernoulli(), "auto", 1024, 1e-3, 10, True, True, None, 0, False)
    data = SimpleNamespace(n=200, n_distinct=200, n_outputs=2)
    params = {
        "kernel": SquaredExponential([1.0, 1.0]),
        "Z": X[:4],
        "q_mu": np.zeros((4, 1)),
        "q_sqrt": np.eye(4)[None],
        "mean": np.zeros(1),
    }

    def path(*bounds):
        return [pipeline.record(4 * 2**i, b, 0, 0.0, float("nan")) for i, b in enumerate(bounds)]

    grown, reason = _doubled(config, params, X, path(-100.0, -99.0), data, rng)  # 0.005 per row
    assert grown is not None and grown["Z"].shape == (8, 2) and reason == ""
    assert _doubled(config, params, X, path(-100.0, -99.9), data, rng)[0] is None  # 0.0005 per row
    # gains 0.01 then 0.002 per row: the next one at that decline is 0.0004, below tol
    grown, reason = _doubled(config, params, X, path(-100.0, -98.0, -97.6), data, rng)
    assert grown is None and "decline" in reason
    # gains 0.01 then 0.008: the next one promises 0.0064, so the growth goes on
    assert _doubled(config, params, X, path(-100.0, -98.0, -96.4), data, rng)[0] is not None


def test_the_default_largest_m_shrinks_with_the_latent_functions(monkeypatch):
    """max_inducing=None: the regressors' device cap at the same cost per evaluation (latents m^2 <= cap^2)."""
    import dataclasses
    from types import SimpleNamespace

    from sparsegp.fitting import variational as pipeline
    from sparsegp.likelihoods import Bernoulli, RobustMax

    config = pipeline.VariationalConfig("test", None, Bernoulli(), "auto", None, 1e-3, 10, True, True, None, 0, False)
    monkeypatch.setattr(pipeline, "device_max_inducing", lambda n: 1024)
    assert [pipeline.largest_m(config, 10_000, L) for L in (1, 3, 4, 10, 17, 1000)] == [1024, 512, 512, 256, 128, 128]
    assert pipeline.largest_m(dataclasses.replace(config, max_inducing=64), 10_000, 10) == 64
    # at the cap the growth stops and says which cap
    monkeypatch.setattr(pipeline, "device_max_inducing", lambda n: 8)
    X = np.random.default_rng(0).normal(size=(50, 2))
    params = {
        "kernel": SquaredExponential([1.0, 1.0]),
        "Z": X[:8],
        "q_mu": np.zeros((8, 3)),
        "q_sqrt": np.stack([np.eye(8)] * 3),
        "mean": np.zeros(3),
    }
    config = dataclasses.replace(config, likelihood=RobustMax())
    data = SimpleNamespace(n=50, n_distinct=50, n_outputs=3)
    path = [pipeline.record(4, -100.0, 0, 0.0, float("nan")), pipeline.record(8, -90.0, 0, 0.0, float("nan"))]
    grown, reason = pipeline._doubled(config, params, X, path, data, None)
    assert grown is None and reason.startswith("max_inducing: m = 8")


def test_a_first_size_at_its_cap_says_it_was_not_grown():
    """The stop reason of a growth that could not double even once names no gain (it printed 'inf')."""
    from types import SimpleNamespace

    from sparsegp.fitting.variational import VariationalConfig, _doubled, record
    from sparsegp.likelihoods import Bernoulli

    rng = np.random.default_rng(0)
    X = rng.normal(size=(4, 2))
    config = VariationalConfig("test", None, Bernoulli(), "auto", 1024, 1e-3, 10, True, True, None, 0, False)
    params = {"kernel": SquaredExponential([1.0, 1.0]), "Z": X, "q_mu": np.zeros((4, 1)), "q_sqrt": np.eye(4)[None]}
    grown, reason = _doubled(
        config,
        params,
        X,
        [record(4, -10.0, 0, 0.0, float("nan"))],
        SimpleNamespace(n=4, n_distinct=4, n_outputs=2),
        rng,
    )
    assert grown is None and reason == "every distinct input: m = 4"


def test_the_likelihood_option_names_one_likelihood_each():
    from sparsegp.likelihoods import Bernoulli, RobustMax, Softmax, named

    assert named("auto", 2) == Bernoulli("probit") and named("auto", 3) == RobustMax()
    assert named("logit", 2) == Bernoulli("logit") and named("softmax", 4) == Softmax()
    with pytest.raises(InputError, match="is for more than two classes"):
        named("robustmax", 2)
    with pytest.raises(InputError, match="is binary, but y has 3 classes"):
        named("probit", 3)
    with pytest.raises(InputError, match="likelihood must be one of"):
        named(["probit"], 2)
