"""Fit strategies on K10 compared by time to quality (protocol TTQ), sparsegp only.

    python -m benchmarks fit_strategy --m 256 --start ones --z random --max-iter 300
    python -m benchmarks fit_strategy --m 256 --start exact --z cv --max-iter 300
    python -m benchmarks fit_strategy --m 256 --start exact --n-subset 1000 --z cv --vfe-noise --fixed-z-iter 150 --max-iter 100
    python -m benchmarks fit_strategy --m 512 --max-iter 400 --target 0.0400 -1.557
    python -m benchmarks fit_strategy --grow 128 256 512 --grow-iter 150 150 250
    python -m benchmarks fit_strategy --grow 128 512 --grow-iter 100 500

Starts: "ones" (every hyper-parameter and the noise at 1, the protocol's start) or "exact" (an exact
GP fitted on --n-subset random training rows). Inducing inputs: random training rows, greedy
conditional variance at the starting hyper-parameters ("cv", pivoted Cholesky) or k-means.
--vfe-noise adds the mean of diag(K_ff - Q_ff) at the starting Z to the starting noise (the noise
VFE needs to absorb the Nystrom gap). --fixed-z-iter first learns only kernel and noise at the
starting Z. --grow M1 M2 ... fits with M1 inducing inputs, extends the set greedily by conditional
variance at the fitted hyper-parameters to M2, fits again, and so on (--grow-iter per stage).
Every --every iterations the test SMSE / SNLP are printed with the fit clock stopped; the run stops
once the last stage reaches --target SMSE SNLP.
"""

from __future__ import annotations

import argparse

import numpy as np

from benchmarks.case_io import Trajectory  # noqa: E402


def conditional_variance_extend(kernel, Z, X, size):
    """Append ``size`` training inputs to Z by greedy conditional variance (pivoted Cholesky)."""
    from sparsegp.selection.extend import extend_conditional_variance

    return np.vstack([Z, X[extend_conditional_variance(kernel, Z, X, size)]])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--m", type=int, default=512)
    p.add_argument("--start", choices=("ones", "exact"), default="ones")
    p.add_argument("--n-subset", type=int, default=2000)
    p.add_argument("--z", choices=("random", "cv", "kmeans"), default="random")
    p.add_argument("--vfe-noise", action="store_true")
    p.add_argument("--fixed-z-iter", type=int, default=0)
    p.add_argument("--max-iter", type=int, default=300)
    p.add_argument("--grow", type=int, nargs="+")
    p.add_argument("--grow-iter", type=int, nargs="+")
    p.add_argument("--every", type=int, default=10)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--target", type=float, nargs=2, default=(0.0385, -1.57))
    a = p.parse_args()

    import jax.numpy as jnp

    from sparsegp import ExactGPRegressor, SparseGPRegressor
    from sparsegp.experiments.protocols import protocol_data
    from sparsegp.kernels import SquaredExponential
    from sparsegp.options import Joint
    from sparsegp.selection import ConditionalVariance, KMeans
    from sparsegp.transforms import to_positive

    X, y, Xs, ys = protocol_data("K10")
    tr = Trajectory({"y": y, "y_test": ys}, a.every)
    rng = np.random.default_rng(a.seed)
    D = X.shape[1]
    sizes = a.grow or [a.m]
    stages = list(zip(sizes, a.grow_iter or [a.max_iter]))
    if a.fixed_z_iter:
        stages.insert(0, (sizes[0], a.fixed_z_iter))
    tr.start()
    kernel, noise = SquaredExponential(np.ones(D), 1.0), 1.0
    if a.start == "exact":
        idx = rng.permutation(len(X))[: a.n_subset]
        gp = ExactGPRegressor(kernel, noise=1.0, normalize_y=False, max_iter=200).fit(X[idx], y[idx])
        kernel, noise = gp.kernel_, gp.noise_
        print(f"exact GP on {a.n_subset} rows: {gp.n_iter_} it., noise {noise:.4g}, t {tr.fit_seconds():.1f} s")
    if a.z == "random":
        Z = X[np.sort(rng.choice(len(X), sizes[0], replace=False))]
    elif a.z == "cv":
        Z = X[ConditionalVariance(sizes[0]).select(kernel, noise, X, y, random_state=rng).indices]
    else:
        Z = KMeans(sizes[0]).centres(X, random_state=a.seed)
    if a.vfe_noise:
        gap = float(
            np.mean(
                kernel.variance
                - np.sum(
                    np.linalg.solve(
                        np.linalg.cholesky(np.asarray(kernel.K(jnp.asarray(Z))) + 1e-8 * np.eye(len(Z))),
                        np.asarray(kernel.K(jnp.asarray(Z), jnp.asarray(X))),
                    )
                    ** 2,
                    axis=0,
                )
            )
        )
        noise += gap
        print(f"noise start {noise:.4g} (mean Nystrom gap {gap:.4g})")
    state = {"offset": 0, "final": False}

    def predict_at(params):
        at = SparseGPRegressor(
            params["kernel"],
            inducing=np.asarray(params.get("Z", Z)),
            noise=float(to_positive(params["raw_noise"])),
            optimize=False,
            normalize_y=False,
        )
        return at.fit(X, y).predict_var(Xs)

    def callback(it, value, params):
        it += state["offset"]
        n_before = len(tr.points)
        tr.record(it, lambda: predict_at(params))
        if len(tr.points) > n_before:
            _, t, smse, snlp = tr.points[-1]
            print(
                f"m {len(params.get('Z', Z))} it {it} t {t:.1f} s SMSE {smse:.5f} SNLP {snlp:.5f} "
                f"objective {value:.2f}",
                flush=True,
            )
            if state["final"] and smse <= a.target[0] and snlp <= a.target[1]:
                print(f"TTQ reached: it {it}, {t:.1f} s")
                return True
        return False

    for s, (m, its) in enumerate(stages):
        fixed = a.fixed_z_iter and s == 0
        if m > len(Z):
            Z = conditional_variance_extend(kernel, Z, X, m - len(Z))
            print(f"extended to m = {m} at t {tr.fit_seconds():.1f} s")
        state["final"] = s == len(stages) - 1
        model = SparseGPRegressor(
            kernel,
            inducing=Z,
            noise=noise,
            normalize_y=False,
            optimize="hyperparameters" if fixed else True,
            callback=callback,
            schedule=Joint(max_iter=its),
        ).fit(X, y)
        state["offset"] += model.n_iter_
        kernel, noise, Z = model.kernel_, model.noise_, model.Z_
        print(
            f"stage m = {m}: {model.n_iter_} it., {model.optimizer_report_.reason}, t {tr.fit_seconds():.1f} s, "
            f"objective {-model.objective_:.2f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
