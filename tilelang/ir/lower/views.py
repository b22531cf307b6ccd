"""Tensor parameters and their partitions: loads and stores of tiles.

A `&mut` parameter's own tile loads and stores at the block's offsets; a
`&` parameter with a static shape loads whole; `x.partition([..])` inside a
kernel gives a view whose tiles are loaded and stored by tile index
(`num_tiles` per axis). A view of a `&mut` parameter is nested: its tiles are
local to the own tile and a store is masked to stay inside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tilelang.diagnostics.model import ICE
from tilelang.ir import nodes as ir
from tilelang.ir.lower.context import LowerCx
from tilelang.ir.lower.fold import convert_const
from tilelang.dtypes import DType
from tilelang.ir.lower.values import I32, UNIT, ArrayVal, CVal, StoreShape, TensorRef, Unsupported, ViewRef
from tilelang.lastblock import region
from tilelang.source import Span
from tilelang.syntax import ast


def refuse(cx: LowerCx, span: Span, what: str) -> None:
    """Defence in depth: an access the ownership checker must have refused
    reached the lowering. That is a bug in tilec (an internal error), never
    code to emit: a store through a `&` parameter, a load of a `&mut`
    parameter outside the block's own tile."""
    if cx.defend:
        raise ICE(f"lowering `{cx.decl.name.name}`: {what} (source offset {span.start}) passed "
                  "the ownership checker, which must refuse it")


def tensor_method(cx: LowerCx, t: TensorRef, name: str, vals: list[Any], e: ast.MethodCall) -> Any:
    sp = e.span
    p = t.param
    if t.group is not None or name == "group":
        return _group_method(cx, t, name, vals, sp)
    if name == "load" and not vals:
        if t.own is None or p.tile_shape is None:
            # a `&` tensor with a static shape (`g: &Tensor<f32, [N]>`): the
            # checker allows loading all of it as one tile
            if p.dims and all(isinstance(d, int) and not isinstance(d, bool) for d in p.dims):
                zero = [cx.b.const(0, I32, span=sp) for _ in p.dims]
                return cx.b.load(p.name, zero, tuple(int(d) for d in p.dims), span=sp)  # type: ignore[arg-type]
            raise Unsupported(sp, "`load()` without an index on a `&` tensor")
        return cx.b.load(p.name, t.own, p.tile_shape, span=sp, hint=f"{p.name}_tile")
    if name == "store" and len(vals) == 1:
        if t.own is None or p.tile_shape is None:
            refuse(cx, sp, f"a store through `&` parameter `{p.name}`")
            raise Unsupported(sp, "`store` to a `&` tensor")
        tile = _stored(cx, vals[0], p, p.tile_shape, sp)
        cx.b.store(p.name, t.own, tile, span=sp)
        return UNIT
    if name == "load_like":
        other = cx.tensor_arg(vals[0], sp)
        if other.own is None or other.param.tile_shape is None:
            raise Unsupported(sp, "`load_like` of a tensor that is not a `&mut` parameter")
        if other.param.rank != p.rank:
            raise Unsupported(sp, "`load_like` between tensors of different ranks")
        if t.own is not None and p.tile_shape != other.param.tile_shape:
            refuse(cx, sp, f"a load of `&mut` parameter `{p.name}` outside its own tile "
                           f"({list(other.param.tile_shape)} at `{other.param.name}`'s tile, "
                           f"its own is {list(p.tile_shape or ())})")
        return cx.b.load(p.name, other.own, other.param.tile_shape, span=sp)
    if name == "shape":
        if t.own is not None and p.tile_shape is not None:
            return ArrayVal(tuple(CVal(d, I32) for d in p.tile_shape))  # a `&mut` param is its own tile
        static = [p.dims[a] if a < len(p.dims) else None for a in range(p.rank)]
        return ArrayVal(tuple(
            CVal(int(d), I32) if isinstance(d, int) and not isinstance(d, bool)
            else cx.b.tensor_dim(p.name, axis, span=sp)
            for axis, d in enumerate(static)))
    if name == "partition":
        tshape = cx.ints(vals[0], sp)
        if len(tshape) != p.rank:
            raise Unsupported(sp, f"a rank-{len(tshape)} partition of a rank-{p.rank} tensor")
        return ViewRef(t, tshape, nested=t.own is not None)
    raise Unsupported(sp, f"method `{name}` on a tensor parameter")


