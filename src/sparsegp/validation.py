"""Checks applied to every array that crosses the public boundary.

Each check raises :class:`~sparsegp.errors.InputError` with a message that
names the argument and the problem, so bad input never reaches JAX.
"""

from __future__ import annotations

import hashlib
import numbers
import warnings

import numpy as np
from sklearn.exceptions import DataConversionWarning

from .errors import InputError, InputTypeError


def _to_float(value, name):
    try:
        arr = np.asarray(value)
        if arr.dtype.kind == "c":
            raise InputError(f"Complex data not supported: {name} holds complex numbers; sparsegp needs real values")
        return arr.astype(np.float64, copy=False)
    except (TypeError, ValueError) as exc:
        raise InputTypeError(
            f"{name} could not be converted to a float64 array (every entry must be a real number): {exc}"
        ) from None


def as_float_matrix(
    X, name: str = "X", *, min_rows: int = 1, n_features: int | None = None, owner: str = "the model"
) -> np.ndarray:
    """Return ``X`` as a C-contiguous float64 2-D array after validating it.

    Rejects: non-numeric data, 1-D or >2-D arrays, fewer than ``min_rows`` rows,
    zero columns, a column count different from ``n_features``, NaN and inf.
    """
    if X is None:
        raise InputError(f"{name} is None; expected a 2-D array of shape (n_samples, n_features)")
    if hasattr(X, "toarray") and not isinstance(X, np.ndarray):
        raise InputError(f"{name} is a sparse matrix; sparsegp needs a dense 2-D array (call .toarray())")
    arr = _to_float(X, name)
    if arr.ndim == 1:
        raise InputError(
            f"{name} is 1-D with shape {arr.shape}; expected a 2-D array of shape (n_samples, n_features). "
            "Reshape your data with X.reshape(-1, 1) for a single feature or X.reshape(1, -1) for a single sample."
        )
    if arr.ndim != 2:
        raise InputError(f"{name} has {arr.ndim} dimensions (shape {arr.shape}); expected a 2-D array")
    if arr.shape[0] < min_rows:
        raise InputError(f"{name} has {arr.shape[0]} sample(s) (shape {arr.shape}); at least {min_rows} required")
    if arr.shape[1] == 0:
        raise InputError(f"{name} has 0 feature(s) (shape={arr.shape}) while a minimum of 1 is required.")
    if n_features is not None and arr.shape[1] != n_features:
        raise InputError(f"{name} has {arr.shape[1]} features, but {owner} is expecting {n_features} features as input")
    check_finite(arr, name)
    return np.ascontiguousarray(arr)


def as_float_vector(y, name: str = "y", *, n: int | None = None) -> np.ndarray:
    """Return ``y`` as a float64 1-D array; an (n, 1) column is accepted and flattened."""
    if y is None:
        raise InputError(f"{name} is None; expected a 1-D array of targets")
    arr = _to_float(y, name)
    if arr.ndim == 2 and arr.shape[1] == 1:
        warnings.warn(
            f"A column-vector {name} was passed when a 1d array was expected; it was flattened.",
            DataConversionWarning,
            stacklevel=3,
        )
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise InputError(
            f"{name} has shape {arr.shape}; expected a 1-D array of targets (multi-output is not supported)"
        )
    if arr.shape[0] == 0:
        raise InputError(f"{name} is empty; at least 1 target required")
    if n is not None and arr.shape[0] != n:
        raise InputError(f"{name} has {arr.shape[0]} entries but X has {n} rows; they must match")
    check_finite(arr, name)
    return np.ascontiguousarray(arr)


def as_float_targets(y, n: int) -> np.ndarray:
    """Targets as float64: a vector (n,), or (n, k) for k >= 2 targets fitted together (an (n, 1) column is
    flattened, as :func:`as_float_vector` does)."""
    arr = _to_float(y, "y") if y is not None else None
    if arr is not None and arr.ndim > 2:
        raise InputError(f"y has shape {arr.shape}; expected (n,) targets, or (n, k) for k targets fitted together")
    if arr is None or arr.ndim != 2 or arr.shape[1] < 2:
        return as_float_vector(y, "y", n=n)
    if arr.shape[0] != n:
        raise InputError(f"y has {arr.shape[0]} rows but X has {n}; they must match")
    check_finite(arr, "y")
    return np.ascontiguousarray(arr)


