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

SCORINGS = ("validation", "evidence")


def parameter_grid(grid: dict) -> list[dict]:
    """Every combination of a dict of lists, in a fixed order."""
    if not grid:
        raise InputError("the parameter grid is empty")
    keys = list(grid)
    return [dict(zip(keys, values)) for values in itertools.product(*(grid[k] for k in keys))]


def validation_search(estimator, grid: dict, X, y, X_val=None, y_val=None, *, scoring: str = "validation") -> dict:
    """Fit ``estimator`` (cloned) at every point of ``grid`` on (X, y) and rank the fits.

    ``scoring="validation"``: the error rate on (X_val, y_val), lowest wins. ``"evidence"``: the fitted
    ``log_marginal_likelihood_`` (IVMClassifier), highest wins. Returns ``{"best": params, "results":
    [{"params", "error" or "evidence", "fit_s"}, ...]}``.
    """
    if scoring not in SCORINGS:
        raise InputError(f"scoring must be one of {SCORINGS}, got {scoring!r}")
    if scoring == "validation" and (X_val is None or y_val is None):
        raise InputError("scoring='validation' needs X_val and y_val")
    results = []
    for params in parameter_grid(grid):
        t0 = time.perf_counter()
        est = clone(estimator).set_params(**params).fit(X, y)
        fit_s = time.perf_counter() - t0
        row = {"params": params, "fit_s": fit_s}
        if scoring == "validation":
            row["error"] = float(np.mean(est.predict(X_val) != np.asarray(y_val)))
        else:
            if not hasattr(est, "log_marginal_likelihood_"):
                raise InputError(
                    f"scoring='evidence' needs an estimator with log_marginal_likelihood_, got {type(est).__name__}"
                )
            row["evidence"] = float(est.log_marginal_likelihood_)
        results.append(row)
    key = (lambda r: r["error"]) if scoring == "validation" else (lambda r: -r["evidence"])
    best = min(results, key=key)  # first of the ties, in grid order
    return {"best": best["params"], "results": results}
