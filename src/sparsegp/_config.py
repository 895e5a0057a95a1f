"""Process-wide numeric configuration: float64 everywhere.

JAX defaults to float32; Gaussian-process linear algebra (Cholesky factors of
ill-conditioned Gram matrices) needs float64, so the package switches JAX's x64
flag on at import. This is the only global state the package touches.
"""

import jax

jax.config.update("jax_enable_x64", True)

DTYPE = "float64"
