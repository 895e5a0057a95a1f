"""Greedy selection with an O(1) criterion over the partitions of dask arrays.

Seeger et al.'s incremental state (:class:`~.active_set.ActiveSetState`, App. A.1) splits by training
rows: each partition keeps its columns of V and its entries of p, q, mu and diag(K) on its worker
(:class:`PartitionState`); the d x d factor L_M and beta stay on the driver. One inclusion is two maps:

1. the driver sends the pivot's input x_i, its column V[:, i] and residual l_i^2 = K_ii - p_i; each
   partition forms its part of the new row v = (K(., x_i) - V^T V[:, i]) / l_i and returns V v, v^T v
   and v^T y, whose sums give the new row l_M = L_M^-1 V v, its diagonal
   l_Mi^2 = sigma^2 + v^T v - l_M^T l_M and beta_{d+1} = (v^T y - l_M^T beta) / l_Mi;
2. the driver sends t = L_M^-T l_M, l_Mi and beta_{d+1}; each partition sets w = (v - V^T t) / l_Mi,
   p += v^2, q += w^2, mu += beta_{d+1} w, scores its eligible rows and returns its best one with the
   pivot data that step 1 of the next inclusion needs.

O(d + D) numbers travel per partition and inclusion; the rows stay on their workers. Only the O(1)
rules (information gain, conditional variance, differential entropy) over all candidates: the
expensive rules need each candidate's O(n d) extension.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sl

from ..backends.dask_sums import PinnedStates
from ..errors import InputError
from ..progress import progress_bar
from .active_set import RESIDUAL_RTOL
from .criteria import ConditionalVarianceRule, DifferentialEntropyRule, InfoGainRule
from .greedy import Selection

RULES = (InfoGainRule, ConditionalVarianceRule, DifferentialEntropyRule)


class PartitionState:
    """One partition's columns of the active-set state; row ``offset`` of the data is its row 0.

    Has the attributes the O(1) rules read (``noise``, ``y``, ``q``, ``mu``, :meth:`residual`,
    :meth:`marginal_var`), so they score it unchanged.
    """

    def __init__(self, X, y, kernel, noise: float, d_max: int, offset: int):
        import jax.numpy as jnp

        self.X = np.asarray(X, dtype=np.float64)
        self.y = np.asarray(y, dtype=np.float64)
        self.kernel, self.noise, self.offset = kernel, float(noise), int(offset)
        n = self.X.shape[0]
        self.diag = np.asarray(kernel.diag(jnp.asarray(self.X)), dtype=np.float64)
        self.V = np.zeros((d_max, n))
        self.p, self.q, self.mu = np.zeros(n), np.zeros(n), np.zeros(n)
        self.active = np.zeros(n, dtype=bool)
        self.d, self.v = 0, None

    def residual(self, idx=None):
        r = self.diag - self.p if idx is None else self.diag[idx] - self.p[idx]
        return np.maximum(r, 0.0)

    def marginal_var(self, idx=None):
        return self.residual(idx) + self.noise * (self.q if idx is None else self.q[idx])

    def best(self, rule):
        """(score, global row, x, V[:d, row], residual) of this partition's best eligible row, or None."""
        eligible = np.flatnonzero((~self.active) & (self.diag - self.p > RESIDUAL_RTOL * self.diag))
        if eligible.size == 0:
            return None
        s = rule.scores(self, eligible, None, None)
        s = np.where(np.isfinite(s), s, -np.inf)
        j = int(eligible[int(np.argmax(s))])
        return (
            float(np.max(s)),
            self.offset + j,
            self.X[j].copy(),
            self.V[: self.d, j].copy(),
            float(self.diag[j] - self.p[j]),
        )

    def _at(self, d):
        if self.d != d:  # a recomputed partition starts again from the empty set
            raise RuntimeError(f"the partition holds {self.d} inclusions, the driver {d}: its worker's state was lost")

    def new_row(self, d, x, Vi, l2):
        """Step 1: this partition's part of v; returns (V v, v^T v, v^T y)."""
        import jax.numpy as jnp

        self._at(d)
        k = np.asarray(self.kernel.K(jnp.asarray(self.X), jnp.asarray(x)[None, :]), dtype=np.float64)[:, 0]
        Vd = self.V[: self.d]
        self.v = (k - Vd.T @ Vi) / np.sqrt(l2)
        return Vd @ self.v, float(self.v @ self.v), float(self.v @ self.y)

    def update(self, d, t, lMd, b, row, rule):
        """Step 2: w, p, q, mu after including global ``row``; then this partition's best candidate."""
        self._at(d)
        v, Vd = self.v, self.V[: self.d]
        w = (v - Vd.T @ t) / lMd
        self.V[self.d] = v
        self.p += v * v
        self.q += w * w
        self.mu += b * w
        if self.offset <= row < self.offset + self.X.shape[0]:
            self.active[row - self.offset] = True
        self.d += 1
        self.v = None
        return self.best(rule)


