"""Every evaluation path minimises the same thing: -(objective + log p(theta)) (:func:`sparsegp.priors.negative_log_posterior`).

The product {vfe, fitc, dtc, sor, exact} x {the JAX program in memory, the host BLAS sums, Dask partitions on a
LocalCluster} x {no prior, LogNormal, Gamma, the tiny-data weak priors} x {no known noise, a per-row noise_variance}
x {1 target, 3 targets} x {distinct rows, repeated rows}: value and gradient equal across the paths to 1e-8
relative, where a path takes the combination; where it does not, the refusal is asserted here with its reason.
Then, for each path, a fit under a strong prior ends near the exact GP's MAP under the same prior.
"""

from __future__ import annotations

import itertools
import warnings

import jax.numpy as jnp
import numpy as np
import pytest
from jax.flatten_util import ravel_pytree
from sklearn.base import clone

from sparsegp import ExactGPRegressor, InputError, SparseGPRegressor
from sparsegp.approximations.host_objective import HostObjective
from sparsegp.approximations.registry import APPROXIMATIONS
from sparsegp.backends.in_memory import InMemory
from sparsegp.fitting.config import sparse_config
from sparsegp.fitting.hyper import initial_kernel, tiny_data_prior
from sparsegp.fitting.negatives import ExactNegative, SparseNegative
from sparsegp.fitting.training import flat_value_and_grad
from sparsegp.kernels import SquaredExponential
from sparsegp.priors import Gamma, LogNormal, log_hyper_prior
from sparsegp.transforms import to_raw

METHODS = ["vfe", "fitc", "dtc", "sor", "exact"]
PRIORS = ["none", "lognormal", "gamma", "tiny-data"]
CASES = list(itertools.product(PRIORS, [False, True], [1, 3], [False, True]))  # prior, known, targets, repeated
CHUNK, JITTER = 7, 1e-8


def rows(known: bool, targets: int, repeated: bool, seed=0):
    """(X, y, noise_variance or None): 24 rows of 2 inputs, the first 6 inputs repeated with other targets."""
    r = np.random.default_rng(seed)
    X = r.normal(size=(24, 2))
    f = np.column_stack([np.sin(2 * X[:, 0]) + k * X[:, 1] for k in range(targets)])
    if repeated:
        X = np.vstack([X, X[:6]])
        f = np.vstack([f, f[:6]])
    y = f + 0.1 * r.normal(size=f.shape)
    v = 0.01 * (1 + r.uniform(size=X.shape[0])) if known else None
    return X, (y[:, 0] if targets == 1 else y), v


