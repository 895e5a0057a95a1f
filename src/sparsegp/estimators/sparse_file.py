"""Reading a :class:`~sparsegp.SparseGPRegressor` back from its model file (format 1 to 5), field by field."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..approximations.augmented import TrainingCache
from ..approximations.base import prediction_mode
from ..approximations.common import make_posterior
from ..approximations.exact_host import on_host
from ..approximations.sparse_host import host_make_posterior
from ..errors import InputError, ModelFileError
from ..fitting.config import check_sparse_options
from . import persistence


def sparse_state(model):
    """(metadata, arrays) of a fitted :class:`SparseGPRegressor` for its model file."""
    meta = model._base_state()
    # "auto", or the fitted m for a fixed set (given as m, rows, inputs or a selector): a warm start from the file
    # goes on at that m
    meta["params"]["inducing"] = model.inducing if isinstance(model.inducing, str) else int(model.Z_.shape[0])
    meta["objective"] = float(model.objective_)
    meta["objective_name"] = model.objective_name_
    meta["upper_bound"], meta["gap"] = float(model.upper_bound_), float(model.gap_)
    meta["certificate"] = dict(model.certificate_)
    meta["has_inducing_indices"] = model.inducing_indices_ is not None
    meta["stop_reason"], meta["inducing_path"] = model.stop_reason_, path_for_json(model.inducing_path_)
    meta["on_host"] = bool(model.on_host_)
    meta["noise_variance"] = None  # fitted without known noise variances
    if getattr(model, "noise_variance_given_", False):
        meta["noise_variance"] = {"fingerprint": model.train_fingerprint_}
    post = model.posterior_
    if np.ndim(model.noise_) == 1:  # a noise per target: Z and K_uu's factor once, the rest per target
        post = post._replace(Z=post.Z[0], Luu=post.Luu[0])
    arrays = {f"posterior_{k}": np.asarray(v) for k, v in post._asdict().items()}
    if model.inducing_indices_ is not None:
        arrays["inducing_indices"] = np.asarray(model.inducing_indices_, dtype=np.int64)
    if getattr(model, "train_noise_variance_", None) is not None:
        arrays["train_noise_variance"] = np.asarray(model.train_noise_variance_, dtype=np.float64)
    if model.train_cache_ is not None:
        arrays.update({f"train_{k}": np.asarray(v) for k, v in model.train_cache_._asdict().items()})
    return meta, arrays


def sparse_from_state(cls, meta, arrays):
    """A :class:`SparseGPRegressor` from a model file's metadata and arrays, every field validated."""
    model = cls._restore_base(_one_optimize_option(meta))
    try:
        check_sparse_options(model._file_params())
    except InputError as exc:
        raise ModelFileError(f"metadata 'params' are invalid: {exc}") from None
    inducing = model._file_params()["inducing"]  # absent before format 5: "auto"
    if not (inducing == "auto" or (isinstance(inducing, int) and not isinstance(inducing, bool) and inducing >= 1)):
        raise ModelFileError(f"metadata 'params' entry 'inducing' must be 'auto' or a number m >= 1, got {inducing!r}")
    D = model.n_features_in_
    Z = persistence.require_array(arrays, "posterior_Z", ndim=2, shape=(None, D))
    m = Z.shape[0]
    parts = {"Z": Z}
    k = np.size(model.noise_)
    each = np.ndim(model.noise_) == 1  # a noise per target: LB, c and w_mean per target (leading axis k)
    per_target = (k, m) if each else (m,) + np.shape(model.y_mean_)  # (m, k) for k targets sharing a noise
    LB = (k, m, m) if each else (m, m)
    for key, shape in (("Luu", (m, m)), ("LB", LB), ("c", per_target), ("w_mean", per_target)):
        parts[key] = persistence.require_array(arrays, f"posterior_{key}", ndim=len(shape), shape=shape)
    for key in ("Luu", "LB"):
        L = parts[key]
        diag = np.diagonal(L, axis1=-2, axis2=-1)
        if np.any(np.triu(L, 1) != 0) or np.any(diag <= 0):
            raise ModelFileError(f"array 'posterior_{key}' must be lower triangular with a positive diagonal")
    # absent before it was recorded (JAX programs); on a machine where the host path does not apply (a GPU), the
    # JAX programs compute the same posterior to rounding
    hosted = persistence.require(meta, "on_host", bool) if "on_host" in meta else False
    model.on_host_ = hosted and not each and on_host(model.kernel_, model.noise_, Z)
    if model.on_host_:
        post = host_make_posterior(*(parts[key] for key in ("Z", "Luu", "LB", "c")))
    else:
        factors = [jnp.asarray(parts[key]) for key in ("Z", "Luu", "LB", "c")]
        post = jax.vmap(make_posterior, in_axes=(None, None, 0, 0))(*factors) if each else make_posterior(*factors)
    if not np.allclose(np.asarray(post.w_mean), parts["w_mean"], rtol=1e-8, atol=1e-12):
        raise ModelFileError("array 'posterior_w_mean' is inconsistent with the stored factors")
    model.posterior_ = post
    model.Z_ = Z
    model.objective_ = persistence.require(meta, "objective", float)
    model.objective_name_ = persistence.require(meta, "objective_name", str)
    model.upper_bound_, model.gap_ = _certificate(meta)
    model.certificate_ = _bound_used(meta)
    model.inducing_indices_ = None
    if persistence.require(meta, "has_inducing_indices", bool):
        idx = arrays.get("inducing_indices")
        if idx is None or idx.dtype.kind != "i" or idx.shape != (m,):
            raise ModelFileError("array 'inducing_indices' is missing or malformed")
        model.inducing_indices_ = idx
    model.train_cache_ = None
    if prediction_mode(model.prediction).full_data:
        Xs = persistence.require_array(arrays, "train_Xs", ndim=3, shape=(None, None, D))
        rs = persistence.require_array(arrays, "train_rs", ndim=2, shape=Xs.shape[:2])
        ms = persistence.require_array(arrays, "train_ms", ndim=2, shape=Xs.shape[:2])
        if not np.all((ms >= 0) & (ms == np.round(ms))):
            raise ModelFileError("array 'train_ms' must hold row weights: whole numbers >= 0 (0 on padding)")
        model.train_cache_ = TrainingCache(jnp.asarray(Xs), jnp.asarray(rs), jnp.asarray(ms))
    model.optimizer_report_, model.n_iter_ = None, 0
    model.inducing_path_, model.stop_reason_ = growth_from_meta(meta)
    _noise_variance(model, meta, arrays)
    return model


