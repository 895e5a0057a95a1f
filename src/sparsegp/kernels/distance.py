"""Numerically stable squared Euclidean distances.

``|a - b|^2 = |a|^2 + |b|^2 - 2 a.b`` turns the O(n m D) distance computation
into one matrix product, but cancels catastrophically when the inputs sit far
from the origin (inputs offset by 1e6 lose every digit). Stationary kernels
are shift-invariant, so both sets are first shifted by a common centre (the
mean of Z): the expansion then works at the scale of the data's spread, not of
its offset. Results are clamped at 0 to remove the remaining rounding noise.

The expansion still rounds at about eps (|a|^2 + |b|^2), which matters where an input's spread is many
length-scales: a fit that drives one length-scale far below its column's spread (an input that
identifies a group, such as a patient) makes |a|^2 ~ 1e13, and two rows of the same group, at distance 0
in that column, come out at 1e-3 instead. K_uu then has eigenvalues of -1e-3 that no jitter repairs
(BENCHMARKS.md, "The exact GP on a subset first"). Where |a|^2 + |b|^2 exceeds WIDE, the distances are
summed over the coordinates' differences instead (O(n m D) element-wise, exact at 0).
"""

import jax
import jax.numpy as jnp
import numpy as np

WIDE = 1e6  # squared norms beyond which the expansion's rounding (eps |a|^2) passes 2e-10 in r^2


def wide(sa, sb):
    """Whether the expansion loses digits for centred sets with squared norms ``sa`` and ``sb`` (a traced flag)."""
    return jnp.max(sa, initial=0.0) + jnp.max(sb, initial=0.0) > WIDE


def _expanded(A, B, sa, sb):
    return sa[:, None] + sb[None, :] - 2.0 * (A @ B.T)


def _direct(A, B, sa, sb):
    diff = A[:, None, :] - B[None, :, :]
    return jnp.sum(diff * diff, axis=-1)


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
    sa, sb = jnp.sum(A * A, axis=1), jnp.sum(B * B, axis=1)
    d = jax.lax.cond(wide(sa, sb), _direct, _expanded, A, B, sa, sb)
    d = jnp.maximum(d, 0.0)
    if square:
        d = d * (1.0 - jnp.eye(X.shape[0], dtype=d.dtype))
    return d


def safe_sqrt(d):
    """sqrt with a finite gradient at 0 (the diagonal of a distance matrix)."""
    positive = d > 0.0
    return jnp.where(positive, jnp.sqrt(jnp.where(positive, d, 1.0)), 0.0)


def narrow(kernel, X) -> bool:
    """Whether X spans few of the kernel's length-scales: the centred inputs' squared norms in length-scales
    within :data:`WIDE` on the host: the NumPy form of :func:`wide` for one set centred on its own mean (beyond,
    :func:`sqdist` sums the coordinates' differences), for every length-scale of the kernel
    (:meth:`~.base.Kernel.distance_scales`, the parts of a sum or product included). True for a kernel without
    length-scales."""
    X = np.asarray(X, dtype=np.float64)
    if X.shape[0] == 0:
        return True
    centred = X - X.mean(axis=0)
    for ell in kernel.distance_scales():
        A = centred / ell
        if 2.0 * float(np.max(np.einsum("ij,ij->i", A, A))) > WIDE:
            return False
    return True
