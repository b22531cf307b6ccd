"""The backend's name for `tilelang.env_switch` (the one reader and refusal of the `TILEC_*` switches): the
backend's modules import it from here; the runtime, the interpreter and `run.py` import `tilelang.env_switch`
itself, which loads no backend module (the interpreter importing `tilelang.backend` made an import cycle)."""

from __future__ import annotations

from tilelang.env_switch import SwitchError, codegen_setting, flag, mode, number, numbers

__all__ = ["SwitchError", "codegen_setting", "flag", "mode", "number", "numbers"]
