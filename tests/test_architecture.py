"""The package's shape: no import circle between modules or between folders (function-level imports included),
unique module names, short functions."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import sparsegp
from sparsegp.options import Joint

ROOT = Path(sparsegp.__file__).parent


def _modules() -> dict[str, tuple[Path, bool]]:
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        package = parts[-1] == "__init__"
        out[".".join(parts[:-1] if package else parts)] = (path, package)
    return out


def import_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports anywhere in its body (``from a import b`` names the module
    a.b where that is one, a otherwise)."""
    modules = _modules()
    graph = {}
    for name, (path, package) in modules.items():
        here = name.split(".") if package else name.split(".")[:-1]
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = here[: len(here) - node.level + 1] if node.level else []
                target = ".".join(base + ([node.module] if node.module else []))
                for alias in node.names:
                    full = f"{target}.{alias.name}"
                    deps.add(full if full in modules else target)
            elif isinstance(node, ast.Import):
                deps.update(alias.name for alias in node.names)
        graph[name] = {d for d in deps if d in modules and d != name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_checker_finds_a_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle():
    graph = import_graph()
    assert "sparsegp.estimators.sparse" in graph and graph["sparsegp.estimators.sparse"]
    assert circles(graph) == []


def _layer(module: str) -> str:
    """The subpackage a module belongs to (``sparsegp.fitting.pipeline`` -> ``sparsegp.fitting``); a top-level
    module is a unit of its own."""
    return ".".join(module.split(".")[:2])


def test_no_circle_between_subpackages():
    """The folders are layers: no subpackage imports one that imports it back, by any path."""
    layers: dict[str, set[str]] = {}
    for module, deps in import_graph().items():
        layers.setdefault(_layer(module), set()).update(_layer(d) for d in deps if _layer(d) != _layer(module))
    assert "sparsegp.backends" in layers["sparsegp.approximations"]
    assert circles(layers) == []


def test_module_names_are_unique():
    """One name, one module: a name says where the code is (``__init__``, ``base`` and ``registry`` aside, and
    the claims modules, which mirror the experiments they judge)."""
    shared = {"__init__", "base", "registry"}
    seen: dict[str, list[str]] = {}
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT)
        if path.stem in shared or rel.parts[:2] == ("experiments", "claims"):
            continue
        seen.setdefault(path.stem, []).append(str(rel))
    assert {name: paths for name, paths in seen.items() if len(paths) > 1} == {}


def _code_lines(node) -> int:
    """A function's lines after its docstring (the numpydoc sections and examples are not code)."""
    first = node.body[0]
    docstring = (
        isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)
    )
    start = first.end_lineno if docstring and len(node.body) > 1 else node.lineno
    return node.end_lineno - start


def test_functions_are_short_outside_the_experiments():
    long = []
    for path in ROOT.rglob("*.py"):
        if "experiments" in path.relative_to(ROOT).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _code_lines(node) >= 80:
                long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}")
    assert long == []
    assert _lines_outside_docstrings(ROOT / "estimators" / "sparse.py") < 200  # the estimator delegates


