"""What the reduction emitters share (`reduce.py`, `reduce_staged.py`): the identity of each operation (what a
masked lane contributes) and argmax/argmin's choice between two (value, index) pairs (ties to the smaller index,
NaN the largest value, as NumPy's), which makes their combination order-free."""

from __future__ import annotations

from typing import Any

from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

from .llvm_types import const_operand, reg_ty

R = ir.ReduceOp


def identity(rop: R, dt: DType) -> str:
    """The value `rop` leaves unchanged (what a masked lane contributes)."""
    if dt is DType.BOOL:
        return "true" if rop in (R.PROD, R.MIN, R.ARGMIN) else "false"
    if rop is R.SUM:
        return const_operand(dt, -0.0 if dt.is_float else 0)  # -0.0 + x is x, -0.0 too
    if rop is R.PROD:
        return const_operand(dt, 1)
    is_max = rop in (R.MAX, R.ARGMAX)
    if dt.is_float:
        return const_operand(DType.F64, float("-inf") if is_max else float("inf"))
    if dt.is_signed:
        return const_operand(dt, -(1 << (dt.bits - 1)) if is_max else (1 << (dt.bits - 1)) - 1)
    return const_operand(dt, 0 if is_max else (1 << dt.bits) - 1)


def pick(em: Any, rop: R, a: tuple[str, str], b: tuple[str, str], dt: DType) -> tuple[str, str]:
    """The winner of two (value, index) pairs for argmax/argmin."""
    ty = reg_ty(dt)
    (v, iv), (best, ib) = b, a
    better = em.better(rop is R.ARGMAX, v, best, dt)
    if dt.is_float:
        eq = em.emit(f"fcmp oeq {ty} {v}, {best}")
        vn = em.emit(f"fcmp uno {ty} {v}, 0.0")
        bn = em.emit(f"fcmp uno {ty} {best}, 0.0")
        eq = em.emit(f"or i1 {eq}, {em.emit(f'and i1 {vn}, {bn}')}")
    else:
        eq = em.emit(f"icmp eq {ty} {v}, {best}")
    lower = em.emit(f"icmp slt i32 {iv}, {ib}")
    take = em.emit(f"or i1 {better}, {em.emit(f'and i1 {eq}, {lower}')}")
    return (em.emit(f"select i1 {take}, {ty} {v}, {ty} {best}"),
            em.emit(f"select i1 {take}, i32 {iv}, i32 {ib}"))


__all__ = ["identity", "pick"]
