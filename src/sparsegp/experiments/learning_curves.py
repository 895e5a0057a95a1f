"""Seeger, Williams & Lawrence (2003)'s test measure and learning-curve figure, shared by the kin40k and
pumadyn experiments."""

from __future__ import annotations

import numpy as np


def avg_sq_error(model, Xt, yt) -> float:
    """The paper's test measure: the average of (1/2)(y - mu)^2 over the test set."""
    return float(np.mean(0.5 * (yt - model.predict(Xt)) ** 2))


def plot_learning_curves(path, out, n_list, methods, dataset="kin40k", paper_full=None):
    from ..plotting import pyplot, save_figure

    plt = pyplot()

    full = out["full_gp"]
    fig, axes = plt.subplots(1, len(n_list), figsize=(5.5 * len(n_list), 4), squeeze=False)
    for ax, size in zip(axes[0], n_list):
        for method in methods:
            if method.endswith("-seq"):
                continue
            c = out["curves"][f"{method} n={size}"]
            ax.plot(c["d"], c["avg_sq_error"], marker="o", label=method)
        ax.axhline(full["avg_sq_error"], color="k", ls="--", lw=1, label=f"full GP, n={full['n_ms']}")
        if paper_full is not None:
            ax.axhline(paper_full, color="0.5", ls=":", lw=1, label=f"paper: full GP {paper_full:g}")
        ax.set_yscale("log")  # small-d outliers would otherwise flatten the curves where the methods differ
        ax.set(
            xlabel="active set size d", ylabel="average squared error (1/2)(y - mu)^2", title=f"{dataset}, n = {size}"
        )
        ax.legend()
    save_figure(fig, path, dpi=120)
