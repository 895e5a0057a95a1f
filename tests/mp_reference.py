"""Sparse predictions (QC&R eqs. 28-29, 39; DTC) evaluated in mpmath at many digits.

An independent route from the library's: the float64 inputs (X, Z, test points, y, the squared
exponential's length-scales and variance, the noise, the relative jitter on K_mm) are taken as
exact, every kernel value is computed in high precision, and C^-1 x is applied by Woodbury on the
support set U (Z, or Z plus the test point for the augmented method):
    C = K_nU K_UU^-1 K_Un + sigma^2 I,   C^-1 x = (x - K_nU (sigma^2 K_UU + K_Un K_nU)^-1 K_Un x) / sigma^2.
With U = Z + {x*} and K_UU = [[K_mm + jitter, k_u*], [k_u*^T, k_**]], K_nU K_UU^-1 K_Un is
Q_nn + v_* v_*^T / c_* (block inversion), the augmented prior of eq. 28. "standard" is DTC's
prediction, mean q^T C^-1 y and variance k_** - q^T C^-1 q with q = K_nm K_mm^-1 k_u(x_*).
"""

from __future__ import annotations

import mpmath
import numpy as np

# Problems of reliability items 8-9: (D, n, m, length-scale); cond(K_mm) = 2.6e4 and 1.4e11.
PROBLEMS = {"well conditioned": (2, 120, 10, 3.4), "ill conditioned": (1, 200, 15, 0.215)}


def problem(D, n, m, seed=0):
    """(X, y, Z, Xs): y = sin(3 x1) (+ x2^2 / 2) noise-free, Z the first m rows, 16 test points
    (12 uniform over the inputs' box widened by 0.2, two further training rows, two inducing inputs)."""
    r = np.random.default_rng(seed)
    X = r.uniform(-1, 1, size=(n, 1)) if D == 1 else r.uniform(-3, 3, size=(n, D))
    y = np.sin(3 * X[:, 0]) + (X[:, 1] ** 2 / 2 if D > 1 else 0.0)
    Z = X[:m]
    Xs = np.vstack([r.uniform(X.min(0) - 0.2, X.max(0) + 0.2, size=(12, D)), X[m : m + 2], Z[:2]])
    return X, y, Z, Xs


def _kernel(lengthscale, variance):
    ell = [mpmath.mpf(float(v)) for v in lengthscale]
    var = mpmath.mpf(float(variance))

    def k(a, b):
        return var * mpmath.exp(
            -sum(((mpmath.mpf(float(p)) - mpmath.mpf(float(q))) / e) ** 2 for p, q, e in zip(a, b, ell)) / 2
        )

    return k


def predictions(X, Z, Xs, y, lengthscale, variance, noise, jitter, method, dps=40):
    """Latent means and variances at the rows of Xs, as Python floats from ``dps``-digit arithmetic."""
    if method not in ("augmented", "nystrom", "standard"):
        raise ValueError(method)
    X, Z, Xs, y = (np.asarray(a, dtype=float) for a in (X, Z, Xs, y))
    lengthscale = np.broadcast_to(np.asarray(lengthscale, dtype=float), (X.shape[1],))
    fdot = mpmath.fdot
    with mpmath.workdps(dps):
        k = _kernel(lengthscale, variance)
        s2 = mpmath.mpf(float(noise))
        m = len(Z)
        Kzz = mpmath.matrix([[k(a, b) for b in Z] for a in Z])
        shift = mpmath.mpf(float(jitter)) * sum(Kzz[i, i] for i in range(m)) / m
        for i in range(m):
            Kzz[i, i] += shift
        cols = [[k(a, b) for a in X] for b in Z]  # columns of K_nm
        gram = [[fdot(ci, cj) for cj in cols] for ci in cols]  # K_mn K_nm
        yv = [mpmath.mpf(float(v)) for v in y]
        means, variances = [], []
        for xs in Xs:
            ks = [k(a, xs) for a in X]
            kss = k(xs, xs)
            kz = [k(a, xs) for a in Z]
            U = cols + [ks] if method == "augmented" else cols
            size = len(U)
            inner = mpmath.matrix(size, size)
            for i in range(size):
                for j in range(size):
                    KUU = (Kzz[i, j] if j < m else kz[i]) if i < m else (kz[j] if j < m else kss)
                    KK = gram[i][j] if i < m and j < m else fdot(U[i], U[j])
                    inner[i, j] = s2 * KUU + KK

            LU, piv = mpmath.mp.LU_decomp(inner)

            def Cinv(x, U=U, LU=LU, piv=piv):
                w = mpmath.mp.U_solve(LU, mpmath.mp.L_solve(LU, mpmath.matrix([fdot(u, x) for u in U]), piv))
                return [(x[r] - fdot([u[r] for u in U], w)) / s2 for r in range(len(x))]

            if method == "standard":
                a = mpmath.lu_solve(Kzz, mpmath.matrix(kz))
                ks = [fdot(row, a) for row in zip(*cols)]
            means.append(float(fdot(ks, Cinv(yv))))
            variances.append(float(kss - fdot(ks, Cinv(ks))))
    return np.array(means), np.array(variances)
