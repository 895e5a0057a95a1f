"""
Greedy selection: info-gain, random and Smola-Bartlett
=======================================================

Seeger, Williams & Lawrence (2003, Fig. 1) compare active sets chosen by their O(1) information gain, at
random, and by Smola & Bartlett's (2001) criterion, at fixed hyper-parameters. Here the hyper-parameters come
from an exact GP on 500 rows of kin40k, the three selections grow active sets on 3,000 training rows, and
each prefix of d points gives the projected-process (DTC) predictive mean
mu(x*) = k_I(x*)^T (sigma^2 K_I + K_I,n K_n,I)^-1 K_I,n y (Seeger et al. eq. 6), whose test error is plotted
against d.
"""

import os

import matplotlib.pyplot as plt
import numpy as np

from sparsegp import ExactGPRegressor, datasets, metrics
from sparsegp.selection import InfoGain, Random, SmolaBartlett

quick = os.environ.get("SPARSEGP_DOCS_QUICK") == "1"
n = 1500 if quick else 3000
X, y, X_test, y_test = datasets.load("kin40k", split="fixed", n_train=n)
X_test, y_test = X_test[:2000], y_test[:2000]

start = ExactGPRegressor(random_state=0, normalize_y=False).fit(X[:500], y[:500])
kernel, noise = start.kernel_, start.noise_


def dtc_mean(rows):
    """The DTC predictive mean with active set ``rows`` (eq. 6), from the kernel matrices."""
    K_In = np.asarray(kernel.K(X[rows], X))
    A = noise * np.asarray(kernel.K(X[rows])) + K_In @ K_In.T
    weights = np.linalg.solve(A + 1e-10 * np.trace(A) / len(rows) * np.eye(len(rows)), K_In @ y)
    return np.asarray(kernel.K(X_test, X[rows])) @ weights


sizes = [25, 50, 100, 200] if quick else [25, 50, 100, 200, 300]
selectors = {
    "info-gain": InfoGain(max(sizes)),
    "random": Random(max(sizes), random_state=0),
    "smo-bart": SmolaBartlett(max(sizes), eps=None, random_state=0),
}
fig, ax = plt.subplots(figsize=(6, 4))
for name, selector in selectors.items():
    selection = selector.select(kernel, noise, X, y)
    errors = [metrics.smse(y_test, dtc_mean(selection.indices[:d])) for d in sizes]
    print(f"{name:9s}: " + ", ".join(f"d = {d}: SMSE {e:.4f}" for d, e in zip(sizes, errors)))
    ax.plot(sizes, errors, "o-", label=f"{name} ({selection.seconds:.1f} s to select {max(sizes)})")
full = metrics.smse(y_test, start.predict(X_test))
ax.axhline(full, color="k", ls="--", lw=0.8, label="exact GP on 500 rows")
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel("active-set size d")
ax.set_ylabel("test SMSE (DTC)")
ax.legend(fontsize=8)
fig.tight_layout()
plt.show()
