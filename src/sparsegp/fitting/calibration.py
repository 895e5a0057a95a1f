"""The leave-one-out check of a fitted regressor's error bars, and the CalibrationWarning.

Every fit scores its own training rows by their leave-one-out predictive distributions
(:mod:`sparsegp.approximations.loo`; on ``LOO_ROWS`` rows drawn at random, with a fixed seed, where there
are more). Honest error bars put about 95.4 % of the rows within 2 predictive sd (z = (y - mean) / sd
standard normal, mean z^2 = 1); a Gaussian model that is far off shows it in three ways, each with a
margin wide enough for the heavy tails and discrete targets of real data (BENCHMARKS.md, "Leave-one-out
checks"):

* too narrow: fewer than ``NARROW_COVERAGE`` of the rows within 2 sd (coverage, unlike mean z^2, is not
  moved by a few outliers);
* too wide: the root mean square of z below ``WIDE_RMS_Z``: scaling every variance by mean z^2, the
  change that would raise the mean log density most, would shrink the error bars more than twofold
  (outliers only raise mean z^2, so a small one is not their doing);
* heavy-tailed, where not too narrow: more than ``TAIL_SHARE`` of the rows (and at least ``TAIL_ROWS``) beyond 3 sd, where honest
  Gaussian error bars put 0.27 %: a few rows far outside their error bars, which the coverage does not see and
  which dominate held-out log densities (yacht: 5.4 % of the rows, and a test SNLP of +0.83 with SMSE 0.05);
* worse than a constant: the mean leave-one-out log density more than ``CONSTANT_MARGIN`` nats per row
  below that of a Gaussian with the training targets' own mean and variance (leave-one-out SNLP above
  the margin; a model that has learned nothing sits at 0).
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from .._config import LOG_2PI
from ..errors import CalibrationWarning, NumericalWarning
from ..metrics import expected_calibration_error
from ..options import spelled

# SoR's variances are flagged when at more than this share of the test points the prior variance they
# omit exceeds the variance they report (warn_if_sor_too_narrow).
SOR_SHARE = 0.1
LOO_ROWS = 5000
LOO_Z_LEVELS = (0.025, 0.16, 0.5, 0.84, 0.975)  # probabilities of the reported z quantiles
NOMINAL_COVERAGE = 0.9545  # P(|z| <= 2) for a standard normal
NARROW_COVERAGE = 0.80
WIDE_RMS_Z = 0.5
CONSTANT_MARGIN = 0.01
TAIL_SHARE = 0.04
TAIL_ROWS = 3
TAIL_Z = 3.0
NO_SIGNAL_MARGIN = 0.02  # nats per row: a fit no better than a constant by this much found no signal
LOO_TRUSTED_ERROR = 0.05  # nats per row: a larger rounding error leaves the leave-one-out figures unreported


class LOOCheck(NamedTuple):
    """Leave-one-out figures of a fit (user units): mean log density per row, 2-sd coverage, z quantiles
    at LOO_Z_LEVELS, the rows scored, the SNLP against the training targets' mean and variance, the
    root mean square of z, the estimated rounding error of the mean log density (nats per row;
    :func:`sparsegp.approximations.loo.log_density_error`) and the share of rows beyond TAIL_Z sd."""

    log_predictive: float
    coverage: float
    z_quantiles: np.ndarray
    rows: int
    snlp: float
    z_rms: float
    error: float = 0.0
    tail: float = 0.0  # the share of rows beyond TAIL_Z sd

    @property
    def trusted(self) -> bool:
        """Whether rounding leaves the figures within LOO_TRUSTED_ERROR nats per row."""
        return bool(self.error <= LOO_TRUSTED_ERROR)


def loo_sample(n: int, limit: int = LOO_ROWS) -> np.ndarray:
    """The rows to score: all of them, or ``limit`` drawn at random with a fixed seed (sorted)."""
    if n <= limit:
        return np.arange(n)
    return np.sort(np.random.default_rng(0).choice(n, size=limit, replace=False))


def summarise(y, mean, var, *, y_mean: float, y_var: float, y_std: float = 1.0, error=None) -> LOOCheck:
    """The figures of :class:`LOOCheck` from each row's target and leave-one-out mean and variance.

    ``y``, ``mean`` and ``var`` on the scale the model was fitted on (normalised targets), ``y_std`` the
    factor back to the user's units; ``y_mean`` and ``y_var`` the training targets' own, on the same scale;
    ``error`` each row's estimated rounding error of its log density (None: 0).
    """
    y, mean, var = (np.asarray(a, dtype=np.float64) for a in (y, mean, var))
    var = np.maximum(var, np.finfo(float).tiny)
    z = (y - mean) / np.sqrt(var)
    logp = -0.5 * (LOG_2PI + np.log(var) + z * z)
    return summarise_scores(y, z, logp, y_mean=y_mean, y_var=y_var, y_std=y_std, error=error)


def summarise_scores(y, z, logp, *, y_mean: float, y_var: float, y_std: float = 1.0, error=None) -> LOOCheck:
    """The figures of :class:`LOOCheck` from each row's standardised error ``z`` and log predictive density
    ``logp`` (the fitted scale): for a Gaussian predictive z = (y - mean) / sd; for any other, z =
    Phi^-1(F(y)) with F the row's predictive CDF (its probability integral transform, mid-point for counts),
    standard normal where the predictive is honest, so one set of thresholds judges every likelihood."""
    y, z, logp = (np.asarray(a, dtype=np.float64) for a in (y, z, logp))
    trivial = -0.5 * (LOG_2PI + np.log(y_var) + (y - y_mean) ** 2 / y_var)
    return LOOCheck(
        log_predictive=float(np.mean(logp) - np.log(y_std)),
        coverage=float(np.mean(np.abs(z) <= 2.0)),
        z_quantiles=np.quantile(z, LOO_Z_LEVELS),
        rows=int(y.size),
        snlp=float(np.mean(trivial) - np.mean(logp)),
        z_rms=float(np.sqrt(np.mean(z * z))),
        error=0.0 if error is None else float(np.mean(np.asarray(error, dtype=np.float64))),
        tail=float(np.mean(np.abs(z) > TAIL_Z)),
    )


def problems(check: LOOCheck) -> list[str]:
    """What the figures say is wrong with the error bars (empty when nothing is)."""
    out = []
    if check.coverage < NARROW_COVERAGE:
        out.append(
            f"too narrow: {check.coverage:.1%} of the training rows lie within 2 leave-one-out sd "
            f"(honest error bars: {NOMINAL_COVERAGE:.1%}; warned below {NARROW_COVERAGE:.0%})"
        )
    if check.z_rms < WIDE_RMS_Z:
        out.append(
            f"too wide: the leave-one-out errors are {check.z_rms:.2f} predictive sd on average (root mean "
            f"square; honest error bars: 1; warned below {WIDE_RMS_Z:g})"
        )
    if check.tail > TAIL_SHARE and check.tail * check.rows >= TAIL_ROWS - 1e-9 and check.coverage >= NARROW_COVERAGE:
        out.append(
            f"heavy-tailed: {check.tail:.1%} of the training rows lie beyond {TAIL_Z:g} leave-one-out sd (honest "
            f"Gaussian error bars: 0.27%; warned above {TAIL_SHARE:.0%}), so a few rows fall far outside their "
            "error bars and will dominate held-out log densities (a transformation of the targets, such as their "
            "logarithm, may make the noise Gaussian)"
        )
    if check.snlp > CONSTANT_MARGIN:
        out.append(
            f"worse than a constant: the mean leave-one-out log density is {check.snlp:.3f} nats per row below "
            f"that of a Gaussian with the training targets' mean and variance (warned above {CONSTANT_MARGIN:g})"
        )
    return out


def warn_if_no_signal(check: LOOCheck, owner: str, stacklevel: int = 3) -> None:
    """A ConvergenceWarning (scikit-learn's class) when the leave-one-out density is within NO_SIGNAL_MARGIN
    nats per row of a Gaussian with the training targets' mean and variance (and not worse than it by more than
    CONSTANT_MARGIN, which :func:`warn_if_miscalibrated` reports): the fit explains nothing
    beyond the targets' spread, and its error bars, honest for that, are of no use. From a fixed start in
    many input dimensions the optimiser often settles there (pumadyn32nm: BENCHMARKS.md)."""
    if -NO_SIGNAL_MARGIN <= check.snlp <= CONSTANT_MARGIN:  # worse than that: warn_if_miscalibrated says so
        warnings.warn(
            f"{owner}: the fitted model is no better than a constant: its mean leave-one-out log density over "
            f"{check.rows} training rows is within {NO_SIGNAL_MARGIN:g} nats per row of a Gaussian with the "
            "targets' mean and variance, so the kernel explains none of the targets (the all-noise optimum). "
            "If the inputs should predict the targets, start the length-scales from an exact GP on a subset "
            f"of the rows (inducing='auto' does on more than 512 rows), or use {spelled(owner, 'n_restarts')}",
            ConvergenceWarning,
            stacklevel=stacklevel,
        )


def warn_loo_unavailable(check: LOOCheck, owner: str, stacklevel: int = 3) -> None:
    """A NumericalWarning: rounding may have spoilt the leave-one-out figures, which are therefore not
    reported (NaN), and say nothing about the model's error bars either way."""
    warnings.warn(
        f"{owner}: the leave-one-out figures are unavailable (NaN): rounding in the factor of the fitted "
        f"covariance may change them by up to {check.error:.3g} nats per row (trusted up to "
        f"{LOO_TRUSTED_ERROR:g}), so they say nothing about the error bars. The fit is nearly singular: "
        "typically a near-deterministic target, a noise variance near its lower bound or near-copies of rows. "
        f"Judge the error bars on held-out rows, or raise the noise lower bound ({spelled(owner, 'min_noise')})",
        NumericalWarning,
        stacklevel=stacklevel,
    )


