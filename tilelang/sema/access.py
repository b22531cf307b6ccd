"""The typing rules of the builtins that reach tensor memory: loads and
stores through a kernel's tensor parameters and views (`load`,
`load_padded`, `store`, `load_like`, `prefetch`, `num_tiles`, `partition`) and the raw
accesses allowed in `unsafe` (`atomic_*`, `store_unchecked`). `rules.RULES`
lists them with the other builtins' rules."""

from __future__ import annotations

from typing import Any

from tilelang.diagnostics.codes import names as N
from tilelang.diagnostics.codes import types as T
from tilelang.dtypes import DType
from tilelang.sema.coerce import coerce, mismatch, settle
from tilelang.sema.context import CallCx, CheckCx, plural
from tilelang.sema.kernel import check_tile_limits
from tilelang.sema.ruleargs import axis_arg, shape_arg, shape_typed
from tilelang.sema.split_habits import triton_load_help
from tilelang.sema.typeops import deref, elem_is_float, numel
from tilelang.sema.types import (
    ERROR,
    F32,
    I32,
    UNIT,
    Dim,
    PartitionT,
    RefT,
    ScalarT,
    Shape,
    ShapeT,
    TensorT,
    TileT,
    TileViewT,
    Type,
    UntypedFloat,
    UntypedInt,
    broadcast_shapes,
    divisibility_gap,
    divisibility_help,
    generic_constant_gap,
    generic_constant_help,
    elem_of,
    shape_str,
)
from tilelang.sema.widen import widened_sum_help
from tilelang.syntax import ast


def _param_tensor(tcx: CheckCx, cx: CallCx, e: ast.Expr, t: Type, what: str) -> TensorT | None:
    inner = deref(t)
    if isinstance(inner, TensorT):
        return inner
    tcx.emit(tcx.err(T.MISMATCHED_TYPES, "mismatched types", e.span, f"expected {what}, found `{t}`")
             .with_help("pass a tensor parameter of the kernel, e.g. `&out`"))
    return None


_WIDE_INDEX = frozenset((DType.I64, DType.U32, DType.U64))


def _wide_index(tcx: CheckCx, e: ast.Expr, kind: str = "a tile index") -> bool:
    """An index of `i64`, `u32` or `u64` (Triton's int64 offsets): index arithmetic
    in a kernel is `i32`, so it would be cut to its low 32 bits (tile 2^32 + 1 read
    tile 1) on both engines; refused, with the cast that says so. `kind`: what the
    index counts (an atomic's or `store_unchecked`'s counts elements, round 27)."""
    if not isinstance(e, ast.ArrayExpr):
        return False
    for x in e.elems:
        t = tcx.program.types.get(x)
        if isinstance(t, ScalarT) and t.dtype in _WIDE_INDEX:
            tcx.emit(tcx.err(T.MISMATCHED_TYPES, f"{kind} is an `i32`, found `{t}`", x.span,
                             f"this is `{t}`")
                     .note("index arithmetic in kernels is `i32` (a tensor dimension is below 2^31): a wider "
                           "index would be cut to its low 32 bits")
                     .with_help(f"cast it, where its value fits: `{tcx.cast_snippet(x)} as i32`"))
            return True
    return False


def _check_index(tcx: CheckCx, cx: CallCx, e: ast.Expr, rank: int | None, what: str,
                 kind: str = "a tile index") -> bool:
    t = shape_typed(tcx, e, "an index `[i, ..]`")
    if _wide_index(tcx, e, kind):
        return False
    if t is None:
        return False
    if rank is not None and t.rank is not None and t.rank != rank:
        tcx.emit(tcx.err(T.RANK_MISMATCH, f"{what} has {plural(rank, 'dimension')} but the index has "
                         f"{t.rank}", e.span, f"expected {plural(rank, 'index')}")
                 .with_help(f"give one index per dimension ({plural(rank, 'index')})"))
        return False
    return True


