"""The certified gap against the true gap at the default fit of every shipped regression dataset.

    python -m benchmarks certificate_tightness [names ...] [--out certificate_tightness.jsonl]

Per dataset (its default split, every training row): ``SparseGPRegressor(random_state=0)``, then at the fitted
kernel, noise and inducing inputs (normalised targets): F_V, the exact log p(y) by NumPy's dense Cholesky of
K + sigma^2 I over every row (the true gap log p(y) - F_V = KL(q || posterior)), and the gap each upper bound
certifies: the trace bound (Titsias 2014, GPflow's ``upper_bound``), the CG bound of
:mod:`sparsegp.approximations.upper_bounds` (forced, to show it beside the exact one) and the fit's own
(``certificate_``: the exact log p(y) up to 20,000 distinct inputs). Each per row, with the bounds' seconds.
The acceptance line: certified <= max(3 x true, 0.01 nats per row).

    python -m benchmarks certificate_tightness --cost 5000 10000 15000 20000 [--m 1024] [--D 8]

times the exact and the CG bound alone (best of 2) on random inputs at those n: what a fit's certificate costs.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import jax.numpy as jnp
import numpy as np
import scipy.linalg as sl

from sparsegp import SparseGPRegressor
from sparsegp.approximations.certificate import certify
from sparsegp.approximations.upper_bounds import tighten
from sparsegp.backends.replicates import collapse
from sparsegp.datasets import load
from sparsegp.datasets.registry import DATASETS

SMALL_FIRST = sorted((d.rows, n) for n, d in DATASETS.items() if d.task == "regression")


def dense_log_p(kernel, noise, X, y):
    A = np.asarray(kernel.K(jnp.asarray(X)), dtype=float).copy()
    A[np.diag_indices_from(A)] += noise
    L = sl.cholesky(A, lower=True, overwrite_a=True)
    a = sl.solve_triangular(L, y, lower=True)
    return float(-0.5 * (2 * np.sum(np.log(np.diag(L))) + a @ a + len(y) * np.log(2 * np.pi)))


def run(name: str) -> dict:
    X, y, _, _ = load(name)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = SparseGPRegressor(random_state=0).fit(X, y)
    fit_s = time.perf_counter() - t0
    n = len(y)
    yn = (y - model.y_mean_) / model.y_std_
    lower = model.upper_bound_ - model.gap_
    log_p = dense_log_p(model.kernel_, model.noise_, X, yn)
    g = collapse(X, yn)
    rows = (g.X, g.y, {"counts": g.counts, "scatter": g.scatter}) if g.repeated else (X, yn, {})
    trace = certify(
        model.kernel_,
        jnp.asarray(model.Z_),
        model.noise_,
        jnp.asarray(rows[0]),
        jnp.asarray(rows[1]),
        chunk=512,
        jitter=float(model.jitter),
        **rows[2],
    )
    cg = tighten(
        trace,
        model.kernel_,
        model.Z_,
        model.noise_,
        rows[0],
        rows[1],
        chunk=512,
        jitter=float(model.jitter),
        bound="cg",
        **rows[2],
    )
    true_gap = log_p - lower
    return {
        "data": name,
        "n": n,
        "m": int(model.Z_.shape[0]),
        "fit_s": round(fit_s, 1),
        "true_gap_per_row": true_gap / n,
        "trace_gap_per_row": trace.gap / n,
        "cg_gap_per_row": cg.gap / n,
        "cg_bound": cg.bound,
        "cg_s": round(cg.seconds, 2),
        "cg_detail": cg.detail,
        "certified_gap_per_row": model.gap_ / n,
        "bound": model.certificate_["bound"],
        "bound_s": round(model.certificate_["seconds"], 2),
        "within": bool(model.gap_ <= max(3 * true_gap, 0.01 * n)),
        "cg_within": bool(cg.gap <= max(3 * true_gap, 0.01 * n)),
    }


def cost(n: int, m: int, D: int) -> dict:
    from sparsegp.approximations.upper_bounds import cg_upper, exact_upper
    from sparsegp.kernels import SquaredExponential

    r = np.random.default_rng(0)
    X = r.normal(size=(n, D))
    y = np.sin(X[:, 0]) + 0.1 * r.normal(size=n)
    k, Z = SquaredExponential(np.full(D, 2.0), 1.0), X[:m]
    out = {"n": n, "m": m, "D": D}
    for name, f in (
        ("exact_s", lambda: exact_upper(k, 0.01, X, y, chunk=512)),
        ("cg_s", lambda: cg_upper(k, Z, 0.01, X, y, chunk=512, jitter=1e-8)),
    ):
        times = []
        for _ in range(2):
            t0 = time.perf_counter()
            f()
            times.append(time.perf_counter() - t0)
        out[name] = round(min(times), 2)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", default=[n for _, n in SMALL_FIRST])
    ap.add_argument("--out", default=None)
    ap.add_argument("--cost", type=int, nargs="*")
    ap.add_argument("--m", type=int, default=1024)
    ap.add_argument("--D", type=int, default=8)
    a = ap.parse_args()
    if a.cost:
        for n in a.cost:
            print(json.dumps(cost(n, a.m, a.D)), flush=True)
        return
    for name in a.names:
        rec = run(name)
        print(json.dumps(rec), flush=True)
        if a.out:
            with open(a.out, "a") as f:
                f.write(json.dumps(rec) + "\n")


if __name__ == "__main__":
    main()
