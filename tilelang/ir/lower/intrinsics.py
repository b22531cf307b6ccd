"""The builtin operations inside a kernel: each call or method to its IR.

`lower_call` inlines a call of a device function or lowers a builtin
(`lower_builtin`): grid queries, tile creation, element-wise math, `where`,
reductions, scans, `mma`/`dot`, atomics, `store_unchecked`, `print` and
`assert`; `lower_method` lowers tile methods and hands tensor and view
methods to `views`. `LOWERED_OPERATIONS` names every builtin implemented
here, keyed like `tilelang.intrinsics.signatures` (a test checks that no
kernel operation lacks one).
"""

from __future__ import annotations

import math
from typing import Any

from tilelang import printfmt
from tilelang.diagnostics.codes.types import FORMAT_STRING
from tilelang.diagnostics.model import Diagnostic, TileError
from tilelang.dtypes import DType, arange_problem, dot_acc_dtype
from tilelang.ir import nodes as ir
from tilelang.ir.lower.context import LowerCx
from tilelang.ir.lower.fold import broadcast_shapes, convert_const
from tilelang.ir.lower.inline import inline_call
from tilelang.ir.lower.values import (
    InstanceDot,
    BOOL,
    I32,
    UNIT,
    CVal,
    InstanceArange,
    StrVal,
    TensorRef,
    Unsupported,
    ViewRef,
)
from tilelang.ir.lower.views import tensor_method, view_method
from tilelang.sema.bits import BITS_OF
from tilelang.source import Span
from tilelang.syntax import ast

_UNARY_MATH = {op.value: op for op in (
    ir.ElemOp.EXP, ir.ElemOp.EXP2, ir.ElemOp.LOG, ir.ElemOp.LOG2, ir.ElemOp.SQRT,
    ir.ElemOp.RSQRT, ir.ElemOp.ABS, ir.ElemOp.SIN, ir.ElemOp.COS, ir.ElemOp.TANH,
    ir.ElemOp.SIGMOID, ir.ElemOp.FLOOR, ir.ElemOp.CEIL, ir.ElemOp.ERF)}


#: `asin`, `acos` and `atan`, lowered to `atan2` (`inverse_trig`)
_INVERSE_TRIG = ("asin", "acos", "atan")

_REDUCE = {op.value: op for op in ir.ReduceOp}


_SCAN = {op.value: op for op in ir.ScanOp}


#: Built-in kernel operations this lowering implements, keyed like
#: `tilelang.intrinsics.signatures` (methods with a leading dot).
LOWERED_OPERATIONS = frozenset(
    {"block_id", "num_blocks", "last_block", "queue", "tiles", "cluster_gather", ".group", "zeros", "ones", "full", "arange", "fma", "maximum", "minimum",
     "pow", ".pow", "atan2", ".atan2", ".item", ".to_bits", "from_bits",
     "where", "cumsum", "cumprod", "cummax", "cummin", "mma", "dot", "print", "assert", "atomic_add", "atomic_max", "atomic_min",
     "store_unchecked", ".load", ".load_padded", ".prefetch", ".store", ".load_like", ".num_tiles",
     ".partition", ".shape", ".cumsum", ".cumprod", ".cummax", ".cummin", ".reshape", ".broadcast", ".transpose", ".permute"}
    | set(_UNARY_MATH) | {"." + n for n in _UNARY_MATH} | set(_INVERSE_TRIG) | {"." + n for n in _INVERSE_TRIG}
    | set(_REDUCE) | {"." + n for n in _REDUCE}
)


_BUILTIN_NAMES = LOWERED_OPERATIONS


def _turbofish_dtype(cx: LowerCx, call: ast.Call | ast.MethodCall, default: DType | None) -> DType:
    if call.generics:
        return cx.dtype(call.generics[0])
    ty = cx.program.type_of(call)
    dt = getattr(ty, "dtype", None)
    if isinstance(dt, DType):
        return dt
    if default is None:
        raise Unsupported(call.span, "cannot tell the element type here",
                          "give it with a turbofish, e.g. `zeros::<f32>([..])`")
    return default