def _indexed_tensor(tcx: CheckCx, cx: CallCx) -> tuple[TensorT, int | None, ast.Expr, Type] | None:
    """The `&x` tensor parameter, its rank, and the value and its type for
    `op(&x, [i, ..], value)` (the raw-access builtins), after checking the
    index; None on an error."""
    t = _param_tensor(tcx, cx, cx.args[0], cx.arg_tys[0], "a tensor parameter `&x`")
    if t is None:
        return None
    rank = len(t.shape) if t.shape is not None else None
    if not _check_index(tcx, cx, cx.args[1], rank, f"`{tcx.snippet(cx.args[0])}`", "an element index"):
        return None
    return t, rank, cx.args[2], cx.arg_tys[2]


def _element_loop(tcx: CheckCx, cx: CallCx, x: ast.Expr, t: TileT) -> str:
    """The scatter's other form, for a tensor too long for a one-hot (round 30: COO's scatter-add into a `?` row
    count, where the help offered only the one-hot): one atomic an element of a 1-D tile of indices, each index
    and value picked out by position."""
    idx, val, ten = tcx.snippet(x) or "", tcx.snippet(cx.args[2]) or "", tcx.snippet(cx.args[0]) or ""
    if len(t.shape) != 1 or not all(s and len(s) <= 30 for s in (idx, val, ten)) \
            or not isinstance(cx.arg_tys[2], TileT):
        return "; for a long tensor, one atomic an element, each index picked out with `.sum(0)` of a `where`"
    b, dt = t.shape[0], cx.arg_tys[2].dtype
    zero = "0.0" if isinstance(dt, DType) and dt.is_float else "0"
    return (f"; for a long tensor, one atomic an element: `for j in 0..{b} {{ let at = arange::<i32>({b}) == j; "
            f"{cx.name}({ten}, [where(at, {idx}, 0).sum(0)], where(at, {val}, {zero}).sum(0)); }}`")


def _scatter(tcx: CheckCx, cx: CallCx) -> Type:
    """`atomic_add(&h, [bins], 1)` with a tile of indices (NumPy's `np.add.at(h, bins, 1)`; round 15: the
    help reduced the indices to one, `.max(0)`, which counts every value in one bin): an atomic updates one
    place, or a tile at one offset; a scatter compares the indices with every position (a one-hot tile)
    and reduces each column, then updates the whole tensor from offset 0."""
    x, t = tcx.scatters[cx.node]
    d = tcx.err(T.MISMATCHED_TYPES, f"`{cx.name}` takes one index, found a tile of them", x.span,
                f"this is `{t}`")
    d = d.note("an atomic updates one element, or a tile of them at one offset: it does not scatter")
    tensor = deref(cx.arg_tys[0])
    vt, n = cx.arg_tys[2], None
    if isinstance(tensor, TensorT) and tensor.shape is not None and len(tensor.shape) == 1:
        n = tensor.shape[0].const_value if isinstance(tensor.shape[0], Dim) else None
    v, b, val = tcx.receiver_snippet(x), t.shape[0], tcx.snippet(cx.args[2])
    if n is None or len(t.shape) != 1 or len(cx.args[1].elems if isinstance(cx.args[1], ast.ArrayExpr) else ()) != 1 \
            or not isinstance(tensor, TensorT) or not isinstance(tensor.dtype, DType) or len(v) > 30 or len(val) > 30:
        return tcx.emit(d.with_help("compare the indices with every position of the tensor (a one-hot tile, "
                                    "`examples/histogram.tile`), reduce each position's column, and update the "
                                    "whole tensor at offset 0" + _element_loop(tcx, cx, x, t)))
    hot = f"{v}.reshape([{b}, 1]) == arange::<i32>({n}).reshape([1, {n}])"
    dt = tensor.dtype
    if isinstance(vt, TileT):
        val = f"{tcx.receiver_snippet(cx.args[2])}.reshape([{b}, 1])"
    op = cx.name[len("atomic_"):]
    if op == "add":
        one = isinstance(cx.args[2], ast.IntLit) and cx.args[2].value == 1
        per = f"(({hot}) as {dt}).sum(0)" if one else f"where({hot}, {val}, 0).sum(0)"
    else:
        per = f"where({hot}, {val}, {dt}::{'MIN' if op == 'max' else 'MAX'}).{op}(0)"
    return tcx.emit(d.with_help(f"take each position's {'sum' if op == 'add' else op + 'imum'} over the tile "
                                f"with a one-hot comparison, then update all {n} at once: "
                                f"`{cx.name}({tcx.snippet(cx.args[0])}, [0], {per})`"))


