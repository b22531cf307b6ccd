"""Tile IR's opcodes: the element-wise (`ElemOp`), reduction (`ReduceOp`), scan
(`ScanOp`) and atomic (`AtomicOp`) operations the ops of `ir/nodes.py` name,
with their arity and operand domains. Split from `nodes.py` (at its 1,000
lines), which imports them as its own: `ir.ElemOp` is this module's `ElemOp`.
The numeric semantics of each are `nodes.py`'s module docstring's.
"""

from __future__ import annotations

from enum import Enum


class ElemOp(Enum):
    """Element-wise opcodes. The value is the canonical name, shared with the
    intrinsic table (`tilelang/intrinsics/signatures.py`), the interpreter and
    the backend. Operand/result typing (T = the result dtype unless noted):

    unary (x: T) -> T:  neg, not, abs, exp, exp2, log, log2, sqrt, rsqrt, sin,
        cos, tanh, sigmoid, floor, ceil, erf.  `not` is logical on bool and
        bitwise on integers; `neg` on unsigned wraps; the math functions
        (exp..erf) need a float T; `abs` of a signed MIN wraps to MIN.
    binary (a: T, b: T) -> T: add, sub, mul, div, rem, maximum, minimum,
        and, or, xor (logical on bool, bitwise on ints), shl, shr (ints only),
        pow (floats only: IEEE `pow`, `a` to the power `b`), atan2 (floats only: IEEE `atan2(a, b)`,
        the angle of the point (b, a); `asin`, `acos` and `atan` lower to it).
    comparison (a: T, b: T) -> bool: eq, ne, lt, le, gt, ge.
    ternary: fma(a: T, b: T, c: T) -> T computes a*b+c with ONE rounding for
        f32/f64 (f16/bf16: computed in f32 and rounded once);
        where(c: bool, a: T, b: T) -> T picks a where c else b.
    """

    # unary
    NEG = "neg"
    NOT = "not"
    ABS = "abs"
    EXP = "exp"
    EXP2 = "exp2"
    LOG = "log"
    LOG2 = "log2"
    SQRT = "sqrt"
    RSQRT = "rsqrt"
    SIN = "sin"
    COS = "cos"
    TANH = "tanh"
    SIGMOID = "sigmoid"
    FLOOR = "floor"
    CEIL = "ceil"
    ERF = "erf"
    # binary
    ADD = "add"
    SUB = "sub"
    MUL = "mul"
    DIV = "div"
    REM = "rem"
    MAXIMUM = "maximum"
    MINIMUM = "minimum"
    AND = "and"
    OR = "or"
    XOR = "xor"
    SHL = "shl"
    SHR = "shr"
    POW = "pow"
    ATAN2 = "atan2"
    # comparisons (result bool)
    EQ = "eq"
    NE = "ne"
    LT = "lt"
    LE = "le"
    GT = "gt"
    GE = "ge"
    # ternary
    FMA = "fma"
    WHERE = "where"

    @property
    def arity(self) -> int:
        return _ARITY[self]

    @property
    def is_comparison(self) -> bool:
        return self in _COMPARISONS

    @property
    def float_only(self) -> bool:
        return self in _FLOAT_ONLY

    @property
    def int_only(self) -> bool:
        """Ops defined on integers only (`and`/`or`/`xor`/`not` also take bool)."""
        return self in (ElemOp.SHL, ElemOp.SHR)


# the float math functions of one argument (floats only, as `pow` and `fma` are)
_MATH = (
    ElemOp.EXP,
    ElemOp.EXP2,
    ElemOp.LOG,
    ElemOp.LOG2,
    ElemOp.SQRT,
    ElemOp.RSQRT,
    ElemOp.SIN,
    ElemOp.COS,
    ElemOp.TANH,
    ElemOp.SIGMOID,
    ElemOp.FLOOR,
    ElemOp.CEIL,
    ElemOp.ERF,
)
_UNARY = (ElemOp.NEG, ElemOp.NOT, ElemOp.ABS, *_MATH)
_COMPARISONS = frozenset((ElemOp.EQ, ElemOp.NE, ElemOp.LT, ElemOp.LE, ElemOp.GT, ElemOp.GE))
_FLOAT_ONLY = frozenset((*_MATH, ElemOp.POW, ElemOp.ATAN2, ElemOp.FMA))
_ARITY = dict.fromkeys(_UNARY, 1) | {ElemOp.FMA: 3, ElemOp.WHERE: 3}
for _op in ElemOp:
    _ARITY.setdefault(_op, 2)


class ReduceOp(Enum):
    """Reductions over one axis (the axis is removed). `argmax`/`argmin` give i32."""

    SUM = "sum"
    PROD = "prod"
    MAX = "max"
    MIN = "min"
    ARGMAX = "argmax"
    ARGMIN = "argmin"


class ScanOp(Enum):
    """Inclusive scans along one axis (shape unchanged)."""

    CUMSUM = "cumsum"
    CUMPROD = "cumprod"
    CUMMAX = "cummax"  # running maximum (NaN-propagating, -0.0 < +0.0, as `maximum`)
    CUMMIN = "cummin"


class AtomicOp(Enum):
    ADD = "atomic_add"
    MAX = "atomic_max"
    MIN = "atomic_min"
