"""How functions called outside a trace reach XLA: as one compiled program, not operation by operation.

Run eagerly, each JAX operation compiles a program of its own for every new shape; a kernel evaluation or a
factorisation is a dozen of them. Inside a trace (an objective, a jitted block) the plain function is used,
so traced programs are unchanged.

On a CPU, a program that serves a small problem is compiled by XLA's quick settings (:data:`QUICK_OPTIONS`: its
loop emitters instead of its fusion emitters): where compiling costs more than the fit's arithmetic, as in
``make demo``'s fit, three fifths of the compile time at the same run time; on a large problem its run time would
be 15 to 23 % longer (BENCHMARKS.md, "Quick compilation for small problems"). The fit says how large its
problem is (:func:`compiled_for`); :func:`jit` reads that.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools

import jax
import jax.numpy as jnp
import numpy as np

from . import _config  # noqa: F401  (JAX in float64 before this module uses it)


def tracing(args) -> bool:
    """Whether any leaf of ``args`` is a tracer (the call is part of a program being traced)."""
    return any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree_util.tree_leaves(args))


QUICK_OPTIONS = {"xla_cpu_use_fusion_emitters": False}
QUICK_WORK = 5e8  # flops scale (n m^2 of a sparse problem, n^3 of an exact one) below which compiling is quick
_quick = contextvars.ContextVar("sparsegp_quick_compile", default=False)


@contextlib.contextmanager
def compiled_for(work: float):
    """Programs called inside this block are compiled quickly where ``work`` (the problem's n m^2, or n^3 for an
    exact GP) is below QUICK_WORK on a CPU, and fully optimised otherwise (the module docstring)."""
    token = _quick.set(bool(work < QUICK_WORK) and jax.default_backend() == "cpu")
    try:
        yield
    finally:
        _quick.reset(token)


def jit(fn=None, **options):
    """``jax.jit(fn, **options)``, compiled by XLA's quick settings inside a :func:`compiled_for` block of a small
    problem (a second program of the same function: the two never share a compiled program). Inside a trace it
    is part of the program being traced, compiled as that program is."""
    if fn is None:
        return functools.partial(jit, **options)
    full = jax.jit(fn, **options)
    quick = jax.jit(fn, compiler_options=QUICK_OPTIONS, **options)

    @functools.wraps(fn)
    def dispatch(*args, **kwargs):
        return (quick if _quick.get() and not tracing((args, kwargs)) else full)(*args, **kwargs)

    return dispatch


def compiled_when_eager(fn):
    """``fn`` as one compiled program when called outside a trace (:func:`jit`), the plain function inside one."""
    compiled = jit(fn)

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
