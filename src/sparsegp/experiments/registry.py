"""``sparsegp reproduce``: one entry per paper, each writing DIR/<paper>/report.md, results.json and figures."""

from __future__ import annotations

import os
import time

from ..errors import InputError

MODES = ("quick", "full")


def _entries():
    from . import lawrence2003, quinonero_candela2005, seeger2003, smola_bartlett2001, titsias2009

    return {
        "seeger2003": seeger2003.reproduce,
        "titsias2009": titsias2009.reproduce,
        "quinonero-candela2005": quinonero_candela2005.reproduce,
        "lawrence2003": lawrence2003.reproduce,
        "smola-bartlett2001": smola_bartlett2001.reproduce,
    }


def papers() -> list[str]:
    return list(_entries())


def reproduce(paper: str, mode: str = "quick", out: str = "reports", verbose: bool = True, log=print) -> list[str]:
    """Run one paper's reproduction (or ``"all"``), then :func:`~sparsegp.experiments.index.refresh` ``out``;
    returns the report paths written. ``paper="verdicts"`` runs nothing and only refreshes."""
    from .index import refresh

    entries = _entries()
    if paper == "verdicts":
        readme = refresh(out, list(entries))
        if log:
            log(f"verdicts: {readme}")
        return [readme]
    if mode not in MODES:
        raise InputError(f"mode must be one of {MODES}, got {mode!r}")
    names = list(entries) if paper == "all" else [paper]
    unknown = [n for n in names if n not in entries]
    if unknown:
        raise InputError(f"unknown paper {unknown[0]!r}; choose from {sorted(entries)} or 'all'")
    written = []
    for name in names:
        t0 = time.perf_counter()
        path = entries[name](os.path.join(out, name), mode=mode, verbose=verbose)
        written.append(path)
        if log:
            log(f"{name}: {path} ({time.perf_counter() - t0:.0f} s)")
    refresh(out, list(entries))
    return written
