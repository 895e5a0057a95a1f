"""Checkpoints of a long fit: the state reached so far, saved as a model file at most every so many seconds.

A checkpoint is an ordinary model file (:func:`sparsegp.load_model` reads it): the kernel, noise and inducing
inputs of the optimiser's latest iterate (L-BFGS-B's iterates only ever lower the objective, so it is the best
of its run), the growth's path so far, and the posterior there, with the trace bound as its certificate and no
leave-one-out check (each would cost more passes over the rows). Loaded with ``warm_start=True``, a fit goes on
from it (:func:`sparsegp.fitting.config.warm_state`). The file is written atomically, so a crash while saving
leaves the last checkpoint whole; at the end of the fit it holds the fitted model.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any

from ..errors import InputError

CHECKPOINT_EVERY = 60.0  # seconds between checkpoints by default: one costs about two objective evaluations


@dataclass(frozen=True)
class Checkpoint:
    """Where a fit saves its state (``path``, a model file) and how often: at most every ``every`` seconds."""

    path: str
    every: float = CHECKPOINT_EVERY


def as_checkpoint(value) -> Checkpoint | None:
    """The ``checkpoint`` option checked: None, a path (saved every CHECKPOINT_EVERY seconds) or a
    :class:`Checkpoint`; its folder must exist."""
    if value is None:
        return None
    if isinstance(value, (str, os.PathLike)):
        value = Checkpoint(os.fspath(value))
    if not isinstance(value, Checkpoint):
        raise InputError(f"checkpoint must be None, a path or a Checkpoint(path, every=seconds), got {value!r}")
    every = value.every
    if isinstance(every, bool) or not isinstance(every, (int, float)) or not every >= 0:
        raise InputError(f"Checkpoint's every must be a number of seconds >= 0, got {every!r}")
    path = os.fspath(value.path)
    if not path.endswith(".npz"):
        path += ".npz"  # as save_model names it, so that the file the fit writes is the one the user loads
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise InputError(f"checkpoint {path!r}: the folder {folder!r} does not exist")
    return Checkpoint(path, float(every))


class Checkpointer:
    """During a fit: ``watch`` records where the schedule is (the inducing inputs being fitted, their rows and the
    growth's path), and calling it with the latest iterate's parameters writes a checkpoint when one is due."""

    def __init__(self, checkpoint: Checkpoint, write):
        self.checkpoint, self.write = checkpoint, write
        self.where: dict[str, Any] = {}
        self.last = time.perf_counter()
        self.written = 0

    def watch(self, Z, idx, path) -> None:
        self.where = {"Z": Z, "idx": idx, "path": list(path)}

    def __call__(self, iteration: int, value: float, params) -> bool:
        """The optimiser's callback (``params`` for the inputs divided by the fit's scale): never stops it."""
        if time.perf_counter() - self.last >= self.checkpoint.every:
            self.write(params, **self.where)
            self.written += 1
            self.last = time.perf_counter()
        return False


__all__ = ["CHECKPOINT_EVERY", "Checkpoint", "Checkpointer", "as_checkpoint"]
