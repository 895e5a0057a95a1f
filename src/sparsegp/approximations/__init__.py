"""Objectives and predictive distributions, one module per approximation (layer 4).

Shapes, the same for every function of the layer (symbols: NOTATION.md): ``kernel`` a
:class:`~sparsegp.kernels.Kernel`; ``Z`` (m, D) inducing inputs; ``noise`` a scalar sigma^2 (or one per target,
(k,), with y (n, k): :mod:`.per_target`); ``X`` (n, D) and ``y`` (n,) training data; ``Xs`` (t, D) test inputs. ``*_log_marginal`` and
``vfe_bound`` return the scalar the papers maximise (a log marginal likelihood or a lower bound on it); ``*_posterior`` a
:class:`~sparsegp.approximations.common.SparsePosterior` (``Z`` (m, D), ``Luu`` and ``LB`` (m, m), ``c`` and
``w_mean`` (m,)) or an ``ExactPosterior``; the predictions a mean (t,) and a variance (t,) or a
covariance (t, t).
"""

from .. import _config  # noqa: F401  (JAX in float64 before any of this package's modules use it)
from .exact_gp import ExactPosterior, exact_log_marginal, exact_posterior, exact_predict

__all__ = ["ExactPosterior", "exact_log_marginal", "exact_posterior", "exact_predict"]
