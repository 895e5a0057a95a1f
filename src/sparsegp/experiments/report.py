"""What every reproduction writes: ``report.md`` (tables of ours beside the paper's), ``results.json``, figures.

A :class:`Report` collects sections, comparison tables and figure names; :meth:`Report.write`
puts them into ``out_dir`` with the command, the date and the library version at the top, then the
table of the paper's claims with their computed verdicts (:mod:`sparsegp.experiments.claims`), and
refuses to write a non-finite number into results.json (it is valid JSON or nothing).
"""

from __future__ import annotations

import datetime
import json
import math
import os
import subprocess

import numpy as np

from .._atomic import replaced_atomically
from ..tables import markdown_table
from .claims import verdict_section


def _finite_tree(x, path="results"):
    if isinstance(x, dict):
        return {k: _finite_tree(v, f"{path}.{k}") for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_finite_tree(v, f"{path}[{i}]") for i, v in enumerate(x)]
    if isinstance(x, np.ndarray):
        return _finite_tree(x.tolist(), path)
    if isinstance(x, (np.floating, np.integer)):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        raise ValueError(f"{path} is {x}; a report holds finite numbers only")
    return x


def fmt(v, digits: int = 4) -> str:
    if v is None:
        return "-"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return f"{float(v):.{digits}g}"
    return str(v)


def source_revision() -> str | None:
    """The git commit the package runs from (``+modified`` when its tree has changes), or None outside a
    checkout: a report names the code that produced it, and ``reproduce all --resume`` keeps only reports
    from the very same code."""
    here = os.path.dirname(os.path.abspath(__file__))
    package = os.path.dirname(here)
    try:
        head = subprocess.run(
            ["git", "-C", here, "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True, timeout=10
        )
        if head.returncode != 0:
            return None
        dirty = subprocess.run(
            ["git", "-C", here, "status", "--porcelain", "--untracked-files=no", "--", package],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return head.stdout.strip() + ("+modified" if dirty.returncode != 0 or dirty.stdout.strip() else "")


class Report:
    """One paper's reproduction: markdown sections, tables and figures, plus every number in JSON."""

    def __init__(self, paper: str, title: str, mode: str, command: str | None = None):
        self.paper, self.title, self.mode = paper, title, mode
        self.command = command or f"sparsegp reproduce {paper} --{mode}"
        self.parts: list[str] = []
        self.figures: list[str] = []
        self.results: dict = {}
        self.protocol_rows: list[list[str]] = []

    def protocol(self, item: str, paper, ours, why: str = "") -> None:
        """One row of the protocol table the report starts with: the paper's setting, this run's (taken from
        the run's own configuration) and, where they differ, why."""
        paper, ours = fmt(paper), fmt(ours)
        self.protocol_rows.append([item, paper, ours, "-" if paper == ours else (why or "not stated")])

    def text(self, md: str) -> None:
        self.parts.append(md.strip() + "\n")

    def table(self, header: list[str], rows: list[list], caption: str | None = None, digits: int = 4) -> None:
        lines = [f"*{caption}*", ""] if caption else []
        lines.append(markdown_table(header, [[fmt(v, digits) for v in row] for row in rows], pad=False))
        self.parts.append("\n".join(lines) + "\n")

    def figure(self, filename: str, caption: str) -> None:
        self.figures.append(filename)
        self.parts.append(f"![{caption}]({filename})\n\n*{caption}*\n")

    def write(self, out_dir: str) -> str:
        from .. import __version__

        os.makedirs(out_dir, exist_ok=True)
        for name in self.figures:
            if not os.path.exists(os.path.join(out_dir, name)):
                raise FileNotFoundError(f"figure {name} was announced but not written to {out_dir}")
        when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
        revision = source_revision()
        head = (
            f"# {self.title}\n\nCommand: `{self.command}` ({self.mode} mode)  \n"
            f"Date: {when}  \nsparsegp {__version__}" + (f" (commit {revision})" if revision else "") + "\n"
        )
        if self.protocol_rows:
            head += "\n## Protocol: the paper's and this run's\n\n" + markdown_table(
                ["setting", "the paper", "this run", "why it differs"], self.protocol_rows, pad=False
            )
        section = verdict_section(self.paper, _finite_tree(self.results))
        if section:
            head += "\n" + section
        with replaced_atomically(os.path.join(out_dir, "report.md"), "w") as f:
            f.write("\n".join([head, *self.parts]))
        payload = {
            "paper": self.paper,
            "mode": self.mode,
            "version": __version__,
            "revision": revision,
            "date": when,
            "command": self.command,
            "figures": self.figures,
            "protocol": [dict(zip(("setting", "paper", "ours", "why"), row)) for row in self.protocol_rows],
            "results": self.results,
        }
        with replaced_atomically(os.path.join(out_dir, "results.json"), "w") as f:
            json.dump(_finite_tree(payload), f, indent=1, allow_nan=False)
        return os.path.join(out_dir, "report.md")
