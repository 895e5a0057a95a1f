"""Kernel base class: immutable JAX pytrees with named, constrained hyper-parameters.

A kernel defines one point-pair evaluation ``evaluate(x, z)``; ``K`` builds the
Gram matrix by ``vmap`` unless a subclass has a faster closed form (the
stationary kernels use one matrix product, see :mod:`.distance`). ``+`` and
``*`` compose kernels into :class:`Sum` and :class:`Product`.

Hyper-parameters are the pytree leaves, stored unconstrained (``raw``) and mapped to
their values by a transform per parameter (:mod:`sparsegp.transforms`: positive by
default, non-negative where a kernel names it in ``_transforms``); the static part (which parameters exist, their
priors, which are fixed) is the pytree's auxiliary data, so a kernel can be
passed straight through ``jax.jit`` and ``jax.grad``.
"""

from __future__ import annotations

from typing import ClassVar, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from .._compile import compiled_when_eager
from ..errors import InputError
from ..parameters import Parameterised
from ..priors import prior_from_dict
from . import features

KERNEL_REGISTRY: dict[str, type[Kernel]] = {}

# The two constructor arguments every kernel takes, documented once (see _docstrings.fill).
FIT_PARAMETERS = """
priors : dict or None
    Hyper-priors by parameter name (:mod:`sparsegp.priors`), added to the fit's objective (MAP-II).
fixed : iterable of str
    Names of hyper-parameters the fit keeps at their given values.
"""


class HostForm(NamedTuple):
    """k(x, z) = variance * exp(-|x - z|^2_ell / 2) + constant (see :meth:`Kernel.host_form`)."""

    lengthscale: np.ndarray | None
    variance: float
    constant: float


