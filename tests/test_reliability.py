"""Inputs that once gave silently wrong answers: each case here must fail loudly or be handled."""

import json
import warnings
import zipfile

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from sparsegp import DataWarning, ExactGPRegressor, InputError, ModelFileError, SparseGPRegressor, load_model
from sparsegp.kernels import Linear, Matern32, Periodic, RationalQuadratic, SquaredExponential
from sparsegp.options import Joint
from sparsegp.priors import Gamma, GammaPrecision, LogNormal


class Table:
    """The part of a pandas DataFrame the estimators look at: named columns and an array view."""

    def __init__(self, values, columns):
        self.values, self.columns = np.asarray(values, dtype=float), list(columns)

    def __array__(self, dtype=None, copy=None):
        return self.values if dtype is None else self.values.astype(dtype)

    def __len__(self):
        return len(self.values)

    @property
    def shape(self):
        return self.values.shape


ESTIMATORS = [
    lambda: ExactGPRegressor(max_iter=20),
    lambda: SparseGPRegressor(inducing=8, random_state=0, schedule=Joint(max_iter=20)),
]


@pytest.mark.slow
@pytest.mark.parametrize("make", ESTIMATORS)
def test_feature_names_are_kept_checked_and_saved(toy_regression, make, tmp_path):
    X, y = toy_regression(40, 3)
    model = make().fit(Table(X, ["a", "b", "c"]), y)
    assert model.feature_names_in_.dtype == object and list(model.feature_names_in_) == ["a", "b", "c"]
    same = model.predict(Table(X[:5], ["a", "b", "c"]))
    np.testing.assert_array_equal(same, model.predict(X[:5]))  # a plain array is taken by position
    with pytest.raises(InputError, match="same order"):
        model.predict(Table(X[:5, [2, 0, 1]], ["c", "a", "b"]))
    with pytest.raises(InputError, match="unseen at fit time:\n- d"):
        model.predict(Table(X[:5], ["a", "b", "d"]))
    path = model.save(tmp_path / "m.npz")
    loaded = load_model(path)
    assert list(loaded.feature_names_in_) == ["a", "b", "c"]
    with pytest.raises(InputError, match="same order"):
        loaded.predict(Table(X[:5, [1, 0, 2]], ["b", "a", "c"]))
    refit = make().fit(X, y)  # fitting on an array removes names from an earlier fit
    assert not hasattr(refit, "feature_names_in_")


@pytest.mark.slow  # a fit of every classifier
def test_classifiers_keep_and_check_feature_names(tmp_path):
    from sparsegp import IVMClassifier, OneVsRestIVMClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    for model in (
        IVMClassifier(size=20, random_state=0),
        OneVsRestIVMClassifier(IVMClassifier(size=20, random_state=0)),
    ):
        model.fit(Table(X, ["a", "b", "c"]), y)
        assert list(model.feature_names_in_) == ["a", "b", "c"]
        np.testing.assert_array_equal(model.predict_proba(Table(X[:5], ["a", "b", "c"])), model.predict_proba(X[:5]))
        with pytest.raises(InputError, match="same order"):
            model.predict(Table(X[:5, [2, 0, 1]], ["c", "a", "b"]))
        with pytest.raises(InputError, match="same order"):
            model.decision_function(Table(X[:5, [2, 0, 1]], ["c", "a", "b"]))
    loaded = load_model(
        IVMClassifier(size=20, random_state=0).fit(Table(X, ["a", "b", "c"]), y).save(tmp_path / "c.npz")
    )
    assert list(loaded.feature_names_in_) == ["a", "b", "c"]
    with pytest.raises(InputError, match="same order"):
        loaded.predict(Table(X[:5, [1, 0, 2]], ["b", "a", "c"]))


