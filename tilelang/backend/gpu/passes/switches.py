"""The backend's environment switches of a few named values (`TILEC_GEMM_SPLITK`, `TILEC_ATTN_CHAIN`, ..):
one reader, so that each says its unset value, checks the value, and words the error the same way."""

from __future__ import annotations

import os


def mode(name: str, default: str, allowed: tuple[str, ...]) -> str:
    """The value of switch `name` (unset: `default`); a value not in `allowed` is a ValueError naming the switch
    and the values it takes ("TILEC_GEMM_WIDEN='yes': expected 0, 1 or auto")."""
    want = os.environ.get(name, default)
    if want not in allowed:
        values = ", ".join(allowed[:-1]) + f" or {allowed[-1]}" if len(allowed) > 1 else allowed[0]
        raise ValueError(f"{name}={want!r}: expected {values}")
    return want


__all__ = ["mode"]
