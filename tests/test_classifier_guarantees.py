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


@pytest.mark.slow  # a whole classifier fit, interrupted
def test_an_interrupted_fit_keeps_its_best_state_and_the_interrupt_reaches_the_caller():
    X, y = labels()
    seen = []
    clf = SparseGPClassifier(inducing=10, random_state=0, callback=interrupt_at(3, seen))
    with pytest.raises(KeyboardInterrupt), pytest.warns(ConvergenceWarning, match="interrupted"):
        clf.fit(X, y)
    assert clf.stop_reason_.startswith("interrupted (KeyboardInterrupt) at m = 10")
    # the best point evaluated: at least as good as the last iterate the callback saw
    assert -clf.inducing_path_[-1]["objective"] <= seen[-1][0] + 1e-9 * abs(seen[-1][0])
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

    # a cap below the 400 distinct inputs: the fit grows (at most the cap, every input would be inducing at once)
    clf = SparseGPClassifier(random_state=0, max_inducing=256, callback=interrupt_at(2, seen, second_size))
    with pytest.raises(KeyboardInterrupt), pytest.warns(ConvergenceWarning, match="interrupted"):
        clf.fit(X, y)
    first, second = sizes[0], max(sizes)
    assert clf.Z_.shape[0] == second and clf.stop_reason_.startswith(f"interrupted (KeyboardInterrupt) at m = {second}")
    assert [step["m"] for step in clf.inducing_path_] == [first, second]
    assert clf.inducing_path_[1]["objective"] >= -seen[-1][0] - 1e-9 * abs(seen[-1][0])
    assert np.all(np.isfinite(clf.predict_proba(X[:5])))


@pytest.mark.slow  # two fits of every input
def test_small_data_is_fitted_with_every_input_inducing_and_keeps_its_guarantees(tmp_path):
    """The default fit on 150 rows: every distinct input inducing at once (one record, Z the rows), its bound
    above the growth's on the same rows; interrupted, it keeps its best state; killed, its checkpoint loads."""
    from sparsegp import load_model
    from sparsegp.fitting import variational
    from sparsegp.fitting.checkpoint import Checkpoint

    X, y = labels(150)
    clf = SparseGPClassifier(random_state=0).fit(X, y)
    assert clf.stop_reason_.startswith("every distinct input") and [s["m"] for s in clf.inducing_path_] == [150]
    np.testing.assert_allclose(np.sort(clf.Z_, axis=0), np.sort(X, axis=0), rtol=1e-12)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(variational, "EVERY_INPUT_ROWS", 0)
        grown = SparseGPClassifier(random_state=0).fit(X, y)
    assert not grown.stop_reason_.startswith("every distinct") and clf.bound_ > grown.bound_
    seen = []
    interrupted = SparseGPClassifier(random_state=0, callback=interrupt_at(3, seen))
    with pytest.raises(KeyboardInterrupt), pytest.warns(ConvergenceWarning, match="interrupted"):
        interrupted.fit(X, y)
    assert interrupted.stop_reason_.startswith("interrupted (KeyboardInterrupt) at m = 150")
    # q of the best point is its sites' optimum again, to the natural steps' floor (1e-9 nats per row)
    assert -interrupted.inducing_path_[-1]["objective"] <= seen[-1][0] + 1e-8 * X.shape[0]
    assert seen[-1][1]["Z"].shape == (150, 2) and seen[-1][1]["q_sqrt"].shape == (1, 150, 150)
    assert np.all(np.isfinite(interrupted.predict_proba(X[:5])))

    def killed_at(i, value, params):
        if i == 4:
            raise Killed

    path = tmp_path / "fit.npz"
    with pytest.raises(Killed):
        SparseGPClassifier(random_state=0, checkpoint=Checkpoint(str(path), every=0), callback=killed_at).fit(X, y)
    reached = load_model(path)
    assert reached.stop_reason_.startswith("checkpoint at m = 150") and reached.bound_ < clf.bound_
    assert np.all(np.isfinite(reached.predict_proba(X[:5])))


class Killed(Exception):
    """What a killed process leaves behind, raised from the callback: the fit ends without its final save."""


@pytest.mark.slow  # three whole fits
def test_a_checkpoint_resumed_with_warm_start_reaches_the_bound_of_one_longer_fit(tmp_path):
    from sparsegp import load_model
    from sparsegp.fitting.checkpoint import Checkpoint
    from sparsegp.kernels import SquaredExponential

    X, y = labels()
    Z = X[:: X.shape[0] // 16][:16]
    # inducing inputs held at given rows and a kernel of two parameters: one optimum, which both runs must reach
    options = dict(kernel=SquaredExponential(1.0, 1.0), inducing=Z, learn_inducing=False, tol=1e-10, random_state=0)
    first = {}
    whole = SparseGPClassifier(**options, callback=lambda i, v, p: first.setdefault("whole", v) and False).fit(X, y)

    def killed_at(i, value, params):
        if i == 4:
            raise Killed

    path = tmp_path / "fit.npz"
    with pytest.raises(Killed):
        SparseGPClassifier(**options, checkpoint=Checkpoint(str(path), every=0), callback=killed_at).fit(X, y)
    reached = load_model(path)
    assert reached.stop_reason_.startswith("checkpoint at m = 16") and reached.bound_ < whole.bound_
    at_checkpoint = reached.bound_
    on = reached.set_params(
        warm_start=True, inducing=Z, callback=lambda i, v, p: first.setdefault("resumed", v) and False
    )
    resumed = on.fit(X, y)
    assert resumed.bound_ == pytest.approx(whole.bound_, rel=1e-6)
    # it went on from the checkpoint (at least as good from its first iteration), not from the start again
    assert first["resumed"] <= -at_checkpoint + 1e-9 * abs(at_checkpoint) < first["whole"]
    assert not resumed.stop_reason_.startswith("checkpoint")
    # a fit that ends leaves its fitted model in the checkpoint file
    done = SparseGPClassifier(**options, checkpoint=str(path)).fit(X, y)
    assert load_model(path).bound_ == done.bound_ and not load_model(path).stop_reason_.startswith("checkpoint")
