"""Model set-ups that several reproductions share, each defined once.

* :func:`fixed_sparse` - a sparse model at given hyper-parameters and inducing set (nothing is
  optimised, targets as given): Seeger et al.'s criteria along a trajectory, Titsias's RSPP baseline.
* :func:`titsias_sparse` - Titsias's (2009) joint learning of hyper-parameters and inducing inputs
  from noise 0.1, on targets the protocol has already standardised.
* :func:`seeger_model` - Seeger et al.'s (2003) SE-ARD kernel with its bias v_b, and the hyper-priors.
* :func:`exact_on_subset` - Seeger et al.'s (2003) n_MS start: an exact GP on random training rows.
* :func:`protocol_data` - the data of the benchmark protocols K10 and P32.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..estimators import ExactGPRegressor, SparseGPRegressor
from ..kernels import SquaredExponential
from ..options import Joint
from ..priors import GammaPrecision, LogNormal

SEEGER_PRIOR_SD = 2.0  # sd of seeger_model's log-normal hyper-priors, in log units


def fixed_sparse(kernel, noise: float, inducing, approximation: str = "dtc", **options) -> SparseGPRegressor:
    """``approximation`` with ``kernel``, ``noise`` and ``inducing`` held fixed (optimize=False)."""
    return SparseGPRegressor(
        kernel,
        approximation=approximation,
        inducing=inducing,
        noise=noise,
        optimize=False,
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
        schedule=Joint(max_iter=max_iter),
        random_state=random_state,
        **options,
    )


def seeger_model(D: int, lengthscale0, *, bias: float = 0.1):
    """``(kernel, noise_prior)``: the kernel of Seeger et al. (2003) sec. 4 with hyper-priors.

    K(x, x') = C exp(-(1/2) (x - x')^T W (x - x')) + v_b with W = diag(w_j), w_j = lengthscale_j^-2
    (a scalar ``lengthscale0`` gives footnote 9's RBF kernel, W = w I), started at ``lengthscale0``,
    C = 1 and v_b = ``bias``. The paper uses "the hyperpriors employed by Rasmussen (1996)" without
    stating them; ours: each w_j ~ Gamma(shape 1, mean 1/D), which lets ARD switch an input off (w_j -> 0),
    and log-normal priors, sd SEEGER_PRIOR_SD in log, about C = 1 and noise 0.1 (the targets are a linear
    fit's residuals, variance about 1); v_b is fitted without a prior (it may reach 0).
    """
    priors = {"lengthscale": GammaPrecision(1.0, float(D)), "variance": LogNormal(0.0, SEEGER_PRIOR_SD)}
    ell0 = np.asarray(lengthscale0, dtype=float)
    kernel = SquaredExponential(ell0, 1.0, bias=bias, priors=priors)
    return kernel, LogNormal(float(np.log(0.1)), SEEGER_PRIOR_SD)


def exact_on_subset(X, y, n_ms: int, lengthscale0: float, *, seed: int, max_iter: int, paper_model=False, **options):
    """``(gp, rows)``: an exact GP fitted on ``n_ms`` random rows (the first of a permutation by ``seed``).

    Seeger et al. (2003) sec. 4 fit the hyper-parameters on a subset of n_MS rows: an ARD squared
    exponential from length-scales ``lengthscale0`` and variance 1, noise 0.1, targets as given;
    ``paper_model`` adds their bias v_b and hyper-priors (:func:`seeger_model`).
    """
    rows = np.random.default_rng(seed).permutation(len(X))[:n_ms]
    if paper_model:
        kernel, options["noise_prior"] = seeger_model(X.shape[1], np.full(X.shape[1], float(lengthscale0)))
    else:
        kernel = SquaredExponential(np.full(X.shape[1], float(lengthscale0)), 1.0)
    gp = ExactGPRegressor(kernel, noise=0.1, normalize_y=False, max_iter=max_iter, **options)
    return gp.fit(X[rows], y[rows]), rows


# The benchmark protocols' data (the project's protocol table): K10 = kin40k, uci_datasets split 0,
# the first 10,000 training rows, inputs and targets standardised; P32 = pumadyn-32nm, split 0, all rows.
PROTOCOL_DATA: dict[str, dict[str, Any]] = {
    "K10": dict(name="kin40k", split=0, preprocessing="standardize", n_train=10000),
    "P32": dict(name="pumadyn32nm", split=0, preprocessing="standardize"),
}


def protocol_data(protocol: str, n_train: int | None = None):
    """The :class:`~sparsegp.datasets.Dataset` of a benchmark protocol; ``n_train`` keeps fewer training rows."""
    from .. import datasets

    spec = dict(PROTOCOL_DATA[protocol])
    if n_train is not None:
        spec["n_train"] = n_train
    return datasets.load(spec.pop("name"), **spec)
