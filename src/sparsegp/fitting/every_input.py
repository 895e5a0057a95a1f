"""The variational fit's stage where every distinct training input is inducing (``inducing="auto"`` on small data):
the full variational GP, q in its site form (:mod:`sparsegp.classification.site_form`), optimised to its optimum
by natural steps inside every evaluation, and L-BFGS-B over the kernel, the constant mean b and the likelihood's
parameters only.

Where the rows' distinct inputs are few, growing m through sizes that each re-fit q's m (m + 3) / 2 entries by
L-BFGS costs more than the whole GP: on 300 rows the growth went 128 then 209 inputs in 182 L-BFGS iterations,
most of the time SciPy's L-BFGS-B over q's 22,000 entries (BENCHMARKS.md). Here q is 2 n numbers, each natural
step one factorisation of an n x n matrix on the host (LAPACK), warm from the evaluation before, and L-BFGS sees a
handful of parameters (Salimbeni, Eleftheriadis & Hensman 2018, sec. 4: natural steps for q, a first-order
method for the rest). The fitted q is handed to the rest of the fit in ``svgp``'s whitened form at Z = X, so
prediction, the leave-one-out check and the model file are those of every other size.
"""

from __future__ import annotations

from functools import lru_cache

import jax
import jax.numpy as jnp
import numpy as np

from ..approximations.exact_host import form_cotangents, on_host, scaled_exponential, squared_differences
from ..classification import site_form, svgp
from ..linalg import single_threaded_blas, with_fixed_jitter
from ..priors import log_hyper_prior
from .training import Interrupted, minimize

INNER_TOL = 1e-9  # the natural steps end once a step gains less than this many nats per row
INNER_STEPS = 50  # and after at most this many steps in one evaluation
SMALLEST_STEP = 1.0 / 64  # or once a step this short no longer raises the bound (the growth's natural steps too)
ANDERSON_DEPTH = 5  # the accepted steps the extrapolation of the sites reads


@jax.jit
def _gram(kernel, X, jitter):
    """K + jitter mean(diag K) I at the training inputs: the whitened form's K_uu at Z = X."""
    return with_fixed_jitter(kernel.K(X), jitter)


@jax.jit
def _row_terms(likelihood, g_mu, mean, var, y, w):
    """sum_i w_i E_q[log p(y_i | f_i)] and the weighted sites (w dE/dmu, -2 w dE/dv) at the marginals
    (f's mean ``g_mu + mean``)."""
    return svgp.rows_and_sites(likelihood, g_mu + mean, var, y, w)


def _partial_bound(theta, X, y, w, g_mu, var, G, jitter):
    """A function of the kernel, b and the likelihood whose gradient at q held is the bound's: the rows' term at
    the marginals held, plus <dL/dK, K(theta)> (:func:`~sparsegp.classification.site_form.kernel_cotangent`);
    and log p(theta), the hyper-priors."""
    K = _gram(theta["kernel"], X, jitter)
    rows = jnp.sum(w * theta["likelihood"].expected_log_density(g_mu + theta["mean"], var, y))
    prior = log_hyper_prior(theta)
    return rows + jnp.sum(G * K) + prior, prior


@jax.jit
def _partial_grad(theta, X, y, w, g_mu, var, G, jitter):
    """(-d/dtheta of :func:`_partial_bound`, log p(theta)): the trainer's gradient, negated in the same program."""
    grad, prior = jax.grad(_partial_bound, has_aux=True)(theta, X, y, w, g_mu, var, G, jitter)
    return jax.tree_util.tree_map(jnp.negative, grad), prior


@lru_cache(maxsize=1)
def _host_programs():
    """The two JAX programs of a host evaluation (:class:`ProfiledSites` with ``host``): the kernel's host form
    (length-scales, variance, constant) from theta; and the gradient of -(L + log p(theta)) in theta from the
    bound's cotangents of those values and of b, with log p(theta)."""

    def naturals(theta):
        form = theta["kernel"].host_parts()
        return form.lengthscale, form.variance, form.constant

    def chained(theta, cotangents, mean_cotangent):
        # the bound is an input: its gradient is J^T cotangents plus b's; the hyper-priors' is differentiated here
        prior = log_hyper_prior(theta)
        linear = sum(jnp.sum(c * v) for c, v in zip(cotangents, naturals(theta)))
        return -(linear + jnp.sum(mean_cotangent * theta["mean"]) + prior), prior

    return jax.jit(naturals), jax.jit(jax.grad(chained, has_aux=True))


