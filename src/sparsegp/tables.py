"""Markdown tables: the one writer behind the CLI's results, the reproductions' reports and the benchmarks."""

from __future__ import annotations


def markdown_table(header: list[str], rows: list[list], *, pad: bool = True) -> str:
    """A GitHub markdown table of ``rows`` (cells converted with ``str``) under ``header``.

    ``pad`` aligns the columns for reading as plain text (the terminal); without it each cell is
    written as it is (the reports, where the markdown is rendered).
    """
    cells = [[str(v) for v in row] for row in rows]
    if not pad:
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in cells])
    width = [max(len(h), *(len(row[i]) for row in cells)) for i, h in enumerate(header)]
    lines = ["| " + " | ".join(h.ljust(w) for h, w in zip(header, width)) + " |"]
    lines.append("|" + "|".join("-" * (w + 2) for w in width) + "|")
    return "\n".join(lines + ["| " + " | ".join(v.ljust(w) for v, w in zip(row, width)) + " |" for row in cells])
