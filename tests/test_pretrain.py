"""The start of ``inducing="auto"``: the exact GP on a subset (:mod:`sparsegp.fitting.pretrain`), and the
optimiser's refusal to start where the objective is not finite."""

import warnings

import jax.numpy as jnp
import numpy as np
import pytest

from sparsegp import NumericalError, SparseGPRegressor, metrics
from sparsegp.backends.in_memory import InMemory
from sparsegp.fitting import growth, pretrain
from sparsegp.fitting.config import sparse_config
from sparsegp.fitting.pipeline import trainable
from sparsegp.fitting.training import minimize
from sparsegp.kernels import SquaredExponential
from sparsegp.options import Auto


def few_of_many(n=1000, D=32, seed=0):
    """32 inputs of which three matter: from the fixed start every pair is uncorrelated (length-scales at the
    columns' spread) and a fit settles where the targets look like noise."""
    r = np.random.default_rng(seed)
    X = r.normal(size=(n + 500, D))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] ** 2 - 0.5 * X[:, 2] + 0.1 * r.normal(size=n + 500)
    return X[:n], y[:n], X[n:], y[n:]


@pytest.mark.slow  # two whole fits on 1,000 rows of 32 inputs: the fast tier's longest test, an end-to-end run
def test_a_fit_on_many_inputs_of_which_few_matter_finds_them(monkeypatch):
    monkeypatch.setattr(growth, "START_M", 32)
    monkeypatch.setattr(pretrain, "PRETRAIN_ROWS", 300)
    X, y, Xt, yt = few_of_many()
    model = SparseGPRegressor(inducing=Auto(max_inducing=64), random_state=0).fit(X, y)
    assert model.stages_[0]["rows"] == 300 and model.stages_[0]["chosen"].startswith("noise held")
    assert metrics.smse(yt, model.predict(Xt)) < 0.05
    assert sorted(np.argsort(np.asarray(model.kernel_.lengthscale))[:3]) == [0, 1, 2]
    monkeypatch.setattr(pretrain, "PRETRAIN_ROWS", 10**9)  # without the subset's start: the trap it avoids
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fixed = SparseGPRegressor(inducing=Auto(max_inducing=64), random_state=0).fit(X, y)
    assert fixed.stages_ is None and metrics.smse(yt, fixed.predict(Xt)) > 0.9


def subset_start(scoring, n=700, **options):
    """:func:`pretrain.pretrain` on three inputs from a fixed start, scored by ``scoring(given start)``."""
    X, y, _, _ = few_of_many(n=n, D=3)
    config = sparse_config(SparseGPRegressor(**options))
    data = InMemory.from_training(X, y, duplicates="collapse", normalize_y=True)
    kernel = SquaredExponential(lengthscale=np.ones(3), variance=1.0)
    params, mask = trainable(config, kernel, 1.0, np.zeros((4, 3)))
    hyper = {k: params[k] for k in ("kernel", "raw_noise")}
    rng = np.random.default_rng(0)
    return hyper, pretrain.pretrain(config, data, hyper, {k: mask[k] for k in hyper}, rng, scoring(hyper))


@pytest.mark.slow  # whole fits with their subset starts
def test_the_start_is_the_subset_fit_the_growth_scores_highest():
    hyper, out = subset_start(lambda given: lambda p: -float(p["raw_noise"]))  # the smallest noise scores highest
    assert set(out.stage["scores"]) == {"noise held at 0.1", "noise held at 0.01", "the given start"}
    assert out.stage["chosen"] == max(out.stage["scores"], key=out.stage["scores"].get) != "the given start"
    assert out.params is not hyper and out.n_iter == out.stage["n_iter"] > 0


@pytest.mark.slow  # whole fits with their subset starts
def test_a_near_categorical_start_is_scored_at_the_noise_where_the_growth_scores_it_highest():
    """A subset fit whose kernel spans thousands of length-scales in some input interpolates the subset; it is
    scored at its own noise or one of NOISE_GRID (at least min_noise, never where the noise is held), whichever
    the growth's bound prefers. Other fits are scored at their own noise."""
    from sparsegp.transforms import to_positive, to_raw

    def noise_of(p):
        return float(to_positive(p["raw_noise"]))

    def score(p):
        return -((np.log10(noise_of(p)) + 1.5) ** 2)  # best at 10^-1.5

    start = {"kernel": SquaredExponential(lengthscale=[1e-7, 1.0]), "raw_noise": jnp.asarray(to_raw(1e-4))}
    p, value = pretrain._at_best_noise(score, start, 1e-6)
    assert noise_of(p) == pytest.approx(10**-1.5) and value == pytest.approx(0.0)
    p, _ = pretrain._at_best_noise(score, start, 0.05)
    assert noise_of(p) >= 0.05 * (1 - 1e-9)
    p, _ = pretrain._at_best_noise(score, start, None)
    assert p is start
    _, out = subset_start(lambda given: score)  # three smooth inputs: every fit scored at its own noise
    assert out.stage["noise"] == pytest.approx(noise_of(out.params))
    assert out.stage["noise"] != pytest.approx(10**-1.5)


@pytest.mark.slow  # whole fits with their subset starts
@pytest.mark.parametrize("failure", ["nan", "raise"])
def test_the_given_start_is_kept_where_the_subset_fits_cannot_be_grown_from(failure):
    """Where the growth's objective is not finite at a subset fit (a factorisation failed), the given start."""

    def scoring(given):
        def score(p):
            if p is given:
                return -1e6
            if failure == "raise":
                raise NumericalError("cholesky failed")
            return float("nan")

        return score

    hyper, out = subset_start(scoring)
    assert out.stage["chosen"] == "the given start" and out.params is hyper
    assert out.stage["scores"]["noise held at 0.1"] == -np.inf


def test_no_subset_start_where_there_is_nothing_to_learn_or_no_more_rows():
    _, out = subset_start(lambda given: lambda p: 0.0, n=400)  # no more rows than the subset
    assert out.stage is None and out.n_iter == 0
    _, out = subset_start(lambda given: lambda p: 0.0, optimize="inducing")  # the kernel and noise are given
    assert out.stage is None


def test_the_optimiser_refuses_to_start_where_the_objective_is_not_finite():
    def objective(p):
        return jnp.sum(p["a"] ** 2) + jnp.log(p["b"] - 1.0)  # NaN for b < 1

    with pytest.raises(NumericalError, match="not finite at the start values"):
        minimize(objective, {"a": jnp.ones(2), "b": jnp.asarray(0.5)}, max_iter=20)
    params, report = minimize(objective, {"a": jnp.ones(2), "b": jnp.asarray(2.0)}, max_iter=20)
    assert report.n_iter > 0 and np.isfinite(report.objective)


def test_a_random_restart_where_the_objective_is_not_finite_counts_as_infinite():
    def objective(p):
        return jnp.sum((p["a"] - 0.5) ** 2) + 1e-9 * jnp.log(p["a"][0] + 2.0)  # NaN for a[0] < -2

    _, report = minimize(objective, {"a": jnp.zeros(2)}, max_iter=30, n_restarts=6, restart_scale=3.0, rng=0)
    assert any(np.isinf(s) for s in report.starts) and np.isfinite(report.objective)
    assert report.best_start == int(np.argmin(report.starts))
