"""SparseGPRegressor on dask arrays: the fit's statistics on the workers, predictions block by block.

The flow of :meth:`SparseGPRegressor.fit` with the data left on the cluster: the target's mean and
scale and the inputs' spread are dask reductions; the initial inducing inputs are fetched rows (an
int m draws the same rows as the in-memory fit with the same ``random_state``; info-gain, conditional
variance and differential entropy over all candidates run on the partitions
(:mod:`sparsegp.selection.dask_select`); other selectors and k-means on a random sample of
``SAMPLE_ROWS`` rows); every objective and gradient is
:class:`~sparsegp.approximations.objective.HostObjective` over :class:`~sparsegp.distributed.DaskStats`;
the posterior is one more pass. With ``subset`` the first stage fetches that many random rows and fits
them on the driver, exactly as the in-memory fit does, before the refinement on the workers. Every row is
data; with ``duplicates="collapse"`` each partition sums over one weighted row per distinct input of its
own rows (exactly the sums of all its rows). The leave-one-out check scores ``LOO_ROWS`` rows fetched at
random. Not available on dask arrays: re-selection schedules, the augmented and Nyström predictions (they
keep the training data), and ``duplicates="drop"`` (it needs every row at once).
"""

from __future__ import annotations

import warnings

import jax.numpy as jnp
import numpy as np

from ..approximations.common import make_posterior
from ..approximations.objective import HostObjective
from ..distributed import DaskStats, _client
from ..errors import InputError, NumericalError
from ..linalg import MAX_JITTER
from ..replicates import collapse
from ..selection import KMeans, Selector
from ..selection.dask_select import runs_on_partitions, select_dask
from ..stats import chunk_size_for
from ..transforms import to_positive
from ..validation import as_float_matrix
from .base import MIN_INPUTS, params_for_scaled_inputs, scale_from_variances
from .calibration import loo_sample, summarise

SAMPLE_ROWS = 20_000  # rows fetched to the driver for a greedy selection or k-means start


def _arrays(model, X, y):
    import dask.array as da

    X, y = da.asarray(X), da.asarray(y)
    if X.ndim != 2 or y.ndim != 1 or X.shape[0] != y.shape[0]:
        raise InputError(f"X must be 2-D and y 1-D with as many rows, got shapes {X.shape} and {y.shape}")
    if X.shape[0] < MIN_INPUTS:
        raise InputError(f"X has {X.shape[0]} sample(s); at least {MIN_INPUTS} required")
    for name, a in (("X", X), ("y", y)):
        if a.dtype.kind not in "fiu":
            raise InputError(f"{name} must hold numbers, got dtype {a.dtype}")
    return X.astype(np.float64), y.astype(np.float64)


def _initial_inducing(model, X, y, s, kernel, noise, rng):
    """(Z0 on the scaled inputs, training-row indices or None, the same rows in user units or None)."""
    n, ind = X.shape[0], model.inducing
    if isinstance(ind, Selector) and runs_on_partitions(ind):  # the selection as a map over all rows
        sel = select_dask(ind, kernel, noise, X / s, (y - model.y_mean_) / model.y_std_, verbose=model.verbose)
        model.selection_ = sel
        idx = sel.indices
        rows = _fetch(X, idx)
        return rows / s, idx, rows
    if isinstance(ind, (Selector, KMeans)):
        sample = np.sort(rng.choice(n, size=min(n, SAMPLE_ROWS), replace=False))
        Xs, ys = (a.compute() for a in (X[sample], y[sample]))
        Z0, sub = model._initial_inducing(Xs / s, rng, ys, kernel, noise, scale=s)
        return Z0, (None if sub is None else sample[sub]), (None if sub is None else Xs[sub])
    idx = model._inducing_rows(n, rng)  # the same rows as the in-memory fit with the same random_state
    if idx is None:
        return as_float_matrix(ind, "inducing", n_features=X.shape[1], owner="the training data") / s, None, None
    rows = _fetch(X, idx)
    if isinstance(ind, (int, np.integer)):
        idx, rows = _distinct_inputs(X, idx, rows, rng)
    return rows / s, idx, rows


