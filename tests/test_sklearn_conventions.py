"""scikit-learn's own estimator checks, each run as a separate test."""

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from sparsegp import ExactGPRegressor, IVMClassifier, OneVsRestIVMClassifier, SparseGPClassifier, SparseGPRegressor
from sparsegp.options import Joint

pytestmark = pytest.mark.slow

# Checks expected to fail, with the reason (empty: every check applies and passes).
EXPECTED_FAILED: dict = {}

ESTIMATORS = [
    ExactGPRegressor(max_iter=15),
    SparseGPRegressor(inducing=20, random_state=0, schedule=Joint(max_iter=30)),
    IVMClassifier(size=30, random_state=0),
    OneVsRestIVMClassifier(IVMClassifier(size=30, random_state=0)),
    SparseGPClassifier(inducing=10, max_iter=40, random_state=0),
]


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=lambda est: EXPECTED_FAILED)
def test_sklearn_check(estimator, check):
    check(estimator)
