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


# Names whose docstrings are still to be completed (issue 39 empties this); the test fails when the list
# and what numpydoc finds differ in either direction, so it cannot go stale.
PENDING = {
    "sparsegp.ExactGPRegressor",
    "sparsegp.ExactGPRegressor.fit",
    "sparsegp.ExactGPRegressor.predict",
    "sparsegp.IVMClassifier",
    "sparsegp.IVMClassifier.decision_function",
    "sparsegp.IVMClassifier.fit",
    "sparsegp.IVMClassifier.predict",
    "sparsegp.IVMClassifier.predict_latent",
    "sparsegp.IVMClassifier.predict_log_proba",
    "sparsegp.IVMClassifier.predict_proba",
    "sparsegp.OneVsRestIVMClassifier",
    "sparsegp.OneVsRestIVMClassifier.decision_function",
    "sparsegp.OneVsRestIVMClassifier.fit",
    "sparsegp.OneVsRestIVMClassifier.per_class_log_proba",
    "sparsegp.OneVsRestIVMClassifier.predict",
    "sparsegp.OneVsRestIVMClassifier.predict_log_proba",
    "sparsegp.OneVsRestIVMClassifier.predict_proba",
    "sparsegp.SparseGPRegressor",
    "sparsegp.SparseGPRegressor.fit",
    "sparsegp.SparseGPRegressor.predict",
    "sparsegp.SparseGPRegressor.predict_var",
    "sparsegp.classification.IVMSchedule",
    "sparsegp.classification.IVMSelection",
    "sparsegp.classification.IVMState",
    "sparsegp.classification.IVMState.include",
    "sparsegp.classification.IVMState.log_marginal_likelihood",
    "sparsegp.classification.IVMState.predictor",
    "sparsegp.classification.IVMState.refresh",
    "sparsegp.classification.IVMState.sites",
    "sparsegp.classification.entropy_score",
    "sparsegp.classification.info_gain_score",
    "sparsegp.classification.ivm_select",
    "sparsegp.classification.predict_latent",
    "sparsegp.classification.probit_bias",
    "sparsegp.classification.site_update",
    "sparsegp.datasets.Dataset",
    "sparsegp.datasets.Dataset.inverse_transform_y",
    "sparsegp.datasets.TargetTransform",
    "sparsegp.datasets.TargetTransform.forward",
    "sparsegp.datasets.TargetTransform.inverse",
    "sparsegp.datasets.TargetTransform.offset",
    "sparsegp.datasets.available",
    "sparsegp.datasets.load",
    "sparsegp.datasets.mnist_13x13",
    "sparsegp.selection.ActiveSetState",
    "sparsegp.selection.ActiveSetState.dtc_log_marginal",
    "sparsegp.selection.ActiveSetState.eligible",
    "sparsegp.selection.ActiveSetState.extend",
    "sparsegp.selection.ActiveSetState.include",
    "sparsegp.selection.ActiveSetState.marginal_var",
    "sparsegp.selection.ActiveSetState.residual",
    "sparsegp.selection.ActiveSetState.sb_primal",
    "sparsegp.selection.ActiveSetState.vfe_bound",
    "sparsegp.selection.ActiveSetState.w_row",
    "sparsegp.selection.ConditionalVariance",
    "sparsegp.selection.DifferentialEntropy",
    "sparsegp.selection.DualState",
    "sparsegp.selection.DualState.include",
    "sparsegp.selection.DualState.scores",
    "sparsegp.selection.DualState.step",
    "sparsegp.selection.DualState.value",
    "sparsegp.selection.ErrorBars",
    "sparsegp.selection.Evidence",
    "sparsegp.selection.EvidenceMinimum",
    "sparsegp.selection.HeldOutError",
    "sparsegp.selection.HeldOutError.predictions",
    "sparsegp.selection.HeldOutError.start",
    "sparsegp.selection.InfoGain",
    "sparsegp.selection.KMeans",
    "sparsegp.selection.KMeans.centres",
    "sparsegp.selection.QuadraticFormGap",
    "sparsegp.selection.QuadraticFormGap.start",
    "sparsegp.selection.QuadraticFormGap.update",
    "sparsegp.selection.Random",
    "sparsegp.selection.RelativeGap",
    "sparsegp.selection.RelativeGap.update",
    "sparsegp.selection.RemainingError",
    "sparsegp.selection.Selection",
    "sparsegp.selection.Selection.curve",
    "sparsegp.selection.Selector",
    "sparsegp.selection.Selector.select",
    "sparsegp.selection.SmolaBartlett",
    "sparsegp.selection.StoppingRule",
    "sparsegp.selection.StoppingRule.start",
    "sparsegp.selection.StoppingRule.update",
    "sparsegp.selection.TimeBudget",
    "sparsegp.selection.TimeBudget.start",
    "sparsegp.selection.TimeBudget.update",
    "sparsegp.selection.VFEGreedy",
    "sparsegp.selection.greedy_select",
    "sparsegp.selection.relative_gap",
}


def test_every_public_name_has_a_numpydoc_docstring_with_an_example():
    missing = undocumented()
    unexpected = {name: p for name, p in missing.items() if name not in PENDING}
    assert not unexpected, "\n".join(f"{name}: {'; '.join(p)}" for name, p in sorted(unexpected.items()))
    assert not PENDING - set(missing), f"documented now, remove from PENDING: {sorted(PENDING - set(missing))}"


def _examples(obj) -> list[doctest.DocTest]:
    finder = doctest.DocTestFinder(recurse=False)
    tests = finder.find(obj, name=getattr(obj, "__qualname__", str(obj)), globs={})
    if inspect.isclass(obj):
        for name, member in public_methods(obj):
            target = member.fget if isinstance(member, property) else member
            tests += finder.find(target, name=f"{obj.__qualname__}.{name}", globs={})
    return [t for t in tests if t.examples]


@pytest.mark.parametrize("qualified", sorted(PUBLIC))
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
