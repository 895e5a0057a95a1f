"""The variational fit's leave-one-out check (fitting/loo_rule.py) against the exact GP, and its stopping rule."""

import jax.numpy as jnp
import numpy as np
import pytest

from sparsegp.classification import svgp
from sparsegp.fitting import loo_rule
from sparsegp.likelihoods import Gaussian
from test_svgp_bound import optimal_gaussian_q, problem

NOISE = 0.05


@pytest.fixture
def at_data():
    """Z = X, a Gaussian likelihood and its optimal q: the cavities are the exact GP's leave-one-out predictive."""
    X, params, rng = problem(n=30, M=30)
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.standard_normal(30)
    params = dict(params, Z=jnp.asarray(X), mean=jnp.zeros(1), likelihood=Gaussian(NOISE))
    return X, y, optimal_gaussian_q(params, X, y, NOISE)


def test_loo_log_density_is_the_exact_gps_in_batches(at_data, monkeypatch):
    X, y, opt = at_data
    monkeypatch.setattr(loo_rule, "CHECK_BATCH", 4)  # 15 rows in four batches
    rows = np.arange(0, 30, 2)
    K = np.asarray(opt["kernel"].K(X))
    K = K + svgp.JITTER * np.mean(np.diag(K)) * np.eye(30)  # the bound's own K_uu at Z = X
    Kinv = np.linalg.inv(K + NOISE * np.eye(30))
    mean, var = y - (Kinv @ y) / np.diag(Kinv), 1.0 / np.diag(Kinv)  # Rasmussen & Williams eqs. 5.10-5.12
    dense = -0.5 * (np.log(2 * np.pi * var) + (y - mean) ** 2 / var)
    got = loo_rule.loo_log_density(svgp.FAMILY, opt, X, y, rows)
    assert got == pytest.approx(float(np.mean(dense[rows])), abs=1e-6)  # the cavities to 1e-6 (test_svgp_bound)


def test_rule_reads_every_window_and_stops_once_the_density_and_the_objective_stop_gaining(at_data):
    X, y, opt = at_data
    poor = dict(opt, q_mu=jnp.zeros_like(opt["q_mu"]))
    rule = loo_rule.LeaveOneOutRule(svgp.FAMILY, X, y, np.arange(30), 1e-6, 1.0, after=20, window=10)
    seen = [rule(i, -float(i >= 30), poor if i < 30 else opt) for i in range(1, 41)]
    assert [i for i, *_ in rule.readings] == [20, 30, 40]
    low, high = rule.readings[0][2], rule.readings[1][2]
    assert high > low + 1e-5 * 10  # the optimal q predicts the left-out rows better: no stop at 30
    assert seen.index(True) == 39 and sum(seen) == 1  # at 40: the same q and objective as at 30, no gain
    assert "leave-one-out check converged" in rule.reason and "iterations 30-40" in rule.reason


def test_rule_goes_on_while_the_density_or_the_objective_gains_enough(at_data):
    X, y, opt = at_data
    rule = loo_rule.LeaveOneOutRule(svgp.FAMILY, X, y, np.arange(30), -np.inf, 1.0, window=5)
    assert not any(rule(i, 0.0, opt) for i in range(1, 21))  # the density never gains less than -inf
    assert len(rule.readings) == 4 and rule.reason == ""
    falling = loo_rule.LeaveOneOutRule(svgp.FAMILY, X, y, np.arange(30), 1e-6, 1.0, window=5)
    assert not any(falling(i, -2.0 * i, opt) for i in range(1, 21))  # the same density, the objective falling fast
    assert falling.reason == ""