@pytest.mark.parametrize("names", [["a", "b"], ["a", "a", "b"], [1, 2, 3], "abc"])
def test_malformed_feature_names_in_a_model_file_are_rejected(toy_regression, names, tmp_path):
    X, y = toy_regression(30, 3)
    path = ExactGPRegressor(max_iter=5).fit(Table(X, ["a", "b", "c"]), y).save(tmp_path / "m.npz")
    with np.load(path, allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files}
    meta = json.loads(str(arrays.pop("__metadata__")))
    assert meta["feature_names"] == ["a", "b", "c"]
    meta["feature_names"] = names
    bad = tmp_path / "bad.npz"
    np.savez(bad, __metadata__=np.array(json.dumps(meta)), **arrays)
    with pytest.raises(ModelFileError, match="feature_names"):
        load_model(bad)


def test_a_malformed_target_name_in_a_model_file_is_rejected(toy_regression, tmp_path):
    """The target column's name (kept by ``sparsegp fit --data``) is a string that names no feature."""
    X, y = toy_regression(30, 3)
    model = ExactGPRegressor(max_iter=5).fit(Table(X, ["a", "b", "c"]), y)
    model.target_name_ = "y"
    path = model.save(tmp_path / "m.npz")
    assert load_model(path).target_name_ == "y"
    with np.load(path, allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files}
    meta = json.loads(str(arrays.pop("__metadata__")))
    for target in (3, ["y"], "a"):
        bad = tmp_path / "bad.npz"
        np.savez(bad, __metadata__=np.array(json.dumps(dict(meta, target_name=target))), **arrays)
        with pytest.raises(ModelFileError, match="target_name"):
            load_model(bad)


@pytest.fixture(scope="module")
def fitted_models(toy_regression):
    """One fitted model of each kind and its training inputs, by name."""
    from sparsegp import IVMClassifier

    X, y = toy_regression(40, 2)
    return {
        "exact": (ExactGPRegressor(max_iter=10).fit(X, y), X),
        "sparse": (SparseGPRegressor(inducing=6, random_state=0, schedule=Joint(max_iter=10)).fit(X, y), X),
        "ivm": (IVMClassifier(size=10).fit(X, np.where(y > np.median(y), 1, -1)), X),
    }


@pytest.mark.slow
@pytest.mark.xdist_group("reliability-fitted-models")
@pytest.mark.parametrize("which", ["exact", "sparse", "ivm"])
def test_single_byte_corruptions_give_model_file_error_or_the_same_model(which, tmp_path, fitted_models):
    model, X = fitted_models[which]
    path = model.save(tmp_path / "m.npz")
    original = open(path, "rb").read()
    expected = load_model(path).predict(X[:5])  # the intact file's model
    positions = np.unique(np.linspace(0, len(original) - 1, 100).astype(int))
    outcomes = {"error": 0, "same": 0}
    for pos in positions:
        data = bytearray(original)
        data[pos] ^= 0xFF
        bad = tmp_path / "bad.npz"
        bad.write_bytes(bytes(data))
        try:
            loaded = load_model(bad)
        except ModelFileError as exc:
            outcomes["error"] += 1
            # a damaged archive is never reported as pickled data (NumPy's reading of a bad zip header)
            assert "pickle" not in str(exc), f"byte {pos} flipped: {exc}"
            continue
        np.testing.assert_array_equal(loaded.predict(X[:5]), expected, err_msg=f"byte {pos} flipped")
        outcomes["same"] += 1
    assert outcomes["error"] >= len(positions) // 2  # most bytes matter; the rest are unused zip fields
    for pos in range(4):  # the first member's header signature: the message names the member
        data = bytearray(original)
        data[pos] ^= 0xFF
        bad.write_bytes(bytes(data))
        with pytest.raises(ModelFileError, match=r"member '__metadata__\.npy' is damaged \(BadZipFile"):
            load_model(bad)


@pytest.mark.parametrize(
    "content, message",
    [
        (b"x,y\n1,2\n", "not a sparsegp model file"),
        (b"just some text", "not a sparsegp model file"),
        (b"\x93NUMPY\x01\x00garbage", "single .npy array"),
        (b"\x80\x04K\x01.", "pickled data"),
    ],
)
def test_files_that_are_not_archives_are_named_for_what_they_are(content, message, tmp_path):
    path = tmp_path / "m.npz"
    path.write_bytes(content)
    with pytest.raises(ModelFileError, match=message):
        load_model(path)


