"""What the certificate costs: one :func:`~sparsegp.approximations.certificate.certify` (F_V and U, one forward
pass of the sums) against one VFE bound + gradient, the unit every fit iteration pays.

Protocol SCALE data (D = 8, noise sd 0.1), SE-ARD at length-scale 1, m inducing inputs at random rows, the
default chunk for the device. Best of ``--repeats`` after one warm-up call (compilation excluded).

    .venv/bin/python -m benchmarks certificate_cost --n 100000 --m 512
"""

from __future__ import annotations

import argparse

import jax
import jax.numpy as jnp
import numpy as np

from benchmarks.harness import best_of  # noqa: E402
from sparsegp.approximations.certificate import certify
from sparsegp.approximations.vfe import vfe_bound
from sparsegp.backends.jax_sums import chunk_size_for
from sparsegp.kernels import SquaredExponential


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[100_000])
    ap.add_argument("--m", type=int, default=512)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    print(f"device: {jax.devices()[0].device_kind}")
    print("| n | m | certificate s | bound + gradient s | ratio | F_V | U | gap per row |")
    print("|---|---|---|---|---|---|---|---|")
    for n in a.n:
        print(case(n, a.m, a.repeats))


def case(n: int, m: int, repeats: int) -> str:
    """One table row: the certificate's and one bound + gradient's best times at n rows."""
    r = np.random.default_rng(0)
    X = r.uniform(-2, 2, size=(n, 8))
    y = np.sin(X).sum(1) / 2 + 0.1 * r.normal(size=n)
    Xj, yj = jnp.asarray(X), jnp.asarray(y)
    Z = jnp.asarray(X[r.choice(n, m, replace=False)])
    k = SquaredExponential(np.ones(8), 1.0)
    chunk = chunk_size_for(n, m)
    vg = jax.jit(jax.value_and_grad(lambda k, Z: vfe_bound(k, Z, 0.01, Xj, yj, chunk=chunk), argnums=(0, 1)))

    def certificate():
        return certify(k, Z, 0.01, Xj, yj, chunk=chunk, jitter=1e-8)

    c = certificate()
    t_cert = best_of(certificate, repeats)[0]
    t_eval = best_of(lambda: jax.block_until_ready(vg(k, Z)), repeats)[0]
    return (
        f"| {n:,} | {m} | {t_cert:.4f} | {t_eval:.4f} | {t_cert / t_eval:.2f} | {c.lower:.1f} | {c.upper:.1f} | "
        f"{c.gap / n:.3g} |"
    )


if __name__ == "__main__":
    main()
