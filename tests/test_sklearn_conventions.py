"""scikit-learn's own estimator checks, each run as a separate test."""

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from sparsegp import ExactGPRegressor

# Checks skipped, with the reason (kept empty unless a check cannot apply to a GP).
EXPECTED_FAILED = {}


@parametrize_with_checks([ExactGPRegressor(max_iter=15)], expected_failed_checks=lambda est: EXPECTED_FAILED)
def test_sklearn_check(estimator, check):
    check(estimator)
