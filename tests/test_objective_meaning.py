"""One meaning per name: ``objective_``, ``objective_name_`` and ``log_marginal_likelihood`` state and compute one
quantity for every fit, with the known noise the model was fitted with (two of the silent wrong answers
scikit-learn's tests found: the exact objective named and evaluated as the VFE bound at Z = X, known noise
forgotten; the third, a prior pushed the wrong way on the host path, is test_prior_paths.py's)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from sparsegp import ExactGPRegressor, InputError, IVMClassifier, SparseGPRegressor
from sparsegp.approximations.exact_gp import DESCRIPTION
from sparsegp.kernels import SquaredExponential


def quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


def sine(n=200):
    r = np.random.default_rng(0)
    X = r.uniform(-3, 3, (n, 1))
    return X, np.sin(2 * X[:, 0]) + 0.1 * r.normal(size=n)


def test_at_every_training_input_the_objective_is_the_exact_gp_and_says_so():
    X = np.array([[1.0], [3.0], [5.0], [6.0], [7.0], [8.0]])
    y = (X * np.sin(X)).ravel()
    m = quiet(lambda: SparseGPRegressor(random_state=0).fit(X, y))
    assert m.Z_.shape[0] == 6 and m.objective_name_ == DESCRIPTION
    assert m.log_marginal_likelihood(X=X, y=y) == pytest.approx(m.objective_, rel=1e-8)
    # and the same number as the exact GP at the fitted values
    exact = quiet(lambda: ExactGPRegressor(m.kernel_, noise=m.noise_, optimize=False).fit(X, y))
    assert exact.log_marginal_likelihood_ == pytest.approx(m.objective_, rel=1e-8)
    # with fewer inducing inputs than rows the objective is the approximation's own
    few = quiet(lambda: SparseGPRegressor(inducing=3, random_state=0).fit(X, y))
    assert few.objective_name_.startswith("VFE bound")
    assert few.log_marginal_likelihood(X=X, y=y) == pytest.approx(few.objective_, rel=1e-8)


@pytest.mark.slow  # whole fits with known noise, saved and loaded
def test_log_marginal_likelihood_keeps_the_fit_s_known_noise(tmp_path):
    X, y = sine()
    v = np.full(X.shape[0], 0.01)
    m = quiet(lambda: SparseGPRegressor(inducing=16, random_state=0).fit(X, y, noise_variance=v))
    assert m.noise_variance_given_ and m.train_noise_variance_ is not None
    assert m.log_marginal_likelihood(X=X, y=y) == pytest.approx(m.objective_, rel=1e-8)
    # the same value with the variances passed, another without them
    assert m.log_marginal_likelihood(X=X, y=y, noise_variance=v) == pytest.approx(m.objective_, rel=1e-8)
    assert m.log_marginal_likelihood(X=X, y=y, noise_variance=0.0) != pytest.approx(m.objective_, rel=1e-3)
    # other rows: the model cannot know their variances and says so
    with pytest.raises(InputError, match="fitted with a per-row noise_variance"):
        m.log_marginal_likelihood(X=X[:50], y=y[:50])
    assert np.isfinite(m.log_marginal_likelihood(X=X[:50], y=y[:50], noise_variance=v[:50]))
    # the model file keeps them
    m.save(tmp_path / "m.npz")
    again = SparseGPRegressor.load(tmp_path / "m.npz")
    assert again.log_marginal_likelihood(X=X, y=y) == pytest.approx(m.objective_, rel=1e-8)
    # a fit without known noise evaluates without, on any rows
    plain = quiet(lambda: SparseGPRegressor(inducing=16, random_state=0).fit(X, y))
    assert not plain.noise_variance_given_ and plain.train_noise_variance_ is None
    assert plain.log_marginal_likelihood(X=X, y=y) == pytest.approx(plain.objective_, rel=1e-8)


def test_exact_gp_refuses_data_for_its_log_marginal_likelihood():
    X, y = sine(40)
    m = quiet(lambda: ExactGPRegressor(max_iter=5).fit(X, y, noise_variance=0.01))
    with pytest.raises(InputError, match="uses its own training data"):
        m.log_marginal_likelihood(noise_variance=0.01)
    assert m.log_marginal_likelihood() == pytest.approx(m.log_marginal_likelihood_, rel=1e-10)


def test_ivm_kernel_search_on_too_few_rows_names_them_and_the_minimum():
    X = np.array([[0.0, 0.1], [1.0, -0.3], [2.0, 0.7], [3.0, 0.2]])
    y = np.array([0, 1, 0, 1])
    with pytest.raises(InputError, match=r"y has 4 rows \(2 of class 0 and 2 of class 1\).*needs 3 rows"):
        IVMClassifier(random_state=0).fit(X, y)
    # a given kernel needs no search: a fit
    clf = quiet(lambda: IVMClassifier(SquaredExponential(1.0), random_state=0).fit(X, y))
    np.testing.assert_allclose(clf.predict_proba(X).sum(axis=1), 1.0)
    # five rows: the folds that can hold a row out are used
    X5, y5 = np.vstack([X, [[4.0, 0.0]]]), np.array([0, 1, 0, 1, 0])
    assert quiet(lambda: IVMClassifier(random_state=0).fit(X5, y5)).kernel_history_
