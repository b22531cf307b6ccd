"""`_Build`: a list of scalar ops the passes build (constants, element-wise ops, ring positions), with fresh
values, and `trips` (a loop's iteration count). Its own module so that the Hopper GEMM pipeline, the attention pipeline and the persistent walks they
share (`attention_tiles`, `gemm_persistent`) import it without importing each other."""

from __future__ import annotations

from typing import Any

from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

from .. import nodes as g
from .context import Fresh


class _Build:
    def __init__(self, fresh: Fresh) -> None:
        self.fresh = fresh
        self.ops: list[object] = []

    def i32(self, hint: str = "") -> ir.Value:
        return self.fresh.value(DType.I32, (), hint)

    def const(self, c: int, hint: str = "") -> ir.Value:
        r = self.i32(hint)
        self.ops.append(ir.Const(r, c))
        return r

    def elem(self, op: ir.ElemOp, *xs: ir.Value, hint: str = "", dtype: DType = DType.I32) -> ir.Value:
        r = self.fresh.value(dtype, (), hint)
        self.ops.append(ir.Elementwise(r, op, xs))
        return r

    def undef(self, like: ir.Value, span: Any) -> ir.Value:
        """A value of `like`'s type and shape whose contents are never read (`g.Undef`)."""
        r = self.fresh.value(like.dtype, like.shape, like.hint)
        self.ops.append(g.Undef(r, span))
        return r

    def ring(self, it: ir.Value, stages: int) -> tuple[ir.Value, ir.Value]:
        """Iteration `it`'s slot in a ring of `stages` buffers: its stage and
        the parity of its pass over the ring (the mbarrier phase to wait on)."""
        s_c = self.const(stages)
        stage = self.elem(ir.ElemOp.REM, it, s_c, hint="stage")
        phase = self.elem(ir.ElemOp.AND, self.elem(ir.ElemOp.DIV, it, s_c), self.const(1), hint="phase")
        return stage, phase


def trips(b: object, lower: ir.Value, upper: ir.Value, step: ir.Value) -> ir.Value:
    """The iterations of `for iv in lower..upper step step` (`ir.For`: none where step <= 0), i32."""
    E = ir.ElemOp
    zero, one = b.const(0), b.const(1)  # type: ignore[attr-defined]
    span_ = b.elem(E.SUB, upper, lower)  # type: ignore[attr-defined]
    st = b.elem(E.MAXIMUM, step, one)  # type: ignore[attr-defined]
    n = b.elem(E.DIV, b.elem(E.ADD, span_, b.elem(E.SUB, st, one)), st)  # type: ignore[attr-defined]
    live = b.elem(E.AND, b.elem(E.GT, step, zero, dtype=DType.BOOL),  # type: ignore[attr-defined]
                  b.elem(E.GT, span_, zero, dtype=DType.BOOL), dtype=DType.BOOL)  # type: ignore[attr-defined]
    return b.elem(E.WHERE, live, n, zero, hint="trips")  # type: ignore[attr-defined]


__all__ = ["_Build", "trips"]
