"""scikit-learn compatible estimators (layer 8)."""

from .classifier import IVMClassifier, OneVsRestIVMClassifier
from .exact import ExactGPRegressor
from .persistence import load_model, save_model
from .sparse import SparseGPRegressor

__all__ = [
    "IVMClassifier",
    "OneVsRestIVMClassifier",
    "ExactGPRegressor",
    "SparseGPRegressor",
    "load_model",
    "save_model",
]