def _group_method(cx: LowerCx, t: TensorRef, name: str, vals: list[Any], sp: Span) -> Any:
    """`z.group()` and what a group's tensor offers: `shape()`, `partition`."""
    p = t.param
    if name == "group":
        found = region(cx.decl)
        if t.own is None or p.tile_shape is None or found is None or t.group is not None:
            refuse(cx, sp, f"`{p.name}.group()` outside `if last_block(..)` or of a `&` tensor")
            raise Unsupported(sp, "`group()` here")
        axis = found[1]
        base = tuple(cx.b.const(0, I32, span=sp) if d == axis else o for d, o in enumerate(t.own))
        return TensorRef(p, base, axis)
    assert p.tile_shape is not None
    if name == "shape":
        return ArrayVal(tuple(cx.b.tensor_dim(p.name, d, span=sp) if d == t.group else CVal(n, I32)
                              for d, n in enumerate(p.tile_shape)))
    if name == "partition":
        tshape = cx.ints(vals[0], sp)
        if len(tshape) != p.rank:
            raise Unsupported(sp, f"a rank-{len(tshape)} partition of a rank-{p.rank} tensor")
        return ViewRef(t, tshape, nested=False)
    raise Unsupported(sp, f"method `{name}` on a group's tensor (`.group()`)")


