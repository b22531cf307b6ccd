"""The chained walk rotated across the tile boundary (`TILEC_ATTN_XROT=1`, opt-in; issue 15).

Chained (`attention_chain`), tile n + 1's first iteration issues its first S = Q K^T together with tile
n's last P V and waits for that S alone: the tensor cores run it (~500 cycles at D = 64, 64 x 128 a
warpgroup) while the consumers have nothing to do, since tile n's last softmax ran before the tile loop's
back edge. Rotated across the boundary, tile n's key loop stops one block short (its last block L is
"deferred") and the boundary iteration at tile n + 1's start holds both tiles:

1. S(n, L) issued with P V(n, L - 1) (the pending product), waited for (P V still in flight); Q(n) released;
2. S(n + 1, 0) issued: its Q is in the other slot (Q double-buffered: `attention_tiles.q_slots`, which the
   switch turns on), its K stage waited for before the branch;
3. tile n's block L: softmax under S(n + 1, 0) (and P V(n, L - 1)); the wait for P V(n, L - 1) leaves the
   newer S in flight (`wgmma.wait_group 1`); its stage released, the rescale, P(n, L) packed;
4. P V(n, L) issued alone; the wait for S(n + 1, 0) (group 1: that P V may still run);
5. tile n + 1's block 0: the chained first iteration as before (its softmax under P V(n, L), that product
   waited for, its stage released, tile n's epilogue), from its S on.

No wgmma is in flight across a branch or the loop's back edge: both tiles' products are issued and waited
for inside the boundary's branch. A tile of one key block defers nothing (its first block is its last:
the chain as before); where the next tile runs no key block, and after the CTA's last tile, the deferred
block runs alone (`finish`: the loop body once, its P V left pending) before the chain's flush. Tile n's
body needs, at tile n + 1, what its key loop read: the loop's values after its last run iteration, the
block's index and ring counter, its Q slot, the ring's counter at tile n's start, and the scalars the body
reads that `outside` computes for each tile: all carried from tile to tile (`Xrot`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

from .. import nodes as g
from . import switches
from .context import Fresh
from .pipeline import _Build

# "1": rotate the chained walk across its tile boundaries (Q double-buffered with it); "2": the same, the
# pending P V waited for before the next S (`late`); "0": off. Off: on the H100 (2026-12-05, benchmarks/RESULTS.md
# "h15w") "1" was right at the benchmark's scale but SLOWER at D = 64 S = 1,024, -7.7..-8.5 % full and -16.6 %
# causal (stamps: the boundary 5,812 cycles where a block and the chained first iteration are 5,574, the
# walk 718 cycles against 171, the key loop's blocks ~12 % longer): its consumer code is twice the chained
# kernel's (7,800 SASS instructions against 3,750; three clones of the body beside the loop) and spills 208 B
# (the key loop 738 instructions against 646). "2" (52 B of spills, the loop 653 instructions) was not timed:
# it hides less (ptxas schedules the block's exponentials before the next S) and keeps the code size.
XROT_DEFAULT = "0"


def late() -> bool:
    """`TILEC_ATTN_XROT=2`: the boundary waits for the pending P V after the deferred block's row max and
    issues the next tile's first S then (not right after the block's S), so that the two never hold their
    registers together; "1": the next S right after the block's S, the pending P V waited for later."""
    return switches.mode("TILEC_ATTN_XROT", XROT_DEFAULT, ("0", "1", "2")) == "2"


def enabled() -> bool:
    """`TILEC_ATTN_XROT` ("1" / "2" (`late`) / "0"; unset: `XROT_DEFAULT`)."""
    want = switches.mode("TILEC_ATTN_XROT", XROT_DEFAULT, ("0", "1", "2"))
    return want != "0"


