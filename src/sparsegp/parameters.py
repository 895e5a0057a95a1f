"""Named, constrained parameters as immutable JAX pytrees: what kernels and likelihoods have in common.

A :class:`Parameterised` object stores each parameter unconstrained (``raw``, the pytree's leaves) and maps it to
its value by a transform (:mod:`sparsegp.transforms`: positive by default, another where a class names it in
``_transforms``); the static part (which parameters exist, their priors, which are fixed, the configuration) is
the pytree's auxiliary data, so the object passes straight through ``jax.jit`` and ``jax.grad`` and the
optimiser moves its raw leaves within the transforms' boxes. Kernels (:mod:`sparsegp.kernels`) and likelihoods
(:mod:`sparsegp.likelihoods`) are both built on it: a likelihood's scale or degrees of freedom is
learnt, bounded and given a prior as a kernel's length-scale is.
"""

from __future__ import annotations

from typing import ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from . import _config  # noqa: F401  (JAX in float64 before this module uses it)
from .errors import InputError
from .transforms import POSITIVE, Transform

NEWTON_STEPS = 3  # Newton steps of :meth:`Parameterised.with_values_exactly` towards a value
MAX_ULPS = 64  # then at most this many single-ulp steps of the raw leaf


class Parameterised:
    """Base of kernels and likelihoods: an immutable pytree of named, constrained parameters.

    Subclasses set their parameters in ``__init__`` with ``self._set_params({name: value, ...}, priors,
    fixed)`` and put any other (hashable) configuration in :meth:`_static`.
    """

    _names: tuple[str, ...] = ()
    # Parameters that are not positive-by-softplus (sparsegp.transforms.POSITIVE), by name.
    _transforms: ClassVar[dict[str, Transform]] = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        jax.tree_util.register_pytree_node_class(cls)

    # ---- construction -------------------------------------------------
    def _set_params(self, values: dict, priors=None, fixed=()):
        priors = dict(priors or {})
        fixed = frozenset(fixed or ())
        names = tuple(values)
        unknown = (set(priors) | set(fixed)) - set(names)
        if unknown:
            raise InputError(
                f"{type(self).__name__}: priors/fixed name unknown hyper-parameter(s) {sorted(unknown)}; "
                f"it has {list(names)}"
            )
        raw = {}
        for name, v in values.items():
            t = self._transform(name)
            raw[name] = jnp.asarray(t.inverse(t.check(v, f"{type(self).__name__}.{name}")))
        for name, prior in priors.items():
            size = np.size(getattr(prior, "mu", 0.0))
            if size > 1 and size != raw[name].size:
                raise InputError(
                    f"{type(self).__name__}: the prior on {name} has {size} locations for {raw[name].size} value(s)"
                )
        object.__setattr__(self, "_names", names)
        object.__setattr__(self, "_raw", raw)
        object.__setattr__(self, "_priors", tuple(sorted(priors.items())))
        object.__setattr__(self, "_fixed", fixed)

    def __setattr__(self, key, value):
        raise AttributeError(f"{type(self).__name__} is immutable; use .replace(...) to change hyper-parameters")

    # ---- pytree protocol ------------------------------------------------
    def tree_flatten(self):
        """JAX's pytree protocol: the raw (unconstrained) hyper-parameters as leaves, and the static part.

        Returns
        -------
        leaves : tuple of arrays
            One raw array per hyper-parameter, in the order of :meth:`parameters`.
        aux : tuple
            Names, priors, fixed names and configuration; hashable.
        """
        return tuple(self._raw[n] for n in self._names), (self._names, self._priors, self._fixed, self._static())

    @classmethod
    def tree_unflatten(cls, aux, leaves):
        """JAX's pytree protocol: the object from :meth:`tree_flatten`'s output.

        Parameters
        ----------
        aux : tuple
            The static part.
        leaves : sequence of arrays
            The raw hyper-parameters.

        Returns
        -------
        Parameterised
        """
        names, priors, fixed, static = aux
        obj = object.__new__(cls)
        object.__setattr__(obj, "_names", names)
        object.__setattr__(obj, "_raw", dict(zip(names, leaves)))
        object.__setattr__(obj, "_priors", priors)
        object.__setattr__(obj, "_fixed", fixed)
        for k, v in static:
            object.__setattr__(obj, k, v)
        return obj

    def _static(self) -> tuple:
        """Hashable non-parameter configuration as ((attr, value), ...)."""
        return ()

    # ---- parameter access -------------------------------------------------
    @classmethod
    def _transform(cls, name: str) -> Transform:
        return cls._transforms.get(name, POSITIVE)

    def _value(self, name):
        return self._transform(name).forward(self._raw[name])

    def __getattr__(self, name):
        # Constrained access to hyper-parameters: kernel.lengthscale etc.
        raw = self.__dict__.get("_raw")
        if raw is not None and name in raw:
            return self._value(name)
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")

    def parameters(self) -> dict[str, np.ndarray]:
        """Hyper-parameter values by name (constrained, as NumPy arrays).

        Returns
        -------
        dict of str to ndarray
            A composite kernel names its parts' parameters ``k0.lengthscale``, ``k1.variance``, ...
        """
        return {n: np.asarray(self._value(n)) for n in self._names}

    def transforms(self) -> dict[str, Transform]:
        """Each hyper-parameter's transform between its value and the unconstrained space the optimiser sees.

        Returns
        -------
        dict of str to Transform
            By the names of :meth:`parameters`.
        """
        return {n: self._transform(n) for n in self._names}

    def replace(self, **values) -> Parameterised:
        """A copy with some hyper-parameters set to new values (checked as the constructor checks them).

        Parameters
        ----------
        **values
            New values by the names of :meth:`parameters`.

        Returns
        -------
        Parameterised
            Of the same type, with the same priors and fixed names.

        Raises
        ------
        InputError
            If a name is unknown or a value has the wrong shape or sign.
        """
        unknown = set(values) - set(self._names)
        if unknown:
            raise InputError(f"{type(self).__name__} has no hyper-parameter(s) {sorted(unknown)}")
        leaves = []
        for n in self._names:
            if n in values:
                t = self._transform(n)
                v = t.check(values[n], f"{type(self).__name__}.{n}")
                if v.shape != np.shape(self._raw[n]):
                    raise InputError(
                        f"{type(self).__name__}.{n} must have shape {np.shape(self._raw[n])}, got {v.shape}"
                    )
                leaves.append(jnp.asarray(t.inverse(v)))
            else:
                leaves.append(self._raw[n])
        return type(self).tree_unflatten(self.tree_flatten()[1], leaves)

    def trainable_mask(self):
        """The pytree structure with ``True`` where a hyper-parameter is optimised.

        Returns
        -------
        Parameterised
            Of the same type, whose leaves are boolean arrays.
        """
        leaves = [np.full(np.shape(self._raw[n]), n not in self._fixed) for n in self._names]
        return type(self).tree_unflatten(self.tree_flatten()[1], leaves)

    def raw_bounds(self):
        """The optimisation's box on the raw leaves, from each parameter's transform.

        Returns
        -------
        lower, upper : Parameterised
            Of the same structure, holding the bounds.
        """
        aux = self.tree_flatten()[1]
        shapes = [(np.shape(self._raw[n]), self._transform(n)) for n in self._names]
        lower = [np.full(shape, t.raw_lower) for shape, t in shapes]
        upper = [np.full(shape, t.raw_upper) for shape, t in shapes]
        return type(self).tree_unflatten(aux, lower), type(self).tree_unflatten(aux, upper)

    def log_prior(self):
        """Sum of the hyper-priors' log densities plus the transforms' log-Jacobians (0 without priors).

        Returns
        -------
        jax.Array
            A scalar.
        """
        total = jnp.zeros(())
        for name, prior in self._priors:
            total = total + prior.log_prob(self._value(name)) + self._transform(name).log_jacobian(self._raw[name])
        return total

    def with_values_exactly(self, values: dict):
        """A copy whose raw leaves give exactly ``values`` (by name, as :meth:`parameters` reads them) where some
        raw value does: the inverse transform is exact only to about one ulp, so a value written to a model file and
        read back would otherwise move by one (a third of positive values did). Newton steps on the transform
        from the current raw leaf, then single-ulp steps towards the value (the transforms are increasing)."""
        leaves = []
        for name in self._names:
            raw = np.array(self._raw[name], dtype=np.float64)
            target = np.asarray(values[name], dtype=np.float64).reshape(raw.shape)
            forward = self._transform(name).forward
            slope = jax.vmap(jax.grad(forward))
            for _ in range(NEWTON_STEPS):
                got = np.asarray(forward(raw))
                d = np.asarray(slope(jnp.ravel(jnp.asarray(raw)))).reshape(raw.shape)
                ok = np.isfinite(d) & (d > 0)
                raw = np.where(ok & (got != target), raw + (target - got) / np.where(ok, d, 1.0), raw)
            for _ in range(MAX_ULPS):
                got = np.asarray(forward(raw))
                off = got != target
                if not np.any(off):
                    break
                step = np.nextafter(raw, np.where(got < target, np.inf, -np.inf))
                closer = off & (np.abs(np.asarray(forward(step)) - target) <= np.abs(got - target))
                if not np.any(closer):
                    break
                raw = np.where(closer, step, raw)
            leaves.append(jnp.asarray(raw))
        return type(self).tree_unflatten(self.tree_flatten()[1], leaves)

    def _spec(self) -> dict:
        """Parameter values, priors, fixed names and configuration, JSON-ready (a model file's description)."""
        return {
            "params": {n: np.asarray(v).tolist() for n, v in self.parameters().items()},
            "priors": {n: p.to_dict() for n, p in self._priors},
            "fixed": sorted(self._fixed),
            "config": {k: v for k, v in self._static()},
        }

    def __eq__(self, other):
        if type(self) is not type(other):
            return False
        a, b = self.tree_flatten(), other.tree_flatten()
        return a[1] == b[1] and all(np.array_equal(x, y) for x, y in zip(a[0], b[0]))

    __hash__ = None  # type: ignore[assignment]  # equal objects compare by value: unhashable, like arrays


__all__ = ["Parameterised"]
