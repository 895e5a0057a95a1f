"""scikit-learn compatible estimators (layer 8)."""

from .exact import ExactGPRegressor
from .persistence import load_model, save_model
from .sparse import SparseGPRegressor

__all__ = ["ExactGPRegressor", "SparseGPRegressor", "load_model", "save_model"]
