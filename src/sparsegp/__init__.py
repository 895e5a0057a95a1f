"""sparsegp: sparse Gaussian processes, the classic methods exactly as published.

Importing the package imports neither JAX nor the estimators: each public name is imported on first use. The
first module of the package that uses JAX switches it to float64 for the whole process (``jax_enable_x64``, see
:mod:`sparsegp._config`), which other JAX code in the same process then sees too.
"""

import importlib

from .errors import (
    CalibrationWarning,
    CertificateWarning,
    DataWarning,
    InducingWarning,
    InputError,
    ModelFileError,
    NumericalError,
    NumericalWarning,
    SparseGPError,
)

# Each public name and the module that holds it: imported on first use, so that ``import sparsegp`` does not
# import JAX (BENCHMARKS.md, "Latency"); every module that uses JAX switches it to float64 first (_config).
_LAZY = {
    **dict.fromkeys(
        (
            "ExactGPRegressor",
            "SparseGPRegressor",
            "SparseGPClassifier",
            "IVMClassifier",
            "OneVsRestIVMClassifier",
            "load_model",
            "save_model",
        ),
        ".estimators",
    ),
    "NotFittedError": ".errors",  # a subclass of scikit-learn's, made on first use
    **{name: f".{name}" for name in ("datasets", "kernels", "likelihoods", "linalg", "metrics", "priors")},
}


def __getattr__(name: str):
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module 'sparsegp' has no attribute {name!r}")
    module = importlib.import_module(where, __name__)
    value = module if where == f".{name}" else getattr(module, name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


__version__ = "0.1.0"

__all__ = [
    *_LAZY,
    "SparseGPError",
    "CalibrationWarning",
    "NumericalWarning",
    "CertificateWarning",
    "DataWarning",
    "InducingWarning",
    "InputError",
    "NumericalError",
    "ModelFileError",
    "__version__",
]
