"""Compile-time scalar arithmetic with the IR's semantics.

`convert_const` converts a Python value like an IR `Cast` (integers wrap,
floats to integers truncate and saturate, NaN to 0), `fold_binary` folds
integer and boolean constant arithmetic (`/` and `%` truncate toward zero,
as the IR does) and exact float cases, `int_identity` drops `x * 1` and
`x + 0` on integers, `broadcast_shapes` is NumPy's rule on static shapes.
Nothing here emits IR.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tilelang.dtypes import ARITH, COMPARE, DType, convert_scalar, float_rem, trunc_div, trunc_rem
from tilelang.ir import nodes as ir
from tilelang.ir.lower.values import BOOL, I32, CVal, Unsupported
from tilelang.source import Span


def default_dtype(v: bool | int | float) -> DType:
    if isinstance(v, bool):
        return BOOL
    if isinstance(v, int):
        return I32
    return DType.F32


def convert_const(v: bool | int | float, dt: DType | None) -> bool | int | float:
    """A Python value converted to `dt` like an IR `Cast` (ints wrap, floats to
    ints truncate and saturate, NaN -> 0): `dtypes.convert_scalar`."""
    if dt is None:
        return v
    return convert_scalar(v, dt)


def fold_binary(op: str, a: CVal, b: CVal) -> CVal | None:
    """Fold integer and boolean constant arithmetic; floats are left to the IR
    except for exact-looking cases that need no rounding decision."""
    x, y = a.value, b.value
    dt = a.dtype or b.dtype
    if isinstance(x, bool) and isinstance(y, bool):
        match op:
            case "&&" | "&":
                return CVal(x and y, BOOL)
            case "||" | "|":
                return CVal(x or y, BOOL)
            case "^" | "!=":
                return CVal(x != y, BOOL)
            case "==":
                return CVal(x == y, BOOL)
        return None
    if isinstance(x, bool) or isinstance(y, bool):
        return None
    if op in COMPARE:
        return CVal(bool(COMPARE[op](x, y)), BOOL)
    if isinstance(x, int) and isinstance(y, int) and (dt is None or dt.is_int):
        match op:
            case "+" | "-" | "*" | "&" | "|" | "^":
                r = ARITH[op](x, y)
            case "/":
                r = 0 if y == 0 else trunc_div(x, y)  # the IR's `x / 0 == 0`
            case "%":
                r = x if y == 0 else trunc_rem(x, y)  # the IR's `x % 0 == x`
            case "<<":
                r = x << y if 0 <= y < 64 else 0
            case ">>":
                r = x >> y if 0 <= y < 64 else (0 if x >= 0 else -1)
            case _:
                return None
        return CVal(convert_const(r, dt) if dt else r, dt)
    if dt is None or dt is DType.F64:
        # untyped or f64 float constants fold exactly like f64 arithmetic
        fx, fy = float(x), float(y)
        match op:
            case "+":
                return CVal(fx + fy, dt)
            case "-":
                return CVal(fx - fy, dt)
            case "*":
                return CVal(fx * fy, dt)
            case "/":
                if fy == 0.0:
                    return None
                return CVal(fx / fy, dt)
            case "%":
                # fmod is exact (no rounding decision), as the IR's `rem` and the host compute it:
                # unfolded, an untyped `255 % 1e3` became an `f32` value that a generic instance's
                # cast operand could not fold with its other constants
                return CVal(float_rem(fx, fy), dt)
    return None


def int_identity(op: str, a: Any, b: Any) -> ir.Value | None:
    """`x * 1`, `1 * x`, `x + 0`, `0 + x`, `x - 0` on an integer value is `x`
    (exact for integers; not for floats, where `-0.0 + 0.0` is `+0.0`)."""
    def is_const(v: Any, k: int) -> bool:
        return isinstance(v, CVal) and not isinstance(v.value, bool) and v.value == k \
            and isinstance(v.value, int)

    for x, c, ok_ops in ((a, b, ("*", "+", "-")), (b, a, ("*", "+"))):
        if (isinstance(x, ir.Value) and x.dtype.is_int and op in ok_ops
                and ((op == "*" and is_const(c, 1)) or (op in ("+", "-") and is_const(c, 0)))):
            return x
    return None


def broadcast_shapes(shapes: Sequence[tuple[int, ...]], span: Span) -> tuple[int, ...]:
    try:
        return tuple(int(d) for d in np.broadcast_shapes(*shapes))
    except ValueError:
        raise Unsupported(span, "shapes " + " and ".join(str(list(s)) for s in shapes)
                          + " do not broadcast") from None
