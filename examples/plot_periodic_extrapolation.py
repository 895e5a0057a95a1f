"""
A periodic fit that extrapolates
================================

The squared exponential kernel says nothing beyond a length-scale from the data: its mean returns to the
training mean and its error bars widen to the prior's. The ``Periodic`` kernel (scikit-learn's
``ExpSineSquared``) carries the pattern on. A period's likelihood has a mode at each multiple of the period
and one at "no period", so the fit starts from ``Periodic.from_data``, the peak of the targets' periodogram
(BENCHMARKS.md, "Kernels beyond the SE": 10 of 10 draws found the period from it, 2 of 10 from period 1).
"""

import warnings

import matplotlib.pyplot as plt
import numpy as np

from sparsegp import ExactGPRegressor
from sparsegp.kernels import Periodic
from sparsegp.metrics import smse

period = 1.3
rng = np.random.default_rng(0)
x = np.sort(rng.uniform(0, 4 * period, size=80))[:, None]


def f(x):
    return np.sin(2 * np.pi * x[:, 0] / period) + 0.4 * np.sin(4 * np.pi * x[:, 0] / period)


y = f(x) + 0.1 * rng.normal(size=80)
grid = np.linspace(0, 6 * period, 400)[:, None]
ahead = grid[:, 0] > 4 * period

fig, axes = plt.subplots(1, 2, figsize=(11, 3.6), sharey=True)
for ax, (name, model) in zip(
    axes,
    [("SE-ARD (the default)", ExactGPRegressor()), ("Periodic.from_data", ExactGPRegressor(Periodic.from_data(x, y)))],
):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(x, y)
    mean, std = model.predict(grid, return_std=True)
    ax.fill_between(grid[:, 0], mean - 2 * std, mean + 2 * std, alpha=0.25)
    ax.plot(grid[:, 0], mean, label="mean, 2 sd")
    ax.plot(grid[:, 0], f(grid), "k:", label="f")
    ax.plot(x[:, 0], y, "k.", ms=3, label="data")
    ax.axvline(4 * period, color="grey", lw=0.8)
    ax.set_title(f"{name}: SMSE ahead {smse(f(grid[ahead]), mean[ahead]):.4f}")
    ax.legend(loc="lower left", fontsize=8)
    print(f"{name}: {model.kernel_}")
fig.tight_layout()
plt.show()
