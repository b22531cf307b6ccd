"""The `TILEC_*` (and `TILE_*`) environment switches read and refused in one way.

A switch set to a value it does not take is the user's setting, not a bug in
tilec: `SwitchError` is an E0604 diagnostic that names the variable, the value
and the values it takes, with a help to unset it. It is a `TileError` (the
runtime reports it at the launch that compiled the kernel), a `ValueError`
(what the readers raised before) and is reported as a diagnostic by the
driver's GPU stages (`backend._reporting`): `tilec emit` and `tilec run` print
it and exit 1 / 3, never an internal compiler error (which they did before,
2026-12-07 hgpuerr).

A leaf module (it imports only the diagnostics' model) so that `split_form.py`,
which the GPU IR's nodes import, the runtime and the interpreter can use it
without loading the backend (`backend/env_switch.py` is its name there).
"""

from __future__ import annotations

import os

from tilelang.diagnostics.model import Diagnostic, TileError


def _choices(allowed: tuple[str, ...]) -> str:
    return ", ".join(allowed[:-1]) + f" or {allowed[-1]}" if len(allowed) > 1 else allowed[0]


class SwitchError(TileError, ValueError):
    """`name` set to `value`, which it does not take (`expected`: the values it takes, in words)."""

    def __init__(self, name: str, value: str, expected: str) -> None:
        from tilelang.diagnostics.codes.codegen import GPU_SCHEDULE_REFUSED

        diag = (Diagnostic.error(GPU_SCHEDULE_REFUSED, f"environment variable `{name}={value!r}` is not a setting "
                                 f"it takes: expected {expected}")
                .with_help(f"unset `{name}` (its default is the tested setting) or set it to one of the values "
                           "above; the program itself need not change"))
        TileError.__init__(self, diag)
        self.diag = diag  # (a `CodegenError`'s face: the backend's callers read `.diag`)
        self.name, self.value = name, value


def mode(name: str, default: str, allowed: tuple[str, ...]) -> str:
    """The value of switch `name` (unset: `default`); a value not in `allowed` is a `SwitchError` naming the
    switch and the values it takes ("TILEC_GEMM_WIDEN='yes': expected 0, 1 or auto"). Empty: unset."""
    want = os.environ.get(name, "") or default
    if want not in allowed:
        raise SwitchError(name, want, _choices(allowed))
    return want


def flag(name: str, default: str) -> bool:
    """Switch `name` of "0" (off) or "1" (on); unset or empty: `default`. Anything else is a `SwitchError`:
    `TILEC_SHIFT_DOT=off` was on (every value but "0" was), `TILEC_TMA_PREFETCH=yes` off (every value but "1")."""
    want = os.environ.get(name, "") or default
    if want not in ("0", "1"):
        raise SwitchError(name, want, "0 or 1")
    return want == "1"


def number(name: str, default: int, lowest: int = 0, what: str = "") -> int:
    """Switch `name` as an integer of at least `lowest` (unset or empty: `default`); anything else is a
    `SwitchError` (`what`: the words for the values it takes, if not "an integer >= lowest")."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        n = int(raw)
    except ValueError:
        n = lowest - 1
    if n < lowest:
        raise SwitchError(name, raw, what or f"an integer of at least {lowest}")
    return n


def numbers(name: str, default: tuple[int, ...], lowest: int = 1) -> tuple[int, ...]:
    """Switch `name` as integers of at least `lowest` separated by commas ("64,128"; unset or empty: `default`);
    anything else is a `SwitchError`."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    parts = [x.strip() for x in raw.split(",") if x.strip()]
    if not parts or not all(x.isdigit() and int(x) >= lowest for x in parts):
        raise SwitchError(name, raw, f"integers of at least {lowest} separated by commas (\"64,128\")")
    return tuple(int(x) for x in parts)


__all__ = ["SwitchError", "flag", "mode", "number", "numbers"]
