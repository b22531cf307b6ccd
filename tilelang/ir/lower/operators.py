"""Unary and binary operators and casts.

Constant operands fold (`fold.fold_binary`); otherwise both operands are
materialised to one dtype and one broadcast shape, as the checker typed
them, and become one element-wise IR op.
"""

from __future__ import annotations

from typing import Any

from tilelang.diagnostics.model import ICE
from tilelang.dtypes import DType
from tilelang.ir import nodes as ir
from tilelang.ir.lower.context import LowerCx
from tilelang.ir.lower.fold import convert_const, fold_binary, int_identity
from tilelang.ir.lower.values import BOOL, I32, CVal
from tilelang.source import Span

_BINOPS = {
    "+": ir.ElemOp.ADD, "-": ir.ElemOp.SUB, "*": ir.ElemOp.MUL, "/": ir.ElemOp.DIV,
    "%": ir.ElemOp.REM, "==": ir.ElemOp.EQ, "!=": ir.ElemOp.NE, "<": ir.ElemOp.LT,
    "<=": ir.ElemOp.LE, ">": ir.ElemOp.GT, ">=": ir.ElemOp.GE, "&": ir.ElemOp.AND,
    "|": ir.ElemOp.OR, "^": ir.ElemOp.XOR, "<<": ir.ElemOp.SHL, ">>": ir.ElemOp.SHR,
    "&&": ir.ElemOp.AND, "||": ir.ElemOp.OR,
}


def lower_binary(cx: LowerCx, op: str, a: Any, b: Any, span: Span) -> Any:
    if isinstance(a, CVal) and isinstance(b, CVal):
        folded = fold_binary(op, a, b)
        if folded is not None:
            return folded
    if op not in _BINOPS:
        raise ICE(f"lowering: unknown operator {op}")
    same = int_identity(op, a, b)
    if same is not None:
        return same
    x, y = cx.unify([a, b], span)
    return cx.b.elementwise(_BINOPS[op], x, y, span=span)


def lower_unary(cx: LowerCx, op: str, a: Any, span: Span) -> Any:
    if isinstance(a, CVal):
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
        return CVal(convert_const(v.value, dt), dt)
    x = cx.mat(v, None, span)
    return x if x.dtype is dt else cx.b.cast(x, dt, span=span)
