"""Unary and binary operators and casts.

Constant operands fold (`fold.fold_binary`); otherwise both operands are
materialised to one dtype and one broadcast shape, as the checker typed
them, and become one element-wise IR op.
"""

from __future__ import annotations

from typing import Any

from tilelang.diagnostics.instances import shift_problem
from tilelang.diagnostics.model import ICE
from tilelang.dtypes import DType
from tilelang.ir import nodes as ir
from tilelang.ir.lower.context import LowerCx
from tilelang.ir.lower.fold import convert_const, fold_binary, int_identity
from tilelang.ir.lower.values import (
    BOOL,
    I32,
    CVal,
    InstanceDomain,
    InstanceFloatValue,
    InstanceMismatch,
    InstanceOverflow,
)
from tilelang.sema.types import TypeParam
from tilelang.source import Span
from tilelang.syntax import ast

_BINOPS = {
    "+": ir.ElemOp.ADD, "-": ir.ElemOp.SUB, "*": ir.ElemOp.MUL, "/": ir.ElemOp.DIV,
    "%": ir.ElemOp.REM, "==": ir.ElemOp.EQ, "!=": ir.ElemOp.NE, "<": ir.ElemOp.LT,
    "<=": ir.ElemOp.LE, ">": ir.ElemOp.GT, ">=": ir.ElemOp.GE, "&": ir.ElemOp.AND,
    "|": ir.ElemOp.OR, "^": ir.ElemOp.XOR, "<<": ir.ElemOp.SHL, ">>": ir.ElemOp.SHR,
    "&&": ir.ElemOp.AND, "||": ir.ElemOp.OR,
}


_INT_ONLY = {"<<": "integer elements", ">>": "integer elements", "&": "integer or `bool` elements",
             "|": "integer or `bool` elements", "^": "integer or `bool` elements", "!": "integer or `bool` elements"}


def check_instance_domain(cx: LowerCx, e: ast.Binary | ast.Unary) -> None:
    """A type-generic body's operator that this instance's `T` does not have
    (`<<`, `&`, `!` with `T = f64`, arithmetic with `T = bool`, unary `-`
    with an unsigned `T`) is E0204 here, before its untyped constant operands
    fold: `x + (!c)` of `let c = 7;` with `T = f64` stored -8 converted to a
    float, where the host's instance is E0204 and the concrete form E0201. An
    operation of values reaches the IR's check (`kernel._check_instance`)."""
    dt = getattr(cx.program.type_of(e), "dtype", None)
    if not isinstance(dt, TypeParam):
        return
    bound = cx.f.type_params.get(dt.name)
    if not isinstance(bound, DType):
        return
    unary = isinstance(e, ast.Unary)
    if unary and e.op == "-" and cx.cast_depth:
        return  # `(-(-1e3)) as T` negates floats until the cast; a value of `T` meets the IR's check
    what = ("unary `-`" if e.op == "-" else f"`{e.op}`") if unary else f"`{e.op}`"
    need = None
    if e.op in _INT_ONLY and (bound.is_float or (bound is DType.BOOL and e.op in ("<<", ">>"))):
        need = _INT_ONLY[e.op]
    elif not unary and e.op in ("+", "-", "*", "/", "%") and bound is DType.BOOL:
        need = "numbers"
    elif unary and e.op == "-" and (bound is DType.BOOL or (bound.is_int and not bound.is_signed)):
        need = "numbers" if bound is DType.BOOL else "signed numbers (an unsigned value has no negative)"
    if need is not None:
        raise InstanceDomain(e.span, what, bound, need)


