"""The release a user installs: the wheel and sdist build and pass ``twine check``; the wheel, installed into
a fresh virtual environment, runs the README's Quick start (a fit and prediction on a shipped dataset) and
``sparsegp fit`` / ``predict``, from a directory outside the checkout so that nothing is read from it."""

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def _quick_start() -> str:
    """The README's Quick start, as written there, plus lines that report where the package came from."""
    readme = (ROOT / "README.md").read_text()
    block = readme.split("## Quick start", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    return block + textwrap.dedent(
        """
        import numpy as np
        import sparsegp
        print("from", sparsegp.__file__)
        print("smse", metrics.smse(y_test, mean), "m", same.Z_.shape[0])
        np.savetxt("test.csv", X_test, delimiter=",")
        """
    )


def _run(args, cwd, env=None, timeout=600):
    result = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)
    assert result.returncode == 0, f"{' '.join(map(str, args))}\n{result.stdout}\n{result.stderr}"
    return result.stdout


def _install(venv: Path, wheel: Path, cwd: Path):
    """uv (from the development environment, with its cache) where it is there; else pip."""
    uv = shutil.which("uv", path=str(Path(sys.executable).parent))
    python = venv / "bin" / "python"
    if uv:
        _run([uv, "pip", "install", "--quiet", "--python", str(python), str(wheel)], cwd)
    else:
        _run([str(python), "-m", "pip", "install", "--quiet", str(wheel)], cwd)


def test_wheel_installs_and_fits_outside_the_checkout(tmp_path):
    pytest.importorskip("build")
    dist = tmp_path / "dist"
    _run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(ROOT)], ROOT)
    wheels = list(dist.glob("sparsegp-*.whl"))
    sdists = list(dist.glob("sparsegp-*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, sorted(p.name for p in dist.iterdir())
    check = _run([sys.executable, "-m", "twine", "check", *map(str, wheels + sdists)], ROOT)
    assert check.count("PASSED") == 2, check

    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], tmp_path)
    _install(venv, wheels[0], tmp_path)
    work = tmp_path / "user"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the tests' compile flags and cache kept
    env["MPLBACKEND"] = "Agg"

    out = _run([str(venv / "bin" / "python"), "-c", _quick_start()], work, env)
    assert str(venv) in out.split("from", 1)[1].splitlines()[0], out  # the installed package, not the checkout
    smse = float(re.search(r"smse (\S+)", out).group(1))
    assert 0 <= smse < 0.6 and (work / "abalone-vfe.npz").exists(), out  # abalone: SMSE about 0.41

    version = _run([str(venv / "bin" / "sparsegp"), "--version"], work, env)
    from sparsegp import __version__

    assert version.strip() == f"sparsegp {__version__}" and wheels[0].name.startswith(f"sparsegp-{__version__}-")
    cli = str(venv / "bin" / "sparsegp")
    fit = [
        cli,
        "fit",
        "--dataset",
        "abalone",
        "--split",
        "0",
        "--model",
        "vfe",
        "--inducing",
        "64",
        "--max-iter",
        "100",
        "--out",
        "cli.npz",
    ]
    _run(fit, work, env)
    assert (work / "cli.npz").exists()
    _run([cli, "predict", "--model", "cli.npz", "--data", "test.csv", "--out", "p.csv"], work, env)
    rows = (work / "p.csv").read_text().strip().splitlines()
    n_test = len((work / "test.csv").read_text().strip().splitlines())
    assert len(rows) in (n_test, n_test + 1), rows[:3]  # one row per test input (and a header)
