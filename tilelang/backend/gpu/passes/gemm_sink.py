"""A GEMM kernel's epilogue tiles computed before its K loop, computed after it instead (round 17, huser17).

A user who loads what a block needs first writes the bias before the loop:

    let bb = bias.partition([BN]).load([j]).reshape([1, BN]);
    let mut acc = zeros::<f32>([BM, BN]);
    for kk in 0..pa.num_tiles(1) { acc = mma(pa.load([i, kk]), pb.load([kk, j]), acc); }
    c.store((acc + bb) as f16);

The Hopper GEMM pipeline takes the same load written after the loop (an epilogue tile of a tensor the kernel
never writes), but refused this spelling ("what follows the loop is not an epilogue of the accumulator"), and
the kernel ran on sm_80's cp.async ring. `sunk` moves the ops before the loop whose results are read only
after it (loads of tensors the kernel never writes and value-only ops on them, none of them read in the loop)
to just after the loop, in their order: the same values (nothing they read changes during the loop).
`mma_select` adopts it only where the pipeline then takes the loop and did not before, so every kernel it took
before is compiled as it was.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from tilelang.ir import nodes as ir

from .. import nodes as g
from .attention_reload import product_loop
from .context import PassContext

# ops whose result depends on their operands only (no memory, no position): movable past the loop
_PURE = (ir.Elementwise, ir.Cast, ir.Reshape, ir.Broadcast, ir.Permute, ir.Const, ir.Arange)


def sunk(k: g.GpuKernel) -> g.GpuKernel | None:
    """`k` with the ops before its one loop holding a product whose results are read only after the loop moved
    to just after it; None where there is no such op."""
    found = product_loop(k)
    if found is None:
        return None
    ops, li, written = found
    in_loop = {v.id for o in g.walk(ops[li].body) for v in g.operands(o)} | {v.id for v in g.operands(ops[li])}
    movable: set[int] = set()
    # from the loop back: an op moves when all its results are read only after the loop or by ops that move
    readers: dict[int, list[int]] = {}
    for idx, op in enumerate(ops):
        for v in _reads(op):
            readers.setdefault(v, []).append(idx)
    for idx in range(li - 1, -1, -1):
        op = ops[idx]
        if not (isinstance(op, _PURE) or (isinstance(op, ir.Load) and op.tensor not in written)):
            continue
        res = [v.id for v in g.results(op)]
        if not any(v.shape for v in g.results(op)):
            continue  # scalars stay (the loop's bounds and the walks read them before the loop)
        if any(r in in_loop for r in res):
            continue
        if all(all(j > li or j in movable for j in readers.get(r, [])) for r in res):
            movable.add(idx)
    if not movable:
        return None
    moved = [ops[idx] for idx in sorted(movable)]
    kept = [op for idx, op in enumerate(ops) if idx not in movable]
    at = kept.index(ops[li]) + 1
    body = ir.Region(k.body.args, tuple(kept[:at] + moved + kept[at:]))  # type: ignore[arg-type]
    return dataclasses.replace(k, body=body)


def _reads(op: object) -> list[int]:
    """The value ids `op` reads, its nested regions' included."""
    out = [v.id for v in g.operands(op)]
    for o in g.walk(ir.Region((), (op,))):  # type: ignore[arg-type]
        if o is not op:
            out += [v.id for v in g.operands(o)]
    return out


def sunk_if_it_helps(k: g.GpuKernel, ctx: PassContext, plans: Any) -> g.GpuKernel:
    """`sunk(k)` where the Hopper GEMM pipeline (`plans`: `pipeline.hopper_plans`) takes its loop and did not
    take `k`'s; else `k` (its notes then the matcher's own, when `mma_select` asks again)."""
    if not ctx.has_wgmma:
        return k
    k2 = sunk(k)
    if k2 is None:
        return k
    probe = dataclasses.replace(ctx, notes=[])
    if plans(k, probe) or not plans(k2, dataclasses.replace(ctx, notes=[])):
        return k
    return k2


__all__ = ["sunk", "sunk_if_it_helps"]
