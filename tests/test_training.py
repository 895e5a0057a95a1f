"""The L-BFGS-B driver's handling of a failed line search (``training._after_line_search_failures``)."""

from types import SimpleNamespace

import numpy as np

from sparsegp.fitting import training

OPTIONS = {"maxiter": 100, "ftol": 1e-9}


def scripted(*results):
    """A ``run(z, maxiter)`` that returns the given results in turn and records its calls."""
    calls, queue = [], list(results)

    def run(z, maxiter):
        calls.append((np.array(z), maxiter))
        return SimpleNamespace(**queue.pop(0))

    return run, calls


def test_a_fresh_start_that_goes_on_replaces_the_failed_run():
    run, calls = scripted({"x": np.array([0.5]), "fun": 2.0, "nit": 30, "message": "CONVERGENCE", "success": True})
    failed = SimpleNamespace(x=np.array([1.0]), fun=5.0, nit=40, message="ABNORMAL: ", success=False)
    res = training._after_line_search_failures(run, failed, OPTIONS)
    assert res.success and res.fun == 2.0 and res.nit == 70
    assert calls[0][1] == 60 and calls[0][0][0] == 1.0  # from the failed point, with the iterations left


def test_a_fresh_start_without_progress_counts_as_converged_and_keeps_the_better_point():
    run, _ = scripted({"x": np.array([1.1]), "fun": 5.0 + 1e-12, "nit": 0, "message": "ABNORMAL: ", "success": False})
    failed = SimpleNamespace(x=np.array([1.0]), fun=5.0, nit=40, message="ABNORMAL: ", success=False)
    res = training._after_line_search_failures(run, failed, OPTIONS)
    assert res.success and "no relative progress" in res.message
    assert res.fun == 5.0 and res.x[0] == 1.0 and res.nit == 40


def test_a_line_search_that_fails_before_any_step_stays_a_failure():
    again = {"x": np.array([1.0]), "fun": 5.0, "nit": 0, "message": "ABNORMAL: ", "success": False}
    run, calls = scripted(dict(again), dict(again))
    failed = SimpleNamespace(x=np.array([1.0]), fun=5.0, nit=0, message="ABNORMAL: ", success=False)
    res = training._after_line_search_failures(run, failed, OPTIONS)
    assert not res.success and len(calls) == training.LINE_SEARCH_RESTARTS
