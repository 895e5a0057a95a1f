"""Model set-ups that several reproductions share, each defined once.

* :func:`fixed_sparse` - a sparse model at given hyper-parameters and inducing set (nothing is
  optimised, targets as given): Seeger et al.'s criteria along a trajectory, Titsias's RSPP baseline.
* :func:`titsias_sparse` - Titsias's (2009) joint learning of hyper-parameters and inducing inputs
  from noise 0.1, on targets the protocol has already standardised.
"""

from __future__ import annotations

from ..estimators import SparseGPRegressor


def fixed_sparse(kernel, noise: float, inducing, approximation: str = "dtc", **options) -> SparseGPRegressor:
    """``approximation`` with ``kernel``, ``noise`` and ``inducing`` held fixed (optimize=False)."""
    return SparseGPRegressor(
        kernel,
        approximation=approximation,
        inducing=inducing,
        noise=noise,
        optimize=False,
        optimize_inducing=False,
        normalize_y=False,
        **options,
    )


def titsias_sparse(kernel, approximation: str, m: int, *, max_iter: int, random_state, **options) -> SparseGPRegressor:
    """Hyper-parameters and ``m`` inducing inputs learned jointly, starting from noise 0.1 (Titsias 2009, sec. 4)."""
    return SparseGPRegressor(
        kernel,
        approximation=approximation,
        inducing=m,
        noise=0.1,
        normalize_y=False,
        max_iter=max_iter,
        random_state=random_state,
        **options,
    )
