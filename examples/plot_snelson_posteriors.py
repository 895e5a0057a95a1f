"""
Snelson's 1-D data: VFE, FITC and DTC side by side
==================================================

Titsias (2009, sec. 4 and Fig. 1) fits the 200 points of Snelson & Ghahramani's 1-D data with 15 inducing
inputs, learnt jointly with the kernel and the noise. The three approximations share the same predictive
mean form but learn different things: VFE maximises a lower bound on the exact evidence, so its inducing
inputs spread to cover the data and its noise stays close to the exact GP's; FITC (SPGP) and DTC maximise
approximate evidences, and FITC in particular can trade noise for heteroscedastic-looking variance.
The exact GP on all 200 points is drawn in grey for reference.
"""

import os

import matplotlib.pyplot as plt
import numpy as np

from sparsegp import ExactGPRegressor, SparseGPRegressor, datasets
from sparsegp.options import Joint

quick = os.environ.get("SPARSEGP_DOCS_QUICK") == "1"
X, y, X_grid, _ = datasets.load("snelson", split="all")
order = np.argsort(X_grid[:, 0])
X_grid = X_grid[order]

exact = ExactGPRegressor(random_state=0).fit(X, y)
mean_exact, std_exact = exact.predict(X_grid, return_std=True)

fig, axes = plt.subplots(1, 3, figsize=(12, 3.6), sharey=True)
for ax, approximation in zip(axes, ["vfe", "fitc", "dtc"]):
    model = SparseGPRegressor(
        approximation=approximation, inducing=15, random_state=0, schedule=Joint(max_iter=100 if quick else 1000)
    ).fit(X, y)
    mean, std = model.predict(X_grid, return_std=True)
    ax.plot(X[:, 0], y, ".", ms=3, color="0.6")
    ax.plot(X_grid[:, 0], mean_exact, color="0.3", lw=1, label="exact GP")
    ax.plot(X_grid[:, 0], mean_exact + 2 * std_exact, color="0.3", lw=0.6, ls="--")
    ax.plot(X_grid[:, 0], mean_exact - 2 * std_exact, color="0.3", lw=0.6, ls="--")
    ax.plot(X_grid[:, 0], mean, color="C0", label=approximation.upper())
    ax.fill_between(X_grid[:, 0], mean - 2 * std, mean + 2 * std, color="C0", alpha=0.2)
    ax.plot(model.Z_[:, 0], np.full(len(model.Z_), y.min() - 0.5), "k+", ms=8, label="inducing inputs")
    ax.set_title(f"{approximation.upper()}: objective {model.objective_:.1f}, noise {model.noise_:.3f}")
    ax.set_xlabel("x")
    print(f"{approximation}: objective {model.objective_:.2f}, noise variance {model.noise_:.4f}")
axes[0].legend(loc="upper left", fontsize=8)
axes[0].set_ylabel("y")
print(f"exact GP: log p(y) {exact.log_marginal_likelihood_:.2f}, noise variance {exact.noise_:.4f}")
fig.tight_layout()
plt.show()
