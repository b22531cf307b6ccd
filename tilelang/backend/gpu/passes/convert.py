"""Pass `convert`: make every layout change an explicit `ConvertLayout`.

After `layout_assign`, a value may be defined in one layout and read where
another is needed:

- a loop's carried value in a register layout other than its init's: the
  init is converted before the loop;
- a value in a tensor-core layout read by an op that works on the generic
  layout (a loop result, typically): it is converted before that op, once,
  and every later use in the region reads the converted value.

Ops that take any distributed layout as long as all their tile operands and
their result share it (element-wise ops, casts, stores, yields, dots and
waits on their accumulator) need no conversion. The code generator lowers
`ConvertLayout` through shared memory.
"""

from __future__ import annotations

import dataclasses

from tilelang.ir import nodes as ir

from .. import nodes as g
from ..layouts import Chunked, Layout, WgmmaAcc, chunked_for
from .context import Fresh, PassContext
from .rewrite import substitute, with_regions


def _polymorphic(op: object, layouts: dict[int, Layout]) -> bool:
    """Ops that run in whatever layout their tiles share (no conversion needed)."""
    if isinstance(op, ir.Yield | g.DotOp | g.Wgmma | g.WgmmaWait | g.ConvertLayout):
        return True
    if isinstance(op, ir.Elementwise | ir.Cast | ir.Store):
        tiles = [v for v in (*g.operands(op), *g.results(op)) if v.shape]
        lays = {layouts.get(v.id) for v in tiles}
        return len(lays) == 1 and isinstance(next(iter(lays)), WgmmaAcc)
    return False


def convert(k: g.GpuKernel, ctx: PassContext) -> g.GpuKernel:
    layouts = dict(k.layouts)
    fresh = Fresh(k.next_id)

    def region(r: ir.Region, threads: int) -> ir.Region:
        out: list[object] = []
        mapping: dict[int, ir.Value] = {}
        for op in r.ops:
            op = substitute(op, mapping)
            if isinstance(op, g.WarpSpecialize):
                op = dataclasses.replace(op, roles=tuple(
                    dataclasses.replace(ro, body=region(ro.body, ro.warps * 32)) for ro in op.roles))
            else:
                op = with_regions(op, lambda sub: region(sub, threads))
            if not _polymorphic(op, layouts):
                for v in g.operands(op):
                    lay = layouts.get(v.id)
                    if v.shape and lay is not None and not isinstance(lay, Chunked) and _is_register(lay):
                        nv = fresh.value(v.dtype, v.shape, v.hint)
                        layouts[nv.id] = chunked_for(v.shape, threads)
                        out.append(g.ConvertLayout(nv, v))
                        mapping[v.id] = nv
                        op = substitute(op, {v.id: nv})
            if isinstance(op, ir.For):
                new_inits = []
                for init, arg in zip(op.inits, op.body.args[1:], strict=True):
                    want = layouts.get(arg.id)
                    if init.shape and want is not None and layouts.get(init.id) != want:
                        nv = fresh.value(init.dtype, init.shape, init.hint)
                        layouts[nv.id] = want
                        out.append(g.ConvertLayout(nv, init))
                        init = nv
                    new_inits.append(init)
                op = dataclasses.replace(op, inits=tuple(new_inits))
            out.append(op)
        return ir.Region(r.args, tuple(out))  # type: ignore[arg-type]

    body = region(k.body, k.num_warps * 32)
    return dataclasses.replace(k, body=body, layouts=layouts, next_id=fresh.next)


def _is_register(lay: Layout) -> bool:
    from ..layouts import Barriers, Shared

    return not isinstance(lay, Shared | Barriers)


__all__ = ["convert"]
