"""Wider tiles than the user's for the persistent Hopper GEMM (`TILEC_GEMM_WIDEN`: "auto" by default, where a
launch has at least two waves of wide tiles: the runtime's second variant, `KernelABI.wide`).

The user's tile is the partition of the output; how a CTA computes it is the backend's. A 128 x 128 tile reads
32 KB of A and B from L2 for each 2 MFLOP of products, 128 x 256 reads 48 KB for 4 MFLOP; at the tensor cores'
rate the first is close to what the L2 delivers (4096^3 f16 on an H100: 128 x 128 ran 0.84x cuBLAS with one or
two consumer warpgroups and with two CTAs an SM, 128 x 256 0.96x). A 64 x 64 tile (0.44x) reads 16 KB for 0.5
MFLOP. Here a CTA of the persistent walk (`gemm_persistent`) computes `f` of the user's tiles side by side along
the output's columns (f N <= 256): A once, the f tiles' B into one wider ring stage, one accumulator of f N
columns, and then the user's epilogue once for each tile on its columns of the accumulator (`g.AccColumns`:
the registers of columns [j N, (j + 1) N) are a [M, N] accumulator of the same layout), each with its own block
position (the user's scalar ops before the loop run again for each), a tile past the grid's last column not
stored. Each product sums the same k-steps in the same order: the results are the user tile's bit for bit.

Taken where the column axis is clear (B's offsets depend on one grid axis that A's and the loop's bounds do
not), both operands are copied by TMA, nothing reads `num_blocks`, and the wider stage leaves 4 stages and the
staging of a tile's stores in shared memory. The walk covers the grid in wide tiles (`walk_setup`'s `widen`).
"""

from __future__ import annotations

import dataclasses

from tilelang.backend.env_switch import flag
from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

from .. import nodes as g
from . import switches
from .build import _Build
from .context import Fresh

# "auto": a launch with at least two waves of wide tiles (2 f tiles an SM) runs the wide variant (`KernelABI.wide`,
# `TensorFacts.wide_tiles`), any other today's kernel. Measured on an H100 (call 18, 2026-12-06; wide against one
# tile a CTA): 4096^3 128x128x64 0.84x -> 0.97x cuBLAS, 128x128x32 0.75x -> 0.84x, 64x64x64 0.44x -> 0.82x, 8192^3
# 128x128x64 0.88x -> 0.95x, 128x128x128 0.80x -> 0.81x (not widened: no room); on few tiles (M = 64 / 128 rows)
# it lost badly (0.36-0.40x, fewer CTAs): not there. "1": wherever it applies; "0": never.
WIDEN_DEFAULT = "auto"


def requested() -> str:
    """`TILEC_GEMM_WIDEN`: "auto" (unset: `WIDEN_DEFAULT`), "1" or "0"."""
    return switches.mode("TILEC_GEMM_WIDEN", WIDEN_DEFAULT, ("0", "1", "auto"))


def deep_ring() -> bool:
    """`TILEC_GEMM_WIDE_RING` ("1" by default; "0" off): a wide tile's ring as deep as fits beside its stores'
    staging, up to 8 stages (else 4, or more of small stages, as any GEMM: 128x256x32 got 5 stages = 120 KB in
    flight where 128x256x64 has 4 = 192 KB). Call 19 (H100): 128x128x32 wide 0.85x -> 0.96x cuBLAS (8 stages);
    128x128x64 keeps 4 (no room for more); 128x128x128 is not widened either way (0.81x / 0.83x: noise)."""
    return flag("TILEC_GEMM_WIDE_RING", "1")


def _defs(k: g.GpuKernel) -> dict[int, object]:
    out: dict[int, object] = {}
    for op in g.walk(k.body):
        for r in g.results(op):
            out[r.id] = op
    return out


def ids(k: g.GpuKernel) -> dict[int, int]:
    """The values that are a tile's grid position, by id -> axis: `block_order`'s grouped position where it
    renumbered the blocks (`GpuKernel.grouped`), else the `block_id` reads."""
    if k.grouped is not None:
        return {v.id: a for a, v in enumerate(k.grouped)}
    return {op.result.id: op.axis for op in g.walk(k.body) if isinstance(op, ir.BlockId)}