def hyper_priors(name: str, n: int = 5, D: int = 2):
    """(kernel priors, noise prior): the tiny-data ones as the fit makes them, from a start on ``n`` rows."""
    if name == "none":
        return None, None
    if name == "lognormal":
        return {"lengthscale": LogNormal(np.log([0.9, 1.5]), 0.3), "variance": LogNormal(0.2, 0.5)}, LogNormal(
            -3.0, 0.5
        )
    if name == "gamma":
        return {"lengthscale": Gamma(4.0, 3.0), "variance": Gamma(2.0, 2.0)}, Gamma(2.0, 30.0)
    config = sparse_config(SparseGPRegressor())
    kernel = initial_kernel(config, np.ones(D), n)
    mask = {"kernel": kernel.trainable_mask(), "raw_noise": jnp.asarray(True)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        noise_prior = tiny_data_prior(config, mask, n)
    assert kernel._priors and noise_prior is not None  # a start on n rows carries them
    return dict(kernel._priors), noise_prior


def parameters(kernel_priors, with_Z: bool):
    kernel = SquaredExponential(lengthscale=[0.8, 1.3], variance=1.2, priors=kernel_priors)
    params = {"kernel": kernel, "raw_noise": jnp.asarray(to_raw(0.05))}
    if with_Z:
        params["Z"] = jnp.asarray(np.random.default_rng(5).normal(size=(5, 2)))
    return params


def in_memory(X, y, v):
    return InMemory.from_training(X, y, duplicates="collapse", normalize_y=True, noise_variance=v)


def flat(f, g):
    return float(f), np.asarray(ravel_pytree(g)[0])


def on_jax(method, data, params, noise_prior):
    """The JAX program over the rows in memory, as :func:`sparsegp.fitting.pipeline.problem` builds it, compiled as
    the optimiser compiles it (once per objective and shapes)."""
    args = data.rows(1.0).jax_args()
    if method == "exact":
        negative, args = ExactNegative(noise_prior), args
    else:
        negative, args = SparseNegative(APPROXIMATIONS[method].objective, CHUNK, JITTER, noise_prior), (None, *args)
    f, g = flat_value_and_grad(negative, params)(ravel_pytree(params)[0], *args)
    return float(f), np.asarray(g)


def on_host(method, data, params, noise_prior):
    """The host evaluation over a backend's sums (BLAS-3 in memory, or Dask partitions)."""
    hosted = HostObjective(method, data=data.host_sums(1.0, CHUNK), jitter=JITTER, noise_prior=noise_prior)
    return flat(*hosted(params))


def refusal(known: bool, targets: int):
    """Why the data's validation refuses a combination (asserted where it comes up), or None."""
    if known and targets > 1:
        return "noise_variance with several targets is not available"
    return None


def assert_same(a, b):
    (fa, ga), (fb, gb) = a, b
    assert abs(fa - fb) <= 1e-8 * abs(fb)
    assert np.max(np.abs(ga - gb)) <= 1e-8 * np.max(np.abs(gb))


# The fast tier's cases: every pair of levels of any two factors that the data's validation takes, and the
# refusal; the slow tier runs the whole product (CASES).
COVER = [
    ("none", True, 1, False), ("none", False, 3, True), ("none", False, 1, False),
    ("lognormal", True, 1, True), ("lognormal", False, 3, False),
    ("gamma", True, 1, False), ("gamma", False, 3, True),
    ("tiny-data", True, 1, True), ("tiny-data", False, 3, False),
    ("gamma", True, 3, False),
]  # fmt: skip


def compare_paths(method, cases, dask=False):
    """The JAX program against the host sums (in memory, or on Dask partitions) over ``cases``; returns how many
    cells were compared. The exact GP has no O(n m^2) sums: its host column is a refusal (and on dask arrays
    ExactGPRegressor fits in memory, compared by test_exact_gp_on_dask_arrays_fits_in_memory)."""
    compared = 0
    for prior, known, targets, repeated in cases:
        X, y, v = rows(known, targets, repeated)
        why = refusal(known, targets)
        if why is not None:
            with pytest.raises(InputError, match=why):
                dask_data(X, y, v) if dask else in_memory(X, y, v)
            continue
        data = in_memory(X, y, v)
        kernel_priors, noise_prior = hyper_priors(prior)
        params = parameters(kernel_priors, with_Z=method != "exact")
        jax_path = on_jax(method, data, params, noise_prior)
        if not (known or repeated or targets > 1 or dask):  # the prior enters with its sign
            plain = on_jax(method, data, parameters(None, method != "exact"), None)[0]
            log_prior = float(log_hyper_prior(params, noise_prior))
            assert jax_path[0] == pytest.approx(plain - log_prior, rel=1e-12, abs=1e-9)
        if method == "exact":
            with pytest.raises(ValueError, match="unknown approximation 'exact'"):
                HostObjective(method, data=data.host_sums(1.0, CHUNK), jitter=JITTER)
            continue
        other = dask_data(X, y, v) if dask else data
        try:
            assert_same(on_host(method, other, params, noise_prior), jax_path)
        finally:
            other.close()
        compared += 1
    return compared


def dask_data(X, y, v):
    import dask.array as da

    from sparsegp.backends.dask_partitions import DaskPartitions

    kn = None if v is None else da.from_array(v, chunks=11)
    return DaskPartitions(
        da.from_array(X, chunks=(11, 2)), da.from_array(y, chunks=(11,) + y.shape[1:]), duplicates="collapse",
        normalize_y=True, noise_variance=kn,
    )  # fmt: skip


# the fast tier: the weighted sums of the host (FITC's, where the sign was wrong) and the exact GP's refusal;
# the unit-weight sums (VFE), and DTC and SoR (VFE's sums under another algebra), in the slow tier
FAST = [
    pytest.param("vfe", marks=pytest.mark.slow),
    "fitc",
    "exact",
    pytest.param("dtc", marks=pytest.mark.slow),
    pytest.param("sor", marks=pytest.mark.slow),
]


@pytest.mark.parametrize("method", FAST)
def test_host_and_jax_minimise_the_same_negative_log_posterior(method):
    compared = compare_paths(method, COVER)
    assert compared == (0 if method == "exact" else len(COVER) - 1)


@pytest.mark.slow
@pytest.mark.parametrize("method", METHODS)
def test_host_and_jax_agree_over_the_whole_product(method):
    compared = compare_paths(method, CASES)
    assert compared == (0 if method == "exact" else len(CASES) - len(PRIORS) * 2)


@pytest.mark.slow
@pytest.mark.xdist_group("dask")
@pytest.mark.parametrize("method", ["vfe", "fitc", "dtc", "sor"])
def test_dask_partitions_agree_with_the_jax_program_over_the_whole_product(client, method):
    compared = compare_paths(method, CASES, dask=True)
    assert compared == len(CASES) - len(PRIORS) * 2


@pytest.mark.slow
@pytest.mark.xdist_group("dask")
def test_exact_gp_on_dask_arrays_fits_in_memory(client):
    """ExactGPRegressor computes dask inputs into memory (an exact GP needs every row in one place): the same fit
    and log_marginal_likelihood as on NumPy arrays, with a prior and known noise variances."""
    import dask.array as da

    X, y, v = rows(True, 1, True)
    kernel_priors, noise_prior = hyper_priors("lognormal")
    kernel = SquaredExponential([0.8, 1.3], 1.2, priors=kernel_priors)
    model = ExactGPRegressor(kernel, noise_prior=noise_prior, max_iter=30)
    a = _quiet(lambda: clone(model).fit(X, y, noise_variance=v))
    b = _quiet(
        lambda: clone(model).fit(da.from_array(X, chunks=(11, 2)), da.from_array(y, chunks=11), noise_variance=v)
    )
    assert b.log_marginal_likelihood() == pytest.approx(a.log_marginal_likelihood(), rel=1e-10)
    np.testing.assert_allclose(b.kernel_.lengthscale, a.kernel_.lengthscale, rtol=1e-8)


def test_prior_sign_is_what_a_map_fit_needs():
    """negative_log_posterior at a prior's mode is lower than away from it, with the objective held fixed."""
    from sparsegp.priors import negative_log_posterior

    near = {"kernel": SquaredExponential(2.0, priors={"lengthscale": LogNormal(np.log(2.0), 0.1)})}
    far = {"kernel": SquaredExponential(0.5, priors={"lengthscale": LogNormal(np.log(2.0), 0.1)})}
    assert float(negative_log_posterior(0.0, near)) < float(negative_log_posterior(0.0, far)) - 10


def strong_prior_problem(n=200):
    """The 1-D problem that found the host path's sign (FITC and known-noise fits ended at a length-scale of
    1.8e-12 where the exact MAP is 2.02): a tight prior on the length-scale."""
    r = np.random.default_rng(0)
    X = r.uniform(-3, 3, (n, 1))
    y = np.sin(2 * X[:, 0]) + 0.1 * r.normal(size=n)
    kernel = SquaredExponential(1.0, priors={"lengthscale": LogNormal(np.log(3.0), 0.1)})
    return X, y, kernel


def _quiet(fit):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fit()


def map_fit(approximation: str, known: bool, dask: bool = False):
    """(the sparse fit's length-scale, the exact GP's MAP one, the exact GP's without the prior)."""
    X, y, kernel = strong_prior_problem()
    v = np.full(X.shape[0], 1e-3) if known else None
    exact = _quiet(lambda: ExactGPRegressor(kernel).fit(X, y, noise_variance=v)).kernel_.lengthscale
    free = _quiet(lambda: ExactGPRegressor(SquaredExponential(1.0)).fit(X, y, noise_variance=v)).kernel_.lengthscale
    sparse = SparseGPRegressor(kernel, approximation=approximation, inducing=16, random_state=0)
    if dask:
        import dask.array as da

        X, y = da.from_array(X, chunks=(70, 1)), da.from_array(y, chunks=70)
        v = None if v is None else da.from_array(v, chunks=70)
    return _quiet(lambda: sparse.fit(X, y, noise_variance=v)).kernel_.lengthscale, exact, free


@pytest.mark.parametrize(
    "path, approximation, known",
    [
        ("jax program", "vfe", False),
        ("host sums", "fitc", False),
        pytest.param("host sums", "vfe", True, marks=pytest.mark.slow),  # known noise: the weighted sums, as FITC
    ],
)
def test_a_fit_under_a_strong_prior_ends_near_the_exact_map(path, approximation, known):
    """On a CPU, FITC and any approximation given noise_variance fit on the host sums; VFE without it in the JAX
    program. Each ends within 10 % of the exact GP's MAP length-scale under the same prior, far from the
    maximum-likelihood one (so the prior is what holds it)."""
    fitted, exact, free = map_fit(approximation, known)
    assert abs(free - exact) > 0.3 * exact  # the prior moves the exact MAP
    assert abs(fitted - exact) <= 0.1 * exact


@pytest.mark.slow
@pytest.mark.xdist_group("dask")
@pytest.mark.parametrize("approximation, known", [("vfe", False), ("fitc", True)])
def test_a_dask_fit_under_a_strong_prior_ends_near_the_exact_map(client, approximation, known):
    fitted, exact, _ = map_fit(approximation, known, dask=True)
    assert abs(fitted - exact) <= 0.1 * exact