def as_noise_variance(v, n: int, name: str = "noise_variance") -> np.ndarray | None:
    """A known noise variance per row: None, or a scalar or (n,) array of finite values >= 0, as float64 (n,)."""
    if v is None:
        return None
    arr = _to_float(v, name)
    if arr.ndim == 0:
        arr = np.full(n, float(arr))
    if arr.ndim != 1 or arr.shape[0] != n:
        raise InputError(f"{name} has shape {arr.shape}; expected a scalar or one variance per row ({n},)")
    check_finite(arr, name)
    if np.any(arr < 0):
        raise InputError(
            f"{name} holds {int(np.sum(arr < 0))} negative value(s) (first at row {int(np.argmax(arr < 0))}); variances are >= 0"
        )
    return np.ascontiguousarray(arr)


def fingerprint(*arrays) -> str:
    """A SHA-256 of validated float arrays, shapes included: recognises the training data when it is passed again
    (``SparseGPRegressor.log_marginal_likelihood``) without keeping it."""
    h = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(a, dtype=np.float64)
        h.update(repr(a.shape).encode())
        h.update(a.tobytes())
    return h.hexdigest()


def check_finite(arr: np.ndarray, name: str) -> None:
    """Raise if ``arr`` holds NaN or inf, saying where the first one is."""
    bad = ~np.isfinite(arr)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        kind = "NaN" if np.isnan(arr[idx]) else "inf"
        where = f"index {idx[0]}" if len(idx) == 1 else f"row {idx[0]}, column {idx[1]}"
        raise InputError(
            f"{name} contains {int(bad.sum())} non-finite value(s) (first: {kind} at {where}); "
            "remove or impute them before fitting"
        )


def _hyperparameter(value, name: str, what: str) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a {what} number or array of numbers, got {value!r}") from None
    if arr.size == 0:
        raise InputError(f"{name} is empty; expected a {what} number or array")
    if not np.all(np.isfinite(arr)):
        raise InputError(f"{name} must be finite, got {value!r}")
    return arr


def check_positive(value, name: str) -> np.ndarray:
    """Validate a positive hyper-parameter (scalar or array) and return it as float64."""
    arr = _hyperparameter(value, name, "positive")
    if np.any(arr <= 0):
        raise InputError(f"{name} must be strictly positive, got {value!r}")
    return arr


def check_non_negative(value, name: str) -> np.ndarray:
    """Validate a non-negative hyper-parameter (scalar or array) and return it as float64."""
    arr = _hyperparameter(value, name, "non-negative")
    if np.any(arr < 0):
        raise InputError(f"{name} must be >= 0, got {value!r}")
    return arr


def check_int(value, name: str, *, minimum: int = 0) -> int:
    """Validate an integer option that must be at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InputError(f"{name} must be an integer, got {value!r}")
    if value < minimum:
        raise InputError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def feature_names_of(X) -> np.ndarray | None:
    """Column names of a table-like X (a DataFrame's ``columns``) when all are strings, else None.

    scikit-learn's convention: ``feature_names_in_`` is set only when every column name is a string.
    """
    columns = getattr(X, "columns", None)
    if columns is None:
        return None
    names = np.asarray(list(columns), dtype=object)
    return names if all(isinstance(n, str) for n in names) else None


def check_feature_names(fitted: np.ndarray | None, X, owner: str) -> None:
    """Reject a table whose column names differ from those seen at fit, with scikit-learn's messages."""
    given = feature_names_of(X)
    if fitted is None or given is None:
        return
    if list(given) == list(fitted):
        return
    unseen = [n for n in given if n not in set(fitted)]
    missing = [n for n in fitted if n not in set(given)]
    detail = []
    if unseen:
        detail.append("Feature names unseen at fit time:\n" + "".join(f"- {n}\n" for n in unseen))
    if missing:
        detail.append("Feature names seen at fit time, yet now missing:\n" + "".join(f"- {n}\n" for n in missing))
    if not detail:
        detail.append("Feature names must be in the same order as they were in fit.\n")
    raise InputError(f"The feature names should match those that were passed during fit ({owner}).\n" + "".join(detail))


def check_label_values(labels: np.ndarray) -> None:
    """Class labels (or their distinct values) as a classifier needs them: floats only where finite and whole."""
    if labels.dtype.kind == "f":
        if not np.all(np.isfinite(labels)):
            raise InputError("y holds NaN or inf; class labels must be finite")
        if np.any(labels != np.round(labels)):
            raise InputError(
                "Unknown label type: y holds non-integer floats (continuous targets); a classifier needs class labels"
            )