@dataclass(frozen=True, slots=True)
class Xrot:
    """What a tile leaves to the next beside the chain's values (region arguments of the tile loop), and
    the key loop's body, which `attention_rotated` records (`body`) for the clones of tile n's block L."""

    defer: ir.Value  # bool: the previous tile's last key block is not started (its loop stopped a block short)
    jl: ir.Value  # i32: that block's index (the key loop's j)
    base: ir.Value  # i32: the ring's counter at the previous tile's start
    qs: ir.Value  # i32: the previous tile's Q slot
    lvals: tuple[ir.Value, ...]  # the previous tile's loop values after its last run iteration (but the accumulator)
    bscal: tuple[ir.Value, ...]  # the previous tile's scalars the body reads
    outside: tuple[ir.Value, ...]  # those scalars as `outside` defines them (the tile's own: what it leaves)
    results: tuple[ir.Value, ...]  # the user's loop results `lvals` stand for
    pos: int  # the accumulator's place among the loop's values
    q_slot: ir.Value  # this tile's Q slot (`attention_loop.Bufs.qs`)
    # the ops of `outside` computing what the body reads that is the same in every tile (constants, the
    # launch's shapes and scalars): a tile's own are read in its boundary; cloned with the body after the walk
    pre: tuple[object, ...]
    # `attention_rotated.rotated`: "ops", "args", "layouts", "fresh", "clone", "unshare"
    body: dict[str, Any] = field(default_factory=dict)


def _live(ops: list[object], skip: set[int] = frozenset(), nested: bool = True) -> list[object]:  # type: ignore[assignment]
    """The ops (nested regions walked where `nested`, else the top level's) whose results something reads,
    or that do more than compute a value; but those of `skip` (`id`s: the K/V loads the producer makes,
    whose offsets are then dead in the consumers)."""
    live = [op for op in (g.walk(ir.Region((), tuple(ops))) if nested else ops) if id(op) not in skip]  # type: ignore[arg-type]
    while True:
        used = {x.id for op in g.walk(ir.Region((), tuple(live))) for x in g.operands(op)}  # type: ignore[arg-type]
        keep = [op for op in live if not g.results(op) or g.regions(op) or any(r.id in used for r in g.results(op))
                or not isinstance(op, ir.Elementwise | ir.Const | ir.Cast | ir.Broadcast | ir.Reshape)]
        if len(keep) == len(live):
            return keep
        live = keep


def make(loop: ir.For, pos: int, outside: list[object], moved: list[object], q_slot: ir.Value, zero: ir.Value,
         fresh: Fresh, skip: set[int]) -> Xrot | None:
    """The rotation's carried values for the user's key loop `loop` (its accumulator at `pos`), where it is
    on and applies: Q double-buffered (`q_slot` is not the constant `zero`) and the body reads no tile
    computed before the loop (`moved`; only scalars of `outside`, which are carried); else None. `skip`:
    the ops of the body the consumers do not run (`id`s: the K/V loads)."""
    if not enabled() or q_slot is zero:
        return None
    # (a tile constant computed before the loop, e.g. zeros, is the same in every tile: read as a scalar is)
    defs = {r.id: op for op in (*outside, *moved) for r in g.results(op)}
    tiles = {r.id for op in moved if not isinstance(op, ir.Const) for r in g.results(op)}
    inner = {r.id for op in g.walk(loop.body) for r in g.results(op)}
    for op in g.walk(loop.body):
        for sub in g.regions(op):
            inner |= {a.id for a in sub.args}
    inner |= {a.id for a in loop.body.args}
    # the scalars that differ from tile to tile: computed from the tile's position (`block_id`; and
    # `num_blocks`, the logical grid's, which a clone after the walk would not read)
    tiled: set[int] = set()
    for op in outside:
        if isinstance(op, ir.BlockId | ir.NumBlocks) or any(
                x.id in tiled for o in g.walk(ir.Region((), (op,))) for x in g.operands(o)):  # type: ignore[arg-type]
            tiled |= {r.id for r in g.results(op)}
    reads: list[ir.Value] = []
    same: set[int] = set()  # the tile-invariant scalars and constants the body reads
    seen: set[int] = set()
    for v in [*(x for op in _live(list(loop.body.ops), skip) for x in g.operands(op)), loop.lower, loop.upper,
              loop.step]:
        if v.id in inner or v.id in seen:
            continue
        seen.add(v.id)
        if v.id in tiles:
            return None
        d = defs.get(v.id)
        if d is None:
            continue
        if v.shape and not isinstance(d, ir.Const):
            return None
        if v.id in tiled:
            reads.append(v)
        else:
            same.add(v.id)
    pre: list[object] = []  # the ops of `outside` computing `same` (cloned with the body after the walk)
    for op in reversed([*outside, *(op for op in moved if isinstance(op, ir.Const))]):
        if any(r.id in same for r in g.results(op)):
            pre.append(op)
            same |= {x.id for o in g.walk(ir.Region((), (op,))) for x in g.operands(o)}  # type: ignore[arg-type]
    f = fresh
    results = tuple(r for i, r in enumerate(loop.results) if i != pos)
    return Xrot(f.value(DType.BOOL, (), "defer"), f.value(DType.I32, (), "j_last"), f.value(DType.I32, (), "ring_prev"),
                f.value(DType.I32, (), "q_prev"), tuple(f.value(r.dtype, r.shape, r.hint) for r in results),
                tuple(f.value(v.dtype, (), v.hint) for v in reads), tuple(reads), results, pos, q_slot, tuple(pre[::-1]))