def lower_call(cx: LowerCx, e: ast.Call) -> Any:
    callee = e.callee
    name = callee.ident.name if isinstance(callee, ast.Name) else callee.segments[-1].name
    sym = cx.program.symbol_of(e)
    kind = getattr(getattr(sym, "kind", None), "value", None)
    local = isinstance(callee, ast.Name) and cx.f.lookup(name) is not None
    if not local and kind in ("fn", "kernel"):
        qual = getattr(sym, "qualname", None) or name
        decl = cx.program.find_fn(qual, kernel=False)
        if decl is not None:
            return inline_call(cx, decl, e)
    if not local and kind is None:
        decl = cx.program.find_fn(name, kernel=False)
        if decl is not None and name not in _BUILTIN_NAMES:
            return inline_call(cx, decl, e)
    return lower_builtin(cx, name, e)


def _generic_dot(cx: LowerCx, e: ast.Call, in_dt: DType, acc_dt: DType) -> None:
    """`dot(a, b)` of a generic `T`: the checker types it `Tile<T, ..>` (it
    cannot spell "`T`'s accumulator"), which is the truth where `T` is its own
    accumulator (f32, f64, 32- and 64-bit integers). Where this instance's
    accumulator is another type (`T = f16` gives f32), the body's `T` would be
    wrong: E0206 naming the instance, never a silent conversion. A `dot` that
    is the whole operand of a cast (`dot(a, b) as f32`, `.. as T`) is seen
    only through the cast, which converts the accumulator's values once, as
    the concrete program's cast does: that instance is what it says."""
    from tilelang.sema.types import TileT, TypeParam

    if cx.cast_operand is e:
        return
    t = cx.program.type_of(e)
    if isinstance(t, TileT) and isinstance(t.dtype, TypeParam):
        typed = cx.f.type_params.get(t.dtype.name)
        if isinstance(typed, DType) and typed is not acc_dt and dot_acc_dtype(in_dt) is not None:
            raise InstanceDot(e.span, in_dt, acc_dt, t.dtype.name)


def _last_block(cx: LowerCx, axis: int, sp: Span) -> ir.Value:
    """`last_block(axis)`: one arrival at the group's counter."""
    group = cx.group_index(axis, sp)
    return cx.b.last_block(group, cx.b.num_blocks(axis, span=sp), axis, span=sp)


def _elem_dtype(cx: LowerCx, node: ast.Expr) -> DType | None:
    dt = getattr(cx.program.type_of(node), "dtype", None)
    return dt if isinstance(dt, DType) else None


