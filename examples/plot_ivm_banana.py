"""
The IVM on the banana data
==========================

The Informative Vector Machine (Lawrence, Seeger & Herbrich 2003) fits a GP classifier with a probit
likelihood by assumed density filtering on a small active set chosen greedily by the entropy reduction of
eq. 4. On Rätsch's first banana realisation (400 training points) an active set of 60 points gives the
decision boundary and the probability contours drawn here; the active points are ringed.
"""

import matplotlib.pyplot as plt
import numpy as np

from sparsegp import IVMClassifier, datasets
from sparsegp.kernels import SquaredExponential

X, y, X_test, y_test = datasets.load("banana", split="ratsch_1")
clf = IVMClassifier(SquaredExponential(lengthscale=1.0), size=60, random_state=0).fit(X, y)
print(f"test error {1 - clf.score(X_test, y_test):.3f} with {len(clf.active_)} active points ({clf.fit_time_:.2f} s)")

g0, g1 = np.meshgrid(np.linspace(-3.5, 3.5, 200), np.linspace(-3, 3.5, 200))
grid = np.column_stack([g0.ravel(), g1.ravel()])
p = clf.predict_proba(grid)[:, 1].reshape(g0.shape)

fig, ax = plt.subplots(figsize=(6, 5))
contours = ax.contourf(g0, g1, p, levels=np.linspace(0, 1, 11), cmap="RdBu_r", alpha=0.6)
ax.contour(g0, g1, p, levels=[0.5], colors="k", linewidths=1.5)
for label, marker in ((-1, "o"), (1, "s")):
    ax.scatter(*X[y == label].T, s=10, marker=marker, c="C0" if label < 0 else "C3", label=f"y = {label}")
ax.scatter(*X[clf.active_].T, s=90, facecolors="none", edgecolors="k", label="active set")
fig.colorbar(contours, label="P(y = +1 | x)")
ax.legend(loc="lower left", fontsize=8)
ax.set_title("IVM, d = 60: decision boundary and P(y = +1 | x)")
fig.tight_layout()
plt.show()
