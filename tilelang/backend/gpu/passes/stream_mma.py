"""Pass `stream_mma`: the loads of an mma.sync loop no pipeline took, through per-thread cp.async rings.

A K loop whose product's operand is computed from loaded tiles (a weight
dequantised in the loop: `((w & 15) as f16 - z) * s`, W4A16 / W8A16; an
operand scaled or masked) is taken by no tensor-core pipeline: their rings
copy the operands themselves into shared memory, and a computed operand is
not a copy. Such a loop runs "ldmatrix + mma.sync with no pipeline": each
step loads its tiles with plain `ld.global`, computes, stages the operands
through shared memory and multiplies, with nothing in flight across steps
(latency-bound: hcliff14's n06 at 0.10x cuBLAS on an H100).

This pass gives the raw loads of such a loop `stream_loads`' ring: every
load whose value reaches a `DotOp` (engine "mma.sync") of the loop's body,
through any ops of the body, goes through a per-thread cp.async ring of S
stages, the copies of iteration i + S - 1 issued while iteration i computes
(`stream_loads._rewrite`: no barrier, each thread reads back only the
16-byte chunks it copied, in the load's own register layout, so the
dequantising code and the product's staging are unchanged). A tile several
threads hold (a scale row every warp reads) is copied by each of them: its
ring holds every copy, counted in the budget; where its one use is a layout
conversion (the broadcast's), it is copied in the converted layout and the
conversion goes (`_relaid`: no shared-memory round trip and two CTA
barriers a step; `TILEC_MMA_RING_RELAY=0` keeps it). Edges as the ring's: a chunk
past the tensor's edge is zero-filled (a load without mask reads zeros
there), an iteration past the loop's end copies nothing.

S: the `stages` hint (a kernel hinted `stages = S`), else `DEFAULT_STAGES`,
lowered until the rings fit the shared memory left beside the kernel's
other buffers and the code generator's scratch (at least the product's
operands); under 2 the loop keeps its loads. A hint that is lowered, or
that turns the rings off (`stages` 1, or 0 and below: "stages_off"), says
so in a note (`--explain`, `TILEC_EXPLAIN=1`), as does every load of the
product's operands the rings leave in registers and why (`_Loop.refused`),
and a loop none of whose loads fits. `TILEC_MMA_RING=0`: no loop changes.

The kernels that change are those with such a loop (sm_80 and later); a
loop of a pipeline's (`SmemDot`, `RingMma`, wgmma, FMA rings) or of scalar
FMAs is left to the passes that own it.
"""

from __future__ import annotations

import dataclasses

from tilelang.backend.env_switch import flag
from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

from .. import nodes as g
from .context import PassContext
from .rewrite import with_regions
from .stream_loads import (
    _PIPELINED,
    _budget,
    _Build,
    _chunks,
    _earliest,
    _Loop,
    _rewrite,
    _ring_bytes,
    _written,
)

DEFAULT_STAGES = 4
RING = "the cp.async load ring"


def enabled(hinted: bool = False) -> bool:
    """`TILEC_MMA_RING`: "1" takes every such mma.sync loop's loads through the rings, "0" none; unset: only a kernel
    whose hints ask `stages = 2` or more (`hinted`: the hint is how a user asks for them, never ignored). Not by
    default since call 43 (H100, 2026-12-07): n06 W4A16 0.2235 -> 0.2776 ms and W8A16 32 x 32 0.0973 -> 0.1142 ms
    with the rings (slower; RESULTS "call 43")."""
    return flag("TILEC_MMA_RING", "1" if hinted else "0")


def relay() -> bool:
    """`TILEC_MMA_RING_RELAY` (unset: "1"): a ring's load whose one use is a layout conversion is copied in the
    converted layout (`_relaid`); "0" keeps the load's layout and the conversion (an A/B switch)."""
    return flag("TILEC_MMA_RING_RELAY", "1")


def _dots(op: ir.For) -> list[g.DotOp] | None:
    """The mma.sync products of `op`'s body when they are its only products and no pipeline's op or ring is
    in it; else None."""
    dots = []
    top = {id(x) for x in op.body.ops}
    for x in g.walk(op.body):
        if isinstance(x, (*_PIPELINED, g.RingRead, ir.Mma)):
            return None
        if isinstance(x, g.DotOp):
            if x.engine != "mma.sync" or id(x) not in top:
                return None
            dots.append(x)
    return dots or None


def _feeding(op: ir.For, dots: list[g.DotOp]) -> set[int]:
    """The values of `op`'s body (by id) the products' operands are computed from (them included)."""
    defs = {r.id: x for x in op.body.ops for r in g.results(x)}
    want = [v for d in dots for v in (d.a, d.b)]
    seen: set[int] = set()
    while want:
        v = want.pop()
        if v.id in seen:
            continue
        seen.add(v.id)
        x = defs.get(v.id)
        if x is not None:
            want += list(g.operands(x))
    return seen


