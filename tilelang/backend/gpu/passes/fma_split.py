"""Split-K for the FMA pipeline's GEMMs with few tiles (`pipeline_fma`; hgemm4, round 18): the Hopper pipeline's
form 3 (`gemm_split`) on the cp.async ring, for f32 accumulators.

An f32 GEMM of few output tiles (a skinny M = 64 layer: 64 x 64 tiles over 64 x 4096 are 64 CTAs on 132 SMs, each
running the whole K loop) leaves SMs idle. As on Hopper (`TILEC_GEMM_SPLITK`, "auto" by default: the runtime
picks the variant where a launch's grid has at most half as many tiles as SMs, `GpuKernel.few` ->
`TensorFacts.few_tiles`), the variant launches CTAs that fill the card (`GpuKernel.fill`; `ctas_per_sm` of them an SM, the FMA kernels
being small: 6 of 64 x 64 x 16's 2 warps) that walk items (`gemm_split.walk`:
item = piece T + tile, s = min(8, P / T, iterations / 4) pieces a tile): each piece runs the ring over its K
range (the loop's own bounds, `gemm_split.own_bounds`), saves its accumulator to a record and arrives at the
tile's counter (`gemm_split.merge`: `SplitSave` / `SplitArrive`, all the CTA's threads one group); the last sums
the records in piece order (the same sum whichever CTA is last) and runs the epilogue. A tile's first piece
starts from the accumulator's constant, the others from zeros (`gemm_split.start`). The ring drains after each
piece (the loop's last `cp.async.wait_group 0`), so pieces share nothing through shared memory.

Taken where the kernel is one FMA loop (f32 accumulator) at its top level with only scalar ops before it besides
the accumulator's constant (`gemm_persistent.walkable`: they run again for each item), no loop after it, and no
`stages` hint asked for one kernel.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

from .. import nodes as g
from .context import PassContext
from .rewrite import substitute


def _mut(k: g.GpuKernel) -> Any:
    return max((p for p in k.tensor_params if p.mutable and p.tile_shape), key=lambda p: p.rank, default=None)


def mode(k: g.GpuKernel, ctx: PassContext, plans: dict[int, Any]) -> str:
    """"split" (this variant walks pieces), "ask" (request the split variant for few tiles) or ""."""
    from . import gemm_persistent, gemm_split
    from .gemm_epilogue import is_scalar_op

    if len(plans) != 1 or "stages" in k.source.hints:
        return ""
    (p,) = plans.values()
    ops = list(k.body.ops)
    if p.dot.acc.dtype is not DType.F32 or p.dot.a.dtype is not DType.F32 or p.loop not in ops:
        return ""
    after = ops[ops.index(p.loop) + 1:]
    if any(isinstance(o, ir.For | ir.While) for op in after for o in g.walk(ir.Region((), (op,)))):
        return ""
    if not gemm_persistent.walkable(k, p.loop, 1, 1, is_scalar_op):
        return ""
    mut = _mut(k)
    want = gemm_split.requested()
    if want == "1" or (want == "auto" and ctx.fact(mut.name).few_tiles):
        return "split"
    return "ask" if want == "auto" else ""


def ctas_per_sm(ring_bytes: int, warps: int, max_regs: int) -> int:
    """CTAs an SM the split walk launches (`GpuKernel.persistent`: the runtime launches that many an SM): as many
    as the ring's shared memory and the registers let run at once (ptxas 13 gave the 8 x 8 blocks 168 registers
    under `.maxnreg 255`, 128 under 128), at most 8. A CTA past what fits runs later (the walk's items are
    fixed, no CTA waits for another: the last to arrive merges), so a guess too high costs a wave, not a hang."""
    regs = 128 if max_regs <= 128 else 168
    by_regs = 65536 // (32 * warps * regs)
    by_smem = (228 * 1024) // (ring_bytes + 1024 + 16)
    return max(1, min(8, by_regs, by_smem))


def build(k: g.GpuKernel, p: Any, rw: Any, rewrite: Any, threads: int) -> tuple[list[object], Any]:
    """The kernel's ops for the split walk of plan `p` (`rewrite(plan)`: the ring's ops, `rw` the rewriter whose
    fresh values and layouts they use); and the plan as rewritten."""
    from . import gemm_split

    fresh, layouts = rw.fresh, rw.layouts
    ops = list(k.body.ops)
    at = ops.index(p.loop)
    init = p.loop.inits[0]
    before = [op for op in ops[:at] if not (isinstance(op, ir.Const) and op.result.id == init.id)]
    after = [op for op in ops[at + 1:] if not isinstance(op, ir.Yield)]
    loop, before = gemm_split.own_bounds(p.loop, before, fresh)
    p = dataclasses.replace(p, loop=loop)
    ring = rewrite(p)
    allocs = [op for op in ring if isinstance(op, g.SmemAlloc)]
    tile_ops = [op for op in ring if not isinstance(op, g.SmemAlloc)]
    vals = tuple(fresh.value(DType.I32, (), h) for h in ("item", "tile", "pieces", "tiles"))
    # the accumulator's constant: the tile's first piece's start, zeros the others'
    c = next(i for i, op in enumerate(tile_ops) if isinstance(op, ir.Const) and op.result.shape
             and any(isinstance(o, ir.For) and o.inits[0].id == op.result.id for o in tile_ops))
    const = tile_ops[c]
    assert isinstance(const, ir.Const)
    tile_ops[c:c + 1] = gemm_split.start(const.result, const.value, vals, fresh, layouts, p.layout, loop.span)
    fin = loop.results[0]
    merged, go, acc = gemm_split.merge(fin, vals, threads, fresh, layouts, p.layout, loop.span)
    epi = [substitute(op, {fin.id: acc}) for op in after]
    tile_ops += [*merged, ir.If((), go, ir.Region((), (*epi, ir.Yield(()))), ir.Region((), (ir.Yield(()),)),  # type: ignore[arg-type]
                                loop.span)]
    base = fresh.value(DType.I32, (), "ring")
    pbase = fresh.value(DType.I32, (), "ring")
    setup, _, walk = gemm_split.walk(k, loop, fresh, before, ([], pbase, pbase), (tile_ops, base, base), vals)
    return [*setup, *allocs, *walk, ir.Yield(())], p


__all__ = ["build", "ctas_per_sm", "mode"]
