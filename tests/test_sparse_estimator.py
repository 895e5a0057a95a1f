import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sparsegp import ExactGPRegressor, InputError, ModelFileError, SparseGPRegressor, load_model
from sparsegp.kernels import SquaredExponential
from sparsegp.options import Joint


@pytest.mark.slow
@pytest.mark.parametrize("approximation", ["vfe", "dtc", "fitc", "sor"])
def test_all_data_inducing_estimator_equals_exact(toy_regression, approximation, rng):
    X, y = toy_regression(30, 2)
    k = SquaredExponential([1.0, 1.5], 1.0)
    exact = ExactGPRegressor(k, noise=0.05, optimize=False).fit(X, y)
    prediction = "augmented" if approximation == "sor" else "standard"
    sparse = SparseGPRegressor(
        k, approximation=approximation, inducing=X, noise=0.05, optimize=False, jitter=1e-12, prediction=prediction
    ).fit(X, y)
    assert sparse.objective_ == pytest.approx(exact.log_marginal_likelihood_, rel=1e-6)
    Xs = rng.normal(size=(10, 2))
    m1, s1 = exact.predict(Xs, return_std=True, include_noise=False)
    m2, s2 = sparse.predict(Xs, return_std=True, include_noise=False)
    np.testing.assert_allclose(m2, m1, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(s2, s1, rtol=1e-5, atol=1e-7)


@pytest.mark.slow
def test_fit_optimises_inducing_inputs_and_improves_bound(toy_regression):
    X, y = toy_regression(80, 2)
    fixed = SparseGPRegressor(inducing=8, optimize="hyperparameters", random_state=0).fit(X, y)
    free = SparseGPRegressor(inducing=8, optimize=True, random_state=0).fit(X, y)
    np.testing.assert_array_equal(fixed.Z_, X[fixed.inducing_indices_])
    assert not np.allclose(free.Z_, X[free.inducing_indices_])
    assert free.objective_ > fixed.objective_
    exact = ExactGPRegressor().fit(X, y)
    assert free.objective_ <= exact.log_marginal_likelihood_ + 1e-6


@pytest.mark.parametrize("prediction", ["standard", "augmented", "nystrom"])
@pytest.mark.slow
def test_save_load_round_trip(toy_regression, prediction, tmp_path, rng):
    X, y = toy_regression(50, 2)
    m = SparseGPRegressor(inducing=6, prediction=prediction, random_state=0, schedule=Joint(max_iter=30)).fit(
        X, 2 * y + 1
    )
    path = m.save(tmp_path / "m")
    m2 = load_model(path)
    Xs = rng.normal(size=(7, 2))
    a, va = m.predict_var(Xs, include_noise=False)
    b, vb = m2.predict_var(Xs, include_noise=False)
    np.testing.assert_allclose(a, b, rtol=1e-10)
    # Hyper-parameters travel as positive values in JSON: the softplus and its inverse may move raw by one ulp, which
    # the cancellation k_** - k^T Q~^-1 k of the O(nm) predictions amplifies to about 1e-10.
    np.testing.assert_allclose(va, vb, rtol=1e-8)
    assert m2.objective_ == m.objective_


@pytest.mark.slow
def test_corrupt_sparse_model_is_refused(toy_regression, tmp_path):
    import json

    X, y = toy_regression(30, 2)
    m = SparseGPRegressor(inducing=5, schedule=Joint(max_iter=10)).fit(X, y)
    path = m.save(tmp_path / "m.npz")
    with np.load(path, allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files}
    meta = json.loads(str(arrays.pop("__metadata__")))
    bad = dict(arrays)
    bad["posterior_Luu"] = bad["posterior_Luu"].T.copy()  # upper triangular
    np.savez(tmp_path / "b1.npz", __metadata__=np.array(json.dumps(meta)), **bad)
    with pytest.raises(ModelFileError, match="lower triangular"):
        load_model(tmp_path / "b1.npz")
    bad = dict(arrays)
    bad["posterior_c"] = bad["posterior_c"][:-1]
    np.savez(tmp_path / "b2.npz", __metadata__=np.array(json.dumps(meta)), **bad)
    with pytest.raises(ModelFileError, match="posterior_c"):
        load_model(tmp_path / "b2.npz")
    meta2 = dict(meta, params=dict(meta["params"], approximation="magic"))
    np.savez(tmp_path / "b3.npz", __metadata__=np.array(json.dumps(meta2)), **arrays)
    with pytest.raises(ModelFileError, match="approximation must be one of"):
        load_model(tmp_path / "b3.npz")


@pytest.mark.parametrize(
    "old,new",
    [
        ((True, False), "hyperparameters"),
        ((True, True), True),
        (("inducing", True), "inducing"),
        ((False, True), False),
    ],
)
def test_format_1_files_with_optimize_inducing_load_as_one_optimize_option(toy_regression, tmp_path, old, new):
    import json

    X, y = toy_regression(30, 2)
    m = SparseGPRegressor(inducing=5, optimize=False).fit(X, y)
    path = m.save(tmp_path / "m.npz")
    with np.load(path, allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files}
    meta = json.loads(str(arrays.pop("__metadata__")))
    assert meta["format_version"] == 5 and "optimize_inducing" not in meta["params"]
    meta["format_version"] = 1
    meta["params"].update(optimize=old[0], optimize_inducing=old[1])
    np.savez(tmp_path / "v1.npz", __metadata__=np.array(json.dumps(meta)), **arrays)
    loaded = load_model(tmp_path / "v1.npz")
    assert loaded.optimize == new and "optimize_inducing" not in loaded.get_params()
    np.testing.assert_array_equal(loaded.predict(X), m.predict(X))
    meta["params"]["optimize_inducing"] = "yes"
    np.savez(tmp_path / "bad.npz", __metadata__=np.array(json.dumps(meta)), **arrays)
    with pytest.raises(ModelFileError, match="optimize_inducing' must be a bool"):
        load_model(tmp_path / "bad.npz")


@pytest.mark.slow  # whole fits
def test_inducing_given_as_training_indices(toy_regression):
    X, y = toy_regression(40, 2)
    idx = np.array([3, 7, 11, 20])
    m = SparseGPRegressor(inducing=idx, optimize="hyperparameters", schedule=Joint(max_iter=10)).fit(X, y)
    np.testing.assert_array_equal(m.inducing_indices_, idx)
    np.testing.assert_array_equal(m.Z_, X[idx])
    with pytest.raises(InputError, match="distinct integers in 0..39"):
        SparseGPRegressor(inducing=np.array([1, 1, 2])).fit(X, y)
    with pytest.raises(InputError, match="distinct integers"):
        SparseGPRegressor(inducing=np.array([0, 40])).fit(X, y)


@pytest.mark.slow
def test_bad_options_are_named(toy_regression):
    X, y = toy_regression(20, 2)
    with pytest.raises(InputError, match="approximation must be one of"):
        SparseGPRegressor(approximation="ssgp").fit(X, y)
    with pytest.raises(InputError, match="prediction must be one of"):
        SparseGPRegressor(prediction="magic").fit(X, y)
    with pytest.raises(InputError, match="use approximation 'vfe', 'dtc' or 'sor'"):
        SparseGPRegressor(approximation="fitc", prediction="augmented").fit(X, y)
    with pytest.raises(InputError, match="at least one inducing point"):
        SparseGPRegressor(inducing=0).fit(X, y)
    with pytest.warns(UserWarning, match="inducing=50 exceeds the 20 distinct training inputs; using all of them"):
        assert SparseGPRegressor(inducing=50, schedule=Joint(max_iter=3)).fit(X, y).Z_.shape == (20, 2)
    with pytest.raises(InputError, match="inducing has 3 features"):
        SparseGPRegressor(inducing=np.zeros((4, 3))).fit(X, y)
    with pytest.raises(InputError, match="inducing contains"):
        SparseGPRegressor(inducing=np.full((4, 2), np.nan)).fit(X, y)
    with pytest.raises(InputError, match="jitter must be strictly positive"):
        SparseGPRegressor(jitter=-1.0).fit(X, y)
    m = SparseGPRegressor(inducing=5, prediction="augmented", schedule=Joint(max_iter=5)).fit(X, y)
    with pytest.raises(InputError, match="return_cov is not available"):
        m.predict(X, return_cov=True)


@pytest.mark.slow  # whole fits; the algebra is checked against dense definitions (test_approximations.py)
def test_nystrom_negative_variances_are_reported_not_hidden():
    r = np.random.default_rng(0)
    X = r.uniform(-1, 1, size=(200, 1))
    y = np.sin(3 * X[:, 0])
    m = SparseGPRegressor(
        SquaredExponential([0.3], 1.0),
        inducing=4,
        noise=1e-4,
        optimize=False,
        prediction="nystrom",
        normalize_y=False,
        random_state=0,
    ).fit(X, y)
    Xs = np.linspace(-1, 1, 101)[:, None]
    mean, var = m.predict_var(Xs, include_noise=False)
    assert np.min(var) < 0
    with pytest.raises(InputError, match="Nyström predictive variances are negative"):
        m.predict(Xs, return_std=True, include_noise=False)


@pytest.mark.slow
def test_pipeline_and_grid_search(toy_regression):
    X, y = toy_regression(60, 2)
    pipe = make_pipeline(
        StandardScaler(), SparseGPRegressor(inducing=10, random_state=0, schedule=Joint(max_iter=40))
    ).fit(X, y)
    assert pipe.score(X, y) > 0.8
    gs = GridSearchCV(
        SparseGPRegressor(inducing=8, random_state=0, schedule=Joint(max_iter=20)),
        {"approximation": ["vfe", "fitc"]},
        cv=2,
    )
    gs.fit(X, y)
    # the search's scores are those of independently cloned and fitted estimators with each setting
    for approximation, score in zip(gs.cv_results_["param_approximation"], gs.cv_results_["mean_test_score"]):
        again = SparseGPRegressor(inducing=8, random_state=0, approximation=approximation, schedule=Joint(max_iter=20))
        assert cross_val_score(again, X, y, cv=2).mean() == pytest.approx(score, rel=1e-9)
    assert gs.best_estimator_.approximation == gs.best_params_["approximation"]


@pytest.mark.slow  # whole fits; the algebra is checked against dense definitions (test_approximations.py)
def test_chunk_size_does_not_change_the_fit(toy_regression):
    X, y = toy_regression(70, 2)
    a = SparseGPRegressor(inducing=7, optimize=False, random_state=1, schedule=Joint(chunk_size=9)).fit(X, y)
    b = SparseGPRegressor(inducing=7, optimize=False, random_state=1, schedule=Joint(chunk_size=None)).fit(X, y)
    assert a.objective_ == pytest.approx(b.objective_, rel=1e-10)


@pytest.mark.slow  # three whole fits
def test_optimize_inducing_only_keeps_kernel_and_noise(toy_regression):
    """Titsias's Boston experiment: inducing inputs optimised at fixed hyper-parameters and noise."""
    X, y = toy_regression(80, 2)
    k = SquaredExponential([0.8, 1.2], 1.3)
    common = dict(inducing=8, noise=0.07, normalize_y=False, random_state=0, max_iter=100)
    fixed = SparseGPRegressor(k, optimize=False, **common).fit(X, y)
    moved = SparseGPRegressor(k, optimize="inducing", **common).fit(X, y)
    np.testing.assert_allclose(np.asarray(moved.kernel_.lengthscale), [0.8, 1.2], rtol=1e-12)
    assert float(moved.kernel_.variance) == pytest.approx(1.3, rel=1e-12) and moved.noise_ == pytest.approx(0.07)
    assert not np.allclose(moved.Z_, fixed.Z_) and moved.objective_ > fixed.objective_ + 1.0
    # "hyperparameters" learns the kernel and noise and leaves the inducing inputs where they started
    hyper = SparseGPRegressor(k, optimize="hyperparameters", **common).fit(X, y)
    np.testing.assert_array_equal(hyper.Z_, fixed.Z_)
    assert hyper.noise_ != pytest.approx(0.07) and hyper.objective_ > fixed.objective_
    with pytest.raises(InputError, match="optimize must be True, False or one of"):
        SparseGPRegressor(k, optimize="all", **common).fit(X, y)
    with pytest.raises(TypeError, match="optimize_inducing"):
        SparseGPRegressor(k, optimize_inducing=False, **common)


@pytest.mark.slow  # whole fits; the algebra is checked against dense definitions (test_approximations.py)
def test_default_predictive_is_of_the_targets(toy_regression):
    """predict(return_std=True) gives the std of y (noise included), as scikit-learn's GPR with a WhiteKernel."""
    X, y = toy_regression(80, 2)
    m = SparseGPRegressor(inducing=10, random_state=0, schedule=Joint(max_iter=20)).fit(X, y)
    Xs = np.random.default_rng(1).normal(size=(15, 2))
    _, std = m.predict(Xs, return_std=True)
    _, latent = m.predict(Xs, return_std=True, include_noise=False)
    np.testing.assert_allclose(std**2, latent**2 + m.noise_ * m.y_std_**2, rtol=1e-10)
    np.testing.assert_allclose(m.predict_var(Xs)[1], std**2, rtol=1e-10)
