"""Covariance functions as immutable JAX pytrees (layer 1)."""

from .. import _config  # noqa: F401  (JAX in float64 before any of this package's modules use it)
from .base import Kernel, Product, Sum, kernel_from_dict
from .linear import Constant, Linear
from .periodic import Periodic
from .stationary import RBF, Matern12, Matern32, Matern52, RationalQuadratic, SquaredExponential, Stationary

__all__ = [
    "Kernel",
    "Sum",
    "Product",
    "kernel_from_dict",
    "Stationary",
    "SquaredExponential",
    "RBF",
    "Matern12",
    "Matern32",
    "Matern52",
    "RationalQuadratic",
    "Periodic",
    "Linear",
    "Constant",
]
