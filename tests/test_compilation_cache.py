"""The persistent compilation cache (:mod:`sparsegp._config`): a second process compiles nothing a first did;
the variable turns it off; a user's own cache is kept; a directory that cannot be written, or entries that
cannot be read, never fail a fit."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

FIT = (
    "import numpy as np, warnings, jax\n"
    "warnings.simplefilter('ignore')\n"
    "from sparsegp import SparseGPRegressor\n"
    "r = np.random.default_rng(0)\n"
    "X = r.normal(size=(60, 2)); y = np.sin(X[:, 0]) + 0.1 * r.normal(size=60)\n"
    "m = SparseGPRegressor(inducing=8, random_state=0).fit(X, y)\n"
    "print(jax.config.jax_compilation_cache_dir)\n"
    "print(repr(float(m.predict(X[:3]).sum())))\n"
)


def run(code: str, **env) -> list[str]:
    """``code`` in a fresh process without the test suite's own cache (conftest.py), with ``env`` set."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_COMPILATION_CACHE", "JAX_PERSISTENT"))}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env={**base, **env}
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()


def entries(path) -> set[str]:
    return set(os.listdir(path))


@pytest.mark.slow  # two fresh processes, each compiling a fit's programs or reading them
def test_a_second_process_compiles_nothing_the_first_did_and_predicts_the_same(tmp_path):
    cache = tmp_path / "cache"
    first = run(FIT, SPARSEGP_COMPILATION_CACHE=str(cache))
    written = entries(cache)
    assert first[0] == str(cache) and len(written) > 5
    second = run(FIT, SPARSEGP_COMPILATION_CACHE=str(cache))
    assert second == first and entries(cache) == written  # every program read from the cache


@pytest.mark.slow  # three fresh processes that import JAX
def test_the_variable_turns_the_cache_off_and_a_users_own_cache_is_kept(tmp_path):
    code = "import sparsegp.linalg, jax; print(jax.config.jax_compilation_cache_dir)"
    assert run(code, SPARSEGP_COMPILATION_CACHE="0") == ["None"]
    own = str(tmp_path / "own")
    assert run(code, SPARSEGP_COMPILATION_CACHE="", JAX_COMPILATION_CACHE_DIR=own) == [own]


@pytest.mark.slow  # three fresh processes
def test_an_unwritable_directory_or_unreadable_entries_never_fail_a_fit(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    unwritable = run(FIT, SPARSEGP_COMPILATION_CACHE=str(blocker / "cache"))
    assert unwritable[0] == "None"
    cache = tmp_path / "cache"
    reference = run(FIT, SPARSEGP_COMPILATION_CACHE=str(cache))
    for name in entries(cache):  # every entry stale: garbage where the compiled program was
        path = cache / name
        if path.is_file():
            path.write_bytes(b"stale")
    assert run(FIT, SPARSEGP_COMPILATION_CACHE=str(cache))[1] == reference[1] == unwritable[1]
