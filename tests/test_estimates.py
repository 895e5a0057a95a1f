"""The fit's estimate of its own wall time (:mod:`sparsegp.fitting.estimate`): when it is made, what it assumes,
what it says; the clock only reads (fit_digest, BENCHMARKS.md: the same models with it)."""

import types

import numpy as np
import pytest

import sparsegp.fitting.estimate as estimate
from sparsegp import SparseGPClassifier, SparseGPRegressor
from sparsegp.fitting.estimate import FINAL_FACTOR, ITERATIONS_PRIOR, SMALL_CHOLESKY, Clock
from sparsegp.fitting.growth import Step
from sparsegp.options import Auto


@pytest.fixture
def clock_at(monkeypatch):
    """A settable clock for :mod:`sparsegp.fitting.estimate`, and a matrix product rate of 1e9 flops/s."""
    now = {"t": 0.0}
    monkeypatch.setattr(estimate, "time", types.SimpleNamespace(perf_counter=lambda: now["t"]))
    monkeypatch.setattr(estimate, "product_rate", lambda: 1e9)
    return now


def config(verbose=False):
    return types.SimpleNamespace(tol=None, verbose=verbose, max_iter=500)


def step(m, lower, next_start, n_iter=20):
    return Step(m, lower, lower, lower + 1.0, n_iter, 1.0, lower - 1.0, next_start)


def test_a_fixed_set_is_estimated_at_its_third_iteration_from_the_prior(clock_at):
    n, m = 100, 10
    clock = Clock(config(), n, None, 0.0)
    clock.watch(np.zeros((m, 1)), None, [])
    for t in (1.0, 1.5, 2.0):
        clock_at["t"] = t
        clock(0, -1.0, None)
    [first] = clock.estimates
    assert n**3 / 3 < SMALL_CHOLESKY  # the certificate's factorisation of 100 rows is left out of the estimate
    expected = 2.0 + (ITERATIONS_PRIOR - 3) * 0.5 + 2 * 0.5
    assert first.iteration == 3 and first.final_m == m
    assert first.total == pytest.approx(expected, rel=1e-12)
    assert first.message.startswith("m = 10, iteration 3: about")


def test_the_estimate_of_a_large_fit_holds_the_certificates_factorisation(clock_at):
    n, m = 3000, 10
    clock = Clock(config(), n, None, 0.0)
    clock.watch(np.zeros((m, 1)), None, [])
    for t in (1.0, 1.5, 2.0):
        clock_at["t"] = t
        clock(0, -1.0, None)
    cholesky = n**3 / 3 / (0.5 * 1e9)  # flops at CHOLESKY_SHARE of the (patched) product rate
    assert n**3 / 3 > SMALL_CHOLESKY
    assert clock.estimates[0].total == pytest.approx(2.0 + (ITERATIONS_PRIOR - 3) * 0.5 + cholesky + 2 * 0.5)


def run(clock, now, m, path, start, iterations, per, first_cost=1.0):
    """One run of ``iterations`` at ``per`` seconds each from ``start``; returns its end."""
    now["t"] = start
    clock.watch(np.zeros((m, 1)), None, path)
    t = start + first_cost
    for _ in range(iterations):
        now["t"] = t
        clock(0, -1.0, None)
        t += per
    return t - per


def test_a_growth_is_first_estimated_when_its_first_size_ends(clock_at):
    n = 5000
    clock = Clock(config(), n, 1024, 0.0)
    end = run(clock, clock_at, 256, [], 5.0, 20, 0.1)
    assert clock.estimates == []  # nothing before the first size's run ends
    promising = [step(256, 0.0, 0.05 * n)]  # the doubling to 512 promises 0.05 nats per row
    run(clock, clock_at, 512, promising, end + 2.0, 0, 0.0)
    [first] = clock.estimates
    assert first.m == 512 and first.final_m == 1024 and first.elapsed == pytest.approx(end + 2.0)
    assert (
        "max_inducing=512 would stop after this size" in first.message and "promised 0.05 nats per row" in first.message
    )
    # the sizes to come take what the first took per run, more per iteration at larger m: 512 one run, 1024 three
    per_512 = 0.1 * 2**1.5
    assert first.total - first.elapsed > 20 * per_512 + FINAL_FACTOR * 20 * per_512 * 2**1.5


def test_a_doubling_that_promised_little_is_assumed_the_last(clock_at):
    n = 5000
    clock = Clock(config(), n, 1024, 0.0)
    end = run(clock, clock_at, 256, [], 5.0, 20, 0.1)
    run(clock, clock_at, 512, [step(256, 0.0, 0.001 * n)], end + 2.0, 0, 0.0)
    [first] = clock.estimates
    assert first.final_m == 512 and "assuming" not in first.message


def test_a_slower_machine_is_estimated_slower(clock_at):
    totals = []
    for per in (0.1, 0.3):
        clock = Clock(config(), 5000, 1024, 0.0)
        end = run(clock, clock_at, 256, [], 5.0, 20, per)
        run(clock, clock_at, 512, [step(256, 0.0, 250.0)], end + 2.0, 0, 0.0)
        totals.append(clock.estimates[0].total - clock.estimates[0].elapsed)
    assert totals[1] > 1.5 * totals[0]  # three times the iterations' share; the start and end costs held


@pytest.mark.slow  # a growth through two sizes
def test_an_auto_fit_keeps_and_prints_its_estimates(capsys):
    r = np.random.default_rng(1)
    X = r.uniform(-3, 3, size=(2500, 2))
    y = np.sin(3 * X[:, 0]) * np.cos(3 * X[:, 1]) + 0.01 * r.normal(size=2500)
    model = SparseGPRegressor(inducing=Auto(max_inducing=512), random_state=0, verbose=True).fit(X, y)
    assert model.estimates_  # a second run (another size, or this one converged further) started
    for e in model.estimates_:
        assert e["total"] >= e["elapsed"] > 0 and e["message"].startswith(f"m = {e['m']:,}")
    assert model.estimates_[0]["iteration"] == 0  # made when the first size's run ended, at the next run's start
    assert model.estimates_[0]["message"] in capsys.readouterr().err


def test_a_variational_fit_keeps_and_prints_its_estimates(capsys):
    """The classifier's fit (the variational fit of every non-Gaussian likelihood) runs the same clock, without
    the exact certificate's end: a fixed set is estimated at its third L-BFGS iteration."""
    r = np.random.default_rng(0)
    X = r.uniform(-3, 3, size=(300, 2))
    y = (np.sin(X[:, 0]) + 0.3 * r.normal(size=300) > 0).astype(int)
    clf = SparseGPClassifier(inducing=12, random_state=0, verbose=True).fit(X, y)
    assert clf.estimates_ and clf.estimates_[0]["iteration"] == 3 and clf.estimates_[0]["final_m"] == 12
    for e in clf.estimates_:
        assert e["total"] >= e["elapsed"] > 0 and e["message"].startswith("m = 12")
    assert clf.estimates_[0]["message"] in capsys.readouterr().err
