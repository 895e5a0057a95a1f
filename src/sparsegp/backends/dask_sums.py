"""The chunked statistics on the partitions of Dask arrays, computed where the partitions live.

:class:`DaskStats` has the interface of :class:`~sparsegp.backends.blas_sums.BlasStats` (``forward`` /
``backward``, with row weights or without), so :class:`~sparsegp.approximations.host_objective.HostObjective`
runs unchanged on a cluster:

* once: every row block of (X, y) becomes a ``BlasStats`` on the worker that holds it
  (``Client.map`` over the blocks; the data never leave their workers);
* per evaluation, a map and a reduce: each partition returns its sums S, v, yy, trK, trQ
  (FITC: its weighted sums) and keeps its residual (the kernel blocks) on its worker; the
  driver adds the sums and runs the m x m algebra;
* then a second map: the driver sends the sums' cotangents, each partition returns its
  cotangents of the kernel, Z and L_uu^-1 (FITC: and sigma^2), which the driver adds.
  The factor's cotangent is linear in the sums, so per-partition terms add up exactly.

Per evaluation O(m^2 + m D) numbers travel each way per partition (:attr:`DaskStats.bytes_moved` counts them). A
lost worker: the row blocks' futures are held, so Dask recomputes a lost partition from the arrays' task graph (its
lineage), and an evaluation that met the loss (a task cancelled, a result forgotten, a broadcast to a dying worker,
or a worker gone while the evaluation waits) is run again, forward pass included, up to RETRIES times once a worker
is there to run it; never summed over fewer partitions (:meth:`DaskStats._gather` checks the row count of every
reduction). With no worker at all for WORKERLESS_SECONDS, or the retries spent, the fit stops with a
:class:`~sparsegp.errors.DistributedError` that says so.

Dask is an optional dependency (``pip install sparsegp[dask]``); this module imports it lazily.
"""

from __future__ import annotations

import functools
import time

import numpy as np

from ..errors import DistributedError, InputError
from .blas_sums import BlasStats, _tree_add
from .jax_sums import RowWeights, Stats, WeightedStats
from .replicates import collapse


def is_dask_collection(x) -> bool:
    """True for a dask array (or other dask collection), without importing dask."""
    return type(x).__module__.split(".")[0] == "dask" and hasattr(x, "__dask_graph__")


def cluster_client(client=None):
    """``client``, or the current ``dask.distributed`` client, or an InputError that says how to start one."""
    try:
        from distributed import get_client
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise InputError("dask arrays need the optional dependencies: pip install 'sparsegp[dask]'") from exc
    if client is not None:
        return client
    try:
        return get_client()
    except ValueError:
        raise InputError(
            "dask arrays are fitted on a dask.distributed cluster: start one first "
            "(from distributed import Client, LocalCluster; client = Client(LocalCluster())), "
            "or connect to a scheduler with Client('tcp://host:8786')"
        ) from None


# ---- tasks run on the workers -------------------------------------------------------------
def _worker_threads():
    """The thread count Dask gave this worker (None outside a worker)."""
    try:
        from distributed import get_worker

        return int(get_worker().state.nthreads)
    except (ImportError, ValueError, AttributeError):
        return None


def _make_part(X, y, chunk, grouped=False, known=None):
    """One partition's :class:`BlasStats`; with ``grouped``, over one weighted row per distinct input (and known
    noise variance, ``known``) of its rows."""
    X, y = np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if X.ndim != 2 or y.ndim not in (1, 2) or y.shape[0] != X.shape[0]:
        raise InputError(
            f"a partition holds X of shape {X.shape} and y of shape {y.shape}: the row chunks of X "
            "and y must agree (rechunk both to the same row chunks)"
        )
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(y))):
        raise InputError("X or y contains NaN or infinity (found in a partition of the dask arrays)")
    if known is not None:
        known = np.asarray(known, dtype=np.float64)
    if grouped:
        groups = collapse(X, y, known)
        if groups.repeated:
            return BlasStats(
                groups.X,
                groups.y,
                chunk,
                threads=_worker_threads(),
                counts=groups.counts,
                scatter=groups.scatter,
                known=groups.known,
            )
    return BlasStats(X, y, chunk, threads=_worker_threads(), known=known)


def _rows(part):
    return part.n


def _aligned(args):
    """The NumPy leaves of ``args`` copied into fresh arrays.

    Arrays deserialised from a message can start at any byte, and NumPy computes a product of
    misaligned float64 arrays with its own loops instead of BLAS, which rounds differently: without the
    copy, a partition's result would depend on where its arguments landed on the worker.
    """
    import jax

    return jax.tree_util.tree_map(lambda a: np.array(a, order="C") if isinstance(a, np.ndarray) else a, args)


