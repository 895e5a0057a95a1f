"""Every public name (sparsegp._public) has a numpydoc docstring: parameters, returns and an example, and
every example runs (the docstrings' doctests)."""

import doctest
import inspect

import numpy as np
import pytest

from sparsegp._public import MODULES, public_methods, public_objects

# numpydoc's validation codes: no docstring, a parameter missing or unknown, no Returns section, no Examples
OBJECT_CHECKS = {"GL08", "PR01", "PR02", "RT01", "EX01"}
METHOD_CHECKS = {"GL08", "PR01", "PR02", "RT01"}


def _public():
    for module in MODULES:
        for name, obj in public_objects(module):
            yield f"{module}.{name}", obj


PUBLIC = dict(_public())


def _problems(qualified: str, checks: set) -> list[str]:
    from numpydoc.validate import validate

    return sorted(f"{code} {message}" for code, message in validate(qualified)["errors"] if code in checks)


def _documented_by_base(cls, name) -> bool:
    """A method that overrides a documented one of a public base class keeps its contract and its docs."""
    return any(name in vars(base) and inspect.getdoc(vars(base)[name]) for base in cls.__mro__[1:])


def undocumented() -> dict[str, list[str]]:
    """Public names and their public methods whose docstrings numpydoc finds incomplete."""
    pytest.importorskip("numpydoc")
    found = {}
    for qualified, obj in PUBLIC.items():
        if problems := _problems(qualified, OBJECT_CHECKS):
            found[qualified] = problems
        if not inspect.isclass(obj) or not obj.__module__.startswith("sparsegp"):
            continue
        for name, member in public_methods(obj):
            if isinstance(member, property) or (member.__doc__ is None and _documented_by_base(obj, name)):
                continue
            if problems := _problems(f"{qualified}.{name}", METHOD_CHECKS):
                found[f"{qualified}.{name}"] = problems
    return found


def test_every_public_name_has_a_numpydoc_docstring_with_an_example():
    missing = undocumented()
    assert not missing, "\n".join(f"{name}: {'; '.join(p)}" for name, p in sorted(missing.items()))


def _examples(obj) -> list[doctest.DocTest]:
    finder = doctest.DocTestFinder(recurse=False)
    tests = finder.find(obj, name=getattr(obj, "__qualname__", str(obj)), globs={})
    if inspect.isclass(obj):
        for name, member in public_methods(obj):
            target = member.fget if isinstance(member, property) else member
            tests += finder.find(target, name=f"{obj.__qualname__}.{name}", globs={})
    return [t for t in tests if t.examples]


# Examples that fit classifiers, several models to show a warning, or a model to save and load, run in the
# slow tier with the other whole fits; every other example runs in the fast tier.
SLOW_EXAMPLES = {
    "sparsegp.SparseGPRegressor",
    "sparsegp.ExactGPRegressor",
    "sparsegp.metrics.nlpd_scorer",
    "sparsegp.SparseGPClassifier",
    "sparsegp.OneVsRestIVMClassifier",
    "sparsegp.CalibrationWarning",
    "sparsegp.CertificateWarning",
    "sparsegp.InducingWarning",
    "sparsegp.DataWarning",
    "sparsegp.NumericalWarning",
    "sparsegp.load_model",
}


# One worker runs every example: the examples fit small models on the same data, so they share the compiled
# programs in memory instead of each tracing them again on the other worker.
@pytest.mark.xdist_group("doctests")
@pytest.mark.parametrize(
    "qualified", [pytest.param(q, marks=pytest.mark.slow) if q in SLOW_EXAMPLES else q for q in sorted(PUBLIC)]
)
def test_docstring_examples_run(qualified):
    tests = _examples(PUBLIC[qualified])
    if not tests:
        pytest.skip(f"{qualified} has no example (the test above lists it)")
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    with np.printoptions(precision=4, legacy="1.25"):
        for test in tests:
            result = runner.run(test, out=lambda s: None)
            if result.failed:
                report = []
                runner = doctest.DebugRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
                try:
                    runner.run(test, out=report.append)
                except doctest.DocTestFailure as failure:
                    pytest.fail(
                        f"{test.name}: {failure.example.source} gave {failure.got!r}, expected {failure.example.want!r}"
                    )
                except doctest.UnexpectedException as exc:
                    pytest.fail(f"{test.name}: {exc.example.source} raised {exc.exc_info[1]!r}")


def test_no_docstring_keeps_an_unfilled_placeholder():
    """A shared section (sparsegp._docstrings) that a decorator forgot would reach the reader as ``{name}``."""
    from sparsegp._docstrings import _PLACEHOLDER

    docs = {}
    for qualified, obj in PUBLIC.items():
        docs[qualified] = obj.__doc__ or ""
        if inspect.isclass(obj):
            for name, member in public_methods(obj):
                docs[f"{qualified}.{name}"] = getattr(member, "__doc__", None) or ""
    unfilled = {q: line.strip() for q, doc in docs.items() for line in doc.splitlines() if _PLACEHOLDER.match(line)}
    assert not unfilled, unfilled


def test_substitute_indents_nests_and_names_an_unknown_placeholder():
    from sparsegp._docstrings import substitute

    doc = "Title.\n\n    Parameters\n    ----------\n    {a}\n\n    {toy_regression}\n"
    out = substitute(doc, {"a": "x : int\n    The {b} one.\n", "b": "unused"})
    assert out.splitlines()[4:6] == ["    x : int", "        The {b} one."]  # only whole lines are placeholders
    assert out.splitlines()[7] == "    >>> import numpy as np"  # a shared block, at the placeholder's indent
    nested = substitute("  {outer}", {"outer": "first\n{inner}", "inner": "second"})
    assert nested == "  first\n  second"
    with pytest.raises(KeyError, match="placeholder {missing}"):
        substitute("    {missing}\n", {})
