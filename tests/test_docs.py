"""The documentation site: Sphinx builds it with warnings as errors, running every gallery example at its quick
sizes (``SPARSEGP_DOCS_QUICK=1``); each example draws at least one figure; every internal link and image of the
built HTML resolves (docs/check_links.py, ``make docs-check``). ``make docs`` runs the examples at full size."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("plot_*.py"))
pytestmark = pytest.mark.slow


def test_the_gallery_has_ten_examples_of_one_idea_each():
    assert len(EXAMPLES) >= 10, [p.name for p in EXAMPLES]
    for path in EXAMPLES:
        text = path.read_text()
        assert text.startswith('"""\n') and "plt.show()" in text, path.name  # a titled docstring, a figure


def test_docs_build_without_warnings_and_every_link_resolves(tmp_path):
    pytest.importorskip("sphinx_gallery")
    pytest.importorskip("dask")  # the Dask example
    out = tmp_path / "html"
    env = dict(os.environ, SPARSEGP_DOCS_QUICK="1", MPLBACKEND="Agg")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-W",
            "--keep-going",
            "-q",
            "-b",
            "html",
            "-d",
            str(tmp_path / "doctrees"),
            str(ROOT / "docs"),
            str(out),
        ],
        cwd=ROOT / "docs",
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-5000:]
    for path in EXAMPLES:
        assert list((out / "_images").glob(f"sphx_glr_{path.stem}_*.png")), f"{path.name} drew no figure"
    sys.path.insert(0, str(ROOT / "docs"))
    from check_links import broken_links

    assert broken_links(out) == []
    assert (out / "index.html").exists() and (out / "api" / "generated" / "sparsegp.SparseGPRegressor.html").exists()
