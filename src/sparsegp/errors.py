"""The package's exception types.

Every error a user can trigger derives from :class:`SparseGPError`, and the
input-related ones also from :class:`ValueError`, so ``except ValueError``
keeps working for code written against scikit-learn.
"""


class SparseGPError(Exception):
    """Base class of every error raised by sparsegp."""


class InputError(SparseGPError, ValueError):
    """Input data or arguments are malformed (NaN/inf, wrong shape, too few points...)."""


class NumericalError(SparseGPError, ArithmeticError):
    """A matrix factorisation failed even after escalating the jitter."""


class ModelFileError(SparseGPError, ValueError):
    """A saved model file is missing, corrupt, of the wrong format or fails validation."""


class NotFittedError(SparseGPError, ValueError, AttributeError):
    """An estimator was used before ``fit``.

    Derives from ValueError and AttributeError, like scikit-learn's NotFittedError.
    """