class Kernel(Parameterised):
    """Base of every covariance function: an immutable JAX pytree of named, constrained hyper-parameters.

    A kernel defines one point-pair evaluation ``evaluate(x, z)``; :meth:`K` and :meth:`diag` build matrices
    from it (or from a faster closed form). Hyper-parameters are read as attributes
    (``kernel.lengthscale``), changed with :meth:`replace`, constrained by a transform each (positive by
    default) and may carry hyper-priors and be ``fixed``. Kernels pass straight through ``jax.jit`` and
    ``jax.grad``, and ``+`` and ``*`` build :class:`Sum` and :class:`Product`.

    Subclasses set their hyper-parameters in ``__init__`` with ``self._set_params({name: value, ...},
    priors, fixed)`` and implement :meth:`evaluate`.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsegp.kernels import Constant, SquaredExponential
    >>> k = SquaredExponential(lengthscale=[1.0, 2.0], variance=2.0) + Constant(0.1)
    >>> X = np.array([[0.0, 0.0], [1.0, 2.0]])
    >>> np.asarray(k.K(X))
    array([[2.1   , 0.8358],
           [0.8358, 2.1   ]])
    >>> k.parameters()["k0.variance"]
    array(2.)
    """

    _composite: ClassVar[bool] = False
    # How a hyper-parameter follows a change of input units x -> x / s: it becomes value * s**power
    # (a length-scale -1, a linear kernel's variance 2; absent means 0, unchanged).
    _input_power: ClassVar[dict[str, int]] = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)  # a pytree (Parameterised)
        for name in ("K", "diag"):
            if name in cls.__dict__:
                setattr(cls, name, compiled_when_eager(cls.__dict__[name]))
        if not cls.__dict__.get("_abstract", False):
            KERNEL_REGISTRY[cls.__name__] = cls

    def for_scaled_inputs(self, s: float) -> Kernel:
        """The same covariance function written for inputs divided by ``s``: k'(x / s, z / s) = k(x, z).

        Hyper-priors move with their parameters; the estimators fit on X / s with s the inputs' spread.

        Parameters
        ----------
        s : float
            The scale the inputs are divided by.

        Returns
        -------
        Kernel
        """
        powers = {n: p for n, p in self._input_power.items() if p and n in self._raw}
        if s == 1.0 or not powers:
            return self
        names, priors, fixed, static = self.tree_flatten()[1]
        leaves = [
            jnp.asarray(self._transform(n).inverse(np.asarray(self._value(n)) * s ** powers.get(n, 0))) for n in names
        ]
        priors = tuple((n, p.scaled(s ** powers[n]) if n in powers else p) for n, p in priors)
        return type(self).tree_unflatten((names, priors, fixed, static), leaves)

    # ---- evaluation ------------------------------------------------------
    def evaluate(self, x, z):
        """k(x, z) for two single points.

        Parameters
        ----------
        x, z : array of shape (D,)
            Two inputs.

        Returns
        -------
        jax.Array
            A scalar.
        """
        raise NotImplementedError

    def K(self, X, Z=None):
        """The Gram matrix k(X, Z).

        Parameters
        ----------
        X : array of shape (n, D)
            Inputs.
        Z : array of shape (m, D) or None
            Other inputs; None means X.

        Returns
        -------
        jax.Array of shape (n, m)
        """
        Z = X if Z is None else Z
        return jax.vmap(lambda x: jax.vmap(lambda z: self.evaluate(x, z))(Z))(X)

    def diag(self, X):
        """diag k(X, X), without forming the matrix.

        Parameters
        ----------
        X : array of shape (n, D)
            Inputs.

        Returns
        -------
        jax.Array of shape (n,)
        """
        return jax.vmap(lambda x: self.evaluate(x, x))(X)

    def prior_draws(self, n_samples: int, n_features: int, D: int, rng: np.random.Generator):
        """``n_samples`` independent draws of the zero-mean GP prior with this covariance, as random features
        (:mod:`.features`): the prior half of :meth:`~sparsegp.SparseGPRegressor.sample_functions`.

        Parameters
        ----------
        n_samples : int
            Number of draws.
        n_features : int
            Random features per draw and stationary part.
        D : int
            Input dimension.
        rng : numpy.random.Generator
            The draws' randomness.

        Returns
        -------
        PriorDraws
            Callable on inputs (n, D), giving (n, n_samples).

        Raises
        ------
        InputError
            For a kernel without a random-feature form (a product, the periodic kernel).
        """
        raise InputError(
            f"{type(self).__name__} has no random-feature form: function draws need a kernel with a spectral "
            "density (SquaredExponential, Matern12/32/52, RationalQuadratic), Linear, Constant, or a sum of them"
        )

    def distance_scales(self) -> list[np.ndarray]:
        """The length-scales that the kernel's squared distances are measured in (a stationary kernel's
        ``lengthscale``; those of every part of a sum or product; none for the others).

        Returns
        -------
        list of ndarray
            One array (scalar or one per input) per stationary part.
        """
        return []

    def check_input_dim(self, D: int) -> None:
        """Check that the kernel's per-dimension (ARD) parameters match the inputs.

        Parameters
        ----------
        D : int
            The inputs' number of dimensions.

        Raises
        ------
        InputError
            If the kernel has ARD parameters for another number of dimensions.
        """

    def host_parts(self) -> HostForm | None:
        """The kernel as ``variance * exp(-|x - z|^2_ell / 2) + constant``, its values traceable, or None.

        ``lengthscale`` None means a constant alone (a term of a :class:`Sum`). The host engines
        (:class:`~sparsegp.kernels.gram.HostGram`, :mod:`sparsegp.approximations.exact_host`) evaluate a kernel of
        this form in NumPy; the exact GP's host path differentiates these values with respect to the raw
        hyper-parameters in JAX.
        """
        return None

    def host_form(self) -> HostForm | None:
        """:meth:`host_parts` in NumPy values, or None.

        Returns
        -------
        HostForm or None
        """
        parts = self.host_parts()
        if parts is None:
            return None
        ell = None if parts.lengthscale is None else np.asarray(parts.lengthscale, dtype=np.float64)
        return HostForm(ell, float(np.asarray(parts.variance)), float(np.asarray(parts.constant)))

    # ---- composition -------------------------------------------------------
    def __add__(self, other):
        if not isinstance(other, Kernel):
            return NotImplemented
        return Sum(self, other)

    def __mul__(self, other):
        if not isinstance(other, Kernel):
            return NotImplemented
        return Product(self, other)

    # ---- serialisation -------------------------------------------------------
    def to_dict(self) -> dict:
        """A JSON-ready description: type, parameter values, priors, fixed names and configuration.

        Returns
        -------
        dict
            Read back by :func:`kernel_from_dict`.
        """
        return {"type": type(self).__name__, **self._spec()}

    @classmethod
    def _from_spec(cls, params, priors, fixed, config):
        return cls(**params, **config, priors=priors, fixed=fixed)

    def __repr__(self):
        parts = []
        for n, v in self.parameters().items():
            parts.append(f"{n}={np.array2string(v, precision=4) if v.ndim else f'{float(v):.4g}'}")
        return f"{type(self).__name__}({', '.join(parts)})"


