"""k targets with a noise variance each: ``noise`` of shape (k,) beside targets y of shape (n, k).

The targets are independent given the kernel and the inducing inputs, so the model is k single-target models
that share them, target j with its own sigma_j^2: the joint objective (a log marginal likelihood or the VFE
bound) is the sum of the targets' objectives, and the posterior is one per target (a leading axis of length k
on every field). The functions of this layer that take a noise dispatch here when it is a vector: the objectives
and posteriors evaluate each target's in turn (a pass over the rows per target: ``jax.vmap`` would share the
target-free sums, but it batches the hand-written backward pass of :mod:`sparsegp.backends.jax_sums` wrongly, a gradient in
Z off by a factor 2.5 in the tests), the predictions and leave-one-out map over the targets with ``jax.vmap``.
Rows grouped by input carry each target's within-input sum of squares (``scatter`` of shape (n, k)).
"""

from __future__ import annotations

import functools
import inspect

import jax
import jax.numpy as jnp


def per_target(noise) -> bool:
    """True for one noise variance per target (a vector), False for one shared by every target."""
    return jnp.ndim(noise) == 1


def _each_target(fn):
    """``fn`` with ``noise`` (k,), ``y`` (n, k) and ``scatter`` (n, k) or None: the pytree of its k values with a
    leading axis k, target by target; any other noise goes to ``fn`` as it is (the second value: False)."""
    signature = inspect.signature(fn)

    def each(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        noise = bound.arguments["noise"]
        if not per_target(noise):
            return fn(*args, **kwargs), False
        y, scatter = bound.arguments["y"], bound.arguments.get("scatter")
        each = [
            fn(**dict(bound.arguments, noise=noise[j], y=y[:, j], scatter=None if scatter is None else scatter[:, j]))
            for j in range(len(noise))
        ]
        return stack_targets(each), True

    return each


def stack_targets(each: list):
    """k values of one structure (posteriors, objectives) as one, each leaf with a leading axis k."""
    return jax.tree_util.tree_map(lambda *values: jnp.stack([jnp.asarray(v) for v in values]), *each)


def summed_over_targets(fn):
    """An objective ``fn(..., noise, ..., y, ..., scatter=...)`` that also takes one noise per target: then the sum of
    the targets' objectives (the module docstring)."""
    each = _each_target(fn)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        value, batched = each(*args, **kwargs)
        return jnp.sum(value) if batched else value

    return wrapper


def mapped_over_targets(fn):
    """A posterior ``fn(..., noise, ..., y, ...)`` that also takes one noise per target: then the k posteriors as
    one, each field with a leading axis k."""
    each = _each_target(fn)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return each(*args, **kwargs)[0]

    return wrapper


def batched(posterior, field: str) -> bool:
    """True for a posterior of k targets with a noise each: ``field`` (a matrix per target) has a leading axis."""
    return jnp.ndim(getattr(posterior, field)) == 3


def last_axis(a):
    """An output of k targets mapped over the leading axis, with the targets last as elsewhere: (k, t) -> (t, k),
    (k, t, t) -> (t, t, k)."""
    return jnp.moveaxis(a, 0, -1)


__all__ = ["batched", "last_axis", "mapped_over_targets", "per_target", "stack_targets", "summed_over_targets"]
