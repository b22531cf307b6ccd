"""The backend's environment switches of a few named values (`TILEC_GEMM_SPLITK`, `TILEC_ATTN_CHAIN`, ..):
one reader, so that each says its unset value, checks the value, and words the error the same way
(`backend/env_switch.py`: a value a switch does not take is E0604, `SwitchError`)."""

from __future__ import annotations

from tilelang.backend.env_switch import SwitchError, flag, mode

__all__ = ["SwitchError", "flag", "mode"]
