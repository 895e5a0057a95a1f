"""
Thompson sampling with posterior function draws
===============================================

``sample_functions`` draws whole functions from the posterior, each one evaluated anywhere and the same at the
same input on every call (pathwise conditioning: a prior draw from random Fourier features, corrected by the
data; Wilson et al. 2020). Thompson sampling maximises one such draw to choose where to evaluate next: it
explores where the posterior is unsure and exploits where it is confident, with no acquisition function to
tune. Here it maximises a 1-D and a 5-D function observed with noise; the regret (the best value minus the
best evaluated so far) is drawn against random search with the same budget. After 30 evaluations, averaged
over 5 runs: 0.014 against random search's 0.026 in 1-D, 2.9 against 5.1 in 5-D.
"""

import os
import warnings

import matplotlib.pyplot as plt
import numpy as np

from sparsegp import ExactGPRegressor

quick = os.environ.get("SPARSEGP_DOCS_QUICK") == "1"
rounds = 5 if quick else 30


def f1(X):
    x = X[:, 0]
    return np.sin(3 * x) + 0.5 * np.cos(7 * x) - 0.1 * x**2


def f5(X):
    return -np.sum((X - 0.3) ** 2, axis=1) + 0.3 * np.sum(np.cos(3 * X), axis=1)


def thompson(f, D, seed):
    rng = np.random.default_rng(seed)
    candidates = rng.uniform(-3, 3, size=(2000 if D > 1 else 600, D))
    best = f(candidates).max()
    X = rng.uniform(-3, 3, size=(3, D))
    y = f(X) + 0.05 * rng.normal(size=3)
    regret = []
    for r in range(rounds):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a handful of rows: the fit's own checks have little to say
            model = ExactGPRegressor(max_iter=100).fit(X, y)
        draw = model.sample_functions(1, random_state=seed * 1000 + r)  # one function, evaluated on every candidate
        x_next = candidates[[int(np.argmax(draw(candidates)[:, 0]))]]
        X, y = np.vstack([X, x_next]), np.append(y, f(x_next) + 0.05 * rng.normal())
        regret.append(best - f(X).max())
    random_X = rng.uniform(-3, 3, size=(3 + rounds, D))
    random_regret = [best - f(random_X[: 4 + r]).max() for r in range(rounds)]
    return np.array(regret), np.array(random_regret)


fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
for ax, (f, D) in zip(axes, [(f1, 1), (f5, 5)]):
    runs = [thompson(f, D, seed) for seed in range(1 if quick else 5)]
    ts, rs = np.array([r[0] for r in runs]), np.array([r[1] for r in runs])
    ax.plot(np.arange(1, rounds + 1), ts.mean(axis=0), "o-", label="Thompson sampling")
    ax.plot(np.arange(1, rounds + 1), rs.mean(axis=0), "s--", label="random search")
    ax.set_yscale("symlog", linthresh=1e-3)
    ax.set_xlabel("evaluations after the first 3")
    ax.set_ylabel("regret (mean over runs)")
    ax.set_title(f"{D}-D")
    ax.legend()
    print(f"{D}-D: final regret, Thompson {ts[:, -1].mean():.4f}, random {rs[:, -1].mean():.4f}")
fig.tight_layout()
plt.show()
