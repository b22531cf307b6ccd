"""The `heavy` marker's gate (used by tests/conftest.py): a heavier variant of
a path that a default test covers runs only with TILE_SLOW=1."""

from __future__ import annotations

import os
from typing import Any

import pytest

HEAVY = os.environ.get("TILE_SLOW") == "1"
REASON = "heavy: a default case covers this path; TILE_SLOW=1 runs it"


def skip_unless_slow_run(item: Any) -> None:
    """Skip `item` if it is marked `heavy` and this is not a TILE_SLOW=1 run."""
    if item.get_closest_marker("heavy") is not None and not HEAVY:
        pytest.skip(REASON)