def _make(X, y, kernel, noise, d_max, offset):
    return PartitionState(X, y, kernel, noise, d_max, offset)


def select_on_partitions(data, selector, kernel, noise, s: float, verbose: bool):
    """The selection over every row of a fit's data (:mod:`sparsegp.backends`) on its Dask partitions, where
    the data are there and :func:`runs_on_partitions`; else None (the selector runs on rows in memory)."""
    if not data.on_cluster or not runs_on_partitions(selector):
        return None
    return select_dask(selector, kernel, noise, data.X / s, data.y, verbose=verbose)


def runs_on_partitions(selector) -> bool:
    """Whether :func:`select_dask` can run ``selector``: an O(1) rule over all candidates, no stopping rules."""
    cand = selector.default_candidates if selector.candidates is None else selector.candidates
    return (
        isinstance(selector.rule_class(), RULES)
        and cand == "full"
        and not tuple(selector.stop)
        and not selector.track_gap
    )


def select_dask(selector, kernel, noise: float, X, y, *, client=None, verbose=False) -> Selection:
    """``selector.select(kernel, noise, X, y)`` for dask arrays X (n, D), y (n,): the same rows in the same
    order (up to ties of the scores in the last bit), the state on the workers.

    ``selector``: an :class:`~.selectors.InfoGain`, :class:`~.selectors.ConditionalVariance` or
    :class:`~.selectors.DifferentialEntropy` with all candidates and no stopping rules.
    """
    rule = selector.rule_class()
    if not runs_on_partitions(selector):
        raise InputError(
            f"{type(selector).__name__} on dask arrays: only InfoGain, ConditionalVariance and "
            "DifferentialEntropy over all candidates, without stopping rules, run on the partitions; "
            "use KMeans(m) or an int m, or select on a sample"
        )
    n = int(X.shape[0])
    size = min(int(selector.size), n)
    noise = float(noise)
    offsets = np.concatenate([[0], np.cumsum(X.chunks[0])[:-1]]).astype(int)
    states = PinnedStates(X, y, _make, lambda k: (kernel, noise, size, int(offsets[k])), client)
    best = states.map("best", rule, what="the first scores")
    LM, beta = np.zeros((size, size)), np.zeros(size)
    indices, history = [], []
    reason = f"reached size {size}"
    with progress_bar(
        total=size, desc=f"{type(selector).__name__} selection on dask arrays", verbose=verbose, unit="pt"
    ) as bar:
        for d in range(size):
            found = [b for b in best if b is not None]
            if not found:
                reason = "no eligible point left (the rest lie in the span of the active set)"
                break
            score, row, x, Vi, l2 = max(found, key=lambda b: (b[0], -b[1]))  # ties: the lowest row, as argmax
            out = states.map("new_row", d, x, Vi, l2, what="a new row of V")
            Vv = np.sum([o[0] for o in out], axis=0)
            vv, vy = sum(o[1] for o in out), sum(o[2] for o in out)
            lM = sl.solve_triangular(LM[:d, :d], Vv, lower=True, check_finite=False) if d else np.zeros(0)
            lMd = float(np.sqrt(max(noise + vv - lM @ lM, noise * 1e-12)))
            b = (vy - lM @ beta[:d]) / lMd
            LM[d, :d], LM[d, d], beta[d] = lM, lMd, b
            t = sl.solve_triangular(LM[:d, :d], lM, lower=True, trans="T", check_finite=False) if d else np.zeros(0)
            best = states.map("update", d, t, lMd, b, row, rule, what="the state update")
            indices.append(row)
            history.append({"d": d + 1, "index": row, "score": score})
            bar.update(1)
    states.release()
    return Selection(indices=np.asarray(indices, dtype=np.int64), state=None, history=history, reason=reason)


__all__ = ["PartitionState", "select_dask"]
