"""The real datasets the papers use, shipped inside the package (layer 9).

``load(name, split=None, preprocessing=None)`` returns a :class:`Dataset`
that unpacks as ``X_train, y_train, X_test, y_test``. ``available()`` lists
every dataset with its shape, splits, source and licence. The kin40k,
pumadyn32nm and pol *fixed* splits carry a research / non-commercial licence
(``LICENSE-fgp.txt`` beside the files, and in ``available()``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError
from . import loaders
from .preprocessing import PREPROCESSING, TargetTransform, fit_input_scaling, fit_target_transform, mnist_13x13
from .registry import DATASETS


@dataclass
class Dataset:
    """A train/test split after preprocessing, as :func:`load` returns it; iterate to unpack
    ``X_train, y_train, X_test, y_test``.

    Parameters
    ----------
    name : str
        The dataset's name.
    split : int or str
        Which split.
    preprocessing : str
        The preprocessing applied (see :func:`load`).
    X_train, y_train, X_test, y_test : ndarray
        The arrays, preprocessed (``y_test`` is None where the test inputs have no targets: Snelson's grid).
    feature_names : list of str
        Column names of the inputs.
    x_mean, x_scale : ndarray or None
        The inputs' training mean and spread used to standardise them (None without).
    target_transform : TargetTransform
        How the targets were scaled (:meth:`inverse_transform_y` maps back).
    licence : str
        The data's licence.

    Examples
    --------
    >>> from sparsegp import datasets
    >>> data = datasets.load("concrete", split=0)
    >>> X, y, X_test, y_test = data
    >>> X.shape, X_test.shape, data.feature_names[0]
    ((927, 8), (103, 8), 'x1')
    """

    name: str
    split: object
    preprocessing: str
    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray | None
    feature_names: list = field(default_factory=list)
    x_mean: np.ndarray | None = None
    x_scale: np.ndarray | None = None
    target_transform: TargetTransform = field(default_factory=TargetTransform)
    licence: str = ""

    def __iter__(self):
        return iter((self.X_train, self.y_train, self.X_test, self.y_test))

    def inverse_transform_y(self, y_scaled, X_scaled):
        """Map targets or predictive means on the preprocessed scale back to the original units.

        Parameters
        ----------
        y_scaled : array of shape (n,)
            Values on the preprocessed scale.
        X_scaled : array of shape (n, D)
            Their preprocessed inputs (the "linear" preprocessing subtracts a linear function of them).

        Returns
        -------
        ndarray of shape (n,)
        """
        return self.target_transform.inverse(np.asarray(y_scaled), np.asarray(X_scaled))


def available() -> list[dict]:
    """Every shipped dataset: name, task, rows, features, splits, source, licence and the papers that use it.

    Returns
    -------
    list of dict
        One record per dataset (``sparsegp datasets`` prints them; ``--json`` in full).

    Examples
    --------
    >>> from sparsegp import datasets
    >>> [d["name"] for d in datasets.available() if d["task"] == "classification"]
    ['mnist', 'banana']
    """
    return [d.as_dict() for d in DATASETS.values()]


def load(
    name: str,
    split=None,
    preprocessing: str | None = None,
    n_train: int | None = None,
    train_size: int | None = None,
) -> Dataset:
    """Load a shipped dataset, split and preprocessed (the package's own copy: nothing is downloaded).

    Parameters
    ----------
    name : str
        One of :func:`available`.
    split : int, str or None
        ``None`` = the dataset's canonical split (kin40k and pumadyn32nm: the
        fixed split of Seeger et al.; uci folders: random split 0; snelson:
        ``"all"``; mnist: ``"official"``; banana: ``"ratsch_1"``).
    preprocessing : {"none", "standardize", "center", "linear"} or None
        Inputs are standardised on the training set unless ``"none"``; targets
        as in :mod:`sparsegp.datasets.preprocessing` (regression only). None =
        ``"standardize"`` for regression, ``"none"`` for classification.
    n_train : int or None
        Keep only the first ``n_train`` training rows (protocol K10: 10,000).
    train_size : int or None
        For a dataset split at random by seed (abalone): the rows drawn into
        the training part, the rest being the test part (None: 3,133 as
        Titsias; Smola & Bartlett used 4,000 and 3,000). An error elsewhere.

    Returns
    -------
    Dataset
        Unpacks as ``X_train, y_train, X_test, y_test``.

    Raises
    ------
    InputError
        If the name, split or preprocessing is unknown, or ``n_train`` / ``train_size`` does not fit.

    Examples
    --------
    >>> from sparsegp import datasets
    >>> X, y, X_test, y_test = datasets.load("kin40k", split="fixed", n_train=2000)
    >>> X.shape, X_test.shape
    ((2000, 8), (30000, 8))
    >>> bool(abs(y.mean()) < 1e-12), round(float(y.std()), 6)  # standardised on the training rows
    (True, 1.0)
    """
    if name not in DATASETS:
        raise InputError(f"unknown dataset {name!r}; available: {sorted(DATASETS)}")
    info = DATASETS[name]
    split = info.default_split if split is None else split
    if preprocessing is None:
        preprocessing = "standardize" if info.task == "regression" else "none"
    if preprocessing not in PREPROCESSING:
        raise InputError(f"preprocessing must be one of {PREPROCESSING}, got {preprocessing!r}")
    if n_train is not None and (isinstance(n_train, bool) or not isinstance(n_train, (int, np.integer)) or n_train < 1):
        raise InputError(f"n_train must be a positive integer, got {n_train!r}")
    if train_size is not None and info.layout != "abalone":
        raise InputError(
            f"train_size is for datasets split at random (abalone); {name!r} has fixed splits: use n_train"
        )

    if info.layout == "uci":
        Xtr, ytr, Xte, yte, names = loaders.uci_split(name, split)
    elif info.layout == "snelson":
        Xtr, ytr, Xte, yte, names = loaders.snelson(split)
    elif info.layout == "abalone":
        Xtr, ytr, Xte, yte, names = loaders.abalone(split, train_size)
    elif info.layout == "mnist":
        Xtr, ytr, Xte, yte, names = loaders.mnist(split)
    else:
        Xtr, ytr, Xte, yte, names = loaders.banana(split)
    if n_train is not None:
        if n_train > len(Xtr):
            raise InputError(f"n_train={n_train} exceeds the {len(Xtr)} training rows of {name!r} split {split!r}")
        Xtr, ytr = Xtr[:n_train], ytr[:n_train]

    x_mean = x_scale = None
    if preprocessing != "none":
        x_mean, x_scale = fit_input_scaling(Xtr)
        Xtr, Xte = (Xtr - x_mean) / x_scale, (Xte - x_mean) / x_scale
    transform = TargetTransform()
    if info.task == "regression":
        transform = fit_target_transform(ytr, Xtr, preprocessing)
        ytr = transform.forward(ytr, Xtr)
        if yte is not None:
            yte = transform.forward(yte, Xte)
    licence = info.fixed_licence if split == "fixed" else info.licence
    return Dataset(name, split, preprocessing, Xtr, ytr, Xte, yte, list(names), x_mean, x_scale, transform, licence)


__all__ = ["Dataset", "available", "load", "mnist_13x13", "PREPROCESSING", "TargetTransform"]
