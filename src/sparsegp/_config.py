"""Process-wide numeric configuration (float64 everywhere, a persistent compilation cache) and the package's
one numeric constant.

JAX defaults to float32; Gaussian-process linear algebra (Cholesky factors of
ill-conditioned Gram matrices) needs float64, so the package switches JAX's x64
flag on when its first JAX-using module is imported. Where the process has no JAX compilation cache of its own,
the package keeps compiled programs in a per-user directory (:func:`cache_directory`), so that a second process
compiles nothing that a first already did; ``SPARSEGP_COMPILATION_CACHE=0`` turns that off, and a directory
that cannot be written is not used (JAX itself only warns when a cache entry cannot be read or written). Those
flags, and the host engine's worker-thread pools (one per thread count, shared by every fit in the process:
:mod:`sparsegp.backends.blas_sums`), are the only process-wide state the package keeps.
"""

import math
import os

import jax

jax.config.update("jax_enable_x64", True)

CACHE_VARIABLE = "SPARSEGP_COMPILATION_CACHE"  # "0" (or off, false, no): no cache; a path: that directory
CACHE_BYTES = 1 << 30  # the cache's size cap (JAX evicts the least recently used programs beyond it)


def cache_directory() -> str | None:
    """The directory of the package's persistent compilation cache: ``$SPARSEGP_COMPILATION_CACHE`` where that
    is a path, else ``$XDG_CACHE_HOME/sparsegp/jax`` (``~/.cache/sparsegp/jax``); None where the variable turns
    the cache off or the directory cannot be made and written."""
    setting = os.environ.get(CACHE_VARIABLE, "").strip()
    if setting.lower() in ("0", "off", "false", "no"):
        return None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    path = setting or os.path.join(base, "sparsegp", "jax")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError:
        return None
    return path if os.access(path, os.W_OK | os.X_OK) else None


def _use_compilation_cache() -> None:
    if jax.config.jax_compilation_cache_dir is not None:  # type: ignore[attr-defined]  # the process's own cache
        return
    path = cache_directory()
    if path is None:
        return
    jax.config.update("jax_compilation_cache_dir", path)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)  # a fit's programs compile in < 1 s each
    try:  # JAX caps the cache's size only with filelock installed; without it the cache is not capped
        import filelock  # noqa: F401
    except ImportError:
        return
    jax.config.update("jax_compilation_cache_max_size", CACHE_BYTES)


_use_compilation_cache()

# log(2 pi), in every Gaussian log density of the package
LOG_2PI = math.log(2.0 * math.pi)


def on_cpu() -> bool:
    """Whether JAX computes on the CPU: the one place the package asks which device it has. On a CPU the
    host paths (LAPACK for the Gaussian likelihood's factorisation, BLAS-3 sums for FITC, small chunks)
    beat XLA's kernels; on an accelerator everything stays in JAX (BENCHMARKS.md)."""
    return jax.default_backend() == "cpu"


def accelerator_memory() -> int | None:
    """Bytes of memory on JAX's first device when it is an accelerator; None on a CPU, or where the device
    does not say."""
    if on_cpu():
        return None
    limit = (jax.devices()[0].memory_stats() or {}).get("bytes_limit")
    return None if limit is None else int(limit)
