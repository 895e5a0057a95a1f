"""A KeyboardInterrupt during ``fit`` keeps the best state reached: the estimator predicts, ``stop_reason_`` says
"interrupted", a ConvergenceWarning says so, and the KeyboardInterrupt reaches the caller.

Raised from the fit's callback (deterministic): at a fixed m, in the exact GP, and in the second size of an
``inducing="auto"`` fit; and by SIGINT sent to a process that fits.
"""

import signal
import subprocess
import sys

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from sparsegp import ExactGPRegressor, SparseGPRegressor
from sparsegp.options import Auto


def problem(n, seed=0, frequency=1.0):
    r = np.random.default_rng(seed)
    X = r.uniform(-3, 3, size=(n, 2))
    return X, np.sin(frequency * X[:, 0]) * np.cos(frequency * X[:, 1]) + 0.05 * r.normal(size=n)


def interrupt_at(iteration, values, when=lambda params: True):
    """A callback that records the objective and raises KeyboardInterrupt at its ``iteration``-th call where ``when``."""

    def callback(i, value, params):
        if when(params):
            values.append(value)
            if len(values) == iteration:
                raise KeyboardInterrupt

    return callback


@pytest.mark.parametrize("estimator", ["sparse", "exact"])
def test_an_interrupted_fit_keeps_its_best_iterate_and_the_interrupt_reaches_the_caller(estimator):
    X, y = problem(120)
    values = []
    options = {"callback": interrupt_at(4, values)}
    model = SparseGPRegressor(inducing=15, random_state=0, **options) if estimator == "sparse" else None
    model = model or ExactGPRegressor(**options)
    with pytest.raises(KeyboardInterrupt), pytest.warns(ConvergenceWarning, match="interrupted"):
        model.fit(X, y)
    assert model.stop_reason_.startswith("interrupted (KeyboardInterrupt)")
    assert len(values) == 4 and model.n_iter_ >= 4
    # the best point evaluated: at least as good as the last iterate the callback saw (no priors here)
    objective = model.objective_ if estimator == "sparse" else model.log_marginal_likelihood_
    assert objective >= -values[-1] - 1e-9 * abs(values[-1])
    assert np.all(np.isfinite(model.predict(X[:5], return_std=True)[1]))
    finished = type(model)(**dict(model.get_params(), callback=None)).fit(X, y)
    assert finished.stop_reason_ is None or not finished.stop_reason_.startswith("interrupted")


@pytest.mark.slow  # a growth to its second size
def test_an_auto_fit_interrupted_in_its_second_size_keeps_that_sizes_best_iterate():
    r = np.random.default_rng(1)
    X = r.uniform(-3, 3, size=(2500, 2))
    y = np.sin(3 * X[:, 0]) * np.cos(3 * X[:, 1]) + 0.01 * r.normal(size=2500)
    sizes, values = [], []

    def second_size(params):
        sizes.append(params["Z"].shape[0] if "Z" in params else 0)
        return sizes[-1] > 256

    model = SparseGPRegressor(
        inducing=Auto(max_inducing=512), random_state=0, callback=interrupt_at(3, values, second_size)
    )
    with pytest.raises(KeyboardInterrupt), pytest.warns(ConvergenceWarning, match="interrupted"):
        model.fit(X, y)
    assert 256 in sizes and len(values) == 3  # the first size was fitted, the second interrupted
    m = model.Z_.shape[0]
    assert m > 256 and model.stop_reason_.startswith(f"interrupted (KeyboardInterrupt) at m = {m}")
    assert [step["m"] for step in model.inducing_path_] == [256]
    assert model.objective_ >= -values[-1] - 1e-9 * abs(values[-1]) and np.isfinite(model.gap_)
    assert np.all(np.isfinite(model.predict(X[:5], return_std=True)[1]))


CHILD = """
import signal
import time

import numpy as np
from sparsegp import SparseGPRegressor
r = np.random.default_rng(0)
X = r.uniform(-3, 3, size=(3000, 4))
y = np.sin(2 * X[:, 0]) * np.cos(2 * X[:, 1]) + X[:, 2] * X[:, 3] + 0.05 * r.normal(size=3000)


def slowly(iteration, value, params):  # the parent signals once the optimiser runs, which then waits for it
    if iteration == 2:
        print("iterating", flush=True)
    time.sleep(0.2)


model = SparseGPRegressor(inducing=200, random_state=0, callback=slowly)
# a process started in the background by a shell without job control inherits SIGINT ignored, and Python then
# installs no KeyboardInterrupt handler: install it, as an interactive session has it
signal.signal(signal.SIGINT, signal.default_int_handler)
print("fitting", flush=True)
try:
    model.fit(X, y)
    print("finished", flush=True)
except KeyboardInterrupt:
    print("caught", model.stop_reason_, model.n_iter_, float(model.predict(X[:1])[0]), flush=True)
"""


@pytest.mark.slow  # a process of its own
def test_sigint_to_a_fitting_process_leaves_a_fitted_model_and_the_interrupt():
    child = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "fitting"
    assert child.stdout.readline().strip() == "iterating"  # the optimiser runs: interrupt it there
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=300)  # a bound on a hang, not on speed: the machine may be shared
    line = out.strip().splitlines()[-1]
    assert line.startswith("caught interrupted (KeyboardInterrupt)"), (out, err[-2000:])
    assert int(line.split()[-2]) > 0 and np.isfinite(float(line.split()[-1]))
    assert "ConvergenceWarning" in err and "interrupted" in err