Kernel.K = compiled_when_eager(Kernel.K)  # type: ignore[method-assign]
Kernel.diag = compiled_when_eager(Kernel.diag)  # type: ignore[method-assign]


class _Composite(Kernel):
    """A kernel built from others; its pytree children are the kernels themselves."""

    _composite = True
    _abstract = True

    def __init__(self, *kernels: Kernel):
        flat: list[Kernel] = []
        for k in kernels:
            if not isinstance(k, Kernel):
                raise InputError(f"{type(self).__name__} takes kernels, got {type(k).__name__}")
            # Flatten nested sums/products of the same kind: (a + b) + c -> Sum(a, b, c).
            flat.extend(k.kernels if type(k) is type(self) else (k,))
        if len(flat) < 2:
            raise InputError(f"{type(self).__name__} needs at least two kernels")
        object.__setattr__(self, "kernels", tuple(flat))

    def tree_flatten(self):
        return self.kernels, None

    @classmethod
    def tree_unflatten(cls, aux, children):
        obj = object.__new__(cls)
        object.__setattr__(obj, "kernels", tuple(children))
        return obj

    def __getattr__(self, name):
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")

    def parameters(self):
        out = {}
        for i, k in enumerate(self.kernels):
            out.update({f"k{i}.{n}": v for n, v in k.parameters().items()})
        return out

    def replace(self, **values):
        per = [dict() for _ in self.kernels]
        for key, v in values.items():
            head, _, rest = key.partition(".")
            if not (head.startswith("k") and head[1:].isdigit() and int(head[1:]) < len(self.kernels) and rest):
                raise InputError(f"{type(self).__name__}: parameter names look like 'k0.lengthscale', got {key!r}")
            per[int(head[1:])][rest] = v
        return type(self).tree_unflatten(None, [k.replace(**p) for k, p in zip(self.kernels, per)])

    def trainable_mask(self):
        return type(self).tree_unflatten(None, [k.trainable_mask() for k in self.kernels])

    def transforms(self):
        out = {}
        for i, k in enumerate(self.kernels):
            out.update({f"k{i}.{n}": t for n, t in k.transforms().items()})
        return out

    def raw_bounds(self):
        pairs = [k.raw_bounds() for k in self.kernels]
        return tuple(type(self).tree_unflatten(None, [p[j] for p in pairs]) for j in (0, 1))

    def for_scaled_inputs(self, s):
        return type(self).tree_unflatten(None, [k.for_scaled_inputs(s) for k in self.kernels])

    def log_prior(self):
        return sum((k.log_prior() for k in self.kernels), jnp.zeros(()))

    def check_input_dim(self, D):
        for k in self.kernels:
            k.check_input_dim(D)

    def distance_scales(self):
        return [ell for k in self.kernels for ell in k.distance_scales()]

    def to_dict(self):
        return {"type": type(self).__name__, "kernels": [k.to_dict() for k in self.kernels]}

    def __repr__(self):
        return f"{type(self).__name__}({', '.join(map(repr, self.kernels))})"

    def __eq__(self, other):
        return (
            type(self) is type(other)
            and len(self.kernels) == len(other.kernels)
            and all(a == b for a, b in zip(self.kernels, other.kernels))
        )

    __hash__ = None  # type: ignore[assignment]


