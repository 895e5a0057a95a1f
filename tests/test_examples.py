"""Every gallery example (examples/plot_*.py) runs at its quick sizes and draws at least one figure; the docs
build (make docs) runs them at their full sizes."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("plot_*.py"))
pytestmark = pytest.mark.slow

RUN = (
    "import runpy, sys, matplotlib; matplotlib.use('Agg'); import matplotlib.pyplot as plt; "
    "runpy.run_path(sys.argv[1], run_name='__main__'); print('figures', len(plt.get_fignums()))"
)


def test_the_gallery_has_ten_examples():
    assert len(EXAMPLES) >= 10, [p.name for p in EXAMPLES]


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_runs_and_draws(path, tmp_path):
    pytest.importorskip("dask")  # the Dask example; the others need only the package
    env = dict(os.environ, SPARSEGP_DOCS_QUICK="1", MPLBACKEND="Agg")
    result = subprocess.run(
        [sys.executable, "-c", RUN, str(path)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr[-3000:]
    figures = int(result.stdout.strip().splitlines()[-1].split()[-1])
    assert figures >= 1, result.stdout[-2000:]
