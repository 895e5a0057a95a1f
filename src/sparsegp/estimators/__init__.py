"""scikit-learn compatible estimators (layer 8)."""

from .exact import ExactGPRegressor
from .persistence import load_model, save_model

__all__ = ["ExactGPRegressor", "load_model", "save_model"]
