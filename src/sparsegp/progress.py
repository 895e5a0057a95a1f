"""Progress reporting: one tqdm bar, silenced by ``verbose=False``."""

from __future__ import annotations

import sys

from tqdm.auto import tqdm


def progress_bar(total=None, desc: str = "", verbose: bool = True, unit: str = "it"):
    """A tqdm bar on stderr; a disabled (no-op) bar when ``verbose`` is False."""
    return tqdm(
        total=total,
        desc=desc,
        disable=not verbose,
        unit=unit,
        file=sys.stderr,
        leave=False,
        dynamic_ncols=True,
        mininterval=0.5,
    )
