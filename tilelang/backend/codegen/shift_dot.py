"""A product by a shift matrix, read as the shift it is (the FMA engine's `mma`, `codegen/mma.py`).

`dot(x, s)` with `s = (arange(K).reshape([K, 1]) + p == arange(N).reshape([1, N]) + q) as f32` (what `roll`'s
help and tests/user a05's max-pool write to move a row by one element: a tile has no element-offset load) sums
K products an output, K - 1 of them by zero. On the FMA engine that staged both tiles in shared memory and ran
K FMAs an output (a05: a [1, 64] x [64, 64] product a row of every block, 4,096 shared stores of the matrix).
Here `x` alone goes through shared memory and output (i, j) reads x[i, j + q - p].

The value is the FMA loop's bit for bit: the loop starts at the accumulator's +0.0 and adds the products in k
order, so an output is x[i, j + q - p] + 0.0 (-0.0 becomes +0.0; an output with no source, +0.0), NaN where
another element of the row is an infinity or a NaN (its product by zero), which a count of the row's non-finite
elements gives (`_nonfinite`). Only for an f32 product whose accumulator is a constant zero tile.
"""

from __future__ import annotations

from typing import Any

from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

from ..gpu import nodes as g

_Aff = tuple[str, int]  # ("k" / "n" / "1d" / "" (a constant), offset)


def _defs(em: Any) -> dict[int, object]:
    d = getattr(em, "_shift_defs", None)
    if d is None:
        d = {v.id: op for op in g.walk(em.k.body) for v in g.results(op)}
        em._shift_defs = d
    return d


def _affine(v: ir.Value, defs: dict[int, object], depth: int = 0) -> _Aff | None:
    """`v` as an index along one dim of a [K, N] tile plus a constant, or a constant."""
    if depth > 16:
        return None
    o = defs.get(v.id)
    match o:
        case ir.Const(value=c) if isinstance(c, int) and not isinstance(c, bool) and not v.shape:
            return ("", c)
        case ir.Arange() if len(v.shape) == 1:
            return ("1d", 0)
        case ir.Broadcast(x=x) if not x.shape:
            got = _affine(x, defs, depth + 1)
            return got if got is not None and got[0] == "" else None
        case ir.Broadcast(x=x) | g.ConvertLayout(x=x):
            return _affine(x, defs, depth + 1)
        case ir.Reshape(x=x) if len(x.shape) == 1 and len(v.shape) == 2 and 1 in v.shape:
            got = _affine(x, defs, depth + 1)
            if got is None or got[0] not in ("1d", ""):
                return None
            return got if got[0] == "" else ("k" if v.shape[1] == 1 else "n", got[1])
        case ir.Elementwise(op=ir.ElemOp.ADD | ir.ElemOp.SUB, operands=(x, y)):
            ax, ay = _affine(x, defs, depth + 1), _affine(y, defs, depth + 1)
            if ax is None or ay is None or (ax[0] and ay[0]) or (o.op is ir.ElemOp.SUB and ay[0]):
                return None
            return (ax[0] or ay[0], ax[1] + ay[1] if o.op is ir.ElemOp.ADD else ax[1] - ay[1])
    return None


def shift_of(em: Any, b: ir.Value) -> int | None:
    """d where `b` is the [K, N] f32 matrix with ones exactly at (j + d, j), made of aranges; else None."""
    if b.dtype is not DType.F32 or len(b.shape) != 2:
        return None
    defs = _defs(em)
    o = defs.get(b.id)
    while isinstance(o, g.ConvertLayout):
        o = defs.get(o.x.id)
    if not isinstance(o, ir.Cast) or o.x.dtype is not DType.BOOL:
        return None
    e = defs.get(o.x.id)
    if not isinstance(e, ir.Elementwise) or e.op is not ir.ElemOp.EQ:
        return None
    x, y = (_affine(v, defs) for v in e.operands)
    if x is None or y is None or {x[0], y[0]} != {"k", "n"}:
        return None
    (_, p), (_, q) = (x, y) if x[0] == "k" else (y, x)
    return q - p  # k + p == j + q


def _zero_acc(em: Any, acc: ir.Value) -> bool:
    o = _defs(em).get(acc.id)
    while isinstance(o, g.ConvertLayout):
        o = _defs(em).get(o.x.id)
    return isinstance(o, ir.Const) and o.value == 0 and not isinstance(o.value, bool)


def enabled() -> bool:
    """`TILEC_SHIFT_DOT` (unset or "1": on; "0": off, the FMA loop over the matrix as before)."""
    import os

    return os.environ.get("TILEC_SHIFT_DOT", "1") != "0"


def shift_dot(em: Any, op: ir.Mma | g.DotOp) -> bool:
    """Emit `op` as the shift its B matrix is (see the module doc); False where it is not one."""
    a, b, acc, r = op.a, op.b, op.acc, op.result
    if not enabled():
        return False
    if a.dtype is not DType.F32 or acc.dtype is not DType.F32 or len(a.shape) != 2 or not _zero_acc(em, acc):
        return False
    d = shift_of(em, b)
    if d is None:
        return False
    M, K = a.shape
    (off,) = em.to_smem([a], op.span)
    counts: dict[str, str] = {}
    out = []
    for _, (i, j) in em.out_coords(r):
        row = "0" if i == "0" else em.emit(f"mul i32 {i}, {K}")
        if i not in counts:
            counts[i] = _nonfinite(em, off, row, K)
        src = em.emit(f"add i32 {j}, {d}")
        inside = em.emit(f"icmp ult i32 {src}, {K}")  # 0 <= src < K
        at = em.emit(f"add i32 {row}, {em.emit(f'select i1 {inside}, i32 {src}, i32 0')}")
        x = em.emit(f"select i1 {inside}, float {em.smem_load(off, DType.F32, at)}, float 0.0")
        own = em.emit(f"zext i1 {em.emit(f'and i1 {inside}, {_is_nonfinite(em, x)}')} to i32")
        others = em.emit(f"icmp sgt i32 {em.emit(f'sub i32 {counts[i]}, {own}')}, 0")
        val = em.emit(f"fadd float {x}, 0.0")
        out.append(em.emit(f"select i1 {others}, float 0x7FF8000000000000, float {val}"))
    em.env[r.id] = out
    return True


def _is_nonfinite(em: Any, x: str) -> str:
    """i1: `x` is an infinity or a NaN."""
    ax = em.fcall("fabs", "float", [x])
    return em.emit(f"fcmp ueq float {ax}, 0x7FF0000000000000")  # type: ignore[no-any-return]


def _nonfinite(em: Any, off: int, row: str, K: int) -> str:
    """i32: how many of the K elements of the shared row at flat `row` are infinities or NaNs."""

    def body(k: str, cur: list[str]) -> list[str]:
        x = em.smem_load(off, DType.F32, em.emit(f"add i32 {row}, {k}"))
        return [em.emit(f"add i32 {cur[0]}, {em.emit(f'zext i1 {_is_nonfinite(em, x)} to i32')}")]

    return em.counted_loop(0, K, [("i32", "0")], body)[0]  # type: ignore[no-any-return]


__all__ = ["enabled", "shift_dot", "shift_of"]