# A classifier's leave-one-out probabilities warn (CalibrationWarning) where their expected calibration error exceeds
# CALIBRATION_MARGIN or the 99th percentile of the ECE of labels drawn from those probabilities themselves
# (calibrated by construction: on a few hundred rows their ECE alone reaches 0.05), whichever is larger.
CALIBRATION_MARGIN = 0.05
CALIBRATION_DRAWS = 100


def sampling_ece(proba: np.ndarray, draws: int = CALIBRATION_DRAWS) -> float:
    """The 99th percentile of the expected calibration error of labels drawn from ``proba`` (n, C) itself."""
    rng = np.random.default_rng(0)
    cum = np.cumsum(proba, axis=1)
    out = []
    for _ in range(draws):
        codes = np.minimum((rng.uniform(size=(proba.shape[0], 1)) > cum).sum(axis=1), proba.shape[1] - 1)
        out.append(expected_calibration_error(codes, proba))
    return float(np.quantile(out, 0.99))


def warn_if_overconfident(owner: str, log_proba: np.ndarray, codes: np.ndarray, stacklevel: int = 3) -> None:
    """A CalibrationWarning where a classifier's leave-one-out probabilities (``log_proba`` (n, C) of the rows with
    class ``codes``) are over- or under-confident beyond what chance gives."""
    p = np.exp(log_proba)
    error = float(expected_calibration_error(codes, p))
    confidence, accuracy = float(np.mean(p.max(axis=1))), float(np.mean(p.argmax(axis=1) == codes))
    margin = max(CALIBRATION_MARGIN, sampling_ece(p))
    if error > margin:
        side = "over-confident" if confidence > accuracy else "under-confident"
        warnings.warn(
            f"{owner}: the leave-one-out probabilities of {codes.size} training rows are {side}: "
            f"expected calibration error {error:.3f} (warned above {margin:.3f}, the larger of {CALIBRATION_MARGIN:g} "
            f"and what labels drawn from these probabilities reach by chance; "
            f"mean confidence {confidence:.3f}, accuracy {accuracy:.3f}). Check the kernel (a learnt length-scale "
            "far below the inputs' spacing memorises the rows) or raise max_inducing",
            CalibrationWarning,
            stacklevel=stacklevel,
        )


