"""Run a benchmark suite: ``python -m benchmarks run SUITE`` (see SUITES below).

Each case runs in its own process; the table printed at the end is what goes
into BENCHMARKS.md together with this command.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys

from benchmarks.harness import COLUMNS, format_table, peak_rss_mib, run_case_in_subprocess  # noqa: E402

SUITES = {"exact-vs-sklearn": "exact_vs_sklearn"}


def _suite(name):
    import importlib

    if name not in SUITES:
        raise SystemExit(f"unknown suite {name!r}; known: {sorted(SUITES)}")
    return importlib.import_module(SUITES[name])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("suite", nargs="?", help=f"one of {sorted(SUITES)}")
    p.add_argument("--case", nargs=2, metavar=("SUITE", "CASE"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.case:
        suite, case = args.case
        row = _suite(suite).CASES[case]()
        row["peak_rss_MiB"] = round(peak_rss_mib(), 1)
        print(json.dumps(row))
        return 0
    if not args.suite:
        p.error("name a suite")
    mod = _suite(args.suite)
    rows = []
    for case in mod.CASES:
        print(f"running {args.suite}/{case} ...", file=sys.stderr, flush=True)
        rows.append(run_case_in_subprocess(args.suite, case))
    ref = rows[-1]
    for r in rows:
        r["fit_ratio_vs_" + ref["library"].split()[0]] = round(r["fit_s"] / ref["fit_s"], 3)
    extra = [k for k in rows[0] if k not in COLUMNS]
    print(f"# {args.suite} on {platform.processor() or platform.machine()}, {os.cpu_count()} cores")
    print(format_table(rows, COLUMNS + extra))
    return 0


if __name__ == "__main__":
    sys.exit(main())
