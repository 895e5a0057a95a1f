"""Where to put a classifier's inducing inputs: four rules at one fixed kernel, on MNIST rows (robust-max).

    python -m benchmarks classification_inducing_start [--n 10000] [--m 128] [--scale 8]

The kernel is the classifier's default SE-ARD start with every length-scale times ``--scale``, held fixed. The
first 32 inducing inputs are the greedy conditional-variance pivots over 4,096 random candidate rows (the fit's
start); the other m - 32 come from (a) more conditional-variance pivots, (b) pivots weighted by each candidate's
site precision under the m = 32 fit (sum over classes of |lambda_il|, a differential-entropy-like score),
(c) random rows; and (d) m k-means centres of the candidates (k-means++ start) replace them all. For each, q by
natural steps to convergence (the kernel and Z held); prints the bound, the test error and log loss on the
10,000 official test rows.
"""

from __future__ import annotations

import argparse
import time

import jax.numpy as jnp
import numpy as np
from scipy.cluster.vq import kmeans2

from benchmarks.harness import mnist_start
from sparsegp import datasets
from sparsegp.classification import svgp
from sparsegp.likelihoods import RobustMax
from sparsegp.selection.extend import residual_factor


def pivots(kernel, Z, X, k, weights=None):
    """k greedy pivots of X given Z by (weighted) residual prior variance."""
    G, V, d = residual_factor(kernel, Z, X, 1e-8)
    w = np.ones(X.shape[0]) if weights is None else weights
    E, chosen = np.zeros((k, X.shape[0])), []
    for j in range(k):
        p = int(np.argmax(w * d))
        E[j] = (G.column(p) - V.T @ V[:, p] - E[:j].T @ E[:j, p]) / np.sqrt(d[p])
        d = d - E[j] ** 2
        d[p] = -np.inf
        chosen.append(p)
    return np.asarray(chosen)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--m", type=int, default=128)
    ap.add_argument("--scale", type=float, default=8.0)
    a = ap.parse_args()
    Xs, y, Xts, kernel, _ = mnist_start(a.n)
    yt = datasets.load("mnist")[3]
    lik = RobustMax()
    kernel = type(kernel)(lengthscale=np.asarray(kernel.lengthscale) * a.scale, variance=1.0)
    args = (jnp.asarray(Xs), jnp.asarray(y), jnp.ones(a.n))

    def fit(Z):
        q_mu, q_sqrt = svgp.whitened_prior(Z.shape[0], 10)
        p = {"kernel": kernel, "Z": jnp.asarray(Z), "q_mu": jnp.asarray(q_mu), "q_sqrt": jnp.asarray(q_sqrt)}
        p["mean"] = jnp.zeros(10)
        P, h, e = svgp.site_sums(svgp.posterior_of(p), lik, *args, 2048)
        value, rho = float(e), 1.0
        for _ in range(60):
            q_mu, q_sqrt = svgp.natural_update(p["q_mu"], p["q_sqrt"], P, h, rho)
            trial = dict(p, q_mu=q_mu, q_sqrt=q_sqrt)
            P_t, h_t, e_t = svgp.site_sums(svgp.posterior_of(trial), lik, *args, 2048)
            v = float(e_t) - float(svgp.kl_whitened(q_mu, q_sqrt))
            if not (np.isfinite(v) and v > value):
                rho *= 0.5
                if rho < 1 / 64:
                    break
                continue
            gain, rho = v - value, min(1.0, 2 * rho)
            p, P, h, value = trial, P_t, h_t, v
            if gain < 1e-4 * a.n:
                break
        mu, var = svgp.predict_marginals(svgp.posterior_of(p), jnp.asarray(Xts))
        logp = np.asarray(lik.predict_log_proba(mu, var))
        return p, value, float(np.mean(logp.argmax(1) != yt)), float(-np.mean(logp[np.arange(yt.size), yt]))

    rng = np.random.default_rng(0)
    idx = np.sort(rng.choice(a.n, 4096, replace=False))
    cand, cand_y = Xs[idx], y[idx]
    none = np.zeros((0, Xs.shape[1]))
    Z0 = cand[pivots(kernel, none, cand, 32)]
    first, *_ = fit(Z0)
    mu, var, _ = svgp.marginals(svgp.posterior_of(first), jnp.asarray(cand))
    _, lam = svgp.site_moments(lik, mu, var, jnp.asarray(cand_y))
    weights = np.asarray(jnp.sum(jnp.abs(lam), axis=1))
    rules = {
        "conditional variance": lambda: np.vstack([Z0, cand[pivots(kernel, Z0, cand, a.m - 32)]]),
        "site-weighted variance": lambda: np.vstack([Z0, cand[pivots(kernel, Z0, cand, a.m - 32, weights)]]),
        "random rows": lambda: np.vstack([Z0, Xs[rng.choice(a.n, a.m - 32, replace=False)]]),
        "k-means centres": lambda: kmeans2(cand, a.m, seed=0, minit="++")[0],
    }
    print(f"n = {a.n}, m = {a.m}, length-scales x {a.scale:g}")
    print("| inducing inputs | bound | test error | test log loss | seconds |")
    print("| --- | --- | --- | --- | --- |")
    for name, rule in rules.items():
        t = time.perf_counter()
        _, value, error, loss = fit(rule())
        print(f"| {name} | {value:.1f} | {error:.4f} | {loss:.4f} | {time.perf_counter() - t:.1f} |", flush=True)


if __name__ == "__main__":
    main()
