"""Typing rules of the cross-block combine: `if last_block(axis) { .. }` and
`z.group()` (the ownership rules are `ownership/combine.py`), and of the
tile queue `for s in queue(axis)` (`ownership/queue.py`).

`last_block(axis)` is a `bool`; its axis is an integer literal 0, 1 or 2 (the
host reads it off the syntax to size the grid of the group's own tensors).
`z.group()` of a `&mut` parameter `z` with tile shape `[t0, .., tn]` is a
read-only tensor of the own tile's shape with `?` along the grouped axis: the
tiles of every block of the group, side by side. It is typed only inside the
`if` whose condition is `last_block(axis)` (`Fx.last_block` holds the axis).
"""

from __future__ import annotations

from tilelang.diagnostics.codes import kernel as K
from tilelang.diagnostics.codes import types as T
from tilelang.sema.coerce import settle
from tilelang.sema.context import CallCx, CheckCx
from tilelang.sema.kernel import check_tile_limits
from tilelang.sema.types import (
    BOOL,
    ERROR,
    F32,
    I32,
    Dim,
    RangeT,
    RefT,
    ScalarT,
    TensorT,
    TileT,
    Type,
    UntypedFloat,
    UntypedInt,
)
from tilelang.syntax import ast


def _literal_grid_axis(tcx: CheckCx, cx: CallCx, what: str, code: str) -> None:
    """The axis argument of `last_block`/`queue`: an integer literal 0, 1 or 2
    (the host reads it off the syntax to size the grid)."""
    e = cx.args[0]
    settle(tcx, e, I32)
    if not isinstance(e, ast.IntLit):
        tcx.emit(tcx.err(code, f"the axis of `{what}` must be an integer literal", e.span, "not a literal")
                 .with_help("write the grid axis as `0`, `1` or `2`"))
    elif not 0 <= e.value < 3:
        tcx.emit(tcx.err(T.AXIS_OUT_OF_RANGE, f"grid axis {e.value} is out of range", e.span,
                         "the grid has axes 0, 1, 2")
                 .with_help("use axis 0, 1 or 2"))


def rule_last_block(tcx: CheckCx, cx: CallCx) -> Type:
    _literal_grid_axis(tcx, cx, "last_block", K.LAST_BLOCK_PLACEMENT)
    return BOOL


def rule_queue(tcx: CheckCx, cx: CallCx) -> Type:
    """`queue(axis)` and the static walk `tiles(axis)`: a range of i32 tile
    indices (where it may stand is `ownership/queue.py`'s to say: E0412)."""
    _literal_grid_axis(tcx, cx, cx.name, K.QUEUE_PLACEMENT)
    _queue_axis_in_grid(tcx, cx)
    return RangeT(I32)


def _queue_axis_in_grid(tcx: CheckCx, cx: CallCx) -> None:
    """`queue(axis)` (`tiles(axis)`) along an axis the kernel's `&mut` tiles
    have: a grid axis past their rank holds one tile a row, so the walk would
    hand each block exactly its own tile (the author meant another axis)."""
    info = cx.fx.info
    e = cx.args[0]  # present: `_literal_grid_axis` read it
    if info is None or not isinstance(e, ast.IntLit) or not 0 <= e.value < 3:
        return
    ranks = [len(t.inner.shape) for t in info.param_types
             if isinstance(t, RefT) and t.mutable and isinstance(t.inner, TensorT) and t.inner.shape is not None]
    if ranks and e.value >= max(ranks):
        r = max(ranks)
        tcx.emit(tcx.err(T.AXIS_OUT_OF_RANGE, f"the kernel's grid has no axis {e.value} to "
                         f"{'queue' if cx.name == 'queue' else 'walk'} along",
                         e.span, f"its `&mut` tiles have {r} dimension{'s' if r != 1 else ''}")
                 .with_help(f"{'queue' if cx.name == 'queue' else 'walk'} along {'axis 0' if r == 1 else 'one of the grid axes ' + ', '.join(map(str, range(r)))} "
                            "(the axis whose tiles differ in cost), or partition the tensor with more dimensions"))


def rule_group(tcx: CheckCx, cx: CallCx) -> Type:
    r, rt = cx.recv, cx.recv_ty
    assert r is not None and rt is not None
    if not (isinstance(rt, RefT) and rt.mutable and isinstance(rt.inner, TensorT)):
        return tcx.emit(tcx.err(T.MISMATCHED_TYPES, "`group` needs a `&mut` tensor parameter", r.span,
                                f"this is `{rt}`")
                        .note("`z.group()` reads the tiles that the blocks of a group stored into `z`")
                        .with_help("call `.group()` on a `&mut` tensor parameter that every block stores before the region"))
    axis = cx.fx.last_block
    if axis is None:
        return tcx.emit(tcx.err(K.LAST_BLOCK_PLACEMENT, "`group` is only allowed inside `if last_block(axis) { .. }`",
                                cx.span, "outside the last block's region")
                        .note("the other blocks' tiles are complete only once the last block of the group "
                              "has arrived")
                        .with_help("move the read into `if last_block(axis) { .. }` at the end of the kernel"))
    t = rt.inner
    if t.shape is None or axis >= len(t.shape):
        return tcx.emit(tcx.err(T.AXIS_OUT_OF_RANGE, f"`{tcx.snippet(r)}` has no axis {axis} to group along",
                                cx.span, f"`last_block({axis})`")
                        .with_help("group along an axis the tensor has, or partition it with more dimensions"))
    shape = tuple(None if d == axis else s for d, s in enumerate(t.shape))
    return RefT(False, TensorT(t.dtype, shape)) if t.dtype is not None else ERROR


def rule_cluster_gather(tcx: CheckCx, cx: CallCx) -> Type:
    """`cluster_gather(x)` in a `#[cluster(..)]` kernel: a read-only
    `Tile<T, [C, ..x's shape]>` of every block's `x`, by rank in the cluster
    (C its blocks). Where it may stand is `ownership/cluster.py`'s (E0415)."""
    info = cx.fx.info
    shape3 = info.hints.get("cluster") if info is not None and info.is_kernel else None
    if shape3 is None:
        where = "a kernel without `#[cluster(..)]`" if info is not None and info.is_kernel else "outside a kernel's body"
        return tcx.emit(tcx.err(K.CLUSTER_PLACEMENT, "`cluster_gather` needs a kernel with `#[cluster(..)]`",
                                cx.span, f"in {where}")
                        .note("the blocks that exchange are the launch's thread-block clusters, whose shape "
                              "the kernel declares")
                        .with_help("put `#[cluster(x, y)]` on the kernel and call `cluster_gather` in its own body"))
    blocks = Dim.const(1)
    for d in shape3:
        blocks = blocks * (Dim.const(d) if isinstance(d, int) else Dim.var(d))
    e, ty = cx.args[0], cx.arg_tys[0]
    if isinstance(ty, UntypedInt | UntypedFloat):
        settle(tcx, e, I32 if isinstance(ty, UntypedInt) else F32)
        ty = I32 if isinstance(ty, UntypedInt) else F32
    if isinstance(ty, ScalarT):
        return TileT(ty.dtype, (blocks,))
    if isinstance(ty, TileT):
        shape = (blocks, *ty.shape)
        if not check_tile_limits(tcx, shape, cx.span, cx.fx.kernel_name):
            return ERROR
        return TileT(ty.dtype, shape)
    if ty is ERROR:
        return ERROR
    return tcx.emit(tcx.err(T.MISMATCHED_TYPES, "`cluster_gather` exchanges a tile or a scalar", e.span,
                            f"this is `{ty}`")
                    .with_help("load the data into a tile first"))
