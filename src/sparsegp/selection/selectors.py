"""Selectors: the strategy objects a user passes as ``SparseGPRegressor(inducing=...)`` or calls directly.

    sel = InfoGain(500).select(kernel, noise, X, y)     # -> Selection (indices, state, history)
    SparseGPRegressor(kernel, approximation="dtc", inducing=InfoGain(500))

A selector stores its options only (scikit-learn style, so it can sit inside a
grid search); :meth:`Selector.select` runs the greedy loop at the hyper-parameters
it is given. ``KMeans`` is the odd one out: it returns cluster centres (free
pseudo-inputs), not training rows.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..validation import check_int
from .criteria import (
    ConditionalVarianceRule,
    DifferentialEntropyRule,
    EvidenceRule,
    InfoGainRule,
    RandomRule,
    ScoringRule,
    SmolaBartlettRule,
    VFERule,
)
from .greedy import Selection, greedy_select
from .stopping import RelativeGap


class _Params:
    """scikit-learn's get_params / set_params over the constructor arguments named in ``_param_names``."""

    _param_names: tuple = ()

    def get_params(self, deep=True):
        return {k: getattr(self, k) for k in self._param_names}

    def set_params(self, **params):
        for k, v in params.items():
            if k not in self._param_names:
                raise InputError(f"{type(self).__name__} has no parameter {k!r}")
            setattr(self, k, v)
        return self


class Selector(_Params):
    """Greedy forward selection of ``size`` training points (the maximum when stopping rules are given).

    Parameters
    ----------
    size : the (maximum) active-set size d.
    candidates : "full" (score every remaining point; the default for the O(1) criteria) or an int kappa
        (score kappa random points per inclusion; the default, 59, for the O(n d) criteria).
    tau : with an int ``candidates``, keep a selection index of kappa points, retaining the best fraction
        tau after each inclusion and refilling at random (Lawrence et al. 2003 sec. 3).
    stop : stopping rules from :mod:`sparsegp.selection.stopping`.
    track_gap : also run Smola & Bartlett's dual and record the relative gap per inclusion.
    random_state, verbose : as everywhere.
    """

    rule_class: type[ScoringRule] = RandomRule
    default_candidates: object = "full"

    def __init__(
        self, size=128, *, candidates=None, tau=None, stop=(), track_gap=False, random_state=None, verbose=False
    ):
        self.size = size
        self.candidates = candidates
        self.tau = tau
        self.stop = stop
        self.track_gap = track_gap
        self.random_state = random_state
        self.verbose = verbose

    def __repr__(self):
        return f"{type(self).__name__}(size={self.size})"

    _param_names = ("size", "candidates", "tau", "stop", "track_gap", "random_state", "verbose")

    def select(self, kernel, noise, X, y, *, random_state=None, verbose=None, size=None, initial=None) -> Selection:
        """Run the selection at fixed hyper-parameters (``kernel``, noise variance ``noise``).

        ``size`` overrides the selector's size; ``initial`` rows are included first (see greedy_select).
        """
        size = check_int(self.size if size is None else size, "size", minimum=1)
        cand = self.default_candidates if self.candidates is None else self.candidates
        rs = self.random_state if random_state is None else random_state
        return greedy_select(
            self.rule_class(),
            kernel,
            float(noise),
            X,
            y,
            size=min(size, np.asarray(X).shape[0]),
            candidates=cand,
            tau=self.tau,
            stop=self._stop_rules(),
            track_gap=self.track_gap,
            random_state=rs,
            verbose=self.verbose if verbose is None else verbose,
            initial=initial,
            desc=f"{type(self).__name__} selection",
        )

    def _stop_rules(self) -> tuple:
        return tuple(self.stop)


class Random(Selector):
    """A random subset (the papers' *random* baseline; the state is still built for the objective)."""

    rule_class = RandomRule


class InfoGain(Selector):
    """Seeger et al. (2003) eq. 3 information gain, O(1) per point, full greedy by default."""

    rule_class = InfoGainRule


class DifferentialEntropy(Selector):
    """The IVM entropy score for Gaussian noise (Lawrence et al. 2003 eq. 4), O(1) per point."""

    rule_class = DifferentialEntropyRule


class ConditionalVariance(Selector):
    """Largest residual variance first (pivoted Cholesky of K; greedy on the VFE trace term)."""

    rule_class = ConditionalVarianceRule


class SmolaBartlett(Selector):
    """Smola & Bartlett (2001) SGGP: Delta^SB over kappa = 59 random candidates, stopping at gap < 0.025.

    ``eps`` sets the gap threshold (None: stop at ``size`` only); the gap is always tracked.
    """

    rule_class = SmolaBartlettRule
    default_candidates = 59

    def __init__(self, size=1000, *, eps=0.025, candidates=None, tau=None, stop=(), random_state=None, verbose=False):
        super().__init__(
            size, candidates=candidates, tau=tau, stop=stop, track_gap=True, random_state=random_state, verbose=verbose
        )
        self.eps = eps

    _param_names = ("size", "eps", "candidates", "tau", "stop", "random_state", "verbose")

    def _stop_rules(self) -> tuple:
        return tuple(self.stop) + ((RelativeGap(self.eps),) if self.eps is not None else ())


class Evidence(Selector):
    """Quinonero-Candela & Rasmussen (2005) SGEV: the evidence change (eqs. 30-33) over kappa = 59 candidates."""

    rule_class = EvidenceRule
    default_candidates = 59


class VFEGreedy(Selector):
    """Titsias (2009) sec. 3.1: the variational bound as criterion over a random working set (kappa = 59)."""

    rule_class = VFERule
    default_candidates = 59


class KMeans(_Params):
    """k-means centres of the training inputs as initial free pseudo-inputs (scikit-learn's KMeans)."""

    def __init__(self, size=128, *, random_state=None, n_init=1, max_iter=100):
        self.size = size
        self.random_state = random_state
        self.n_init = n_init
        self.max_iter = max_iter

    def __repr__(self):
        return f"KMeans(size={self.size})"

    _param_names = ("size", "random_state", "n_init", "max_iter")

    def centres(self, X, *, random_state=None) -> np.ndarray:
        from sklearn.cluster import KMeans as _KMeans

        X = np.asarray(X, dtype=np.float64)
        size = min(check_int(self.size, "size", minimum=1), X.shape[0])
        rs = self.random_state if random_state is None else random_state
        km = _KMeans(n_clusters=size, n_init=self.n_init, max_iter=self.max_iter, random_state=rs).fit(X)
        return km.cluster_centers_


SELECTORS = {
    "random": Random,
    "info-gain": InfoGain,
    "differential-entropy": DifferentialEntropy,
    "conditional-variance": ConditionalVariance,
    "smo-bart": SmolaBartlett,
    "evidence": Evidence,
    "vfe": VFEGreedy,
    "kmeans": KMeans,
}
