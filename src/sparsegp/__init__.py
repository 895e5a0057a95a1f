"""sparsegp: sparse Gaussian processes, the classic methods exactly as published.

Importing the package switches JAX to float64 (see :mod:`sparsegp._config`).
"""

import os as _os

# OpenBLAS threads busy-wait after each call (by default for about 2^28 cycles), which slows the
# speed of the XLA computations that alternate with BLAS calls in the host statistics
# (sparsegp.stats_blas). A short timeout only changes how soon idle BLAS threads sleep; it takes
# effect when sparsegp is imported before NumPy, and a value set by the user is kept.
_os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

from . import _config  # noqa: E402, F401  (float64 before anything touches JAX)
from . import kernels, linalg, metrics, priors  # noqa: E402
from .errors import InputError, ModelFileError, NotFittedError, NumericalError, SparseGPError
from .estimators import (
    ExactGPRegressor,
    IVMClassifier,
    OneVsRestIVMClassifier,
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
    "IVMClassifier",
    "OneVsRestIVMClassifier",
    "load_model",
    "save_model",
    "SparseGPError",
    "InputError",
    "NumericalError",
    "ModelFileError",
    "NotFittedError",
    "__version__",
]