def _zip_with_member_flag(src, dst, *, compress_type=None, flag_bits=None):
    """Copy an archive, editing the central-directory entry of its first member (method or flags)."""
    data = bytearray(open(src, "rb").read())
    at = data.index(b"PK\x01\x02")
    if flag_bits is not None:
        data[at + 8 : at + 10] = flag_bits.to_bytes(2, "little")
    if compress_type is not None:
        data[at + 10 : at + 12] = compress_type.to_bytes(2, "little")
    open(dst, "wb").write(bytes(data))


@pytest.mark.parametrize("edit", [dict(compress_type=99), dict(flag_bits=1)])
@pytest.mark.slow
def test_unsupported_or_encrypted_members_give_model_file_error(toy_regression, edit, tmp_path):
    X, y = toy_regression(20, 2)
    path = ExactGPRegressor(max_iter=5).fit(X, y).save(tmp_path / "m.npz")
    bad = tmp_path / "bad.npz"
    _zip_with_member_flag(path, bad, **edit)
    with pytest.raises(ModelFileError, match="cannot be read|not a readable"):
        load_model(bad)


def test_a_member_that_is_not_an_npy_array_gives_model_file_error(toy_regression, tmp_path):
    X, y = toy_regression(20, 2)
    path = ExactGPRegressor(max_iter=5).fit(X, y).save(tmp_path / "m.npz")
    with zipfile.ZipFile(path, "a") as z:
        z.writestr("extra.txt", b"not an array")
    with pytest.raises(ModelFileError):
        load_model(path)
    with pytest.raises(ModelFileError):
        load_model(tmp_path)


# ---- units: the fit must not depend on the units of X or y ------------------------------------
def _sine(X):
    return np.sin(2 * X[:, 0]) + X[:, 1] / 2


