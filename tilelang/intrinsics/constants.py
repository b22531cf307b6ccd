"""Built-in constants: `f32::INFINITY`, `i32::MAX`, ..., and the bare `inf`, `nan`.

Associated constants of the scalar types, with Rust's names:

- every float type (`f16 bf16 f32 f64`): `INFINITY`, `NEG_INFINITY`, `NAN`,
  `MAX` (the largest finite value), `MIN` (= `-MAX`), `MIN_POSITIVE` (the
  smallest positive normal value), `EPSILON` (the gap between 1.0 and the next
  value);
- every integer type: `MAX`, `MIN`, `BITS` (`u32`, as in Rust).

`inf` and `nan` are untyped float constants (like a float literal, they take
the type of their context: `full::<f16>([4], -inf)`).

The checker resolves `T::NAME` here (`sema/names.py`); both engines read the
value from the symbol. Invariant: this module imports only the standard
library and `tilelang.dtypes`.
"""

from __future__ import annotations

import math

from tilelang.dtypes import DType

FLOAT_CONSTANTS = ("INFINITY", "NEG_INFINITY", "NAN", "MAX", "MIN", "MIN_POSITIVE", "EPSILON")
INT_CONSTANTS = ("MAX", "MIN", "BITS")
BARE_CONSTANTS: dict[str, float] = {"inf": math.inf, "nan": math.nan}
# Names that mean one of ours: `f32::INF` is `f32::INFINITY` (a suggestion by
# spelling would offer `MIN`).
CONSTANT_ALIASES = {"INF": "INFINITY", "INFINITE": "INFINITY", "NEG_INF": "NEG_INFINITY",
                    "NEG_INFINITE": "NEG_INFINITY", "NaN": "NAN", "MINIMUM": "MIN",
                    "MAXIMUM": "MAX", "EPS": "EPSILON"}
# The mathematical constants of `std::math` (stdlib/std/math.tile; a test
# checks the two agree), where Rust has `f32::consts::PI`: the help of
# `f32::PI` or `std::f32::consts::PI` names them.
MATH_CONSTANTS = ("PI", "E", "SQRT_2", "LN_2", "LOG2_E")

#: Rust's other `std::f64::consts` (round 22: `FRAC_1_SQRT_2`, Black-Scholes' N(x), was told the list above),
#: as expressions of std::math's constants, with their f64 values
RUST_DERIVED_CONSTANTS: dict[str, tuple[str, float]] = {
    "FRAC_1_SQRT_2": ("SQRT_2 / 2.0", math.sqrt(0.5)), "TAU": ("2.0 * PI", math.tau),
    "FRAC_PI_2": ("PI / 2.0", math.pi / 2), "FRAC_PI_3": ("PI / 3.0", math.pi / 3),
    "FRAC_PI_4": ("PI / 4.0", math.pi / 4), "FRAC_PI_6": ("PI / 6.0", math.pi / 6),
    "FRAC_PI_8": ("PI / 8.0", math.pi / 8), "FRAC_1_PI": ("1.0 / PI", 1 / math.pi),
    "FRAC_2_PI": ("2.0 / PI", 2 / math.pi), "FRAC_2_SQRT_PI": ("", 2 / math.sqrt(math.pi)),
    "LN_10": ("", math.log(10)), "LOG10_E": ("", math.log10(math.e)), "LOG2_10": ("", math.log2(10)),
    "LOG10_2": ("", math.log10(2)),
}

# (largest finite, smallest positive normal, epsilon), exactly representable
_FLOAT_LIMITS: dict[DType, tuple[float, float, float]] = {
    DType.F16: (65504.0, 2.0 ** -14, 2.0 ** -10),
    DType.BF16: (float.fromhex("0x1.fep+127"), 2.0 ** -126, 2.0 ** -7),
    DType.F32: (float.fromhex("0x1.fffffep+127"), 2.0 ** -126, 2.0 ** -23),
    DType.F64: (float.fromhex("0x1.fffffffffffffp+1023"), 2.0 ** -1022, 2.0 ** -52),
}

DOCS = {
    "INFINITY": "positive infinity",
    "NEG_INFINITY": "negative infinity",
    "NAN": "not a number (NaN)",
    "MAX": "the largest finite value (floats) or the largest value (integers)",
    "MIN": "the most negative finite value (floats: `-MAX`) or the smallest value (integers)",
    "MIN_POSITIVE": "the smallest positive normal value",
    "EPSILON": "the difference between 1.0 and the next larger value",
    "BITS": "the number of bits (a `u32`)",
}


def names_for(dt: DType) -> tuple[str, ...]:
    if dt.is_float:
        return FLOAT_CONSTANTS
    if dt.is_int:
        return INT_CONSTANTS
    return ()


def dtype_constant(dt: DType, name: str) -> tuple[DType, int | float] | None:
    """(its type, its value) of `dt::name`, or None when there is no such constant."""
    if dt.is_float and name in FLOAT_CONSTANTS:
        big, tiny, eps = _FLOAT_LIMITS[dt]
        value = {"INFINITY": math.inf, "NEG_INFINITY": -math.inf, "NAN": math.nan, "MAX": big,
                 "MIN": -big, "MIN_POSITIVE": tiny, "EPSILON": eps}[name]
        return dt, value
    if dt.is_int and name in INT_CONSTANTS:
        if name == "BITS":
            return DType.U32, dt.bits
        lo, hi = ((-(1 << (dt.bits - 1)), (1 << (dt.bits - 1)) - 1) if dt.is_signed
                  else (0, (1 << dt.bits) - 1))
        return dt, hi if name == "MAX" else lo
    return None


# `assert_close`'s default (rtol, atol) by element type (PyTorch's); integers
# and `bool` must be equal. The host runtime uses this table and the
# signature table's display of `assert_close` is made from it.
ASSERT_CLOSE_DEFAULTS: dict[DType, tuple[float, float]] = {
    DType.F16: (1e-3, 1e-5),
    DType.BF16: (1.6e-2, 1e-5),
    DType.F32: (1.3e-6, 1e-5),
    DType.F64: (1e-7, 1e-7),
}


def assert_close_defaults_text() -> str:
    """The defaults in words, e.g. for hover and `tilec doc`."""
    def num(x: float) -> str:
        return repr(x).replace("e-0", "e-")

    parts = [f"{dt.value} rtol {num(r)}, atol {num(a)}" for dt, (r, a) in ASSERT_CLOSE_DEFAULTS.items()]
    return "; ".join(parts) + "; integers and bool exact"