class ProfiledSites:
    """``value_and_grad(theta) -> (-(L + log p(theta)), gradient)`` over ``theta`` = {kernel, likelihood, mean}
    with q(g) at its optimum for theta: the sites moved by natural steps from where the previous evaluation left
    them (the prior's at the first), until a step gains less than INNER_TOL nats per row. The rows ``X`` (inputs
    scaled), ``y`` and weights ``w``, NumPy; ``latents`` the latent functions.

    On a CPU, for a kernel with a host form (:meth:`~sparsegp.kernels.Kernel.host_form`) and a likelihood without
    learnt parameters, K and its gradient are computed on the host (``host``; the exact GP's host path,
    :mod:`sparsegp.approximations.exact_host`): dL/dell_d = v sum(G o E o D_d) / ell_d^3, dL/dv = sum(G o E) +
    j tr G, dL/dc = sum(G) + j tr G for K = v E + c + j (v + c) I, E = exp(-sum_d D_d / 2 ell_d^2), D_d the
    squared differences of coordinate d, G = dL/dK (:func:`~sparsegp.classification.site_form.kernel_cotangent`),
    and dL/db the rows' sum of w dE/dmu; elsewhere both are JAX programs (:func:`_gram`, :func:`_partial_grad`).
    """

    def __init__(self, X, y, w, latents: int, jitter: float = svgp.JITTER, kernel=None, likelihood=None):
        self.X, self.y, self.w = jnp.asarray(X), jnp.asarray(y), jnp.asarray(w)
        self.jitter, self.floor = float(jitter), INNER_TOL * float(np.sum(w))
        n = X.shape[0]
        self.lam, self.nu = np.zeros((n, latents)), np.zeros((n, latents))
        self.steps, self.first = 0, float("nan")  # the bound (with log p(theta)) at the first evaluation's start
        self.host = (
            kernel is not None
            and likelihood is not None
            and not jax.tree_util.tree_leaves(likelihood)  # nothing of the likelihood's to differentiate
            and on_host(kernel, 0.0, X)  # the exact GP's test for the same host form: a CPU, n^2 D bounded
        )
        if self.host:
            self._squares = squared_differences(np.asarray(X, dtype=np.float64))
            self._naturals, self._pull = _host_programs()

    def _gram(self, theta):
        """(K + jitter mean(diag K) I, the host form's values and E, or None on the JAX path), K NumPy."""
        if not self.host:
            return np.asarray(_gram(theta["kernel"], self.X, self.jitter)), None
        ell, v, c = (np.asarray(a, dtype=np.float64) for a in self._naturals(theta))
        E, ell_d = scaled_exponential(self._squares, ell)
        K = float(v) * E + float(c)
        K[np.diag_indices_from(K)] += self.jitter * (float(v) + float(c))  # diag K = v + c at every input
        return K, (E, ell, ell_d, float(v))

    def _at(self, theta, K, lam, nu):
        """(bound, q, the rows' target sites, the rows' w dE/dmu) at the sites ``lam``, ``nu``."""
        q = site_form.posterior(K, lam, nu)
        e, g, lam_rows = jax.device_get(_row_terms(theta["likelihood"], q.mu, theta["mean"], q.var, self.y, self.w))
        return float(e) - q.kl, q, site_form.target_sites(q, g, lam_rows), g

    def optimum(self, theta):
        """(K, q, the bound, the rows' w dE/dmu at q, the host form's parts) with q moved to its optimum for
        ``theta``: from the accepted steps' sites and targets the next sites are their Anderson extrapolation
        (:func:`~sparsegp.classification.site_form.anderson`), where that loses the plain step, and where that
        loses too, steps of half the size (as :func:`~sparsegp.fitting.variational.natural_q`'s); a step that
        changes the bound by less than the floor ends them."""
        K, parts = self._gram(theta)
        value, q, targets, g = self._at(theta, K, self.lam, self.nu)
        if self.steps == 0:
            self.first = value + float(log_hyper_prior(theta))
        floor = self.floor
        shape, history, rho = self.lam.shape, [], 1.0
        for _ in range(INNER_STEPS):
            x = site_form.pack(self.lam, self.nu)
            history = [*history[-ANDERSON_DEPTH:], (x, site_form.pack(*targets) - x)]
            extrapolated = rho == 1.0 and len(history) > 1
            step = site_form.anderson(history) if extrapolated else x + rho * history[-1][1]
            lam, nu = site_form.unpack(step, shape)
            v, q_t, t_t, g_t = self._at(theta, K, lam, nu)
            self.steps += 1
            if not np.isfinite(v) or v < value - floor:  # a step that lost: plainer, then shorter
                history = []  # the extrapolation starts again from this point's plain step
                if not extrapolated:
                    rho *= 0.5
                    if rho < SMALLEST_STEP:
                        break
                continue
            if v <= value + floor:  # converged: the step neither gains nor loses
                if v > value:
                    self.lam, self.nu, value, q, g = lam, nu, v, q_t, g_t
                break
            rho = min(1.0, 2.0 * rho)
            self.lam, self.nu, value, q, targets, g = lam, nu, v, q_t, t_t, g_t
        return K, q, value, g, parts

    def __call__(self, theta):
        K, q, value, g, parts = self.optimum(theta)
        G = site_form.kernel_cotangent(q)
        if parts is None:
            grad, prior = _partial_grad(theta, self.X, self.y, self.w, jnp.asarray(q.mu), jnp.asarray(q.var),
                                        jnp.asarray(G), self.jitter)  # fmt: skip
            return -(value + float(prior)), grad
        g_ell, g_v, g_c = form_cotangents(self._squares, G, *parts)
        trace = self.jitter * float(np.trace(G))  # the jitter j (v + c) I
        cotangents = (g_ell, g_v + trace, g_c + trace)
        grad, prior = self._pull(theta, cotangents, np.sum(g, axis=0))
        return -(value + float(prior)), grad

    def whitened(self, theta):
        """(q_mu, q_sqrt) of ``svgp``'s whitened q at Z = X for the sites at their optimum for ``theta``."""
        K = self.optimum(theta)[0]
        q_mu, q_sqrt = site_form.to_whitened(K, self.lam, self.nu)
        return jnp.asarray(q_mu), jnp.asarray(q_sqrt)


