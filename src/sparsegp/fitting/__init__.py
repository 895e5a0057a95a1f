"""Optimisation and schedules (layer 7): the L-BFGS-B driver and its trainers, the fits of every estimator
(the start, the schedule, the posterior and the checks, returned as one result), and the fit's monitors."""

from .. import _config  # noqa: F401  (JAX in float64 before any of this package's modules use it)
