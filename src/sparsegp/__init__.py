"""sparsegp: sparse Gaussian processes, the classic methods exactly as published.

Importing the package switches JAX to float64 (see :mod:`sparsegp._config`).
"""

from . import (
    _config,  # noqa: F401  (float64 before anything touches JAX)
    kernels,
    linalg,
    metrics,
    priors,
)
from .errors import (
    CalibrationWarning,
    CertificateWarning,
    DataWarning,
    InducingWarning,
    InputError,
    ModelFileError,
    NotFittedError,
    NumericalError,
    NumericalWarning,
    SparseGPError,
)
from .estimators import (
    ExactGPRegressor,
    IVMClassifier,
    OneVsRestIVMClassifier,
    SparseGPClassifier,
    SparseGPRegressor,
    load_model,
    save_model,
)

__version__ = "0.1.0"

__all__ = [
    "kernels",
    "linalg",
    "metrics",
    "priors",
    "ExactGPRegressor",
    "SparseGPRegressor",
    "SparseGPClassifier",
    "IVMClassifier",
    "OneVsRestIVMClassifier",
    "load_model",
    "save_model",
    "SparseGPError",
    "CalibrationWarning",
    "NumericalWarning",
    "CertificateWarning",
    "DataWarning",
    "InducingWarning",
    "InputError",
    "NumericalError",
    "ModelFileError",
    "NotFittedError",
    "__version__",
]