def fit_every_input(config, X, y, w, theta: dict, mask: dict, bounds, desc: str, progress: float, after: int,
                    callback=None):  # fmt: skip
    """L-BFGS-B over ``theta`` (kernel, likelihood, mean) of the bound with q at its optimum (:class:`ProfiledSites`)
    on the rows ``X`` (inputs scaled), ``y``, ``w``, with the fit's progress rule (``progress`` nats per iteration,
    read after ``progress_after``) and ``config``'s iterations; ``callback(iteration, value, params)`` sees the
    whole parameter dict (Z = X, q whitened). Returns (the parameter dict, the optimiser's report, natural steps
    taken, the bound with its hyper-prior at the start: q the prior's, theta the first); a KeyboardInterrupt comes out as :class:`~.training.Interrupted` with the whole dict at the best
    point evaluated."""
    profiled = ProfiledSites(X, y, w, int(np.shape(theta["mean"])[0]), config.family.jitter, theta["kernel"],
                             theta["likelihood"])  # fmt: skip
    Z = jnp.asarray(X)

    def whole(t) -> dict:
        q_mu, q_sqrt = profiled.whitened(t)
        return dict(t, Z=Z, q_mu=q_mu, q_sqrt=q_sqrt)

    # only the user's callback and the checkpointer read the parameters (the wall-time clock counts iterations)
    reads = config.callback is not None or config.checkpoint is not None
    seen = callback if callback is None or not reads else (lambda i, v, t: callback(i, v, whole(t)))
    held = {k: mask[k] for k in theta}
    lower, upper = ({k: b[k] for k in theta} for b in bounds)
    try:
        # each step is a few LAPACK calls between small JAX programs, where OpenBLAS's second thread cost more
        # than it saved (BENCHMARKS.md, "Every input inducing")
        with single_threaded_blas():
            best, report = minimize(
                None, theta, mask=held, lower=lower, upper=upper, max_iter=config.max_iter, verbose=config.verbose,
                desc=desc, value_and_grad=profiled, callback=seen, progress=progress, progress_after=after,
            )  # fmt: skip
            whole_best = whole(best)
    except Interrupted as stop:
        stop.params = whole(stop.params)
        raise
    return whole_best, report, profiled.steps, profiled.first


__all__ = ["ProfiledSites", "fit_every_input", "INNER_TOL", "INNER_STEPS"]
