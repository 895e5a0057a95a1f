"""The default classifier on small data: every distinct input inducing at once (q by natural steps in its site
form) against the growth of m through sizes, on the same rows in the same run.

    python -m benchmarks classification_every_input [--rows 300 600 1000] [--json OUT]

Data as ``benchmarks/latency.py``'s: inputs uniform on [-2, 2]^4 (seed 0), the class the sign of
sin(x_1) + cos(x_2) x_3 + 0.1 noise, 1,000 more rows to test on. Each (rows, path) runs in a fresh process (an
empty compilation cache): ``SparseGPClassifier(random_state=0)`` fitted and its ``predict_proba`` taken twice,
the first time (with compilation) and again in the same process. Every input: ``variational.EVERY_INPUT_ROWS``
raised above the rows (the default applies it up to its own value); the growth: the same estimator with it 0. Reported: both times, the bound, the sizes and iterations, test log loss and
accuracy.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

CASE = """
import time, warnings, json
import numpy as np
from sparsegp import SparseGPClassifier
from sparsegp.fitting import variational
variational.EVERY_INPUT_ROWS = 10**9 if {every} else 0
warnings.simplefilter("ignore")
r = np.random.default_rng(0)
X = r.uniform(-2, 2, size=({n} + 1000, 4))
f = np.sin(X[:, 0]) + np.cos(X[:, 1]) * X[:, 2]
y = ((f + 0.1 * r.standard_normal(f.size)) > 0).astype(int)
X, Xt, y, yt = X[:{n}], X[{n}:], y[:{n}], y[{n}:]
times = []
for _ in range(2):
    t = time.perf_counter()
    model = SparseGPClassifier(random_state=0).fit(X, y)
    p = model.predict_proba(Xt)
    times.append(time.perf_counter() - t)
print(json.dumps({{
    "first": times[0], "again": times[1], "bound": model.inducing_path_[-1]["objective"],
    "path": [[s["m"], s["n_iter"]] for s in model.inducing_path_],
    "log_loss": float(-np.mean(np.log(p[np.arange(yt.size), yt]))), "accuracy": float(np.mean(p.argmax(1) == yt)),
}}))
"""


def run(n: int, every: bool) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_COMPILATION_CACHE", "JAX_PERSISTENT"))}
    env["SPARSEGP_COMPILATION_CACHE"] = "0"
    done = subprocess.run([sys.executable, "-c", CASE.format(n=n, every=every)], capture_output=True, text=True,
                          env=env, check=True)  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, nargs="+", default=[300, 600, 1000])
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    out = {}
    for n in a.rows:
        for every in (True, False):
            row = run(n, every)
            name = "every input" if every else "growth"
            out[f"{n} {name}"] = row
            print(
                f"{n:5d} rows  {name:12s} first {row['first']:6.2f} s  again {row['again']:6.2f} s  "
                f"bound {row['bound']:10.4f}  sizes {row['path']}  log loss {row['log_loss']:.4f}  "
                f"accuracy {row['accuracy']:.4f}",
                flush=True,
            )
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
