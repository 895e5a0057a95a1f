"""Figures (layer 9). Matplotlib with the non-interactive Agg backend: files only, no display."""

from __future__ import annotations

import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from ._atomic import replaced_atomically  # noqa: E402


def pyplot():
    """matplotlib.pyplot on the non-interactive Agg backend (figures are written, never shown)."""
    return plt


def save_figure(fig, path: str, dpi: int = 120) -> str:
    """Lay out, write and close ``fig``; creates the folder. Every figure of the package is saved here."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    fig.tight_layout()
    with replaced_atomically(path) as f:  # written whole or not at all
        fig.savefig(f, dpi=dpi, format=os.path.splitext(path)[1][1:] or None)
    plt.close(fig)
    return path


def predictive_panels(panels, X, y, path, title=None):
    """One panel per model on a 1-D problem: data, mean, +-2 std, inducing inputs, exact GP dashed.

    ``panels``: list of dicts with keys name, x, mean, std, and optional Z, exact (a (mean, std) pair), note.
    """
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.6), sharey=True)
    axes = np.atleast_1d(axes)
    for ax, p in zip(axes, panels):
        x = np.ravel(p["x"])
        ax.plot(np.ravel(X), y, ".", color="0.55", ms=3, label="data")
        if p.get("exact") is not None:
            em, es = p["exact"]
            ax.plot(x, em, "--", color="k", lw=1, label="exact GP mean")
            ax.plot(x, em + 2 * es, ":", color="k", lw=0.8)
            ax.plot(x, em - 2 * es, ":", color="k", lw=0.8, label="exact GP ±2 sd")
        ax.plot(x, p["mean"], color="tab:blue", lw=1.5, label="mean")
        ax.fill_between(
            x, p["mean"] - 2 * p["std"], p["mean"] + 2 * p["std"], color="tab:blue", alpha=0.2, label="±2 sd"
        )
        if p.get("Z") is not None:
            below_data = np.min(y) - 0.6
            ax.plot(
                np.ravel(p["Z"]),
                np.full(len(np.ravel(p["Z"])), below_data),
                "x",
                color="tab:red",
                ms=6,
                label="inducing inputs",
            )
        ax.set_title(p["name"] + (f"\n{p['note']}" if p.get("note") else ""), fontsize=9)
        ax.set_xlabel("x")
    axes[0].set_ylabel("y (centred)")
    axes[-1].legend(fontsize=7, loc="upper right")
    if title:
        fig.suptitle(title, fontsize=10)
    return save_figure(fig, path, dpi=120)
