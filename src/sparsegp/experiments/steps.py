"""A reproduction's long steps, kept on disk so that ``reproduce all --resume`` goes on from the last finished
one: a full reproduction runs for hours, longer than a machine may be held, and one paper alone (Titsias's) runs
for almost three.

A step is one call of an experiment function. Its return value is written to ``DIR/<paper>/steps/<name>.json``
with the revision and mode that produced it, and read back only by the same clean revision in the same mode, so
a kept step is exactly what the code would compute again. The encoding round-trips every value a step returns
(arrays with their dtype and shape, tuples, numpy scalars, dicts with non-string keys, non-finite floats)
bit for bit.
"""

from __future__ import annotations

import json
import os

import numpy as np

from .._atomic import replaced_atomically


def direct(name: str, fn, /, *args, **kwargs):
    """Run the step without keeping it: a reproduction outside ``--resume``."""
    return fn(*args, **kwargs)


def encode(x):
    """``x`` as plain JSON values, tagged where JSON alone would lose its type."""
    if isinstance(x, dict):
        if all(isinstance(k, str) for k in x):
            return {"dict": {k: encode(v) for k, v in x.items()}}
        return {"items": [[encode(k), encode(v)] for k, v in x.items()]}
    if isinstance(x, tuple):
        return {"tuple": [encode(v) for v in x]}
    if isinstance(x, list):
        return [encode(v) for v in x]
    if isinstance(x, np.ndarray):
        if x.dtype.kind not in "biuf":
            raise TypeError(f"a step cannot keep an array of dtype {x.dtype}")
        return {"array": x.ravel().tolist(), "dtype": x.dtype.str, "shape": list(x.shape)}
    if isinstance(x, np.generic):
        return {"scalar": x.item(), "dtype": x.dtype.str}
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    raise TypeError(f"a step cannot keep a {type(x).__name__}; return numbers, strings, arrays and containers")


def decode(x):
    """The inverse of :func:`encode`."""
    if isinstance(x, list):
        return [decode(v) for v in x]
    if not isinstance(x, dict):
        return x
    if "dict" in x:
        return {k: decode(v) for k, v in x["dict"].items()}
    if "items" in x:
        return {decode(k): decode(v) for k, v in x["items"]}
    if "tuple" in x:
        return tuple(decode(v) for v in x["tuple"])
    if "array" in x:
        return np.asarray(x["array"], dtype=np.dtype(x["dtype"])).reshape(x["shape"])
    if "scalar" in x:
        return np.dtype(x["dtype"]).type(x["scalar"])
    raise ValueError(f"not an encoded step value: keys {sorted(x)}")


class Kept:
    """The steps of one paper's reproduction under ``out_dir/steps``, for one clean ``revision`` and ``mode``."""

    def __init__(self, out_dir: str, mode: str, revision: str, log=None):
        self.dir, self.mode, self.revision, self.log = os.path.join(out_dir, "steps"), mode, revision, log

    def _path(self, name: str) -> str:
        if not name.replace("-", "").replace("_", "").isalnum():
            raise ValueError(f"a step's name is letters, digits, '-' and '_', got {name!r}")
        return os.path.join(self.dir, f"{name}.json")

    def __call__(self, name: str, fn, /, *args, **kwargs):
        path = self._path(name)
        try:
            with open(path) as f:
                kept = json.load(f)
        except (OSError, ValueError):
            kept = None
        if isinstance(kept, dict) and kept.get("revision") == self.revision and kept.get("mode") == self.mode:
            if self.log:
                self.log(f"  {name}: kept (written by this code in {self.mode} mode)")
            return decode(kept["value"])
        value = fn(*args, **kwargs)
        os.makedirs(self.dir, exist_ok=True)
        record = {"revision": self.revision, "mode": self.mode, "value": encode(value)}
        with replaced_atomically(path, "w") as f:
            json.dump(record, f)
        return value
