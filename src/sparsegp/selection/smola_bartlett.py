"""Smola & Bartlett (2001): the dual quadratic form Q*, the duality gap, and sparse error bars.

Symbols as in NOTATION.md (the package's one notation table).

Theorem 1: for Q(alpha) = -y^T K alpha + 1/2 alpha^T (sigma^2 K + K^T K) alpha (eq. 5) and
Q*(alpha) = -y^T alpha + 1/2 alpha^T (sigma^2 I + K) alpha (eq. 6),

    Q(alpha) >= Q_min >= -1/2 ||y||^2 - sigma^2 Q*(alpha*)            (eq. 7)

for every alpha, alpha*. Greedy minimisation of Q over a growing support is the
primal side (its minimum over support I is -beta^T beta / 2, see
:class:`~.active_set.ActiveSetState`); :class:`DualState` minimises Q* over its own
greedily grown support S*. Q*'s minimum over S* is the exact GP's on the subset S*:
-1/2 y_S^T (sigma^2 I + K_S)^-1 y_S, kept through an incremental Cholesky of
sigma^2 I + K_S (Quinonero-Candela & Rasmussen App. A.3, eqs. A-48, A-49).

Error bars (eq. 10): the noisy predictive variance at x is k** + sigma^2 + 2 min Q*_k
with y replaced by k = K(X, x); any support gives an upper bound, and eq. 8 with the
primal Q_k on the training active set gives a lower bound.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sl

from .._docstrings import fill
from ..errors import InputError
from ..kernels.gram import gram
from ..linalg import chol_append, chol_extension
from .active_set import RESIDUAL_RTOL, ActiveSetState


def relative_gap(Q: float, Qstar: float, noise: float, yy: float) -> float:
    """Algorithm 1's stopping quantity (Smola & Bartlett 2001):
    2 (Q + sigma^2 Q* + y^T y / 2) / (abs(Q) + abs(sigma^2 Q*) + y^T y / 2), at most 2 and 0 at the optimum.

    Parameters
    ----------
    Q : float
        The primal Q(alpha) (eq. 5) at the current sparse solution.
    Qstar : float
        The dual Q*(alpha*) (eq. 6) at its current sparse solution.
    noise : float
        The noise variance sigma^2.
    yy : float
        y^T y.

    Returns
    -------
    float

    Examples
    --------
    >>> from sparsegp.selection import relative_gap
    >>> relative_gap(-1.0, -1.0, 0.5, 1.0)  # 2 (-1 - 0.5 + 0.5) / (1 + 0.5 + 0.5)
    -1.0
    >>> relative_gap(0.0, 0.0, 0.5, 1.0)  # nothing selected yet
    2.0
    """
    num = Q + noise * Qstar + 0.5 * yy
    den = abs(Q) + abs(noise * Qstar) + 0.5 * yy
    return 2.0 * num / den if den > 0 else 0.0


@fill()
class DualState:
    """Greedy minimisation of Q* (Smola & Bartlett eq. 6) over a growing support S*. Q*'s minimum over S* is
    the exact GP's on the subset: -1/2 y_S^T (sigma^2 I + K_S)^-1 y_S, kept through an incremental Cholesky
    of sigma^2 I + K_S (Quiñonero-Candela & Rasmussen App. A.3, eqs. A-48, A-49).

    Parameters
    ----------
    diag : array of shape (n,)
        The prior variances K(x_j, x_j).
    y : array of shape (n,)
        Targets.
    noise : float
        The noise variance sigma^2.
    d_max : int
        The largest support it will hold.

    Examples
    --------
    {toy_selection}
    >>> from sparsegp.selection import DualState
    >>> dual = DualState(np.asarray(kernel.diag(X)), y, noise, d_max=3)
    >>> dual.include(7, np.zeros(0))
    >>> expected = -0.5 * y[7] ** 2 / (float(kernel.diag(X[7:8])[0]) + noise)
    >>> bool(np.isclose(dual.value(), expected))
    True
    """

    def __init__(self, diag, y, noise: float, d_max: int):
        self.diag = np.asarray(diag, dtype=np.float64)
        self.y = np.asarray(y, dtype=np.float64)
        self.noise = float(noise)
        n = self.diag.shape[0]
        self.d_max = int(min(d_max, n))
        self.L = np.zeros((self.d_max, self.d_max))
        self.u = np.zeros(self.d_max)
        self.indices = np.empty(self.d_max, dtype=np.int64)
        self.active = np.zeros(n, dtype=bool)
        self.d = 0

    @property
    def S(self) -> np.ndarray:
        return self.indices[: self.d]

    def value(self) -> float:
        """min Q* over the current support: -u^T u / 2 with L u = y_S.

        Returns
        -------
        float
        """
        return -0.5 * float(self.u[: self.d] @ self.u[: self.d])

    def _extend(self, C, K_SC):
        d = self.d
        z, dd = chol_extension(self.L[:d, :d], K_SC, self.noise + self.diag[C], floor=self.noise * RESIDUAL_RTOL)
        unew = (self.y[C] - z.T @ self.u[:d]) / dd
        return z, dd, unew

    def scores(self, C, K_SC) -> np.ndarray:
        """The decrease u_new^2 / 2 of min Q* from adding each candidate (eq. A-49).

        Parameters
        ----------
        C : array of int, shape (c,)
            Candidate rows.
        K_SC : array of shape (s, c)
            K(X_S, X_C), the support against the candidates.

        Returns
        -------
        ndarray of shape (c,)
        """
        return 0.5 * self._extend(C, K_SC)[2] ** 2

    def include(self, c: int, k_Sc) -> None:
        """Add row ``c`` to the support.

        Parameters
        ----------
        c : int
            The row.
        k_Sc : array of shape (s,)
            K(X_S, x_c).
        """
        if self.d >= self.d_max:
            raise InputError(f"the dual support is full (d_max={self.d_max})")
        z, dd, unew = self._extend(np.array([c]), np.asarray(k_Sc, dtype=np.float64).reshape(self.d, 1))
        d = self.d
        chol_append(self.L, d, z[:, 0], dd[0])
        self.u[d] = unew[0]
        self.indices[d] = c
        self.active[c] = True
        self.d = d + 1

    def step(self, oracle, rng, kappa: int) -> int | None:
        """One greedy inclusion over ``kappa`` random candidates.

        Parameters
        ----------
        oracle : object
            The Gram-matrix engine on the training inputs.
        rng : numpy.random.Generator
            Draws the candidates.
        kappa : int
            Candidates per step.

        Returns
        -------
        int or None
            The row added, or None when no candidate is left.
        """
        free = np.flatnonzero(~self.active)
        if free.size == 0 or self.d >= self.d_max:
            return None
        C = free if free.size <= kappa else rng.choice(free, size=kappa, replace=False)
        K_SC = oracle.block(self.S, C) if self.d else np.zeros((0, len(C)))
        j = int(np.argmax(self.scores(C, K_SC)))
        self.include(int(C[j]), K_SC[:, j])
        return int(C[j])


@dataclass
class ErrorBars:
    """Smola-Bartlett sparse error bars for a batch of test points (noisy predictive variances), as
    :func:`sparse_error_bars` returns them.

    Parameters
    ----------
    upper : ndarray of shape (t,)
        Upper bounds on the exact GP's noisy predictive variance.
    lower : ndarray of shape (t,)
        Lower bounds.
    gap : ndarray of shape (t,)
        The final relative gap per point.
    basis : ndarray of int, shape (t,)
        The basis functions used per point.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsegp.selection import ErrorBars
    >>> bars = ErrorBars(upper=np.array([0.3]), lower=np.array([0.29]), gap=np.array([0.02]), basis=np.array([12]))
    >>> float(bars.upper[0] - bars.lower[0]) < 0.02
    True
    """

    upper: np.ndarray
    lower: np.ndarray
    gap: np.ndarray
    basis: np.ndarray


def sparse_error_bars(
    kernel,
    X,
    state: ActiveSetState,
    X_test,
    *,
    kappa: int = 59,
    eps: float = 0.025,
    max_basis: int = 200,
    random_state=None,
) -> ErrorBars:
    """Smola & Bartlett's sparse error bars (eq. 10): a lower and an upper bound on the exact GP's noisy
    predictive variance at each test point, batched over the test points.

    For test input x with k = K(X, x): the dual Q*_k(alpha) = -k^T alpha + 1/2 alpha^T (sigma^2 I + K) alpha
    is minimised greedily over its own support (``kappa`` random candidates per step, as in Algorithm 1),
    giving ``upper`` = k** + sigma^2 + 2 Q*_k >= the exact noisy variance. The primal Q_k on the training
    active set of ``state`` gives, through eq. 8, ``lower`` = k** + sigma^2 - (k^T k - beta_k^T beta_k) / sigma^2
    with beta_k = L_M^-1 V k. Each point stops when its relative gap is below ``eps`` or after
    ``max_basis`` basis functions. Cost: O(n d) per point for the lower bound, O(kappa b^2) for b basis
    functions of the upper bound.

    Parameters
    ----------
    kernel : Kernel
        The kernel the selection in ``state`` used.
    X : array of shape (n, D)
        The training inputs of that selection.
    state : ActiveSetState
        A greedy selection's state (``Selection.state``), at noise variance ``state.noise``.
    X_test : array of shape (t, D)
        Where to bound the predictive variance.
    kappa : int
        Random candidates per basis function of the upper bound.
    eps : float
        Stop a point once its relative gap (Algorithm 1) is below this.
    max_basis : int
        At most this many basis functions per point.
    random_state : int, Generator or None
        Seed for the candidates.

    Returns
    -------
    ErrorBars
        ``lower <= exact noisy variance <= upper`` at each test point, with each point's gap and number of
        basis functions.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsegp.kernels import SquaredExponential
    >>> from sparsegp.selection import InfoGain, sparse_error_bars
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-3, 3, size=(200, 1)); y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=200)
    >>> kernel = SquaredExponential(lengthscale=1.0)
    >>> state = InfoGain(20).select(kernel, 0.01, X, y).state
    >>> bars = sparse_error_bars(kernel, X, state, np.array([[0.0], [5.0]]), random_state=0)
    >>> bool(np.all(bars.lower <= bars.upper))
    True
    """
    oracle = gram(kernel, np.asarray(X, dtype=np.float64))
    X_test = np.asarray(X_test, dtype=np.float64)
    t = X_test.shape[0]
    rng = np.random.default_rng(random_state)
    noise = state.noise
    n = state.n
    max_basis = int(min(max_basis, n))
    kss = np.asarray(oracle.kernel.diag(X_test))
    # k for every test point (n x t) and the primal side on the training active set, O(n d t).
    Kxt = oracle.cross(X_test, np.arange(n)).T  # (n, t)
    kk = np.einsum("ij,ij->j", Kxt, Kxt)
    d = state.d
    if d:
        beta_k = sl.solve_triangular(state.LM[:d, :d], state.V[:d] @ Kxt, lower=True, check_finite=False)
        Qk = -0.5 * np.einsum("ij,ij->j", beta_k, beta_k)
    else:
        Qk = np.zeros(t)
    diag = state.diag
    upper = np.empty(t)
    gap = np.empty(t)
    basis = np.empty(t, dtype=np.int64)
    for j in range(t):
        dual = DualState(diag, Kxt[:, j], noise, max_basis)
        g = relative_gap(Qk[j], dual.value(), noise, kk[j])
        while g > eps and dual.d < max_basis:
            if dual.step(oracle, rng, kappa) is None:
                break
            g = relative_gap(Qk[j], dual.value(), noise, kk[j])
        upper[j] = kss[j] + noise + 2.0 * dual.value()
        gap[j] = g
        basis[j] = dual.d
    lower = kss + noise - (kk + 2.0 * Qk) / noise
    return ErrorBars(upper=upper, lower=lower, gap=gap, basis=basis)