def lower_builtin(cx: LowerCx, name: str, e: ast.Call) -> Any:
    sp = e.span
    args = e.args
    if name in ("print", "assert"):
        vals = cx.lower_args(args)
        return lower_print(cx, vals, sp) if name == "print" else lower_assert(cx, vals, e)
    vals = cx.lower_args(args)
    if name == "from_bits":  # `from_bits::<T>(u)`: the checker made sure `u` holds `T`'s width of bits
        dt = _turbofish_dtype(cx, e, None)
        return cx.b.cast(cx.mat(vals[0], BITS_OF[dt], sp), dt, span=sp, bits=True)
    if name in ("block_id", "num_blocks"):
        axis = cx.const_int(vals[0], sp)
        if not 0 <= axis < 3:
            raise Unsupported(sp, f"grid axis {axis} (the grid has axes 0, 1 and 2)")
        cx.grid_rank = max(cx.grid_rank, axis + 1)
        return cx.b.block_id(axis, span=sp) if name == "block_id" else \
            cx.b.num_blocks(axis, span=sp)
    if name == "last_block":
        return _last_block(cx, cx.const_int(vals[0], sp), sp)
    if name == "cluster_gather":
        shape = cx.cluster
        if shape is None:
            raise Unsupported(sp, "`cluster_gather` in a kernel without `#[cluster(..)]`")
        ty = cx.program.type_of(args[0].value)
        x = cx.mat(vals[0], getattr(ty, "dtype", None) if isinstance(getattr(ty, "dtype", None), DType) else None, sp)
        return cx.b.cluster_gather(x, shape[0] * shape[1] * shape[2], span=sp)
    if name in ("queue", "tiles"):
        raise Unsupported(sp, f"`{name}(axis)` other than as the range of a `for` in a kernel's body")
    if name in ("zeros", "ones", "full"):
        shape = cx.ints(vals[0], sp)
        dt = _turbofish_dtype(cx, e, None if name == "full" else DType.F32)
        if name == "full":
            fill = vals[1]
            if isinstance(fill, CVal):
                cx.check_literal(fill, dt, sp)
                return cx.b.const(convert_const(fill.value, dt), dt, shape, span=sp)
            return cx.to_shape(cx.mat(fill, dt, sp), shape, sp)
        one = name == "ones"  # zeros::<bool> is all false, ones::<bool> all true, as on the host
        value = one if dt is BOOL else int(one) if dt.is_int else float(one)
        return cx.b.const(value, dt, shape, span=sp)
    if name == "arange":
        n = cx.const_int(vals[0], sp)
        dt = _turbofish_dtype(cx, e, I32)
        why = arange_problem(dt, n)
        if why is not None:  # a generic `T` or `N` (the checker refuses a concrete one)
            raise InstanceArange(args[0].span if args else sp, n, dt, why)
        return cx.b.arange(n, dt, span=sp)
    if name in _UNARY_MATH:
        return cx.b.elementwise(_UNARY_MATH[name], _float_operand(cx, vals[0], sp), span=sp)
    if name in _INVERSE_TRIG:
        return inverse_trig(cx, name, _float_operand(cx, vals[0], sp), sp)
    if name in ("maximum", "minimum", "pow", "atan2"):
        x, y = cx.unify(vals, sp)
        return cx.b.elementwise(ir.ElemOp(name), x, y, span=sp)
    if name == "fma":
        x, y, z = cx.unify(vals, sp)
        return cx.b.elementwise(ir.ElemOp.FMA, x, y, z, span=sp)
    if name == "where":
        c = cx.mat(vals[0], BOOL, sp)
        x, y = cx.unify(vals[1:], sp)
        shape = broadcast_shapes([c.shape, x.shape], sp)
        return cx.b.elementwise(ir.ElemOp.WHERE, cx.to_shape(c, shape, sp),
                                cx.to_shape(x, shape, sp), cx.to_shape(y, shape, sp),
                                span=sp)
    if name in _REDUCE:
        return lower_reduce(cx, name, vals[0], vals[1] if len(vals) > 1 else None, sp)
    if name in _SCAN:
        return lower_scan(cx, name, vals[0], vals[1] if len(vals) > 1 else CVal(0), sp)
    if name in ("mma", "dot"):
        a = cx.mat(vals[0], None, sp)
        bb = cx.mat(vals[1], None, sp)
        if name == "mma":
            acc = cx.mat(vals[2], None, sp)
        else:
            acc_dt = dot_acc_dtype(a.dtype) or a.dtype  # bool: the instance's domain check refuses it
            if a.type.rank != 2 or bb.type.rank != 2:
                raise Unsupported(sp, "`dot` of tiles that are not 2-D")
            _generic_dot(cx, e, a.dtype, acc_dt)
            acc = cx.b.const(0.0 if acc_dt.is_float else 0, acc_dt,
                             (a.shape[0], bb.shape[1]), span=sp)
        return cx.b.mma(a, bb, acc, span=sp)
    if name in ("atomic_add", "atomic_max", "atomic_min"):
        return lower_atomic(cx, ir.AtomicOp(name), vals, sp)
    if name == "store_unchecked":
        t = cx.tensor_arg(vals[0], sp)
        offs = cx.index_list(vals[1], sp)
        tile = cx.mat(vals[2], t.param.dtype, sp)
        if tile.type.rank != t.param.rank:
            tile = cx.b.reshape(tile, (1,) * (t.param.rank - tile.type.rank) + tile.shape, span=sp) \
                if tile.type.rank < t.param.rank else tile
        cx.b.store(t.param.name, offs, tile, span=sp, unchecked=True)
        return UNIT
    raise Unsupported(sp, f"`{name}` inside a kernel")


