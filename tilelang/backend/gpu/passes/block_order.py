"""Pass `block_order`: grouped block order for tensor-core kernels (L2 reuse).

CUDA starts blocks in launch order, x fastest. A GEMM-like kernel whose
block (i, j) reads row block i of A and column block j of B then walks down
a whole column of A for each j, and A is read again from memory for every j.
In grouped order, consecutive launches cover a group of `GROUP_M` rows of
blocks column by column, so the blocks that run together share their A and
B tiles in L2 (Triton's "super-grouping").

The pass rewrites every `block_id 0` / `block_id 1` read into the grouped
(i, j) computed from the launch position with scalar ops: the map is a
bijection of the grid, so each logical block still runs exactly once and
stores the tile the interpreter's block (i, j) stores. It applies to 2-D
grids of kernels with a tensor-core dot inside a loop, no device `print`
(whose records are ordered by block) and no waiting `last_block` arrival
(`arrive_wait`: its waiter is the group's last `%ctaid`).
"""

from __future__ import annotations

import dataclasses

from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

from .. import nodes as g
from .context import Fresh, PassContext
from .rewrite import substitute_region

GROUP_M = 8


def _wants_grouping(k: g.GpuKernel) -> bool:
    if k.grid_rank != 2:
        return False
    ops = list(g.walk(k.body))
    if k.source.walk >= 0 or any(isinstance(op, ir.Print | ir.QueuePull) for op in ops):  # a queue's (a walk's) rows are its grid's
        return False
    if k.source.arrive_wait and any(isinstance(op, ir.LastBlock) for op in ops):
        # the waiting arrival elects its block by `%ctaid` and needs it last in its group in launch order (hrev22:
        # grouped, some groups had no waiter and some two, polling for one arrival too many: a hang)
        return False
    in_loop = [op for loop in ops if isinstance(loop, ir.For | ir.While | g.WarpSpecialize)
               for op in g.walk(_first_region(loop))]
    return any(isinstance(op, g.DotOp) and op.engine != "fma" for op in in_loop)


def _first_region(op: object) -> ir.Region:
    return g.regions(op)[-1]


def block_order(k: g.GpuKernel, ctx: PassContext) -> g.GpuKernel:
    if not _wants_grouping(k):
        return k
    fresh = Fresh(k.next_id)
    i32 = DType.I32
    ops: list[object] = []

    def val(hint: str = "") -> ir.Value:
        return fresh.value(i32, (), hint)

    def emit(op_kind: ir.ElemOp, *xs: ir.Value, hint: str = "") -> ir.Value:
        r = val(hint)
        ops.append(ir.Elementwise(r, op_kind, xs))
        return r

    def const(c: int) -> ir.Value:
        r = val()
        ops.append(ir.Const(r, c))
        return r

    E = ir.ElemOp
    x, y, nx, ny = val("launch_x"), val("launch_y"), val(), val()
    ops += [ir.BlockId(x, 0), ir.BlockId(y, 1), ir.NumBlocks(nx, 0), ir.NumBlocks(ny, 1)]
    # pid = y * nx + x (launch order); group = pid / (G * ny); first = group * G;
    # size = min(nx - first, G); i = first + pid % size; j = (pid % (G * ny)) / size
    G = const(GROUP_M)
    pid = emit(E.ADD, emit(E.MUL, y, nx), x)
    per_group = emit(E.MUL, G, ny)
    first = emit(E.MUL, emit(E.DIV, pid, per_group), G)
    size = emit(E.MINIMUM, emit(E.SUB, nx, first), G)
    i = emit(E.ADD, first, emit(E.REM, pid, size), hint="pid")
    j = emit(E.DIV, emit(E.REM, pid, per_group), size, hint="pid")

    mapping: dict[int, ir.Value] = {}
    kept: list[object] = []
    for op in k.body.ops:
        if isinstance(op, ir.BlockId) and op.axis in (0, 1):
            mapping[op.result.id] = i if op.axis == 0 else j
            continue
        kept.append(op)
    # block_id reads inside nested regions
    for op in g.walk(k.body):
        if isinstance(op, ir.BlockId) and op.axis in (0, 1) and op.result.id not in mapping:
            mapping[op.result.id] = i if op.axis == 0 else j
    body = substitute_region(ir.Region(k.body.args, tuple(ops + kept)), mapping)  # type: ignore[arg-type]
    body = _drop_block_ids(body, set(mapping))
    return dataclasses.replace(k, body=body, next_id=fresh.next, grouped=(i, j))


def _drop_block_ids(r: ir.Region, dead: set[int]) -> ir.Region:
    from .rewrite import map_ops

    return map_ops(r, lambda op: [] if isinstance(op, ir.BlockId) and op.result.id in dead else [op])


__all__ = ["GROUP_M", "block_order"]
