"""Saving and loading models without pickle.

A model file is one ``.npz`` archive (read with ``allow_pickle=False``) whose
arrays are the model's numeric state and whose ``__metadata__`` entry is a
JSON string: format version, estimator type, constructor parameters, kernel,
learned scalars. Any NumPy can read it: ``np.load(path)`` then
``json.loads(str(f["__metadata__"]))``. Loading validates every field and
raises :class:`~sparsegp.errors.ModelFileError` naming what is wrong.
"""

from __future__ import annotations

import json
import os
import zipfile

import numpy as np

from .._atomic import replaced_atomically
from .._docstrings import fill
from ..errors import ModelFileError

FORMAT = "sparsegp-model"
FORMAT_VERSION = 5  # 5: warm_start, and a sparse model's inducing ("auto" or its fitted m), among the params
_ESTIMATORS: dict[str, type] = {}


class SaveLoadMixin:
    """``save`` / ``load`` for estimators that implement ``_get_state`` / ``_from_state``."""

    def _check_fitted(self) -> None:  # provided by the estimator base class
        raise NotImplementedError

    def save(self, path) -> str:
        """Save the fitted model as ``.npz`` + JSON metadata (no pickle); returns the path."""
        self._check_fitted()
        return save_model(self, path)

    @classmethod
    def load(cls, path):
        """Load a model saved by :meth:`save`; validates every field."""
        from ..errors import InputError

        model = load_model(path)
        if not isinstance(model, cls):
            raise InputError(f"{path!r} holds a {type(model).__name__}, not a {cls.__name__}")
        return model


def construct(cls, meta: dict, allowed):
    """``cls(**meta["params"])`` and ``meta["kernel"]`` rebuilt, each checked (for ``_from_state``)."""
    from ..errors import InputError
    from ..kernels import kernel_from_dict

    params = require(meta, "params", dict)
    unknown = set(params) - set(allowed)
    if unknown:
        raise ModelFileError(f"metadata 'params' has unknown entries {sorted(unknown)}")
    try:
        model = cls(**getattr(cls, "_options_from_file", dict)(params))
    except (TypeError, InputError) as exc:
        raise ModelFileError(f"metadata 'params' do not match {cls.__name__}: {exc}") from None
    try:
        model.kernel_ = kernel_from_dict(require(meta, "kernel", dict))
    except InputError as exc:
        raise ModelFileError(f"metadata field 'kernel' is invalid: {exc}") from None
    return model


def register(cls):
    """Class decorator: make an estimator type loadable by name."""
    _ESTIMATORS[cls.__name__] = cls
    return cls


@fill()
def save_model(estimator, path) -> str:
    """Write a fitted estimator to one ``.npz`` file: its arrays, and its settings and fitted values as JSON
    inside (never pickled). ``estimator.save(path)`` does the same.

    Parameters
    ----------
    estimator : ExactGPRegressor, SparseGPRegressor, IVMClassifier or OneVsRestIVMClassifier
        A fitted estimator.
    path : str or path-like
        Where to write; ``.npz`` is appended if missing.

    Returns
    -------
    str
        The path written.

    Raises
    ------
    NotFittedError
        If the estimator is not fitted.
    ModelFileError
        If a field cannot be stored without pickle.

    Examples
    --------
    >>> import os, tempfile
    {toy_regression}
    >>> from sparsegp import ExactGPRegressor, load_model, save_model
    >>> model = ExactGPRegressor(random_state=0).fit(X, y)
    >>> path = save_model(model, os.path.join(tempfile.mkdtemp(), "model"))
    >>> path.endswith(".npz"), np.allclose(load_model(path).predict(X), model.predict(X))
    (True, True)
    """
    meta, arrays = estimator._get_state()
    meta = {"format": FORMAT, "format_version": FORMAT_VERSION, "estimator": type(estimator).__name__, **meta}
    path = os.fspath(path)
    if not path.endswith(".npz"):
        path += ".npz"
    for k, v in arrays.items():
        if np.asarray(v).dtype == object:
            raise ModelFileError(f"array {k!r} has dtype object and cannot be saved without pickle")
    payload = {"__metadata__": np.array(json.dumps(meta, allow_nan=False))}
    payload.update((k, np.asarray(v)) for k, v in arrays.items())
    with replaced_atomically(path) as f:  # a crash while saving leaves the old file whole
        np.savez(f, allow_pickle=False, **payload)
    return path


