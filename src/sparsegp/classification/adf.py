"""The IVM's assumed-density-filtering state (Lawrence, Seeger & Herbrich 2003, eqs. 2-3).

Symbols as in NOTATION.md (the package's one notation table).

Q(u) = N(u | h, A) over the n training latents, A = (K^-1 + Pi)^-1 with site
precisions Pi = diag(p) non-zero on the active set I only. A is never formed:

    A = K - M^T M,  M = L^-1 Pi_I^{1/2} K_{I,.}  (d x n),  L L^T = B = I + Pi_I^{1/2} K_I Pi_I^{1/2},

and including point i appends one row to L and one row to M (eq. 3). h and
diag(A) follow from M's columns: h_j = c^T M_{.,j} with c_k = alpha_k l_kk / sqrt(p_k),
a_jj = K_jj - ||M_{.,j}||^2.

Delayed updating (paper sec. 3): the rows of M are computed per column only when
that column is needed (it is scored, or its point is included). ``done[j]`` counts
the rows of column j that are current; :meth:`IVMState.refresh` brings columns
up to date with one triangular solve per group, so a randomised run with a small
selection index never pays for the columns it does not look at.

The factor L grows by the package's one rank-one append (:func:`~sparsegp.linalg.chol_append`). M's
rows differ from the active set's V rows (:func:`~sparsegp.linalg.forward_row`) on purpose: delayed
updating brings groups of columns several rows forward at once with one BLAS-3 triangular solve, and
the full-greedy pass updates M in place, row by row, without allocating a row per inclusion.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import solve_triangular
from scipy.linalg.blas import dtrsm

from .._docstrings import fill
from ..errors import NumericalError
from ..linalg import chol_append
from .probit import Sites, site_update


@fill()
class IVMState:
    """The IVM's ADF state (Lawrence, Seeger & Herbrich 2003, eq. 3): the factors L (d x d) and M (d x n) of
    A = K - M^T M, the site parameters of the active points, and the current marginals h and diag(A) of all
    points, with delayed column updates. Memory: one d_max x n buffer for M plus O(d_max^2 + n).

    Parameters
    ----------
    diag : array of shape (n,)
        The kernel's diagonal K(x_i, x_i).
    y : array of shape (n,)
        Labels in {-1, +1}.
    bias : float
        The probit bias b.
    d_max : int
        The largest active set.
    block : callable
        ``block(rows, cols, disjoint)`` returns K(X[rows], X[cols]).
    column : callable or None
        ``column(i)`` returns K(X, x_i) (optional, for speed).

    Examples
    --------
    {toy_classification}
    >>> state = selection.state
    >>> state.active_set.shape, bool(state.log_marginal_likelihood() < 0)
    ((20,), True)
    """

    def __init__(self, diag, y, bias: float, d_max: int, block, column=None):
        self.kdiag = np.asarray(diag, dtype=np.float64)
        self.y = np.asarray(y, dtype=np.float64)
        self.n = self.y.shape[0]
        self.d_max = int(min(d_max, self.n))
        self.b = float(bias)
        self.block = block
        self.column = column or (lambda i: block(np.arange(self.n), [i], False)[:, 0])
        self.L = np.zeros((self.d_max, self.d_max), order="F")  # F order: trsm takes its blocks by columns
        # M stored transposed (n x d_max): a column of M, what delayed updating gathers, is contiguous
        self.MT = np.zeros((self.n, self.d_max))
        self.done = np.zeros(self.n, dtype=np.int64)  # rows of M current in each column
        self.h = np.zeros(self.n)
        self.a = self.kdiag.copy()
        self.I = np.zeros(self.d_max, dtype=np.int64)
        self.sqrtp = np.zeros(self.d_max)
        self.m_site = np.zeros(self.d_max)
        self.c = np.zeros(self.d_max)
        self.log_Z = np.zeros(self.d_max)
        self.active = np.zeros(self.n, dtype=bool)
        self.d = 0
        self._Lp: np.ndarray | None = None  # the padded contiguous copy of L (see _padded_factor)
        self._Lp_rows = 0
        # The full-greedy rows of M also kept row-major: their O(n d) products then stream through
        # memory instead of striding over MT's rows (BENCHMARKS.md, IVM implementation choices).
        self._head = np.zeros((min(self.d_max, 256), self.n))
        self._head_rows = 0  # rows of M held in _head (complete for every column)

    # ---- delayed column updates -------------------------------------------------------
    def refresh(self, cols=None) -> None:
        """Bring the columns ``cols`` of M (and h, diag(A) there) up to the current d.

        Parameters
        ----------
        cols : array of int or None
            The columns; None: every column.
        """
        if cols is None:  # full greedy: all columns are one step behind, so update in place, no gathers
            while self._all_done < self.d:
                self._advance_all(self._all_done)
            return
        cols = np.asarray(cols, dtype=np.int64)
        done = self.done[cols]
        one_behind = cols[done == self.d - 1]
        if one_behind.size:
            self._advance(one_behind, self.d - 1)
        stale = cols[done < self.d - 1]
        if stale.size:
            # Groups of similar progress, each solved from its smallest done (rows that were
            # already current are recomputed, not skipped): a few BLAS-3 calls instead of one per column.
            stale = stale[np.argsort(self.done[stale], kind="stable")]
            for group in np.array_split(stale, int(min(4, max(1, stale.size // 64)))):
                self._advance(group, int(self.done[group[0]]))

    @property
    def _all_done(self) -> int:
        return int(self.done.min())

    def _advance_all(self, s: int) -> None:
        """Row s of M for every column at once (columns with done > s are left as they are)."""
        i = self.I[s]
        row = self.sqrtp[s] * self.column(i)
        if s and s <= self._head_rows:
            row -= self.L[s, :s] @ self._head[:s]
        elif s:
            row -= self.MT[:, :s] @ self.L[s, :s]
        row /= self.L[s, s]
        if s == self._head_rows < self._head.shape[0]:
            self._head[s] = row
            self._head_rows = s + 1
        behind = self.done == s
        if behind.all():  # the full-greedy case: plain slices, no masked copies
            self.MT[:, s] = row
            self.h += self.c[s] * row
            self.a -= row * row
            self.done += 1
            return
        self.MT[behind, s] = row[behind]
        self.h[behind] += self.c[s] * row[behind]
        self.a[behind] -= row[behind] ** 2
        self.done[behind] = s + 1

    def _advance(self, cols, s: int) -> None:
        d = self.d
        disjoint = not self.active[cols].any()  # cols outside the active set: no diagonal entries in the block
        if d - s > 1 and 2 * s < d:
            newT = self._solve_from_start(cols, disjoint)[:, s:]
        else:
            # rows s..d-1 of M[:, cols]: L[s:d, s:d] new = sqrt(p) K[I_s:d, cols] - L[s:d, :s] M[:s, cols]
            Rt = self.block(cols, self.I[s:d], disjoint=disjoint) * self.sqrtp[s:d]  # transposed right-hand side
            if s:
                Rt -= self.MT[cols, :s] @ self.L[s:d, :s].T
            if d - s == 1:
                newT = Rt / self.L[s, s]
            else:  # BLAS trsm on Fortran-ordered operands: scipy's solve_triangular copies both
                newT = dtrsm(1.0, np.asfortranarray(self.L[s:d, s:d]), Rt.T, lower=1, overwrite_b=1).T
        self.MT[cols, s:d] = newT
        # h and diag(A) take only the rows each column did not have yet
        fresh = np.arange(s, d)[None, :] >= self.done[cols][:, None]
        if not fresh.all():
            newT = newT * fresh
        self.h[cols] += newT @ self.c[s:d]
        self.a[cols] -= np.einsum("ij,ij->i", newT, newT)
        self.done[cols] = d

    def _solve_from_start(self, cols, disjoint: bool) -> np.ndarray:
        """M[:d, cols]^T from scratch, L^-1 Pi_I^{1/2} K[I, cols], with one trsm on the padded factor.

        f2py hands BLAS only contiguous arrays, so a trsm on the block L[s:d, s:d] of the buffer costs
        a copy of it first (as much time as the solve itself at d ~ 2,000); the padded factor is kept
        contiguous instead (see :meth:`_padded_factor`) and far-behind columns are solved from row 0.
        """
        d = self.d
        Lp = self._padded_factor()
        B = np.zeros((Lp.shape[0], len(cols)), order="F")
        B[:d] = (self.block(cols, self.I[:d], disjoint=disjoint) * self.sqrtp[:d]).T
        return dtrsm(1.0, Lp, B, lower=1, overwrite_b=1)[:d].T

    def _padded_factor(self) -> np.ndarray:
        """[[L, 0], [0, I]] of size d rounded up to a multiple of 128, F-contiguous, grown by whole blocks.

        Rows beyond d solve to zero against a zero right-hand side, so rows < d are those of L^-1 b.
        """
        d, Lp = self.d, self._Lp
        if Lp is None or Lp.shape[0] < d:
            size = min(self.d_max, -(-d // 128) * 128)
            Lp = np.asfortranarray(np.eye(size))
            Lp[:d, :d] = self.L[:d, :d]
            self._Lp, self._Lp_rows = Lp, d
        while self._Lp_rows < d:  # rows appended since the last call
            r = self._Lp_rows
            Lp[r, : r + 1] = self.L[r, : r + 1]
            self._Lp_rows = r + 1
        return Lp

    # ---- scores and inclusion -------------------------------------------------------
    def sites(self, cols) -> Sites:
        """Eq. 2 at the current marginals of ``cols`` (which must be current: :meth:`refresh`).

        Parameters
        ----------
        cols : array of int
            Training rows.

        Returns
        -------
        Sites
        """
        cols = np.asarray(cols, dtype=np.int64)
        return site_update(self.y[cols], self.h[cols], self.a[cols], self.b)

    def include(self, i: int) -> None:
        """Include point i: the eq. 2 site update and the eq. 3 factor update, O(d) here and the rest delayed.

        Parameters
        ----------
        i : int
            The training row.

        Raises
        ------
        NumericalError
            If the active set is full, the point is already in it, or its site precision is not positive (it
            lies in the span of the active set).
        """
        i = int(i)
        if self.d >= self.d_max:
            raise NumericalError(f"the active set is full (d_max = {self.d_max})")
        if self.active[i]:
            raise NumericalError(f"point {i} is already in the active set")
        self.refresh([i])
        s = self.sites([i])
        a_ii = self.a[i]
        nu, alpha = float(s.nu[0]), float(s.alpha[0])
        p = nu / (1.0 - a_ii * nu)
        if not (np.isfinite(p) and p > 0.0 and a_ii > 0.0):
            raise NumericalError(
                f"including point {i} gives site precision {p!r} (marginal variance {a_ii!r}); the point lies in "
                "the span of the active set or the kernel matrix is numerically singular - add a small white-noise "
                "term to the kernel or stop at a smaller active set"
            )
        d = self.d
        sp = np.sqrt(p)
        l_dd = np.sqrt(1.0 + p * a_ii)  # = sqrt(1 + p K_ii - l^T l) with l = sqrt(p) M_{.,i}
        chol_append(self.L, d, sp * self.MT[i, :d], l_dd)  # l = L^-1 Pi_I^{1/2} k_I,i = sqrt(p) M_{.,i}
        self.sqrtp[d] = sp
        self.m_site[d] = self.h[i] + alpha / nu
        self.c[d] = alpha * l_dd / sp
        self.log_Z[d] = float(s.log_Z[0])
        self.I[d] = i
        self.active[i] = True
        self.d = d + 1

    # ---- the fitted approximation ---------------------------------------------------------
    @property
    def active_set(self) -> np.ndarray:
        return self.I[: self.d].copy()

    def log_marginal_likelihood(self, d: int | None = None) -> float:
        """log Z_ADF = sum_i log Phi(z_i): the product of the inclusions' normalisers. It equals the marginal
        likelihood of the Gaussian approximation, log N(m_I | 0, K_I + Pi_I^-1) plus the sites' constants, and is
        exact for d = 1.

        Parameters
        ----------
        d : int or None
            Of the first d inclusions; None: all.

        Returns
        -------
        float
        """
        d = self.d if d is None else d
        return float(np.sum(self.log_Z[:d]))

    def predictor(self, d: int | None = None) -> dict:
        """What eq. 5 needs at test points, for the first ``d`` inclusions (an ADF prefix is itself an IVM):
        beta = Pi_I^(1/2) B^-1 Pi_I^(1/2) m_I; the variance uses L^-1 Pi_I^(1/2) k(x*).

        Parameters
        ----------
        d : int or None
            The prefix; None: every inclusion.

        Returns
        -------
        dict
            ``active``, ``L``, ``sqrtp`` and ``beta``, the arguments of :func:`predict_latent`.
        """
        d = self.d if d is None else int(d)
        L = self.L[:d, :d]
        sp = self.sqrtp[:d]
        w = solve_triangular(L, sp * self.m_site[:d], lower=True, check_finite=False)
        beta = sp * solve_triangular(L, w, lower=True, trans="T", check_finite=False)
        return {"active": self.I[:d].copy(), "L": L.copy(), "sqrtp": sp.copy(), "beta": beta}


def site_means(L, sqrtp, beta):
    """The site means m_I back from eq. 5's weights: beta = Pi^1/2 B^-1 Pi^1/2 m_I with B = L L^T,
    so m_I = Pi^-1/2 L L^T Pi^-1/2 beta."""
    return (L @ (L.T @ (beta / sqrtp))) / sqrtp


@fill()
def predict_latent(Kxs, kss, L, sqrtp, beta):
    """Eq. 5: the latent predictive mean mu(x*) = beta^T k(x*) and variance
    sigma^2(x*) = k(x*, x*) - v^T v with v = L^-1 Pi_I^(1/2) k(x*).

    Parameters
    ----------
    Kxs : array of shape (d, t)
        K(X_I, X*), the active points against the test points.
    kss : array of shape (t,)
        k(x*, x*).
    L, sqrtp, beta : ndarray
        From :meth:`IVMState.predictor`.

    Returns
    -------
    mean, var : ndarray of shape (t,)

    Examples
    --------
    {toy_classification}
    >>> from sparsegp.classification import predict_latent
    >>> p = selection.state.predictor()
    >>> kernel = SquaredExponential(1.0); X_test = np.array([[2.0, 2.0], [-2.0, -2.0]])
    >>> mean, var = predict_latent(np.asarray(kernel.K(X[p["active"]], X_test)), np.ones(2), p["L"], p["sqrtp"],
    ...                            p["beta"])
    >>> np.sign(mean)
    array([ 1., -1.])
    """
    mean = beta @ Kxs
    V = solve_triangular(L, sqrtp[:, None] * Kxs, lower=True, check_finite=False)
    var = np.maximum(kss - np.einsum("ij,ij->j", V, V), 0.0)
    return mean, var
