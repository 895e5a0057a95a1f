"""The exact GP's fit: the hyper-parameters by L-BFGS-B on log p(y | X, theta), the shared start."""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np

from ..approximations.exact_host import HostExactNegative, on_host
from ..transforms import to_raw
from .config import FitConfig
from .hyper import (
    Problem,
    Stage,
    initial_kernel,
    initial_noise,
    n_targets,
    noise_value,
    optimise,
    scale_from_variances,
)
from .negatives import ExactNegative
from .training import Interrupted


class ExactFit(NamedTuple):
    kernel: Any  # for the inputs in the user's units
    noise: Any  # normalised targets: a float, or one per target
    optimizer_report: Any
    n_iter: int
    stop_reason: str | None = None  # "interrupted ..." after a KeyboardInterrupt: the best iterate reached


def exact_problem(rows, n: int, params) -> Problem:
    """-log p(y) over the in-memory ``rows`` (scaled inputs) for :func:`~.hyper.optimise`, starting from
    ``params`` (its kernel and noise say whether the evaluations run on the host,
    :func:`~sparsegp.approximations.exact_host.on_host`, or as one JAX program)."""
    args = rows.jax_args()
    if on_host(params["kernel"], params["raw_noise"], rows.X, rows.counts, rows.known):
        return Problem(lambda noise_prior: (None, (), HostExactNegative(rows.X, rows.y, noise_prior)), n)
    return Problem(lambda noise_prior: (ExactNegative(noise_prior), args, None), n)


def fit_exact(config: FitConfig, data) -> ExactFit:
    """Fit the kernel and noise of ``config`` to the in-memory training rows ``data`` (an
    :class:`~sparsegp.backends.in_memory.InMemory`), in units where the inputs have unit spread."""
    moments = data.moments
    config = dataclasses.replace(config, input_scale=scale_from_variances(moments.column_var))
    s = config.input_scale
    kernel = initial_kernel(config, np.sqrt(moments.column_var), moments.n)
    noise = initial_noise(config, n_targets(moments))
    params = {"kernel": kernel, "raw_noise": jnp.asarray(to_raw(noise))}
    mask = {"kernel": kernel.trainable_mask(), "raw_noise": jnp.full(np.shape(noise), True)}
    reason = None
    try:
        at = exact_problem(data.rows(s), moments.n, params)
        resume = None if config.warm is None else config.warm.optimizer
        fit = optimise(config, at, params, mask, "ExactGP fit", resume=resume)
    except Interrupted as stop:
        fit, reason = Stage(stop.params, stop.report, None), "interrupted (KeyboardInterrupt): the best iterate reached"
    n_iter = 0 if fit.report is None else fit.report.n_iter
    kernel = fit.params["kernel"].for_scaled_inputs(1.0 / s)
    return ExactFit(kernel, noise_value(fit.params["raw_noise"]), fit.report, n_iter, reason)