def _read_archive(path: str) -> dict:
    """The arrays of an .npz archive, each member read with ``allow_pickle=False``.

    Anything unreadable, whatever the reader raises (a bad zip structure, an unsupported or
    encrypted member, a damaged .npy header, a CRC mismatch), becomes one ModelFileError that
    names the member: the file is untrusted input.
    """
    if os.path.isdir(path):
        raise ModelFileError(f"{path!r} is a directory, not a model file")
    if not zipfile.is_zipfile(path):
        with open(path, "rb") as fh:
            head = fh.read(8)
        if head[:1] == b"\x80":
            raise ModelFileError(f"{path!r} is not a model file: it contains pickled data, which sparsegp never loads")
        if head.startswith(b"\x93NUMPY"):
            raise ModelFileError(f"{path!r} is a single .npy array, not a sparsegp model archive")
        raise ModelFileError(f"{path!r} is not a sparsegp model file: a model is an .npz (zip) archive")
    arrays = {}
    try:
        with np.load(path, allow_pickle=False) as f:
            for key in f.files:
                try:
                    arrays[key] = f[key]
                    if not isinstance(arrays[key], np.ndarray):  # NumPy hands back non-.npy members as bytes
                        raise ModelFileError(f"{path!r}: member {key!r} is not a .npy array")
                except ModelFileError:
                    raise
                except ValueError as exc:
                    if "allow_pickle" in str(exc):
                        raise ModelFileError(
                            f"{path!r}: member {key!r} contains pickled data, which sparsegp never loads"
                        ) from None
                    raise ModelFileError(f"{path!r}: member {key!r} is not a valid .npy array ({exc})") from None
                except Exception as exc:  # noqa: BLE001 - untrusted bytes: any reader failure is a bad file
                    raise ModelFileError(
                        f"{path!r}: member {key!r} cannot be read ({type(exc).__name__}: {exc})"
                    ) from None
    except ModelFileError:
        raise
    except Exception as exc:  # noqa: BLE001 - the archive as a whole cannot be opened
        damaged = _damaged_member(path)
        if damaged is not None:
            raise ModelFileError(f"{path!r}: member {damaged[0]!r} is damaged ({damaged[1]})") from None
        # NumPy reads a file that does not start like a zip archive as a pickle: say what is wrong instead
        reason = "its first bytes are not an archive header" if "pickle" in str(exc) else f"{type(exc).__name__}: {exc}"
        raise ModelFileError(f"{path!r} is not a readable .npz archive ({reason})") from None
    return arrays


def _damaged_member(path: str):
    """(name, what is wrong) of the first member of a zip archive that cannot be read back intact, or None."""
    try:
        with zipfile.ZipFile(path) as zf:
            for info in zf.infolist():
                try:
                    zf.read(info.filename)
                except Exception as exc:  # noqa: BLE001 - a bad local header, CRC or compressed stream
                    return info.filename, f"{type(exc).__name__}: {exc}"
    except Exception:  # noqa: BLE001 - the central directory itself is unreadable
        return None
    return None


