"""The transforms from the unconstrained ``raw`` values the optimiser moves to hyper-parameter values.

Hyper-parameters (kernel parameters and the noise variance) are stored unconstrained (``raw``) and
mapped to their values by a transform per parameter; optimisation runs on ``raw`` within box bounds.

* :data:`POSITIVE` (every parameter unless its kernel says otherwise, and the noise): softplus,
  value = log(1 + e^raw), log-like for small values and the identity for large ones. It replaced
  ``exp`` because the softplus fits reach lower negative bounds on protocol K10 from the same start
  (BENCHMARKS.md). Values are boxed to [1e-12, 1e12].
* :data:`NON_NEGATIVE` (a constant term such as Seeger et al.'s bias v_b, which may be exactly 0):
  the identity, boxed to [0, 1e12]; L-BFGS-B's projection reaches 0 exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from . import _config  # noqa: F401  (JAX in float64 before this module uses it)
from .errors import InputError
from .validation import check_non_negative, check_positive

MIN_VALUE = 1e-12  # optimisation bounds, in value space
MAX_VALUE = 1e12


def to_positive(raw):
    """Unconstrained -> positive: softplus(raw) = log(1 + e^raw)."""
    return jax.nn.softplus(raw)


def to_raw(value):
    """Positive -> unconstrained, the inverse softplus log(e^v - 1) = v + log(1 - e^-v).

    ``value`` must already be validated > 0; the second form is exact for large v.
    """
    v = np.asarray(value, dtype=np.float64)
    return v + np.log(-np.expm1(-v))


def log_jacobian(raw):
    """log |d value / d raw| summed over entries: log sigmoid(raw) for softplus."""
    return jnp.sum(jax.nn.log_sigmoid(raw))


RAW_MAX = float(to_raw(MAX_VALUE))


class Transform(NamedTuple):
    """One hyper-parameter's constraint: raw -> value, its inverse, log-Jacobian, checks and bounds."""

    forward: Callable  # raw -> value, traceable
    inverse: Callable  # checked value -> raw (NumPy)
    log_jacobian: Callable  # raw -> sum of log |d value / d raw|, traceable
    check: Callable  # (value, name) -> float64 array, or InputError naming the parameter
    lower: float  # value bounds of the optimisation
    upper: float

    @property
    def raw_lower(self) -> float:
        return float(self.inverse(self.lower))

    @property
    def raw_upper(self) -> float:
        return float(self.inverse(self.upper))


def _identity(x):
    return x


def _identity_raw(value):
    return np.asarray(value, dtype=np.float64)


def _no_jacobian(raw):
    return jnp.zeros(())


POSITIVE = Transform(to_positive, to_raw, log_jacobian, check_positive, MIN_VALUE, MAX_VALUE)
NON_NEGATIVE = Transform(_identity, _identity_raw, _no_jacobian, check_non_negative, 0.0, MAX_VALUE)


def above(minimum: float) -> Transform:
    """value = minimum + softplus(raw): a parameter that must exceed ``minimum`` (a Student-t likelihood's
    degrees of freedom above 2, where its variance is finite), boxed to [minimum + 1e-6, 1e12]."""

    def check(value, name):
        v = np.asarray(value, dtype=np.float64)
        if not np.all(np.isfinite(v)) or np.any(v <= minimum):
            raise InputError(f"{name} must be a finite number above {minimum:g}, got {value!r}")
        return v

    return Transform(
        lambda raw: minimum + to_positive(raw),
        lambda value: to_raw(np.asarray(value, dtype=np.float64) - minimum),
        log_jacobian,
        check,
        minimum + 1e-6,
        MAX_VALUE,
    )