def _noise_variance(model, meta, arrays) -> None:
    """``noise_variance_given_``, ``train_noise_variance_`` and ``train_fingerprint_`` (absent before they were
    recorded: a fit without known noise variances)."""
    record = meta.get("noise_variance")
    model.noise_variance_given_ = record is not None
    model.train_noise_variance_ = model.train_fingerprint_ = None
    if record is None:
        if "train_noise_variance" in arrays:
            raise ModelFileError("array 'train_noise_variance' is present, but metadata 'noise_variance' is null")
        return
    fp = record.get("fingerprint") if isinstance(record, dict) else None
    if (
        not isinstance(record, dict)
        or set(record) != {"fingerprint"}
        or not (fp is None or (isinstance(fp, str) and len(fp) == 64 and all(c in "0123456789abcdef" for c in fp)))
    ):
        raise ModelFileError(
            "metadata field 'noise_variance' must be null or a record with 'fingerprint' (null or 64 hex digits), "
            f"got {record!r}"
        )
    if (fp is None) != ("train_noise_variance" not in arrays):
        raise ModelFileError("metadata 'noise_variance' has a fingerprint exactly where 'train_noise_variance' is kept")
    if fp is not None:
        v = persistence.require_array(arrays, "train_noise_variance", ndim=1)
        if np.any(v < 0):
            raise ModelFileError("array 'train_noise_variance' must hold variances >= 0")
        model.train_noise_variance_, model.train_fingerprint_ = v, fp


