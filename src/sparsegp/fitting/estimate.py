"""The fit's estimate of its own wall time: before the climb, and as it goes.

A :class:`Clock` watches the optimiser's runs (a monitor of :class:`~.config.FitConfig`: each run's start and
each of its iterations) and estimates the seconds the fit has left from what it has measured. With
``inducing="auto"`` the first estimate is made when the first size's run ends, before the set grows (where the
first size is already the last, the growth's cap or a fixed set: at that run's FIRST_READING-th iteration);
then at the start of every run and every REREAD iterations. The model, its constants set on the default fits of
BENCHMARKS.md, "The fit's estimate of its wall time":

* an iteration at a size m' costs what one at the size last measured cost, times (m' / m)^SIZE_EXPONENT (the
  bound's 2 n m^2 flops dominate only at large m; on those fits a doubling of m cost 2.3 to 3.4 times more per
  iteration), measured from each run's second iteration on (the first compiles the size's program);
* the sizes to come: the growth (:mod:`.growth`) doubles m up to ``max_inducing`` unless the doubling to the
  current size promised less than GAIN_PER_ROW nats per row (the variational fit's growth: ``tol``; then it
  stops here, converging this size); a size converged further after its doubling gained less than that is the
  last, and one converged further because its own doubling promised little is doubled once more;
* a run at a size that may not be the last takes as many iterations as such runs took so far (the first, as the
  first size's run); the last size's remaining runs FINAL_FACTOR times that (to ``tol`` rather than
  LOOSE * ``tol``); a run with nothing measured before it, ITERATIONS_PRIOR; the run under way at least what it
  has done plus one;
* between runs, what the last gap between runs cost (the certificate, the larger set's selection and its
  promise), scaled with the size like an iteration, plus what starting the last run cost (compiling);
* the end: the exact certificate's Cholesky up to 20,000 rows (the regressors' Gaussian fits) (n^3 / 3 flops at CHOLESKY_SHARE of this
  machine's float64 matrix product rate, timed once per process) and the posterior and leave-one-out passes
  (two iterations' time).

The clock only reads the time: no result depends on it (``time_budget`` is the option that does). Each estimate
is kept (``estimates_``) and, with ``verbose``, printed: "m = 512: about 6.1 min more (the fit about 8.3 min in
all, assuming the growth goes on to m = 1,024); max_inducing=512 would stop after this size, saving about 4.9 min
(the doubling to 512 promised 0.035 nats per row)".
"""

from __future__ import annotations

import functools
import sys
import time
from typing import NamedTuple

import numpy as np
from tqdm.auto import tqdm

from ..approximations.upper_bounds import EXACT_ROWS
from .growth import GAIN_PER_ROW, last_gain

FIRST_READING = 3  # the iteration of a run at which a clock with no estimate yet makes one (the first compiles)
REREAD = 25  # iterations between estimates within a run
ITERATIONS_PRIOR = 150  # a run's iterations with none measured before it
FINAL_FACTOR = 3.0  # the last size's remaining runs, in runs of a size passed through
SIZE_EXPONENT = 1.5  # an iteration's time grows as m^SIZE_EXPONENT between the sizes of a growth
CHOLESKY_SHARE = 0.5  # a large Cholesky's flop rate, as a share of a matrix product's
GAP_PRIOR = 2.0  # seconds between two runs before any gap was measured


class Estimate(NamedTuple):
    """One estimate: the seconds elapsed and estimated in all, the size being fitted and its run's iteration,
    the size the growth is assumed to stop at, and the message."""

    elapsed: float
    total: float
    m: int
    iteration: int
    final_m: int
    message: str


class Run(NamedTuple):
    """One optimiser run the clock watched: its size, iterations, seconds per iteration (from the second), what
    its start cost beyond an iteration, the gap before it, and whether it converged a size further (same m)."""

    m: int
    iterations: int
    per_iteration: float
    start_cost: float
    gap: float
    again: bool


SMALL_CHOLESKY = 1e9  # flops: a factorisation of under 1,500 rows, a few hundredths of a second, left out


@functools.cache
def product_rate() -> float:
    """This machine's float64 matrix product rate, flops per second (the best of three 1,000 x 1,000 products)."""
    a = np.random.default_rng(0).standard_normal((1000, 1000))
    best = np.inf
    for _ in range(3):
        t = time.perf_counter()
        a @ a
        best = min(best, time.perf_counter() - t)
    return 2e9 / max(best, 1e-6)