def float_operands(cx: LowerCx, e: ast.Binary, a: Any, b: Any) -> tuple[Any, Any]:
    """An integer operand of arithmetic the checker typed as a float (`1 + 0.5`,
    `n * 0.5` of an untyped `let n = 3;`: the integer literal defaults to `i32`
    on its own, the sum to `f32`) becomes that float first, as the host computes
    it: `unify` took the first operand's `i32` and made the `0.5` a 0 (a stored
    `1 + 0.5` was 1.0, `n * 0.5` 0.0), or the sum an `i32` that met an `f32`
    (an ill-formed-IR internal error).

    In a generic instance whose `T` is an integer, a float operand of
    arithmetic typed `T` is E0201 (the host's `host_instances.check_operands`
    says it alike), except inside a cast's operand where it meets constants:
    those compute as floats until the cast, as the concrete `(127 + 1e3) as
    i64` does."""
    if e.op not in ("+", "-", "*", "/", "%", "&", "|", "^"):
        return a, b
    dt = getattr(cx.program.type_of(e), "dtype", None)
    generic = isinstance(dt, TypeParam)
    if generic:
        dt = cx.f.type_params.get(dt.name)
    if isinstance(dt, DType) and not dt.is_float and generic:
        floats = [_is_float(v) for v in (a, b)]
        if cx.cast_depth and any(floats) and all(f or isinstance(v, CVal) for f, v in zip(floats, (a, b))):
            # in a cast's operand a float meets constants: float arithmetic until the cast
            # (`(127 + 1e3) as T` with an integer `T`, as `(127 + 1e3) as i64` computes), as the
            # host's instance does; a float value's type, else untyped (folded in f64)
            fdt = next((v.dtype for v in (a, b) if isinstance(v, ir.Value)), None)

            def as_float(v: Any) -> Any:
                return CVal(float(v.value), fdt) if isinstance(v, CVal) else v

            return as_float(a), as_float(b)
        # an instance's integer `T` meets a float value (`x + c` of `let c = 256 / 0.1;`, `T = i16`):
        # E0201 as on the host, where the concrete form is E0201 too (it was an ill-formed-IR ICE)
        for v, side in ((a, e.lhs), (b, e.rhs)):
            if _is_float(v):
                if isinstance(side, ast.FloatLit) or (
                        isinstance(side, ast.Unary) and isinstance(side.operand, ast.FloatLit)):
                    raise InstanceMismatch(side.span, v.value, dt)  # the literal's words, as at `mat`
                raise InstanceFloatValue(side.span, v.dtype, dt)
    if not isinstance(dt, DType) or not dt.is_float or e.op in ("&", "|", "^"):
        return a, b

    def to_float(v: Any) -> Any:
        vt = v.dtype if isinstance(v, (CVal, ir.Value)) else None
        if vt is None or not vt.is_int or vt is DType.BOOL:
            return v
        if isinstance(v, CVal):
            return CVal(convert_const(v.value, dt), dt)
        return cx.mat(v, dt, e.span)

    return to_float(a), to_float(b)


def _is_float(v: Any) -> bool:
    if isinstance(v, CVal):
        return isinstance(v.value, float) or (v.dtype is not None and v.dtype.is_float)
    return isinstance(v, ir.Value) and v.dtype.is_float


def lower_binary(cx: LowerCx, op: str, a: Any, b: Any, span: Span) -> Any:
    if isinstance(a, CVal) and isinstance(b, CVal):
        if op in ("<<", ">>"):
            _check_shift(a, b, span)
        folded = fold_binary(op, a, b)
        if folded is not None:
            return folded
    if op not in _BINOPS:
        raise ICE(f"lowering: unknown operator {op}")
    same = int_identity(op, a, b)
    if same is not None:
        return same
    if op in ("<<", ">>"):
        a, b = _shift_operands(cx, a, b, span)
    x, y = cx.unify([a, b], span)
    return cx.b.elementwise(_BINOPS[op], x, y, span=span)


def _check_shift(a: CVal, b: CVal, span: Span) -> None:
    """A constant shift overflows only by its amount (as the checker's
    `consts.check_overflow` says of `1 << 40` on `i32`); the lowering meets
    the constants the checker could not know, in a generic instance."""
    if a.dtype is not None and shift_problem(a.dtype, b.value) is not None:
        raise InstanceOverflow(span, a.dtype, b.value)


