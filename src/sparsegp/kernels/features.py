"""Draws of a GP prior as random features (Rahimi & Recht 2007), the prior half of pathwise sampling.

A stationary kernel k(r) = variance * E_omega[cos(omega . r)] with omega from its spectral density (Bochner), so

    f(x) = sum_l a_l cos(omega_l . x + b_l),  a_l ~ N(0, 2 variance / L),  b_l ~ U(0, 2 pi),

has E[f(x) f(x')] = k(x - x') for any number L of features. Every draw here has features of its own, so
the draws' covariance is the kernel's exactly (over draws), not that of one fixed feature set; L sets how
close each draw's marginal is to Gaussian (a Gaussian scale mixture that tightens as L grows). A linear
kernel's features are the inputs themselves and a constant's one constant: both exact.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

ROW_BLOCK_ENTRIES = 1 << 22  # rows x draws x features evaluated at once (32 MiB of float64)


class PriorDraws(NamedTuple):
    """``S`` independent draws of a zero-mean GP prior, each
    f_s(x) = sum_l amp_sl cos(omega_sl . x + phase_sl) + lin_s . x + const_s."""

    omega: np.ndarray  # (S, L, D)
    phase: np.ndarray  # (S, L)
    amp: np.ndarray  # (S, L)
    lin: np.ndarray  # (S, D)
    const: np.ndarray  # (S,)

    def __call__(self, X) -> np.ndarray:
        """The draws at the rows of ``X`` (n, D), shape (n, S)."""
        X = np.asarray(X, dtype=np.float64)
        out = X @ self.lin.T + self.const
        S, L = self.amp.shape
        if L == 0:
            return out
        step = max(1, ROW_BLOCK_ENTRIES // (S * L))
        for i in range(0, X.shape[0], step):
            arg = np.einsum("nd,sld->nsl", X[i : i + step], self.omega) + self.phase
            out[i : i + step] += np.einsum("sl,nsl->ns", self.amp, np.cos(arg))
        return out

    def plus(self, other: PriorDraws) -> PriorDraws:
        """The draws of the sum of this prior and an independent one."""
        return PriorDraws(
            np.concatenate([self.omega, other.omega], axis=1),
            np.concatenate([self.phase, other.phase], axis=1),
            np.concatenate([self.amp, other.amp], axis=1),
            self.lin + other.lin,
            self.const + other.const,
        )


def none(S: int, D: int) -> PriorDraws:
    """The zero function, ``S`` times (a sum's starting point)."""
    return PriorDraws(np.zeros((S, 0, D)), np.zeros((S, 0)), np.zeros((S, 0)), np.zeros((S, D)), np.zeros(S))


def cosines(frequencies: np.ndarray, variance: float, rng: np.random.Generator) -> PriorDraws:
    """Draws of a stationary prior of amplitude ``variance`` from its spectral ``frequencies`` (S, L, D)."""
    S, L, D = frequencies.shape
    phase = rng.uniform(0.0, 2.0 * np.pi, size=(S, L))
    amp = np.sqrt(2.0 * variance / L) * rng.standard_normal((S, L))
    return PriorDraws(frequencies, phase, amp, np.zeros((S, D)), np.zeros(S))


def constant(variance: float, S: int, D: int, rng: np.random.Generator) -> PriorDraws:
    """Draws of a constant of prior variance ``variance``."""
    return none(S, D)._replace(const=np.sqrt(variance) * rng.standard_normal(S))
