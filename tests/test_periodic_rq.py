"""The periodic and rational quadratic kernels against scikit-learn's, their scales, and a periodic fit."""

import numpy as np
import pytest
from sklearn.gaussian_process import kernels as sk

from sparsegp import ExactGPRegressor, InputError
from sparsegp.cli import _kernel
from sparsegp.kernels import Matern32, Periodic, RationalQuadratic, SquaredExponential
from sparsegp.kernels.distance import narrow
from sparsegp.metrics import smse


def test_one_input_equals_scikit_learns_kernels():
    rng = np.random.default_rng(0)
    X, Z = rng.normal(size=(6, 1)), 3 * rng.normal(size=(5, 1))
    np.testing.assert_allclose(
        np.asarray(Periodic(1.7, 0.8, 2.0).K(X, Z)), 2.0 * sk.ExpSineSquared(0.8, 1.7)(X, Z), rtol=1e-12
    )
    np.testing.assert_allclose(
        np.asarray(RationalQuadratic(0.9, 1.5, alpha=0.3).K(X, Z)),
        1.5 * sk.RationalQuadratic(0.9, 0.3)(X, Z),
        rtol=1e-12,
    )


def test_several_inputs_are_a_product_over_inputs_and_rq_tends_to_the_se():
    rng = np.random.default_rng(1)
    X, Z = rng.normal(size=(4, 2)), rng.normal(size=(3, 2))
    k = Periodic(period=[1.2, 3.0], lengthscale=[0.5, 2.0], variance=0.7)
    one = [Periodic(p, ell).K(X[:, [d]], Z[:, [d]]) for d, (p, ell) in enumerate([(1.2, 0.5), (3.0, 2.0)])]
    np.testing.assert_allclose(np.asarray(k.K(X, Z)), 0.7 * np.asarray(one[0]) * np.asarray(one[1]), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(k.K(X, X + [[2.4, -3.0]])), np.asarray(k.K(X)), rtol=1e-12)  # a period on
    se = SquaredExponential([0.6, 1.4]).K(X, Z)
    np.testing.assert_allclose(np.asarray(RationalQuadratic([0.6, 1.4], alpha=1e8).K(X, Z)), np.asarray(se), rtol=1e-7)


@pytest.mark.parametrize("seed", range(3))
def test_the_periodogram_start_is_near_the_period(seed):
    X, y, _, _, period = periodic_problem(seed)
    start = Periodic.from_data(X, y)
    assert start.period == pytest.approx(period, rel=0.03) and start.variance == pytest.approx(np.var(y))
    two = Periodic.from_data(np.column_stack([X[:, 0], 2.0 * X[:, 0]]), y)
    np.testing.assert_allclose(two.period, [start.period, 2 * start.period], rtol=1e-2)
    with pytest.raises(InputError, match="column 1 is constant"):
        Periodic.from_data(np.column_stack([X[:, 0], np.ones(80)]), y)
    with pytest.raises(InputError, match="targets are constant"):
        Periodic.from_data(X, np.ones(80))


def test_bad_shapes_are_named():
    with pytest.raises(InputError, match="Periodic has 3 values of period but the inputs have 2"):
        Periodic(period=[1.0, 2.0, 3.0]).check_input_dim(2)
    with pytest.raises(InputError, match="alpha must be a scalar"):
        RationalQuadratic(alpha=[1.0, 2.0])


def test_the_length_scales_of_every_part_decide_whether_the_inputs_are_wide():
    """A length-scale far below its column's spread in any part of a sum makes the inputs wide (it was found by
    the parameter name 'lengthscale', which a sum's 'k0.lengthscale' escaped)."""
    X = np.random.default_rng(2).uniform(0, 1e4, size=(20, 2))
    tiny = SquaredExponential([1e-2, 1.0])
    assert not narrow(tiny, X) and not narrow(tiny + Matern32(1.0), X) and not narrow(Periodic(1.0) * tiny, X)
    assert narrow(SquaredExponential(1e4) + Periodic(1.0, 1e-3), X)  # a period is not a distance's scale


def test_the_command_line_builds_both_kernels_at_the_columns_spread():
    X = np.random.default_rng(3).normal(size=(50, 2)) * [2.0, 5.0]
    rq, periodic = _kernel("rq", X), _kernel("periodic", X)
    np.testing.assert_allclose(rq.lengthscale, np.std(X, axis=0))
    np.testing.assert_allclose(periodic.period, np.std(X, axis=0))


def periodic_problem(seed=0):
    """sin(2 pi x / 1.3) + 0.4 sin(4 pi x / 1.3) observed over 4 periods, tested over the next 2."""
    rng = np.random.default_rng(seed)
    period = 1.3
    X = np.sort(rng.uniform(0, 4 * period, size=80))[:, None]
    Xt = np.linspace(4 * period, 6 * period, 200)[:, None]

    def f(x):
        return np.sin(2 * np.pi * x[:, 0] / period) + 0.4 * np.sin(4 * np.pi * x[:, 0] / period)

    return X, f(X) + 0.1 * rng.normal(size=80), Xt, f(Xt), period


@pytest.mark.slow  # two whole fits; the figures are in BENCHMARKS.md (benchmarks/periodic_extrapolation.py)
@pytest.mark.filterwarnings("ignore")
def test_a_periodic_fit_extrapolates_where_the_se_cannot():
    X, y, Xt, ft, period = periodic_problem()
    periodic = ExactGPRegressor(Periodic.from_data(X, y)).fit(X, y)
    se = ExactGPRegressor().fit(X, y)
    assert smse(ft, periodic.predict(Xt)) <= 0.1 * smse(ft, se.predict(Xt))
    assert periodic.kernel_.period == pytest.approx(period, rel=0.01)