@fill()
def load_model(path):
    """Read a model written by :func:`save_model`, validating every field (shapes, types, finiteness, the
    format version) before building the estimator.

    Parameters
    ----------
    path : str or path-like
        A file written by :func:`save_model` or ``sparsegp fit``.

    Returns
    -------
    estimator
        The fitted estimator of the class that was saved, ready to ``predict``.

    Raises
    ------
    ModelFileError
        If the file is missing, not a sparsegp model, or a field fails validation.

    Examples
    --------
    >>> import os, tempfile
    {toy_regression}
    >>> from sparsegp import SparseGPRegressor, load_model
    >>> from sparsegp.options import Auto
    >>> path = SparseGPRegressor(inducing=Auto(max_inducing=16), random_state=0).fit(X, y).save(
    ...     os.path.join(tempfile.mkdtemp(), "sgpr.npz"))
    >>> type(load_model(path)).__name__
    'SparseGPRegressor'
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise ModelFileError(f"model file {path!r} does not exist")
    arrays = _read_archive(path)
    if "__metadata__" not in arrays:
        raise ModelFileError(f"{path!r} has no '__metadata__' entry; it was not written by sparsegp")
    raw = arrays.pop("__metadata__")
    if raw.dtype.kind != "U" or raw.ndim != 0:
        raise ModelFileError(f"{path!r}: '__metadata__' must be a JSON string")
    try:
        meta = json.loads(str(raw))
    except json.JSONDecodeError as exc:
        raise ModelFileError(f"{path!r}: metadata is not valid JSON ({exc})") from None
    if not isinstance(meta, dict):
        raise ModelFileError(f"{path!r}: metadata must be a JSON object")
    if meta.get("format") != FORMAT:
        raise ModelFileError(f"{path!r}: metadata field 'format' is {meta.get('format')!r}, expected {FORMAT!r}")
    version = meta.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise ModelFileError(f"{path!r}: metadata field 'format_version' is missing or not an integer")
    if version > FORMAT_VERSION or version < 1:
        raise ModelFileError(
            f"{path!r}: format_version {version} is not supported by this sparsegp (supports 1..{FORMAT_VERSION}); "
            "upgrade sparsegp to read it"
        )
    cls = _ESTIMATORS.get(meta.get("estimator"))
    if cls is None:
        raise ModelFileError(
            f"{path!r}: unknown estimator type {meta.get('estimator')!r}; known: {sorted(_ESTIMATORS)}"
        )
    for k, v in arrays.items():
        if v.dtype.kind == "f" and not np.all(np.isfinite(v)):
            raise ModelFileError(f"{path!r}: array {k!r} contains NaN or inf")
    try:
        model = cls._from_state(meta, arrays)
        _reject_unknown_entries(model, meta, arrays)
        return model
    except ModelFileError as exc:
        raise ModelFileError(f"{path!r}: {exc}") from None
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelFileError(f"{path!r}: invalid or missing field in the model file: {exc}") from None


def _reject_unknown_entries(model, meta: dict, arrays: dict) -> None:
    """Every metadata field and array must be one the loaded model itself would write: anything else
    means the file was edited or written by another program, and is not silently ignored."""
    own_meta, own_arrays = model._get_state()
    extra = sorted(set(meta) - set(own_meta) - {"format", "format_version", "estimator"})
    if extra:
        raise ModelFileError(f"unknown metadata field(s) {extra} for a {type(model).__name__} model file")
    extra = sorted(set(arrays) - set(own_arrays))
    if extra:
        raise ModelFileError(f"unknown array(s) {extra} for a {type(model).__name__} model file")


def require(meta: dict, key: str, kind, *, where: str = "metadata"):
    """Fetch ``meta[key]`` checking its JSON type; raise ModelFileError naming the field otherwise."""
    if key not in meta:
        raise ModelFileError(f"{where} field {key!r} is missing")
    v = meta[key]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(v, bool) and bool not in kinds:
        raise ModelFileError(f"{where} field {key!r} has the wrong type (bool)")
    if float in kinds and isinstance(v, int) and not isinstance(v, bool):
        v = float(v)
    if not isinstance(v, kinds):
        raise ModelFileError(
            f"{where} field {key!r} has type {type(v).__name__}, expected {'/'.join(k.__name__ for k in kinds)}"
        )
    return v


def require_array(arrays: dict, key: str, *, ndim: int, shape=None):
    """Fetch a float array from the archive, checking its rank and (partial) shape."""
    if key not in arrays:
        raise ModelFileError(f"array {key!r} is missing")
    a = arrays[key]
    if a.dtype.kind not in "fi" or a.ndim != ndim:
        raise ModelFileError(f"array {key!r} must be a {ndim}-D numeric array, got dtype {a.dtype} shape {a.shape}")
    if shape is not None:
        for i, s in enumerate(shape):
            if s is not None and a.shape[i] != s:
                raise ModelFileError(f"array {key!r} has shape {a.shape}, expected {tuple(shape)}")
    return np.asarray(a, dtype=np.float64)