def axes(k: g.GpuKernel, roots: list[ir.Value], defs: dict[int, object] | None = None) -> set[int] | None:
    """The grid axes `roots` depend on (None: through control flow, unknown)."""
    defs = _defs(k) if defs is None else defs
    pos = ids(k)
    out: set[int] = set()
    seen: set[int] = set()
    todo = list(roots)
    while todo:
        v = todo.pop()
        if v.id in seen:
            continue
        seen.add(v.id)
        if v.id in pos:
            out.add(pos[v.id])
            continue
        op = defs.get(v.id)
        if op is None:
            continue
        if isinstance(op, ir.If | ir.For | ir.While):
            return None
        todo += list(g.operands(op))
    return out


def column_axis(k: g.GpuKernel, loop: ir.For, a: ir.Load, b: ir.Load) -> int | None:
    """The grid axis B's offsets depend on and A's and the loop's bounds do not (one), or None."""
    defs = _defs(k)
    aa, ba, la = (axes(k, list(vs), defs) for vs in (a.offsets, b.offsets, (loop.lower, loop.upper, loop.step)))
    if aa is None or ba is None or la is None:
        return None
    cols = ba - aa - la
    # (the user's `num_blocks` reads: the walk's would be the wide grid's; `block_order`'s own are dropped with it)
    if len(cols) != 1 or any(isinstance(op, ir.NumBlocks) for op in g.walk(k.source.body)):
        return None
    return next(iter(cols))


def factor(N: int, M: int, regs: int) -> int:
    """Tiles side by side: the most of 4, 2 whose f N <= 256 and whose accumulator fits two warpgroups'
    `regs` registers a thread (else 1)."""
    for f in (4, 2):
        if f * N <= 256 and M * f * N <= 2 * 128 * regs:
            return f
    return 1


# A wide stage holds at most this much of K: a K step of the user's tile twice as deep (128x128x128: A 32 KB + a
# wide B 64 KB = 96 KB a stage, 2 stages, no room beside the stores' staging) is copied and multiplied as K / 64
# stages of the ring, one after the other (`k_parts`): the wgmma instructions the consumers issue on the
# accumulator are the same k16 steps in the same order, only their commit groups are smaller, so the sums are the
# unsplit tile's bit for bit; the stage is then 128x256x64's (4 stages + staging, as the 128x128x64 wide tile).
K_STAGE = 64


def k_parts(K: int) -> int:
    """Ring stages one K step of a wide tile takes (`K_STAGE` of K each; 1 where K is not a multiple of it)."""
    return K // K_STAGE if K > K_STAGE and K % K_STAGE == 0 else 1


