"""
Smola & Bartlett's sparse error bars
====================================

Smola & Bartlett (2001, eq. 10 and Theorem 1) bound the exact GP's predictive variance at a test point from
both sides without solving with the n x n matrix: a greedy primal on the training active set gives a lower
bound, a greedy dual grown for the test point's own kernel column gives an upper bound, and both are refined
until their relative gap is small. Here they are drawn against the exact GP's predictive standard deviation on
1,000 points of 1-D data. The relative gap of Theorem 1 is measured on the quadratic forms, whose scale
includes k^T k / 2: a gap of 0.02 (the paper's threshold for the weights) can leave the upper bound at the
prior variance, so the bars here are refined to a gap of 1e-5, which takes a few basis functions per point.
"""

import os

import matplotlib.pyplot as plt
import numpy as np

from sparsegp import ExactGPRegressor
from sparsegp.kernels import SquaredExponential
from sparsegp.selection import SmolaBartlett, sparse_error_bars

quick = os.environ.get("SPARSEGP_DOCS_QUICK") == "1"
rng = np.random.default_rng(0)
n = 300 if quick else 1000
X = np.sort(np.concatenate([rng.uniform(-5, -0.5, n // 2), rng.uniform(1.5, 5, n - n // 2)]))[:, None]
y = np.sin(1.5 * X[:, 0]) + 0.2 * rng.normal(size=n)
X_test = np.linspace(-6, 6, 40 if quick else 120)[:, None]
kernel, noise = SquaredExponential(lengthscale=0.7, variance=1.0), 0.04

selection = SmolaBartlett(200, random_state=0).select(kernel, noise, X, y)
loose = sparse_error_bars(kernel, X, selection.state, X_test, eps=0.02, random_state=0)
bars = sparse_error_bars(kernel, X, selection.state, X_test, eps=1e-5, max_basis=60, random_state=0)
exact = ExactGPRegressor(kernel=kernel, noise=noise, optimize=False, normalize_y=False).fit(X, y)
_, std = exact.predict(X_test, return_std=True)
print(f"training active set: {len(selection.indices)} points ({selection.reason})")
print(f"basis functions per test point: median {np.median(bars.basis):.0f}, largest {bars.basis.max()}")
inside = np.mean((bars.lower <= std**2 + 1e-9) & (std**2 <= bars.upper + 1e-9))
print(f"exact variance between the bounds at {inside:.0%} of the test points")

fig, ax = plt.subplots(figsize=(7, 3.8))
ax.plot(X_test[:, 0], np.sqrt(loose.upper), color="C0", lw=0.8, ls=":", label="upper bound at gap 0.02")
ax.fill_between(
    X_test[:, 0],
    np.sqrt(np.maximum(bars.lower, 0)),
    np.sqrt(bars.upper),
    color="C1",
    alpha=0.4,
    label="Smola-Bartlett bounds at gap 1e-5",
)
ax.plot(X_test[:, 0], std, "k", lw=1, label="exact predictive sd")
ax.plot(X[:, 0], np.full(n, 0.15), "|", color="0.6", ms=4, label="training inputs")
ax.set_xlabel("x")
ax.set_ylabel("predictive sd of y")
ax.legend(fontsize=8)
fig.tight_layout()
plt.show()
