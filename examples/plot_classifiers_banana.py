"""
Two GP classifiers on the banana data
=====================================

:class:`~sparsegp.SparseGPClassifier` (the sparse variational classifier of Hensman, Matthews & Ghahramani
2015) uses every training row, learns its kernel and its inducing inputs, and chooses m; the default
:class:`~sparsegp.IVMClassifier` learns its kernel by the evidence of its active set's sites and predicts from
that set alone. On Rätsch's first banana realisation (400 training points, 4,900 test points) both draw a
decision boundary (black) and probability contours; the left panel marks the fitted inducing inputs, the right
one the IVM's active set. Each title gives the test accuracy and log loss.
"""

import matplotlib.pyplot as plt
import numpy as np

from sparsegp import IVMClassifier, SparseGPClassifier, datasets

X, y, X_test, y_test = datasets.load("banana", split="ratsch_1")
models = {
    "SparseGPClassifier": SparseGPClassifier(random_state=0).fit(X, y),
    "IVMClassifier (learnt kernel)": IVMClassifier(random_state=0).fit(X, y),
}

g0, g1 = np.meshgrid(np.linspace(-3.5, 3.5, 150), np.linspace(-3, 3.5, 150))
grid = np.column_stack([g0.ravel(), g1.ravel()])
fig, axes = plt.subplots(1, 2, figsize=(11, 4.8), sharey=True)
for ax, (name, clf) in zip(axes, models.items()):
    proba = clf.predict_proba(X_test)
    codes = np.searchsorted(clf.classes_, y_test)
    accuracy = np.mean(proba.argmax(axis=1) == codes)
    log_loss = -np.mean(np.log(proba[np.arange(codes.size), codes]))
    print(f"{name}: accuracy {accuracy:.4f}, log loss {log_loss:.4f}, fit {clf.fit_time_:.1f} s")
    p = clf.predict_proba(grid)[:, 1].reshape(g0.shape)
    contours = ax.contourf(g0, g1, p, levels=np.linspace(0, 1, 11), cmap="RdBu_r", alpha=0.6)
    ax.contour(g0, g1, p, levels=[0.5], colors="k", linewidths=1.5)
    for label, marker in ((-1, "o"), (1, "s")):
        ax.scatter(*X[y == label].T, s=8, marker=marker, c="C0" if label < 0 else "C3")
    centres = clf.Z_ if hasattr(clf, "Z_") else clf.X_active_
    what = f"{len(centres)} inducing inputs" if hasattr(clf, "Z_") else f"active set of {len(centres)}"
    ax.scatter(*centres.T, s=60, facecolors="none", edgecolors="k", label=what)
    ax.legend(loc="lower left", fontsize=8)
    ax.set_title(f"{name}\naccuracy {accuracy:.3f}, log loss {log_loss:.3f}", fontsize=10)
fig.colorbar(contours, ax=axes, label="P(y = +1 | x)")
plt.show()