def k_part(o: object, q: int) -> object:
    """An operand's copy of 1 / q of its K extent (K the columns of a K-major operand, else its rows)."""
    if q == 1:
        return o
    if o.kmajor:  # type: ignore[attr-defined]
        return dataclasses.replace(o, cols=o.cols // q)  # type: ignore[attr-defined,type-var]
    return dataclasses.replace(o, rows=o.rows // q, box_rows=min(o.box_rows, o.rows // q))  # type: ignore[attr-defined,type-var]


def k_offset(b: _Build, o: object, row0: ir.Value, col0: ir.Value, q: int) -> tuple[ir.Value, ir.Value]:
    """Sub-step `q`'s copy position of an operand split by `k_part`: its K coordinate moved by q parts."""
    if q == 0:
        return row0, col0
    if o.kmajor:  # type: ignore[attr-defined]
        return row0, b.elem(ir.ElemOp.ADD, col0, b.const(q * o.cols))  # type: ignore[attr-defined]
    return b.elem(ir.ElemOp.ADD, row0, b.const(q * o.rows)), col0  # type: ignore[attr-defined]


def operand(o: object, f: int) -> object:
    """B's operand for f tiles side by side: f times the columns (N contiguous: slabs), or f times the rows of
    a K-major B, its TMA boxes one tile's rows (a box never straddles two tiles)."""
    if o.kmajor:  # type: ignore[attr-defined]
        return dataclasses.replace(o, rows=o.rows * f, box_rows=min(o.rows, 256))  # type: ignore[attr-defined,type-var]
    return dataclasses.replace(o, cols=o.cols * f)  # type: ignore[attr-defined,type-var]


@dataclasses.dataclass(frozen=True, slots=True)
class Sub:
    """Tile j of a wide tile: the ops recomputing the user's scalar ops before the loop for it (`ops`, fresh
    values; `mapping`: the originals -> them), its column position `col` and whether it is in the grid (`live`)."""

    ops: tuple[object, ...]
    mapping: dict[int, ir.Value]
    col: ir.Value
    live: ir.Value | None


def rewrite_outside(k: g.GpuKernel, before: list[object], axis: int, f: int,
                    fresh: Fresh) -> tuple[list[object], ir.Value, dict[int, ir.Value]]:
    """`before` with the grid position read from the walk's wide tile: the column `f J` (J the wide tile's
    `block_id(axis)`), the row the walk's `block_id` (the grouped order of `block_order`, if any, dropped: the walk
    orders the tiles); the column's value; the old position values -> the new (for the loop and epilogue)."""
    from .rewrite import substitute

    pos = ids(k)
    b = _Build(fresh)
    new: dict[int, ir.Value] = {}
    col = None
    for a in sorted(set(pos.values())):
        got = b.i32("pid")
        b.ops.append(ir.BlockId(got, a))
        if a == axis:
            got = col = b.elem(ir.ElemOp.MUL, got, b.const(f), hint="pid")
        for vid, a2 in pos.items():
            if a2 == a:
                new[vid] = got
    assert col is not None
    kept = [op for op in before if not (isinstance(op, ir.BlockId) and op.result.id in pos)]
    out = [substitute(op, new) for op in kept]
    # every read of the position now reads the new values (ops that defined it are gone or dead)
    return [*b.ops, *out], col, new


def subtiles(outside: list[object], col0: ir.Value, axis: int, f: int, k: g.GpuKernel, fresh: Fresh) -> list[Sub]:
    """Tiles 1 .. f-1 of a wide tile: clones of `outside` (as `rewrite_outside` made it) whose column is
    f J + j, with whether it lies in the grid (the `&mut` partition's columns)."""
    from .attention_tiles import clone

    E = ir.ElemOp
    mut = max((p for p in k.tensor_params if p.mutable and p.tile_shape), key=lambda p: p.rank)
    assert mut.tile_shape is not None
    out = []
    for j in range(1, f):
        mapping: dict[int, ir.Value] = {}
        ops = clone(outside, fresh, mapping)
        col = mapping[col0.id]
        b = _Build(fresh)
        base = fresh.value(DType.I32, (), "pid")
        at = next(i for i, op in enumerate(ops) if g.results(op) == (col,))
        ops[at] = dataclasses.replace(ops[at], result=base)  # type: ignore[type-var]
        ops.insert(at + 1, ir.Elementwise(col, E.ADD, (base, b.const(j))))
        ops.insert(at + 1, b.ops[0])
        live = None
        if axis < mut.rank:
            lb = _Build(fresh)
            d = lb.i32("dim")
            lb.ops.append(ir.TensorDim(d, mut.name, axis))
            t = mut.tile_shape[axis]
            cols = lb.elem(E.DIV, lb.elem(E.ADD, d, lb.const(t - 1)), lb.const(t))
            live = lb.elem(E.LT, col, cols, dtype=DType.BOOL, hint="live")
            ops += lb.ops
        out.append(Sub(tuple(ops), mapping, col, live))
    return out


def b_copies(pb: _Build, o: object, tile_n: int, f: int, offsets: list[tuple[ir.Value, ir.Value]], desc: str,
             buf: ir.Value, stage: ir.Value, full: ir.Value, span: object) -> None:
    """The TMA copies of a wide B stage: tile j's (`offsets[j]`, its load's row and column) into its columns
    (slabs j N / 64 ..) or, K-major, its rows (j N ..)."""
    E = ir.ElemOp
    per = tile_n // o.elems if not o.kmajor else 1  # type: ignore[attr-defined]
    for j, (row0, col0) in enumerate(offsets):
        if o.kmajor:  # type: ignore[attr-defined]
            for slab in range(o.slabs):  # type: ignore[attr-defined]
                for rb in range(tile_n // o.box_rows):  # type: ignore[attr-defined]
                    r = row0 if rb == 0 else pb.elem(E.ADD, row0, pb.const(rb * o.box_rows))  # type: ignore[attr-defined]
                    c = col0 if slab == 0 else pb.elem(E.ADD, col0, pb.const(slab * o.elems))  # type: ignore[attr-defined]
                    part = (slab * o.rows + j * tile_n + rb * o.box_rows) * o.swizzle  # type: ignore[attr-defined]
                    pb.ops.append(g.TmaLoad(desc, (r, c), buf, stage, part, full, span))  # type: ignore[arg-type]
            continue
        for s in range(per):
            for rb in range(o.rows // o.box_rows):  # type: ignore[attr-defined]
                r = row0 if rb == 0 else pb.elem(E.ADD, row0, pb.const(rb * o.box_rows))  # type: ignore[attr-defined]
                c = col0 if s == 0 else pb.elem(E.ADD, col0, pb.const(s * o.elems))  # type: ignore[attr-defined]
                part = ((j * per + s) * o.rows + rb * o.box_rows) * o.swizzle  # type: ignore[attr-defined]
                pb.ops.append(g.TmaLoad(desc, (r, c), buf, stage, part, full, span))  # type: ignore[arg-type]


def epilogues(p: object, fin: ir.Value, subs: list[Sub], fresh: Fresh, layouts: dict[int, object],
              apart: set[int]) -> list[object]:
    """The user's epilogue once for each tile j of the wide accumulator `fin`: on its columns (`g.AccColumns`,
    the same warpgroups' layout `n` columns wide), tile j >= 1's ops cloned on its own position (`subs`) and run
    where it lies in the grid; their stores staged apart (the ring is live)."""
    from ..layouts import WgmmaAcc
    from .attention_tiles import clone
    from .rewrite import substitute

    W = p.widen  # type: ignore[attr-defined]
    res = p.loop.results[0]  # type: ignore[attr-defined]
    M, n = fin.shape[0], fin.shape[1] // W
    lay = layouts[fin.id]
    assert isinstance(lay, WgmmaAcc)
    sub_lay = WgmmaAcc(lay.warpgroups, lay.m_per_group, n)
    ep = [op for op in p.epilogue if not isinstance(op, ir.Yield)]  # type: ignore[attr-defined]
    out: list[object] = []
    for j in range(W):
        v = fresh.value(DType.F32, (M, n), "acc")
        layouts[v.id] = sub_lay
        if j == 0:
            ops = [substitute(op, {res.id: v}) for op in ep]
        else:
            ops = clone(ep, fresh, {res.id: v, **subs[j - 1].mapping})
        for op in ops:
            for r in g.results(op):
                if r.shape:
                    layouts[r.id] = sub_lay
            if isinstance(op, ir.Store):
                apart.add(op.value.id)
        body = [g.AccColumns(v, fin, j, W, p.loop.span), *ops]  # type: ignore[attr-defined]
        if j == 0:
            out += body
            continue
        sub = subs[j - 1]
        out += list(sub.ops)
        if sub.live is None:
            out += body
        else:
            out.append(ir.If((), sub.live, ir.Region((), (*body, ir.Yield(()))), ir.Region((), (ir.Yield(()),)),  # type: ignore[arg-type]
                             p.loop.span))  # type: ignore[attr-defined]
    return out


__all__ = ["K_STAGE", "WIDEN_DEFAULT", "Sub", "deep_ring", "epilogues", "axes", "b_copies", "column_axis", "factor", "ids",
           "k_offset", "k_part", "k_parts", "operand", "requested", "rewrite_outside", "subtiles"]
