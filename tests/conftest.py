import os
import shutil

# Compiled XLA programs are shared through a cache on disk by every process of the run (xdist workers,
# the CLI's subprocesses): the suite fits hundreds of small models whose programs repeat, and compiling
# is most of a test's time. The same programs, so the same numbers; set before JAX is imported.
_CACHE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".jax-test-cache")
os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", _CACHE)
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", "0")
# Most programs the tests compile run once on a few dozen rows, and compiling is most of the suite's time:
# the tests compile quickly (LLVM at level 0 without its expensive passes, XLA's loop emitters instead of
# its fusion emitters, the plain scheduler, and each program's LLVM module compiled whole rather than split
# into parts for a parallel compilation that each worker's single thread cannot use). The fusion emitters
# round some fused reductions differently, so a test's fit can differ from the user's in the last bits; the
# tests check mathematics to stated tolerances, every bit-for-bit test compares programs compiled alike, and
# the fitted models under the default flags are checked by benchmarks/fit_digest.py. Times with and without:
# BENCHMARKS.md ("The test suite").
# These are CPU flags: with them set, pytest exits with no output on a machine with an NVIDIA GPU, so where
# one is present the tests run under XLA's own settings.
if not (shutil.which("nvidia-smi") or os.path.exists("/dev/nvidia0")):
    os.environ.setdefault(
        "XLA_FLAGS",
        "--xla_backend_optimization_level=0 --xla_cpu_use_fusion_emitters=false --xla_llvm_disable_expensive_passes=true "
        "--xla_cpu_enable_concurrency_optimized_scheduler=false --xla_cpu_parallel_codegen_split_count=1",
    )

# float64 before any test builds an array, as `import sparsegp` sets it. Set here rather than by importing the
# package, so that the process that only hands out tests to the workers does not import JAX at all.
os.environ.setdefault("JAX_ENABLE_X64", "1")

import atexit  # noqa: E402
import gc  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402


# Python's full collections walk every object, and a test process holds hundreds of thousands (the imported
# libraries, JAX's caches of traced and compiled programs): each took about 0.4 s late in the run, and the
# exit alone ran nine (pytest's check for exceptions raised in finalisers, then JAX's clean-up). Objects that
# live through collection, and everything alive once the tests are done, are moved out of the collector's
# sight after one full collection, which still finalises whatever is garbage at that point.
def _collect_and_freeze():
    gc.collect()
    gc.freeze()


# The fast tier (-m "not slow") does not import the modules whose every test is slow: their imports (Dask and
# distributed, scikit-learn's estimator checks) delayed each worker's first test (BENCHMARKS.md, "The doctests'
# cost offset"). Such a module says so in its own `pytestmark` line, which stays the one place that marks it.
_SLOW_MODULE = re.compile(r"^pytestmark = .*\bpytest\.mark\.slow\b", re.MULTILINE)


def pytest_ignore_collect(collection_path, config):
    fast_tier = config.getoption("markexpr", "") == "not slow"
    if fast_tier and collection_path.name.startswith("test_") and collection_path.suffix == ".py":
        return True if _SLOW_MODULE.search(collection_path.read_text(encoding="utf-8")) else None
    return None


def pytest_collection_finish(session):
    _collect_and_freeze()


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session):
    _collect_and_freeze()


# An xdist worker ends without freeing its memory piece by piece. JAX's exit handler (jax._src.api.clean_up)
# empties every cache of traced and compiled programs one by one so that a process could start its backends
# again, and the interpreter's finalisation then frees every remaining object; the run waits for both
# (BENCHMARKS.md, "The doctests' cost offset"). By then the worker has sent its results (xdist's
# "workerfinished", at the session's end) and its compiled programs are in the disk cache (written as they were
# compiled), so at exit it leaves at once. Only workers: the process that reports the run's status (xdist's
# controller, or pytest without -n) exits as usual.
@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    if hasattr(config, "workerinput"):
        atexit.register(_leave)  # registered last, so the first exit handler to run


def _leave():
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # a worker's own exit status is not read: its results went to the controller


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def _toy_regression(n=40, D=2, seed=0, noise=0.1):
    r = np.random.default_rng(seed)
    X = r.normal(size=(n, D))
    y = np.sin(2 * X[:, 0]) + (0.5 * X[:, 1] if D > 1 else 0) + noise * r.normal(size=n)
    return X, y


@pytest.fixture(scope="session")
def toy_regression():
    """``toy_regression(n=40, D=2, seed=0, noise=0.1) -> (X, y)``: y = sin(2 x1) + x2 / 2 + noise."""
    return _toy_regression


@pytest.fixture(scope="module")
def client():
    """A LocalCluster of two worker processes and its client, for one test module (the Dask tests)."""
    import warnings

    distributed = pytest.importorskip("distributed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, memory_limit="2GiB"
        )
        client = distributed.Client(cluster, timeout=60)
    yield client
    client.close(timeout=30)
    cluster.close(timeout=30)
