""":meth:`SparseGPRegressor.log_marginal_likelihood`'s data and objective: the rows grouped as the fit grouped them,
the known noise variances the model was fitted with, and the quantity ``objective_name_`` names (the approximation's
objective, or the exact GP's log p(y) where Z is every training input)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from ..approximations.exact_gp import DESCRIPTION as EXACT_DESCRIPTION
from ..approximations.exact_gp import exact_log_marginal
from ..approximations.registry import APPROXIMATIONS
from ..backends import is_dask_collection
from ..backends.base import Moments
from ..backends.in_memory import InMemory
from ..backends.jax_sums import chunk_size_for
from ..backends.replicates import Rows, distinct_records
from ..errors import InputError
from ..validation import as_float_vector, as_noise_variance, fingerprint


def keep_noise_variance(model, X, y, noise_variance) -> None:
    """``noise_variance_given_``, and for rows in memory the variances themselves with a fingerprint of the training
    data (``train_noise_variance_``, ``train_fingerprint_``): ``log_marginal_likelihood`` on the training data then
    evaluates the model that was fitted."""
    model.noise_variance_given_ = noise_variance is not None
    model.train_noise_variance_ = model.train_fingerprint_ = None
    if noise_variance is None or is_dask_collection(X) or is_dask_collection(y):
        return
    X, y, _ = model._training_arrays(X, y)
    model.train_noise_variance_ = as_noise_variance(noise_variance, X.shape[0])
    model.train_fingerprint_ = fingerprint(X, y)


def objective_rows(model, X, y, noise_variance=None) -> Rows:
    """The rows (X, y) as the fit sums over them: targets normalised as at fit, every row or one weighted row per
    distinct input and known variance."""
    if X is None or y is None:
        raise InputError(
            "SparseGPRegressor keeps no training data: pass the training X and y to "
            "log_marginal_likelihood(theta, eval_gradient, X=X, y=y)"
        )
    X = model._validate_test_inputs(X)
    y = as_float_vector(y, "y", n=X.shape[0])
    known = _known_noise_of(model, X, y, noise_variance)
    if model.duplicates == "drop":
        keep = distinct_records(X, y)
        X, y = X[keep], y[keep]
        known = None if known is None else known[keep]
    y = (y - model.y_mean_) / model.y_std_
    known = None if known is None else known / model.y_std_**2
    moments = Moments(X.shape[0], np.var(X, axis=0), model.y_mean_, model.y_std_)
    return InMemory(X, y, collapsed=model.duplicates == "collapse", moments=moments, known=known).rows(1.0)


def _known_noise_of(model, X, y, noise_variance):
    """The known noise variances of the rows (X, y) in the units of y squared, or None: as given, else the fit's own
    where (X, y) are its training data."""
    if noise_variance is not None:
        return as_noise_variance(noise_variance, X.shape[0])
    if not getattr(model, "noise_variance_given_", False):
        return None
    if model.train_fingerprint_ is not None and fingerprint(X, y) == model.train_fingerprint_:
        return model.train_noise_variance_
    raise InputError(
        "this model was fitted with a per-row noise_variance, and X, y are not its training data (or the fit was "
        "on dask arrays, whose variances the model does not keep): pass "
        "log_marginal_likelihood(..., X=X, y=y, noise_variance=...) for these rows (0 for none)"
    )


def log_objective(model, kernel, noise, rows: Rows):
    """The quantity ``objective_name_`` names at ``kernel`` and ``noise`` over ``rows`` (traceable)."""
    X, y = jnp.asarray(rows.X), jnp.asarray(rows.y)
    if model.objective_name_ == EXACT_DESCRIPTION:  # Z = every training input: the fit's objective is log p(y)
        return exact_log_marginal(kernel, noise, X, y, **rows.weights())
    chunk = chunk_size_for(rows.X.shape[0], model.Z_.shape[0], model._file_params()["chunk_size"])
    return APPROXIMATIONS[model.approximation].objective(
        kernel, jnp.asarray(model.Z_), noise, X, y, chunk=chunk, jitter=float(model.jitter), **rows.weights()
    )


__all__ = ["keep_noise_variance", "log_objective", "objective_rows"]