def warn_if_miscalibrated(check: LOOCheck, owner: str, stacklevel: int = 3) -> None:
    """A CalibrationWarning naming each of :func:`problems`."""
    found = problems(check)
    if found:
        warnings.warn(
            f"{owner}: the leave-one-out check of {check.rows} training rows says the error bars are "
            + "; and ".join(found)
            + ". Check the approximation (SoR's and DTC's variances are known to be too small away from or at "
            "the data), the number of inducing points, repeated records (duplicates=) and the noise model",
            CalibrationWarning,
            stacklevel=stacklevel,
        )


__all__ = [
    "sampling_ece",
    "warn_if_overconfident",
    "LOOCheck",
    "LOO_ROWS",
    "TAIL_SHARE",
    "LOO_TRUSTED_ERROR",
    "LOO_Z_LEVELS",
    "NARROW_COVERAGE",
    "NOMINAL_COVERAGE",
    "WIDE_RMS_Z",
    "CONSTANT_MARGIN",
    "NO_SIGNAL_MARGIN",
    "loo_check",
    "loo_in_batches",
    "loo_sample",
    "problems",
    "summarise",
    "warn_if_miscalibrated",
    "warn_if_no_signal",
    "warn_if_sor_too_narrow",
    "warn_loo_unavailable",
]


