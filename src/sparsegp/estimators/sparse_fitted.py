"""A :class:`~sparsegp.SparseGPRegressor`'s fitted attributes from the pipeline's
:class:`~sparsegp.fitting.pipeline.SparseFit`, and the checkpoint files written from one during a fit
(:mod:`sparsegp.fitting.checkpoint`)."""

from __future__ import annotations

from sklearn.base import clone

from ..approximations.exact_gp import DESCRIPTION as EXACT_DESCRIPTION
from .base import copy_result
from .persistence import save_model


def apply_fit(model, fit, config) -> None:
    """Set ``model``'s fitted attributes from ``fit`` (a :class:`~sparsegp.fitting.pipeline.SparseFit` of
    ``config``) but the leave-one-out figures (``_set_loo``, whose warnings name the caller's line); the data's
    attributes (``y_mean_``, ``n_features_in_``, ...) are set before."""
    copy_result(model, fit, skip=("loo", "certificate", "data_bytes_per_evaluation", "exact"))
    model.objective_name_ = EXACT_DESCRIPTION if fit.exact else config.method.description
    if fit.data_bytes_per_evaluation is not None:
        model.data_bytes_per_evaluation_ = fit.data_bytes_per_evaluation
    model.upper_bound_, model.gap_ = fit.certificate.upper, fit.certificate.gap
    model.certificate_ = fit.certificate.as_dict()


def checkpoint_writer(model, config, data, names):
    """``save(fit)``: ``fit`` (the state a fit has reached) written as ``model``'s model file at the checkpoint's
    path, in a copy of ``model``; None where ``config`` has no checkpoint."""
    if config.checkpoint is None:
        return None

    def save(fit) -> None:
        reached = clone(model)
        for name in ("noise_variance_given_", "train_noise_variance_", "train_fingerprint_"):
            setattr(reached, name, getattr(model, name))
        reached._set_data_attributes(data.moments, len(data.moments.column_var), names)
        apply_fit(reached, fit, config)
        reached._set_loo(fit.loo)
        save_model(reached, config.checkpoint.path)

    return save


def final_checkpoint(model, config) -> None:
    """At the end of a fit (or its interrupt), the checkpoint file holds the fitted model."""
    if config.checkpoint is not None:
        save_model(model, config.checkpoint.path)


__all__ = ["apply_fit", "checkpoint_writer", "final_checkpoint"]
