"""A tile loaded before the attention loop and read again after it, loaded again there.

A fused block's residual is often its input: `let xt = x.load_like(y); for .. { mma(xt, w1, ..) .. };
y.store(acc + xt as f32)` (huser16's o01). The attention pipeline copies Q (`xt`) with TMA into shared memory
for the producer's ring, and `attention_match` refuses a Q tile with another use ("the tile loaded from `x` has
another use"). `reload` gives the uses after the loop a second load of the same tile (the load, and the
reshapes between it and the used value, cloned after the loop with fresh values): the same values, as the
kernel never writes the tensor, and the epilogue loads it as any residual (`attention_match`'s loads after the
loop). `attention.attention` takes the reloaded kernel only where the pipeline then takes the loop; else the
kernel and the refusal stay as they were. `TILEC_ATTN_RELOAD=0` turns it off.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from tilelang.backend.env_switch import flag
from tilelang.ir import nodes as ir

from .. import nodes as g
from .context import Fresh
from .rewrite import substitute


def product_loop(k: g.GpuKernel) -> tuple[list[Any], int, set[str]] | None:
    """`k`'s top-level ops, the index of its one loop with a matrix product in it, and the tensors the kernel
    may write (stored, atomically updated or `&mut`); None where no loop or more than one has a product."""
    ops = list(k.body.ops)
    loops = [i for i, op in enumerate(ops) if isinstance(op, ir.For)
             and any(isinstance(o, g.DotOp | ir.Mma) for o in g.walk(op.body))]
    if len(loops) != 1:
        return None
    written = {o.tensor for o in g.walk(k.body) if isinstance(o, ir.Store | ir.AtomicRMW)}
    written |= {p.name for p in k.tensor_params if p.mutable}
    return ops, loops[0], written


def reload(k: g.GpuKernel) -> g.GpuKernel | None:
    """`k` with the tiles loaded before its matrix-product loop and used after it loaded again after it, or
    None where there is none (or `TILEC_ATTN_RELOAD=0`)."""
    if not flag("TILEC_ATTN_RELOAD", "1"):
        return None
    found = product_loop(k)
    if found is None:
        return None
    ops, i, written = found
    after: set[int] = set()
    for op in ops[i + 1:]:
        for sub in g.walk(ir.Region((), (op,))):
            after |= {v.id for v in g.operands(sub)}
    defs: dict[int, object] = {}
    reloadable: set[int] = set()  # values of an unmasked load of an unwritten tensor, through reshapes
    for op in ops[:i]:
        if isinstance(op, ir.Load) and op.tensor not in written and op.mask is None and op.result.shape:
            reloadable.add(op.result.id)
        elif isinstance(op, ir.Reshape) and op.x.id in reloadable:
            reloadable.add(op.result.id)
        else:
            continue
        defs[g.results(op)[0].id] = op
    wanted: set[int] = set()  # the ops (by result) to load again: back from each use after the loop to its load
    for v in after & reloadable:
        while v not in wanted:
            wanted.add(v)
            op = defs[v]
            if isinstance(op, ir.Reshape):
                v = op.x.id
    if not wanted:
        return None
    fresh = Fresh(k.next_id)
    layouts = dict(k.layouts)
    mapping: dict[int, ir.Value] = {}
    clones: list[object] = []
    for op in ops[:i]:
        r = g.results(op)[0] if g.results(op) else None
        if r is None or r.id not in wanted:
            continue
        new = fresh.value(r.dtype, r.shape, r.hint)
        if r.id in layouts:
            layouts[new.id] = layouts[r.id]
        clones.append(dataclasses.replace(substitute(op, mapping), result=new))  # type: ignore[type-var]
        mapping[r.id] = new
    tail = [substitute(op, mapping) for op in ops[i + 1:]]
    body = ir.Region(k.body.args, (*ops[:i + 1], *clones, *tail))  # type: ignore[arg-type]
    return dataclasses.replace(k, body=body, layouts=layouts, next_id=fresh.next)


__all__ = ["reload"]
