"""``import sparsegp`` is light: JAX, scikit-learn and the estimators are imported on first use of a name that
needs them, and whichever module of the package first uses JAX has switched it to float64."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import sparsegp

ROOT = Path(sparsegp.__file__).parent


def run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_import_sparsegp_imports_neither_jax_nor_scikit_learn():
    code = "import sys, sparsegp; print(sorted(m for m in ('jax', 'sklearn', 'scipy') if m in sys.modules))"
    assert run(code) == "[]"


def test_every_public_name_resolves_on_first_use_and_is_listed():
    code = (
        "import sparsegp, sklearn.exceptions as e\n"
        "print(sorted(set(sparsegp.__all__) - set(dir(sparsegp))))\n"
        "print(all(getattr(sparsegp, n) is not None for n in sparsegp.__all__))\n"
        "print(issubclass(sparsegp.NotFittedError, e.NotFittedError), sparsegp.NotFittedError.__name__)\n"
        "print(sparsegp.datasets.__name__, sparsegp.SparseGPRegressor.__module__)"
    )
    assert run(code).splitlines() == [
        "[]",
        "True",
        "True NotFittedError",
        "sparsegp.datasets sparsegp.estimators.sparse",
    ]
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        sparsegp.no_such_name  # noqa: B018


def test_jax_is_in_float64_when_a_subpackage_is_imported_first():
    """The mechanism, once (the next test checks that every module that imports JAX has it)."""
    assert (
        run("from sparsegp.kernels import SquaredExponential\nimport jax.numpy as jnp\nprint(jnp.ones(2).dtype)")
        == "float64"
    )


def _imports_jax(tree: ast.Module) -> bool:
    for node in tree.body:  # module level only: a function-level import runs after the package's own
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        if any(n == "jax" or n.startswith("jax.") for n in names):
            return True
    return False


def _imports_config(tree: ast.Module, depth: int) -> bool:
    return any(
        isinstance(node, ast.ImportFrom) and node.level == depth and node.module is None
        and any(a.name == "_config" for a in node.names)
        for node in tree.body
    )  # fmt: skip


def test_every_module_that_imports_jax_switches_it_to_float64_first():
    """A module at the top imports ``_config`` itself; one in a subpackage has it from the subpackage's
    ``__init__`` (which Python runs first)."""
    missing = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        if rel.name == "_config.py" or not _imports_jax(ast.parse(path.read_text())):
            continue
        if len(rel.parts) == 1:
            ok = _imports_config(ast.parse(path.read_text()), 1)
        else:
            ok = _imports_config(ast.parse((ROOT / rel.parts[0] / "__init__.py").read_text()), 2)
        if not ok:
            missing.append(str(rel))
    assert missing == []


def test_the_command_lines_help_and_dataset_list_import_no_jax():
    code = (
        "import contextlib, io, sys\n"
        "from sparsegp.cli import build_parser, main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    build_parser().format_help(); main(['datasets'])\n"
        "print('jax' in sys.modules)"
    )
    assert run(code) == "False"
