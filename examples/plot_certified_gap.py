"""
The certified gap against m
===========================

Every sparse fit reports how far it is from the exact GP. At the fitted kernel and noise, VFE's bound F_V
(Titsias 2009, eq. 9) lies below the exact log marginal likelihood log p(y | theta), and ``upper_bound_``
(Titsias's 2014 upper bound, as GPflow's ``SGPR.upper_bound``) lies above it; their difference ``gap_``
bounds KL(q || exact posterior). Here abalone (3,133 training rows) is fitted with m = 16 to 512 inducing
inputs, and the exact GP's log p(y | theta) at each fit's own kernel and noise is computed beside the two
bounds: it always lies between them, and the gap shrinks as m grows.
"""

import os

import matplotlib.pyplot as plt
import numpy as np

from sparsegp import ExactGPRegressor, SparseGPRegressor, datasets

quick = os.environ.get("SPARSEGP_DOCS_QUICK") == "1"
X, y, X_test, y_test = datasets.load("abalone", split=0)
if quick:
    X, y = X[:800], y[:800]
sizes = [16, 32, 64] if quick else [16, 32, 64, 128, 256, 512]
lower, upper, exact = [], [], []
for m in sizes:
    model = SparseGPRegressor(inducing=m, random_state=0, tol=1e-3 if quick else 1e-4, max_iter=1000).fit(X, y)
    # The exact GP at the sparse fit's own kernel and noise, not refitted
    reference = ExactGPRegressor(kernel=model.kernel_, noise=model.noise_, optimize=False).fit(X, y)
    lower.append(model.objective_)
    upper.append(model.upper_bound_)
    exact.append(reference.log_marginal_likelihood_)
    print(
        f"m = {m:4d}: F_V {model.objective_:10.2f} <= log p(y) {exact[-1]:10.2f} <= U {model.upper_bound_:10.2f}"
        f"   gap {model.gap_:8.2f} nats ({model.gap_ / len(y):.3f} per row)"
    )
    assert lower[-1] <= exact[-1] + 1e-6 <= upper[-1] + 2e-6

fig, (ax, ax_gap) = plt.subplots(1, 2, figsize=(10, 3.8))
ax.plot(sizes, upper, "v-", label="upper bound U")
ax.plot(sizes, exact, "ko--", label="exact log p(y | theta)")
ax.plot(sizes, lower, "^-", label="VFE bound F_V")
ax.set_xscale("log", base=2)
ax.set_xlabel("inducing inputs m")
ax.set_ylabel("nats")
ax.legend()
ax.set_title("F_V <= log p(y | theta) <= U at each fit")
ax_gap.plot(sizes, np.subtract(upper, lower) / len(y), "s-")
ax_gap.set_xscale("log", base=2)
ax_gap.set_yscale("log")
ax_gap.set_xlabel("inducing inputs m")
ax_gap.set_ylabel("gap_ per training row (nats)")
ax_gap.set_title("the certified gap")
fig.tight_layout()
plt.show()