def human(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


class Clock:
    """Watches a sparse fit of ``n`` rows whose sizes may grow to ``m_cap`` (None: a fixed set) and estimates its
    wall time (module docstring); ``t0``: the fit's start (``time.perf_counter()``). ``certificate``: the fit ends
    with the exact certificate (the regressors'; the variational fit has none); ``gain_per_row``: the growth's
    threshold on a doubling's gain (None: GAIN_PER_ROW, the regressors')."""

    def __init__(self, config, n: int, m_cap: int | None, t0: float, *, certificate: bool = True, gain_per_row=None):
        self.config, self.n, self.m_cap, self.t0 = config, n, m_cap, t0
        self.certificate = certificate
        self.gain = GAIN_PER_ROW if gain_per_row is None else float(gain_per_row)
        self.estimates: list[Estimate] = []
        self.runs: list[Run] = []
        self.path: list = []
        self.m, self.started, self.again = 0, t0, False
        self.ended: float | None = None
        self.times: list[float] = []

    # ---- what the fit reports ------------------------------------------------------------------
    def watch(self, Z, idx, path) -> None:
        self._close_run()
        m = int(np.shape(Z)[0])
        self.again = bool(self.runs) and self.runs[-1].m == m
        self.m, self.path, self.started, self.times = m, list(path), time.perf_counter(), []
        if self.runs:  # a run has ended: with a growth, the first estimate comes before the second size
            self._estimate()

    def __call__(self, iteration: int, value: float, params) -> bool:
        self.times.append(time.perf_counter())
        k = len(self.times)
        last_size = self.m_cap is None or self.m >= self.m_cap
        if k == FIRST_READING and not self.estimates and last_size:
            self._estimate()
        elif self.estimates and k > FIRST_READING and (k - FIRST_READING) % REREAD == 0:
            self._estimate()
        return False

    def _close_run(self) -> None:
        if not self.times:
            return
        k = len(self.times)
        per = (self.times[-1] - self.times[0]) / (k - 1) if k > 1 else self.times[0] - self.started
        gap = self.started - self.ended if self.ended is not None else GAP_PRIOR
        self.runs.append(Run(self.m, k, per, max(self.times[0] - self.started - per, 0.0), gap, self.again))
        self.ended, self.times = self.times[-1], []

    # ---- the model --------------------------------------------------------------------------------
    def _final_size(self) -> int:
        """Where the growth is assumed to stop (the module docstring)."""
        if self.m_cap is None or self.m >= self.m_cap:
            return self.m
        if self.again:  # this size converged further: the last (its doubling gained little), or one doubling more
            gained = last_gain(self.path, self.n)  # (its own doubling promised little)
            return self.m if gained is not None and gained <= self.gain else min(2 * self.m, self.m_cap)
        last = self.path[-1] if self.path else None
        if last is not None and last.m < self.m and np.isfinite(last.next_start):
            if (last.next_start - last.lower) / self.n < self.gain:
                return self.m
        return self.m_cap

    def _loose_iterations(self) -> float:
        passed = [r.iterations for r in self.runs if not r.again]
        return float(np.mean(passed)) if passed else float(ITERATIONS_PRIOR) / FINAL_FACTOR

    def _left(self, final: int) -> tuple[float, float]:
        """(seconds left, seconds left after this size's runs) under the model."""
        m, k = self.m, len(self.times)
        if k > 1:
            per = (self.times[-1] - self.times[0]) / (k - 1)
        elif self.runs:
            per = self.runs[-1].per_iteration * (m / self.runs[-1].m) ** SIZE_EXPONENT
        else:
            return float("nan"), float("nan")
        loose, cap = self._loose_iterations(), self.m_cap or m
        if not self.runs:
            this = float(ITERATIONS_PRIOR)
        elif self.again or m >= cap:
            this = FINAL_FACTOR * loose  # a run to tol
        elif m >= final:
            this = (1.0 + FINAL_FACTOR) * loose  # a run to LOOSE * tol, then this size to tol
        else:
            this = loose
        left_here = max(this - k, 0.25 * k, 1.0) * per
        start = self.runs[-1].start_cost if self.runs else 0.0
        gap = self.runs[-1].gap if self.runs else GAP_PRIOR
        later, size = 0.0, m
        while size < final:
            size = min(2 * size, final)
            grow = (size / m) ** SIZE_EXPONENT
            runs = loose if size < final else (FINAL_FACTOR if final >= cap else 1.0 + FINAL_FACTOR) * loose
            later += (gap + runs * per) * grow + start
        # the Cholesky's share, where it is worth measuring the machine's rate for (its own 6 GFLOP)
        exact = self.certificate and SMALL_CHOLESKY < self.n**3 / 3.0 and self.n <= EXACT_ROWS
        cholesky = self.n**3 / 3.0 / (CHOLESKY_SHARE * product_rate()) if exact else 0.0
        ending = cholesky + 2.0 * per * (final / m) ** SIZE_EXPONENT
        return left_here + later + ending, later

    def _estimate(self) -> None:
        now = time.perf_counter()
        final = self._final_size()
        left, later = self._left(final)
        if not np.isfinite(left):
            return
        total = now - self.t0 + left
        message = self._message(len(self.times), now - self.t0, total, final, later)
        self.estimates.append(Estimate(now - self.t0, total, self.m, len(self.times), final, message))
        if self.config.verbose:
            tqdm.write(message, file=sys.stderr)  # beside the progress bars

    def _message(self, k: int, elapsed: float, total: float, final: int, later: float) -> str:
        m = self.m
        said = f"m = {m:,}" + (f", iteration {k}" if k else "") + f": about {human(max(total - elapsed, 0.0))} more"
        if final <= m:
            return said + f" (the fit about {human(total)} in all)"
        said += f" (the fit about {human(total)} in all, assuming the growth goes on to m = {final:,})"
        said += f"; max_inducing={m} would stop after this size, saving about {human(later)}"
        last = self.path[-1] if self.path else None
        if last is not None and np.isfinite(last.next_start) and last.m < m:
            said += f" (the doubling to {m:,} promised {(last.next_start - last.lower) / self.n:.3g} nats per row)"
        return said


__all__ = ["Clock", "Estimate", "Run"]
