"""What one natural step of the every-input classifier costs on the host, and the refit it serves.

    python -m benchmarks site_form_step [--n 300] [--fits 3]

First the LAPACK and BLAS calls of a step at n x n, BLAS on one thread (as the stage runs it), each the best of
seven means of 30 calls, in milliseconds: the Cholesky factor of B = I + s K s, a triangular solve against an
n x n right-hand side, LAPACK's dpotri inverse, :func:`sparsegp.linalg.host_cho_inverse`, a matrix product.
Then the default ``SparseGPClassifier(random_state=0)`` fitted and asked for ``predict_proba`` ``--fits`` times in
one process on the latency benchmark's 300 binary rows (``benchmarks/latency.py``): seconds of each fit +
predict, the calls of ``site_form.posterior`` and their seconds, the bound and the test log loss.
"""

from __future__ import annotations

import argparse
import time
import warnings


def _best_ms(fn, calls: int = 30, rounds: int = 7) -> float:
    fn()
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - t) / calls)
    return 1e3 * best


def pieces(n: int) -> dict:
    import numpy as np
    from scipy.linalg import blas, lapack

    from sparsegp import linalg
    from sparsegp.linalg import lapack_inverse, single_threaded_blas

    r = np.random.default_rng(0)
    M = r.standard_normal((n, n))
    B = M @ M.T / n + np.eye(n)
    L = np.asfortranarray(np.linalg.cholesky(B))
    calls = {
        "dpotrf": lambda: lapack.dpotrf(B, lower=1, clean=0),
        "dtrsm": lambda: blas.dtrsm(1.0, L, B, lower=1),
        "dpotri (lapack_inverse)": lambda: lapack_inverse(L),
        "dgemm": lambda: B @ B,
    }
    if hasattr(linalg, "host_cho_inverse"):  # a checkout from before it runs the rest
        calls["host_cho_inverse"] = lambda: linalg.host_cho_inverse(L)
    with single_threaded_blas():
        return {name: _best_ms(fn) for name, fn in calls.items()}


def refits(fits: int) -> list[dict]:
    import numpy as np

    from sparsegp import SparseGPClassifier
    from sparsegp.classification import site_form

    r = np.random.default_rng(0)
    X = r.uniform(-2, 2, size=(1300, 4))
    f = np.sin(X[:, 0]) + np.cos(X[:, 1]) * X[:, 2]
    y = (f + 0.1 * r.standard_normal(f.size) > 0).astype(int)
    X, Xt, y, yt = X[:300], X[300:], y[:300], (f[300:] > 0).astype(int)
    counted = {"calls": 0, "s": 0.0}
    posterior = site_form.posterior

    def timed(*args):
        t = time.perf_counter()
        out = posterior(*args)
        counted["s"] += time.perf_counter() - t
        counted["calls"] += 1
        return out

    site_form.posterior = timed
    rows = []
    try:
        for _ in range(fits):
            counted.update(calls=0, s=0.0)
            t = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = SparseGPClassifier(random_state=0).fit(X, y)
                p = model.predict_proba(Xt)
            seconds = time.perf_counter() - t
            log_loss = float(-np.mean(np.log(p[np.arange(yt.size), yt])))
            rows.append({"seconds": seconds, "posterior calls": counted["calls"], "posterior s": counted["s"],
                         "bound": float(model.bound_), "test log loss": log_loss})  # fmt: skip
    finally:
        site_form.posterior = posterior
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--fits", type=int, default=3)
    a = ap.parse_args(argv)
    for name, ms in pieces(a.n).items():
        print(f"{a.n} x {a.n}  {name:26s} {ms:7.3f} ms", flush=True)
    for i, row in enumerate(refits(a.fits)):
        print(f"fit {i + 1}: " + ", ".join(f"{k} {v:.6g}" for k, v in row.items()), flush=True)


if __name__ == "__main__":
    main()