def rule_atomic(tcx: CheckCx, cx: CallCx) -> Type:
    if cx.node in tcx.scatters:
        return _scatter(tcx, cx)
    target = _indexed_tensor(tcx, cx)
    if target is None:
        return ERROR
    t, rank, v, vt = target
    el = elem_of(vt)
    if el is None and isinstance(vt, (UntypedInt, UntypedFloat)):
        settle(tcx, v, ScalarT(t.dtype) if t.dtype is not None else F32)
        if isinstance(vt, UntypedFloat) and not elem_is_float(t.dtype):
            return tcx.emit(tcx.err(T.MISMATCHED_DTYPES, f"mismatched dtypes: `{t.dtype}` and a float literal",
                                    v.span, f"`{tcx.snippet(cx.args[0])}` holds `{t.dtype}`")
                            .with_help(f"use a value of `{t.dtype}`, or cast the tile first"))
    elif not isinstance(vt, (ScalarT, TileT)):
        return tcx.emit(tcx.err(T.MISMATCHED_TYPES, "mismatched types", v.span,
                                f"expected a scalar or a tile, found `{vt}`")
                        .with_help("pass a scalar or a tile"))
    elif t.dtype is not None and el != t.dtype:
        return tcx.emit(tcx.err(T.MISMATCHED_DTYPES, f"mismatched dtypes: `{t.dtype}` and `{el}`", v.span,
                                f"`{tcx.snippet(cx.args[0])}` holds `{t.dtype}`")
                        .with_help(f"cast with `as`: `{tcx.cast_snippet(v)} as {t.dtype}`"))
    if isinstance(vt, TileT) and rank is not None and len(vt.shape) != rank:
        return tcx.emit(tcx.err(T.RANK_MISMATCH, f"a {len(vt.shape)}-D tile for a {rank}-D tensor", v.span,
                                f"this is `{vt}`")
                        .with_help(f"reshape the tile to {rank}-D first (`t.reshape([..])`)"))
    return UNIT


def rule_store_unchecked(tcx: CheckCx, cx: CallCx) -> Type:
    target = _indexed_tensor(tcx, cx)
    if target is None:
        return ERROR
    t, rank, v, vt = target
    if not isinstance(vt, TileT):
        return tcx.emit(tcx.err(T.MISMATCHED_TYPES, "mismatched types", v.span, f"expected a tile, found `{vt}`")
                        .with_help("store a tile (`full::<T>([..], v)` makes one from a scalar)"))
    if t.dtype is not None and vt.dtype != t.dtype:
        return tcx.emit(tcx.err(T.MISMATCHED_DTYPES, f"mismatched dtypes: `{t.dtype}` and `{vt.dtype}`", v.span,
                                f"`{tcx.snippet(cx.args[0])}` holds `{t.dtype}`")
                        .with_help(f"cast with `as`: `{tcx.cast_snippet(v)} as {t.dtype}`"))
    if rank is not None and len(vt.shape) != rank:
        return tcx.emit(tcx.err(T.RANK_MISMATCH, f"a {len(vt.shape)}-D tile for a {rank}-D tensor", v.span,
                                f"this is `{vt}`")
                        .with_help(f"reshape the tile to {rank}-D first (`t.reshape([..])`)"))
    return UNIT


