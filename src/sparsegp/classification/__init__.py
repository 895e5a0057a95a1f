"""Sparse GP classification: the Informative Vector Machine (Lawrence, Seeger & Herbrich 2003).

``probit``: the noise model and ADF site update (eq. 2) and the scores (eq. 4);
``adf``: the factored state A = K - M^T M with delayed column updates (eq. 3) and
prediction (eq. 5); ``ivm``: greedy / randomised selection and stopping;
``model_selection``: validation-set and approximate-evidence search over kernels.
The estimators are :class:`sparsegp.IVMClassifier` and :class:`sparsegp.OneVsRestIVMClassifier`.
"""

from .. import _config  # noqa: F401  (JAX in float64 before any of this package's modules use it)
from .adf import IVMState, predict_latent
from .ivm import IVMSchedule, IVMSelection, ivm_select
from .probit import entropy_score, info_gain_score, probit_bias, site_update

__all__ = [
    "IVMState",
    "IVMSchedule",
    "IVMSelection",
    "ivm_select",
    "predict_latent",
    "site_update",
    "entropy_score",
    "info_gain_score",
    "probit_bias",
]