def region_args(x: Xrot | None) -> tuple[ir.Value, ...]:
    if x is None:
        return ()
    return (x.defer, x.jl, x.base, x.qs, *x.lvals, *x.bscal)


def outs(x: Xrot, loop: ir.For, base: ir.Value, trips: ir.Value, c_results: tuple[ir.Value, ...]
         ) -> tuple[list[object], tuple[ir.Value, ...], ir.Value]:
    """Ops after a tile's key loop: what it leaves to the next tile (in `region_args`' order) and the ring's
    counter after it (`trips`, one more where the last block is deferred: its stage is the ring's next)."""
    E = ir.ElemOp
    b = _Build(_fresh(x))
    defer = b.elem(E.LT, b.elem(E.ADD, loop.lower, loop.step), loop.upper, dtype=DType.BOOL, hint="defer")
    jl = b.elem(E.ADD, loop.lower, b.elem(E.MUL, b.elem(E.SUB, trips, base), loop.step), hint="j_last")
    ring = b.elem(E.ADD, trips, b.elem(E.WHERE, defer, b.const(1), b.const(0)), hint="ring")
    lv = tuple(v for i, v in enumerate(c_results) if i != x.pos)
    return b.ops, (defer, jl, base, x.q_slot, *lv, *x.outside), ring


def _fresh(x: Xrot) -> Fresh:
    return x.body["fresh"]  # type: ignore[no-any-return]


def block(x: Xrot, ch: Any, it_l: ir.Value, alone: bool = False) -> tuple[list[object], ir.Yield]:
    """The previous tile's deferred block L: the key loop's body once (`x.body`), reading that tile's
    values (carried: `ch` is the `attention_chain.Chain` whose values the ops read; `it_l`: the block's ring
    counter), ops and its Yield (the loop's values in order, the ring counter + 1, P packed, the next
    stage, the block's stage). The wgmma results' layouts are copied to their clones. `alone`: outside
    the walk (after it), where no tile's own scalars are defined: those the same in every tile computed
    again (`Xrot.pre`)."""
    d = x.body
    clone, unshare = d["clone"], d["unshare"]  # (`attention_tiles.clone`, `attention_loop.unshare`)
    j, largs, c_it, p_prev, stage, pv_stage, bufs = d["args"]
    f: Fresh = d["fresh"]
    b = _Build(f)
    st_l, _ = b.ring(it_l, bufs.S)
    vals = list(x.lvals)
    vals.insert(x.pos, ch.acc)
    remap: dict[int, ir.Value] = {j.id: x.jl, c_it.id: it_l, p_prev.id: ch.p, stage.id: st_l, pv_stage.id: ch.stage,
                                  bufs.base.id: x.base, bufs.qs.id: x.qs,
                                  **{a.id: v for a, v in zip(largs, vals, strict=True)},
                                  **{o.id: s for o, s in zip(x.outside, x.bscal, strict=True)}}
    seeded = set(remap)
    ops = clone([*(x.pre if alone else ()), *_live(d["ops"], nested=False)], f, remap)  # (dead offsets dropped)
    lay = d["layouts"]
    lay.update({remap[k].id: v for k, v in list(lay.items()) if k in remap and k not in seeded})
    ys = ops[-1]
    assert isinstance(ys, ir.Yield)
    return [*b.ops, *unshare(ops[:-1], f)], ys  # (each tile constant its own reader's: `arange` as row and column)


