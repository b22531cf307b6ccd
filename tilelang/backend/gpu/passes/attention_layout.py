"""The attention pipeline's consumer tiles in the warpgroup-MMA accumulator
layout (`layouts.AccTile`): which way each tile with one live dim is held (a
row or a column vector: `Classes`, `classify`), the layout of every value
(`assign`), and whether the consumers then compute in registers only
(`registers_only`: else the pipeline declines and the generic path runs).
"""

from __future__ import annotations

import dataclasses
import itertools

from tilelang.ir import nodes as ir

from .. import nodes as g
from ..layouts import AccTile, Layout


class Classes:
    """Row or column: which way each tile with one live dim is held, by union-find
    over the ops that must agree (element-wise ops, reshapes, yields)."""

    def __init__(self, BM: int) -> None:
        self.parent: dict[int, int] = {}
        self.kind: dict[int, str] = {}
        self.size: dict[int, int] = {}
        self.BM = BM

    def find(self, x: int) -> int:
        while self.parent.get(x, x) != x:
            x = self.parent[x]
        return x

    def union(self, a: ir.Value, b: ir.Value) -> None:
        if not (_one_live(a) and _one_live(b)):
            return
        ra, rb = self.find(a.id), self.find(b.id)
        if ra != rb:
            self.parent[ra] = rb
            if ra in self.kind:
                self.kind.setdefault(rb, self.kind[ra])

    def force(self, v: ir.Value, kind: str) -> None:
        if _one_live(v):
            self.kind.setdefault(self.find(v.id), kind)

    def of(self, v: ir.Value) -> str:
        r = self.find(v.id)
        if r in self.kind:
            return self.kind[r]
        live = next(x for x in v.shape if x > 1)
        return "row" if live == self.BM else "col"


def _one_live(v: ir.Value) -> bool:
    return len([x for x in v.shape if x > 1]) == 1


def classify(ops: list[object], cl: Classes, loop_links: list[tuple[ir.Value, ...]], loops: bool = False) -> None:
    """Union the consumers' tiles that must share a row/column class (`loops`: also through the `for` loops of
    `ops` and their branches, a `last_block` region's: its values carried as the loop's)."""
    for op in ops:
        match op:
            case ir.Reduce(result=r):
                cl.force(r, "row")
            case ir.Broadcast(result=r, x=x) if x.shape and _one_live(x) and not _one_live(r):
                lead = len(r.shape) - len(x.shape)
                d = next(i for i, n in enumerate(x.shape) if n > 1) + lead
                live = [i for i, n in enumerate(r.shape) if n > 1]
                cl.force(x, "row" if d == live[0] else "col")
            case ir.Broadcast(result=r, x=x) | ir.Reshape(result=r, x=x) if x.shape:
                cl.union(x, r)
            case ir.Elementwise(result=r) | ir.Cast(result=r):
                for v in g.operands(op):
                    if v.shape:
                        cl.union(v, r)
            case ir.If(results=rs, then=t, else_=e):
                classify(list(t.ops), cl, loop_links, loops)
                classify(list(e.ops), cl, loop_links, loops)
                for i, v in enumerate(rs):
                    if v.shape:
                        cl.union(t.ops[-1].values[i], v)  # type: ignore[union-attr]
                        cl.union(e.ops[-1].values[i], v)  # type: ignore[union-attr]
            case ir.For(results=rs, inits=inits, body=b) if loops:
                classify(list(b.ops), cl, loop_links, loops)
                for i, v in enumerate(rs):
                    if v.shape:
                        for x in (inits[i], b.args[i + 1], b.ops[-1].values[i]):  # type: ignore[union-attr]
                            cl.union(x, v)
    for vs in loop_links:
        for a, b in itertools.pairwise(vs):
            if a.shape:
                cl.union(a, b)


def assign(ops: list[object], cl: Classes, warps: int, layouts: dict[int, Layout], cols: int = 1) -> None:
    def put(v: ir.Value) -> None:
        if v.shape and v.id not in layouts:
            layouts[v.id] = AccTile(warps, cl.of(v) if _one_live(v) else "", cols)

    for op in ops:
        for v in g.results(op):
            put(v)
        for sub in g.regions(op):
            for a in sub.args:
                put(a)
            assign(list(sub.ops), cl, warps, layouts, cols)



def registers_only(ops: list[object], layouts: dict[int, Layout]) -> bool:
    """Every op of the consumers computes in registers with the layouts given:
    a conversion or a shared-memory staging would need a barrier of the whole
    CTA, which the producer warp never reaches (a hang)."""
    return moving_op(ops, layouts) is None


