"""The chained short keys' variant with its last round split along the
queries (`TILEC_ATTN_CHAIN_HALVES=1` or `dyn`, issue 15; opt-in, not yet
measured on a GPU): each of the last round's tiles run as its two 64-row
halves on two CTAs, one consumer warpgroup's rows each; under "dyn" on the
CTAs that finish the whole rounds first (`ticket`).

A full D = 64 launch at S = 1,024 (16k tokens) is 4,096 tiles on 132 CTAs: 31
rounds and then 4 tiles while 128 CTAs idle, 31.03 rounds run as 32 (the
H200's block timeline, RESULTS.md "h15p call 2": the 128 CTAs of 31 tiles end
at ~325 us, the 4 of 32 at 336). Split along the keys (`attention_csplit`,
`TILEC_ATTN_CHAIN_SPLIT=1`) the last round's pieces each pay a tile's boundary,
a record saved and read through the L2 and, in the last piece in, the merge;
measured +0..+0.5 % on the H100. Split along the queries no merge is needed:
a half is a whole tile's work for one warpgroup, stored by it. With the 8
halves on 8 CTAs each warpgroup that runs one has its SM to itself (its
warps alone on their schedulers, the tensor cores and the MUFU not shared),
where a tile's two warpgroups share them: at D = 64 a key block's ~2,050
cycles are ~1,280 of two warps' issue a scheduler, so one warpgroup alone is
expected to take ~0.5-0.65 of a tile's time (RESULTS.md, hattn5: the model).

Walk A is the chained walk over the whole rounds (`attention_csplit`'s, the
same tile ops), the last pending P V flushed after it (`chain.final`); walk B
runs the halves (`attention_tiles.halves`: where the launch's walk hands out
single tiles and its last round leaves at most P / 2 of them, else walk A
runs every round): the producer copies the tile's Q and K/V blocks as for a
whole tile, the warpgroup whose rows the half is (`g.WarpgroupIndex`) runs
the tile unchained (the rotated loop with its product of zeros first and its
own last P V, the epilogue: its rows stored), and the other keeps the
barriers' protocol without computing: it waits for Q and for each K/V stage
and releases each (an arrival a warp, as the ring's barriers count W warps),
so the ring's counter and Q's phases go on as in a whole tile, and the
producer's next copy into a stage or Q's buffer waits for both warpgroups as
ever (the shadow's release of a stage or of Q comes after its wait for that
use of it: never early into the previous use's phase). Nothing in either
branch makes the consumers' warpgroups meet (no named barrier, no value moved
between them: `half_tile` declines otherwise). Two consumer warpgroups only.

A CTA's half is the one of its place in the last round (`split_marks`): by
default its launch position (the snake's), static; under "dyn" its ticket
(`g.TicketTake`: the producer, once out of walk A, adds 1 to a launch counter,
the `%split` counters' P-th, and the taker of the last ticket zeroes it; the
ticket goes to the consumers through a shared word and a barrier of
its own, `g.TicketRead`), so the halves go to the first CTAs out of walk A, not
to fixed ones that may be among the last (the H200's timeline: the 31-tile
CTAs end over ~5 us, half a tile).

With the causal tail on (`TILEC_ATTN_CHAIN_TAIL`, by default) the short keys'
variant with the halves has no tail and asks for the tail's variant where a
launch's walk hands out pairs (`attention_split.tail_request`), as the key
split does: causal launches (pairs) never halve.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

from .. import nodes as g
from . import attention_rotated as rot
from . import attention_split as split
from . import switches
from .attention_csplit import Pieces
from .attention_tiles import split_marks
from .attention_zeros import drop_unread_zeros
from .context import Fresh
from .pipeline import _Build
from .rewrite import substitute

# opt-in until a GPU measures it (benchmarks/hattn5_device.sh)
HALVES_DEFAULT = "0"

# ops that make the role's warpgroups meet (named barriers, values or stores shared between them): a warpgroup
# that skips them would hang the other
_MEETS = (g.WarpgroupTurn, g.ZeroRows, g.TmaStore, g.TmaStoreWait, g.SmemTileRead, g.SmemTileWrite, g.SplitSave,
          g.SplitLoad, g.SplitArrive, g.Stamp)


def setting() -> str:
    """`TILEC_ATTN_CHAIN_HALVES`: "1" the chained short keys' variant runs its last round as 64-row halves,
    each CTA's by its place in the round; "dyn" the halves handed to the CTAs in the order they finish walk
    A (`ticket`); "0" (unset: `HALVES_DEFAULT`) neither."""
    return switches.mode("TILEC_ATTN_CHAIN_HALVES", HALVES_DEFAULT, ("0", "1", "dyn"))


def enabled() -> bool:
    """Whether the halves are on (`setting`: "1" or "dyn")."""
    return setting() != "0"


def dynamic() -> bool:
    """Whether the halves go to the CTAs that finish walk A first (`setting` "dyn")."""
    return setting() == "dyn"


def ticket(bar: ir.Value, producer: bool) -> Any:
    """The role's ticket for walk B (`attention_csplit.setup`'s `ticket`: called with a builder and the
    CTAs launched, it returns the ticket): the producer takes it (`g.TicketTake`, published on `bar[0]`),
    the consumers wait for that barrier's first phase and read it (`g.TicketRead`). The ticket t is the
    CTA's place in the last round (`attention_tiles.halves`), so the first CTAs out of walk A run the
    halves; every CTA takes one (the counter is zero again after the launch)."""

    def make(b: _Build, P: ir.Value) -> ir.Value:
        t = b.fresh.value(DType.I32, (), "ticket")
        zero = b.const(0)
        if producer:
            b.ops.append(g.TicketTake(t, P, bar, zero))
        else:
            b.ops += [g.BarrierWait(bar, zero, zero), g.TicketRead(t, bar)]
        return t

    return make


def half_tile(loop: ir.For, p: Any, cast: ir.Cast, chained: set[int], bufs: Any, fresh: Fresh,
              layouts: dict[int, Any], moved0: list[object], moved: list[object], epilogue0: list[object],
              qempty: ir.Value, q_early: bool, before: list[object], head: list[object], q_wait: g.BarrierWait,
              loops: Any, spec: Any) -> Pieces | None:
    """A half of the last round's tile as the consumers run it (see the module): the ops
    before the key loop (`moved`, `head`: the tile's Q slot and phase), the half's number
    and this thread's warpgroup, and a branch: the half's warpgroup runs the rotated loop
    without the chain, its last P V, Q's and the last stage's releases and the epilogue
    (`epilogue0`, the user's); the other waits for and releases Q and each K/V stage.
    `moved0`: the tile ops before the loop as `rotated` takes them; `q_wait`: the wait for
    Q; `loops`, `spec`: `attention_loop`, `attention_spec`. None where the rotated loop
    does not apply or the tile's ops make the warpgroups meet."""
    E = ir.ElemOp
    span = loop.span
    if bufs.C != 2:
        return None
    mk = split.marks(loop, fresh)
    turned = rot.rotated(loop, p, cast, chained, bufs, fresh, layouts, moved0, loops.s_product, loops.unshare,
                         False, qempty if q_early else None, None)
    if turned is None:
        return None
    c_loop, c_pre, c_post = turned
    c_loop = spec.speculate(c_loop, fresh)
    ep = [substitute(op, c_post[1]) for op in epilogue0]
    post, ep = drop_unread_zeros(c_post[0], ep, loop, c_post[1], before)
    eb = _Build(fresh)
    trips = c_post[2]
    last = eb.elem(E.REM, eb.elem(E.ADD, trips, eb.const(bufs.S - 1)), eb.const(bufs.S))
    ran = eb.elem(E.GT, trips, bufs.base, dtype=DType.BOOL)
    ib = _Build(fresh)  # Q: released in the loop's last iteration (`q_early`), here where the loop did not run
    idle = ib.elem(E.GE, loop.lower, loop.upper, dtype=DType.BOOL) if q_early else None
    active = [*ib.ops, dataclasses.replace(q_wait), *c_pre, c_loop, g.BarrierArrive(qempty, bufs.qs, idle, span),
              *post, *eb.ops, g.BarrierArrive(bufs.empty, last, ran, span), *ep]
    if any(isinstance(op, _MEETS) for op in g.walk(ir.Region((), tuple(active)))):  # type: ignore[arg-type]
        return None
    # the other warpgroup: Q's wait and release, each stage's wait and release, the ring's counter as the loop's
    sb = _Build(fresh)
    iv, it = fresh.value(loop.body.args[0].dtype, (), "k"), fresh.value(DType.I32, (), "it")
    stage, phase = sb.ring(it, bufs.S)
    sb.ops += [g.BarrierWait(bufs.full, stage, phase, span), g.BarrierArrive(bufs.empty, stage, None, span)]
    sb.ops.append(ir.Yield((sb.elem(E.ADD, it, sb.const(1)),)))
    shadow_loop = ir.For((fresh.value(DType.I32, (), "trips"),), loop.lower, loop.upper, loop.step, (bufs.base,),
                         ir.Region((iv, it), tuple(sb.ops)), span)  # type: ignore[arg-type]
    shadow = [dataclasses.replace(q_wait), g.BarrierArrive(qempty, bufs.qs, None, span), shadow_loop,
              ir.Yield((shadow_loop.results[0],))]
    # which half: the piece of the split last round (`split_marks`, the round and P through an asm copy, as the
    # key split's epilogue reads them), and this thread's warpgroup
    hb = _Build(fresh)
    r2, p2 = fresh.value(DType.I32, (), "round"), fresh.value(DType.I32, (), "ctas")
    hb.ops.append(g.Opaque((r2, p2), (mk.round, mk.P), span))
    half = split_marks(hb, r2, p2, mk.c, mk.nh, mk.kvs, mk.pieces)["piece"]
    wg = fresh.value(DType.I32, (), "warpgroup")
    hb.ops.append(g.WarpgroupIndex(wg, span))
    mine = hb.elem(E.EQ, wg, half, dtype=DType.BOOL, hint="mine")
    out = fresh.value(DType.I32, (), "trips")
    branch = ir.If((out,), mine, ir.Region((), (*active, ir.Yield((trips,)))),  # type: ignore[arg-type]
                   ir.Region((), tuple(shadow)), span)  # type: ignore[arg-type]
    ops = [*moved, *head, *hb.ops, branch]
    ys = c_loop.body.ops[-1]
    assert isinstance(ys, ir.Yield)
    links = list(zip(c_loop.inits, c_loop.body.args[1:], ys.values, c_loop.results, strict=True))
    return Pieces(ops, out, mk, [*moved, *c_loop.body.ops, *post, *ep], links)


__all__ = ["HALVES_DEFAULT", "dynamic", "enabled", "half_tile", "setting", "ticket"]
