"""The first step of ``inducing="auto"``: the kernel and noise learnt by the exact GP on a random subset.

Before any inducing input, the fit learns the kernel and noise on PRETRAIN_ROWS training rows drawn at random,
by the exact log p(y) (O(PRETRAIN_ROWS^3) per evaluation, less than one sparse evaluation at the growth's first
size once n is in the thousands), in two L-BFGS-B runs:

1. the noise held at HELD_NOISE of the target variance (or the given ``noise``, if smaller; at least
   ``min_noise``) and the kernel free: from a start where the noise holds all the target variance, data with
   many inputs of which few matter are fitted as noise; with the noise held below, the kernel has to explain
   the targets and the length-scales of the inputs that matter shrink first (Seeger et al. 2003, sec. 4, start
   their pumadyn runs from an exact GP on a subset for the same reason);
2. the kernel and noise free.

Each fit, and the given start, is scored by the growth's objective at its first inducing inputs over every row;
the growth starts from the best. A fit whose kernel is near-categorical in some input (the subset spans more
than about a thousand of its length-scales there: :func:`~sparsegp.kernels.distance.narrow`) is scored at the
noise, its own or one of NOISE_GRID, where that objective is highest: its own noise interpolates the subset, and
the bound over every row pays for what the first inputs do not explain through the noise.

The default kernel's length-scales start at sqrt(D) times their column's spread, where two inputs' squared
distance in length-scales is about 2 on average (at the columns' spread it is about 2 D, and in many dimensions
no length-scale would have a gradient). Each run stops on progress (LOOSE * ``tol`` per row per iteration, a
start need not be converged) or at PRETRAIN_ITER. The user's ``callback`` sees the growth's iterations, not
these. Skipped where the subset would hold every row, where the kernel and noise are not learnt
(``optimize="inducing"`` or False), or where the subset would have fewer than two rows per hyper-parameter.
The measurements behind these choices: BENCHMARKS.md, "The exact GP on a subset first" and "Inputs many
length-scales wide".
"""

from __future__ import annotations

import dataclasses
import time
import warnings
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from sklearn.exceptions import ConvergenceWarning

from ..backends.in_memory import InMemory
from ..errors import NumericalError
from ..kernels.distance import narrow
from .config import SparseConfig
from .exact_fit import exact_problem
from .growth import LOOSE, tol_per_row
from .hyper import noise_value, optimise, raw_noise_like, too_few

PRETRAIN_ROWS = 512
HELD_NOISE = (0.1, 0.01)  # of the normalised targets' variance
PRETRAIN_ITER = 200  # per run, a safety cap
NOISE_GRID = 10.0 ** np.arange(-4.0, 0.5, 0.5)  # of the normalised targets' variance: where candidates are scored


class Pretrained(NamedTuple):
    """The kernel and noise to grow from (scaled ``params``), and the stage's record (None: skipped)."""

    params: Any
    stage: dict | None
    n_iter: int


def pretrain(config: SparseConfig, data, params, mask, rng, score) -> Pretrained:
    """Steps 1-2 of the module docstring on the scaled ``params`` (kernel, raw_noise) with their ``mask``, once
    per held noise in HELD_NOISE; of those fits and ``params`` itself, the one with the highest ``score(params)``
    (the growth's objective at its first inducing inputs over every row)."""
    s = config.input_scale
    n = int(data.moments.n)
    n_free = sum(int(np.sum(np.asarray(m))) for m in jax.tree_util.tree_leaves(mask))
    if not config.learns.hyperparameters or n <= PRETRAIN_ROWS or too_few(PRETRAIN_ROWS, n_free):
        return Pretrained(params, None, 0)
    t = time.perf_counter()
    sub = np.sort(rng.choice(n, size=PRETRAIN_ROWS, replace=False))
    X, y = data.fetch(sub)
    part = InMemory.of_rows(
        X, y, collapsed=data.collapsed, moments=data.moments._replace(n=PRETRAIN_ROWS), known=data.known_at(sub)
    )
    at = exact_problem(part.rows(s), PRETRAIN_ROWS, params)
    quiet = dataclasses.replace(config, callback=None, monitors=())
    progress = tol_per_row(config) * PRETRAIN_ROWS * LOOSE
    kernel = params["kernel"]
    if config.kernel is None:  # the default kernel: length-scales at sqrt(D) times the columns' spread
        ell = np.asarray(kernel.parameters()["lengthscale"])
        kernel = kernel.replace(lengthscale=ell * np.sqrt(ell.size))
    noise = float(np.min(noise_value(params["raw_noise"])))  # held alike for every target where each has its own
    fitted, n_iter = {}, 0
    with warnings.catch_warnings():  # a start's convergence is not the model's: the growth's own fit warns
        warnings.simplefilter("ignore", ConvergenceWarning)
        for held in sorted({max(min(noise, h), float(config.min_noise)) for h in HELD_NOISE}, reverse=True):
            start = dict(params, kernel=kernel, raw_noise=raw_noise_like(params["raw_noise"], held))
            desc = f"SparseGP ({config.approximation}) start: exact GP on {PRETRAIN_ROWS} rows"
            first = optimise(
                quiet, at, start, dict(mask, raw_noise=jnp.zeros_like(mask["raw_noise"])), f"{desc}, noise held at {held:g}",
                max_iter=PRETRAIN_ITER, progress=progress,
            )  # fmt: skip
            second = optimise(quiet, at, first.params, mask, desc, max_iter=PRETRAIN_ITER, progress=progress)
            n_iter += sum(0 if st.report is None else st.report.n_iter for st in (first, second))
            fitted[f"noise held at {held:g}"] = second.params
    fitted["the given start"] = params
    floor = float(config.min_noise) if np.any(mask["raw_noise"]) else None
    scored = {
        name: (p, _finite(score, p)) if narrow(p["kernel"], X / s) else _at_best_noise(score, p, floor)
        for name, p in fitted.items()
    }
    chosen = max(scored, key=lambda name: scored[name][1])
    record = {
        "rows": PRETRAIN_ROWS,
        "n_iter": n_iter,
        "seconds": time.perf_counter() - t,
        "chosen": chosen,
        "scores": {name: value for name, (_, value) in scored.items()},
        "noise": np.asarray(noise_value(scored[chosen][0]["raw_noise"])).tolist(),
    }
    return Pretrained(scored[chosen][0], record, n_iter)


def _at_best_noise(score, params, floor: float | None):
    """(params, score) at the noise, of the candidate's own and NOISE_GRID (at least ``floor``; None: the noise is
    held), where ``score`` is highest. The bound's trace term is divided by the noise (Titsias 2009, eq. 9): on
    parkinsons the subset's near-categorical kernel scores -161,602 at its own noise (1.7e-4) and +3,643 at 0.01,
    against -7,928 for the given start."""
    best = (params, _finite(score, params))
    for noise in NOISE_GRID if floor is not None else ():
        if noise >= floor:
            trial = dict(params, raw_noise=raw_noise_like(params["raw_noise"], noise))
            value = _finite(score, trial)
            if value > best[1]:
                best = (trial, value)
    return best


def _finite(score, params) -> float:
    """``score(params)``, or -inf where it is not finite or a factorisation fails."""
    try:
        value = float(score(params))
    except NumericalError:
        return -np.inf
    return value if np.isfinite(value) else -np.inf


__all__ = ["HELD_NOISE", "NOISE_GRID", "PRETRAIN_ITER", "PRETRAIN_ROWS", "Pretrained", "pretrain"]
