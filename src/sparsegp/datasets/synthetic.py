"""Synthetic regression data generated in code (nothing to ship or licence)."""

from __future__ import annotations

import numpy as np

from ..errors import InputError


def entity_function(X: np.ndarray) -> np.ndarray:
    """The smooth part of :func:`repeated_records`' targets (its first six inputs; the rest are noise)."""
    return (
        np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] ** 2 - 0.5 * X[:, 2] * X[:, 3] + 0.5 * np.cos(3 * X[:, 4]) + 0.3 * X[:, 5]
    )


def repeated_records(
    n_train: int = 10_000,
    n_test: int = 2_000,
    *,
    n_features: int = 8,
    pool: int = 800,
    fresh: float = 0.39,
    noise: float = 0.05,
    seed: int = 0,
):
    """(X_train, y_train, X_test, y_test): records drawn from a finite set of entities, as in much real data.

    Each record is, with probability ``fresh``, an entity seen nowhere else and otherwise one of ``pool``
    recurring entities drawn uniformly; an entity's inputs are uniform on [-2, 2]^D and its target is
    :func:`entity_function` plus N(0, noise^2), the same at every record of it, so recurring entities give
    exact copies of a record (inputs and target). The first ``n_train`` records train, the next ``n_test``
    test. With the defaults 53 % of the training records repeat an earlier one and 61 % of the test inputs
    are training inputs (the structure of issue 35's public dataset).
    """
    if n_features < 6:
        raise InputError(f"repeated_records needs n_features >= 6 (its function uses six inputs), got {n_features}")
    r = np.random.default_rng(seed)
    n = n_train + n_test
    is_fresh = r.random(n) < fresh
    entity = np.where(is_fresh, pool + np.arange(n), r.integers(0, pool, size=n))
    Xe = r.uniform(-2.0, 2.0, size=(pool + n, n_features))
    ye = entity_function(Xe) + noise * r.normal(size=pool + n)
    X, y = Xe[entity], ye[entity]
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:]


__all__ = ["entity_function", "repeated_records"]
