"""The one global the launch paths read: the active `tilelang.profile()` or
None. It imports nothing, so `runtime/launch.py` and `api/operation.py` pay
one attribute read per launch when no profile is active."""

from __future__ import annotations

from typing import Any

ACTIVE: Any = None  # a `tilelang.profiler.Profile` while one is active
