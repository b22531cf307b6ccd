"""A persistent grid for the Hopper GEMM pipeline (`passes/pipeline.py`).

Without it each output tile is a CTA, and with one CTA an SM (the
warp-specialised kernel takes the register file) every tile pays its fixed
costs alone: the ring's first copies before any product, the epilogue's
stores after the last one, with the tensor cores idle in both; and 4096^2
outputs in 128 x 128 tiles are 7.76 waves of 132 SMs run as 8. Persistent,
the runtime launches at most one CTA an SM (`GpuKernel.persistent`) and
each CTA walks tiles (`attention_tiles.walk_setup` / `tile_loop`, the walk
the attention pipeline has: the logical grid computed in the kernel from
the largest `&mut` partition, so any launch size is correct, single tiles
in a snake): the producer fills the ring for the next tile while the
consumers run this tile's epilogue, the ring's counter running on from
tile to tile; each tile gives its last stage back at its end. The
epilogue's stores are staged after the ring (`GpuKernel.stage_apart`).

Two forms (`mode`):

- 1, "cooperative": the consumer warpgroups (the tile's rows split among
  them) walk every tile; the epilogue still stops the tensor cores, the
  fill of the ring does not.
- 2, "pingpong" (an accumulator one warpgroup holds, `C == 1`): two consumer
  roles of one warpgroup each, role g taking the CTA's tiles g, g + 2, ...
  and only counting the other's stages on the ring. The producer fills the
  ring in tile order, so one role's products start as the other's end and
  run under the other's epilogue (CUTLASS's sm90 "ping-pong" kernel: the
  order falls out of the ring here, no turn barriers). Each role stages
  its stores in its own area, behind its own named barrier (`Role.slot`,
  `hopper.store_wgmma`).

`TILEC_GEMM_PERSISTENT`: "0" off, "1" cooperative, "2" pingpong where an
accumulator fits one warpgroup (else cooperative), unset: "0" (off until
timed on a GPU: `benchmarks/gemm_persistent.py`).
"""

from __future__ import annotations

import dataclasses

from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

from .. import nodes as g
from . import switches
from .build import _Build, trips
from .context import Fresh
from .rewrite import substitute

PERSISTENT_DEFAULT = "0"


def requested() -> int:
    """`TILEC_GEMM_PERSISTENT`: 0 (off), 1 (cooperative) or 2 (pingpong where it fits)."""
    want = switches.mode("TILEC_GEMM_PERSISTENT", PERSISTENT_DEFAULT, ("0", "1", "2"))
    return int(want)


def walkable(k: g.GpuKernel, loop: ir.For, parts: int, blocks: int, scalar: object) -> bool:
    """Whether the GEMM loop `loop` of `k` may walk tiles: one column part, one CTA an SM, a `&mut` partition
    (the walk's grid), no device `print` (its records keep launch order), `#[cluster]` or `last_block`, and
    only scalar ops before the loop besides the accumulator's constant (they are re-run per tile in each role;
    `scalar`: the op test)."""
    if parts != 1 or blocks != 1 or k.grid_rank < 1:
        return False
    if not [p for p in k.tensor_params if p.mutable and p.tile_shape]:
        return False
    if k.source.cluster or any(isinstance(op, ir.Print | ir.LastBlock) for op in g.walk(k.body)):
        # (hrev22: a cluster's blocks must be CTAs of one CUDA cluster, one block each (`CLUSTER_SKIPS`' reason),
        # and the walk's grid of CTAs is no whole number of clusters along y or z; `last_block`'s
        # group tile is a `&mut` partition of one tile along the axis, which the walk took for its grid where it
        # came first, computing that axis's first tiles only, and `arrive_wait` elects its block by `%ctaid`)
        return False
    ops = list(k.body.ops)
    before = ops[:ops.index(loop)]
    return all(scalar(op) or (isinstance(op, ir.Const) and op.result.id == loop.inits[0].id) for op in before)  # type: ignore[operator]


def mode(k: g.GpuKernel, loop: ir.For, parts: int, blocks: int, consumers: int, scalar: object,
         wide: bool = False, few: bool = False) -> int:
    """The form this GEMM takes: 0 (one tile a CTA), 1 or 2 (`requested`, 2 only where C == 1), 3 (split-K,
    `gemm_split.requested`: the consumers walk pieces of tiles, the card filled whatever the tiles). `wide`: the
    user's tiles side by side (`gemm_widen`), which needs the walk (1 unless 2 is asked; never split). `few`: the
    launch has few tiles (`TensorFacts.few_tiles`: split-K's "auto")."""
    from . import gemm_split

    want_split = gemm_split.requested()
    split = (want_split == "1" or (want_split == "auto" and few)) and not wide
    want = requested() or 2 * int(wide)  # (wide: pingpong where the accumulator fits one warpgroup, as measured)
    if not (want or split) or not walkable(k, loop, parts, blocks, scalar):
        return 0
    if split:
        return 3
    return 2 if want == 2 and consumers == 1 else 1


