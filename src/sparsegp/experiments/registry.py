"""``sparsegp reproduce``: one entry per paper, each writing DIR/<paper>/report.md, results.json and figures."""

from __future__ import annotations

import json
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


def finished_here(out_dir: str, mode: str, revision: str | None) -> bool:
    """Whether ``out_dir`` holds a report written in ``mode`` by the code at ``revision`` (the
    :func:`~sparsegp.experiments.report.source_revision` running now; a clean checkout only): what
    ``reproduce all --resume`` may keep instead of running the paper again."""
    if revision is None or revision.endswith("+modified"):
        return False
    try:
        with open(os.path.join(out_dir, "results.json")) as f:
            done = json.load(f)
    except (OSError, ValueError):
        return False
    return (
        isinstance(done, dict)
        and done.get("mode") == mode
        and done.get("revision") == revision
        and os.path.exists(os.path.join(out_dir, "report.md"))
    )


def reproduce(
    paper: str, mode: str = "quick", out: str = "reports", verbose: bool = True, log=print, resume: bool = False
) -> list[str]:
    """Run one paper's reproduction (or ``"all"``), then :func:`~sparsegp.experiments.index.refresh` ``out``;
    returns the report paths written. ``paper="verdicts"`` runs nothing and only refreshes. ``resume`` keeps
    each paper whose report under ``out`` is :func:`finished_here`, and within the others each long step this
    code already finished (:mod:`~sparsegp.experiments.steps`): an interrupted ``all`` run goes on."""
    from . import report
    from .index import refresh
    from .steps import Kept, direct

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
    command = f"sparsegp reproduce {paper} --{mode}"
    revision = report.source_revision() if resume else None
    for name in names:
        out_dir = os.path.join(out, name)
        if resume and finished_here(out_dir, mode, revision):
            written.append(os.path.join(out_dir, "report.md"))
            if log:
                log(f"{name}: kept {written[-1]} (written by this code in {mode} mode)")
            continue
        step = direct
        if resume and revision is not None and not revision.endswith("+modified"):
            step = Kept(out_dir, mode, revision, log)
        t0 = time.perf_counter()
        path = entries[name](out_dir, mode=mode, verbose=verbose, command=command, step=step)
        written.append(path)
        if log:
            log(f"{name}: {path} ({time.perf_counter() - t0:.0f} s)")
    refresh(out, list(entries))
    return written
