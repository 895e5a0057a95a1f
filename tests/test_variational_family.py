"""The classifier's variational family is one object: the fit asks every part of q(u) of it
(sparsegp.classification.svgp.WhitenedGaussian), so that another family is one class passed in its place."""

import dataclasses

import numpy as np

from sparsegp import SparseGPClassifier
from sparsegp.classification.svgp import FAMILY, WhitenedGaussian
from sparsegp.fitting.variational import InMemoryRows, collapse_rows, fit_variational


@dataclasses.dataclass(frozen=True)
class Recording(WhitenedGaussian):
    """The same family, recording which of its parts the fit asks for (outside traced code: by name)."""

    asked: list = dataclasses.field(default_factory=list, compare=False, hash=False)

    def __getattribute__(self, name):
        if not name.startswith("_") and name not in ("asked", "jitter", "description"):
            object.__getattribute__(self, "asked").append(name)
        return object.__getattribute__(self, name)


def test_the_variational_fit_asks_every_part_of_q_of_its_family():
    r = np.random.default_rng(0)
    X = r.normal(size=(160, 2))
    y = (X[:, 0] + 0.5 * X[:, 1] + 0.3 * r.normal(size=160) > 0).astype(int)
    estimator = SparseGPClassifier(inducing=8, max_iter=30, random_state=0)
    config = estimator._config(2, 2, X, y)
    assert config.family == FAMILY
    rows = InMemoryRows(collapse_rows(X, y.astype(np.int64), 2))
    recording = Recording()
    plain = fit_variational(config, rows)
    through = fit_variational(dataclasses.replace(config, family=recording), rows)
    assert through.bound == plain.bound  # the same fit, every part of q asked of the family passed in
    asked = set(recording.asked)
    assert {"start", "mask", "negative_bound", "site_sums", "kl", "natural_step", "posterior", "loo_cavity"} <= asked
