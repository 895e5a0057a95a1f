"""Docstring sections that several public names share, written once.

A docstring says ``{name}`` on a line of its own where a shared block goes; :func:`fill` puts the block
there, indented as the placeholder, when the module is imported (so help(), numpydoc, Sphinx and the
doctests all read the filled text). Besides the blocks a caller passes, every docstring may use the toy
problems below, which the examples share so that a reader meets one data set throughout.
"""

from __future__ import annotations

import re
import textwrap

_PLACEHOLDER = re.compile(r"^(\s*)\{([A-Za-z_][A-Za-z0-9_]*)\}\s*$")

# 200 noisy draws of sin(2x) on [-3, 3]: the regression examples' data.
_TOY_DATA = """
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> X = rng.uniform(-3, 3, size=(200, 1)); y = np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=200)
"""
SHARED = {
    "toy_regression": _TOY_DATA,
    # The same data with the hyper-parameters a selector is given.
    "toy_selection": _TOY_DATA.rstrip("\n")
    + """
>>> from sparsegp.kernels import SquaredExponential
>>> kernel, noise = SquaredExponential(lengthscale=0.7), 0.01
""",
    # Two classes split by a line in 2-D, and an IVM's selection of 20 sites on them.
    "toy_classification": """
>>> import numpy as np
>>> from sparsegp.classification import ivm_select
>>> from sparsegp.kernels import SquaredExponential
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(100, 2)); y = np.where(X[:, 0] + X[:, 1] > 0, 1.0, -1.0)
>>> selection = ivm_select(SquaredExponential(1.0), X, y, bias=0.0, size=20, random_state=0)
""",
}


def substitute(doc: str, blocks: dict[str, str]) -> str:
    """``doc`` with each placeholder line ``{name}`` replaced by ``blocks[name]`` (or a :data:`SHARED`
    block), at the placeholder's indent; a block may hold placeholders of its own.

    A placeholder with no block is a typo in the library, so it raises instead of reaching the user.
    """
    known = {**SHARED, **blocks}
    out = []
    for line in doc.splitlines():
        match = _PLACEHOLDER.match(line)
        if match is None:
            out.append(line)
            continue
        indent, name = match.groups()
        if name not in known:
            raise KeyError(f"docstring placeholder {{{name}}} has no block (known: {sorted(known)})")
        block = substitute(textwrap.dedent(known[name]).strip("\n"), blocks)
        out.extend(indent + b if b.strip() else "" for b in block.splitlines())
    return "\n".join(out)


def fill(**blocks: str):
    """Decorator: :func:`substitute` ``blocks`` (and the shared ones) into a class's or function's docstring."""

    def decorate(obj):
        obj.__doc__ = substitute(obj.__doc__ or "", blocks)
        return obj

    return decorate
