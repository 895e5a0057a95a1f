"""The package's exception types.

Every error a user can trigger derives from :class:`SparseGPError`, and the
input-related ones also from :class:`ValueError`, so ``except ValueError``
keeps working for code written against scikit-learn.
"""

import functools

from ._docstrings import fill


class SparseGPError(Exception):
    """Base class of every error raised by sparsegp: ``except SparseGPError`` catches all of them.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsegp import ExactGPRegressor, SparseGPError
    >>> try:
    ...     ExactGPRegressor().fit(np.zeros((3, 1)), [1.0, np.inf, 2.0])
    ... except SparseGPError as err:
    ...     print(type(err).__name__)
    InputError
    """


class InputError(SparseGPError, ValueError):
    """Input data or arguments are malformed (NaN or inf, wrong shape, too few points, an unknown option).
    Also a :class:`ValueError`, so code written against scikit-learn keeps working. The message names the
    argument and what is wrong with it.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsegp import InputError, SparseGPRegressor
    >>> try:
    ...     SparseGPRegressor(approximation="vfx").fit(np.zeros((4, 1)), np.arange(4.0))
    ... except InputError as err:
    ...     print("vfx" in str(err), isinstance(err, ValueError))
    True True
    """


class InputTypeError(InputError, TypeError):
    """Input of a type that cannot be converted to float64 (also a TypeError, like NumPy's)."""


class NumericalError(SparseGPError, ArithmeticError):
    """A matrix factorisation failed even after escalating the jitter; the message names the matrix and what
    to try (more noise, a larger jitter, fewer or better-spread inducing inputs).

    Examples
    --------
    >>> import numpy as np
    >>> from sparsegp import NumericalError, linalg
    >>> try:
    ...     linalg.cholesky(-np.eye(2), name="K_uu")
    ... except NumericalError as err:
    ...     print("K_uu" in str(err))
    True
    """


class ModelFileError(SparseGPError, ValueError):
    """A saved model file is missing, corrupt, of the wrong format or fails validation (every field of a model
    file is checked when it is read; nothing is unpickled).

    Examples
    --------
    >>> from sparsegp import ModelFileError, load_model
    >>> try:
    ...     load_model("no-such-model.npz")
    ... except ModelFileError as err:
    ...     print(err)
    model file 'no-such-model.npz' does not exist
    """


@functools.cache
def _not_fitted_error() -> type:
    """:class:`NotFittedError`, made on first use: it subclasses scikit-learn's, and importing scikit-learn costs
    more than the rest of ``import sparsegp`` (BENCHMARKS.md, "Latency")."""
    from sklearn.exceptions import NotFittedError as SklearnNotFittedError

    class NotFittedError(SparseGPError, SklearnNotFittedError):
        """An estimator was used before ``fit``. A subclass of scikit-learn's NotFittedError (itself a
        :class:`ValueError` and :class:`AttributeError`).

        Examples
        --------
        >>> import numpy as np
        >>> from sparsegp import NotFittedError, SparseGPRegressor
        >>> try:
        ...     SparseGPRegressor().predict(np.zeros((1, 1)))
        ... except NotFittedError:
        ...     print("fit first")
        fit first
        """

    NotFittedError.__module__, NotFittedError.__qualname__ = __name__, "NotFittedError"
    return NotFittedError


def __getattr__(name: str):
    if name == "NotFittedError":
        return _not_fitted_error()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class DistributedError(SparseGPError, RuntimeError):
    """A computation on a Dask cluster failed (a lost worker that could not be replaced, a task error)."""


@fill()
class DataWarning(UserWarning):
    """The training data were changed or look wrong in a way the fit had to work around (rows dropped with
    ``duplicates="drop"``, weak hyper-priors added for very small data, ...). Turn it into an error with
    :mod:`warnings` where a pipeline must not go on.

    Examples
    --------
    >>> import warnings
    {toy_regression}
    >>> X, y = np.vstack([X, X[:1]]), np.append(y, y[0])  # the first record twice
    >>> from sparsegp import DataWarning, ExactGPRegressor
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = ExactGPRegressor(duplicates="drop", random_state=0).fit(X, y)
    >>> any(issubclass(w.category, DataWarning) for w in caught)
    True
    """


@fill()
class InducingWarning(UserWarning):
    """``inducing="auto"`` stopped at ``max_inducing`` while larger inducing sets were still improving the fit:
    the model is further from the exact GP than the data allow. Raise ``max_inducing`` (or run on a device
    with more memory); ``stop_reason_`` says where any automatic fit stopped.

    Examples
    --------
    {toy_regression}
    >>> y = np.sin(4 * X[:, 0]) + 0.1 * rng.normal(size=200)  # a faster wave than 16 inducing inputs can follow
    >>> from sparsegp import SparseGPRegressor
    >>> from sparsegp.options import Auto
    >>> model = SparseGPRegressor(inducing=Auto(max_inducing=16), random_state=0).fit(X, y)
    >>> model.stop_reason_
    'max_inducing: m = 16'
    >>> model.certificate_["bound"]  # at most 20,000 rows: gap_ is log p(y) - F_V itself, the KL divergence
    'exact'
    """


@fill()
class CertificateWarning(UserWarning):
    """The fitted model's certificate is not sound: its upper bound lies below F_V beyond rounding, so
    ``gap_`` certifies nothing (the factorisations lost their digits). Refit with more jitter or noise.
    A pipeline that must only keep certified fits turns it into an error.

    Examples
    --------
    >>> import warnings
    {toy_regression}
    >>> from sparsegp import CertificateWarning, SparseGPRegressor
    >>> from sparsegp.options import Auto
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("error", CertificateWarning)
    ...     model = SparseGPRegressor(inducing=Auto(max_inducing=16), random_state=0).fit(X, y)
    >>> bool(model.objective_ <= model.upper_bound_)  # F_V <= log p(y) <= upper bound
    True
    """


@fill()
class NumericalWarning(UserWarning):
    """A figure the fit reports about itself could not be computed to a useful accuracy, and is reported as
    unavailable (NaN) rather than as a verdict on the model: the leave-one-out check's rounding error on a
    nearly singular fit (``loo_error_`` nats per row) exceeds what its figures may carry.

    Examples
    --------
    >>> import warnings
    {toy_regression}
    >>> from sparsegp import ExactGPRegressor, NumericalWarning
    >>> from sparsegp.kernels import SquaredExponential
    >>> near_singular = ExactGPRegressor(SquaredExponential(30.0, 1e6), noise=1e-12, optimize=False, min_noise=1e-12)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     near_singular = near_singular.fit(X, y)
    >>> any(issubclass(w.category, NumericalWarning) for w in caught), bool(np.isnan(near_singular.loo_coverage_))
    (True, True)
    """


@fill()
class CalibrationWarning(UserWarning):
    """The fitted model's error bars are far from honest: the leave-one-out check after ``fit`` finds them too
    narrow or too wide, or worse than a constant Gaussian, or a prediction asks for variances the
    approximation is known to understate (SoR away from its inducing inputs). The message gives the
    measured figures and what to check.

    Examples
    --------
    >>> import warnings
    {toy_regression}
    >>> from sparsegp import CalibrationWarning, SparseGPRegressor
    >>> sor = SparseGPRegressor(approximation="sor", inducing=16, optimize="hyperparameters", random_state=0)
    >>> sor = sor.fit(X, y)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = sor.predict(np.array([[6.0]]), return_std=True)  # beyond the data, far from every inducing input
    >>> any(issubclass(w.category, CalibrationWarning) for w in caught)
    True
    """