def _forward(part, args):
    """One partition's ``forward``: (sums, residual), the residual kept on the worker."""
    return part.forward(*_aligned(args))


def _sums(result):
    return tuple(np.asarray(a) for a in result[0])


def _backward(part, fwd, args):
    """One partition's ``backward`` with its own sums: the cotangent of L_uu^-1 is linear in the sums, so the
    partitions' terms add up to the whole data's."""
    Linv, Luu, ct = _aligned(args)
    st, res = fwd
    return part.backward(Linv, Luu, st, res, ct)


def _nbytes(tree) -> int:
    import jax

    return int(sum(np.asarray(a).nbytes for a in jax.tree_util.tree_leaves(tree)))


def _partitions(client, X, y, make, extra, known=None):
    """(the row blocks' futures, the futures of ``make(X_k, y_k, *extra(k))`` for the row blocks k of X, y (and
    ``known=known_k`` where a per-row ``known`` array is given)), built on the workers that compute the blocks
    (the rows never pass through the driver). X must have one column chunk. Hold the blocks as long as the
    partitions: Dask recomputes a partition lost with its worker from them (and them from the arrays' graph)."""
    if len(X.chunks[1]) != 1:
        X = X.rechunk({1: -1})
    if X.chunks[0] != y.chunks[0] or (y.ndim == 2 and len(y.chunks[1]) != 1):
        y = y.rechunk({0: X.chunks[0]} if y.ndim == 1 else {0: X.chunks[0], 1: -1})
    columns = [X, y] if known is None else [X, y, known.rechunk(X.chunks[0])]
    delayed = [list(a.to_delayed().ravel()) for a in columns]
    k = len(delayed[0])
    blocks = client.compute([b for d in delayed for b in d])
    per_part = [blocks[j * k : (j + 1) * k] for j in range(len(columns))]

    def submit(i):
        more = {} if known is None else {"known": per_part[2][i]}
        return client.submit(make, per_part[0][i], per_part[1][i], *extra(i), pure=False, **more)

    return blocks, [submit(i) for i in range(k)]


def _addresses(client) -> frozenset:
    """The addresses of the cluster's workers now, as the scheduler knows them."""
    return frozenset(client.scheduler_info().get("workers", ()))


class _Watch:
    """What a wait that timed out does: a clear error once the cluster has had no worker for WORKERLESS_SECONDS
    (tasks wait for workers without end), and :class:`WorkerLost` as soon as one of ``workers`` (those there when
    the evaluation began) has left: a worker fetching from the lost one retries the connection for Dask's connect
    timeout (30 s by default) before the scheduler hears of it, so the evaluation is run again at once instead."""

    def __init__(self, client, what: str, workers: frozenset | None):
        self.client, self.what, self.workers = client, what, workers
        self.idle_since: float | None = None

    def timed_out(self) -> None:
        now = _addresses(self.client)
        if now:
            self.idle_since = None
            if self.workers and not self.workers <= now:
                raise WorkerLost(f"{self.what}: a worker left the cluster during the evaluation") from None
            return
        self.idle_since = time.perf_counter() if self.idle_since is None else self.idle_since
        if time.perf_counter() - self.idle_since >= WORKERLESS_SECONDS:
            raise _workerless(self.what, WORKERLESS_SECONDS, "TimeoutError") from None


def _wait(client, futures, what: str, workers: frozenset | None = None) -> list:
    """The results of ``futures``, each waited for POLL_SECONDS at a time under :class:`_Watch`: a result whose data a
    worker that left held is computed again by Dask, and a plain gather would wait for it without end where no
    worker is left."""
    import distributed

    watch = _Watch(client, what, workers)
    while True:
        try:
            distributed.wait(futures, timeout=POLL_SECONDS)
            break
        except TimeoutError:
            watch.timed_out()
    out = []
    for future in futures:
        while True:
            try:
                out.append(future.result(timeout=POLL_SECONDS))
                break
            except TimeoutError:
                watch.timed_out()
    return out


def _gather(client, futures, what: str, expected: int | None = None, workers: frozenset | None = None):
    """Results of one map over all partitions, or a clear error (never a partial sum)."""
    try:
        out = _wait(client, futures, what, workers)
    except DistributedError:
        raise
    except InputError:
        raise
    except Exception as exc:  # KilledWorker, CancelledError, a worker's own error
        raise DistributedError(
            f"the Dask evaluation of {what} failed on the cluster ({type(exc).__name__}: {exc}); no partial "
            "result was used. If workers were lost, restart them (client.restart()) and fit again."
        ) from exc
    if len(out) != (len(futures) if expected is None else expected):  # pragma: no cover - one result per future
        raise DistributedError(f"{what}: {len(out)} of {expected} partitions answered")
    return out


