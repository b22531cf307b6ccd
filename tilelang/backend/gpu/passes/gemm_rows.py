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

Taken where A's row offset is `block_id(axis) * BM` and nothing else reads that axis but the stores' row offsets
(B, the loop's bounds, the epilogue's loads and values: a per-row-tile bias would read tile R J's row for all R),
no epilogue load has a row per accumulator row (`AccLoad` along M), nothing reads `num_blocks`; only in the
split-K variant (`TensorFacts.few_tiles`), whose walk computes its grid (the launch's is the user's). Other
launches of such a kernel keep the padded tile (32 rows) or sm_80's ring (16 rows).
"""

from __future__ import annotations

import dataclasses

from tilelang.ir import nodes as ir

from .. import nodes as g
from . import switches
from .context import Fresh
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
    if ax is None or any(isinstance(op, ir.NumBlocks) for op in g.walk(k.source.body)):
        return None

    def free(vs: list[ir.Value]) -> bool:
        got = axes(k, vs, defs)
        return got is not None and ax not in got

    if not free(list(b.offsets)) or not free([loop.lower, loop.upper, loop.step]):
        return None
    for op in epilogue:
        if isinstance(op, ir.Store):
            if _start(op.offsets[0], defs, pos, bm) != ax or not free(list(op.offsets[1:])):
                return None
        elif isinstance(op, g.AccLoad):
            if op.dims[0] is not None or not free(list(op.load.offsets)):
                return None
        elif g.results(op) and g.results(op)[0].shape and not free([v for v in g.operands(op) if not v.shape]):
            return None
    return ax


def request(tensor: str, axis: int, rows: int) -> str:
    """`GpuKernel.few` of a kernel whose split-K variant coarsens its row tiles: "tensor:axis:R", the runtime
    counting the launch's tiles R row tiles as one along the axis (`facts.few_tiles`)."""
    return f"{tensor}:{axis}:{rows}"


def epilogue(ops: list[object], bm: int, rows: int, fresh: Fresh) -> list[object]:
    """The epilogue's ops on all `rows` rows of the accumulator: each [bm, N] value now [rows, N] (fresh values;
    the caller substitutes the loop's result, and gives the new values their layout)."""
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
            op = dataclasses.replace(op, result=new)  # type: ignore[type-var]
        out.append(op)
    return out


__all__ = ["enabled", "epilogue", "request", "row_axis"]