def _fetch(X, idx):
    """Rows ``idx`` of a dask array, in that order."""
    return X[np.sort(idx)].compute()[np.argsort(np.argsort(idx))]


def _distinct_inputs(X, idx, rows, rng, tries: int = 8):
    """The drawn rows with rows that repeat an input drawn before replaced by further random rows.

    In memory an int m draws m distinct inputs from the grouped rows; on the cluster the groups are not
    known, so repeats among the m drawn rows (which would make K_uu singular) are redrawn a few times,
    and any left are dropped with a warning. Without repeated inputs this returns the rows unchanged.
    """
    m = len(idx)
    for attempt in range(tries + 1):
        keep = np.sort(np.unique(rows, axis=0, return_index=True)[1])[:m]
        idx, rows = idx[keep], rows[keep]
        spare = np.setdiff1d(np.arange(X.shape[0]), idx)
        if keep.size == m or spare.size == 0 or attempt == tries:
            break
        extra = rng.choice(spare, size=min(4 * (m - keep.size) + 16, spare.size), replace=False)
        idx, rows = np.concatenate([idx, extra]), np.concatenate([rows, _fetch(X, extra)])
    if len(idx) < m:
        warnings.warn(
            f"inducing={m}: only {len(idx)} distinct inputs among the rows drawn; using those",
            UserWarning,
            stacklevel=5,
        )
    return idx, rows


def fit_dask(model, X, y):
    """:meth:`SparseGPRegressor.fit` for dask arrays X, y (see the module docstring)."""
    import dask

    if model.reselect is not None:
        raise InputError(f"reselect={model.reselect!r} is not available on dask arrays; use reselect=None")
    if model.prediction != "standard":
        raise InputError(
            f"prediction={model.prediction!r} keeps the training data in memory: use "
            "prediction='standard' with dask arrays"
        )
    if model.duplicates == "drop":
        raise InputError(
            "duplicates='drop' is not available on dask arrays (it compares every row with every other): remove "
            "the copies first (dask.dataframe's drop_duplicates), or keep every row (duplicates='collapse')"
        )
    client = _client()
    X, y = _arrays(model, X, y)
    n, D = X.shape
    ddof = 1 if model._too_few(n, D + 2) else 0  # as GPRegressorBase._validate_training_data
    y_mean, y_std, var = dask.compute(y.mean(), y.std(ddof=ddof), X.var(axis=0))
    if not (np.isfinite(y_mean) and np.isfinite(y_std) and np.all(np.isfinite(var))):
        raise InputError("X or y contains NaN or infinity")
    model.n_features_in_ = D
    model._set_feature_names(None)
    model.y_mean_, model.y_std_ = (
        (float(y_mean), float(y_std) if y_std > 0 else 1.0) if model.normalize_y else (0.0, 1.0)
    )
    s = scale_from_variances(var)
    kernel = model._initial_kernel_for(np.sqrt(var), n, s)
    noise = model._initial_noise()
    rng = np.random.default_rng(model.random_state)
    model.selection_ = None
    Z0, idx, rows = _initial_inducing(model, X, y, s, kernel, noise, rng)
    model._chunk = chunk_size_for(max(X.chunks[0]), Z0.shape[0], model.chunk_size)
    yn = (y - model.y_mean_) / model.y_std_
    data = DaskStats(X / s, yn, model._chunk, client, grouped=model.duplicates == "collapse")
    try:
        params, mask = model._trainable(kernel, noise, Z0)
        Z_fixed = None if model._learns[1] else Z0

        def full():
            return (
                (),
                HostObjective(
                    model.approximation, data=data, jitter=float(model.jitter), penalty=model._penalty, Z_fixed=Z_fixed
                ),
                n,
            )

        model.rounds_ = model.stages_ = None
        sub = model._subset_rows(n, rng)
        if sub is not None:  # the subset stage on the driver, as the in-memory fit runs it
            Xsub, ysub = (a.compute() for a in (X[sub], (y[sub] - model.y_mean_) / model.y_std_))
            rows = model._objective_rows(Xsub, ysub, collapse(Xsub, ysub), s)
            params = model._fit_subset_then_all(params, mask, rows, Z0, full, s)
        else:
            params = model._fit_hyperparameters(
                model._objective(),
                params,
                mask,
                (),
                f"SparseGP ({model.approximation}) fit on dask arrays",
                n_samples=n,
                value_and_grad=full()[1],
                scale=s,
            )
        params = dict(params, Z=params.get("Z", jnp.asarray(Z0)))
        value, terms, Luu = _posterior_terms(model, data, params)
        model.data_bytes_per_evaluation_ = data.bytes_moved / max(data.evaluations, 1)
    finally:
        data.close()
    user = params_for_scaled_inputs(params, 1.0 / s)
    model.kernel_ = user["kernel"]
    model.noise_ = float(to_positive(user["raw_noise"]))
    model.Z_ = rows if (rows is not None and Z_fixed is not None) else np.asarray(user["Z"])
    model.inducing_indices_ = idx
    from .sparse import APPROXIMATIONS

    model.objective_name_ = APPROXIMATIONS[model.approximation][3]
    model.objective_ = value
    model.posterior_ = make_posterior(jnp.asarray(model.Z_), Luu, terms.LB, terms.c)
    model.train_cache_ = None
    _check_calibration(model, X, y)
    return model


