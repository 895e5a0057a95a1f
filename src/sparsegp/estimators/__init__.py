"""scikit-learn compatible estimators (layer 8)."""

from .. import _config  # noqa: F401  (JAX in float64 before any of this package's modules use it)
from .classifier import IVMClassifier, OneVsRestIVMClassifier
from .exact_regressor import ExactGPRegressor
from .persistence import load_model, save_model
from .sparse import SparseGPRegressor
from .sparse_classifier import SparseGPClassifier

__all__ = [
    "IVMClassifier",
    "OneVsRestIVMClassifier",
    "ExactGPRegressor",
    "SparseGPRegressor",
    "SparseGPClassifier",
    "load_model",
    "save_model",
]