def _own_tile(tcx: CheckCx, cx: CallCx, e: ast.Expr, t: Type) -> TensorT | None:
    """The tensor type of a `&mut` parameter (its shape is the own tile's shape)."""
    if isinstance(t, RefT) and isinstance(t.inner, TensorT) and t.mutable:
        return t.inner
    return None


def rule_load(tcx: CheckCx, cx: CallCx) -> Type:
    r, rt = cx.recv, cx.recv_ty
    assert r is not None and rt is not None
    if isinstance(rt, TileViewT):
        if not cx.args:
            return tcx.arity_error("`load` on a partition view", "an index `[i, ..]`", 0, cx.span, None)
        if not _check_index(tcx, cx, cx.args[0], len(rt.tile_shape), "the view"):
            return ERROR
        assert rt.tensor.dtype is not None
        return TileT(rt.tensor.dtype, rt.tile_shape)
    t = deref(rt)
    assert isinstance(t, TensorT)
    if cx.args:
        triton = triton_load_help(tcx.receiver_snippet(r), tcx.snippet(cx.args[0]) or "", cx.arg_tys[0])
        return tcx.emit(tcx.err(N.WRONG_ARG_COUNT, "`load` of a tensor parameter takes no index", cx.args[0].span,
                                "unexpected index")
                        .note("a `&mut` parameter is this block's own tile: `z.load()`")
                        .with_help(triton or f"for indexed tiles, partition it: "
                                   f"`{tcx.receiver_snippet(r)}.partition([..]).load([i, ..])`"))
    shape = t.shape
    if shape is None or any(d is None for d in shape):
        return tcx.emit(tcx.err(T.LOAD_UNKNOWN_SHAPE, f"cannot `load()` the whole of `{tcx.snippet(r)}`",
                                cx.span, f"`{rt}` has a `?` dimension")
                        .note("only a `&mut` parameter has an own tile; a `&` parameter is loaded whole only "
                              "when its shape is static")
                        .with_help(f"use `{tcx.snippet(r)}.load_like(z)` for the tile aligned with `z`, or "
                                   f"`{tcx.snippet(r)}.partition([..]).load([i, ..])`"))
    assert t.dtype is not None
    tshape = tuple(d for d in shape if d is not None)
    if not (isinstance(rt, RefT) and rt.mutable):
        check_tile_limits(tcx, tshape, cx.span, cx.fx.kernel_name)
    return TileT(t.dtype, tshape)


def rule_load_padded(tcx: CheckCx, cx: CallCx) -> Type:
    rt = cx.recv_ty
    assert isinstance(rt, TileViewT)
    if not _check_index(tcx, cx, cx.args[0], len(rt.tile_shape), "the view"):
        return ERROR
    assert rt.tensor.dtype is not None
    want = ScalarT(rt.tensor.dtype)
    v, vt = cx.args[1], cx.arg_tys[1]
    if not coerce(tcx, vt, want, v):
        mismatch(tcx, want, vt, v, None)
    else:
        settle(tcx, v, want)
    return TileT(rt.tensor.dtype, rt.tile_shape)


def rule_prefetch(tcx: CheckCx, cx: CallCx) -> Type:
    """`p.prefetch([i, ..])`: an index like `load`'s, no value."""
    rt = cx.recv_ty
    assert isinstance(rt, TileViewT)
    if not _check_index(tcx, cx, cx.args[0], len(rt.tile_shape), "the view"):
        return ERROR
    return UNIT