def _shift_operands(cx: LowerCx, a: Any, b: Any, span: Span) -> tuple[Any, Any]:
    """A shift's result has its left operand's type, and its amount may be
    any integer type (`t << s`, `t: i8`, `s: i32`): the amount becomes the
    left operand's type keeping its meaning, a negative or over-wide amount
    the width itself (what the IR's shift makes of any amount past the
    width: 0, or the sign fill of `>>`), so a narrowing cast cannot turn
    `256` into `0`."""
    lt = a.dtype if isinstance(a, (ir.Value, CVal)) else None
    if lt is None and isinstance(b, ir.Value):
        lt = b.dtype
    if lt is None or not lt.is_int or lt is DType.BOOL:
        return a, b
    x = cx.mat(a, lt, span)
    if isinstance(b, CVal):
        v = b.value
        if isinstance(v, int) and not isinstance(v, bool) and b.dtype not in (None, lt):
            return x, CVal(v if 0 <= v < lt.bits else lt.bits, lt)
        return x, b
    if not isinstance(b, ir.Value) or b.dtype is lt or not b.dtype.is_int or b.dtype is DType.BOOL:
        return x, b
    wide = cx.mat(CVal(lt.bits, b.dtype), b.dtype, span)
    if b.dtype.is_signed:
        zero = cx.mat(CVal(0, b.dtype), b.dtype, span)
        big = cx.b.elementwise(ir.ElemOp.OR, *cx.unify([cx.b.elementwise(ir.ElemOp.LT, *cx.unify([b, zero], span),
                                                                          span=span),
                                                         cx.b.elementwise(ir.ElemOp.GT, *cx.unify([b, wide], span),
                                                                          span=span)], span), span=span)
        amount = cx.b.elementwise(ir.ElemOp.WHERE, *cx.unify([big, wide, b], span), span=span)
    else:
        amount = cx.b.elementwise(ir.ElemOp.MINIMUM, *cx.unify([b, wide], span), span=span)
    return x, cx.b.cast(amount, lt, span=span)


def lower_unary(cx: LowerCx, op: str, a: Any, span: Span) -> Any:
    # A constant outside the operator's domain (`-3u8`, `!2.5f32`: only a
    # generic function's instance gets here) is not folded: the operation
    # stays, and the instance's check refuses it (E0204) as for any value
    # (hrev11: it folded to 253 and -3.0)
    dt = a.dtype if isinstance(a, CVal) else None
    in_domain = dt is None or (op == "-" and (dt.is_float or dt.is_signed)) or \
        (op == "!" and not dt.is_float)
    if isinstance(a, CVal) and in_domain:
        if op == "-" and not isinstance(a.value, bool):
            return CVal(convert_const(-a.value, a.dtype) if a.dtype else -a.value, a.dtype)
        if op == "!":
            if isinstance(a.value, bool):
                return CVal(not a.value, BOOL)
            return CVal(convert_const(~int(a.value), a.dtype or I32), a.dtype)
    x = cx.mat(a, None, span)
    return cx.b.elementwise(ir.ElemOp.NEG if op == "-" else ir.ElemOp.NOT, x, span=span)


def lower_cast(cx: LowerCx, v: Any, dt: DType, span: Span) -> Any:
    if isinstance(v, CVal):
        # a constant is a value of its own type first: `(16777217 as f32) as i32` is 16777216,
        # `(1e10f32 as f16) as f32` infinity, as at run time and on the host
        src = v.value if v.dtype is None or not v.dtype.is_float else convert_const(v.value, v.dtype)
        return CVal(convert_const(src, dt), dt)
    x = cx.mat(v, None, span)
    return x if x.dtype is dt else cx.b.cast(x, dt, span=span)
