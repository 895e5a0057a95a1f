"""Which cases of a parametrised family run in the fast tier (``make test``); CI runs the rest (``make test-slow``)."""

import pytest


def slow_beyond(values, fast):
    """The parameters ``values``: those in ``fast`` as they are, every other marked slow."""
    return [v if v in fast else pytest.param(v, marks=pytest.mark.slow) for v in values]