def rule_store(tcx: CheckCx, cx: CallCx) -> Type:
    r, rt = cx.recv, cx.recv_ty
    assert r is not None and rt is not None
    v, vt = cx.args[0], cx.arg_tys[0]
    if isinstance(rt, TileViewT):
        if len(cx.args) < 2:
            return tcx.arity_error("`store` on a partition view", "a tile and an index `[i, ..]`", 1, cx.span, None)
        if not _check_index(tcx, cx, cx.args[1], len(rt.tile_shape), "the view"):
            return ERROR
        dst_shape: tuple[Dim | None, ...] = rt.tile_shape
        dtype = rt.tensor.dtype
    else:
        t = deref(rt)
        assert isinstance(t, TensorT)
        if len(cx.args) > 1:
            name, ix = tcx.snippet(r), cx.args[1]
            nested = f"`{name}.partition([..]).store(tile, [i, ..])`"
            if isinstance(vt, TileT) and isinstance(ix, ast.ArrayExpr) and len(ix.elems) == len(vt.shape):
                # `y.store(h, [t, 0])` of a [1, BD] tile h (round 15): the nested tile of h's shape at that index
                nested = f"`{name}.partition({shape_str(vt.shape)}).store({tcx.snippet(v)}, {tcx.snippet(ix)})`"
            return tcx.emit(tcx.err(N.WRONG_ARG_COUNT, "`store` of a tensor parameter takes no index",
                                    cx.args[1].span, "unexpected index")
                            .note(f"a store takes no index: `{name}` is this block's own tile")
                            .with_help(f"for a nested tile of it, partition it by the tile's shape: {nested} (its "
                                       "index counts tiles of that shape)"))
        if t.shape is None or any(d is None for d in t.shape):
            # a `&` param (the ownership checker rejects the store itself)
            return UNIT
        dst_shape, dtype = t.shape, t.dtype
    if isinstance(vt, (UntypedInt, UntypedFloat, ScalarT)):
        return tcx.emit(tcx.err(T.STORE_SHAPE, "`store` expects a tile, found a scalar", v.span,
                                f"this is `{vt}`")
                        .with_help(f"make a tile: `full::<{dtype}>({shape_str(dst_shape)}, {tcx.snippet(v)})`"))
    if not isinstance(vt, TileT):
        return tcx.emit(tcx.err(T.MISMATCHED_TYPES, "mismatched types", v.span, f"expected a tile, found `{vt}`")
                        .with_help("store a tile (`full::<T>([..], v)` makes one from a scalar)"))
    if dtype is not None and vt.dtype != dtype:
        inner = v.expr if isinstance(v, ast.Cast) else v  # `acc as f16` -> suggest `acc as f32`
        return tcx.emit(tcx.err(T.MISMATCHED_DTYPES, f"mismatched dtypes: storing `{vt.dtype}` into `{dtype}`",
                                v.span, f"this is `{vt}`")
                        .secondary(r.span, f"`{tcx.snippet(r)}` holds `{dtype}`")
                        .with_help(widened_sum_help(tcx, inner, vt.dtype, dtype)
                                   or f"cast with `as`: `{tcx.cast_snippet(inner)} as {dtype}`"))
    if tuple(vt.shape) != tuple(dst_shape):
        if "?" in shape_str(dst_shape):  # a dimension refused where it is declared (`[(1 % 0)]`): reported there
            return UNIT
        return tcx.emit(tcx.err(T.STORE_SHAPE,
                                f"stored tile has shape {shape_str(vt.shape)} but the destination tile is "
                                f"{shape_str(dst_shape)}", v.span, f"this is {shape_str(vt.shape)}")
                        .secondary(r.span, f"`{tcx.snippet(r)}` has tile shape {shape_str(dst_shape)}")
                        .with_help(_store_hint(tcx, v, vt.shape, dst_shape)))
    return UNIT


_REDUCTIONS = frozenset(("sum", "max", "min", "prod", "argmax", "argmin"))