def finish(x: Xrot, ch: Any, pred: ir.Value, it_l: ir.Value, span: Any, alone: bool = False
           ) -> tuple[list[object], Any]:
    """Where `pred` (the previous tile's last block deferred and nothing of a next tile to hold it with):
    that block run alone (`block`), its P V left pending; the chain (`ch`) with the values after it, for
    the chain's flush."""
    E = ir.ElemOp
    f: Fresh = x.body["fresh"]
    ops, ys = block(x, ch, it_l, alone)
    n = len(x.lvals) + 1
    vals, p_l, st_l = ys.values[:n], ys.values[n + 1], ys.values[n + 3]
    pl = ch.plan
    res = tuple(vals[i] for i in pl.indices)
    then = (*ops, ir.Yield((p_l, vals[x.pos], st_l, *res)))
    new = (f.value(ch.p.dtype, ch.p.shape, "pend_p"), f.value(ch.acc.dtype, ch.acc.shape, "pend_acc"),
           f.value(DType.I32, (), "pend_stage"), *(f.value(r.dtype, r.shape, r.hint) for r in ch.results))
    b = _Build(f)
    use = b.elem(E.OR, pred, ch.use_c, dtype=DType.BOOL, hint="pend_use")
    out = [ir.If(new, pred, ir.Region((), then), ir.Region((), (ir.Yield((ch.p, ch.acc, ch.stage, *ch.results)),)),  # type: ignore[arg-type]
                 span), *b.ops]
    return out, dataclasses.replace(ch, p=new[0], acc=new[1], stage=new[2], use_c=use, results=tuple(new[3:]))


def boundary(x: Xrot, ch: Any, s_ops: list[object], qempty: ir.Value, prefetched: Any) -> list[object]:
    """The boundary iteration (`TILEC_ATTN_XROT=1`, module doc): the previous tile's block L (`block`) with
    this tile's first S issued (`s_ops`, after that block's S is waited for and Q released) and the wait
    for the pending P V leaving it in flight, then `prefetched(p_l, acc_l, st_l, results)`: this tile's
    chained first iteration issuing P V(n, L) alone (its ops, ending with its Yield)."""
    E = ir.ElemOp
    f: Fresh = x.body["fresh"]
    b = _Build(f)
    it_l = b.elem(E.SUB, ch.base, b.const(1), hint="it_last")
    ops, ys = block(x, ch, it_l)
    at = next(i for i, op in enumerate(ops) if isinstance(op, g.BarrierArrive) and op.bar is qempty) + 1
    w = next(i for i, op in enumerate(ops) if isinstance(op, g.WgmmaWait) and op.pending == 0)
    exp = next((i for i, op in enumerate(ops) if i > at and isinstance(op, ir.Elementwise)
                and op.op is ir.ElemOp.EXP2 and len([n for n in op.result.shape if n > 1]) == 2), None)
    if late() and exp is not None and exp < w:
        # the pending P V's wait (and its stage's release) moved before the softmax's exp2 (after the row max:
        # that product, issued with the block's S, is done or nearly), this tile's S issued after it: its
        # registers and those of the pending P, never live together (ptxas 13.0 spilled 208 B with both)
        rel = w + 1 if isinstance(ops[w + 1], g.BarrierArrive) else w
        moved = ops[w:rel + 1]
        rest = [*ops[:w], *ops[rel + 1:]]
        return _join(b.ops, [*rest[:exp], *moved, *s_ops, *rest[exp:]], ys, x, ch, prefetched)
    ops = [*ops[:at], *s_ops, *ops[at:]]
    ops[w + len(s_ops)] = dataclasses.replace(ops[w + len(s_ops)], pending=1)  # type: ignore[type-var]  # (the newer S may run)
    return _join(b.ops, ops, ys, x, ch, prefetched)


def _join(first: list[object], ops: list[object], ys: ir.Yield, x: Xrot, ch: Any, prefetched: Any) -> list[object]:
    n = len(x.lvals) + 1
    vals, p_l, st_l = ys.values[:n], ys.values[n + 1], ys.values[n + 3]
    res = tuple(vals[i] for i in ch.plan.indices)
    return [*first, *ops, *prefetched(p_l, vals[x.pos], st_l, res)]


__all__ = ["XROT_DEFAULT", "Xrot", "block", "boundary", "enabled", "finish", "make", "outs", "region_args"]
