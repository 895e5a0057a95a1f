"""Where the training data live, and what the fit may ask of them (layer 3).

The sums every sparse method is written from, in two engines: the JAX program over row chunks
(:mod:`.jax_sums`) and the host's BLAS passes (:mod:`.blas_sums`), each one forward and one backward with
optional row weights; rows grouped by input (:mod:`.replicates`). One backend is chosen per fit, from the
data's type (``GPRegressorBase._training_data`` in :mod:`sparsegp.estimators.base`): :class:`~.in_memory.InMemory` for
NumPy arrays (the JAX program over row chunks, or the host BLAS sums where they are faster),
:class:`~.dask_partitions.DaskPartitions` for dask arrays (the sums on the workers that hold the
partitions; the only backend that imports dask). Both satisfy :class:`~.base.Backend`; the fit
(:mod:`sparsegp.fitting.pipeline`) runs unchanged on either, and what a backend cannot do it refuses with
one :class:`~sparsegp.errors.InputError`.
"""

from __future__ import annotations

from .. import _config  # noqa: F401  (JAX in float64 before any of this package's modules use it)
from .base import Backend, Moments
from .dask_sums import is_dask_collection
from .in_memory import InMemory

__all__ = ["Backend", "InMemory", "Moments", "is_dask_collection"]
