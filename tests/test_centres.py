"""Inducing inputs as cluster centres (selection/centres.py) against a direct k-means computation."""

import numpy as np

from sparsegp.kernels import SquaredExponential
from sparsegp.selection.centres import extend_centres


def blobs(seed=0):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0], [6.0, 0.0], [0.0, 6.0], [6.0, 6.0]])
    return centres, np.vstack([c + 0.3 * rng.standard_normal((50, 2)) for c in centres])


def test_new_centres_find_the_clusters_the_held_ones_miss():
    centres, X = blobs()
    kernel = SquaredExponential(lengthscale=[2.0, 2.0])
    new = extend_centres(kernel, centres[:1], X, 3, np.random.default_rng(0))
    assert new.shape == (3, 2)
    # one new centre per uncovered cluster, at its mean (no new centre joins the held one's cluster)
    means = X.reshape(4, 50, 2).mean(axis=1)
    nearest = np.argmin(((new[:, None, :] - means[None, :, :]) ** 2).sum(-1), axis=1)
    assert sorted(nearest) == [1, 2, 3]
    np.testing.assert_allclose(new, means[nearest], atol=1e-12)


def test_centres_are_the_means_of_the_rows_they_own_in_length_scale_units():
    """A fixed point of Lloyd's iteration with the held centres: each new centre is the mean of the rows nearest to
    it in the kernel's geometry (for SE-ARD, Euclidean distance after dividing by the length-scales)."""
    rng = np.random.default_rng(1)
    X = rng.uniform(-3, 3, size=(300, 2))
    ell = np.array([0.5, 3.0])
    Z = X[:4] + 0.01
    new = extend_centres(SquaredExponential(lengthscale=ell), Z, X, 6, np.random.default_rng(0))
    allc = np.vstack([Z, new]) / ell
    owner = np.argmin((((X / ell)[:, None, :] - allc[None, :, :]) ** 2).sum(-1), axis=1)
    for j in range(6):
        rows = owner == 4 + j
        assert rows.any()
        np.testing.assert_allclose(new[j], X[rows].mean(axis=0), atol=1e-10)


def test_no_more_centres_than_distinct_candidates():
    X = np.repeat(np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 0.0]]), 5, axis=0)
    new = extend_centres(SquaredExponential(lengthscale=[1.0, 1.0]), X[:1], X, 10, np.random.default_rng(0))
    assert new.shape == (2, 2)
    np.testing.assert_allclose(np.sort(new[:, 0]), [1.0, 2.0], atol=1e-12)


def conditional_variances(kernel, Z, C):
    """Each centre's variance given Z and every other centre (dense: the diagonal of the inverse's inverse)."""
    A = np.vstack([Z, C])
    K = np.asarray(kernel.K(A))
    return 1.0 / np.diag(np.linalg.inv(K))[Z.shape[0] :]


def test_centres_the_others_determine_are_dropped():
    """128 centres of 400 rows in two inputs under a broad kernel make K_uu singular to float64: the kept centres
    are a subset of those Lloyd's iteration gives, each above RANK_FLOOR given the others, and K_uu factorises."""
    from sparsegp.selection import centres as module

    X = np.random.default_rng(2).standard_normal((400, 2))
    Z = X[:3]
    kernel = SquaredExponential(lengthscale=[1.4, 1.4])
    unfiltered = []
    real = module._independent
    module._independent = lambda k, Zh, C: (unfiltered.append(C), real(k, Zh, C))[1]
    try:
        new = extend_centres(kernel, Z, X, 125, np.random.default_rng(0))
    finally:
        module._independent = real
    assert 0 < new.shape[0] < 125
    assert all(any(np.array_equal(c, u) for u in unfiltered[0]) for c in new)  # a subset, in order
    assert np.min(conditional_variances(kernel, Z, new)) > module.RANK_FLOOR * 0.1
    np.linalg.cholesky(np.asarray(kernel.K(np.vstack([Z, new]))) + 1e-8 * np.eye(3 + new.shape[0]))
    # a narrow kernel leaves every centre
    narrow = extend_centres(SquaredExponential(lengthscale=[0.05, 0.05]), Z, X, 40, np.random.default_rng(0))
    assert narrow.shape[0] == 40
