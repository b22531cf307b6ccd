"""Scalar element types (BRIEF §3) and Tile's integer division, shared by every stage.

`ARITH` and `COMPARE` are the binary operators whose meaning on Python
numbers is already Tile's (no division, shift or rounding rule to decide);
every stage that folds constants looks them up there. `trunc_div` and
`trunc_rem` are the one definition of integer `/` and `%`:
they round toward zero (Rust, C, the IR), on Python ints. What a zero
divisor means depends on the stage (an error on the host and in constants,
`x / 0 == 0` and `x % 0 == x` in the IR), so callers decide it first.

Invariant: NumPy is the only import, and it is imported on first use of
`np_dtype` (so `tilec check`, which never needs it, starts without it).
`np_dtype` for bf16 is the storage type used by the interpreter (`uint16` bit
patterns are NOT used: bf16 values are held in float32 arrays rounded to bf16
after every operation).
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable
from decimal import Decimal
from enum import Enum
from fractions import Fraction
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # NumPy is imported on first use, so `tilec check` starts without it
    import numpy as np


class DType(Enum):
    BOOL = "bool"
    I8 = "i8"
    I16 = "i16"
    I32 = "i32"
    I64 = "i64"
    U8 = "u8"
    U16 = "u16"
    U32 = "u32"
    U64 = "u64"
    F16 = "f16"
    BF16 = "bf16"
    F32 = "f32"
    F64 = "f64"

    def __str__(self) -> str:
        # "f32", not "DType.F32": dtypes appear in diagnostics and printed types
        return self.value

    @property
    def bits(self) -> int:
        return _BITS[self]

    @property
    def itemsize(self) -> int:
        return max(1, self.bits // 8)

    @property
    def is_float(self) -> bool:
        return self in (DType.F16, DType.BF16, DType.F32, DType.F64)

    @property
    def is_int(self) -> bool:
        return not self.is_float and self is not DType.BOOL

    @property
    def is_signed(self) -> bool:
        return self in (DType.I8, DType.I16, DType.I32, DType.I64) or self.is_float

    def wrap(self, value: int) -> int:
        """`value` wrapped to this integer type (two's complement modulo
        2**bits), as Tile's integer arithmetic and int -> int casts do."""
        bits = self.bits
        v = value & ((1 << bits) - 1)
        if self.is_signed and v >= 1 << (bits - 1):
            v -= 1 << bits
        return v

    @property
    def np_dtype(self) -> np.dtype:
        """The NumPy dtype the interpreter computes in (bf16 -> float32)."""
        import numpy as np

        return np.dtype(_NP[self])

    @staticmethod
    def parse(name: str) -> DType | None:
        try:
            return DType(name)
        except ValueError:
            return None


_BITS = {
    DType.BOOL: 1, DType.I8: 8, DType.I16: 16, DType.I32: 32, DType.I64: 64,
    DType.U8: 8, DType.U16: 16, DType.U32: 32, DType.U64: 64,
    DType.F16: 16, DType.BF16: 16, DType.F32: 32, DType.F64: 64,
}
_NP = {
    DType.BOOL: "bool", DType.I8: "int8", DType.I16: "int16", DType.I32: "int32",
    DType.I64: "int64", DType.U8: "uint8", DType.U16: "uint16", DType.U32: "uint32",
    DType.U64: "uint64", DType.F16: "float16", DType.BF16: "float32",
    DType.F32: "float32", DType.F64: "float64",
}

DTYPE_NAMES = tuple(d.value for d in DType)


