"""
Augmented and Nyström predictive variances
==========================================

Quiñonero-Candela & Rasmussen (2005) compare three predictive variances for a reduced-rank GP. SoR's own
(eq. 27) is the prior variance explained by the m inducing inputs only: far from them it falls to the noise
alone, overconfident. Their augmentation (eqs. 28-29) adds one extra weight per test point and restores the
prior variance away from the data. The Nyström predictive (eq. 39) plugs the Nyström matrix into the exact
GP's formulas and can give negative variances: ``predict_var`` returns them as computed (``predict`` with
``return_std`` refuses, since no standard deviation exists there).
"""

import warnings

import matplotlib.pyplot as plt
import numpy as np

from sparsegp import CalibrationWarning, SparseGPRegressor
from sparsegp.kernels import SquaredExponential

rng = np.random.default_rng(1)
X = np.concatenate([rng.uniform(-4, -1, 60), rng.uniform(1, 4, 60)])[:, None]
y = np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=len(X))
X_grid = np.linspace(-7, 7, 400)[:, None]
kernel = SquaredExponential(lengthscale=0.8, variance=1.0)
Z = np.linspace(-3.5, 3.5, 8)[:, None]
common = dict(approximation="sor", kernel=kernel, noise=0.01, inducing=Z, optimize=False, normalize_y=False)

fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
with warnings.catch_warnings():
    warnings.simplefilter("ignore", CalibrationWarning)  # SoR's own variance is meant to look too narrow here
    for prediction, colour in [("standard", "C0"), ("augmented", "C1"), ("nystrom", "C3")]:
        model = SparseGPRegressor(prediction=prediction, **common).fit(X, y)
        mean, var = model.predict_var(X_grid, include_noise=False)
        label = {"standard": "SoR (eq. 27)", "augmented": "augmented (eqs. 28-29)", "nystrom": "Nystrom (eq. 39)"}
        axes[0].plot(X_grid[:, 0], mean, color=colour, label=label[prediction])
        axes[1].plot(X_grid[:, 0], var, color=colour, label=label[prediction])
        print(
            f"{prediction:9s}: latent variance from {var.min():+.3f} to {var.max():.3f}; negative at {np.sum(var < 0)}"
        )
axes[0].plot(X[:, 0], y, "k.", ms=3)
axes[0].plot(Z[:, 0], np.full(len(Z), -1.6), "k+", label="inducing inputs")
axes[0].set_title("predictive means")
axes[0].legend(fontsize=8)
axes[1].axhline(0, color="k", lw=0.6)
axes[1].set_yscale("symlog", linthresh=0.01)  # the negative Nystrom variances span orders of magnitude
axes[1].axhline(1, color="0.5", lw=0.6, ls=":", label="prior variance")
axes[1].set_title("latent predictive variances")
axes[1].legend(fontsize=8)
for ax in axes:
    ax.set_xlabel("x")
fig.tight_layout()
plt.show()
