"""Wall time of the incremental selection states: greedy selection and the IVM (best of 3).

n = 6,000, D = 4, SE kernel: info-gain over all candidates (300 inclusions), the evidence criterion
over 59 random candidates (300 inclusions, O(n d) per candidate), the IVM with a 200-point selection
index (400 inclusions). For comparing two versions of the code on one machine.

    python -m benchmarks selection_speed
"""

from __future__ import annotations

import time
import warnings

import numpy as np


def best_of(fn, repeats=3):
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main():
    warnings.simplefilter("ignore")
    import sparsegp.selection.criteria as cr
    from sparsegp.classification.ivm import ivm_select
    from sparsegp.kernels import Constant, SquaredExponential
    from sparsegp.selection import greedy_select

    r = np.random.default_rng(0)
    X = r.normal(size=(6000, 4))
    y = np.sin(2 * X[:, 0]) + 0.1 * r.normal(size=6000)
    k = SquaredExponential(np.ones(4), 1.0)
    for name, rule, cand in [
        ("info-gain, all candidates", cr.InfoGainRule(), "full"),
        ("evidence, 59 candidates", cr.EvidenceRule(), 59),
    ]:
        greedy_select(rule, k, 0.01, X, y, size=20, candidates=cand, random_state=0)  # compile
        t = best_of(
            lambda rule=rule, cand=cand: greedy_select(rule, k, 0.01, X, y, size=300, candidates=cand, random_state=0)
        )
        print(f"{name}, d = 300: {t:.3f} s", flush=True)
    yc = np.where(X[:, 0] > 0, 1.0, -1.0)
    kc = k + Constant(0.1)
    ivm_select(kc, X, yc, 0.0, size=20, random_state=0)
    t = best_of(lambda: ivm_select(kc, X, yc, 0.0, size=400, index_size=200, random_state=0))
    print(f"IVM, d = 400: {t:.3f} s")


if __name__ == "__main__":
    main()
