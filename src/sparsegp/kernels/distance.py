"""Numerically stable squared Euclidean distances.

``|a - b|^2 = |a|^2 + |b|^2 - 2 a.b`` turns the O(n m D) distance computation
into one matrix product, but cancels catastrophically when the inputs sit far
from the origin (inputs offset by 1e6 lose every digit). Stationary kernels
are shift-invariant, so both sets are first shifted by a common centre (the
mean of Z): the expansion then works at the scale of the data's spread, not of
its offset. Results are clamped at 0 to remove the remaining rounding noise.
"""

import jax.numpy as jnp


def sqdist(X, Z=None):
    """Squared distances between the rows of X (n, D) and Z (m, D), shape (n, m), >= 0.

    With ``Z`` None (the square Gram case) the diagonal is exactly 0: the
    expansion leaves rounding noise of order eps |x|^2 there, which a square
    root (Matérn kernels) would amplify to sqrt(eps).
    """
    square = Z is None
    Z = X if square else Z
    centre = jnp.mean(Z, axis=0)
    A = X - centre
    B = Z - centre
    d = jnp.sum(A * A, axis=1)[:, None] + jnp.sum(B * B, axis=1)[None, :] - 2.0 * (A @ B.T)
    d = jnp.maximum(d, 0.0)
    if square:
        d = d * (1.0 - jnp.eye(X.shape[0], dtype=d.dtype))
    return d


def safe_sqrt(d):
    """sqrt with a finite gradient at 0 (the diagonal of a distance matrix)."""
    positive = d > 0.0
    return jnp.where(positive, jnp.sqrt(jnp.where(positive, d, 1.0)), 0.0)
