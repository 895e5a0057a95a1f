"""One check shared by the tests of the weighted and multi-target sums: the host evaluation against the JAX program."""

import jax
import jax.numpy as jnp
import numpy as np
from jax.flatten_util import ravel_pytree

from sparsegp.approximations.host_objective import HostObjective
from sparsegp.approximations.registry import APPROXIMATIONS
from sparsegp.transforms import to_positive


def assert_host_equals_jax_and_differences(approximation, X, y, weights, params, chunk=13, seed=2):
    """The host sums' value and gradient (:class:`HostObjective`) against the JAX program's (1e-10, 1e-8 relative)
    and against central differences along a random direction (1e-5); returns the host's value."""
    host = HostObjective(approximation, X, y, chunk=chunk, jitter=1e-10, **weights)
    f, grad = host(params)
    objective = APPROXIMATIONS[approximation].objective

    def negative(p):
        return -objective(
            p["kernel"], p["Z"], to_positive(p["raw_noise"]), jnp.asarray(X), jnp.asarray(y),
            chunk=chunk, jitter=1e-10, **weights,
        )  # fmt: skip

    f_jax, g_jax = jax.value_and_grad(negative)(params)
    flat, unravel = ravel_pytree(params)
    g_host, g_ref = ravel_pytree(grad)[0], ravel_pytree(g_jax)[0]
    assert abs(f - float(f_jax)) <= 1e-10 * abs(f)
    assert np.max(np.abs(g_host - g_ref)) <= 1e-8 * np.max(np.abs(g_ref))
    u = np.random.default_rng(seed).normal(size=flat.size)
    h = 1e-5
    fd = (host(unravel(flat + h * u))[0] - host(unravel(flat - h * u))[0]) / (2 * h)
    assert abs(fd - float(g_host @ u)) <= 1e-5 * max(1.0, abs(fd))
    return f