def moving_op(ops: list[object], layouts: dict[int, Layout]) -> object | None:
    """The first op of `ops` that would move values between threads with the layouts given (`registers_only`'s
    reason, for the note of why the pipeline declined), or None."""
    from tilelang.backend.codegen.accview import acc_register_map, acc_view

    def view(v: ir.Value):  # type: ignore[no-untyped-def]
        lay = layouts.get(v.id)
        return acc_view(lay, v.shape) if isinstance(lay, AccTile) else None

    def same(a: ir.Value, b: ir.Value) -> bool:
        return not a.shape or layouts.get(a.id) == layouts.get(b.id)

    for op in g.walk(ir.Region((), tuple(ops))):  # type: ignore[arg-type]
        match op:
            case ir.Elementwise(result=r) | ir.Cast(result=r):
                if r.shape and not all(same(x, r) for x in g.operands(op)):
                    return op
            case ir.Broadcast(result=r, x=x) if x.shape:
                lead = len(r.shape) - len(x.shape)
                align = [None if i < lead or x.shape[i - lead] == 1 else i - lead for i in range(len(r.shape))]
                vx, vr = view(x), view(r)
                if vx is None or vr is None or acc_register_map(vx, vr, align) is None:
                    return op
            case ir.Reshape(result=r, x=x) if x.shape and r.shape:
                xd = [i for i, n in enumerate(x.shape) if n != 1]
                rd = [i for i, n in enumerate(r.shape) if n != 1]
                if [x.shape[i] for i in xd] != [r.shape[i] for i in rd]:
                    return op
                align: list[int | None] = [None] * len(r.shape)
                for i, j in zip(rd, xd, strict=True):
                    align[i] = j
                vx, vr = view(x), view(r)
                if vx is None or vr is None or acc_register_map(vx, vr, align) is None:
                    return op
            case ir.Reduce(result=r, x=x, axis=a):
                vx = view(x)
                if vx is None or a != vx.cdim or vx.M == 1 or vx.layout.cols > 1 or (r.shape and view(r) is None):
                    return op
            case ir.If(results=rs, then=t, else_=e):
                for i, v in enumerate(rs):
                    if not (same(t.ops[-1].values[i], v) and same(e.ops[-1].values[i], v)):  # type: ignore[union-attr]
                        return op
            case ir.For(results=rs, inits=inits, body=b):
                ys = b.ops[-1].values  # type: ignore[union-attr]
                for r, i0, a, y in zip(rs, inits, b.args[1:], ys, strict=True):
                    if not (same(i0, a) and same(y, a) and same(r, a)):
                        return op
            case ir.Load(result=r) if isinstance(layouts.get(r.id), AccTile) and op.mask is None:
                pass  # each thread loads its own elements (`attention_match`: a tensor the kernel never writes)
            case ir.Load() | ir.Permute() | g.ConvertLayout() | ir.Scan():
                return op
    return None


def unshare_loop_aranges(k: g.GpuKernel) -> g.GpuKernel | None:
    """`k` with each `arange` made before a loop and read in it made again at the start of the loop's body
    for its reads there, or None where there is none. The IR shares one `arange` op among equal ones: a causal
    mask's rows made before the loop (`arange::<i32>(BM).reshape([BM, 1]) + i * BM`) and the keys' `arange(BN)`
    in it are one value where BM == BN, read as a column before the loop and as a row in it, which no layout
    of the consumers' registers gives both (round 17: the attention pipeline declined such a loop in silence,
    at 64 x 64 and 128 x 128, and took it with the rows made in the loop or BN != BM)."""
    from .context import Fresh
    from .rewrite import substitute_region

    ops = list(k.body.ops)
    made = {op.result.id: op for op in ops if isinstance(op, ir.Arange)}
    fresh = Fresh(k.next_id)
    changed = False
    for i, loop in enumerate(ops):
        if not isinstance(loop, ir.For):
            continue
        read = sorted({v.id for o in g.walk(loop.body) for v in g.operands(o)} & set(made))
        if not read:
            continue
        mapping = {vid: fresh.value(made[vid].result.dtype, made[vid].result.shape, made[vid].result.hint)
                   for vid in read}
        again = tuple(ir.Arange(mapping[vid], made[vid].span) for vid in read)
        body = substitute_region(loop.body, mapping)
        ops[i] = dataclasses.replace(loop, body=ir.Region(body.args, (*again, *body.ops)))
        changed = True
    if not changed:
        return None
    return dataclasses.replace(k, body=ir.Region(k.body.args, tuple(ops)), next_id=fresh.next)  # type: ignore[arg-type]


__all__ = ["Classes", "assign", "classify", "moving_op", "registers_only", "unshare_loop_aranges"]
