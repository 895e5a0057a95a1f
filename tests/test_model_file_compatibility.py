"""Model files written by an earlier version of the package (824bde4, before known noise variances, several targets
and the new kernels) still load, and predict what they predicted when they were written.

The files in ``tests/data/model_files_824bde4`` and their predictions (``expected.json``) were written by that
version's ``save``, ``predict`` and ``predict_proba``.
"""

import json
from pathlib import Path

import numpy as np
import pytest

from sparsegp import load_model

FILES = Path(__file__).parent / "data" / "model_files_824bde4"
EXPECTED = json.loads((FILES / "expected.json").read_text())


@pytest.mark.parametrize("name", sorted(EXPECTED["models"]))
@pytest.mark.slow
def test_a_model_file_of_an_earlier_version_loads_and_predicts_as_it_did(name):
    record = EXPECTED["models"][name]
    model = load_model(FILES / record["file"])
    Xs = np.asarray(EXPECTED["inputs"])
    if "proba" in record:
        np.testing.assert_allclose(model.predict_proba(Xs), record["proba"], rtol=1e-9, atol=1e-12)
        return
    mean, std = model.predict(Xs, return_std=True)
    np.testing.assert_allclose(mean, record["mean"], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(std, record["std"], rtol=1e-10, atol=1e-12)