def view_method(cx: LowerCx, v: ViewRef, name: str, vals: list[Any], e: ast.MethodCall) -> Any:
    sp = e.span
    p = v.tensor.param
    group = v.tensor.group
    if group is not None and name == "num_tiles":
        axis = cx.const_int(vals[0], sp)
        assert p.tile_shape is not None
        if axis != group:
            return CVal(-(-p.tile_shape[axis] // v.tile[axis]), I32)
    elif group is not None and name in ("load", "load_padded"):
        return _group_load(cx, v, name, vals, sp)
    if name == "num_tiles":
        axis = cx.const_int(vals[0], sp)
        if v.nested:
            assert p.tile_shape is not None
            return CVal(-(-p.tile_shape[axis] // v.tile[axis]), I32)
        if p.dims and p.dims[axis] is not None:
            return CVal(-(-int(p.dims[axis]) // v.tile[axis]), I32)  # type: ignore[arg-type]
        dim = cx.b.tensor_dim(p.name, axis, span=sp)
        t = cx.b.const(v.tile[axis], I32, span=sp)
        return cx.b.div(cx.b.add(dim, cx.b.const(v.tile[axis] - 1, I32, span=sp), span=sp),
                        t, span=sp)
    if name in ("load", "load_padded", "store", "prefetch"):
        idx_arg = vals[1] if name == "store" else vals[0]
        raw = list(idx_arg.elems) if isinstance(idx_arg, ArrayVal) else [idx_arg]
        if len(raw) != p.rank:
            raise Unsupported(sp, f"{len(raw)} tile indices for a rank-{p.rank} tensor")
        offs = [tile_offset(cx, i, t, sp) for i, t in zip(raw, v.tile, strict=True)]
        mask = None
        if v.nested and name == "prefetch":
            # a hint: the tile at the own tile's offset (the GPU clips it to the tensor)
            assert v.tensor.own is not None
            offs = [cx.b.add(o, base, span=sp) for o, base in zip(offs, v.tensor.own, strict=True)]
        elif v.nested:
            own = v.tensor.own
            assert own is not None and p.tile_shape is not None
            mask = _inside_own(cx, offs, v.tile, p.tile_shape, sp)
            offs = [cx.b.add(o, base, span=sp) for o, base in zip(offs, own, strict=True)]
        if name == "store":
            if not v.nested:
                refuse(cx, sp, f"a store through a view of `&` parameter `{p.name}`")
            tile = _stored(cx, vals[0], p, v.tile, sp)
            cx.b.store(p.name, offs, tile, mask=mask, span=sp)
            return UNIT
        if name == "prefetch":
            cx.b.prefetch(p.name, offs, v.tile, span=sp)
            return UNIT
        pad = None
        if name == "load_padded":
            pad = cx.mat(vals[1], p.dtype, sp)
        return cx.b.load(p.name, offs, v.tile, mask=mask, padding=pad, span=sp)
    raise Unsupported(sp, f"method `{name}` on a tensor partition")


_I32_MAX = (1 << 31) - 1
U32 = DType.U32


def _stored(cx: LowerCx, value: Any, p: Any, tile: tuple[int, ...], sp: Span) -> ir.Value:
    """`value` as a tile of `tile`, the destination of a store into `p`: broadcast where it may be (a size-1
    dimension), else StoreShape (E0218: a device function's `[?]` parameter met a kernel's smaller tile)."""
    v = cx.mat(value, p.dtype, sp)
    shape = tuple(v.shape)
    if shape != tile and not (len(shape) <= len(tile) and all(
            s == 1 or s == d for s, d in zip(reversed(shape), reversed(tile), strict=False))):
        raise StoreShape(sp, p.name, shape, tile)
    return cx.to_shape(v, tile, sp)


def past_offset(t: int) -> int:
    """An offset for a tile of `t` elements wholly before a tensor's start, a
    multiple of `t` (`-(2^31 // t) * t`): where a tile index's offset does not
    fit `i32` the tile is wholly outside the tensor (a dimension is below 2^31)."""
    return -((1 << 31) // t) * t


def tile_offset(cx: LowerCx, i: Any, t: int, sp: Span) -> ir.Value:
    """The element offset `i * t` of tile index `i` along an axis of tile size
    `t`, in `i32`. An index whose product does not fit `i32` names a tile
    wholly outside the tensor (a dimension is below 2^31): its offset is
    `past_offset(t)`, so it reads zeros or the padding and a store is dropped.
    The product wrapped: `p.load([4194305])` of tiles of 1024 read tile 1
    (hrev16: constants), and so did a run-time index from a tensor's data or
    a scalar parameter (hrev17). A run-time index whose bounds keep the
    product inside `i32` (`ranges`: the grid's `block_id`, a `for` variable
    over `num_tiles`, ..) is multiplied as it is; any other is tested first,
    one compare and one select on a scalar:
    `where(i <= (2^31 - 1) / t, i, past) * t` (an unsigned compare where it
    may also be too negative: a negative index's tile is outside anyway)."""
    if isinstance(i, CVal) and isinstance(i.value, int) and not isinstance(i.value, bool):
        off = i.value * t
        return cx.b.const(off if -_I32_MAX - 1 <= off <= _I32_MAX else past_offset(t), I32, span=sp)
    x = cx.as_index(i, sp)
    return cx.b.mul(_guarded(cx, x, t, sp), cx.b.const(t, I32, span=sp), span=sp)


def _guarded(cx: LowerCx, x: ir.Value, t: int, sp: Span) -> ir.Value:
    """`x`, or where `x * t` may leave `i32`, `x` tested against the tiles that
    fit: past them (either way) the index of `past_offset(t)`'s tile."""
    hi, lo = _I32_MAX // t, -((_I32_MAX + 1) // t)
    known = cx.ranges.of(x)
    assert known is not None
    if lo <= known[0] and known[1] <= hi:
        return x
    b = cx.b
    if lo <= known[0]:
        ok = b.elementwise(ir.ElemOp.LE, x, b.const(hi, I32, span=sp), span=sp)
    elif known[1] <= hi:
        ok = b.elementwise(ir.ElemOp.GE, x, b.const(lo, I32, span=sp), span=sp)
    else:
        ok = b.elementwise(ir.ElemOp.LE, b.cast(x, U32, span=sp), b.const(hi, U32, span=sp), span=sp)
    return b.elementwise(ir.ElemOp.WHERE, ok, x, b.const(past_offset(t) // t, I32, span=sp), span=sp)


def _group_load(cx: LowerCx, v: ViewRef, name: str, vals: list[Any], sp: Span) -> ir.Value:
    """A tile of a group's tensor: at the group's first tile plus the index,
    masked to the own tile's extent on every axis but the grouped one (there
    the group spans the whole tensor: its blocks cover it)."""
    p, base, axis = v.tensor.param, v.tensor.own, v.tensor.group
    assert base is not None and axis is not None and p.tile_shape is not None
    raw = list(vals[0].elems) if isinstance(vals[0], ArrayVal) else [vals[0]]
    if len(raw) != p.rank:
        raise Unsupported(sp, f"{len(raw)} tile indices for a rank-{p.rank} tensor")
    local: list[ir.Value] = []
    checks: list[int] = []
    whole: list[int] = []  # axes whose view tiles are wholly inside the own tile or wholly outside
    for d, (i, t) in enumerate(zip(raw, v.tile, strict=True)):
        if isinstance(i, CVal) and isinstance(i.value, int) and not isinstance(i.value, bool):
            off = i.value * t
            local.append(tile_offset(cx, i, t, sp))
            if d != axis and not (off >= 0 and off + t <= p.tile_shape[d]):
                checks.append(d)
        else:
            local.append(tile_offset(cx, i, t, sp))
            if d != axis:
                (whole if p.tile_shape[d] % t == 0 else checks).append(d)
    mask = _inside_own(cx, local, v.tile, p.tile_shape, sp, only=checks) if checks else None
    offs = [cx.b.add(o, b, span=sp) for o, b in zip(local, base, strict=True)]
    for d in whole:
        # a tile outside the own tile's extent reads only padding: its offset
        # moves to the tensor's end (a scalar test, no mask of the tile)
        lo = cx.b.elementwise(ir.ElemOp.GE, local[d], cx.b.const(0, I32, span=sp), span=sp)
        hi = cx.b.lt(local[d], cx.b.const(p.tile_shape[d], I32, span=sp), span=sp)
        ok = cx.b.elementwise(ir.ElemOp.AND, lo, hi, span=sp)
        offs[d] = cx.b.elementwise(ir.ElemOp.WHERE, ok, offs[d], cx.b.tensor_dim(p.name, d, span=sp), span=sp)
    pad = cx.mat(vals[1], p.dtype, sp) if name == "load_padded" else None
    return cx.b.load(p.name, offs, v.tile, mask=mask, padding=pad, span=sp)


def _inside_own(cx: LowerCx, local: Sequence[ir.Value], tile: tuple[int, ...],
                own: tuple[int, ...], span: Span, only: Sequence[int] | None = None) -> ir.Value:
    """Mask of the elements of a nested tile at `local` offsets that fall
    inside the own tile (a nested store never leaves the block's tile);
    `only`: test these axes only."""
    mask: ir.Value | None = None
    for d, (o, n) in enumerate(zip(local, own, strict=True)):
        if only is not None and d not in only:
            continue
        pos = cx.b.add(cx.to_shape(o, tile, span), cx.iota(tile, d, span), span=span)
        lo = cx.b.elementwise(ir.ElemOp.GE, pos, cx.b.const(0, I32, tile, span=span),
                              span=span)
        hi = cx.b.elementwise(ir.ElemOp.LT, pos, cx.b.const(n, I32, tile, span=span),
                              span=span)
        m = cx.b.elementwise(ir.ElemOp.AND, lo, hi, span=span)
        mask = m if mask is None else cx.b.elementwise(ir.ElemOp.AND, mask, m, span=span)
    assert mask is not None
    return mask
