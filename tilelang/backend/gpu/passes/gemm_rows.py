"""Row coarsening for the Hopper GEMM's split-K variant (`TILEC_GEMM_ROWS`: "1" by default, "0" off): the user's
16- or 32-row tiles computed R = 64 / BM at a time, as one m64 warpgroup's rows.

A wgmma computes 64 rows. A 32-row tile runs padded (`pipeline._plan`'s `pad`): A's box reads 64 rows, the
accumulator's rows past 32 (the next tile's rows of A, or TMA's zeros) are computed and thrown away, and the
next row tile reads the same B again. At M = 64 (a 4,096-wide layer's skinny GEMM: 64 tiles of 32 x 128 on 132
SMs, the split-K variant) B is the traffic: each B tile read by two CTAs' pieces (call 19, H100: 32x128x64 0.71x
cuBLAS where the 64-row tile of the same layer read 0.92x); a 16-row tile took sm_80's ring (0.54x). Here the walk
covers the grid in coarse tiles of R row tiles (`attention_tiles.launch_and_grid`'s `widen` on the row axis), the
position's row read as R J (`gemm_widen.rewrite_outside`), and the epilogue runs once on all 64 rows: its stores
write the R tiles' rows (the store's row offset is the tile's, J R BM), every other value of it row-local. An
accumulator row depends on its own row of A only, summed in the same k-steps and order: the user tiles' values
bit for bit.

The other way round, a tile taller than the launch's output (128 x 128 tiles over M = 64 rows, call 19: 0.66x
where the 64-row tile read 0.92x): the first variant asks (`GpuKernel.short`, `facts.Short` on the output's
rows, at most BM / 2) and the variant for such a launch computes only those rows (`shrinkable`, `pipeline._plan`'s
`shrink`: A's box, the accumulator and the epilogue's values and row loads of r rows), where every store is the
output's own tile: its rows past r are past the output's edge, and the epilogue is row-local.

Coarsening is taken where A's row offset is `block_id(axis) * BM`, every store is to the `&mut` tensor whose
partition is the grid (a coarse tile's row tiles past the grid are past its edge; another tensor's rows there
would be written: hrev18's review) and nothing else reads that axis but the stores' row offsets
(B, the loop's bounds, the epilogue's loads and values: a per-row-tile bias would read tile R J's row for all R),
no epilogue load or `arange` has a row per accumulator row (`AccLoad`, `AccIndex` along M), nothing reads
`num_blocks`; only in the split-K variant (`TensorFacts.few_tiles`), whose walk computes its grid (the launch's
is the user's). Other launches of such a kernel keep the padded tile (32 rows) or sm_80's ring (16 rows).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from tilelang.ir import nodes as ir

from .. import nodes as g
from . import switches
from .context import Fresh, PassContext
from .gemm_widen import _defs, axes, ids


def enabled() -> bool:
    """`TILEC_GEMM_ROWS`: "1" (unset) or "0"."""
    want = switches.mode("TILEC_GEMM_ROWS", "1", ("0", "1"))
    return want == "1"


def _start(v: ir.Value, defs: dict[int, object], pos: dict[int, int], bm: int) -> int | None:
    """The grid axis a where `v` is `block_id(a) * bm` (either order), else None."""
    op = defs.get(v.id)
    if not (isinstance(op, ir.Elementwise) and op.op is ir.ElemOp.MUL and len(op.operands) == 2):
        return None
    for x, c in (op.operands, op.operands[::-1]):
        cd = defs.get(c.id)
        if x.id in pos and isinstance(cd, ir.Const) and not cd.result.shape and cd.value == bm:
            return pos[x.id]
    return None


def row_axis(k: g.GpuKernel, loop: ir.For, a: ir.Load, a_kmajor: bool, b: ir.Load, epilogue: list[object],
             bm: int) -> int | None:
    """The grid axis of the user's row tiles where they may be computed several at a time (see the module), or
    None."""
    defs = _defs(k)
    pos = ids(k)
    ax = _start(a.offsets[0 if a_kmajor else 1], defs, pos, bm)
    mut = max((p for p in k.tensor_params if p.mutable and p.tile_shape), key=lambda p: p.rank, default=None)
    if ax is None or any(isinstance(op, ir.NumBlocks) for op in g.walk(k.source.body)) or mut is None \
            or mut.rank != 2 or mut.tile_shape is None or mut.tile_shape[0] != bm:
        return None

    def free(vs: list[ir.Value]) -> bool:
        got = axes(k, vs, defs)
        return got is not None and ax not in got

    if not free(list(b.offsets)) or not free([loop.lower, loop.upper, loop.step]):
        return None
    for op in epilogue:
        if isinstance(op, ir.Store):  # (the grid's own tensor: a row tile past its grid is past its edge)
            if op.tensor != mut.name or _start(op.offsets[0], defs, pos, bm) != ax or not free(list(op.offsets[1:])):
                return None
        elif isinstance(op, g.AccLoad):
            if op.dims[0] is not None or not free(list(op.load.offsets)):
                return None
        elif isinstance(op, g.AccIndex) and op.dim == 0:  # (a row's index in its user tile, not in the 64)
            return None
        elif g.results(op) and g.results(op)[0].shape and not free([v for v in g.operands(op) if not v.shape]):
            return None
    return ax


def few(k: g.GpuKernel, ctx: PassContext) -> bool:
    """Whether this variant is the split-K walk's (`gemm_split.requested`, with `TensorFacts.few_tiles` under
    "auto"): where the row tiles may be coarsened."""
    from . import gemm_split

    mut = max((p for p in k.tensor_params if p.mutable and p.tile_shape), key=lambda p: p.rank, default=None)
    want = gemm_split.requested()
    return mut is not None and (want == "1" or (want == "auto" and ctx.fact(mut.name).few_tiles))


def ask(k: g.GpuKernel, ctx: PassContext, plans: Callable[[g.GpuKernel, PassContext], list[Any]]) -> g.GpuKernel:
    """`k`, a 16-row GEMM the pipeline refused (sm_80's ring runs it), with the split-K variant's request where
    that variant would take it with coarse row tiles (`plans`: `pipeline.hopper_plans`; the launch's grid
    decides, `KernelABI.few`); else `k`."""
    from . import gemm_split

    mut = max((p for p in k.tensor_params if p.mutable and p.tile_shape), key=lambda p: p.rank, default=None)
    if (mut is None or not ctx.has_wgmma or ctx.fact(mut.name).few_tiles or gemm_split.requested() != "auto"
            or not enabled() or "stages" in k.source.hints
            or not any(isinstance(op, ir.Mma | g.DotOp) and op.a.shape[0] == 16 for op in g.walk(k.body))):
        return k
    facts = {**ctx.facts, mut.name: dataclasses.replace(ctx.fact(mut.name), few_tiles=True)}
    got = plans(k, dataclasses.replace(ctx, facts=facts, notes=[]))
    return dataclasses.replace(k, few=request(mut.name, got[0].row_axis, got[0].rows)) if got and got[0].rows > 1 else k


def request(tensor: str, axis: int, rows: int) -> str:
    """`GpuKernel.few` of a kernel whose split-K variant coarsens its row tiles: "tensor:axis:R", the runtime
    counting the launch's tiles R row tiles as one along the axis (`facts.few_tiles`)."""
    return f"{tensor}:{axis}:{rows}"


def shrinkable(k: g.GpuKernel, epilogue: list[object], bm: int) -> str | None:
    """The `&mut` tensor whose rows bound every stored row of a `bm`-row tile (each store is its own tile's,
    row offset `block_id(0) * bm`), or None. Where a launch's tensor has at most r <= bm / 2 rows (one row tile,
    `TensorFacts.rows_at_most`), the tile's rows past r are past every store's edge: the pipeline computes r
    rows (`pipeline._plan`'s `shrink`; the epilogue is row-local, A's rows past r feed only those rows)."""
    mut = max((p for p in k.tensor_params if p.mutable and p.tile_shape), key=lambda p: p.rank, default=None)
    if mut is None or mut.rank != 2 or mut.tile_shape is None or mut.tile_shape[0] != bm:
        return None
    defs, pos = _defs(k), ids(k)
    stores = [op for op in epilogue if isinstance(op, ir.Store)]
    if not stores or any(op.tensor != mut.name or _start(op.offsets[0], defs, pos, bm) != 0 for op in stores):
        return None
    return mut.name


def epilogue(ops: list[object], bm: int, rows: int, fresh: Fresh) -> list[object]:
    """The epilogue's ops on `rows` rows of the accumulator: each [bm, N] value now [rows, N] (fresh values; a
    load per row its first `rows` rows; the caller substitutes the loop's result, and gives the new values their
    layout)."""
    from .rewrite import substitute

    mapping: dict[int, ir.Value] = {}
    out: list[object] = []
    for op in ops:
        op = substitute(op, mapping)
        res = g.results(op)
        if res and len(res[0].shape) == 2 and res[0].shape[0] == bm:
            old = res[0]
            new = fresh.value(old.dtype, (rows, old.shape[1]), old.hint)
            mapping[old.id] = new
            changes: dict[str, object] = {"result": new}
            if isinstance(op, g.AccLoad) and op.dims[0] is not None:  # (its tile's rows along that dim)
                ld = op.load
                shape = list(ld.result.shape)
                shape[op.dims[0]] = rows
                changes["load"] = dataclasses.replace(ld, result=fresh.value(ld.result.dtype, tuple(shape), ld.result.hint))
            op = dataclasses.replace(op, **changes)  # type: ignore[type-var]
        out.append(op)
    return out


__all__ = ["ask", "enabled", "epilogue", "few", "request", "row_axis", "shrinkable"]