def _other_axis_hint(tcx: CheckCx, v: ast.Expr, dst: tuple[Dim, ...]) -> str | None:
    """`t.sum(0)` stored where `t.sum(1)` fits: the reduction went along the
    wrong axis (a port that reduced along Triton's other axis)."""
    if not (isinstance(v, ast.MethodCall) and v.method.name in _REDUCTIONS and len(v.args) == 1
            and isinstance(v.args[0].value, ast.IntLit)):
        return None
    rt = tcx.program.types.get(v.receiver)
    if not isinstance(rt, TileT):
        return None
    axis = v.args[0].value.value
    for k in range(len(rt.shape)):
        if k != axis and tuple(d for i, d in enumerate(rt.shape) if i != k) == dst:
            return (f"`.{v.method.name}({axis})` removes axis {axis} of {shape_str(rt.shape)}; to reduce along "
                    f"axis {k} instead: `{tcx.snippet(v.receiver)}.{v.method.name}({k})`")
    return None


def _store_hint(tcx: CheckCx, v: ast.Expr, have: Shape, want: tuple[Dim | None, ...]) -> str:
    gap = divisibility_gap(have, want)
    if gap is not None:
        return divisibility_help(gap)
    fixed = generic_constant_gap(have, want)
    if fixed is not None:
        return generic_constant_help(fixed)
    if all(d is not None for d in want):
        dst = tuple(d for d in want if d is not None)
        axis = _other_axis_hint(tcx, v, dst)
        if axis is not None:
            return axis
        if numel(have) == numel(dst):
            if isinstance(v, ast.MethodCall) and v.method.name == "reshape":  # reshape it right, once
                return f"reshape it to {shape_str(dst)}: `{tcx.receiver_snippet(v.receiver)}.reshape({shape_str(dst)})`"
            return f"reshape it: `{tcx.receiver_snippet(v)}.reshape({shape_str(dst)})`"
        if broadcast_shapes(have, dst) == dst:
            return f"broadcast it: `{tcx.receiver_snippet(v)}.broadcast({shape_str(dst)})`"
    return "reshape or broadcast the tile to the destination's shape"


def _load_like_rank_help(x: str, rank: int, own: tuple[Any, ...]) -> str:
    """E0217's help for `x.load_like(z)` of an input of another rank (huser26: a decode step's input row of a
    [T, B * D] tensor for a [BD] own tile was told "partition the input with `x.partition([..])`", with neither
    the input's name nor the tile): with more axes, the partition with tiles of 1 along the extra leading axes,
    a load at this block's position along the own ones, reshaped to the own tile's shape."""
    general = f"`load_like` reads a tile of the own tile's rank: partition the input with `{x}.partition([..])` instead"
    k = rank - len(own)
    if k <= 0 or len(own) > 3 or not x.isidentifier():
        return general
    dims = ", ".join(str(d) for d in own)
    lead = ["i", "j", "r", "s"][:k] if k <= 4 else None
    if lead is None:
        return general
    idx = ", ".join([*lead, *(f"block_id({a})" for a in range(len(own)))])
    which = " and ".join(f"`{n}`" for n in lead)
    return (f"`load_like` reads a tile of the own tile's rank; `{x}` has {k} more leading "
            f"{'axis' if k == 1 else 'axes'}: read the tile at {which} there and this block's position along the "
            f"others, `{x}.partition([{', '.join(['1'] * k)}, {dims}]).load([{idx}]).reshape([{dims}])`")


def rule_load_like(tcx: CheckCx, cx: CallCx) -> Type:
    r, rt = cx.recv, cx.recv_ty
    assert r is not None and rt is not None
    z, zt = cx.args[0], cx.arg_tys[0]
    own = _own_tile(tcx, cx, z, zt)
    if own is None:
        return tcx.emit(tcx.err(T.MISMATCHED_TYPES, "`load_like` needs a `&mut` tensor parameter", z.span,
                                f"this is `{zt}`")
                        .note("`x.load_like(z)` loads `x`'s tile at the position and shape of `z`'s own tile")
                        .with_help("pass a `&mut` tensor parameter of the kernel as the argument"))
    t = deref(rt)
    assert isinstance(t, TensorT) and own.shape is not None
    if t.shape is not None and len(t.shape) != len(own.shape):
        return tcx.emit(tcx.err(T.RANK_MISMATCH, f"`{tcx.snippet(r)}` has {plural(len(t.shape), 'dimension')} "
                                f"but `{tcx.snippet(z)}` has {len(own.shape)}", cx.span, "ranks differ")
                        .secondary(r.span, f"this is `{rt}`").secondary(z.span, f"this is `{zt}`")
                        .with_help(_load_like_rank_help(tcx.snippet(r), len(t.shape), own.shape)))
    assert t.dtype is not None
    return TileT(t.dtype, tuple(d for d in own.shape if d is not None))