class Sum(_Composite):
    """k(x, z) = sum_i k_i(x, z); ``k1 + k2`` builds one (nested sums are flattened).

    Parameters
    ----------
    *kernels : Kernel
        At least two kernels.

    Examples
    --------
    >>> from sparsegp.kernels import Linear, SquaredExponential
    >>> k = SquaredExponential(2.0) + Linear(0.5)
    >>> k
    Sum(SquaredExponential(lengthscale=2, variance=1), Linear(variance=0.5))
    >>> sorted(k.parameters())
    ['k0.lengthscale', 'k0.variance', 'k1.variance']
    """

    def prior_draws(self, n_samples, n_features, D, rng):
        draws = features.none(n_samples, D)
        for k in self.kernels:  # independent priors add
            draws = draws.plus(k.prior_draws(n_samples, n_features, D, rng))
        return draws

    def evaluate(self, x, z):
        return sum(k.evaluate(x, z) for k in self.kernels)

    def K(self, X, Z=None):
        return sum(k.K(X, Z) for k in self.kernels)

    def diag(self, X):
        return sum(k.diag(X) for k in self.kernels)

    def host_parts(self) -> HostForm | None:
        """One squared exponential plus constants, whose constants add up; None for any other sum.

        Returns
        -------
        HostForm or None
        """
        forms = [k.host_parts() for k in self.kernels]
        if any(f is None for f in forms):
            return None
        se = [f for f in forms if f.lengthscale is not None]
        if len(se) != 1:
            return None
        constant = sum(f.constant for f in forms if f.lengthscale is None) + se[0].constant
        return HostForm(se[0].lengthscale, se[0].variance, constant)


class Product(_Composite):
    """k(x, z) = prod_i k_i(x, z); ``k1 * k2`` builds one (nested products are flattened).

    Parameters
    ----------
    *kernels : Kernel
        At least two kernels.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsegp.kernels import Linear, Matern32
    >>> k = Matern32(1.0) * Linear(1.0)
    >>> float(np.asarray(k.K(np.array([[1.0]]), np.array([[2.0]])))[0, 0])  # (1 + sqrt 3) e^-sqrt 3 * 2
    0.9667...
    """

    def evaluate(self, x, z):
        out = self.kernels[0].evaluate(x, z)
        for k in self.kernels[1:]:
            out = out * k.evaluate(x, z)
        return out

    def K(self, X, Z=None):
        out = self.kernels[0].K(X, Z)
        for k in self.kernels[1:]:
            out = out * k.K(X, Z)
        return out

    def diag(self, X):
        out = self.kernels[0].diag(X)
        for k in self.kernels[1:]:
            out = out * k.diag(X)
        return out


def kernel_from_dict(d) -> Kernel:
    """Rebuild a kernel from :meth:`Kernel.to_dict`, validating every field (model files store kernels so).

    Parameters
    ----------
    d : dict
        A kernel's description.

    Returns
    -------
    Kernel

    Raises
    ------
    InputError
        If the type is unknown or a field is malformed.

    Examples
    --------
    >>> from sparsegp.kernels import SquaredExponential, kernel_from_dict
    >>> k = SquaredExponential(lengthscale=[1.0, 3.0], bias=0.1, fixed=("bias",))
    >>> kernel_from_dict(k.to_dict()) == k
    True
    """
    if not isinstance(d, dict) or not isinstance(d.get("type"), str):
        raise InputError(f"kernel specification must be a dict with a 'type', got {d!r}")
    cls = KERNEL_REGISTRY.get(d["type"])
    if cls is None:
        raise InputError(f"unknown kernel type {d['type']!r}; known: {sorted(KERNEL_REGISTRY)}")
    if cls._composite:
        kernels = d.get("kernels")
        if not isinstance(kernels, list) or len(kernels) < 2:
            raise InputError(f"{d['type']} specification needs a list of at least two kernels")
        return cls(*[kernel_from_dict(k) for k in kernels])
    params, priors, fixed, config = d.get("params"), d.get("priors", {}), d.get("fixed", []), d.get("config", {})
    if (
        not isinstance(params, dict)
        or not isinstance(priors, dict)
        or not isinstance(fixed, list)
        or not isinstance(config, dict)
    ):
        raise InputError(f"{d['type']} specification has malformed params/priors/fixed/config: {d!r}")
    try:
        kernel = cls._from_spec(params, {n: prior_from_dict(p) for n, p in priors.items()}, fixed, config)
    except TypeError as exc:
        raise InputError(f"{d['type']} specification does not match the kernel's arguments: {exc}") from None
    if set(kernel.parameters()) != set(params):  # a value left out would silently take the default
        raise InputError(
            f"{d['type']} specification must give each of {sorted(kernel.parameters())}, got {sorted(params)}"
        )
    return kernel.with_values_exactly(params)  # the values written, to the last digit