def loo_in_batches(batch_fn, X, y, batch: int = 1024, known=None):
    """Leave-one-out (mean, variance[, error]) of rows (X, normalised y) from ``batch_fn(X, y) -> (mean, var[,
    error])`` (``batch_fn(X, y, known)`` with the rows' ``known`` noise variances), ``batch`` rows at a time.
    Batches are padded to a power of two rows, so fits of other sizes reuse the compiled program."""
    from .._compile import to_device

    parts = []
    for i in range(0, len(y), batch):
        Xb, yb = X[i : i + batch], y[i : i + batch]
        pad = min(batch, 1 << max(6, (len(yb) - 1).bit_length())) - len(yb)
        args = [
            to_device(np.concatenate([Xb, np.repeat(Xb[-1:], pad, axis=0)])),
            to_device(np.pad(yb, [(0, pad)] + [(0, 0)] * (yb.ndim - 1))),
        ]
        if known is not None:
            args.append(to_device(np.pad(known[i : i + batch], (0, pad), mode="edge")))
        out = batch_fn(*args)
        parts.append([np.asarray(a)[: len(yb)] for a in out])
    return tuple(np.concatenate(a) for a in zip(*parts))


def loo_check(batch_fn, data, y_std) -> LOOCheck | list[LOOCheck]:
    """The leave-one-out figures of a fit whose training rows are the backend ``data``, on ``LOO_ROWS`` of them at
    most; ``batch_fn`` as in :func:`loo_in_batches`."""
    X, y, known, y_mean, y_var = data.loo_rows(loo_sample(data.moments.n))
    mean, var, *error = loo_in_batches(batch_fn, X, y, known=known)
    if y.ndim == 2:  # k targets: the figures of each (a list of LOOCheck); the variance may be shared
        var, error = np.broadcast_to(var, y.shape), [np.broadcast_to(e, y.shape) for e in error]
        return [
            summarise(y[:, j], mean[:, j], var[:, j], y_mean=y_mean[j], y_var=y_var[j], y_std=y_std[j],
                      error=error[0][:, j] if error else None)
            for j in range(y.shape[1])
        ]  # fmt: skip
    return summarise(y, mean, var, y_mean=y_mean, y_var=y_var, y_std=y_std, error=error[0] if error else None)


def warn_if_sor_too_narrow(omitted, reported, stacklevel: int = 2) -> None:
    """A CalibrationWarning when SoR's own (degenerate) variances leave out most of the truth.

    Quiñonero-Candela & Rasmussen's eq. 27 omits K_** - Q_** (``omitted``), the prior variance the inducing
    inputs do not span; where that exceeds the whole predictive variance ``reported`` (noise included) at more
    than ``SOR_SHARE`` of the test points, the error bars are too narrow by more than a factor sqrt(2) there
    (BENCHMARKS.md, "Tiny training sets": 2-sd coverage 0.28 to 0.48 with three to eight points).
    """
    omitted, reported = np.asarray(omitted), np.asarray(reported)
    if reported.ndim == 2:  # k targets with a noise each: the omitted part is every target's
        omitted = omitted[:, None]
    share = float(np.mean(omitted > reported))
    if share > SOR_SHARE:
        warnings.warn(
            f"SparseGPRegressor: SoR's predictive variance (Quiñonero-Candela & Rasmussen eq. 27) leaves out "
            f"K** - Q**, the prior variance the inducing inputs do not span; at {share:.0%} of these test points "
            "that part alone exceeds the variance reported, so the error bars are too narrow there. "
            "prediction='augmented' adds it back (eqs. 28-29), or use approximation='vfe'",
            CalibrationWarning,
            stacklevel=stacklevel + 1,
        )
