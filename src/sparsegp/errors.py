"""The package's exception types.

Every error a user can trigger derives from :class:`SparseGPError`, and the
input-related ones also from :class:`ValueError`, so ``except ValueError``
keeps working for code written against scikit-learn.
"""

from sklearn.exceptions import NotFittedError as _SklearnNotFittedError


class SparseGPError(Exception):
    """Base class of every error raised by sparsegp."""


class InputError(SparseGPError, ValueError):
    """Input data or arguments are malformed (NaN/inf, wrong shape, too few points...)."""


class InputTypeError(InputError, TypeError):
    """Input of a type that cannot be converted to float64 (also a TypeError, like NumPy's)."""


class NumericalError(SparseGPError, ArithmeticError):
    """A matrix factorisation failed even after escalating the jitter."""


class ModelFileError(SparseGPError, ValueError):
    """A saved model file is missing, corrupt, of the wrong format or fails validation."""


class NotFittedError(SparseGPError, _SklearnNotFittedError):
    """An estimator was used before ``fit``.

    A subclass of scikit-learn's NotFittedError (itself a ValueError and AttributeError).
    """


class DistributedError(SparseGPError, RuntimeError):
    """A computation on a Dask cluster failed (a lost worker that could not be replaced, a task error)."""


class DataWarning(UserWarning):
    """The training data were changed or look wrong in a way the fit had to work around (e.g. repeated rows)."""


class InducingWarning(UserWarning):
    """``inducing="auto"`` stopped at ``max_inducing`` while larger inducing sets were still improving the fit."""


class CertificateWarning(UserWarning):
    """The fitted model's certificate is not sound: its upper bound lies below F_V beyond rounding, so ``gap_``
    certifies nothing (the factorisations lost their digits)."""


class CalibrationWarning(UserWarning):
    """The fitted model's leave-one-out check says its error bars are far from honest (too narrow or too wide)."""
