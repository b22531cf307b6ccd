"""The Hopper GEMM pipeline's producer copies (`pipeline.py`): where each operand's tile is copied from (its
load's offsets in the producer, a column part's or each of a wide tile's user tiles'), and the TMA copies of
one operand's tile into a ring stage (its slabs' boxes)."""

from __future__ import annotations

import dataclasses
from typing import Any

from tilelang.ir import nodes as ir

from .. import nodes as g
from .build import _Build
from .context import Fresh
from .rewrite import substitute


def _copy_positions(pb: _Build, o: Any, wide: bool, shift: int, sl: list[object], mapping: dict[int, ir.Value],
                    subs: list[object], fresh: Fresh) -> list[tuple[ir.Value, ir.Value]]:
    """Operand `o`'s copy position in the producer (its load's offsets through `mapping`, B's N offset moved by
    `shift` for a column part), or with `wide` each of the wide tile's user tiles' (tile j >= 1's offsets cloned
    on its own position, `subs`)."""
    E = ir.ElemOp
    row0, col0 = (mapping.get(x.id, x) for x in o.load.offsets)
    if shift:  # part h: B's columns h * N on
        if o.kmajor:
            row0 = pb.elem(E.ADD, row0, pb.const(shift))
        else:
            col0 = pb.elem(E.ADD, col0, pb.const(shift))
    offs = [(row0, col0)]
    if not (wide and o.tma):
        return offs
    for sub in subs:
        smap = {**mapping, **sub.mapping}  # type: ignore[attr-defined]
        for op in sl:
            new = substitute(op, smap)
            nr = fresh.value(new.result.dtype, new.result.shape, new.result.hint)  # type: ignore[attr-defined]
            smap[op.result.id] = nr  # type: ignore[attr-defined]
            pb.ops.append(dataclasses.replace(new, result=nr))  # type: ignore[type-var]
        offs.append(tuple(smap.get(x.id, x) for x in o.load.offsets))  # type: ignore[arg-type]
    return offs


def _tma_copies(pb: _Build, o: Any, at: tuple[ir.Value, ir.Value], desc: str, buf: ir.Value, stage: ir.Value,
                full: ir.Value) -> None:
    """The TMA copies of operand `o`'s tile at `at` into `buf[stage]`: its slabs' boxes."""
    E = ir.ElemOp
    row0, col0 = at
    for slab in range(o.slabs):
        for rb in range(o.rows // o.box_rows):
            r = row0 if rb == 0 else pb.elem(E.ADD, row0, pb.const(rb * o.box_rows))
            c = col0 if slab == 0 else pb.elem(E.ADD, col0, pb.const(slab * o.elems))
            part = (slab * o.rows + rb * o.box_rows) * o.swizzle
            pb.ops.append(g.TmaLoad(desc, (r, c), buf, stage, part, full, o.load.span))


__all__ = ["_copy_positions", "_tma_copies"]