def inverse_trig(cx: LowerCx, name: str, x: ir.Value, sp: Span) -> ir.Value:
    """`asin(x)` = atan2(x, sqrt((1 - x)(1 + x))), `acos(x)` = atan2(sqrt((1 - x)(1 + x)), x), `atan(x)` =
    atan2(x, 1): one formula on both engines (IEEE atan2 in f64, rounded once); f16 and bf16 computed in f32
    and rounded once. (1 - x)(1 + x) keeps 1 - x^2 exact-ish near |x| = 1; outside [-1, 1] it is negative
    and the square root NaN, as NumPy's arcsin is."""
    E = ir.ElemOp
    dt = x.dtype
    w = cx.b.cast(x, DType.F32, span=sp) if dt in (DType.F16, DType.BF16) else x

    def k(v: float) -> ir.Value:
        return cx.b.const(v, w.dtype, w.shape, span=sp)

    if name == "atan":
        r = cx.b.elementwise(E.ATAN2, w, k(1.0), span=sp)
    else:
        one_minus = cx.b.elementwise(E.SUB, k(1.0), w, span=sp)
        one_plus = cx.b.elementwise(E.ADD, k(1.0), w, span=sp)
        c = cx.b.elementwise(E.SQRT, cx.b.elementwise(E.MUL, one_minus, one_plus, span=sp), span=sp)
        r = cx.b.elementwise(E.ATAN2, *((w, c) if name == "asin" else (c, w)), span=sp)
    return cx.b.cast(r, dt, span=sp) if r.dtype is not dt else r


def _float_operand(cx: LowerCx, v: Any, span: Span) -> ir.Value:
    if isinstance(v, CVal) and v.dtype is None:
        return cx.mat(CVal(float(v.value), DType.F32), None, span)
    return cx.mat(v, None, span)


_BOOL_REDUCE = (ir.ReduceOp.MAX, ir.ReduceOp.MIN, ir.ReduceOp.ARGMAX, ir.ReduceOp.ARGMIN)


def reduce_value(cx: LowerCx, op: ir.ReduceOp, v: ir.Value, axis: int, span: Span) -> ir.Value:
    """`op` of `v` along `axis`. A `bool` tile's max (any), min (all),
    argmax (the first true) and argmin (the first false) reduce it as 0/1
    `i32` values, as the host reduces a `bool` tensor; its sum and prod stay
    refused (E0204: the checker's, or lower/kernel.py's for a generic
    instance), since their result would not be a `bool`."""
    if v.dtype is DType.BOOL and op in _BOOL_REDUCE:
        r = cx.b.reduce(op, cx.b.cast(v, DType.I32, span=span), axis, span=span)
        return cx.b.cast(r, DType.BOOL, span=span) if op in (ir.ReduceOp.MAX, ir.ReduceOp.MIN) else r
    return cx.b.reduce(op, v, axis, span=span)


def lower_reduce(cx: LowerCx, name: str, x: Any, axis: Any, span: Span) -> ir.Value:
    v = cx.mat(x, None, span)
    if axis is None:
        # no axis: over every element (a scalar result); argmax/argmin give
        # the row-major flat index
        if v.type.rank > 1:
            v = cx.b.reshape(v, (v.type.numel,), span=span)
        if v.type.rank == 0:
            return v
        return reduce_value(cx, _REDUCE[name], v, 0, span)
    a = cx.const_int(axis, span)
    if a < 0:
        a += v.type.rank
    return reduce_value(cx, _REDUCE[name], v, a, span)


def lower_scan(cx: LowerCx, name: str, x: Any, axis: Any, span: Span) -> ir.Value:
    v = cx.mat(x, None, span)
    a = cx.const_int(axis, span)
    if a < 0:
        a += v.type.rank
    return cx.b.scan(_SCAN[name], v, a, span=span)


def lower_atomic(cx: LowerCx, op: ir.AtomicOp, vals: list[Any], span: Span) -> Any:
    t = cx.tensor_arg(vals[0], span)
    origin = cx.index_list(vals[1], span)
    rank = t.param.rank
    if len(origin) != rank:
        raise Unsupported(span, f"{len(origin)} indices for a rank-{rank} tensor")
    v = cx.mat(vals[2], t.param.dtype, span)
    if v.type.is_scalar:
        cx.b.atomic(op, t.param.name, origin, v, span=span)
        return UNIT
    # A tile value lands at `origin + position`: per-element index tiles.
    if v.type.rank < rank:
        v = cx.b.reshape(v, (1,) * (rank - v.type.rank) + v.shape, span=span)
    idx = []
    for d in range(rank):
        idx.append(cx.b.add(cx.to_shape(origin[d], v.shape, span),
                            cx.iota(v.shape, d, span), span=span))
    cx.b.atomic(op, t.param.name, idx, v, span=span)
    return UNIT


