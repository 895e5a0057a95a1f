"""The one positive transform behind every hyper-parameter.

Hyper-parameters are stored unconstrained (``raw``) and mapped to their
positive value by ``exp``; optimisation runs on ``raw``. The log map keeps
gradients well scaled across orders of magnitude (length-scales from 1e-2 to
1e3 are common) and makes log-normal priors Gaussian in the optimised space.
"""

import jax.numpy as jnp
import numpy as np


def to_positive(raw):
    """Unconstrained -> positive (``exp``)."""
    return jnp.exp(raw)


def to_raw(value):
    """Positive -> unconstrained (``log``); ``value`` must already be validated > 0."""
    return np.log(np.asarray(value, dtype=np.float64))


def log_jacobian(raw):
    """log |d value / d raw| summed over entries: for ``exp`` this is ``raw`` itself."""
    return jnp.sum(raw)