def _relaid(k: g.GpuKernel, op: ir.For, loads: list[ir.Load]) -> ir.For:
    """`op` with each of `loads` whose one use is a conversion to a layout of 16-byte chunks loaded in that
    layout instead (the load's result is the conversion's; the conversion is dropped): a scale or zero row
    that every warp reads, copied in the layout its broadcast reads, costs no conversion (two CTA barriers and a
    shared-memory round trip) a step. The ring copies the same chunks either way."""
    uses: dict[int, list[object]] = {}
    for x in g.walk(op.body):
        for v in g.operands(x):
            uses.setdefault(v.id, []).append(x)
    convs: dict[int, g.ConvertLayout] = {}
    for ld in loads:
        (use, *more) = uses.get(ld.result.id, [None])
        if (not more and isinstance(use, g.ConvertLayout) and any(use is x for x in op.body.ops)
                and _chunks(k, use.result) is not None):
            convs[id(ld)] = use
    if not convs:
        return op
    dropped = {id(c) for c in convs.values()}
    body = tuple(dataclasses.replace(x, result=convs[id(x)].result) if id(x) in convs else x
                 for x in op.body.ops if id(x) not in dropped)
    return dataclasses.replace(op, body=ir.Region(op.body.args, body))


def _scratch(dots: list[g.DotOp]) -> int:
    """Bytes the code generator stages for the products (A and B as 16-bit values, and an f32 accumulator)."""
    return max(-(-(d.a.type.numel * 2) // 16) * 16 + -(-(d.b.type.numel * 2) // 16) * 16 + d.result.type.numel * 4
               for d in dots)


def stream_mma(k: g.GpuKernel, ctx: PassContext) -> g.GpuKernel:
    hints = k.source.hints
    hinted = "stages" in hints
    if ctx.sm < 80 or not enabled(hinted and k.num_stages >= 2):
        return k
    off = "stages_off" in hints or (hinted and k.num_stages < 2)
    want = k.num_stages if hinted else DEFAULT_STAGES
    written = _written(k)
    defs: dict[int, object] = {r.id: op for op in g.walk(k.body) if isinstance(op, ir.Const | ir.Elementwise)
                               for r in g.results(op)}
    b = _Build(k)
    budget: int | None = None
    used: list[int] = []

    def region(r: ir.Region) -> ir.Region:
        nonlocal budget
        out: list[object] = []
        for old in r.ops:
            if isinstance(old, g.WarpSpecialize):
                out.append(old)
                continue
            op = with_regions(old, region)
            dots = _dots(op) if isinstance(op, ir.For) and op.body.args[0].dtype is DType.I32 else None
            if dots is None:
                out.append(op)
                continue
            assert isinstance(op, ir.For)
            if off:
                ctx.refuse(RING, op.span, f"the hints' `stages = {k.source.num_stages}` keep its loads in "
                           "registers", "ask for `stages = 2` or more (or give no `stages` hint)")
                out.append(op)
                continue
            loop = _Loop(k, ctx, op, written, defs, only=_feeding(op, dots))
            if relay() and loop.loads:
                op2 = _relaid(k, op, loop.loads)
                if op2 is not op:
                    loop = _Loop(k, ctx, op2, written, defs, only=_feeding(op2, dots))
            if budget is None:
                budget = _budget(k, ctx, extra=_scratch(dots))
            for ld, why, help in loop.refused:
                ctx.note(ld.span, f"{RING} leaves this load of `{ld.tensor}` in registers: {why}", help)
            per_stage = sum(_ring_bytes(k, ld) for ld in loop.loads)
            if not per_stage:  # (a loop whose operands load nothing in it waits for no memory: no note)
                if loop.refused:
                    ctx.refuse(RING, op.span, "no load of its products' operands can go through it (the notes on "
                               "the loads say why)")
                out.append(op)
                continue
            S = min(want, budget // per_stage)
            if S < 2:
                ctx.refuse(RING, op.span, f"two stages of its loads take {2 * per_stage} bytes of shared memory; "
                           f"{max(budget, 0)} are left beside the kernel's other buffers",
                           "use smaller tiles (fewer rows or columns a block)")
                out.append(op)
                continue
            if hinted and want > S:
                ctx.note(op.span, f"the hints asked `stages = {want}`; {RING} takes this loop with {S} (each "
                         f"stage {per_stage} bytes of shared memory, {budget} left)",
                         f"ask for `stages = {S}` or use smaller tiles")
            budget -= S * per_stage
            used.append(S)
            pre, rest = _rewrite(k, b, loop, S)
            at = _earliest(out, pre)
            out[at:at] = pre
            out += rest
        return ir.Region(r.args, tuple(out))  # type: ignore[arg-type]

    body = region(k.body)
    if not used:
        return k
    return dataclasses.replace(k, body=body, layouts=b.layouts, next_id=b.fresh.next, num_stages=max(used))


__all__ = ["DEFAULT_STAGES", "enabled", "stream_mma"]
