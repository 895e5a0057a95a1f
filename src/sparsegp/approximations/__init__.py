"""Objectives and predictive distributions, one module per approximation (layer 4)."""

from .exact import ExactPosterior, exact_neg_log_marginal, exact_posterior, exact_predict

__all__ = ["ExactPosterior", "exact_neg_log_marginal", "exact_posterior", "exact_predict"]