NULLABLE = ("upper", "start", "next_start")  # fields of a growth record that may be NaN (null in the file)


def path_for_json(path):
    """The growth's records with NaN (a size not tried) as null: the metadata is strict JSON."""
    if path is None:
        return None
    return [{k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in st.items()} for st in path]


def growth_from_meta(meta):
    """(inducing_path_, stop_reason_): None for a fit that did not choose m, and for files before format 4. Every
    growth's records (the regressors' and the variational fits'); ``upper``, ``start`` and ``next_start`` may be
    null (no certificate, a size not tried)."""
    path, reason = meta.get("inducing_path"), meta.get("stop_reason")
    if reason is not None and not isinstance(reason, str):
        raise ModelFileError(f"metadata field 'stop_reason' must be a string or null, got {reason!r}")
    if path is None:
        return None, reason
    fields = ("m", "objective", "lower", "upper", "n_iter", "seconds", "start", "next_start")
    if not isinstance(path, list) or not all(
        isinstance(st, dict)
        and set(st) == set(fields)
        and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) or (v is None and k in NULLABLE)
            for k, v in st.items()
        )
        for st in path
    ):
        raise ModelFileError(f"metadata field 'inducing_path' must be a list of records with the numbers {fields}")
    return [{k: (float("nan") if v is None else v) for k, v in st.items()} for st in path], reason


def _certificate(meta):
    """(upper bound, gap) from format 4 on; NaN for older files, which did not carry them."""
    if meta.get("format_version", 0) < 4:
        return float("nan"), float("nan")
    upper, gap = persistence.require(meta, "upper_bound", float), persistence.require(meta, "gap", float)
    if gap < -1e-6 * max(1.0, abs(upper)):  # NaN (a certificate that could not be computed) is kept
        raise ModelFileError(f"metadata field 'gap' must be >= 0 (the upper bound minus the VFE bound), got {gap!r}")
    return upper, gap


def _bound_used(meta):
    """``certificate_``: which upper bound, its cost and how it was made; files without the field had the trace
    bound, the only one then."""
    cert = meta.get("certificate")
    if cert is None:
        return {"bound": "trace", "seconds": 0.0, "detail": "a model file from before the bound was recorded"}
    if (
        not isinstance(cert, dict)
        or set(cert) != {"bound", "seconds", "detail"}
        or cert["bound"] not in ("exact", "cg", "trace")
        or not isinstance(cert["seconds"], (int, float))
        or isinstance(cert["seconds"], bool)
        or not cert["seconds"] >= 0
        or not isinstance(cert["detail"], str)
    ):
        raise ModelFileError(
            "metadata field 'certificate' must be a record with 'bound' ('exact', 'cg' or 'trace'), 'seconds' "
            f"(a number >= 0) and 'detail' (a string), got {cert!r}"
        )
    return {"bound": cert["bound"], "seconds": float(cert["seconds"]), "detail": cert["detail"]}


def _one_optimize_option(meta):
    """Format 1 files carry ``optimize_inducing`` beside ``optimize``; format 2 has the one ``optimize``."""
    params = meta.get("params")
    if not isinstance(params, dict) or "optimize_inducing" not in params or meta.get("format_version") != 1:
        return meta
    params = dict(params)
    free = params.pop("optimize_inducing")
    if not isinstance(free, bool):
        raise persistence.ModelFileError(f"metadata 'params' entry 'optimize_inducing' must be a bool, got {free!r}")
    if params.get("optimize", True) is True and not free:
        params["optimize"] = "hyperparameters"
    return {**meta, "params": params}
