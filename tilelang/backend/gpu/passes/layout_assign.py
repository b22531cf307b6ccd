"""Pass `layout_assign`: give every tile value a layout.

Values that an earlier pass placed (shared buffers, barriers, the wgmma
accumulator of a pipelined loop) keep their layout. The accumulator of a
loop that only accumulates into one `mma.sync` (`acc = mma(a, b, acc)` with
no other use) takes the mma.sync C-fragment layout (`MmaAcc`) for the loop's
carried value, the dot's result and the loop's result, so it stays in
registers for the whole loop. Every other tile value takes the generic
`Chunked` layout over the threads that run it (a warp role's threads inside
`warp_specialize`, else the CTA's), whose vector width makes global accesses
16 bytes wide where the shape allows.

Conversions where a def and a use disagree are inserted by the next pass,
`convert`.
"""

from __future__ import annotations

import dataclasses

from tilelang.ir import nodes as ir

from .. import nodes as g
from ..layouts import Layout, MmaAcc, chunked_for
from .context import PassContext
from .rewrite import uses


def fused_accumulators(op: ir.For) -> dict[int, g.DotOp]:
    """Carried positions whose value the body only feeds, as the accumulator, to
    one top-level mma.sync `DotOp` whose result is yielded back in its place."""
    body = op.body
    ys = body.ops[-1]
    assert isinstance(ys, ir.Yield)
    count = uses(body)
    out: dict[int, g.DotOp] = {}
    for i, arg in enumerate(body.args[1:]):
        for o in body.ops:
            if (isinstance(o, g.DotOp) and o.engine == "mma.sync" and o.acc.id == arg.id
                    and count.get(arg.id) == 1 and ys.values[i].id == o.result.id
                    and count.get(o.result.id) == 1):
                out[i] = o
    return out


def layout_assign(k: g.GpuKernel, ctx: PassContext) -> g.GpuKernel:
    layouts: dict[int, Layout] = dict(k.layouts)
    warps = k.num_warps

    def region(r: ir.Region, threads: int) -> None:
        for op in r.ops:
            if isinstance(op, ir.For):
                for i, dot in fused_accumulators(op).items():
                    frag = MmaAcc(threads // 32)
                    for v in (op.body.args[1 + i], dot.result, op.results[i]):
                        layouts.setdefault(v.id, frag)
            if isinstance(op, g.WarpSpecialize):
                for role in op.roles:
                    region(role.body, role.warps * 32)
                continue
            for sub in g.regions(op):
                for a in sub.args:
                    if a.shape:
                        layouts.setdefault(a.id, chunked_for(a.shape, threads))
                region(sub, threads)
            for v in g.results(op):
                if v.shape:
                    layouts.setdefault(v.id, chunked_for(v.shape, threads))

    region(k.body, warps * 32)
    return dataclasses.replace(k, layouts=layouts)


__all__ = ["fused_accumulators", "layout_assign"]
