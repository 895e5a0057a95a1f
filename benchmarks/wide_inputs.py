"""Inputs many length-scales wide: K_uu from the distances' expansion against the coordinates' differences, on
the kernel that parkinsons' subset fit finds (the first start of ``inducing="auto"``).

    python -m benchmarks wide_inputs

Runs the default fit's subset start on parkinsons (split 0, standardised) and keeps each candidate kernel as it
is scored; for the candidate scored highest on the noise grid (the growth's start), K_uu at 256 random
training rows is formed twice: by the expansion |a|^2 + |b|^2 - 2 a.b (what every distance used before) and by
``sparsegp.kernels.distance.sqdist`` (the coordinates' differences there), against a NumPy reference summed
over coordinates. Prints the largest error, the smallest eigenvalue and whether K_uu + 1e-8 mean(diag) I
factorises, then the candidates' scores at each noise of the grid.
"""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)


def main():
    import sparsegp.fitting.pipeline as pipeline
    import sparsegp.fitting.pretrain as pretrain
    from sparsegp import SparseGPRegressor, datasets
    from sparsegp.kernels.distance import sqdist
    from sparsegp.transforms import to_positive, to_raw

    X, y, _, _ = datasets.load("parkinsons", split=0, preprocessing="standardize")
    seen = []
    finite = pretrain._finite

    def keep(score, params):  # each candidate once (the grid's trials share its kernel)
        value = finite(score, params)
        if all(params["kernel"] is not p["kernel"] for p, _, _ in seen):
            grid = {g: finite(score, dict(params, raw_noise=jnp.asarray(to_raw(g)))) for g in pretrain.NOISE_GRID}
            seen.append((params, value, grid))
        return value

    class Done(Exception):
        pass

    real = pipeline.pretrain

    def stop(*args, **kwargs):
        raise Done(real(*args, **kwargs))

    pretrain._finite, pipeline.pretrain = keep, stop
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            SparseGPRegressor(random_state=0).fit(X, y)
        except Done:
            pass
    for params, value, grid in seen:
        noise = float(to_positive(params["raw_noise"]))
        best = max(grid, key=grid.get)
        print(f"candidate: noise {noise:.3g}, score {value:.1f}; best on the grid {grid[best]:.1f} at noise {best:.3g}")
    s = float(np.sqrt(np.mean(np.var(X, axis=0))))  # the fit's units: inputs / s
    kernel = max(seen, key=lambda c: max(c[2].values()))[0]["kernel"]  # the best on the grid: the growth's start
    ell = np.asarray(kernel.lengthscale) * s
    variance = float(np.asarray(kernel.variance))
    print(
        f"smallest length-scale {ell.min():.3g} (column {int(np.argmin(ell))}, spread {X[:, np.argmin(ell)].std():.3g})"
    )
    Z = X[np.random.default_rng(0).choice(len(X), 256, replace=False)] / ell
    Zc = Z - Z.mean(axis=0)
    reference = variance * np.exp(-0.5 * np.sum((Zc[:, None, :] - Zc[None, :, :]) ** 2, axis=-1))
    sq = np.sum(Zc * Zc, axis=1)
    expanded = variance * np.exp(-0.5 * np.maximum(sq[:, None] + sq[None, :] - 2.0 * Zc @ Zc.T, 0.0))
    np.fill_diagonal(expanded, variance)
    summed = variance * np.exp(-0.5 * np.asarray(sqdist(jnp.asarray(Z))))
    for name, K in (("expansion", expanded), ("sqdist", summed)):
        try:
            np.linalg.cholesky(K + 1e-8 * variance * np.eye(256))
            factorises = "factorises"
        except np.linalg.LinAlgError:
            factorises = "does not factorise"
        print(
            f"{name:9s}: largest error {np.abs(K - reference).max():.3g}, smallest eigenvalue "
            f"{np.linalg.eigvalsh(K).min():.3g} (largest {np.linalg.eigvalsh(K).max():.3g}); K_uu + jitter {factorises}"
        )


if __name__ == "__main__":
    main()
