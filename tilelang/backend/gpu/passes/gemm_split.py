"""Split-K for the persistent Hopper GEMM (`gemm_persistent`, form 3; `TILEC_GEMM_SPLITK`, "auto" by default:
where a launch has at most half as many tiles as SMs).

A GEMM with fewer output tiles than SMs (M = 64 rows of a 4,096-wide layer: 32 or 64 tiles on 132 SMs) leaves
most of the card idle, each busy SM running the whole K loop. Here the runtime launches a CTA an SM whatever the
tiles (`GpuKernel.fill`) and the CTAs split each tile's K loop into `s` pieces, s = min(SPLIT_MAX, P / T,
iterations / MIN_PIECE) for P CTAs and T tiles (1 where the tiles fill the card: the walk of single tiles):
item i = piece * T + tile, CTA c running items c, c + P, ...; piece p of a tile of n iterations runs
iterations [n p / s, n (p + 1) / s). A piece saves its f32 accumulator to record i of the launch's split
workspace (`SplitSave`, `codegen/split.py`: the attention split's records and counters) and arrives at the
tile's counter (`SplitArrive`); the last to arrive reads the s records in piece order (a fixed order of sums:
the same result whichever CTA is last) and runs the epilogue. With s = 1 nothing is saved.

The sum of s partial sums is not the K loop's one running sum: an f32 result differs from the unsplit kernel's
by the rounding of the partial sums (the engines agree to floating-point tolerance, as any GEMM's order of
summation is the backend's).
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

SPLIT_MAX = 8  # pieces a tile: records are `codegen/split.SPLIT_ROUNDS` a CTA (T s <= P items)
MIN_PIECE = 4  # K iterations a piece at least (a piece's ring fill and its record cost ~ a few iterations)


# "auto": a launch whose grid has at most half as many tiles as SMs runs the split variant (`KernelABI.few`,
# `TensorFacts.few_tiles`), any other today's kernel; measured on an H100 (call 17, 2026-12-06, against one tile
# a CTA): 64x4096x4096 64x128x64 (32 tiles, s = 4) 0.64x -> 0.88x cuBLAS, 64x64x64 (64 tiles, s = 2) 0.80x ->
# 0.96x, 128x4096x4096 128x128x64 (32 tiles) 0.67x -> 0.85x; with 86 tiles (s = 1) the split kernel lost (1.04x
# -> 0.88x): not split there. "1": every walkable GEMM takes the split form; "0": none.
SPLITK_DEFAULT = "auto"


def requested() -> str:
    """`TILEC_GEMM_SPLITK`: "auto" (unset: `SPLITK_DEFAULT`), "1" or "0"."""
    return switches.mode("TILEC_GEMM_SPLITK", SPLITK_DEFAULT, ("0", "1", "auto"))


def merge(fin: ir.Value, vals: tuple[ir.Value, ...], threads: int, fresh: Fresh, layouts: dict[int, object],
          lay: object, span: object) -> tuple[list[object], ir.Value, ir.Value]:
    """The consumers' ops after a piece's K loop (`fin` its accumulator; `vals` = (item, tile, s, T)): the
    piece's record saved and its arrival where s > 1, the records summed by the last; returns (ops, go: the
    epilogue runs, the accumulator it reads)."""
    E = ir.ElemOp
    item, tile, s, T = vals
    b = _Build(fresh)
    big = b.elem(E.GT, s, b.const(1), dtype=DType.BOOL, hint="split")

    def tilev(hint: str = "acc") -> ir.Value:
        v = fresh.value(DType.F32, fin.shape, hint)
        layouts[v.id] = lay
        return v

    # s > 1: save, arrive; the last sums the records 0 .. s-1 in order
    sb = _Build(fresh)
    last = fresh.value(DType.BOOL, (), "last")
    sb.ops += [g.SplitSave((fin,), item, threads, span), g.SplitArrive(last, tile, s, threads, span)]  # type: ignore[arg-type]
    lb = _Build(fresh)
    acc = tilev()
    lb.ops.append(g.SplitLoad((acc,), tile, threads, span))  # type: ignore[arg-type]
    # records 1 .. s-1: a loop (s is the launch's), acc + record, in piece order
    q, a_in = fresh.value(DType.I32, (), "piece"), tilev()
    rb = _Build(fresh)
    slot = rb.elem(E.ADD, tile, rb.elem(E.MUL, q, T), hint="record")
    rec, summed = tilev("record"), tilev()
    rb.ops += [g.SplitLoad((rec,), slot, threads, span), ir.Elementwise(summed, E.ADD, (a_in, rec)),  # type: ignore[arg-type]
               ir.Yield((summed,))]
    total = tilev()
    one = lb.const(1)
    lb.ops.append(ir.For((total,), one, s, one, (acc,), ir.Region((q, a_in), tuple(rb.ops)), span))  # type: ignore[arg-type]
    lb.ops.append(ir.Yield((total,)))
    got = tilev()
    sb.ops.append(ir.If((got,), last, ir.Region((), tuple(lb.ops)), ir.Region((), (ir.Yield((fin,)),)), span))  # type: ignore[arg-type]
    sb.ops.append(ir.Yield((last, got)))
    go, out = fresh.value(DType.BOOL, (), "go"), tilev()
    t = fresh.value(DType.BOOL, (), "whole")
    whole = ir.Region((), (ir.Const(t, True), ir.Yield((t, fin))))  # type: ignore[arg-type]
    b.ops.append(ir.If((go, out), big, ir.Region((), tuple(sb.ops)), whole, span))  # type: ignore[arg-type]
    return b.ops, go, out


def start(acc0: ir.Value, value: object, vals: tuple[ir.Value, ...], fresh: Fresh, layouts: dict[int, object],
          lay: object, span: object) -> list[object]:
    """`acc0` defined as the accumulator's constant `value` in a tile's first piece and zeros in the others (an
    accumulator that starts from a constant other than 0: only the first piece's sum counts it, as the one
    loop's)."""
    E = ir.ElemOp
    item, _, _, T = vals
    b = _Build(fresh)
    first = b.elem(E.LT, item, T, dtype=DType.BOOL, hint="first")
    c, z = fresh.value(acc0.dtype, acc0.shape, "acc"), fresh.value(acc0.dtype, acc0.shape, "acc")
    layouts[c.id] = layouts[z.id] = layouts[acc0.id] = lay
    return [*b.ops, ir.If((acc0,), first, ir.Region((), (ir.Const(c, value), ir.Yield((c,)))),  # type: ignore[arg-type]
                          ir.Region((), (ir.Const(z, 0.0), ir.Yield((z,)))), span)]  # type: ignore[arg-type]


def own_bounds(loop: ir.For, outside: list[object], fresh: Fresh) -> tuple[ir.For, list[object]]:
    """`loop` with bounds of its own (copies of its lower and upper bound, made at the end of `outside`, the
    scalar ops before it). `walk` gives each piece its bounds by substituting the loop's bounds in the roles'
    ops; with the values themselves, every other read of them moved too: a constant 0 the IR shares between
    the loop's start and the epilogue's `block_id(0) == 0` became the piece's start there (a wrong value,
    hgemm4's llsim test `branch-split`)."""
    E = ir.ElemOp
    zero = fresh.value(DType.I32, (), "")
    lo, hi = (fresh.value(v.dtype, (), h) for v, h in ((loop.lower, "klo"), (loop.upper, "khi")))
    zc = zero if loop.lower.dtype is DType.I32 else fresh.value(loop.lower.dtype, (), "")
    ops: list[object] = [ir.Const(zero, 0)] + ([ir.Const(zc, 0)] if zc is not zero else [])
    ops += [ir.Elementwise(lo, E.ADD, (loop.lower, zc)), ir.Elementwise(hi, E.ADD, (loop.upper, zc))]
    return dataclasses.replace(loop, lower=lo, upper=hi), [*outside, *ops]


def walk(k: g.GpuKernel, loop: ir.For, fresh: Fresh, outside: list[object],
         producer: tuple[list[object], ir.Value, ir.Value], consumer: tuple[list[object], ir.Value, ir.Value],
         vals: tuple[ir.Value, ...], widen: tuple[int, int] = (-1, 1)) -> tuple[list[object], list[object], list[object]]:
    """(setup ops before the roles, the producer's walk, the consumers') for the split walk; `vals` = (item, tile,
    s, T), the values `merge`'s ops read: s and T defined by the setup, item and tile by the consumers' rounds.
    `widen` (axis, f): the grid of f tiles as one along the axis (`gemm_rows`' coarse row tiles)."""
    from .attention_tiles import _bounds, _logical, clone, launch_and_grid, unravel

    E = ir.ElemOp
    item_v, tile_v, s_v, T_v = vals
    b = _Build(fresh)
    R = k.grid_rank
    c, P, sizes, _ = launch_and_grid(b, k, widen)
    one, zero = b.const(1), b.const(0)
    T = one
    for x in sizes:
        T = b.elem(E.MUL, T, x)
    b.ops.append(ir.Elementwise(T_v, E.MAXIMUM, (T, one)))
    lo0, hi0 = _bounds(b, outside, (loop.lower, loop.upper), [zero] * R, sizes)
    step0 = _bounds(b, outside, (loop.step,), [zero] * R, sizes)[0]
    n0 = trips(b, lo0, hi0, step0)
    s = b.elem(E.MINIMUM, b.elem(E.DIV, P, T_v), b.elem(E.DIV, n0, b.const(MIN_PIECE)))
    b.ops.append(ir.Elementwise(s_v, E.MAXIMUM, (b.elem(E.MINIMUM, s, b.const(SPLIT_MAX)), one)))
    items = b.elem(E.MUL, T, s_v)  # (an empty grid: no items)
    rounds = b.elem(E.MAXIMUM, b.elem(E.DIV, b.elem(E.ADD, b.elem(E.SUB, items, c), b.elem(E.SUB, P, one)), P), zero,
                    hint="rounds")

    def role_loop(ops: list[object], base: ir.Value, out: ir.Value, defs: tuple[ir.Value, ir.Value] | None) -> list[object]:
        r = fresh.value(DType.I32, (), "round")
        rb = _Build(fresh)
        item = rb.elem(E.ADD, rb.elem(E.MUL, r, P), c, hint="item")
        tile = rb.elem(E.REM, item, T_v, hint="tile")
        piece = rb.elem(E.DIV, item, T_v, hint="piece")
        if defs is not None:  # the consumers' `merge` reads them
            rb.ops += [ir.Elementwise(defs[0], E.ADD, (item, zero)), ir.Elementwise(defs[1], E.ADD, (tile, zero))]
        pos = unravel(rb, tile, list(range(R)), sizes)
        posl = [pos[a] for a in range(R)]
        mapping: dict[int, ir.Value] = {}
        head = [*rb.ops, *clone(outside, fresh, mapping)]
        pb = _Build(fresh)
        lo, hi, st = (mapping.get(v.id, v) for v in (loop.lower, loop.upper, loop.step))
        n = trips(pb, lo, hi, st)
        j0 = pb.elem(E.DIV, pb.elem(E.MUL, n, piece), s_v)
        j1 = pb.elem(E.DIV, pb.elem(E.MUL, n, pb.elem(E.ADD, piece, pb.const(1))), s_v)
        lo_p = pb.elem(E.ADD, lo, pb.elem(E.MUL, st, j0), hint="lo")
        last = pb.elem(E.EQ, piece, pb.elem(E.SUB, s_v, pb.const(1)), dtype=DType.BOOL)
        hi_p = pb.elem(E.WHERE, last, hi, pb.elem(E.ADD, lo, pb.elem(E.MUL, st, j1)), hint="hi")
        mapping.update({loop.lower.id: lo_p, loop.upper.id: hi_p})
        # (one `_logical` over the tile's ops: a role's op may read a position the scalar ops before the loop read,
        # `gemm_rows`' coarse tiles' columns)
        body = _logical([*head, *pb.ops, *(substitute(op, mapping) for op in ops)], posl, sizes)
        nxt = fresh.value(DType.I32, (), "ring")
        ring0 = fresh.value(DType.I32, (), "ring0")
        first = fresh.value(DType.I32, (), "r0")
        stp = fresh.value(DType.I32, (), "")
        region = ir.Region((r, base), (*body, ir.Yield((mapping.get(out.id, out),))))  # type: ignore[arg-type]
        return [ir.Const(first, 0), ir.Const(stp, 1), ir.Const(ring0, 0),
                ir.For((nxt,), first, rounds, stp, (ring0,), region, loop.span)]

    p_ops, p_base, p_out = producer
    c_ops, c_base, c_out = consumer
    return b.ops, role_loop(p_ops, p_base, p_out, None), role_loop(c_ops, c_base, c_out, (item_v, tile_v))


__all__ = ["MIN_PIECE", "SPLITK_DEFAULT", "SPLIT_MAX", "merge", "own_bounds", "requested", "start", "walk"]