def rule_num_tiles(tcx: CheckCx, cx: CallCx) -> Type:
    rt = cx.recv_ty
    assert isinstance(rt, TileViewT)
    axis_arg(tcx, cx, cx.args[0], len(rt.tile_shape))
    return I32


def tuner_partition(tcx: CheckCx, cx: CallCx, t: TensorT, arg: ast.Expr, holes: list[ast.Expr]) -> Type | None:
    """`z.partition([_, 64])` / `z.partition(_)`: tile dimensions the autotuner
    picks at the launch that takes this partition (`sema/launch.py` checks
    the kernel lists them; one left untaken is E0229 at the end). None: an
    array with some `_`, typed by the general rule (the `_` dims are
    deferred to the launch like run-time dims)."""
    if cx.fx.in_kernel:
        return tcx.emit(tcx.err(T.TUNED_TILE_MISUSE, "the autotuner cannot pick a tile shape inside a kernel",
                                holes[0].span, "left to the tuner here")
                        .note("inside a kernel every tile dimension is a compile-time constant; the tuner "
                              "picks the tile shapes of partitions passed to a launch")
                        .with_help("make it a const generic of the kernel, listed in its `#[autotune(..)]`"))
    if isinstance(arg, ast.ArrayExpr):
        tcx.tuned_partitions[cx.node] = tuple(i for i, x in enumerate(arg.elems) if x in tcx.tuner_dims)
        return None
    if t.shape is None:
        return tcx.emit(tcx.err(T.TUNED_TILE_MISUSE, "the tuner cannot pick every dimension of a tensor whose "
                                "rank is known only at run time", arg.span, "how many dimensions?")
                        .with_help("write one `_` per dimension: `.partition([_, _])`"))
    rank = len(t.shape)
    tcx.partition_deferred[cx.node] = {i: (i, arg) for i in range(rank)}
    tcx.tuned_partitions[cx.node] = tuple(range(rank))
    return PartitionT(t, tuple(Dim.var(f"?{i}") for i in range(rank)))


