"""What the two tuners (`api/tuning.py` for Python calls, `host.py` for Tile
launches) share without importing each other."""

from __future__ import annotations

from tilelang.diagnostics.model import TileError

# While set, every tuned launch times its candidates again (`tilec tune`).
FORCE = False


def why_skipped(e: TileError) -> str:
    """One line saying why a candidate was skipped."""
    text = str(e).splitlines()[0] if str(e) else type(e).__name__
    if "shared-memory" in text or "shared memory" in text:
        return f"needs more shared memory than the device has ({text})"
    return text
