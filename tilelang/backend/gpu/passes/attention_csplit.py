"""The chained short keys' variant with its last round split along the keys
(`TILEC_ATTN_CHAIN_SPLIT=1`, issue 15; opt-in: +0..+0.5 % on the full S = 1,024
rows on the H100, within the runs' spread) and its causal tail in a walk of
its own (`TILEC_ATTN_CHAIN_TAIL`, on by default: +2.7..+4.6 % on the causal
S = 1,024 rows, 2026-12-06 call 4).

At S = 1,024 and D = 64 every launch runs the short keys' variant
(`attention_chain`: tiles chained, K's rows at most 8 key blocks), which had
no split: a full launch of 4,096 tiles on 132 CTAs runs 31 rounds and then 4
tiles while 128 CTAs idle (31.03 rounds run as 32, ~3.5 % of the time; the
long keys' kernel's split gained +1.6 % (f16) there on the H100, RESULTS.md
"h15u"). With the switch, each role walks twice:

- walk A, the chained walk as before over the rounds of whole tiles
  (`whole`: every round but a split last one; all of them where the launch's
  walk does not split: causal pairs, a full last round, tiles too short),
  the consumers' last pending P V and epilogue after it (`chain.final`);
- walk B, from there to the CTA's last round, the split last round's pieces
  (`attention_split`: each of its `left` tiles cut into key ranges by
  `attention_tiles.walk_setup`'s estimate, a piece saving (m, l, acc),
  arriving at its tile's counter, the last one in merging every record and
  storing the tile), unchained: the rotated loop with the product of zeros
  first and its own last P V after it, on bounds `Marks` gives each piece.

The ring's counter and the tile's number (Q's slot and phase) go on from walk
A into walk B in both roles, so the barriers' protocol is the one walk's.
Walk A's tile ops are the variant's without the switch (the same key loop and
first iteration, byte for byte up to names; only its round count differs), so
the hot code is where it was: walk B's copy of the tile (the rotated loop,
the save, arrival and merge) is emitted after it and runs at most
`SPLIT_ROUNDS` times a CTA. Off (unset: `CHAIN_SPLIT_DEFAULT`), nothing here
runs and every kernel is as before.

`TILEC_ATTN_CHAIN_TAIL` (on by default, "0" off; with `TILEC_ATTN_CHAIN_SPLIT=1`
too the short keys' variant is the split's and asks for the tail's as a variant
of its own, launched where the walk hands out pairs of an even number of query
blocks: one kernel with both walks B spilled) puts the
causal walk's tail (`attention_tail`: the last item rounds' pairs as single
tiles, heaviest first) in walk B the same way, chained on from walk A: the
chain's carried values are walk B's loop's too, their first values walk A's
results, and the last pending product is flushed after walk B. Walk A runs
the pair rounds before the tail (all of them where the walk has none), so no
tile of it carries the tail's branch: in the variant's one walk the tail lost
1.2-2 % on the H100 (RESULTS.md, 2026-12-05 call B).
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import Any

from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

from .. import nodes as g
from . import attention_rotated as rot
from . import attention_split as split
from . import attention_tiles as tiles
from . import switches
from .attention_layout import Classes, classify
from .attention_tiles import Marks, clone
from .attention_zeros import drop_unread_zeros
from .context import Fresh
from .pipeline import _Build
from .rewrite import substitute

# opt-in: the H100 (2026-12-06 call 4, A C T T C A) gave the full rows +0..+0.5 %, within the runs' spread, and
# h15x's promotion rule asked for a gain on both full rows (benchmarks/h15y_device.sh times it again beside the tail)
CHAIN_SPLIT_DEFAULT = "0"
# the last piece in merges this many records an iteration, their loads in flight together (`attention_split.
# epilogue`'s `unroll`): at the benchmark's shape 8 records, one L2 round trip each one after another (~600-700
# cycles) in the one-pass loop, ~5,000 cycles of the launch's last ~10,000; 3 an iteration: 3 round trips (4: ptxas
# 13.0 spilled 48 B and gave walk A's key loop 676 instructions, not 645; 2 and 3: 0 B, 645)
MERGE_UNROLL = 3
# with the pieces by tickets (`TILEC_ATTN_CHAIN_SPLIT=dyn`) 2: at 3 ptxas 13.0 spilled 48 B (96 B of loads) in the
# benchmark's kernel, at 2 none (hattn5); the 8 records then wait for the L2 4 times, not 3 (~600 cycles more, once)
DYN_MERGE_UNROLL = 2


def enabled() -> bool:
    """`TILEC_ATTN_CHAIN_SPLIT`: "1" the chained short keys' variant splits its last round; "dyn" too, its pieces
    to the CTAs in the order they finish walk A (tickets: `setup`'s `ticket`, hattn5); "0" (unset) not. ("dyn"
    was refused from landing L3 to hattn6: its ticket shared the scratch word of the consumers' split flag; a
    ticket is now a word of the emitter's handoff area, `EmitterCore.handoff_word`.)"""
    want = switches.mode("TILEC_ATTN_CHAIN_SPLIT", CHAIN_SPLIT_DEFAULT, ("0", "1", "dyn"))
    return want != "0"


def dynamic() -> bool:
    """Whether `TILEC_ATTN_CHAIN_SPLIT` is "dyn" (the pieces by tickets)."""
    return switches.mode("TILEC_ATTN_CHAIN_SPLIT", CHAIN_SPLIT_DEFAULT, ("0", "1", "dyn")) == "dyn"


@dataclass(frozen=True, slots=True)
class Pieces:
    """One piece's consumer ops, before they are renamed for walk B (they
    share values with the chained tile's: `moved`, the loop body's), the ring's
    counter after them, the marks their bounds and split values read, and
    what `classify` needs of them."""

    ops: list[object]
    trips: ir.Value
    marks: Marks
    classified: list[object]
    links: list[tuple[ir.Value, ...]]


def piece_tile(proof: Any, loop: ir.For, p: Any, cast: ir.Cast, chained: set[int], bufs: Any, fresh: Fresh,
               layouts: dict[int, Any], moved0: list[object], moved: list[object], epilogue0: list[object],
               qempty: ir.Value, q_early: bool, before: list[object], head: list[object], q_wait: object,
               threads: int, loops: Any, spec: Any) -> Pieces | None:
    """A piece of the split last round as the consumers run it (as the long
    keys' split kernel's tile: `attention.py`'s persistent unchained path):
    the rotated loop without the chain on the piece's bounds, its last P V,
    Q's and the last stage's releases, and `split.epilogue`'s save, arrival
    and merge. `proof`: `attention_softmax.prove`'s; `moved0`/`moved`: the
    tile ops before the loop as `rotated` and the tile take them;
    `epilogue0`: the user's epilogue (reciprocals, unshared); `head`, `q_wait`:
    the tile's Q slot and phase and the wait for Q (the chained tile's);
    `loops`, `spec`: `attention_loop`, `attention_spec`. None where the rotated
    loop does not apply."""
    E = ir.ElemOp
    span = loop.span
    mk = split.marks(loop, fresh)
    mloop = dataclasses.replace(loop, lower=mk.lower, upper=mk.upper)
    turned = rot.rotated(mloop, p, cast, chained, bufs, fresh, layouts, moved0, loops.s_product, loops.unshare,
                         False, qempty if q_early else None, None)
    if turned is None:
        return None
    c_loop, c_pre, c_post = turned
    c_loop = spec.speculate(c_loop, fresh)
    ep = [substitute(op, c_post[1]) for op in epilogue0]
    acc_out = c_post[1][loop.results[proof.acc].id]
    sel = next((op for op in c_post[0] if g.results(op) == (acc_out,)), None)
    raw_acc = sel.operands[1] if isinstance(sel, ir.Elementwise) and sel.op is E.WHERE else acc_out
    post, ep = drop_unread_zeros(c_post[0], ep, loop, c_post[1], before)
    eb = _Build(fresh)
    trips = c_post[2]
    last = eb.elem(E.REM, eb.elem(E.ADD, trips, eb.const(bufs.S - 1)), eb.const(bufs.S))
    ran = eb.elem(E.GT, trips, bufs.base, dtype=DType.BOOL)
    ep = split.epilogue(proof, loop, c_post[1], raw_acc, ep, ran, mk, threads, fresh, span,
                        unroll=DYN_MERGE_UNROLL if dynamic() else MERGE_UNROLL)
    ib = _Build(fresh)  # Q: released in the loop's last iteration (`q_early`), here where the loop did not run
    idle = ib.elem(E.GE, mk.lower, mk.upper, dtype=DType.BOOL) if q_early else None
    qrel = g.BarrierArrive(qempty, bufs.qs, idle, span)
    rel = g.BarrierArrive(bufs.empty, last, ran, span)
    ops = [*moved, *head, *ib.ops, q_wait, *c_pre, c_loop, qrel, *post, *eb.ops, rel, *ep]
    ys = c_loop.body.ops[-1]
    assert isinstance(ys, ir.Yield)
    links = list(zip(c_loop.inits, c_loop.body.args[1:], ys.values, c_loop.results, strict=True))
    return Pieces(ops, trips, mk, [*moved, *c_loop.body.ops, *post, *ep], links)


def classes(pc: Pieces | None, cl: Classes) -> None:
    """The piece's tiles' row / column classes (nothing without pieces)."""
    if pc is not None:
        classify(pc.classified, cl, pc.links)


def whole_rounds(b: _Build, w: tiles.Walk) -> ir.Value:
    """The rounds of walk A: every round of whole tiles, all of the CTA's
    (`w.rounds`) where the launch's walk does not split (`Split.on`), else
    those before the last item round (its pieces are walk B's)."""
    E = ir.ElemOp
    assert w.split is not None
    one = b.const(1)
    n = b.elem(E.MUL, w.nh, w.split.kvs)
    last = b.elem(E.SUB, b.elem(E.DIV, b.elem(E.ADD, n, b.elem(E.SUB, w.P, one)), w.P), one)
    return b.elem(E.MAXIMUM, b.elem(E.WHERE, w.split.on, last, w.rounds), b.const(0), hint="whole")


def setup(k: g.GpuKernel, kv: set[int], bounds: tuple[ir.Value, ...], outside: list[object], walk_a: tiles.Walk,
          fresh: Fresh, span: Any, pieces: int = 0, tail: int = 0, rows: bool = False,
          ticket: Any = None) -> tuple[list[object], tiles.Walk]:
    """Walk B's values (`attention_tiles.walk_setup` with the split's `pieces`
    or the causal tail's `tail` rounds; the walk's divisions plain: it runs a
    few rounds), computed in the role after walk A from opaque copies
    (`g.Opaque`) of walk A's CTA position and count (`walk_a`'s, live through
    it anyway) and of the tensor dims, so that LLVM cannot take them for the
    values computed before the roles and keep those live through walk A's key
    loops (with them shared, ptxas 13.0 spilled 68 B in the benchmark's
    kernel, reloaded once a tile in walk A; with the launch's position read
    again, 48 B: the special registers' reads are one value). `rows`: the last round's 64-row halves
    (`attention_tiles.halves`, `attention_qsplit`) instead of a split along the keys; `ticket`: the role's
    ticket (`attention_qsplit.ticket`) as the CTA's place in the last round (`_ticketed`)."""
    b = _Build(fresh)
    w = tiles.walk_setup(b, k, kv, outside, bounds, 0 if rows else pieces, tail=tail, once=walk_a.once)
    c, P = fresh.value(DType.I32, (), "cta"), fresh.value(DType.I32, (), "ctas")
    mapping: dict[int, ir.Value] = {w.c.id: c, w.P.id: P}
    ops: list[object] = [g.Opaque((c, P), (walk_a.c, walk_a.P), span)]
    for op in b.ops:  # (the launch's own c and P, computed here too, are read by nothing: dead)
        op = substitute(op, mapping)
        ops.append(op)
        if isinstance(op, ir.TensorDim):
            copy = fresh.value(op.result.dtype, (), op.result.hint)
            ops.append(g.Opaque((copy,), (op.result,), span))
            mapping[op.result.id] = copy
    w = dataclasses.replace(w, c=c, P=P, sizes=tuple(mapping.get(x.id, x) for x in w.sizes))
    hb = _Build(fresh)
    if ticket is not None:  # the CTA's place t in the last round: c = t, or P - 1 - t where that round runs backwards
        w = _ticketed(hb, w, ticket(hb, P), rows)
    if rows:
        w = tiles.halves(hb, w)
    ops += hb.ops
    return ops, w


def _ticketed(b: _Build, w: tiles.Walk, t: ir.Value, rows: bool) -> tiles.Walk:
    """Walk B `w` with the CTA's place in the last round the ticket `t` (`attention_qsplit.ticket`): its
    position `c` the one of that place and, for the key split's pieces (not `rows`, whose rounds
    `attention_tiles.halves` counts from `c`), its rounds: place t runs pieces t, t + P, .. of the `left`
    tiles' `pieces` each (`split_marks`); where the launch does not split, the rounds as they were (walk B
    then runs none: walk A's rounds were counted from the launch position, and so are these)."""
    E = ir.ElemOp
    one, zero = b.const(1), b.const(0)
    _, n, last, odd = tiles.last_round(b, w, one)
    c = b.elem(E.WHERE, odd, b.elem(E.SUB, b.elem(E.SUB, w.P, one), t), t, hint="cta")
    if rows or w.split is None:
        return dataclasses.replace(w, c=c)
    q = b.elem(E.MUL, b.elem(E.MAXIMUM, b.elem(E.SUB, n, b.elem(E.MUL, last, w.P)), one), w.split.pieces)
    mine = b.elem(E.WHERE, b.elem(E.LT, t, q, dtype=DType.BOOL),
                  b.elem(E.DIV, b.elem(E.ADD, b.elem(E.SUB, q, t), b.elem(E.SUB, w.P, one)), w.P), zero)
    rounds = b.elem(E.WHERE, w.split.on, b.elem(E.MAXIMUM, b.elem(E.ADD, last, mine), zero), w.rounds, hint="rounds")
    return dataclasses.replace(w, c=c, rounds=rounds)


def walk_b(k: g.GpuKernel, kv: set[int], bounds: tuple[ir.Value, ...], whole: ir.Value, w_a: tiles.Walk,
           walk_a: object, ops: list[object], ring: ir.Value, ring_out: ir.Value, tn: ir.Value, outside: list[object],
           layouts: dict[int, Any], fresh: Fresh, span: Any, mk: Marks | None = None, key_loop: ir.For | None = None,
           carry: tuple[tuple[ir.Value, ir.Value, object], ...] = (), tail: int = 0, rows: bool = False,
           ticket: Any = None) -> list[object]:
    """A role's walk B: its tile `ops` (reading `ring` and `tn`, the ring's
    counter `ring_out` after them) renamed and walked from round `whole` to
    the CTA's last, the counter and the tile's number going on from walk A's
    loop `walk_a`, on walk B's own values (`setup`, from walk A's `w_a`;
    `bounds`: the user's key loop's, as `outside` computes them): the split
    last round's pieces on `mk`'s bounds, or (`tail` rounds, `carry`: the
    chain's, whose first values are walk A's results) the causal tail's tiles
    chained on from walk A. `key_loop` (the producer's, one of `ops`): its
    bounds become the piece's (only the loop's: the user's lower bound, a
    constant 0, is the copies' column offset too). The renamed values keep
    the layouts of those they copy. `rows` (with `mk`): the last round's
    64-row halves (`attention_qsplit`), not pieces of its keys; `ticket`: their places by tickets (`setup`)."""
    assert isinstance(walk_a, ir.For)
    ring2, tn2 = fresh.value(ring.dtype, (), ring.hint), fresh.value(tn.dtype, (), tn.hint)
    mapping: dict[int, ir.Value] = {ring.id: ring2, tn.id: tn2}
    args = [a for a, _, _ in carry]
    for a in args:
        mapping[a.id] = fresh.value(a.dtype, a.shape, a.hint)
    if key_loop is not None:
        assert mk is not None and sum(op is key_loop for op in ops) == 1
        ops = [dataclasses.replace(op, lower=mk.lower, upper=mk.upper) if op is key_loop else op for op in ops]
    seed = {ring.id, tn.id}
    copy = clone(ops, fresh, mapping)
    for old, new in list(mapping.items()):
        if old not in seed and old in layouts:
            layouts.setdefault(new.id, layouts[old])
    firsts = walk_a.results[2:]
    carry2 = tuple((mapping[a.id], mapping.get(o.id, o), firsts[i]) for i, (a, o, _) in enumerate(carry))
    pre, w = setup(k, kv, bounds, outside, w_a, fresh, span, split.pieces() if mk is not None else 0, tail, rows, ticket)
    return [*pre, *tiles.tile_loop(w, fresh, outside, copy, ring2, mapping.get(ring_out.id, ring_out), tn2, span,
                                   carry2, mk, start=(whole, walk_a.results[0], walk_a.results[1]))]


# `TILEC_ATTN_CHAIN_TAIL` unset: "1", the causal walk's last `attention_tail.TAIL_ROUNDS` item rounds as single
# tiles, heaviest first, in walk B, chained on from walk A (a number n >= 2: n rounds; "0": none, the walk as
# before). On the H100 (2026-12-06 call 4, A C T T C A in separate processes): +2.7..+4.6 % on the causal D = 64
# S = 1,024 rows (f16 / bf16), +0..+0.5 % on the full ones (walk B runs nothing there)
CHAIN_TAIL_DEFAULT = "1"


def tail_rounds() -> int:
    """`TILEC_ATTN_CHAIN_TAIL` (unset: `CHAIN_TAIL_DEFAULT`): the item rounds of the chained short keys' variant's
    causal tail (0: none). The tail (`attention_tail`) in that variant's one walk lost 1.2 % on the H100
    (2026-12-05, call B: its branch and start in every tile's walk); here it is walk B's alone, walk A's tiles
    carry none of it."""
    from . import attention_tail as tails

    want = os.environ.get("TILEC_ATTN_CHAIN_TAIL", "") or CHAIN_TAIL_DEFAULT
    if want == "1":
        return tails.TAIL_ROUNDS
    if not want.isdigit() or (want != "0" and int(want) < 2):
        raise switches.SwitchError("TILEC_ATTN_CHAIN_TAIL", want, "0, 1 or a number of rounds >= 2")
    return int(want)


def tail_whole(b: _Build, w: tiles.Walk) -> ir.Value:
    """Walk A's rounds where walk B is the causal tail: those before the tail's (`Tail.start`: `NEVER` where the
    walk has none, then all of them)."""
    assert w.tail is not None
    return b.elem(ir.ElemOp.MINIMUM, w.tail.start, w.rounds, hint="whole")


__all__ = ["CHAIN_SPLIT_DEFAULT", "CHAIN_TAIL_DEFAULT", "DYN_MERGE_UNROLL", "Pieces", "classes", "dynamic", "enabled", "piece_tile", "setup", "tail_rounds",
           "tail_whole", "walk_b", "whole_rounds"]
