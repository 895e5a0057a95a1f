"""The certificate against GPflow: F_V and the upper bound at fixed hyper-parameters and inducing inputs.

Ours (:func:`sparsegp.approximations.certificate.certify`) in this environment; GPflow's ``SGPR.elbo()`` and
``SGPR.upper_bound()`` in the anchors environment (``make anchors``) on the same arrays, K_uu's jitter set to
the same absolute value. Cases: kin40k's first rows (SE-ARD), several m, noise levels and length-scales, and
m = n. Prints one row per case and the largest relative difference.

    make dev anchors && .venv/bin/python -m benchmarks upper_bound_vs_gpflow
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

import jax.numpy as jnp
import numpy as np

from sparsegp.approximations.certificate import certify
from sparsegp.approximations.exact_gp import exact_log_marginal
from sparsegp.datasets import load
from sparsegp.kernels import SquaredExponential

HERE = os.path.dirname(os.path.abspath(__file__))
JITTER = 1e-8  # relative to mean diag(K_uu) = the variance, for SE

GPFLOW = r"""
import json, sys
import numpy as np
import gpflow
gpflow.config.set_default_float(np.float64)
d = np.load(sys.argv[1])
out = []
for i in range(int(d["cases"])):
    X, y, Z = d[f"X{i}"], d[f"y{i}"][:, None], d[f"Z{i}"]
    ell, var, noise = d[f"ell{i}"], float(d[f"var{i}"]), float(d[f"noise{i}"])
    gpflow.config.set_default_jitter(float(d["jitter"]) * var)
    k = gpflow.kernels.SquaredExponential(lengthscales=ell.copy(), variance=var)
    model = gpflow.models.SGPR((X, y), kernel=k, inducing_variable=Z.copy(), noise_variance=noise)
    out.append([float(model.elbo().numpy()), float(model.upper_bound().numpy())])
print(json.dumps(out))
"""


def cases():
    X, y, _, _ = load("kin40k", split=0)
    X, y = X[:2000], y[:2000]
    X = (X - X.mean(0)) / X.std(0)
    y = (y - y.mean()) / y.std()
    r = np.random.default_rng(0)
    for n, m, noise, scale in [
        (2000, 16, 0.05, 1.0),
        (2000, 128, 0.05, 1.0),
        (2000, 512, 0.05, 1.0),
        (2000, 128, 1e-3, 1.0),
        (2000, 128, 0.5, 0.5),
        (500, 500, 0.05, 1.0),
    ]:
        Z = X[:n] if m == n else X[r.choice(n, m, replace=False)]
        yield X[:n], y[:n], Z, np.full(X.shape[1], 1.5 * scale), 1.0, noise


def main():
    anchors = os.environ.get("SPARSEGP_ANCHORS_PYTHON") or os.path.join(HERE, "..", ".venv-anchors", "bin", "python")
    if not os.path.exists(anchors):
        sys.exit("needs the anchors environment: make anchors")
    rows, arrays = [], {}
    for i, (X, y, Z, ell, var, noise) in enumerate(cases()):
        k = SquaredExponential(ell, var)
        c = certify(k, jnp.asarray(Z), noise, jnp.asarray(X), jnp.asarray(y), chunk=512, jitter=JITTER)
        exact = float(exact_log_marginal(k, noise, jnp.asarray(X), jnp.asarray(y)))
        rows.append(dict(n=len(X), m=len(Z), noise=noise, ell=ell[0], lower=c.lower, exact=exact, upper=c.upper))
        arrays.update({f"X{i}": X, f"y{i}": y, f"Z{i}": Z, f"ell{i}": ell, f"var{i}": var, f"noise{i}": noise})
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "cases.npz")
        np.savez(path, cases=len(rows), jitter=JITTER, **arrays)
        ref = json.loads(
            subprocess.run([anchors, "-c", GPFLOW, path], capture_output=True, text=True, check=True).stdout
        )
    print("| n | m | noise | length-scale | F_V ours | F_V GPflow | exact log p(y) | U ours | U GPflow | rel. diff U |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    worst = 0.0
    for row, (elbo, upper) in zip(rows, ref):
        rel_u = abs(row["upper"] - upper) / abs(upper)
        worst = max(worst, rel_u, abs(row["lower"] - elbo) / abs(elbo))
        print(
            f"| {row['n']} | {row['m']} | {row['noise']:g} | {row['ell']:g} | {row['lower']:.6f} | {elbo:.6f} | "
            f"{row['exact']:.6f} | {row['upper']:.6f} | {upper:.6f} | {rel_u:.1e} |"
        )
        assert row["lower"] <= row["exact"] <= row["upper"], row
    print(f"largest relative difference from GPflow (F_V and U): {worst:.1e}")


if __name__ == "__main__":
    main()
