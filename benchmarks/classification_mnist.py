"""MNIST, 784 inputs, 10 classes, the official split: the default ``SparseGPClassifier()`` alone.

    python -m benchmarks classification_mnist [--n-train N] [--stage-test] [--every K]
        [--out bench-output/mnist.json] [key=value ...]

Pixels as fractions of 255. Prints the test error, log loss, Brier score, ECE, m, the growth's path and the fit
time; extra ``key=value`` arguments are passed to the estimator (stated settings). ``--stage-test`` also
scores the test rows at the end of every stage of the growth (the fit's clock includes that scoring; each
stage's record gains ``test_error`` and ``test_log_loss``). ``--every K`` scores them every K L-BFGS
iterations too, printed with the clock since the fit began (``iterations`` in the output).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time

import numpy as np

from sparsegp import SparseGPClassifier, datasets, metrics


def test_scores(likelihood, params, Xt, yt) -> dict:
    """Test error and log loss of the fit's parameters at test inputs in the same units as the parameters' Z."""
    import jax.numpy as jnp

    from sparsegp.classification import svgp

    mu, var = svgp.predict_marginals(svgp.posterior_of(params), jnp.asarray(Xt))
    logp = np.asarray(likelihood.predict_log_proba(mu, var))
    return {
        "test_error": float(np.mean(logp.argmax(1) != yt)),
        "test_log_loss": float(-np.mean(logp[np.arange(yt.size), yt])),
    }


def score_each_stage(Xt, yt):
    """Wrap the growth's decision (called once at the end of each stage) to score the test rows first."""

    from sparsegp.fitting import variational as pipeline
    from sparsegp.fitting.hyper import scale_from_variances

    decide = pipeline._doubled

    def scored(config, params, Xs, path, data, rng):
        s = scale_from_variances(data.column_std**2)
        path[-1].update(test_scores(config.likelihood, params, Xt / s, yt))
        print(json.dumps(path[-1]), flush=True)
        return decide(config, params, Xs, path, data, rng)

    pipeline._doubled = scored


def score_every(Xt, yt, every: int, records: list):
    """Wrap each stage's L-BFGS (the pipeline's ``_stage``) with a callback that scores the test rows every
    ``every`` iterations (the user's callback sees the parameters in the inputs' own units, so the test inputs
    are scored as they are)."""
    import dataclasses

    from sparsegp.fitting import variational as pipeline

    stage = pipeline._stage
    t0 = time.perf_counter()

    def scored_stage(config, problem, params, mask, bounds, n, desc, *rule):
        def callback(iteration, value, p):
            if iteration % every == 0:
                record = {"stage": desc, "iteration": iteration, "bound": -value, "seconds": time.perf_counter() - t0}
                records.append(dict(record, **test_scores(config.likelihood, p, Xt, yt)))
                print(json.dumps(records[-1]), flush=True)
            return False

        return stage(dataclasses.replace(config, callback=callback), problem, params, mask, bounds, n, desc, *rule)

    pipeline._stage = scored_stage


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n-train", type=int, default=None)
    ap.add_argument("--out", default="bench-output/mnist.json")
    ap.add_argument("--stage-test", action="store_true")
    ap.add_argument("--every", type=int, default=0)
    ap.add_argument("settings", nargs="*")
    a = ap.parse_args()
    settings = {k: json.loads(v) for k, v in (s.split("=", 1) for s in a.settings)}
    X, y, Xt, yt = datasets.load("mnist")
    X, Xt = X / 255.0, Xt / 255.0
    if a.n_train:
        X, y = X[: a.n_train], y[: a.n_train]
    if a.stage_test:
        score_each_stage(Xt, yt)
    iterations: list = []
    if a.every:
        score_every(Xt, yt, a.every, iterations)
    t = time.perf_counter()
    clf = SparseGPClassifier(random_state=0, verbose=True, **settings).fit(X, y)
    fit_s = time.perf_counter() - t
    p = clf.predict_proba(Xt)
    codes = np.searchsorted(clf.classes_, yt)
    out = {
        "n_train": int(X.shape[0]),
        "settings": settings,
        "error": float(np.mean(p.argmax(1) != codes)),
        "log_loss": float(-np.mean(np.log(np.maximum(p[np.arange(codes.size), codes], 1e-300)))),
        "brier": metrics.brier_score(codes, p),
        "ece": metrics.expected_calibration_error(codes, p),
        "m": int(clf.Z_.shape[0]),
        "fit_s": fit_s,
        "path": clf.inducing_path_,
        "iterations": iterations,
        "stop_reason": clf.stop_reason_,
        "loo_log_loss": clf.loo_log_loss_,
        "loo_ece": clf.loo_calibration_error_,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }
    print(json.dumps(out, indent=1))
    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
