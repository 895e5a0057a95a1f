"""Process-wide numeric configuration (float64 everywhere) and the package's one numeric constant.

JAX defaults to float32; Gaussian-process linear algebra (Cholesky factors of
ill-conditioned Gram matrices) needs float64, so the package switches JAX's x64
flag on at import. This is the only global state the package touches.
"""

import math

import jax

jax.config.update("jax_enable_x64", True)

# log(2 pi), in every Gaussian log density of the package
LOG_2PI = math.log(2.0 * math.pi)
