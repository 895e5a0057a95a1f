"""The variational fit's leave-one-out check sample: each sampled training row's latent marginal with its own site
removed (:meth:`~sparsegp.classification.svgp.WhitenedGaussian.loo_cavity`), the mean log predictive density the
likelihood gives those rows, and the rule that ends the model's own size by it (:class:`LeaveOneOutRule`).

The bound over 59,000 MNIST rows kept gaining about FINAL * tol nats per row per iteration for hundreds of
iterations at m = 1,024, about 18 s each. The check sample's leave-one-out density is the fit's own estimate of
its held-out quality, and the likelihood's ``log_predictive_density`` reads it, so the rule is the same for
labels, real targets and counts (BENCHMARKS.md, "The model's own size ended by its leave-one-out check")."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from .training import PROGRESS_WINDOW

CHECK_BATCH = 1024  # rows per leave-one-out evaluation (one compiled shape beside the last batch's)


def loo_marginals(family, params, Xs: np.ndarray, y: np.ndarray, rows: np.ndarray):
    """The leave-one-out latent marginals (mean, variance), both (len(rows), L), of ``rows`` of the scaled inputs
    ``Xs`` with targets ``y`` under the variational ``family`` at ``params``."""
    post = family.posterior(params)
    batches = np.array_split(rows, max(1, -(-rows.size // CHECK_BATCH)))
    likelihood = params["likelihood"]
    cavities = [family.loo_cavity(post, likelihood, jnp.asarray(Xs[b]), jnp.asarray(y[b])) for b in batches]
    return tuple(np.concatenate([np.asarray(c[k]) for c in cavities]) for k in (0, 1))


def loo_log_density(family, params, Xs: np.ndarray, y: np.ndarray, rows: np.ndarray) -> float:
    """The mean over ``rows`` of log p(y_i | the other rows), by the likelihood's predictive of each row's
    leave-one-out latent marginal (:func:`loo_marginals`)."""
    mean, var = loo_marginals(family, params, Xs, y, rows)
    logp = params["likelihood"].log_predictive_density(jnp.asarray(mean), jnp.asarray(var), jnp.asarray(y[rows]))
    return float(np.mean(np.asarray(logp)))


class LeaveOneOutRule:
    """An optimiser callback, ``rule(iteration, value, params) -> stop``, for the model's own size: every ``window``
    iterations from ``after`` on, the check sample's mean leave-one-out log density (:func:`loo_log_density`);
    True (converged) once, since the reading before, it gained less than ``per_row`` nats per row per iteration
    while the objective ``value`` fell by less than ``objective_per_iteration`` per iteration (the rule of a size
    the growth passes through: a stage still far from its optimum is not ended by a density that happens to
    stall). ``readings`` keeps (iteration, objective, density) for each reading; ``reason`` says why it stopped,
    once it has."""

    def __init__(self, family, Xs, y, rows, per_row: float, objective_per_iteration: float, after: int = 0,
                 window: int = PROGRESS_WINDOW):  # fmt: skip
        self.family, self.Xs, self.y, self.rows = family, Xs, y, rows
        self.per_row, self.objective_per_iteration = float(per_row), float(objective_per_iteration)
        self.after, self.window = int(after), int(window)
        self.readings: list[tuple[int, float, float]] = []
        self.reason = ""

    def __call__(self, iteration: int, value: float, params) -> bool:
        if iteration < self.after or iteration % self.window:
            return False
        density = loo_log_density(self.family, params, self.Xs, self.y, self.rows)
        previous = self.readings[-1] if self.readings else None
        self.readings.append((iteration, float(value), density))
        if previous is None or not np.isfinite(density):
            return False
        steps = iteration - previous[0]
        fall, gain = (previous[1] - float(value)) / steps, (density - previous[2]) / steps
        if fall >= self.objective_per_iteration or gain >= self.per_row:
            return False
        self.reason = (
            f"leave-one-out check converged: over iterations {previous[0]}-{iteration} the mean log predictive "
            f"density of {self.rows.size} sampled training rows gained {gain:.3g} nats per row per iteration (less "
            f"than {self.per_row:.3g}), at {density:.6g}, and the objective fell by {fall:.3g} per iteration (less "
            f"than {self.objective_per_iteration:.3g})"
        )
        return True
