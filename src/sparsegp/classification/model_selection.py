"""Model selection for the IVM (Lawrence, Seeger & Herbrich 2003, sec. 4).

The paper chose the kernel parameters (C, gamma) by the error on a validation
set, training on random subsets of 5,000 points. :func:`validation_search`
does that for any scikit-learn classifier (so an SVM can be given a grid of the
same size); ``scoring="evidence"`` ranks IVM fits by the approximate marginal
likelihood of their Gaussian approximation instead (no validation set needed).
"""

from __future__ import annotations

import itertools
import time

import numpy as np
from sklearn.base import clone

from ..errors import InputError

SCORINGS = ("validation", "log_loss", "error_log_loss", "evidence")
# The default IVM's kernel grid: an isotropic SE kernel, length-scale sqrt(D) s times each factor (s the inputs'
# RMS spread), times each variance (the paper's grid on MNIST: lengthscales 0.5 to 1 of sqrt(D) s, C of 10 and 100)
LENGTH_FACTORS = (0.35, 0.5, 0.7, 1.0, 1.4)
VARIANCES = (1.0, 10.0, 100.0)
VALIDATION_ROWS = 2000  # held-out rows that score the grid (at most a fifth of the rows)
TRAIN_ROWS = 5000  # rows each grid point is fitted on (the paper's subsets of 5,000)
PROBE_SIZE = 500  # the grid's IVMs' active-set size, at most (each stops there)
FOLDS = 5  # folds of the grid's cross-validation on small sets
FOLD_ROWS = 5000  # sets up to this many rows are cross-validated; larger ones split once
MIN_CLASS_ROWS = 2  # rows of each class every training part keeps (what IVMClassifier needs)


def parameter_grid(grid: dict) -> list[dict]:
    """Every combination of a dict of lists, in a fixed order."""
    if not grid:
        raise InputError("the parameter grid is empty")
    keys = list(grid)
    return [dict(zip(keys, values)) for values in itertools.product(*(grid[k] for k in keys))]


def validation_search(estimator, grid: dict, X, y, X_val=None, y_val=None, *, scoring: str = "validation") -> dict:
    """Fit ``estimator`` (cloned) at every point of ``grid`` on (X, y) and rank the fits.

    ``scoring="validation"``: the error rate on (X_val, y_val), lowest wins; ``"log_loss"``: the mean negative log
    predictive probability of y_val, lowest wins; ``"error_log_loss"``: the error rate, ties broken by the log loss.
    ``"evidence"``: the fitted ``log_marginal_likelihood_`` (IVMClassifier), highest wins. Returns ``{"best":
    params, "results": [{"params", "error" and / or "log_loss", or "evidence", "fit_s"}, ...]}``.
    """
    if scoring not in SCORINGS:
        raise InputError(f"scoring must be one of {SCORINGS}, got {scoring!r}")
    if scoring != "evidence" and (X_val is None or y_val is None):
        raise InputError(f"scoring={scoring!r} needs X_val and y_val")
    results = []
    for params in parameter_grid(grid):
        t0 = time.perf_counter()
        est = clone(estimator).set_params(**params).fit(X, y)
        fit_s = time.perf_counter() - t0
        row = {"params": params, "fit_s": fit_s}
        if scoring in ("validation", "error_log_loss"):
            row["error"] = float(np.mean(est.predict(X_val) != np.asarray(y_val)))
        if scoring in ("log_loss", "error_log_loss"):
            p = est.predict_proba(X_val)[np.arange(len(y_val)), np.searchsorted(est.classes_, y_val)]
            row["log_loss"] = float(-np.mean(np.log(np.maximum(p, 1e-300))))
        if scoring == "evidence":
            if not hasattr(est, "log_marginal_likelihood_"):
                raise InputError(
                    f"scoring='evidence' needs an estimator with log_marginal_likelihood_, got {type(est).__name__}"
                )
            row["evidence"] = float(est.log_marginal_likelihood_)
        results.append(row)
    keys = {
        "validation": lambda r: r["error"],
        "log_loss": lambda r: r["log_loss"],
        "error_log_loss": lambda r: (r["error"], r["log_loss"]),
        "evidence": lambda r: -r["evidence"],
    }
    best = min(results, key=keys[scoring])  # first of the ties, in grid order
    return {"best": best["params"], "results": results}


def default_kernel_grid(D: int, scale: float) -> list:
    """The isotropic SE kernels the default IVM chooses among, for D inputs of RMS spread ``scale``."""
    from ..kernels import SquaredExponential

    ell0 = np.sqrt(D) * scale
    return [SquaredExponential(lengthscale=ell0 * f, variance=C) for f in LENGTH_FACTORS for C in VARIANCES]


def validation_folds(codes: np.ndarray, rng) -> list[tuple[np.ndarray, np.ndarray]]:
    """[(training rows, validation rows)] for the grid, each class split in the same proportions. Up to
    FOLD_ROWS rows: FOLDS folds, every row validated once (a single split of a few hundred rows leaves the
    choice to chance: banana's 80 held-out rows chose a kernel 0.8 points worse). Beyond: one split,
    min(VALIDATION_ROWS, n / 5) validation rows and at most TRAIN_ROWS of the rest for training.

    Every training part keeps at least MIN_CLASS_ROWS rows of each class (the IVM's minimum): a class of two
    rows is never held out, and a fold left with no rows to validate is dropped (none at all where no class has
    more than MIN_CLASS_ROWS rows)."""
    n = codes.size
    per_class = [rng.permutation(np.flatnonzero(codes == c)) for c in np.unique(codes)]
    if n <= FOLD_ROWS:
        held = [r if r.size > MIN_CLASS_ROWS else r[:0] for r in per_class]
        parts = [np.sort(np.concatenate([np.array_split(r, FOLDS)[k] for r in held])) for k in range(FOLDS)]
        return [(np.setdiff1d(np.arange(n), part), part) for part in parts if part.size]
    frac_val = min(VALIDATION_ROWS, n // 5) / n
    frac_train = min(1.0 - frac_val, TRAIN_ROWS / n)
    train, val = [], []
    for rows in per_class:
        k_val = max(0, min(max(1, int(round(frac_val * rows.size))), rows.size - MIN_CLASS_ROWS))
        k_train = max(MIN_CLASS_ROWS, int(round(frac_train * rows.size)))
        val.append(rows[:k_val])
        train.append(rows[k_val : k_val + k_train])
    return [(np.sort(np.concatenate(train)), np.sort(np.concatenate(val)))]
