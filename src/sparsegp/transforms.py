"""The one positive transform behind every hyper-parameter.

Hyper-parameters (kernel parameters and the noise variance) are stored
unconstrained (``raw``) and mapped to their positive value by softplus,
value = log(1 + e^raw); optimisation runs on ``raw``. Softplus is log-like for
small values and the identity for large ones. It replaced ``exp`` after a
measurement on protocol K10 (10,000 kin40k points, VFE, 300 L-BFGS-B
iterations from the same start): the softplus fit reached a lower negative
bound, 4578.4 vs 4613.3 at m = 128 and 1609.4 vs 1683.0 at m = 512
(BENCHMARKS.md, two runs of the suite).
"""

import jax
import jax.numpy as jnp
import numpy as np

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


RAW_MIN = float(to_raw(MIN_VALUE))
RAW_MAX = float(to_raw(MAX_VALUE))
