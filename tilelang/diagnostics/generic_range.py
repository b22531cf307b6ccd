"""A const generic's value against the integer type it is declared with (`const B: u8` given 300), one rule
for every place that fixes a value: the checker (`sema/generics.generic_values_fit`), the launch
(`runtime/launch.bind_launch`), a host function's call (`runtime/host_args.bind_params`) and a device
function's instance (`ir/lower/inline.py`). A leaf module (the dtypes only), so the checker, the runtime and
the lowering all import it without a cycle.
"""

from __future__ import annotations

from typing import Any

from tilelang.dtypes import DType


def int_bounds(dt: DType) -> tuple[int, int]:
    return ((-(1 << (dt.bits - 1)), (1 << (dt.bits - 1)) - 1) if dt.is_signed else (0, (1 << dt.bits) - 1))


def generic_misfits(generics: Any, values: Any) -> list[tuple[Any, int, DType]]:
    """The const generics of a declaration (`generics`: its `ast.GenericParam`s) whose value in `values`
    (name -> int) does not fit the integer type it is declared with (`const B: u8` given 300): each
    (parameter, value, type). A kernel read such a generic as its value (300) and a host function as the
    value wrapped into the type (44): the written type was accepted and not honoured (hrev29). Every place
    that fixes a generic's value refuses it: the checker (a turbofish, a partition's tile), the launch (a
    Python call's tile), a host function's call, a device function's instance."""
    out: list[tuple[Any, int, DType]] = []
    for g in generics:
        ty = getattr(g, "ty", None)
        name = getattr(getattr(ty, "name", None), "name", None)
        dt = DType.parse(name) if g.is_const and isinstance(name, str) else None
        v = values.get(g.name.name)
        if dt is None or not dt.is_int or isinstance(v, bool) or not isinstance(v, int):
            continue
        lo, hi = int_bounds(dt)
        if not lo <= v <= hi:
            out.append((g, v, dt))
    return out


def generic_misfit_words(g: Any, value: int, dt: DType, owner: str) -> tuple[str, str, str]:
    """(message, label at the declaration, help) for `generic_misfits`' finding; `owner` names the function
    ("kernel `k`")."""
    lo, hi = int_bounds(dt)
    name = g.name.name
    return (f"`{name}` of {owner} is {value}, out of range for `{dt.value}`",
            f"`{name}` is declared `{dt.value}` here (`{dt.value}` holds {lo}..={hi})",
            f"give `{name}` a value in {lo}..={hi}, or declare it a type that holds {value} "
            f"(`const {name}: {'i64' if value > (1 << 31) - 1 or value < -(1 << 31) else 'i32'}`)")
