"""The default fit's estimate of its own wall time against the time it took (issue: long fits a user can plan).

For each shipped regression dataset with at least 5,000 training rows, the default ``SparseGPRegressor()`` on
its canonical training split, inputs and targets as the loader gives them: the fit's first whole-fit estimate
(``estimates_[0]``: when it was made, what it said, where it assumed the growth would stop), its later
estimates, and the wall time of the fit, compilation included; the ratio of the first estimate to the actual.

    python -m benchmarks fit_estimates [names...] [--held-out] [--trace trace.json]

``--held-out`` runs the HELD_OUT fits instead: data the estimate's constants were not tuned on.

Prints, per dataset, every estimate made, then one table row per dataset. ``--trace`` keeps what the fit's
clock read (each size's start and each iteration's time and objective) for a later look.
"""

from __future__ import annotations

import json
import sys
import time
import warnings

from sparsegp import SparseGPRegressor, datasets
from sparsegp.fitting.estimate import Clock

SPLITS = {  # the canonical training split of each dataset with at least 5,000 training rows
    "kin40k": ("fixed", None),  # 10,000 rows (protocol K10)
    "pumadyn32nm": ("fixed", None),  # 7,168
    "pol": ("fixed", None),  # 10,000
    "elevators": (0, None),  # 14,939
    "parkinsons": (0, None),  # 5,287
}
HELD_OUT = {  # data the estimate's constants were not set on: other splits and sizes, two more datasets
    "kin40k/0": ("kin40k", 0, None),  # 36,000 rows
    "pol/0": ("pol", 0, None),  # 13,500
    "pumadyn32nm/0": ("pumadyn32nm", 0, None),  # 7,373
    "skillcraft/0": ("skillcraft", 0, None),  # 3,005
    "abalone/0": ("abalone", 0, None),  # 3,133
}


def traced(events: list):
    """Record the clock's inputs (each size's start and each iteration, with their times) in ``events``."""
    watch, call = Clock.watch, Clock.__call__

    def watch_and_record(self, Z, idx, path):
        events.append({"t": time.perf_counter() - self.t0, "m": int(Z.shape[0]), "path": [p._asdict() for p in path]})
        return watch(self, Z, idx, path)

    def call_and_record(self, iteration, value, params):
        events.append({"t": time.perf_counter() - self.t0, "value": float(value)})
        return call(self, iteration, value, params)

    Clock.watch, Clock.__call__ = watch_and_record, call_and_record
    return lambda: setattr(Clock, "watch", watch) or setattr(Clock, "__call__", call)


def one(name: str) -> dict:
    data, split, n_train = HELD_OUT[name] if name in HELD_OUT else (name, *SPLITS[name])
    X, y, _, _ = datasets.load(data, split=split, n_train=n_train)
    events: list = []
    restore = traced(events)
    t = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = SparseGPRegressor(random_state=0).fit(X, y)
    finally:
        restore()
    actual = time.perf_counter() - t
    first = model.estimates_[0]
    return {
        "name": name,
        "rows": X.shape[0],
        "m": model.Z_.shape[0],
        "stop": model.stop_reason_.split(":")[0],
        "actual": actual,
        "first": first,
        "ratio": first["total"] / actual,
        "estimates": model.estimates_,
        "events": events,
        "n": int(X.shape[0]),
        "cap": int(model.inducing_path_ and max(p["m"] for p in model.inducing_path_) or model.Z_.shape[0]),
    }


def main():
    skip = {sys.argv[sys.argv.index("--trace") + 1]} if "--trace" in sys.argv else set()
    names = [a for a in sys.argv[1:] if not a.startswith("--") and a not in skip] or list(
        HELD_OUT if "--held-out" in sys.argv else SPLITS
    )
    rows = []
    for name in names:
        r = one(name)
        rows.append(r)
        f = r["first"]
        print(
            f"{name}: {r['rows']} rows, m = {r['m']} ({r['stop']}), fit {r['actual']:.1f} s; first estimate at "
            f"{f['elapsed']:.1f} s (m = {f['m']}, iteration {f['iteration']}, final m assumed {f['final_m']}): "
            f"{f['total']:.1f} s, ratio {r['ratio']:.2f}",
            flush=True,
        )
        for e in r["estimates"]:
            print(f"    {e['elapsed']:7.1f} s  total {e['total']:7.1f} s  {e['message']}", flush=True)
    if "--trace" in sys.argv:
        with open(sys.argv[sys.argv.index("--trace") + 1], "w") as f:
            json.dump([{k: v for k, v in r.items() if k != "first"} for r in rows], f)
    print(
        "\n| data | rows | m chosen | stop | fit s | first estimate made at s | at m | assumed final m | first estimate s | estimate / actual |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        f = r["first"]
        print(
            f"| {r['name']} | {r['rows']:,} | {r['m']:,} | {r['stop']} | {r['actual']:.1f} | {f['elapsed']:.1f} | "
            f"{f['m']:,} | {f['final_m']:,} | {f['total']:.1f} | {r['ratio']:.2f} |"
        )


if __name__ == "__main__":
    main()