def roles(k: g.GpuKernel, loop: ir.For, form: int, fresh: Fresh, layouts: dict[int, object],
          outside: list[object], producer: tuple[list[object], ir.Value, ir.Value],
          consumer: tuple[list[object], ir.Value, ir.Value], apart: set[int], producer_role: g.Role,
          consumer_role: g.Role, turn: tuple[ir.Value, ir.Value] | None = None,
          split: tuple[ir.Value, ...] = (), widen: tuple[int, int] = (-1, 1),
          ksub: int = 1) -> tuple[list[object], tuple[g.Role, ...]]:
    """The walk's setup ops (before the roles) and the roles walking the tiles. `producer` / `consumer`: a
    tile's ops, the ring's counter they read at its start and the one they define at its end. `form` 2: two
    consumer roles (`consumer_role` one warpgroup), role g running tiles g, g + 2, ... (`apart` gets the
    second role's stored values too); `turn`: the turn barriers [2] and the value the consumer's tile ops
    arrive on (right after their K loop: the other role's index). `ksub`: ring stages an iteration takes
    (`HopperPlan.ksub`).

    The turns: role g waits on `turn[g]` before its tile n >= 1 (completion (n - 1) / 2: the other role's
    products of tile n - 1 issued). Without them a role that only counted the other's tile would wait on the
    ring for its next tile while the producer is still more than one pass behind: an mbarrier's parity
    cannot tell phase p from p - 2, and the wait would pass on a stage not filled yet (llsim: a race)."""
    from .attention_tiles import clone, tile_loop, walk_setup

    span = loop.span
    if form == 3:  # split-K: a walk of pieces of tiles (`gemm_split.walk`)
        from . import gemm_split

        setup, p_walk, c_walk = gemm_split.walk(k, loop, fresh, outside, producer, consumer, split, widen)
        return setup, (dataclasses.replace(producer_role, body=ir.Region((), (*p_walk, ir.Yield(())))),  # type: ignore[arg-type]
                       dataclasses.replace(consumer_role, body=ir.Region((), (*c_walk, ir.Yield(())))))  # type: ignore[arg-type]
    wb = _Build(fresh)
    walk = walk_setup(wb, k, set(), outside, (loop.lower, loop.upper), form="single", widen=widen)
    p_ops, p_base, p_out = producer
    p_walk = tile_loop(walk, fresh, outside, p_ops, p_base, p_out, fresh.value(DType.I32, (), "tile"), span)
    p_role = dataclasses.replace(producer_role, body=ir.Region((), (*p_walk, ir.Yield(()))))  # type: ignore[arg-type]
    c_ops, c_base, c_out = consumer
    if form != 2:
        c_walk = tile_loop(walk, fresh, outside, c_ops, c_base, c_out, fresh.value(DType.I32, (), "tile"), span)
        c_role = dataclasses.replace(consumer_role, body=ir.Region((), (*c_walk, ir.Yield(()))))  # type: ignore[arg-type]
        return wb.ops, (p_role, c_role)
    out: list[g.Role] = [p_role]
    E = ir.ElemOp
    for slot in range(2):
        tn = fresh.value(DType.I32, (), "tile")
        assert turn is not None
        tb = _Build(fresh)
        other = tb.const(1 - slot, hint="other")
        if slot == 0:
            base, end = c_base, c_out
            ops = [substitute(op, {turn[1].id: other}) for op in c_ops]
        else:
            base = fresh.value(DType.I32, (), "ring")
            mapping: dict[int, ir.Value] = {c_base.id: base, turn[1].id: other}
            ops = clone(c_ops, fresh, mapping)
            end = mapping.get(c_out.id, c_out)
            for old, new in list(mapping.items()):
                if old in layouts:
                    layouts[new.id] = layouts[old]
                if old in apart:
                    apart.add(new.id)
        one = tb.const(1)
        mine = tb.elem(E.EQ, tb.elem(E.AND, tn, one), tb.const(slot), dtype=DType.BOOL, hint="mine")
        wb_ = _Build(fresh)
        later = wb_.elem(E.GE, tn, wb_.const(1), dtype=DType.BOOL)
        parity = wb_.elem(E.AND, wb_.elem(E.SHR, wb_.elem(E.SUB, tn, wb_.const(1)), wb_.const(1)), wb_.const(1))
        wait = ir.If((), later, ir.Region((), (g.BarrierWait(turn[0], wb_.const(slot), parity, span), ir.Yield(()))),  # type: ignore[arg-type]
                     ir.Region((), (ir.Yield(()),)), span)
        ops = [*wb_.ops, wait, *ops]
        sb = _Build(fresh)
        n = trips(sb, loop.lower, loop.upper, loop.step)  # (the other's tile: its iterations' `ksub` stages each)
        skip = sb.elem(E.ADD, base, n if ksub == 1 else sb.elem(E.MUL, n, sb.const(ksub)), hint="ring")
        res = fresh.value(DType.I32, (), "ring")
        tile = [*tb.ops, ir.If((res,), mine, ir.Region((), (*ops, ir.Yield((end,)))),  # type: ignore[arg-type]
                               ir.Region((), (*sb.ops, ir.Yield((skip,)))), span)]  # type: ignore[arg-type]
        c_walk = tile_loop(walk, fresh, outside, tile, base, res, tn, span)
        out.append(dataclasses.replace(consumer_role, body=ir.Region((), (*c_walk, ir.Yield(()))), slot=slot))  # type: ignore[arg-type]
    return wb.ops, tuple(out)


__all__ = ["PERSISTENT_DEFAULT", "mode", "requested", "roles", "walkable"]