SEND_TRIES = 3
RETRIES = 3  # runs of one evaluation, the first included, where workers are lost during it
WORKERLESS_SECONDS = 60.0  # with no worker this long, a fit on the cluster stops


POLL_SECONDS = 1.0  # how often a wait for the workers' results looks which workers the cluster has


class Workerless(DistributedError):
    """The cluster has had no worker for WORKERLESS_SECONDS: nothing to run an evaluation again on."""


class WorkerLost(DistributedError):
    """A worker left the cluster while an evaluation ran: it is run again (:meth:`DaskStats._retried`)."""


def _workerless(what: str, seconds: float, why: str) -> DistributedError:
    return Workerless(
        f"{what}: the cluster has had no worker for {seconds:g} s ({why}), so the fit cannot go on; start workers "
        "(or a new cluster) and fit again; with checkpoint= the fit resumes from its last checkpoint (warm_start=True)"
    )


def _await_workers(client, what: str) -> None:
    """Return once the cluster has a worker (the nanny restarts a lost one); a clear error after
    WORKERLESS_SECONDS."""
    try:
        client.wait_for_workers(1, timeout=WORKERLESS_SECONDS)
    except Exception as exc:  # TimeoutError, or the scheduler itself gone
        raise _workerless(what, WORKERLESS_SECONDS, type(exc).__name__) from exc


def retried(client, run, what: str, before_again=None):
    """``run(workers)`` (``workers``: the cluster's at its start), run again (after ``before_again()``) where a worker
    was lost during it, once the cluster has a worker, up to RETRIES runs in all; every fit's evaluations on a
    cluster go through here."""
    for attempt in range(1, RETRIES + 1):
        try:
            return run(_addresses(client))
        except Workerless:
            raise
        except DistributedError:
            if attempt == RETRIES:
                raise
            _await_workers(client, what)
            if before_again is not None:
                before_again()
    raise AssertionError("unreachable")  # pragma: no cover


def map_gathered(client, function, parts, args, what: str, **kwargs):
    """``function(part, args, **kwargs)`` on every partition future, the results gathered, with :func:`retried`'s
    rule: ``args`` sent as a task (:func:`_send`), an evaluation that met a lost worker run again."""

    def once(workers):
        sent = _send(client, args, what)
        futures = [client.submit(function, p, sent, pure=False, **kwargs) for p in parts]
        return _gather(client, futures, what, len(parts), workers)

    return retried(client, once, what)


def _as_is(args):
    return args


def _send(client, args, what: str, tries: int = SEND_TRIES, wait: float = 0.5):
    """``args`` as a future that the partitions' tasks read: a task that returns them, so that Dask
    recomputes them if the worker that holds them is lost (scattered data could not be), and never
    a broadcast, which waits without end on a worker that died during it. Submitting fails only
    if the scheduler is unreachable: tried again after a short wait, up to ``tries`` times, then a
    clear error.
    """
    for attempt in range(1, tries + 1):
        try:
            return client.submit(_as_is, args, pure=False)
        except Exception as exc:  # CommClosedError, OSError: the scheduler changed under us
            if attempt == tries:
                raise DistributedError(
                    f"sending the parameters for {what} to the workers failed {tries} times "
                    f"({type(exc).__name__}: {exc}); check the cluster (client.scheduler_info()) and fit again"
                ) from exc
            time.sleep(wait * attempt)


