"""What a user waits for on small data: import, the first fit and prediction in a fresh process (its compilation
cache empty, then populated by that first process), and a refit in the same process, against scikit-learn.

    python -m benchmarks latency [--rows 300 2000] [--json OUT]

Each case runs in its own fresh process (``sys.executable``), one after the other, so that nothing is shared but
the compilation cache directory (a new temporary one per estimator; the test suite's cache variables removed).
Data: inputs uniform on [-2, 2]^4 (seed 0), the target sin(x_1) + cos(x_2) x_3 + 0.1 noise, the classes its sign;
the prediction is at 1,000 more inputs. Timed: ``import`` (of ``sparsegp`` and of
``sklearn.gaussian_process``), fit + predict (``return_std=True`` / ``predict_proba``) after the imports, and the
same fit + predict again in the same process. scikit-learn: ``GaussianProcessRegressor`` (SE-ARD times a constant
plus white noise, ``normalize_y=True``) and ``GaussianProcessClassifier`` (SE-ARD times a constant), their default
optimiser. At a later size above 1,000 rows only the regressors run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

CASE = """
import time, warnings
t0 = time.perf_counter()
{imports}
t_import = time.perf_counter() - t0
import numpy as np
warnings.simplefilter("ignore")
r = np.random.default_rng(0)
X = r.uniform(-2, 2, size=({n} + 1000, 4))
f = np.sin(X[:, 0]) + np.cos(X[:, 1]) * X[:, 2]
y = f + 0.1 * r.standard_normal(f.size)
y = (y > 0).astype(int) if {classify} else y
X, Xt, y = X[:{n}], X[{n}:], y[:{n}]

def once():
    t = time.perf_counter()
    model = {make}.fit(X, y)
    out = model.predict_proba(Xt) if {classify} else model.predict(Xt, return_std=True)
    return time.perf_counter() - t

first = once()
again = once()
print(t_import, first, again)
"""

SPARSEGP = "from sparsegp import {name}"
SKLEARN = (
    "from sklearn.gaussian_process import {name}\n"
    "from sklearn.gaussian_process.kernels import RBF, WhiteKernel, ConstantKernel as C"
)
CASES = {
    "ExactGPRegressor()": (SPARSEGP.format(name="ExactGPRegressor"), "ExactGPRegressor()", False),
    "SparseGPRegressor()": (SPARSEGP.format(name="SparseGPRegressor"), "SparseGPRegressor(random_state=0)", False),
    "SparseGPClassifier()": (SPARSEGP.format(name="SparseGPClassifier"), "SparseGPClassifier(random_state=0)", True),
    "GaussianProcessRegressor": (
        SKLEARN.format(name="GaussianProcessRegressor"),
        "GaussianProcessRegressor(C(1.0) * RBF(np.ones(4)) + WhiteKernel(0.1), normalize_y=True, random_state=0)",
        False,
    ),
    "GaussianProcessClassifier": (
        SKLEARN.format(name="GaussianProcessClassifier"),
        "GaussianProcessClassifier(C(1.0) * RBF(np.ones(4)), random_state=0)",
        True,
    ),
}
IMPORTS = {"sparsegp": "import sparsegp", "sklearn.gaussian_process": "import sklearn.gaussian_process"}


def fresh(code: str, cache: str | None) -> list[float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_COMPILATION_CACHE", "JAX_PERSISTENT"))}
    env["SPARSEGP_COMPILATION_CACHE"] = cache or "0"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return [float(v) for v in done.stdout.split()]


def import_time(module: str, repeats: int = 3) -> float:
    code = f"import time; t = time.perf_counter(); {IMPORTS[module]}; print(time.perf_counter() - t)"
    return min(fresh(code, None)[0] for _ in range(repeats))


def case(name: str, n: int) -> dict:
    imports, make, classify = CASES[name]
    code = CASE.format(imports=imports, n=n, make=make, classify=classify)
    if not name.startswith(("Exact", "Sparse")):
        t_import, first, again = fresh(code, None)
        row = {"import": t_import, "first": first, "again": again}
    else:
        with tempfile.TemporaryDirectory() as cache:
            t_import, cold, again = fresh(code, cache)
            _, warm, _ = fresh(code, cache)
        row = {"import": t_import, "first": cold, "second process": warm, "again": again}
    print(f"{n:5d} rows  {name:28s} " + "  ".join(f"{k} {v:6.2f} s" for k, v in row.items()), flush=True)
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, nargs="+", default=[300, 2000])
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    out: dict = {"import": {}}
    for module in IMPORTS:
        out["import"][module] = import_time(module)
        print(f"import {module}: {out['import'][module]:.2f} s (best of 3)", flush=True)
    for i, n in enumerate(a.rows):
        names = [k for k in CASES if i == 0 or n <= 1000 or "Regressor" in k]
        out[str(n)] = {name: case(name, n) for name in names}
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
