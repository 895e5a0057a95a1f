"""A hyper-prior on each evaluation path, and the objective's one meaning: the cases scikit-learn's ported tests found.

    python -m benchmarks prior_paths

200 rows of y = sin(2 x) + N(0, 0.1^2), x uniform on [-3, 3]; a squared exponential with a LogNormal(log 3, 0.1)
prior on its length-scale. The exact GP's MAP, then SparseGPRegressor with 16 inducing inputs on the JAX path (VFE)
and on the host sums (FITC on a CPU; VFE given noise_variance=1e-4): length-scale, noise and objective. Then the
default fit given noise_variance=0.01 (its objective_ against log_marginal_likelihood on the training data) and
the default fit of scikit-learn's 6-row test data (Z = every input: objective_, log_marginal_likelihood, the name).
Run with another version's sources first on the path (PYTHONPATH=../old/src) to compare.
"""

from __future__ import annotations

import warnings

import numpy as np

from sparsegp import ExactGPRegressor, SparseGPRegressor
from sparsegp.kernels import SquaredExponential
from sparsegp.priors import LogNormal


def main():
    warnings.simplefilter("ignore")
    r = np.random.default_rng(0)
    X = r.uniform(-3, 3, (200, 1))
    y = np.sin(2 * X[:, 0]) + 0.1 * r.normal(size=200)
    k = SquaredExponential(1.0, priors={"lengthscale": LogNormal(np.log(3.0), 0.1)})
    exact = ExactGPRegressor(k).fit(X, y)
    print("fit | length-scale | noise | objective")
    print(
        f"exact GP (MAP) | {exact.kernel_.lengthscale:.4g} | {exact.noise_:.4g} | {exact.log_marginal_likelihood_:.4f}"
    )
    fits = {
        "VFE (JAX program)": lambda: SparseGPRegressor(k, inducing=16, random_state=0).fit(X, y),
        "FITC (host sums)": lambda: SparseGPRegressor(k, approximation="fitc", inducing=16, random_state=0).fit(X, y),
        "VFE + noise_variance=1e-4 (host sums)": lambda: SparseGPRegressor(k, inducing=16, random_state=0).fit(
            X, y, noise_variance=1e-4
        ),
    }
    for name, fit in fits.items():
        m = fit()
        print(f"{name} | {m.kernel_.lengthscale:.4g} | {m.noise_:.4g} | {m.objective_:.4f}")
    m = SparseGPRegressor(random_state=0).fit(X, y, noise_variance=0.01)
    print(f"\ndefault fit, noise_variance=0.01: objective_ {m.objective_:.4f}, "
          f"log_marginal_likelihood(X=X, y=y) {m.log_marginal_likelihood(X=X, y=y):.4f}")  # fmt: skip
    X6 = np.array([[1.0], [3.0], [5.0], [6.0], [7.0], [8.0]])
    y6 = (X6 * np.sin(X6)).ravel()
    m = SparseGPRegressor(random_state=0).fit(X6, y6)
    print(f"default fit, 6 rows (m = {m.Z_.shape[0]}): objective_ {m.objective_:.6f}, "
          f"log_marginal_likelihood(X=X, y=y) {m.log_marginal_likelihood(X=X6, y=y6):.6f}, "
          f"objective_name_ {m.objective_name_!r}")  # fmt: skip


if __name__ == "__main__":
    main()
