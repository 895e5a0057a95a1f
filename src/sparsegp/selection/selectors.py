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

from .._docstrings import fill, substitute
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
from .greedy import PROBLEM, Selection, greedy_select
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
    """Greedy forward selection of ``size`` training points at fixed hyper-parameters: the base of every
    selector. A selector holds its options only (scikit-learn style, so it can sit in a grid search);
    :meth:`select` runs the loop, and ``SparseGPRegressor(inducing=selector)`` uses it to choose the active
    set.

    {parameters}

    See Also
    --------
    sparsegp.SparseGPRegressor : takes a selector as ``inducing``.

    Examples
    --------
    {toy_selection}
    >>> from sparsegp.selection import ConditionalVariance
    >>> selection = ConditionalVariance(10).select(kernel, noise, X, y)
    >>> len(selection.indices), selection.reason
    (10, 'reached size 10')
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

    @fill(problem=PROBLEM)
    def select(self, kernel, noise, X, y, *, random_state=None, verbose=None, size=None, initial=None) -> Selection:
        """Run the selection at fixed hyper-parameters.

        Parameters
        ----------
        {problem}
        random_state : int, Generator or None
            Overrides the selector's seed.
        verbose : bool or None
            Overrides the selector's progress bar.
        size : int or None
            Overrides the selector's size.
        initial : array of int or None
            Training rows included first, in order, before the greedy search goes on.

        Returns
        -------
        Selection
            The rows chosen in order of inclusion, the final state and one record per inclusion.
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
    """A random subset: the papers' *random* baseline (the state is still built, so the curves of the
    objective are recorded as for the greedy criteria).

    {parameters}

    {example}
    """

    rule_class = RandomRule


class InfoGain(Selector):
    """Seeger, Williams & Lawrence (2003) eq. 3: the information gain of including each point, O(1) per point
    from the incremental state, so full greedy search over every remaining point is the default.

    {parameters}

    {example}
    """

    rule_class = InfoGainRule


class DifferentialEntropy(Selector):
    """The IVM's differential-entropy score for Gaussian noise (Lawrence, Seeger & Herbrich 2003, eq. 4),
    O(1) per point: the largest reduction of a point's posterior variance.

    {parameters}

    {example}
    """

    rule_class = DifferentialEntropyRule


class ConditionalVariance(Selector):
    """Largest residual prior variance first: a pivoted Cholesky of K, greedy on VFE's trace term; what
    ``inducing="auto"`` uses to grow its sets.

    {parameters}

    {example}
    """

    rule_class = ConditionalVarianceRule


class SmolaBartlett(Selector):
    """Smola & Bartlett (2001) sparse greedy GP regression: their criterion Delta^SB over kappa = 59 random
    candidates per inclusion, stopping once the relative duality gap of Theorem 1 is below ``eps``.

    {parameters}
    eps : float or None
        Stop once the relative gap is below ``eps`` (Algorithm 1; 0.025); None: stop at ``size`` only.
        The gap is always tracked: ``selection.curve("gap")``.

    Examples
    --------
    {toy_selection}
    >>> from sparsegp.selection import SmolaBartlett
    >>> selection = SmolaBartlett(200, eps=0.05, random_state=0).select(kernel, noise, X, y)
    >>> gap = selection.curve("gap")
    >>> bool(gap[-1] < 0.05 <= gap[-2]), selection.reason.startswith("relative gap")
    (True, True)
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
    """Quiñonero-Candela & Rasmussen (2005) SGEV: the change of the SoR / DTC evidence (eqs. 30-33) over
    kappa = 59 random candidates per inclusion.

    {parameters}

    {example}
    """

    rule_class = EvidenceRule
    default_candidates = 59


class VFEGreedy(Selector):
    """Titsias (2009) sec. 3.1: the variational bound F_V as the criterion, over a random working set of
    kappa = 59 candidates per inclusion.

    {parameters}

    {example}
    """

    rule_class = VFERule
    default_candidates = 59


class KMeans(_Params):
    """k-means centres of the training inputs as initial free pseudo-inputs (scikit-learn's KMeans): not
    training rows, so ``SparseGPRegressor(inducing=KMeans(m))`` starts its inducing inputs there.

    Parameters
    ----------
    size : int
        The number of centres m.
    random_state : int, Generator or None
        Seed for k-means.
    n_init : int
        k-means restarts.
    max_iter : int
        k-means iterations.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsegp.selection import KMeans
    >>> X = np.concatenate([np.zeros((50, 2)), np.ones((50, 2))])
    >>> np.sort(KMeans(2, random_state=0).centres(X)[:, 0])
    array([0., 1.])
    """

    def __init__(self, size=128, *, random_state=None, n_init=1, max_iter=100):
        self.size = size
        self.random_state = random_state
        self.n_init = n_init
        self.max_iter = max_iter

    def __repr__(self):
        return f"KMeans(size={self.size})"

    _param_names = ("size", "random_state", "n_init", "max_iter")

    @fill()
    def centres(self, X, *, random_state=None) -> np.ndarray:
        """The k-means centres of X.

        Parameters
        ----------
        X : array of shape (n, D)
            Training inputs.
        random_state : int, Generator or None
            Overrides the selector's seed.

        Returns
        -------
        ndarray of shape (min(size, n), D)
        """
        from sklearn.cluster import KMeans as _KMeans

        X = np.asarray(X, dtype=np.float64)
        size = min(check_int(self.size, "size", minimum=1), X.shape[0])
        rs = self.random_state if random_state is None else random_state
        km = _KMeans(n_clusters=size, n_init=self.n_init, max_iter=self.max_iter, random_state=rs).fit(X)
        return km.cluster_centers_


# The options every greedy selector shares, written once and put where each docstring says {parameters}.
_PARAMETERS = """
Parameters
----------
size : int
    The (maximum) active-set size d.
candidates : "full", int or None
    "full" scores every remaining point (the default for the O(1) criteria); an int kappa scores kappa
    random points per inclusion (the default, 59, for the O(n d) criteria); None: the selector's default.
tau : float or None
    With an int ``candidates``: keep a selection index of kappa points, retaining the best fraction tau
    after each inclusion and refilling at random (Lawrence et al. 2003, sec. 3).
stop : sequence of StoppingRule
    Stopping rules from :mod:`sparsegp.selection.stopping`.
{track_gap}
random_state : int, Generator or None
    Seed for the candidates.
verbose : bool
    A progress bar over the inclusions.
"""
_TRACK_GAP = """
track_gap : bool
    Also run Smola & Bartlett's dual and record the relative gap per inclusion.
"""
# The example every criterion shares, with the selector's own name.
_EXAMPLE = """
Examples
--------
{toy_selection}
>>> from sparsegp.selection import NAME
>>> selection = NAME(20, random_state=0).select(kernel, noise, X, y)
>>> selection.indices.shape
(20,)
>>> bool(np.all(np.diff(selection.curve("vfe_bound")) > -1e-9))  # F_V never falls as points are added
True
"""


def _write_parameters(cls, track_gap: bool) -> None:
    example = _EXAMPLE.replace("NAME", cls.__name__)
    blocks = {"parameters": _PARAMETERS, "track_gap": _TRACK_GAP if track_gap else "", "example": example}
    cls.__doc__ = substitute(cls.__doc__, blocks)


for _cls in (Selector, Random, InfoGain, DifferentialEntropy, ConditionalVariance, Evidence, VFEGreedy):
    _write_parameters(_cls, track_gap=True)
_write_parameters(SmolaBartlett, track_gap=False)

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