def lower_print(cx: LowerCx, vals: list[Any], span: Span) -> Any:
    parts: list[str | ir.Value] = []

    def put(v: Any) -> None:
        if isinstance(v, StrVal):
            parts.append(v.value)
        else:
            parts.append(cx.mat(v, None, span))

    rest = list(vals)
    if rest and isinstance(rest[0], StrVal) and printfmt.is_format(rest[0].value):
        # a literal was checked (E0232); a string bound by `let` is checked here, at the launch
        text = rest.pop(0).value
        p = printfmt.problem_of(text, len(rest))
        if p is not None:
            raise TileError(Diagnostic.error(FORMAT_STRING, p.message).primary(span, p.label)
                            .note(f'the format string is "{text}"').with_help(p.help))
        pieces = printfmt.pieces(text)
        assert isinstance(pieces, list)
        parts.append(pieces[0])
        for v, piece in zip(rest, pieces[1:], strict=True):
            put(v)
            parts.append(piece)
    else:
        for i, v in enumerate(rest):
            if i:
                parts.append(" ")
            put(v)
    merged: list[str | ir.Value] = []
    for p in parts:
        if isinstance(p, str) and merged and isinstance(merged[-1], str):
            merged[-1] += p
        elif p != "":
            merged.append(p)
    if cx.print_order is not None:  # a tile queue's or walk's loop: the line's place is the tile's
        s, n, axis = cx.print_order
        cx.b.print_(*merged, span=span, order=(s, n), axis=axis)
    else:
        cx.b.print_(*merged, span=span)
    return UNIT


def lower_assert(cx: LowerCx, vals: list[Any], e: ast.Call) -> Any:
    cond = vals[0]
    msg = vals[1].value if len(vals) > 1 and isinstance(vals[1], StrVal) else ""
    if isinstance(cond, CVal) and cond.value:
        return UNIT
    if cx.print_order is not None:  # the error names the tile (or the group), not the block
        s, n, axis = cx.print_order
        cx.b.assert_(cx.mat(cond, BOOL, e.span), msg, span=e.span, order=(s, n), axis=axis,
                     region=cx.order_region)
    else:
        cx.b.assert_(cx.mat(cond, BOOL, e.span), msg, span=e.span)
    return UNIT


def lower_method(cx: LowerCx, e: ast.MethodCall) -> Any:
    name = e.method.name
    sp = e.span
    recv = cx.expr(e.receiver)
    vals = cx.lower_args(e.args)
    if isinstance(recv, TensorRef):
        return tensor_method(cx, recv, name, vals, e)
    if isinstance(recv, ViewRef):
        return view_method(cx, recv, name, vals, e)
    if name in _UNARY_MATH:
        return cx.b.elementwise(_UNARY_MATH[name], _float_operand(cx, recv, sp), span=sp)
    if name in _INVERSE_TRIG:
        return inverse_trig(cx, name, _float_operand(cx, recv, sp), sp)
    if name in ("pow", "atan2"):
        x, y = cx.unify([recv, vals[0]], sp)
        return cx.b.elementwise(ir.ElemOp(name), x, y, span=sp)
    if name == "to_bits":  # the checker made sure it is a float
        v = cx.mat(recv, _elem_dtype(cx, e.receiver), sp)
        return cx.b.cast(v, BITS_OF[v.dtype], span=sp, bits=True)
    if name == "item":  # the checker made sure the tile holds one element
        one = cx.b.reshape(cx.mat(recv, None, sp), (1,), span=sp)
        return reduce_value(cx, ir.ReduceOp.MAX, one, 0, sp)
    if name in _REDUCE:
        return lower_reduce(cx, name, recv, vals[0] if vals else None, sp)
    if name in _SCAN:
        return lower_scan(cx, name, recv, vals[0] if vals else CVal(0), sp)
    v = cx.mat(recv, None, sp)
    if name == "reshape":
        shape = cx.ints(vals[0], sp)
        if math.prod(shape) != v.type.numel:
            raise Unsupported(sp, f"cannot reshape {list(v.shape)} to {list(shape)}")
        return cx.b.reshape(v, shape, span=sp)
    if name == "broadcast":
        return cx.to_shape(v, cx.ints(vals[0], sp), sp)
    if name == "transpose":
        if v.type.rank != 2:
            raise Unsupported(sp, "`transpose` of a tile that is not 2-D")
        return cx.b.transpose(v, span=sp)
    if name == "permute":
        return cx.b.permute(v, cx.ints(vals[0], sp), span=sp)
    raise Unsupported(sp, f"method `{name}` inside a kernel")
