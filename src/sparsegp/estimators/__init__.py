"""scikit-learn compatible estimators (layer 8)."""

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