def _partition_rank_help(tcx: CheckCx, node: object, r: ast.Expr, shape: tuple[Dim | None, ...], arg: ast.Expr,
                         given: tuple[Dim | None, ...] | None) -> str:
    """One tile dimension per tensor dimension; with too few given, the
    tiles the user most likely means: tiles of 1 along the leading axes left
    out where the sizes given end with the tensor's last dimension
    (`o.partition([16, 32])` of a [4, 20, 32] tensor: `[1, 16, 32]`, the
    layout of std::attention), else the whole length of the trailing axes
    left out (`z.partition([4])` of an [8, 8] tensor: `[4, 8]`)."""
    base = f"give one tile dimension per tensor dimension ({len(shape)})"
    if not isinstance(arg, ast.ArrayExpr) or not 0 < len(arg.elems) < len(shape):
        return base
    x = tcx.snippet(r)
    mine = [tcx.snippet(e) for e in arg.elems]
    declared = tcx.partition_params.get(node)
    if declared is not None and declared.shape is not None and len(declared.shape) == len(shape):
        # given to a kernel's `&mut` parameter: its tile, the sizes given in its dimensions that are not numbers
        # (`dx.partition([64])` for `dx: &mut Tensor<f32, [1, BN]>`: `[1, 64]`)
        tile = [str(d) if d is not None else "?" for d in declared.shape]
        if len([d for d in tile if not d.isdigit()]) == len(mine) < len(tile):
            sizes = iter(mine)
            fill = ", ".join(d if d.isdigit() else next(sizes) for d in tile)
            return f"{base}: the kernel's tile is `[{', '.join(tile)}]`, so `{x}.partition([{fill}])`"
        names = list(dict.fromkeys(d for d in tile if not d.isdigit()))
        if len(names) == len(mine) < len(tile) and all(n.isidentifier() for n in names):
            # round 26: `out.partition([16])` for `out: &mut Tensor<f32, [B, B]>` was told `[16, 30]`, whose two
            # sizes `B` cannot both be (E0214): a generic named twice takes the size given once
            size = dict(zip(names, mine, strict=True))
            fill = ", ".join(d if d.isdigit() else size[d] for d in tile)
            return f"{base}: the kernel's tile is `[{', '.join(tile)}]`, so `{x}.partition([{fill}])`"
    missing = len(shape) - len(mine)
    if given is not None and len(given) == len(mine) and given[-1] is not None and given[-1] == shape[-1]:
        dims = ", ".join(["1"] * missing + mine)
        return f"{base}: `{x}.partition([{dims}])` takes tiles of 1 along the leading axes"
    rest = [str(d) if d is not None else f"{x}.shape()[{k}]" for k, d in enumerate(shape)][len(mine):]
    dims = ", ".join([*mine, *rest])
    return f"{base}: `{x}.partition([{dims}])` takes the whole length of each axis left out"


def rule_partition(tcx: CheckCx, cx: CallCx) -> Type:
    r, rt = cx.recv, cx.recv_ty
    assert r is not None and rt is not None
    t = deref(rt)
    assert isinstance(t, TensorT)
    arg = cx.args[0]
    holes = [x for x in (arg.elems if isinstance(arg, ast.ArrayExpr) else (arg,)) if x in tcx.tuner_dims]
    if holes:
        tuned = tuner_partition(tcx, cx, t, arg, holes)
        if tuned is not None:
            return tuned
    shape = shape_arg(tcx, cx, cx.args[0], need_const=cx.fx.in_kernel, kind="tiles")
    if t.shape is not None and isinstance(cx.arg_tys[0], ShapeT) and cx.arg_tys[0].rank is not None \
            and cx.arg_tys[0].rank != len(t.shape):
        return tcx.emit(tcx.err(T.RANK_MISMATCH, f"a {len(t.shape)}-D tensor cannot be split into "
                                f"{cx.arg_tys[0].rank}-D tiles", cx.args[0].span,
                                f"expected {plural(len(t.shape), 'dimension')}")
                        .secondary(r.span, f"this is `{rt}`")
                        .with_help(_partition_rank_help(tcx, cx.node, r, t.shape, cx.args[0], shape)))
    if cx.fx.in_kernel:
        if shape is None:
            return ERROR
        tshape = tuple(d for d in shape if d is not None)
        check_tile_limits(tcx, tshape, cx.args[0].span, cx.fx.kernel_name)
        if t.dtype is None:
            return ERROR
        return TileViewT(t, tshape, mutable=isinstance(rt, RefT) and rt.mutable)
    # host: partition dims may be known only at run time; record the expressions
    rank = cx.arg_tys[0].rank if isinstance(cx.arg_tys[0], ShapeT) else None
    dims = shape if shape is not None else (None,) * (rank or 0)
    if isinstance(cx.args[0], ast.ArrayExpr):
        deferred = {i: (i, x) for i, (x, d) in enumerate(zip(cx.args[0].elems, dims, strict=False)) if d is None}
        if deferred:
            tcx.partition_deferred[cx.node] = deferred
    # an unknown dim stays symbolic-free: use a placeholder that binds nothing
    tile = tuple(d if d is not None else Dim.var(f"?{i}") for i, d in enumerate(dims))
    return PartitionT(t, tile)
