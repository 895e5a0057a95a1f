"""Where a fitted model's certified gap comes from: KL(q || posterior) = log p(y) - F_V, and the upper bound's
slack U - log p(y), split into its log-determinant and quadratic parts, beside a tighter lower bound on the
quadratic form y^T (K + sigma^2 I)^-1 y >= 2 v^T y - v^T (K + sigma^2 I) v (any v; here v = (Q_nn + sigma^2 I)^-1 y,
as in Artemev et al. 2021). Dense O(n^3): for n up to about 10,000.

    make demo && .venv/bin/python -m benchmarks certificate_slack demo-output/kin40k-vfe512.npz --dataset kin40k --n-train 10000
"""

from __future__ import annotations

import argparse

import jax.numpy as jnp
import numpy as np
import scipy.linalg as sl

from sparsegp import load_model
from sparsegp.approximations.certificate import certify
from sparsegp.datasets import load


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("--dataset", default="kin40k")
    ap.add_argument("--split", type=int, default=0)
    ap.add_argument("--n-train", type=int, default=10000)
    a = ap.parse_args()
    model = load_model(a.model)
    X, y, _, _ = load(a.dataset, split=a.split, n_train=a.n_train)
    y = (y - model.y_mean_) / model.y_std_
    k, noise, n = model.kernel_, model.noise_, len(X)
    Xj, Zj = jnp.asarray(X), jnp.asarray(model.Z_)
    A = np.asarray(k.K(Xj)) + noise * np.eye(n)
    L = np.linalg.cholesky(A)
    logdet_k, quad_k = 2 * np.log(np.diag(L)).sum(), y @ sl.cho_solve((L, True), y)
    log_p = -0.5 * (logdet_k + quad_k + n * np.log(2 * np.pi))
    Kuu = np.array(k.K(Zj))
    Kuu += 1e-8 * np.mean(np.diag(Kuu)) * np.eye(len(Kuu))
    Kuf = np.asarray(k.K(Zj, Xj))
    Q = Kuf.T @ np.linalg.solve(Kuu, Kuf)
    t = np.trace(A) - n * noise - np.trace(Q)
    logdet_q = np.linalg.slogdet(Q + noise * np.eye(n))[1]
    quad_t = y @ np.linalg.solve(Q + (noise + t) * np.eye(n), y)
    v = np.linalg.solve(Q + noise * np.eye(n), y)
    quad_v = 2 * v @ y - v @ A @ v
    c = certify(k, Zj, noise, Xj, jnp.asarray(y), chunk=512, jitter=1e-8)
    rows = [
        ("F_V (the fit's bound)", c.lower),
        ("exact log p(y) at the fitted kernel and noise", log_p),
        ("U (upper_bound_)", c.upper),
        ("gap_ = U - F_V", c.gap),
        ("KL = log p(y) - F_V", log_p - c.lower),
        ("U - log p(y), of which log-determinant: (log|K + s2 I| - log|Q + s2 I|) / 2", 0.5 * (logdet_k - logdet_q)),
        ("U - log p(y), of which quadratic form (trace-corrected noise s2 + t)", 0.5 * (quad_k - quad_t)),
        ("quadratic form: its lower bound from v, short of the exact value by (/ 2)", 0.5 * (quad_k - quad_v)),
        ("t / s2 (the trace correction relative to the noise)", t / noise),
    ]
    print(f"m = {len(model.Z_)}, n = {n}, noise = {noise:.4g}")
    print("| quantity | nats |\n|---|---|")
    for name, value in rows:
        print(f"| {name} | {value:.1f} |")


if __name__ == "__main__":
    main()