def _check_calibration(model, X, y):
    """The leave-one-out check of the in-memory fit (:meth:`SparseGPRegressor._check_calibration`) on
    ``LOO_ROWS`` rows fetched at random (all of them when there are no more)."""
    import dask

    rows = loo_sample(X.shape[0])
    Xr, yr, y_mean, y_var = dask.compute(X[rows], y[rows], y.mean(), y.var())
    yn = (np.asarray(yr) - model.y_mean_) / model.y_std_
    y_mean, y_var = (float(y_mean) - model.y_mean_) / model.y_std_, float(y_var) / model.y_std_**2
    mean, var = model._loo(np.asarray(Xr), yn)
    model._set_loo(summarise(yn, mean, var, y_mean=y_mean, y_var=y_var, y_std=model.y_std_))


def _posterior_terms(model, data, params):
    """(objective, GaussianTerms, L_uu) at the fitted parameters, escalating the jitter as in-memory fits do."""
    jitter = float(model.jitter)
    while True:
        hosted = HostObjective(model.approximation, data=data, jitter=jitter, penalty=model._penalty)
        value, terms, Luu = hosted.terms(params)
        if np.isfinite(value) and all(bool(jnp.all(jnp.isfinite(a))) for a in (*terms, Luu)):
            return value, terms, Luu
        if jitter >= MAX_JITTER:
            raise NumericalError(
                f"the posterior of the fitted {model.approximation} model could not be factorised "
                f"even with jitter {jitter:g} x mean diag(K_uu); use fewer or better spread inducing "
                "inputs, or a larger min_noise"
            )
        jitter = min(jitter * 10.0, MAX_JITTER)


def _predict_block(block, model, include_noise):
    mean, std = model.predict(block, return_std=True, include_noise=include_noise)
    return np.column_stack([mean, std])


def predict_dask(model, X, *, return_std=False, return_cov=False, include_noise=True):
    """Mean (and std) of a fitted model at the rows of a dask array, as dask arrays."""
    import dask.array as da

    model._check_fitted()
    if return_cov:
        raise InputError("return_cov needs all test points in one n x n matrix: not available for dask arrays")
    X = da.asarray(X)
    if X.ndim != 2 or X.shape[1] != model.n_features_in_:
        raise InputError(
            f"X has shape {X.shape}, but {type(model).__name__} is expecting {model.n_features_in_} features as input"
        )
    X = X.rechunk({1: -1})
    out = X.map_blocks(_predict_block, model, include_noise, chunks=(X.chunks[0], (2,)), dtype=np.float64)
    return (out[:, 0], out[:, 1]) if return_std else out[:, 0]
