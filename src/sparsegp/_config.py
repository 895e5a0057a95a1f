"""Process-wide numeric configuration (float64 everywhere) and the package's one numeric constant.

JAX defaults to float32; Gaussian-process linear algebra (Cholesky factors of
ill-conditioned Gram matrices) needs float64, so the package switches JAX's x64
flag on at import. That flag, and the host engine's worker-thread pools (one per thread count, shared by every
fit in the process: :mod:`sparsegp.backends.blas_sums`), are the only process-wide state the package keeps.
"""

import math

import jax

jax.config.update("jax_enable_x64", True)

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