class DaskStats:
    """(X, y) as dask arrays, split into partitions held by the workers; the two passes as maps.

    ``X`` (n, D) and ``y`` (n,) are rechunked to one column chunk and the same row chunks if needed. With
    ``grouped`` each partition sums over one weighted row per distinct input of its own rows
    (:mod:`sparsegp.backends.replicates`): the same sums, from fewer rows where inputs repeat.
    """

    def __init__(self, X, y, chunk: int, client=None, grouped: bool = False, known=None):
        self.client = cluster_client(client)
        if X.ndim != 2 or y.ndim not in (1, 2) or X.shape[0] != y.shape[0]:
            raise InputError(
                f"X must be 2-D and y 1-D (or (n, k) for k targets) with as many rows, got shapes {X.shape} and "
                f"{y.shape}"
            )
        self.n = int(X.shape[0])
        self.n_partitions = len(X.chunks[0])
        self.rows = [int(r) for r in X.chunks[0]]
        self.known = known  # each row's known noise variance (a dask array), or None
        self._workers: frozenset = frozenset()  # the workers there when the evaluation in flight began
        extra = lambda k: (int(chunk), bool(grouped))  # noqa: E731
        self.blocks, self.parts = _partitions(self.client, X, y, _make_part, extra, known=known)
        rows = self._retried(
            lambda: self._gather([self.client.submit(_rows, p, pure=False) for p in self.parts], "the partitions"),
            "the partitions",
        )
        self._check(rows)
        self.bytes_moved = 0  # sent to and returned from the workers by the evaluations, in bytes
        self.evaluations = 0
        self._forward_args: tuple = ()
        self._held: tuple = ()  # the sent arguments of the forward pass in flight: its residuals' lineage

    def _check(self, rows):
        if int(sum(rows)) != self.n:  # pragma: no cover - a partition cannot change its row count
            raise DistributedError(f"the partitions hold {int(sum(rows))} rows, expected {self.n}")

    def _gather(self, futures, what: str):
        return _gather(self.client, futures, what, self.n_partitions, self._workers)

    def _retried(self, run, what: str, before_again=None):
        """:func:`retried` with the workers there at each run's start kept for :meth:`_gather`."""

        def once(workers):
            self._workers = workers
            return run()

        return retried(self.client, once, what, before_again)

    def _forward_once(self, args, what, n_at: int):
        sent = _send(self.client, args, what)
        fwd = [self.client.submit(_forward, p, sent, pure=False) for p in self.parts]
        sums = self._gather([self.client.submit(_sums, f, pure=False) for f in fwd], what)
        self._check([s[n_at] for s in sums])
        self._held = (sent,)
        return sums, fwd

    def _map_forward(self, args, what, n_at: int = -1):
        self._forward_args = (args, what, n_at)
        sums, fwd = self._retried(lambda: self._forward_once(args, what, n_at), what)
        self.bytes_moved += _nbytes(args) * self.n_partitions + _nbytes(sums)
        return [np.sum([s[k] for s in sums], axis=0) for k in range(len(sums[0]))], fwd

    def _map_backward(self, fwd, args, what):
        state = {"fwd": fwd, "again": False}

        def once():
            if state["again"]:  # the residuals may be lost with a worker: the same forward pass, the same sums
                state["fwd"] = self._forward_once(*self._forward_args)[1]
            sent = _send(self.client, args, what)
            futures = [self.client.submit(_backward, p, f, sent, pure=False) for p, f in zip(self.parts, state["fwd"])]
            return self._gather(futures, what)

        out = self._retried(once, what, lambda: state.update(again=True))
        self._held = ()
        self.bytes_moved += _nbytes(args) * self.n_partitions + _nbytes(out)
        self.evaluations += 1
        return functools.reduce(_tree_add, out, None)

    def forward(self, kernel, Z, Linv, weights: RowWeights | None = None):
        """The sums over every partition (:meth:`~sparsegp.backends.blas_sums.BlasStats.forward`), the residuals kept on
        the workers."""
        args = (kernel, np.asarray(Z), np.asarray(Linv))
        if weights is None:
            totals, fwd = self._map_forward(args, "the sums")
            return Stats(*totals), fwd
        weights = RowWeights(*map(float, weights))
        totals, fwd = self._map_forward((*args, weights), "the weighted sums", WeightedStats._fields.index("n"))
        return WeightedStats(*totals), fwd

    def backward(self, Linv, Luu, st, res, ct):
        """The cotangents (kernel, Z, L_uu^-1, sigma^2) summed over the partitions."""
        ct = type(st)(*(np.asarray(a) for a in ct))
        return self._map_backward(res, (np.asarray(Linv), np.asarray(Luu), ct), "the gradient")

    def close(self):
        """Release the partitions on the workers."""
        for p in (*self.parts, *self.blocks, *self._held):
            p.release()
        self.parts, self.blocks, self._held = [], [], ()


__all__ = ["DaskStats", "cluster_client", "is_dask_collection", "map_gathered", "retried"]


class PinnedStates:
    """One state object per row block of (X, y), built and kept on the worker that computes the block, and
    methods called on all of them in place: the partition-parallel loops (greedy selection) use this
    without touching Dask themselves.

    ``make(X_k, y_k, *extra(k))`` builds the state of block k; :meth:`map` calls ``method(*args)`` on every
    state on the worker that holds it (the states change in place, so a task never runs on a copy: no work
    stealing) and returns the results in block order.
    """

    def __init__(self, X, y, make, extra, client=None):
        import distributed

        self.client = cluster_client(client)
        self.blocks, self.parts = _partitions(self.client, X, y, make, extra)
        distributed.wait(self.parts)
        holders = self.client.who_has(self.parts)
        self.where = [sorted(holders[p.key])[0] for p in self.parts]

    def map(self, method: str, *args, what: str):
        return _gather(
            self.client,
            [
                self.client.submit(_call, p, method, *args, workers=[w], allow_other_workers=False, pure=False)
                for p, w in zip(self.parts, self.where)
            ],
            what,
        )

    def release(self) -> None:
        for p in (*self.parts, *self.blocks):
            p.release()


def _call(state, method, *args):
    return getattr(state, method)(*args)