def trunc_div(a: int, b: int) -> int:
    """`a / b` rounded toward zero; `b` must not be 0."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def trunc_rem(a: int, b: int) -> int:
    """`a % b` with the sign of `a` (`a == b * trunc_div(a, b) + trunc_rem(a, b)`); `b` must not be 0."""
    return a - b * trunc_div(a, b)


def kernel_div(a: int, b: int, op: str) -> int:
    """A kernel's integer `a / b` (`op` "/") or `a % b` (`op` "%"), exactly,
    with its rule for a zero divisor, which does not trap: `a / 0 == 0`,
    `a % 0 == a` (the reference's Numbers; what the lowering folds and the
    GPU computes). The checker's shape and index arithmetic use it, so that
    a const generic of 0 gives the values the kernel will compute."""
    if b == 0:
        return 0 if op == "/" else a
    return trunc_div(a, b) if op == "/" else trunc_rem(a, b)


def float_div(a: float, b: float) -> float:
    """Float `a / b` by IEEE 754, as every engine computes it: a zero divisor
    gives an infinity of the quotient's sign, or NaN for `0 / 0` (Python's
    `/` raises)."""
    if b == 0:
        if a == 0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def float_rem(a: float, b: float) -> float:
    """Float `a % b` (C's fmod: the sign of `a`), as kernels compute it
    (NumPy's `fmod`, LLVM's `frem`): NaN for `b == 0` or an infinite `a`,
    where Python's `%` takes the sign of `b` and `math.fmod` raises."""
    if b == 0 or math.isinf(a):
        return math.nan
    return math.fmod(a, b)


# a float type's significand bits (the leading one included), the exponent of its
# smallest normal value and its largest finite value
_FLOAT_FORMAT = {"f16": (11, -14, 65504.0), "bf16": (8, -126, 3.3895313892515355e38),
                 "f32": (24, -126, 3.4028234663852886e38)}


def round_float(v: float | int, dt: DType) -> float:
    """`v` rounded to the float type `dt` as every engine holds a value of it:
    to nearest even (subnormals included), past the type's range to infinity.
    One rounding from the exact value, as the interpreter's bf16 (through a
    round-to-odd f32) and NumPy's f16 and f32 conversions give; an integer
    is rounded from its own value (`2**53 + 2**29 + 1` as `f32` is `2**53 +
    2**30`, where through f64 it would tie to `2**53`)."""
    fmt = _FLOAT_FORMAT.get(dt.value)
    if isinstance(v, int) and not isinstance(v, bool):
        if fmt is None or v == 0 or abs(v) < 2**53:  # exact in f64: rounding that is one rounding
            return round_float(float(v), dt) if v else 0.0
        bits, _, top = fmt
        q = abs(v).bit_length() - bits  # > 0: the integer has more bits than the type holds
        n, r = divmod(abs(v), 1 << q)
        half = 1 << (q - 1)
        n += 1 if r > half or (r == half and n & 1) else 0
        out = float(n << q)  # at most `bits` significant bits: exact
        return math.copysign(math.inf if out > top else out, v)
    if fmt is None or v != v or math.isinf(v) or v == 0:
        return float(v)
    bits, emin, top = fmt
    q = max(math.frexp(v)[1] - 1, emin) - (bits - 1)  # the exponent of the last significand bit
    out = math.ldexp(round(math.ldexp(v, -q)), q)  # exact scaling; `round` ties to even
    if abs(out) > top:
        return math.copysign(math.inf, v)
    return out if out != 0 else math.copysign(0.0, v)


def literal_float(v: float, text: str, dt: DType | None) -> float:
    """Float literal `text` (parsed to the f64 `v`) as a `dt` value, rounded
    once from the decimal as written, as Rust's `f32` literals are. Parsing
    through f64 rounds twice only where `v` falls exactly on a midpoint of
    two `dt` values (the largest value's upper midpoint included, from which
    a literal rounds to infinity): there the written digits decide (hrev22:
    `340282356779733661637539395458142568447.0` is just under f32's boundary,
    f32::MAX, where its f64 is the boundary, a tie to infinity)."""
    if dt is None or not dt.is_float:
        return v
    exact = exact_midpoint_literal(v, text, dt)
    return round_float(v, dt) if exact is None else _round_rational(exact, dt)


class LiteralFloat(float):
    """The value of an untyped float `let` (`let c = 0.1;`, `let c = -2.5;`, `let t = 1.0 / 3.0;`, `let c = PI;`):
    the f64 value, with the literal's text (no sign) where it is one literal, so that each read rounds it once
    to the read's type (`round_literal`), as the expression written there would be: f64's 0.1 where an f64
    reads it. (Round 22: it was held as the f32 the checker defaults the `let` to, so `x * c` of an f64 `x`
    multiplied by f32's 0.1, 0.10000000149, on both engines.)"""

    __slots__ = ("text",)
    text: str | None

    def __new__(cls, v: float, text: str | None) -> LiteralFloat:
        o = super().__new__(cls, v)
        o.text = text
        return o


def let_literal(value: Any, const: Callable[[Any], float | None] | None = None,
                call: Callable[[Any, list[int | float]], float | None] | None = None) -> LiteralFloat | None:
    """The `LiteralFloat` of an untyped `let`'s initializer that is a float literal without a suffix, its
    negation (`-2.5`), an untyped float name (`const(node)`, the engine's lookup of a name or path: an untyped
    float module constant's f64 value, or an earlier untyped `let`'s, else None), a float built-in of those
    (`call(node, operands)`: `sqrt(2.0)`, `(2.0).sqrt()`, `exp(1)`, `pow(x, 0.5)`, in f64 as an f64 instance of
    the call computes it: `interp.numeric.literal_math`, else None), or `+ - * /` of those and integer literals
    with a float among them (`1.0 / 3.0`, `PI / 2.0`, computed in f64 as the same expression written where it
    is read, and a module constant's, is); None for any other (the initializer is a syntax node)."""
    kind = type(value).__name__
    if kind == "FloatLit" and not value.suffix:
        return LiteralFloat(float(value.value), value.text)
    if kind == "Unary" and value.op == "-" and type(value.operand).__name__ == "FloatLit":
        lit = let_literal(value.operand)
        return LiteralFloat(-lit, lit.text) if lit is not None else None
    if kind in ("Name", "Path") and const is not None and isinstance(named := const(value), LiteralFloat):
        return named  # `let b = a;` of an untyped `let a = 0.1;`: as written, a's digits
    v = _literal_arith(value, const, call) \
        if kind in ("Unary", "Binary", "Name", "Path", "Call", "MethodCall") else None
    return LiteralFloat(v, None) if isinstance(v, float) and math.isfinite(v) else None


def _literal_arith(e: Any, const: Callable[[Any], float | None] | None,
                   call: Callable[[Any, list[int | float]], float | None] | None = None) -> int | float | None:
    """`e`'s value if it is `+ - * /` (and unary `-`) of unsuffixed literals, untyped float names and float
    built-ins of those, in Python's int and f64 arithmetic (an integer `/` of two integers, or a division by
    zero, is None: not the float rule)."""
    kind = type(e).__name__
    if kind in ("FloatLit", "IntLit"):
        return None if e.suffix else (float(e.value) if kind == "FloatLit" else int(e.value))
    if kind in ("Name", "Path"):
        return const(e) if const is not None else None
    if kind in ("Call", "MethodCall"):
        if call is None or any(a.name is not None for a in e.args):
            return None
        parts = ([e.receiver] if kind == "MethodCall" else []) + [a.value for a in e.args]
        vals = [_literal_arith(x, const, call) for x in parts]
        return None if any(v is None for v in vals) else call(e, vals)  # type: ignore[arg-type]
    if kind == "Unary" and e.op == "-":
        v = _literal_arith(e.operand, const, call)
        return None if v is None else -v
    if kind != "Binary" or e.op not in ("+", "-", "*", "/"):
        return None
    a, b = _literal_arith(e.lhs, const, call), _literal_arith(e.rhs, const, call)
    if a is None or b is None or e.op == "/" and (b == 0 or isinstance(a, int) and isinstance(b, int)):
        return None
    return a + b if e.op == "+" else a - b if e.op == "-" else a * b if e.op == "*" else a / b


def round_literal(v: LiteralFloat, dt: DType) -> float:
    """`v` as a `dt` value, rounded once: from the digits as written for a literal (`literal_float`), else from
    the f64 value."""
    if v.text is None:
        return round_float(float(v), dt)
    r = literal_float(abs(float(v)), v.text, dt)
    return -r if math.copysign(1.0, v) < 0 else r


def exact_midpoint_literal(v: float, text: str, dt: DType) -> Fraction | None:
    """The exact value of float literal `text` where its f64 `v` lies exactly
    on a midpoint of two `dt` values (so that the digits decide the rounding),
    else None."""
    fmt = _FLOAT_FORMAT.get(dt.value)
    if fmt is None or v != v or math.isinf(v) or v == 0:
        return None
    bits, emin, _ = fmt
    q = max(math.frexp(v)[1] - 1, emin) - (bits - 1)
    m = math.ldexp(abs(v), -q)
    if m - math.floor(m) != 0.5:
        return None
    body = re.sub(r"(f16|bf16|f32|f64)$", "", text.strip().lstrip("+")).replace("_", "")
    try:
        x = Fraction(Decimal(body))
    except (ArithmeticError, ValueError):
        return None
    return -x if v < 0 < x else x


def _round_rational(x: Fraction, dt: DType) -> float:
    """Exact `x` rounded to float type `dt` once, to nearest even, past the
    largest value to infinity (`round_float`'s rule for an exact value)."""
    bits, emin, top = _FLOAT_FORMAT[dt.value]
    a = abs(x)
    if a == 0:
        return math.copysign(0.0, x) if x else 0.0
    e = a.numerator.bit_length() - a.denominator.bit_length()  # 2**(e - 1) < a < 2**(e + 1)
    if a < Fraction(2) ** e:
        e -= 1  # now 2**e <= a < 2**(e + 1)
    q = max(e, emin) - (bits - 1)
    scaled = a / Fraction(2) ** q
    n = math.floor(scaled)
    r = scaled - n
    n += 1 if r > Fraction(1, 2) or (r == Fraction(1, 2) and n & 1) else 0
    out = math.ldexp(n, q)
    if out > top:
        out = math.inf
    return -out if x < 0 else out


def convert_scalar(v: bool | int | float, dt: DType) -> bool | int | float:
    """A Python number converted to `dt` as `as` converts it on every engine:
    integers wrap, floats to integers truncate and saturate (NaN -> 0), and a
    value converted to a float type is rounded to it (`16777217` as `f32` is
    16777216.0, `1e10` as `f16` infinity)."""
    if dt is DType.BOOL:
        return bool(v)
    if dt.is_int:
        if isinstance(v, float):
            if math.isnan(v):
                return 0
            lo, hi = (-(1 << (dt.bits - 1)), (1 << (dt.bits - 1)) - 1) if dt.is_signed else (0, (1 << dt.bits) - 1)
            if math.isinf(v):
                return hi if v > 0 else lo
            return max(lo, min(hi, int(v)))
        return dt.wrap(int(v))
    return round_float(v if isinstance(v, int) and not isinstance(v, bool) else float(v), dt)


def arange_problem(dt: DType, n: int) -> str | None:
    """Why `arange::<dt>(n)` cannot hold its values 0, 1, ..., n - 1, or `None`
    when it can: an integer past its type's range (it would wrap), an `f16`
    that rounds to infinity. One rule for the checker (a constant `n`), an
    instance's lowering (a generic `T` or `N`) and the host runtime (`n` known
    only at run time). Past 2048 (`f16`) or 256 (`bf16`) floats round to even
    values: defined, documented, not an error."""
    last = n - 1
    if last <= 0 or dt is DType.BOOL:
        return None
    if dt.is_int:
        lo, hi = (-(1 << (dt.bits - 1)), (1 << (dt.bits - 1)) - 1) if dt.is_signed else (0, (1 << dt.bits) - 1)
        if last > hi:
            return f"its last value, {last}, does not fit `{dt}` (which holds {lo}..={hi})"
    elif dt is DType.F16 and last >= 65520:  # 65520 and up round past 65504, to infinity
        return f"its last value, {last}, rounds to infinity in `f16` (whose largest finite value is 65504)"
    return None


def dot_acc_dtype(dt: DType) -> DType | None:
    """The accumulator type of a matrix product of `dt` tiles: `dot`'s result
    and the only accumulator `mma` takes (None for `bool`, which has none).
    f16, bf16 and f32 products sum in f32; f64 in f64; 8- and 16-bit integers
    (signed or not) in i32, as the tensor cores' int8 products do; 32- and
    64-bit integers in their own type. Integer products and sums wrap in it.
    One rule for the checker, the lowering (`dot`'s accumulator, a generic
    instance's `mma`) and the docs."""
    if dt is DType.BOOL:
        return None
    if dt.is_float:
        return DType.F64 if dt is DType.F64 else DType.F32
    return DType.I32 if dt.bits < 32 else dt


def common_dtype(a: DType, b: DType) -> DType | None:
    """The narrowest type that holds every value of both `a` and `b` (`i8`
    and `u8`: `i16`; `f16` and `bf16`: `f32`; `i32` and `f32`: `f64`), or
    None where none does (`u64` with a signed type, `bool`)."""
    if a is b:
        return a
    if DType.BOOL in (a, b):
        return None
    if a.is_float and b.is_float:
        if {a, b} == {DType.F16, DType.BF16}:
            return DType.F32
        return a if a.bits >= b.bits else b
    if a.is_float or b.is_float:
        f, i = (a, b) if a.is_float else (b, a)
        exact = {DType.F16: 11, DType.BF16: 8, DType.F32: 24, DType.F64: 53}[f]
        need = i.bits - (1 if i.is_signed else 0)  # magnitude bits
        if need <= exact:
            return f
        return DType.F32 if need <= 24 and f is not DType.F64 else DType.F64 if need <= 53 else None
    if a.is_signed == b.is_signed:
        return a if a.bits >= b.bits else b
    s, u = (a, b) if a.is_signed else (b, a)
    if s.bits > u.bits:
        return s
    return {8: DType.I16, 16: DType.I32, 32: DType.I64}.get(u.bits)


#: `dot_acc_dtype` in the words of a diagnostic's note or help.
ACC_RULE = ("the accumulator's type: `f32` for f16, bf16 and f32 inputs, `f64` for f64, `i32` for 8- and "
            "16-bit integers, the inputs' own type for 32- and 64-bit integers (integer sums wrap)")


ARITH: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul,
    "&": operator.and_, "|": operator.or_, "^": operator.xor,
}
COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "==": operator.eq, "!=": operator.ne, "<": operator.lt,
    "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}
