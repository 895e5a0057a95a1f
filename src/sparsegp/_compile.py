"""How functions called outside a trace reach XLA: as one compiled program, not operation by operation.

Run eagerly, each JAX operation compiles a program of its own for every new shape; a kernel evaluation or a
factorisation is a dozen of them. Inside a trace (an objective, a jitted block) the plain function is used,
so traced programs are unchanged.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from . import _config  # noqa: F401  (JAX in float64 before this module uses it)


def tracing(args) -> bool:
    """Whether any leaf of ``args`` is a tracer (the call is part of a program being traced)."""
    return any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree_util.tree_leaves(args))


def compiled_when_eager(fn):
    """``fn`` as one compiled program when called outside a trace, the plain function inside one."""
    compiled = jax.jit(fn)

    @functools.wraps(fn)
    def dispatch(*args, **kwargs):
        return fn(*args, **kwargs) if tracing((args, kwargs)) else compiled(*args, **kwargs)

    return dispatch


@jax.jit
def _all_finite(arrays):
    return jnp.all(jnp.stack([jnp.all(jnp.isfinite(a)) for a in jax.tree_util.tree_leaves(arrays)]))


def all_finite(*arrays) -> bool:
    """Whether every entry of every array is finite (one compiled program per set of shapes)."""
    return bool(_all_finite(arrays))


def to_device(a):
    """``jnp.asarray(a)`` for an array, without the program that ``jnp.asarray`` compiles for each new shape."""
    return a if isinstance(a, jax.Array) else jax.device_put(np.asarray(a))
