"""The IVM's kernel learnt by the approximate marginal likelihood of its Gaussian approximation, interleaved with
the selection (the sparse model selection of Seeger, Williams & Lawrence 2003, sec. 4, applied to the IVM as in
Lawrence, Seeger & Herbrich 2003, sec. 4 and Lawrence et al. 2005).

After a selection with the current kernel, the active set I carries Gaussian sites N(u_i | m_i, 1 / p_i) (ADF,
eq. 2). With I and the sites held, the kernel's hyper-parameters maximise the sites' evidence under the prior

    log N(m_I | 0, K_II + Pi^-1),   Pi = diag(p_I)

(plus the kernel's log hyper-prior), by L-BFGS-B. The selection then reruns with the new kernel (a new active set
and new sites), and so on for a fixed number of rounds: each round's objective differs, as the papers' alternation.
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from .._config import LOG_2PI
from ..classification.adf import site_means
from ..linalg import cholesky_fixed, solve_lower
from ..priors import negative_log_posterior
from .training import minimize

ROUNDS = 4  # selection / kernel rounds; the banana and MNIST figures in BENCHMARKS.md settle within three
ROUND_ITER = 100  # L-BFGS-B iterations per round


class NegativeSiteEvidence:
    """-log N(m_I | 0, K_II + diag(v_I)) - log p(kernel) as ``f(params, X_I, m_I, v_I)`` (hashable)."""

    def __eq__(self, other):
        return type(self) is type(other)

    def __hash__(self):
        return hash(type(self).__name__)

    def __call__(self, params, X, m, v):
        kernel = params["kernel"]
        L = cholesky_fixed(kernel.K(X) + jnp.diag(v), 1e-10)
        a = solve_lower(L, m)
        log_evidence = -0.5 * (a @ a) - jnp.sum(jnp.log(jnp.diag(L))) - 0.5 * m.size * LOG_2PI
        return negative_log_posterior(log_evidence, params)


class LearntKernel(NamedTuple):
    """The kernel after the rounds, and each round's active-set size and negative site evidence."""

    kernel: object
    history: list


def sites(selection):
    """(active rows, site means m_I, site variances 1 / p_I) of an IVM selection."""
    pred = selection.state.predictor(selection.d)
    return pred["active"], site_means(pred["L"], pred["sqrtp"], pred["beta"]), 1.0 / pred["sqrtp"] ** 2


def learn_kernel(
    kernel, X, select, *, scale: float = 1.0, rounds: int = ROUNDS, max_iter: int = ROUND_ITER
) -> LearntKernel:
    """``rounds`` of: ``select(kernel)`` (an IVM selection), then the kernel that maximises its sites' evidence.

    The optimiser works on the inputs divided by ``scale`` (their spread), so that its steps and bounds, and the
    kernel it finds, follow the units of X."""
    history = []
    lower, upper = kernel.for_scaled_inputs(scale).raw_bounds()
    for _ in range(rounds):
        active, m, v = sites(select(kernel))
        params, report = minimize(
            NegativeSiteEvidence(),
            {"kernel": kernel.for_scaled_inputs(scale)},
            args=(jnp.asarray(X[active] / scale), jnp.asarray(m), jnp.asarray(v)),
            mask={"kernel": kernel.trainable_mask()},
            lower={"kernel": lower},
            upper={"kernel": upper},
            max_iter=max_iter,
        )
        kernel = params["kernel"].for_scaled_inputs(1.0 / scale)
        history.append({"active": int(np.size(active)), "objective": float(report.objective)})
    return LearntKernel(kernel, history)


__all__ = ["NegativeSiteEvidence", "LearntKernel", "learn_kernel", "sites", "ROUNDS"]
