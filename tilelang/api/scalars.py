"""Python numbers passed for scalar parameters of kernels and host functions.

`scalar_value(what, value, dt)` is the one check both use: it accepts a
Python or NumPy number (a 0-D array too) that the parameter's type holds
exactly in kind and range, and returns it as a Python `bool`, `int` or
`float`; anything else raises `CallError` saying what was given and what to
pass. Rejected: a complex number (its imaginary part would be dropped), a
`bool` for a number or a number for a `bool`, a float for an integer, an
integer out of the type's range, and a finite number beyond a float type's
largest finite value (`10**40` for an `f32` would silently become infinity;
pass `float("inf")` to mean infinity).

The codes are the language's for the same mistake in a Tile call, for a
kernel's launch and a host function's call alike: E0203 (mismatched types)
for a value of the wrong kind, E0222 (literal out of range) for a number its
type cannot hold.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from tilelang.api.errors import CallError
from tilelang.diagnostics.codes.types import LITERAL_OUT_OF_RANGE, MISMATCHED_TYPES
from tilelang.dtypes import DType, round_float
from tilelang.intrinsics.constants import dtype_constant
from tilelang.sema.typeops import FLOAT_LIMITS


def scalar_value(what: str, value: Any, dt: DType | None, *, where: str | None = None) -> Any:
    """`value` checked against the scalar type `dt` (None: any number)."""
    code = MISMATCHED_TYPES
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, (complex, np.complexfloating)):
        raise CallError(f"{what} is a real number{f' (`{dt.value}`)' if dt else ''}, but it is the "
                        f"complex number {value!r}", where=where, code=code,
                        help="pass its real part (`z.real`) if that is what you mean")
    if not isinstance(value, (bool, int, float, np.number, np.bool_)):  # not np.void, np.str_, ..
        name = type(value).__name__
        if isinstance(value, numbers.Number):  # a `Fraction`, a `Decimal`: numbers, converted as the caller says
            conv = "int" if dt is not None and dt.is_int else "float"
            help = f"convert it to a Python `{conv}` first: `{conv}(..)` of it"
        else:
            help = "pass a Python number (an `int` or a `float`)"
        raise CallError(f"{what} is a number{f' (`{dt.value}`)' if dt else ''}, but it is a `{name}`",
                        where=where, code=code, help=help)
    if dt is None:
        return value.item() if isinstance(value, np.generic) else value
    is_bool = isinstance(value, (bool, np.bool_))
    if dt is DType.BOOL:
        if not is_bool:
            raise CallError(f"{what} is a `bool`, but it is {value!r}", where=where, code=code,
                            help="pass `True` or `False`")
        return bool(value)
    if is_bool:
        raise CallError(f"{what} is of type `{dt.value}`, not a `bool`", where=where, code=code,
                        help=f"pass {'1 or 0' if dt.is_int else '1.0 or 0.0'}")
    if dt.is_int:
        if isinstance(value, (float, np.floating)):
            raise CallError(f"{what} is an integer (`{dt.value}`), but it is {value!r}", where=where, code=code,
                            help="pass an int (`int(..)` rounds toward zero)")
        lo, hi = dtype_constant(dt, "MIN")[1], dtype_constant(dt, "MAX")[1]  # type: ignore[index]
        if not lo <= int(value) <= hi:
            raise CallError(f"{what} is of type `{dt.value}`, and {int(value)} does not fit in it", where=where,
                            code=LITERAL_OUT_OF_RANGE,
                            help=f"`{dt.value}` holds {lo} to {hi}")
        return int(value)
    big = float(dtype_constant(dt, "MAX")[1])  # type: ignore[index]
    try:
        f = float(value)
    except OverflowError:  # an int beyond even f64
        f = math.inf
    # past the type's rounding boundary, as a Tile literal's "rounds to infinity" (hrev22: `65519.0` for an `f16`,
    # which rounds to 65504 there and in NumPy, was refused); an integer compared exactly
    limit = FLOAT_LIMITS[dt][1] if dt in FLOAT_LIMITS else math.inf
    if (math.isinf(f) and not (isinstance(value, (float, np.floating)) and math.isinf(value))) \
            or (math.isfinite(f) and abs(int(value) if isinstance(value, (int, np.integer)) else f) >= limit):
        shown = value if not isinstance(value, int) or abs(value) < 10**30 else f"an integer of {len(str(abs(value)))} digits"
        raise CallError(f"{what} is of type `{dt.value}`, and {shown} is beyond its largest finite value "
                        f"({big:g})", where=where, code=LITERAL_OUT_OF_RANGE,
                        help="pass a value in range, or `float(\"inf\")` to mean infinity")
    # an integer for a float type: rounded once from its own value (`float(2**53 + 2**29 + 1)` then f32 would
    # round twice, to 2**53)
    return round_float(int(value), dt) if isinstance(value, (int, np.integer)) else f
