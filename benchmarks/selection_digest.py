"""Digests of everything the incremental states compute, for comparing two versions of the code.

Greedy selection with five criteria (the states' L, L_M, beta, mu, q, p, the history's numbers, the
Smola-Bartlett dual's factor, with a held-out monitor attached), Smola-Bartlett error bars, and three
IVM runs (SE, SE + constant, Matern 5/2: the factors L and M^T, h and diag A). Same digests, same bits.

    python -m benchmarks selection_digest
"""

from __future__ import annotations

import hashlib
import warnings

import numpy as np


def main():
    warnings.simplefilter("ignore")
    import sparsegp.selection.criteria as cr
    from sparsegp.classification.ivm import ivm_select
    from sparsegp.kernels import Constant, Matern52, SquaredExponential
    from sparsegp.selection import HeldOutError, greedy_select, sparse_error_bars

    try:  # the evaluator's name before and after the one-engine refactor
        from sparsegp.kernels.gram import JaxGram as Evaluator
    except ImportError:
        from sparsegp.selection.oracle import KernelOracle as Evaluator

    r = np.random.default_rng(0)
    X = r.normal(size=(400, 3))
    y = np.sin(2 * X[:, 0]) + 0.3 * X[:, 1] + 0.1 * r.normal(size=400)
    k = SquaredExponential([0.9, 1.2, 1.0], 1.1)
    total = hashlib.sha256()

    def add(name, a):
        a = np.ascontiguousarray(np.asarray(a, dtype=np.float64))
        total.update(a.tobytes())
        print(f"{name:24s} {hashlib.sha256(a.tobytes()).hexdigest()[:16]}")

    for rule in [
        cr.InfoGainRule(),
        cr.SmolaBartlettRule(),
        cr.EvidenceRule(),
        cr.VFERule(),
        cr.ConditionalVarianceRule(),
    ]:
        sel = greedy_select(
            rule,
            k,
            0.01,
            X,
            y,
            size=25,
            candidates=59,
            random_state=1,
            track_gap=True,
            stop=[HeldOutError(X[:50] + 0.01, y[:50], patience=100)],
        )
        st = sel.state
        add(type(rule).__name__, sel.indices)
        add("  state", np.concatenate([st.L.ravel(), st.LM.ravel(), st.beta, st.mu, st.q, st.p]))
        numbers = [
            v
            for rec in sel.history
            for key, v in rec.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool) and key != "seconds"
        ]
        add("  history and dual", numbers + [sel.dual.value(), *sel.dual.L.ravel()])
    eb = sparse_error_bars(Evaluator(k, X), st, X[:5] + 0.2, random_state=2)
    add("error bars", np.concatenate([eb.upper, eb.lower, eb.gap]))
    yc = np.where(X[:, 0] > 0, 1.0, -1.0)
    for name, kernel, bias, index in [
        ("IVM, SE", k, 0.0, 100),
        ("IVM, SE + constant", k + Constant(0.3), 0.1, 50),
        ("IVM, Matern 5/2", Matern52(1.0, 1.0), 0.1, 50),
    ]:
        s = ivm_select(kernel, X, yc, bias, size=30, index_size=index, random_state=3)
        add(name, np.concatenate([s.state.L.ravel(), s.state.MT.ravel(), s.state.h, s.state.a]))
    print(f"{'all':24s} {total.hexdigest()[:16]}")


if __name__ == "__main__":
    main()
