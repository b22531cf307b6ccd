"""Questions about semantic types that every checking pass asks.

Pure functions over `types.Type` (no diagnostics, no state): whether a type
is poisoned by an earlier error (`is_poison`: such values never cause a
second error), integer or float, how many elements a shape has, and `num_of`,
the classification of an element-wise operand as a scalar, an untyped
literal, a tile or a host tensor.
"""

from __future__ import annotations

import math

from tilelang.dtypes import DType, exact_midpoint_literal
from tilelang.frozen import frozen
from tilelang.sema.types import (
    Dim,
    ElemT,
    NeverT,
    RefT,
    ScalarT,
    Shape,
    TensorT,
    TileT,
    Type,
    UntypedFloat,
    UntypedInt,
    any_part,
    contains_error,
)


def is_pow2(n: int) -> bool:
    return n > 0 and (n & (n - 1)) == 0


def int_range(d: DType) -> tuple[int, int]:
    if d.is_signed:
        return -(1 << (d.bits - 1)), (1 << (d.bits - 1)) - 1
    return 0, (1 << d.bits) - 1


# The largest finite value of each float type and the magnitude from which a
# literal rounds (to nearest, ties to even) to infinity: max + ulp(max) / 2.
FLOAT_LIMITS: dict[DType, tuple[str, float]] = {
    DType.F16: ("65504", 65520.0),
    DType.BF16: ("3.3895314e38", 2.0 ** 128 - 2.0 ** 119),
    DType.F32: ("3.4028235e38", 2.0 ** 128 - 2.0 ** 103),
    DType.F64: ("1.7976931348623157e308", math.inf),
}


def float_literal_overflows(v: float, d: DType, text: str | None = None) -> bool:
    """Whether the finite number `v`, written as a literal of float type `d`,
    rounds to infinity there. A literal already infinite in Python
    (`1e999999`) is not counted: `sema/exprs.py` reports it once, where the
    literal is typed, so the contexts that settle its type later do not.
    Where `v` (parsed through f64) is the boundary itself, the literal's
    `text` decides: 39 digits just under f32's boundary are f32::MAX (hrev22)."""
    if math.isinf(v):
        return False
    limit = FLOAT_LIMITS.get(d)
    if limit is None:
        return False
    exact = exact_midpoint_literal(v, text, d) if text is not None and abs(v) == limit[1] else None
    return abs(exact if exact is not None else v) >= limit[1]


def elem_is_float(e: ElemT | None) -> bool:
    return isinstance(e, DType) and e.is_float


def elem_is_int(e: ElemT | None) -> bool:
    return isinstance(e, DType) and e.is_int


def is_numeric_scalar(ty: Type) -> bool:
    return isinstance(ty, (ScalarT, UntypedInt, UntypedFloat))


def is_intlike(ty: Type) -> bool:
    return isinstance(ty, UntypedInt) or (isinstance(ty, ScalarT) and elem_is_int(ty.dtype))


def is_poison(*tys: Type | None) -> bool:
    return any(t is None or isinstance(t, NeverT) or contains_error(t) for t in tys)


def deref(ty: Type) -> Type:
    return ty.inner if isinstance(ty, RefT) else ty


def mentions_tile(ty: Type) -> bool:
    return any_part(ty, TileT)


def numel(shape: Shape) -> Dim:
    out = Dim.const(1)
    for d in shape:
        out = out * d
    return out


# Operands of element-wise operations, classified.
@frozen(eq=True)
class Num:
    kind: str  # "scalar", "int" (untyped int literal), "float" (untyped float), "tile", "tensor"
    elem: ElemT | None  # None for untyped literals, or a tensor of unknown dtype
    shape: tuple[Dim | None, ...] | None  # () for scalars; None: tensor of unknown rank


def num_of(ty: Type, in_kernel: bool) -> Num | None:
    match ty:
        case ScalarT(dtype=d):
            return Num("scalar", d, ())
        case UntypedInt():
            return Num("int", None, ())
        case UntypedFloat():
            return Num("float", None, ())
        case TileT(dtype=d, shape=s):
            return Num("tile", d, s)
        case TensorT(dtype=d, shape=s) if not in_kernel:
            return Num("tensor", d, s)
        case RefT(inner=TensorT(dtype=d, shape=s)) if not in_kernel:
            return Num("tensor", d, s)
        case _:
            return None
