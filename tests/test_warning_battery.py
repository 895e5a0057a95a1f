"""The self-reports' warnings on the cases where they must fire and on the default fits where they must not.

Must fire: SoR's degenerate variances on three points of the 3-D battery (BENCHMARKS.md, "Tiny training
sets"): they cover at least half the test targets or a CalibrationWarning says they are too narrow; yacht,
whose default fit scores a test SNLP of +0.83 with SMSE 0.05 (a few test rows far outside their error bars),
is called heavy-tailed by its leave-one-out check. DTC's too-wide error bars and a fit near a constant are
in test_calibration.py. Must not fire: the default fit on every shipped regression dataset with at most
5,000 rows, but yacht: no CalibrationWarning, NumericalWarning or CertificateWarning.
"""

import warnings

import numpy as np
import pytest

from sparsegp import CalibrationWarning, CertificateWarning, ExactGPRegressor, NumericalWarning, SparseGPRegressor
from sparsegp.datasets import load
from sparsegp.datasets.registry import DATASETS

pytestmark = pytest.mark.slow

BATTERY = {
    "sin + quadratic": (lambda X: np.sin(3 * X[:, 0]) + X[:, 1] ** 2 / 2 + X[:, 2] / 2, "normal"),
    "product": (lambda X: np.sin(2 * X[:, 0]) * np.cos(2 * X[:, 1]) + 0.3 * X[:, 2], "normal"),
    "Friedman": (lambda X: 10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2, "cube"),
}
SELF_REPORTS = (CalibrationWarning, NumericalWarning, CertificateWarning)


def _inputs(r, n, where):
    return r.normal(size=(n, 3)) if where == "normal" else r.uniform(size=(n, 3))


@pytest.mark.parametrize("name", list(BATTERY))
def test_sor_on_three_points_covers_or_warns(name):
    f, where = BATTERY[name]
    for seed in range(4):
        r = np.random.default_rng(seed)
        X, Xt = _inputs(r, 3, where), _inputs(r, 200, where)
        y, yt = f(X) + 0.1 * r.normal(size=3), f(Xt) + 0.1 * r.normal(size=200)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = SparseGPRegressor(approximation="sor", random_state=0).fit(X, y)
            mean, sd = model.predict(Xt, return_std=True)
        coverage = np.mean(np.abs(yt - mean) <= 2 * sd)
        warned = [w for w in caught if w.category is CalibrationWarning]
        assert coverage >= 0.5 or warned, (seed, coverage)


@pytest.mark.parametrize("estimator", [ExactGPRegressor, lambda: SparseGPRegressor(random_state=0)])
def test_yachts_heavy_tailed_default_fit_warns(estimator):
    X, y, _, _ = load("yacht", split=0)
    with pytest.warns(CalibrationWarning, match="heavy-tailed"):
        model = estimator().fit(X, y)
    assert model.loo_check_.tail > 0.04


SMALL = sorted(n for n, d in DATASETS.items() if d.task == "regression" and d.rows <= 5000 and n != "yacht")


@pytest.mark.parametrize("name", SMALL)
def test_the_default_fit_of_a_shipped_dataset_raises_no_self_report_warning(name):
    X, y, _, _ = load(name)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = SparseGPRegressor(random_state=0).fit(X, y)
    said = [f"{w.category.__name__}: {w.message}" for w in caught if issubclass(w.category, SELF_REPORTS)]
    assert said == [], said
    assert np.isfinite(model.loo_log_predictive_) and np.isfinite(model.gap_) and model.gap_ >= 0
