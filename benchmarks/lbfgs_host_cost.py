"""SciPy's L-BFGS-B on its own: seconds per iteration at a given parameter count, with a diagonal quadratic
whose value and gradient cost next to nothing, so what is left is the optimiser's host-side work. At m
inducing inputs, C classes and D inputs the classifier's L-BFGS-B moves C m (m + 1) / 2 + C m numbers of q(v),
m D of Z and D + 1 of the kernel (MNIST, C = 10, D = 784: 1.72 M at m = 512, 6.07 M at 1,024).

    python -m benchmarks lbfgs_host_cost [m ...]
"""

from __future__ import annotations

import sys
import time

import numpy as np
import scipy.optimize as so

from sparsegp.fitting.training import LBFGS_MEMORY


def main(ms, C=10, D=784):
    for m in ms:
        n = C * m * (m + 1) // 2 + C * m + m * D + D + 1
        d = np.random.default_rng(0).uniform(1, 10, n)

        def f(x, d=d):
            return 0.5 * np.dot(d * x, x), d * x

        t = time.perf_counter()
        r = so.minimize(f, np.ones(n), jac=True, method="L-BFGS-B", options=dict(maxiter=20, maxcor=LBFGS_MEMORY))
        total = time.perf_counter() - t
        t = time.perf_counter()
        for _ in range(r.nfev):
            f(np.ones(n))
        alone = time.perf_counter() - t
        print(
            f"m = {m:>5}, {n:>11,} parameters: {total / r.nit:.3f} s per iteration, of which the function {alone / r.nit:.3f} s"
        )


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [512, 1024, 2048])