def _lines_outside_docstrings(path) -> int:
    tree = ast.parse(path.read_text())
    documented = [tree] + [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    docs = sum(
        n.body[0].end_lineno - n.body[0].lineno + 1
        for n in documented
        if n.body and isinstance(n.body[0], ast.Expr) and isinstance(getattr(n.body[0], "value", None), ast.Constant)
    )
    return len(path.read_text().splitlines()) - docs


@pytest.mark.slow  # a fit of every estimator, like scikit-learn's estimator checks
def test_a_fit_sets_only_fitted_attributes():
    import numpy as np

    from sparsegp import ExactGPRegressor, SparseGPRegressor

    r = np.random.default_rng(0)
    X = r.normal(size=(40, 2))
    y = np.sin(X[:, 0]) + 0.1 * r.normal(size=40)
    for model in (
        SparseGPRegressor(inducing=8, random_state=0, schedule=Joint(max_iter=5)),
        ExactGPRegressor(max_iter=5),
    ):
        before = set(vars(model))
        model.fit(X, y)
        added = set(vars(model)) - before
        assert added and all(name.endswith("_") and not name.startswith("_") for name in added), added


def test_the_architecture_page_lists_exactly_the_folders():
    """docs/guide/architecture.md names each folder of the package once, with its line, and no other."""
    import re

    page = ROOT.parents[1] / "docs" / "guide" / "architecture.md"
    listed = re.findall(r"^- `(\w+)/`: \S", page.read_text(), flags=re.M)
    folders = sorted(p.name for p in ROOT.iterdir() if (p / "__init__.py").exists())
    assert len(listed) == len(set(listed)) and sorted(listed) == folders


def test_the_benchmarks_are_a_package_run_by_one_runner_without_path_patches():
    """``python -m benchmarks NAME`` runs each; none edits ``sys.path`` to find its neighbours."""
    import subprocess
    import sys

    bench = ROOT.parents[1] / "benchmarks"
    assert (bench / "__init__.py").exists() and (bench / "__main__.py").exists()
    assert [p.name for p in bench.glob("*.py") if "sys.path" in p.read_text()] == []
    listing = subprocess.run(
        [sys.executable, "-m", "benchmarks"], cwd=bench.parent, capture_output=True, text=True, check=True
    ).stdout
    assert all(f"  {p.stem} " in listing for p in bench.glob("*.py") if not p.stem.startswith("_"))


def test_no_module_outside_approximations_asks_which_approximation_it_has():
    """An approximation is one object: outside ``approximations/`` (the command line's parsing and the
    experiments aside) no comparison names one (``== "fitc"``, ``in ("sor", ...)``)."""
    from sparsegp.approximations.registry import APPROXIMATIONS

    names = set(APPROXIMATIONS)

    def named(node) -> bool:
        if isinstance(node, ast.Constant):
            return node.value in names
        return isinstance(node, (ast.Tuple, ast.List, ast.Set)) and any(named(e) for e in node.elts)

    asked = []
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT)
        if rel.parts[0] in ("approximations", "experiments") or rel.name == "cli.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Compare) and any(named(n) for n in [node.left, *node.comparators]):
                asked.append(f"{rel}:{node.lineno}")
    assert asked == []


LIKELIHOOD_NAMES = {"probit", "logit", "softmax", "robustmax", "bernoulli", "gaussian", "student-t", "poisson"}


def _string_comparisons(path) -> list[tuple[int, str]]:
    """(line, string) of every ``==``, ``!=``, ``in`` or ``not in`` whose operands include a string constant."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Compare) and any(
            isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)) for op in node.ops
        ):
            for operand in [node.left, *node.comparators]:
                values = operand.elts if isinstance(operand, (ast.Tuple, ast.List, ast.Set)) else [operand]
                found += [
                    (node.lineno, v.value) for v in values if isinstance(v, ast.Constant) and isinstance(v.value, str)
                ]
    return found


# Each axis of names: the names, and the module or folder that owns them (the only place they may be compared)
AXES = {
    "likelihood": (LIKELIHOOD_NAMES, ROOT / "likelihoods.py"),
    "prediction mode": ({"standard", "augmented", "nystrom"}, ROOT / "approximations"),
    "backend": ({"memory", "dask"}, ROOT / "backends"),
}


@pytest.mark.parametrize("axis", sorted(AXES))
def test_no_name_of_an_axis_is_compared_outside_its_owner(axis):
    """A likelihood, a prediction mode and a backend are each one object (:mod:`sparsegp.likelihoods`,
    :class:`sparsegp.approximations.base.PredictionMode`, the backends' own attributes): the estimators and the fit
    ask it, and never test its name (the experiments and their claims name the papers' models, and are left out)."""
    names, owner = AXES[axis]
    owned = [owner] if owner.is_file() else list(owner.rglob("*.py"))
    assert any(s in names for path in owned for _, s in _string_comparisons(path))  # the check sees them there
    hits = []
    for path in ROOT.rglob("*.py"):
        if path in owned or "experiments" in path.relative_to(ROOT).parts:
            continue
        hits += [f"{path.relative_to(ROOT)}:{line} {s!r}" for line, s in _string_comparisons(path) if s in names]
    assert hits == []
