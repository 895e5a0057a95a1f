"""Programs of small problems compiled by XLA's quick settings (sparsegp._compile.jit and compiled_for)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sparsegp import SparseGPRegressor, _compile
from sparsegp.options import Joint


def test_a_small_problem_gets_the_quick_program_and_a_large_one_the_full_program(monkeypatch):
    used = []
    monkeypatch.setattr(jax, "jit", _recording_jit(jax.jit, used))
    square = _compile.jit(lambda x: x @ x.T)
    x = jnp.arange(12.0).reshape(3, 4)
    with _compile.compiled_for(10.0):
        small = square(x)
    with _compile.compiled_for(10 * _compile.QUICK_WORK):
        large = square(x)
    outside = square(x)
    assert used == [_compile.QUICK_OPTIONS, None, None]  # the compiler options of the program each call ran
    np.testing.assert_allclose(small, large, rtol=1e-15)
    np.testing.assert_allclose(outside, large, rtol=1e-15)
    assert _compile._quick.get() is False  # each block restores the setting it found


def _recording_jit(jit, used):
    """jax.jit whose programs record their compiler options in ``used`` each time they run."""

    def recording(fn, **options):
        compiled = jit(fn, **options)

        def run(*args):
            used.append(options.get("compiler_options"))
            return compiled(*args)

        return run

    return recording


def test_the_quick_setting_reaches_only_the_top_level_program():
    """A jitted function called inside another program's trace is part of that program: asking XLA for quick
    settings there would be refused (compiler options are for top-level programs only)."""
    inner = _compile.jit(lambda x: jnp.sin(x) * 2.0)
    outer = jax.jit(lambda x: inner(x) + 1.0)
    with _compile.compiled_for(1.0):
        value = outer(jnp.ones(3))
        grad = jax.grad(lambda x: jnp.sum(inner(x)))(jnp.ones(3))
    np.testing.assert_allclose(value, 2.0 * np.sin(1.0) + 1.0, rtol=1e-15)
    np.testing.assert_allclose(grad, 2.0 * np.cos(1.0), rtol=1e-15)


@pytest.mark.parametrize("threshold, quick", [(None, True), (1.0, False)])
def test_a_fit_says_how_large_its_problem_is(monkeypatch, threshold, quick):
    """The sparse fit's programs are compiled quickly where n m^2 is below QUICK_WORK (a small fit: yes; with the
    threshold lowered below its size: no), and the two settings fit the same model to rounding."""
    if threshold is not None:
        monkeypatch.setattr(_compile, "QUICK_WORK", threshold)
    seen = []
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, (60, 2))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(60)
    model = SparseGPRegressor(
        inducing=8, random_state=0, schedule=Joint(max_iter=5), callback=lambda *a: seen.append(_compile._quick.get())
    ).fit(X, y)
    assert seen and set(seen) == {quick}
    assert np.isfinite(model.objective_)
