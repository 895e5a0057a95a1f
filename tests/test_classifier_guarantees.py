"""SparseGPClassifier keeps the regressors' guarantees of a fit: a KeyboardInterrupt keeps the best state reached (the
classifier is fitted with it, says "interrupted", warns and re-raises), the callback sees the parameters in the
inputs' own units, and a stage that stops short of convergence warns."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from sparsegp import SparseGPClassifier


def labels(n=300, seed=0):
    r = np.random.default_rng(seed)
    X = r.normal(size=(n, 2)) * [3.0, 0.5]  # unequal spreads: the fit's units differ from X's
    y = np.where(np.sin(X[:, 0]) + 2 * X[:, 1] + 0.3 * r.normal(size=n) > 0, "yes", "no")
    return X, y


def interrupt_at(iteration, seen, when=lambda params: True):
    def callback(i, value, params):
        if when(params):
            seen.append((value, params))
            if len(seen) == iteration:
                raise KeyboardInterrupt

    return callback


def test_an_interrupted_fit_keeps_its_best_state_and_the_interrupt_reaches_the_caller():
    X, y = labels()
    seen = []
    clf = SparseGPClassifier(inducing=10, random_state=0, callback=interrupt_at(3, seen))
    with pytest.raises(KeyboardInterrupt), pytest.warns(ConvergenceWarning, match="interrupted"):
        clf.fit(X, y)
    assert clf.stop_reason_.startswith("interrupted (KeyboardInterrupt) at m = 10")
    # the best point evaluated: at least as good as the last iterate the callback saw
    assert -clf.inducing_path_[-1]["bound"] <= seen[-1][0] + 1e-9 * abs(seen[-1][0])
    p = clf.predict_proba(X[:5])
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)
    # the callback's parameters are in X's units: its inducing inputs are rows of X's scale
    Z = np.asarray(seen[0][1]["Z"])
    assert Z.shape == (10, 2) and np.std(Z[:, 0]) > 3 * np.std(Z[:, 1])
    finished = SparseGPClassifier(inducing=10, random_state=0).fit(X, y)
    assert not finished.stop_reason_.startswith("interrupted")


def test_a_stage_that_stops_at_max_iter_warns():
    X, y = labels()
    with pytest.warns(ConvergenceWarning, match=r"L-BFGS-B stopped after 3 iterations without converging.*max_iter"):
        SparseGPClassifier(inducing=10, max_iter=3, random_state=0).fit(X, y)


def test_a_callback_that_stops_the_stage_does_not_warn(recwarn):
    X, y = labels()
    SparseGPClassifier(inducing=10, random_state=0, callback=lambda i, v, p: i >= 2).fit(X, y)
    assert not [w for w in recwarn if issubclass(w.category, ConvergenceWarning)]


@pytest.mark.slow  # a growth to its second size
def test_an_auto_fit_interrupted_in_its_second_size_keeps_that_sizes_best_state():
    X, y = labels(400)
    seen, sizes = [], []

    def second_size(params):
        sizes.append(params["Z"].shape[0])
        return sizes[-1] > sizes[0]

    clf = SparseGPClassifier(random_state=0, callback=interrupt_at(2, seen, second_size))
    with pytest.raises(KeyboardInterrupt), pytest.warns(ConvergenceWarning, match="interrupted"):
        clf.fit(X, y)
    first, second = sizes[0], max(sizes)
    assert clf.Z_.shape[0] == second and clf.stop_reason_.startswith(f"interrupted (KeyboardInterrupt) at m = {second}")
    assert [step["m"] for step in clf.inducing_path_] == [first, second]
    assert clf.inducing_path_[1]["bound"] >= -seen[-1][0] - 1e-9 * abs(seen[-1][0])
    assert np.all(np.isfinite(clf.predict_proba(X[:5])))