def _sine_data(n, seed=0):
    """Training data on [-2, 2]^2 and test inputs inside it (no extrapolation)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, 2))
    return X, _sine(X) + 0.1 * rng.normal(size=n), rng.uniform(-1.8, 1.8, size=(200, 2))


SCALE_CASES = {
    "exact": lambda: ExactGPRegressor(),
    # Free inducing inputs: a converged fit (a capped FITC / DTC run with free Z amplifies rounding
    # differences into different stopping points, so those are checked at fixed inducing rows).
    "vfe-free-Z": lambda: SparseGPRegressor(approximation="vfe", inducing=15, random_state=0),
    **{
        f"{a}-rows": (
            lambda a=a: SparseGPRegressor(approximation=a, inducing=15, random_state=0, optimize="hyperparameters")
        )
        for a in ("vfe", "dtc", "sor", "fitc")
    },
}


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("case", sorted(SCALE_CASES))
def test_inputs_and_targets_in_any_units_give_the_same_fit(case):
    X, y, Xt = _sine_data(150)
    ft = _sine(Xt)
    rmse = {}
    for sx, sy in [(1e-6, 1e6), (1.0, 1.0), (1e6, 1e-6)]:
        model = SCALE_CASES[case]().fit(X * sx, y * sy)
        rmse[sx] = np.sqrt(np.mean((model.predict(Xt * sx) / sy - ft) ** 2))
    assert rmse[1.0] < 0.5 * np.std(ft)  # a real fit, not the constant mean
    for sx in (1e-6, 1e6):
        assert abs(rmse[sx] - rmse[1.0]) <= 0.05 * rmse[1.0], rmse


def test_default_length_scales_start_at_the_column_spread():
    X, y, _ = _sine_data(60)
    X = X * np.array([1e-3, 1e4])
    model = ExactGPRegressor(optimize=False).fit(X, y)
    np.testing.assert_allclose(model.kernel_.lengthscale, np.std(X, axis=0), rtol=1e-12)


@pytest.mark.parametrize(
    "kernel",
    [
        SquaredExponential(
            lengthscale=np.array([0.5, 2.0]),
            variance=1.5,
            bias=0.1,
            priors={"lengthscale": LogNormal(0.3, 1.0), "variance": Gamma(2.0, 1.0)},
        ),
        Matern32(0.7) + Linear(np.array([0.2, 3.0]), priors={"variance": Gamma(3.0, 2.0)}),
        SquaredExponential(np.array([0.5, 2.0]), 1.0, bias=0.1, priors={"lengthscale": GammaPrecision(1.0, 2.0)}),
        Periodic(np.array([0.8, 2.5]), 0.7, priors={"period": LogNormal(0.0, 1.0)}) * RationalQuadratic(1.3, alpha=0.4),
    ],
)
@pytest.mark.slow
def test_a_kernel_rewritten_for_scaled_inputs_is_the_same_covariance_and_prior(kernel):
    rng = np.random.default_rng(1)
    X, Z, s = rng.normal(size=(7, 2)), rng.normal(size=(5, 2)), 3.7e-4
    scaled = kernel.for_scaled_inputs(s)
    np.testing.assert_allclose(scaled.K(X / s, Z / s), kernel.K(X, Z), rtol=1e-12)
    np.testing.assert_allclose(scaled.diag(X / s), kernel.diag(X), rtol=1e-12)

    # Each prior moves with its parameter: the prior of c * value evaluated at c * value differs from the
    # original at value by the constant -log c, whatever the value.
    def priors_only(k):
        if k._composite:
            return sum(priors_only(c) for c in k.kernels)
        return sum(float(p.log_prob(k.parameters()[n])) for n, p in k._priors)

    other = kernel.replace(**{k: v * 1.3 for k, v in kernel.parameters().items()})
    d1 = priors_only(scaled) - priors_only(kernel)
    d2 = priors_only(other.for_scaled_inputs(s)) - priors_only(other)
    assert d1 == pytest.approx(d2, abs=1e-9) and abs(d1) > 1  # a constant, and not zero: the priors did move
    back = scaled.for_scaled_inputs(1 / s)
    for name, value in kernel.parameters().items():
        np.testing.assert_allclose(back.parameters()[name], value, rtol=1e-12)


# ---- duplicated rows and optimiser failures ---------------------------------------------------
@pytest.mark.slow  # whole fits
def test_exactly_repeated_rows_are_fitted_once_with_duplicates_drop():
    X, y, Xt = _sine_data(80)
    ft = _sine(Xt)
    once = ExactGPRegressor().fit(X, y)
    with pytest.warns(DataWarning, match="160 of 240 training rows repeat.*duplicates='drop'"):
        thrice = ExactGPRegressor(duplicates="drop").fit(np.vstack([X] * 3), np.concatenate([y] * 3))
    np.testing.assert_allclose(thrice.predict(Xt), once.predict(Xt), rtol=1e-10, atol=1e-12)
    assert np.sqrt(np.mean((thrice.predict(Xt) - ft) ** 2)) < 0.2
    assert thrice.noise_ > 1e-3  # not driven to min_noise by the copies


@pytest.mark.slow
def test_repeated_inputs_with_different_targets_are_kept():
    X, y, _ = _sine_data(40)
    X2, y2 = np.vstack([X, X]), np.concatenate([y, y + 0.05])
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataWarning)
        model = ExactGPRegressor(max_iter=30).fit(X2, y2)
    # every row fitted, as one row per input with its count, mean target and sum of squares
    assert model.X_train_.shape[0] == 40 and np.all(model.train_counts_ == 2)
    np.testing.assert_allclose(model.train_scatter_, 2 * (0.025 / model.y_std_) ** 2, rtol=1e-9)


@pytest.mark.slow  # whole fits
@pytest.mark.parametrize(
    "make",
    [
        lambda: ExactGPRegressor(max_iter=2),
        lambda: SparseGPRegressor(inducing=8, random_state=0, schedule=Joint(max_iter=2)),
    ],
)
def test_an_optimiser_stopped_short_warns(make):
    X, y, _ = _sine_data(50)
    with pytest.warns(ConvergenceWarning, match="without converging"):
        make().fit(X, y)


def test_noise_at_its_lower_bound_warns():
    X = np.linspace(0, 3, 25)[:, None]
    with pytest.warns(ConvergenceWarning, match="noise variance ended at its lower bound"):
        ExactGPRegressor().fit(X, np.sin(X[:, 0]))


# ---- the command line: every misuse is one line on stderr and a non-zero exit -------------------
def _cli_error(argv, capsys):
    from sparsegp.cli import main

    code = main(argv)
    err = capsys.readouterr().err
    assert code != 0 and err.count("\n") == 1 and "Traceback" not in err, err
    return err


def _csv(path, text):
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    "content, message",
    [
        ("a,b,y\n", "has a header but no data rows"),
        ("a,b,y\n1,2,3\n4,5\n", "line 3: 2 values, but the header has 3 columns"),
        ("a,b,y\n1,2,3\n4,x,6\n", "line 3: 'x' is not a number"),
        ("a;b;y\n1;2;3\n4;5;6\n", "looks ';'-delimited: pass --delimiter ';'"),
        ("", "is empty"),
    ],
)
def test_cli_names_what_is_wrong_with_a_csv(content, message, tmp_path, capsys):
    data = _csv(tmp_path / "d.csv", content)
    assert message in _cli_error(["fit", "--data", data, "--target", "y", "--quiet"], capsys)


def test_cli_reads_another_delimiter_when_told(toy_regression, tmp_path, capsys):
    from sparsegp.cli import main

    X, y = toy_regression(20, 2)
    rows = "\n".join(";".join(str(float(v)) for v in [*x, t]) for x, t in zip(X, y))
    data = _csv(tmp_path / "d.csv", "a;b;y\n" + rows + "\n")
    assert main(["fit", "--data", data, "--target", "y", "--delimiter", ";", "--max-iter", "5", "--quiet"]) == 0


def test_cli_data_that_is_a_directory_or_an_npz_without_the_target(tmp_path, capsys):
    assert "is a directory" in _cli_error(["fit", "--data", str(tmp_path), "--target", "y", "--quiet"], capsys)
    npz = tmp_path / "d.npz"
    np.savez(npz, X=np.ones((5, 2)))
    assert "no array named 'y'" in _cli_error(["fit", "--data", str(npz), "--target", "y", "--quiet"], capsys)
    (tmp_path / "bad.npz").write_bytes(b"not a zip file")
    assert "not a readable NPZ" in _cli_error(["fit", "--data", str(tmp_path / "bad.npz"), "--target", "y"], capsys)


def test_cli_checks_the_output_before_fitting(toy_regression, tmp_path, capsys, monkeypatch):
    import sparsegp.cli as cli

    X, y = toy_regression(20, 2)
    data = _csv(
        tmp_path / "d.csv", "a,b,y\n" + "\n".join(",".join(str(float(v)) for v in [*x, t]) for x, t in zip(X, y)) + "\n"
    )
    monkeypatch.setattr(cli, "_build_model", lambda *a: pytest.fail("the fit ran before the output was checked"))
    blocker = tmp_path / "file"
    blocker.write_text("")
    err = _cli_error(
        ["fit", "--data", data, "--target", "y", "--quiet", "--out", str(blocker / "sub" / "m.npz")], capsys
    )
    assert "cannot create the folder" in err
    assert "is a directory" in _cli_error(["fit", "--data", data, "--target", "y", "--out", str(tmp_path)], capsys)


@pytest.mark.slow
@pytest.mark.xdist_group("reliability-fitted-models")
@pytest.mark.parametrize("which", ["exact", "sparse", "ivm"])
def test_unknown_metadata_fields_and_arrays_are_rejected(which, tmp_path, fitted_models):
    model = fitted_models[which][0]
    path = model.save(tmp_path / "m.npz")
    with np.load(path, allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files}
    meta = json.loads(str(arrays["__metadata__"]))
    edited = dict(arrays, __metadata__=np.array(json.dumps({**meta, "comment": "x"})))
    np.savez(tmp_path / "meta.npz", **edited)
    with pytest.raises(ModelFileError, match=r"unknown metadata field\(s\) \['comment'\]"):
        load_model(tmp_path / "meta.npz")
    np.savez(tmp_path / "arr.npz", **arrays, extra=np.zeros(3))
    with pytest.raises(ModelFileError, match=r"unknown array\(s\) \['extra'\]"):
        load_model(tmp_path / "arr.npz")
    load_model(path)  # the untouched file still loads


@pytest.mark.slow  # whole fits at two scales of the inputs
def test_the_ivm_default_kernel_follows_the_units_of_the_inputs():
    from sparsegp import IVMClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    y = np.where(np.sin(2 * X[:, 0]) + X[:, 1] > 0, 1, -1)
    accuracy = {}
    for sx in (1e-6, 1.0, 1e6):
        model = IVMClassifier(size=40, random_state=0).fit(X * sx, y)
        accuracy[sx] = model.score(X * sx, y)
    assert accuracy[1.0] > 0.85
    assert accuracy[1e-6] == accuracy[1.0] == accuracy[1e6]


# ---- the objective at given hyper-parameters ---------------------------------------------------
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize(
    "make",
    [
        lambda: ExactGPRegressor(max_iter=30),
        lambda: SparseGPRegressor(approximation="fitc", inducing=8, random_state=0, schedule=Joint(max_iter=30)),
        lambda: SparseGPRegressor(approximation="vfe", inducing=8, random_state=0, schedule=Joint(max_iter=30)),
    ],
)
@pytest.mark.slow
def test_log_marginal_likelihood_and_its_gradient_at_given_theta(make):
    X, y, _ = _sine_data(40)
    model = make().fit(X * 1e3, y)
    data = {} if isinstance(model, ExactGPRegressor) else {"X": X * 1e3, "y": y}
    fitted = model.log_marginal_likelihood_ if isinstance(model, ExactGPRegressor) else model.objective_
    assert model.log_marginal_likelihood(**data) == pytest.approx(fitted, rel=1e-10)
    names = model.hyperparameter_names()
    assert names == ["lengthscale[0]", "lengthscale[1]", "variance", "noise"]
    theta = np.log([3e2, 2e3, 0.8, 0.05])
    value, grad = model.log_marginal_likelihood(theta, eval_gradient=True, **data)
    assert value == pytest.approx(model.log_marginal_likelihood(theta, **data), rel=1e-12)
    for i in range(theta.size):
        step = np.zeros_like(theta)
        step[i] = 1e-5
        fd = (
            model.log_marginal_likelihood(theta + step, **data) - model.log_marginal_likelihood(theta - step, **data)
        ) / 2e-5
        assert grad[i] == pytest.approx(fd, rel=1e-5, abs=1e-6)
    with pytest.raises(InputError, match="theta"):
        model.log_marginal_likelihood(theta[:2], **data)
    if data:
        with pytest.raises(InputError, match="keeps no training data"):
            model.log_marginal_likelihood(theta)


@pytest.mark.slow  # whole fits of both regressors
def test_log_marginal_likelihood_theta_holds_a_non_negative_bias_as_its_value():
    X, y, _ = _sine_data(40)
    model = ExactGPRegressor(SquaredExponential([1.0, 1.0], 1.0, bias=0.3), optimize=False).fit(X, y)
    assert model.hyperparameter_names() == ["lengthscale[0]", "lengthscale[1]", "variance", "bias", "noise"]
    theta = np.array([np.log(0.7), np.log(1.3), np.log(0.8), 0.2, np.log(0.05)])
    value, grad = model.log_marginal_likelihood(theta, eval_gradient=True)
    refit = ExactGPRegressor(
        SquaredExponential([0.7, 1.3], 0.8, bias=0.2), noise=0.05, optimize=False, normalize_y=False
    )
    assert value == pytest.approx(refit.fit(X, (y - model.y_mean_) / model.y_std_).log_marginal_likelihood_, rel=1e-12)
    step = np.zeros_like(theta)
    step[3] = 1e-5
    fd = (model.log_marginal_likelihood(theta + step) - model.log_marginal_likelihood(theta - step)) / 2e-5
    assert grad[3] == pytest.approx(fd, rel=1e-5, abs=1e-8)
    assert np.isfinite(model.log_marginal_likelihood(np.where(np.arange(5) == 3, 0.0, theta)))
    with pytest.raises(InputError, match=r"non-negative \['bias'\]"):
        model.log_marginal_likelihood(np.where(np.arange(5) == 3, -0.1, theta))


# ---- pandas (an optional dependency; part of the dev install) ----------------------------------
@pytest.mark.parametrize("make", ESTIMATORS)
@pytest.mark.slow
def test_pandas_dataframes_and_series_in(toy_regression, make):
    pd = pytest.importorskip("pandas")
    X, y = toy_regression(40, 3)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    model = make().fit(frame, pd.Series(y, name="target"))
    assert list(model.feature_names_in_) == ["a", "b", "c"]
    mean = model.predict(frame.iloc[:5])
    assert isinstance(mean, np.ndarray)  # a regressor's output is an array, as in scikit-learn
    np.testing.assert_array_equal(mean, model.predict(X[:5]))
    with pytest.raises(InputError, match="same order"):
        model.predict(frame[["c", "a", "b"]].iloc[:5])
    with pytest.raises(InputError, match="NaN"):
        model.predict(frame.iloc[:5].assign(a=np.nan))


# ---- tiny training sets ------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("make", ESTIMATORS)
def test_fewer_than_three_inputs_are_refused_and_few_samples_warn(make):
    X, y, _ = _sine_data(12)
    with pytest.raises(InputError, match="1 sample"):
        make().fit(X[:1], y[:1])
    with pytest.raises(InputError, match="1 distinct input"):
        make().fit(np.vstack([X[:1]] * 2), np.concatenate([y[:1]] * 2))
    # two points: the targets' scale rests on one degree of freedom (BENCHMARKS.md, "Tiny training sets")
    with pytest.raises(InputError, match="2 distinct input.*at least 3 are required.*no error bars can be trusted"):
        make().fit(X[:2], y[:2])
    with pytest.raises(InputError, match="2 distinct input\\(s\\) in 5 rows"):
        make().fit(np.vstack([X[:2], X[:2], X[:1]]), np.arange(5.0))
    with pytest.warns(DataWarning, match="3 training samples for 4 free hyper-parameters.*weak default priors"):
        make().fit(X[:3], y[:3])
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataWarning)
        warnings.simplefilter("ignore", ConvergenceWarning)
        make().fit(X, y)  # 12 samples for 4 hyper-parameters: no warning


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::sparsegp.DataWarning", "ignore::sklearn.exceptions.ConvergenceWarning")
def test_tiny_training_sets_get_weak_priors_and_error_bars_that_do_not_collapse():
    """Item 3: with 3 points (4 free hyper-parameters), maximum likelihood let the noise fall to min_noise
    and covered 0.59 of test targets within 2 sd (BENCHMARKS.md, 'Tiny training sets')."""
    covered, noises = [], []
    for seed in range(6):
        X, y, Xt = _sine_data(3, seed)
        yt = _sine(Xt) + 0.1 * np.random.default_rng(100 + seed).normal(size=len(Xt))
        model = ExactGPRegressor().fit(X, y)
        assert dict(model.kernel_._priors)["lengthscale"].mu == pytest.approx(tuple(np.log(np.std(X, axis=0))))
        mean, sd = model.predict(Xt, return_std=True)
        covered.append(np.mean(np.abs(mean - yt) <= 2 * sd))
        noises.append(model.noise_)
    assert np.mean(covered) > 0.75
    assert min(noises) > 100 * ExactGPRegressor().min_noise
    # a noise prior of one's own replaces the default one; a user's kernel keeps its own (no) priors
    X, y, _ = _sine_data(3)
    model = ExactGPRegressor(SquaredExponential([1.0, 1.0]), noise_prior=LogNormal(np.log(1e-3), 0.1)).fit(X, y)
    assert model.kernel_._priors == () and model.noise_ == pytest.approx(1e-3, rel=0.5)
    big = ExactGPRegressor(max_iter=30).fit(*_sine_data(12)[:2])
    assert big.kernel_._priors == ()


def test_lognormal_prior_with_one_location_per_element():
    prior = LogNormal([0.0, np.log(2.0)], 0.5)
    value = np.array([1.5, 3.0])
    expected = sum(
        -0.5 * ((np.log(v) - m) / 0.5) ** 2 - np.log(v) - np.log(0.5) - 0.5 * np.log(2 * np.pi)
        for v, m in zip(value, [0.0, np.log(2.0)])
    )
    assert float(prior.log_prob(value)) == pytest.approx(expected, rel=1e-12)
    assert prior.scaled(3.0).mu == pytest.approx((np.log(3.0), np.log(6.0)))
    from sparsegp.priors import prior_from_dict

    assert prior_from_dict(json.loads(json.dumps(prior.to_dict()))) == prior
    with pytest.raises(InputError, match="2 locations for 3 value"):
        SquaredExponential([1.0, 1.0, 1.0], priors={"lengthscale": prior})
    with pytest.raises(InputError, match="mu"):
        LogNormal([[0.0]], 1.0)
    with pytest.raises(InputError, match="numeric"):
        prior_from_dict({"type": "LogNormal", "mu": ["a"], "sigma": 1.0})


def test_cli_warnings_are_one_line_naming_the_command(toy_regression, tmp_path, capsys):
    from sparsegp.cli import main

    X, y = toy_regression(30, 2)
    data = _csv(
        tmp_path / "d.csv", "a,b,y\n" + "\n".join(",".join(str(float(v)) for v in [*x, t]) for x, t in zip(X, y)) + "\n"
    )
    assert main(["fit", "--data", data, "--target", "y", "--max-iter", "2", "--quiet"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("sparsegp fit: ConvergenceWarning: ExactGPRegressor: L-BFGS-B stopped after 2 iterations")
    assert "Traceback" not in err and ".py:" not in err


@pytest.mark.slow  # whole fits
def test_ivm_site_parameters_are_fitted_attributes(tmp_path):
    from sparsegp import IVMClassifier
    from sparsegp.classification.ivm import ivm_select

    rng = np.random.default_rng(3)
    X = rng.normal(size=(120, 2))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=120) > 0, 1, -1)
    model = IVMClassifier(size=25, stop=None, random_state=0).fit(X, y)
    # Against the ADF state itself, run again with the same settings.
    state = ivm_select(model.kernel_, X, y.astype(float), model.bias_, size=25, random_state=0).state
    np.testing.assert_allclose(model.site_mean_, state.m_site[:25], rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(model.site_precision_, state.sqrtp[:25] ** 2, rtol=1e-12)
    # And densely: eq. 5's weights are (K_I + Pi^-1)^-1 m_I.
    K = np.asarray(model.kernel_.K(model.X_active_))
    np.testing.assert_allclose(
        (K + np.diag(1 / model.site_precision_)) @ model.beta_, model.site_mean_, rtol=1e-8, atol=1e-10
    )
    loaded = load_model(model.save(tmp_path / "ivm.npz"))
    np.testing.assert_allclose(loaded.site_mean_, model.site_mean_, rtol=1e-12)


def test_a_selector_reports_the_scores_of_its_last_step():
    from sparsegp.kernels import SquaredExponential as SE
    from sparsegp.selection import ConditionalVariance

    X, y, _ = _sine_data(60)
    kernel, noise = SE(lengthscale=np.ones(2)), 0.05
    sel = ConditionalVariance(10).select(kernel, noise, X, y)
    assert sel.last_candidates.shape == sel.last_scores.shape == (60 - 9,)
    assert not np.isin(sel.last_candidates, sel.indices[:9]).any()
    j = int(np.argmax(sel.last_scores))
    assert sel.last_candidates[j] == sel.indices[-1] and sel.last_scores[j] == sel.history[-1]["score"]
    # Densely: the residual prior variance K_ii - K_iI K_II^-1 K_Ii given the 9 earlier inclusions.
    I, C = sel.indices[:9], sel.last_candidates
    K = np.asarray(kernel.K(X))
    residual = np.diag(K)[C] - np.einsum("ij,ji->i", K[np.ix_(C, I)], np.linalg.solve(K[np.ix_(I, I)], K[np.ix_(I, C)]))
    np.testing.assert_allclose(sel.last_scores, residual, rtol=1e-7, atol=1e-10)
