"""The incremental active-set state of Seeger, Williams & Lawrence (2003), Appendix A.1.

Symbols as in NOTATION.md (the package's one notation table).

For an active set I of d training points (the projected-process / DTC likelihood
approximation of their sec. 2.1) the state holds, in NumPy float64:

============  =====================================================  ===========
paper         meaning                                                attribute
============  =====================================================  ===========
L             Cholesky factor of K_I (d x d, lower)                  ``L``
V             L^-1 K_{I,.} (d x n)                                   ``V``
M = L_M L_M^T sigma^2 I + V V^T                                      ``LM``
beta          L_M^-1 V y                                             ``beta``
p             diag V^T V  (the Nystrom diagonal, Q_nn)               ``p``
q             diag V^T M^-1 V                                        ``q``
mu            posterior mean of u at all n points, V^T L_M^-T beta   ``mu``
============  =====================================================  ===========

One inclusion costs three O(n d) passes plus the kernel column K_{.,i}; the
buffers are allocated once for ``d_max`` rows (one d_max x n buffer for V).
:meth:`ActiveSetState.extend` computes, for a batch of candidates at once, the
new row of V, of L_M and the new component of beta that each would produce: the
O(n d) per candidate quantities the expensive criteria (Smola-Bartlett,
evidence, VFE) score from. ``tests/_reference.py``'s ``dense_state`` recomputes everything from
scratch for the tests.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sl

from .._config import LOG_2PI
from .._docstrings import fill
from ..errors import InputError, NumericalError
from ..linalg import chol_append, chol_extension, forward_row

# A candidate whose residual prior variance K_ii - p_i is below this fraction of K_ii is
# (numerically) in the span of the active set already: including it would make L singular.
RESIDUAL_RTOL = 1e-9


@dataclass
class Extension:
    """What including each candidate of a batch would add (columns index the candidates).

    ``l`` the new diagonal of L; ``v`` (n x c) the new row of V; ``lM`` (d x c) the new
    row of L_M below the diagonal, ``lMd`` its diagonal entry; ``beta`` the new component of beta.
    """

    l: np.ndarray
    v: np.ndarray
    lM: np.ndarray
    lMd: np.ndarray
    beta: np.ndarray


@fill()
class ActiveSetState:
    """Seeger et al.'s state for the projected-process (DTC) approximation with active set I, grown one point
    at a time (App. A.1): L = chol(K_I), V = L^-1 K_I,n, p = diag(V^T V), the factor L_M of
    M = sigma^2 I + V V^T, beta, and mu, the predictive means at the training inputs. Including a point
    costs O(n d); every criterion of :mod:`sparsegp.selection` scores from it.

    Parameters
    ----------
    diag : array of shape (n,)
        The prior variances K(x_j, x_j).
    y : array of shape (n,)
        Targets.
    noise : float
        The noise variance sigma^2 (> 0).
    d_max : int
        Capacity of the buffers (the largest active set this state will hold).

    Examples
    --------
    {toy_selection}
    >>> from sparsegp.selection import ActiveSetState
    >>> state = ActiveSetState(np.asarray(kernel.diag(X)), y, noise, d_max=5)
    >>> for i in (0, 50, 100):
    ...     _ = state.include(i, np.asarray(kernel.K(X, X[i:i + 1]))[:, 0])
    >>> state.I
    array([  0,  50, 100])
    >>> bool(state.vfe_bound() <= state.dtc_log_marginal())
    True
    """

    def __init__(self, diag, y, noise: float, d_max: int):
        diag = np.asarray(diag, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        if diag.ndim != 1 or y.shape != diag.shape:
            raise InputError(f"diag and y must be vectors of one length, got {diag.shape} and {y.shape}")
        if not noise > 0:
            raise InputError(f"noise variance must be > 0, got {noise}")
        n = diag.shape[0]
        d_max = int(min(d_max, n))
        if d_max < 1:
            raise InputError("d_max must be at least 1")
        self.n, self.d_max, self.noise = n, d_max, float(noise)
        self.diag, self.y = diag, y
        self.yy = float(y @ y)
        self.indices = np.empty(d_max, dtype=np.int64)
        self.L = np.zeros((d_max, d_max))
        self.V = np.zeros((d_max, n))
        self.LM = np.zeros((d_max, d_max))
        self.beta = np.zeros(d_max)
        self.p = np.zeros(n)
        self.q = np.zeros(n)
        self.mu = np.zeros(n)
        self.active = np.zeros(n, dtype=bool)
        self.d = 0

    # ---- views of the filled part ------------------------------------------------
    @property
    def I(self) -> np.ndarray:  # noqa: E743 - the paper's name
        return self.indices[: self.d]

    def _Vd(self):
        return self.V[: self.d]

    def residual(self, idx=None) -> np.ndarray:
        """K_jj - p_j: the prior variance not yet explained by the active set (pivoted Cholesky's residual).

        Parameters
        ----------
        idx : array of int or None
            Which training points; None: all.

        Returns
        -------
        ndarray
        """
        r = self.diag - self.p if idx is None else self.diag[idx] - self.p[idx]
        return np.maximum(r, 0.0)

    def marginal_var(self, idx=None) -> np.ndarray:
        """Var Q(u_j) = K_jj - p_j + sigma^2 q_j (Seeger et al. sec. 2.2, for general K_jj).

        Parameters
        ----------
        idx : array of int or None
            Which training points; None: all.

        Returns
        -------
        ndarray
        """
        sl_ = slice(None) if idx is None else idx
        return self.residual(idx) + self.noise * self.q[sl_]

    def eligible(self) -> np.ndarray:
        """Points that may still be included: not active, and with a residual variance above a relative 1e-9.

        Returns
        -------
        ndarray of bool, shape (n,)
        """
        return (~self.active) & (self.diag - self.p > RESIDUAL_RTOL * self.diag)

    # ---- objectives of the current set -------------------------------------------
    def dtc_log_marginal(self) -> float:
        """log Q(y) of the PP / DTC approximation: -phi of Seeger et al. App. A.2 (with the 2 pi constant),
        phi = 1/2 (log|M| + (n - d) log sigma^2 + sigma^-2 (y^T y - beta^T beta) + n log 2 pi).

        Returns
        -------
        float
        """
        d = self.d
        logdetM = 2.0 * np.sum(np.log(np.diag(self.LM)[:d])) if d else 0.0
        bb = float(self.beta[:d] @ self.beta[:d])
        return -0.5 * (logdetM + (self.n - d) * np.log(self.noise) + (self.yy - bb) / self.noise + self.n * LOG_2PI)

    def vfe_bound(self) -> float:
        """F_V of Titsias (2009) eq. 9: log Q(y) minus the trace term tr(K - Q_nn) / (2 sigma^2).

        Returns
        -------
        float
        """
        return self.dtc_log_marginal() - 0.5 * float(np.sum(self.residual())) / self.noise

    def sb_primal(self) -> float:
        """Smola & Bartlett's Q at its minimiser with support I: -beta^T beta / 2 (Seeger et al. sec. 3).

        Returns
        -------
        float
        """
        return -0.5 * float(self.beta[: self.d] @ self.beta[: self.d])

    # ---- candidate extensions (O(n d) per candidate, batched) --------------------
    def extend(self, C: np.ndarray, KC: np.ndarray) -> Extension:
        """The App. A.1 quantities that including each candidate of a batch would create. Cost: 2 n d c + d^2 c
        flops for c candidates.

        Parameters
        ----------
        C : array of int, shape (c,)
            Candidate training rows.
        KC : array of shape (n, c)
            The kernel block K(X, X_C).

        Returns
        -------
        Extension
            The new diagonal of L, rows of V and L_M, and beta component per candidate.
        """
        C = np.asarray(C, dtype=np.int64)
        d = self.d
        Vd = self._Vd()
        l2 = self.diag[C] - self.p[C]
        if np.any(l2 <= 0):
            raise NumericalError("a candidate lies in the span of the active set (residual variance <= 0)")
        l = np.sqrt(l2)
        v = forward_row(Vd, Vd[:, C], l, KC)  # V's new row: the columns C of V are L^-1 K_{I,C} already
        # M' >= sigma^2 I, so the new squared pivot of L_M is >= sigma^2 in exact arithmetic
        lM, lMd = chol_extension(
            self.LM[:d, :d], Vd @ v, self.noise + np.einsum("ij,ij->j", v, v), floor=self.noise * 1e-12
        )
        beta = v.T @ self.y - lM.T @ self.beta[:d]
        return Extension(l=l, v=v, lM=lM, lMd=lMd, beta=beta / lMd)

    def w_row(self, d: int, v: np.ndarray, Vd: np.ndarray) -> np.ndarray:
        """Row d of L_M'^-1 V' once row d of L_M is set: w = l_Mi^-1 (v - V^T L_M^-T l_M) (App. A.1).

        Parameters
        ----------
        d : int
            The row.
        v : array
            The new row of V, for the training points or any other set of points.
        Vd : array
            The first d rows of V for the same points.

        Returns
        -------
        ndarray
        """
        lM, lMd = self.LM[d, :d], self.LM[d, d]
        if not d:
            return v / lMd
        return forward_row(
            Vd, sl.solve_triangular(self.LM[:d, :d], lM, lower=True, trans="T", check_finite=False), lMd, v
        )

    # ---- inclusion ---------------------------------------------------------------
    def include(self, i: int, kcol: np.ndarray) -> float:
        """Include training point ``i`` given its kernel column.

        Parameters
        ----------
        i : int
            The training row.
        kcol : array of shape (n,)
            K(X, x_i).

        Returns
        -------
        float
            The new component of beta.

        Raises
        ------
        InputError
            If the state is full (``d_max``) or the point is already active.
        NumericalError
            If the point's residual variance is too small to include it.
        """
        i = int(i)
        if self.d >= self.d_max:
            raise InputError(f"the active set is full (d_max={self.d_max})")
        if self.active[i]:
            raise InputError(f"point {i} is already in the active set")
        kcol = np.asarray(kcol, dtype=np.float64).reshape(self.n, 1)
        ext = self.extend(np.array([i]), kcol)
        d = self.d
        Vd = self._Vd()
        v = ext.v[:, 0]
        chol_append(self.L, d, Vd[:, i], ext.l[0])
        chol_append(self.LM, d, ext.lM[:, 0], ext.lMd[0])
        w = self.w_row(d, v, Vd)
        self.V[d] = v
        b = float(ext.beta[0])
        self.beta[d] = b
        self.p += v * v
        self.q += w * w
        self.mu += b * w
        self.indices[d] = i
        self.active[i] = True
        self.d = d + 1
        return b
