import os

import numpy as np
import pytest

import sparsegp  # noqa: F401  (enables float64 in JAX before tests build arrays)

SHARED = os.path.join(os.path.dirname(__file__), "..", "..", "shared")


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def toy_regression(n=40, D=2, seed=0, noise=0.1):
    r = np.random.default_rng(seed)
    X = r.normal(size=(n, D))
    y = np.sin(2 * X[:, 0]) + (0.5 * X[:, 1] if D > 1 else 0) + noise * r.normal(size=n)
    return X, y
