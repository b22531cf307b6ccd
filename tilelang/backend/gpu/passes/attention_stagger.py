"""The two consumer warpgroups of the chained walk staggered (`TILEC_ATTN_STAGGER=1`, issue 15).

A 128-row tile's two warpgroups share its K/V ring, so in the persistent walk
they run the same key blocks side by side and meet each tile boundary (the
walk's position, Q's wait, the next tile's first S = Q K^T, which nothing
overlaps, the previous tile's epilogue) at the same time: for that stretch
neither feeds the MUFU nor the tensor cores, at S = 1,024 ~1.2 key blocks of
every 8 (benchmarks/RESULTS.md, the traced tiles of 2026-12-04). Staggered,
warpgroup 0 starts the walk's first tile only once warpgroup 1 has run that
tile's first iteration (a named barrier: warpgroup 1 arrives, warpgroup 0
syncs, once a CTA), so from then on each warpgroup's boundary falls in the
other's key loop, which has the SM's exp2 and tensor cores to itself there.
Nothing else holds them together: the ring's stages free when both have
read them (a lag of a block or two fits in its 4 stages at D = 64), and Q is
double-buffered (`attention_tiles.q_slots`), so the leader's next Q does not
wait for the other's release of this one. Only the chained short keys'
variant at D = 64 (two consumer warpgroups, no turns, O stored from
registers), where two Q tiles fit beside the ring; off by default, every
kernel byte-identical without it. Values do not change (the barrier only
delays warpgroup 0), so the interpreter's results stand as they are.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

from .. import nodes as g
from .context import Fresh
from .pipeline import _Build

STAGGER_DEFAULT = "0"
# the named barrier (0 the CTA's, 1 zero rows, 2-3 turns, 4-6 TMA stores, 8 the split's merge)
STAGGER_BARRIER = 9


def setting() -> str:
    """`TILEC_ATTN_STAGGER`: "0", "1" (warpgroup 1 arrives after the tile's first iteration) or "2" (after the
    key loop's first iteration, the tile's second block; after the loop where it runs none), unset:
    `STAGGER_DEFAULT`."""
    want = os.environ.get("TILEC_ATTN_STAGGER", STAGGER_DEFAULT)
    if want not in ("0", "1", "2"):
        raise ValueError(f"TILEC_ATTN_STAGGER={want!r}: expected 0, 1 or 2")
    return want


def wanted(persist: bool, short: bool, width: int, consumers: int, turns: bool, ost: Any) -> bool:
    """Whether the walk's warpgroups are to be staggered: on, a persistent walk of the short keys'
    variant (`short`) where it is chained (O rows `width` wide: `attention_chain.CHAIN_D`), two
    consumer warpgroups, no turns, no TMA-store epilogue."""
    from .attention_chain import CHAIN_D

    return setting() != "0" and persist and short and width in CHAIN_D and consumers == 2 and not turns \
        and ost is None


def tile_ops(ops: list[object], c_loop: ir.For, qbar: ir.Value, tn: ir.Value, fresh: Fresh,
             span: Any) -> list[object]:
    """A chained tile's consumer ops (`attention_chain.tile_ops`'s) staggered:
    in the CTA's first tile (`tn` 0) warpgroup 0 waits before its wait for Q
    (on `qbar`) until warpgroup 1 has run the tile's first iteration (its
    arrival before the key loop `c_loop`; "2": at the end of the loop's first
    iteration, or after the loop where it ran none). Both in that tile only,
    so a CTA without a tile meets nothing."""
    E = ir.ElemOp
    b = _Build(fresh)
    first = b.elem(E.EQ, tn, b.const(0), dtype=DType.BOOL, hint="first_tile")
    nothing = ir.Region((), (ir.Yield(()),))

    def once(kind: str, cond: ir.Value) -> object:
        return ir.If((), cond, ir.Region((), (g.WarpgroupTurn(kind, STAGGER_BARRIER, span), ir.Yield(()))),  # type: ignore[arg-type]
                     nothing, span)

    q_at = next(i for i, op in enumerate(ops) if isinstance(op, g.BarrierWait) and op.bar is qbar)
    at = next(i for i, op in enumerate(ops) if isinstance(op, ir.For) and op.results == c_loop.results)
    # "end": warpgroup 0 syncs on the barrier; "start": warpgroup 1 arrives on it (`codegen/wgmma_rs.warpgroup_turn`)
    if setting() != "2":
        return [*b.ops, *ops[:q_at], once("end", first), *ops[q_at:at], once("start", first), *ops[at:]]
    lb = _Build(fresh)  # in the loop: the first tile's first iteration of the loop
    iv = c_loop.body.args[0]
    go = lb.elem(E.AND, first, lb.elem(E.EQ, iv, c_loop.lower, dtype=DType.BOOL), dtype=DType.BOOL)
    body = c_loop.body.ops
    loop = dataclasses.replace(c_loop, body=ir.Region(c_loop.body.args, (*body[:-1], *lb.ops, once("start", go),
                                                                           body[-1])))
    ab = _Build(fresh)  # after it: the first tile's loop ran no iteration
    idle = ab.elem(E.AND, first, ab.elem(E.GE, c_loop.lower, c_loop.upper, dtype=DType.BOOL), dtype=DType.BOOL)
    return [*b.ops, *ops[:q_at], once("end", first), *ops[q_at:at], loop, *ab.ops, once("start", idle),
            *ops[at + 1:]]


__all__ = ["STAGGER_BARRIER", "STAGGER_DEFAULT", "setting", "tile_ops", "wanted"]
