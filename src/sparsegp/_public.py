"""What the package calls public: the names in ``__all__`` of the modules a user imports. The API reference
(docs/conf.py) and the docstring test (tests/test_docstrings.py) both read this list."""

from __future__ import annotations

import importlib
import inspect
from typing import Any

MODULES = (
    "sparsegp",
    "sparsegp.kernels",
    "sparsegp.selection",
    "sparsegp.classification",
    "sparsegp.datasets",
    "sparsegp.metrics",
    "sparsegp.options",
)


def public_objects(module: str) -> list[tuple[str, Any]]:
    """The classes and functions named in ``module.__all__`` (submodules and constants left out), in order."""
    mod = importlib.import_module(module)
    out = []
    for name in mod.__all__:
        obj = getattr(mod, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            out.append((name, obj))
    return out


def public_methods(cls: type) -> list[tuple[str, Any]]:
    """The public methods and properties a class defines itself (not those it inherits from scikit-learn or
    ``object``)."""
    out = []
    for name, member in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(member, (staticmethod, classmethod)):
            member = member.__func__
        if inspect.isfunction(member) or isinstance(member, property):
            out.append((name, member))
    return out
