"""The papers' preprocessing, fitted on the training set only.

* inputs: standardised to zero mean, unit variance (constant columns left at scale 1);
* targets: ``"standardize"`` (zero mean, unit variance), ``"center"`` (Titsias
  2009: zero mean), ``"linear"`` (Seeger et al. 2003, footnote 8: subtract a
  least-squares linear fit on the standardised inputs, then scale to unit
  variance), or ``"none"``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError

PREPROCESSING = ("none", "standardize", "center", "linear")


@dataclass(frozen=True)
class TargetTransform:
    """How targets were scaled: y_scaled = (y - offset(X)) / scale with offset(X) = mean + X_std @ coef.

    Parameters
    ----------
    mean : float
        The offset's constant.
    scale : float
        The divisor.
    coef : ndarray of shape (D,) or None
        A linear function of the standardised inputs subtracted too (Seeger et al.'s preprocessing of kin40k
        and pumadyn-32nm), or None.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsegp.datasets import TargetTransform
    >>> t = TargetTransform(mean=10.0, scale=2.0)
    >>> X = np.zeros((2, 1))
    >>> t.forward(np.array([12.0, 8.0]), X), t.inverse(np.array([1.0, -1.0]), X)
    (array([ 1., -1.]), array([12.,  8.]))
    """

    mean: float = 0.0
    scale: float = 1.0
    coef: np.ndarray | None = None

    def offset(self, X_std):
        """The offset subtracted from the targets at these inputs.

        Parameters
        ----------
        X_std : array of shape (n, D)
            Standardised inputs.

        Returns
        -------
        float or ndarray of shape (n,)
        """
        return self.mean + (X_std @ self.coef if self.coef is not None else 0.0)

    def forward(self, y, X_std):
        """Scale targets: (y - offset(X)) / scale.

        Parameters
        ----------
        y : array of shape (n,)
            Targets in their own units.
        X_std : array of shape (n, D)
            Their standardised inputs.

        Returns
        -------
        ndarray of shape (n,)
        """
        return (y - self.offset(X_std)) / self.scale

    def inverse(self, y_scaled, X_std):
        """Map scaled targets (e.g. predictive means) back to the original units.

        Parameters
        ----------
        y_scaled : array of shape (n,)
            Values on the scaled axis.
        X_std : array of shape (n, D)
            Their standardised inputs.

        Returns
        -------
        ndarray of shape (n,)
        """
        return y_scaled * self.scale + self.offset(X_std)


def fit_input_scaling(X):
    mean = X.mean(axis=0)
    std = X.std(axis=0)
    std = np.where(std > 0, std, 1.0)
    return mean, std


def fit_target_transform(y, X_std, kind: str) -> TargetTransform:
    if kind not in PREPROCESSING:
        raise InputError(f"preprocessing must be one of {PREPROCESSING}, got {kind!r}")
    if kind == "none":
        return TargetTransform()
    if kind == "center":
        return TargetTransform(mean=float(y.mean()))
    if kind == "standardize":
        s = float(y.std())
        return TargetTransform(mean=float(y.mean()), scale=s if s > 0 else 1.0)
    A = np.column_stack([np.ones(len(y)), X_std])
    w, *_ = np.linalg.lstsq(A, y, rcond=None)
    resid = y - A @ w
    s = float(resid.std())
    return TargetTransform(mean=float(w[0]), scale=s if s > 0 else 1.0, coef=w[1:])


def mnist_13x13(images) -> np.ndarray:
    """MNIST digits down-sampled to 13 x 13 as in the IVM paper (Lawrence, Seeger & Herbrich 2003, sec. 4).

    The paper does not say how; here the 28 x 28 image loses its outermost ring of pixels (blank in
    MNIST, whose digits sit in the central 20 x 20) and each 2 x 2 block of the remaining 26 x 26 is
    averaged, with grey levels scaled to [0, 1].

    Parameters
    ----------
    images : array of shape (n, 784)
        28 x 28 images, row-major, grey levels 0-255.

    Returns
    -------
    ndarray of shape (n, 169)
        float64 in [0, 1].

    Raises
    ------
    InputError
        If the images are not (n, 784).

    Examples
    --------
    >>> import numpy as np
    >>> from sparsegp.datasets import mnist_13x13
    >>> image = np.zeros((1, 784)); image[0, 28 + 1] = 255  # row 1, column 1: the first 2 x 2 block
    >>> small = mnist_13x13(image)
    >>> small.shape, small[0, 0]
    ((1, 169), 0.25)
    """
    images = np.asarray(images)
    if images.ndim != 2 or images.shape[1] != 784:
        raise InputError(f"expected MNIST images of shape (n, 784), got {images.shape}")
    x = images.reshape(-1, 28, 28)[:, 1:27, 1:27].astype(np.float64) / 255.0
    return x.reshape(-1, 13, 2, 13, 2).mean(axis=(2, 4)).reshape(-1, 169)
