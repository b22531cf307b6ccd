"""Expressions: the type of every expression of a function body.

`check_expr` is the entry (through `CheckCx.check_expr`): it decides the
type of one expression, records it in `Program.types` (and its symbolic
value in `Program.dims` where it has one) and hands operators, names and
calls to their modules. Literals, fields, indexing of shapes, references,
tuples, shape literals, ranges, blocks, `if`, `unsafe` and `graph` blocks
are typed here. The parser bounds how deep an expression nests
(`tilelang.limits.MAX_NESTING`, E0023), so the recursion here is bounded.
"""

from __future__ import annotations

import math
from typing import Any, assert_never

from tilelang.diagnostics.codes import types as T
from tilelang.diagnostics.bounds import index_out_of_bounds, slice_out_of_bounds
from tilelang.diagnostics.codes.runtime import HOST_INDEX, KERNEL_UNSUPPORTED
from tilelang.diagnostics.model import Diagnostic
from tilelang.dtypes import DType
from tilelang.intrinsics.signatures import METHODS
from tilelang.lastblock import axis_of as last_block_axis
from tilelang.limits import MAX_RANK
from tilelang.sema.call_habits import tile_dims_help
from tilelang.sema.calls import check_call, check_method_call, module_member
from tilelang.sema.coerce import coerce, float_out_of_range, literal_range_help, settle
from tilelang.sema.consts import check_overflow, dim_op, div_by_zero, rank_limit, shift_wrap
from tilelang.sema.context import CheckCx, Fx, plural
from tilelang.sema.names import check_name, const_type, fn_as_value, resolve_path
from tilelang.sema.operators import COMPARE, binary_types, check_cast, check_unary, note_loose_bitwise
from tilelang.sema.program import SymbolKind
from tilelang.sema.typeops import deref, elem_is_int, float_literal_overflows, int_range, is_intlike, is_poison
from tilelang.sema.types import (
    BOOL,
    ERROR,
    I32,
    UNIT,
    UNTYPED_FLOAT,
    UNTYPED_INT,
    Dim,
    GraphT,
    NeverT,
    PartitionT,
    RangeT,
    RefT,
    ScalarT,
    ShapeT,
    StrT,
    TensorT,
    TileT,
    TileViewT,
    TupleT,
    Type,
    UnitT,
    UntypedFloat,
    UntypedInt,
    shape_str,
)
from tilelang.syntax import ast


def check_expr(tcx: CheckCx, e: ast.Expr, fx: Fx, expected: Type | None = None) -> Type:
    ty = _expr(tcx, e, fx, expected)
    tcx.program.types[e] = ty
    return ty


def _expr(tcx: CheckCx, e: ast.Expr, fx: Fx, expected: Type | None) -> Type:
    match e:
        case ast.IntLit(value=v, suffix=suf):
            tcx.program.dims[e] = Dim.const(v)
            if suf is None:
                return UNTYPED_INT
            dt = DType.parse(suf)
            if dt is None:
                return tcx.emit(tcx.err(T.INVALID_CAST, f"invalid suffix `{suf}` for an integer literal",
                                        e.span)
                                .with_help("integer suffixes are `i8 i16 i32 i64 u8 u16 u32 u64` (a float suffix needs a float literal)"))
            if dt.is_int:
                lo, hi = int_range(dt)
                if not lo <= v <= hi + (e in tcx.negated):
                    tcx.emit(tcx.err(T.LITERAL_OUT_OF_RANGE, f"literal out of range for `{suf}`",
                                     e.span, f"`{suf}` holds {lo}..={hi}")
                             .with_help(literal_range_help(tcx, e, dt)))
            return ScalarT(dt)
        case ast.FloatLit(suffix=suf, value=v):
            if suf is None:
                if math.isinf(v):
                    float_out_of_range(tcx, e, DType.F64)
                return UNTYPED_FLOAT
            dt = DType.parse(suf)
            if dt is None or not dt.is_float:
                return tcx.emit(tcx.err(T.INVALID_CAST, f"invalid suffix `{suf}` for a float literal",
                                        e.span)
                                .with_help("float suffixes are `f16 bf16 f32 f64`"))
            if math.isinf(v) or float_literal_overflows(v, dt, e.text):
                float_out_of_range(tcx, e, dt)
            return ScalarT(dt)
        case ast.BoolLit():
            return BOOL
        case ast.StrLit():
            return StrT()
        case ast.Name(ident=ident):
            return check_name(tcx, e, ident, fx)
        case ast.Path():
            sym = resolve_path(tcx, e, fx, want_fn=False)
            if sym is None:
                return ERROR
            tcx.program.symbols[e] = sym
            if sym.kind is SymbolKind.CONST:
                tcx.eval_const(sym.qualname or sym.name)
                if sym.dim is not None:
                    tcx.program.dims[e] = sym.dim
                return const_type(sym)
            if sym.kind in (SymbolKind.FN, SymbolKind.KERNEL):
                return fn_as_value(tcx, e, sym, "::".join(s.name for s in e.segments))
            return sym.ty or ERROR
        case ast.Call():
            return check_call(tcx, e, fx, expected)
        case ast.MethodCall():
            return check_method_call(tcx, e, fx, expected)
        case ast.Field(receiver=r, field=f):
            known = module_member(tcx, e, fx)
            if known is not None:
                return known
            rty = tcx.check_expr(r, fx, None)
            if is_poison(rty):
                return ERROR
            if isinstance(rty, TupleT) and f.name.isdigit():
                i = int(f.name)
                if i < len(rty.elems):
                    if isinstance(r, ast.Name) and (sym := tcx.program.symbols.get(r)) in tcx.mut_tuples:
                        tcx.mut_tuples[sym][1].append(e)  # type: ignore[index]
                    return rty.elems[i]
                return tcx.emit(tcx.err(T.NO_FIELD, f"no field `{i}` on type `{rty}`", f.span,
                                        f"the tuple has {plural(len(rty.elems), 'element')}")
                                .with_help(f"use a field from `.0` to `.{len(rty.elems) - 1}`"))
            d = tcx.err(T.NO_FIELD, f"no field `{f.name}` on type `{rty}`", f.span, "unknown field")
            return tcx.emit(_field_help(tcx, d, r, f.name, rty))
        case ast.Index(receiver=r, index=ix):
            rty = tcx.check_expr(r, fx, None)
            ity = tcx.check_expr(ix, fx, None)
            if is_poison(rty, ity):
                return ERROR
            if isinstance(rty, ShapeT):
                if not is_intlike(ity):
                    return tcx.emit(tcx.err(T.MISMATCHED_TYPES, "mismatched types", ix.span,
                                            f"expected an integer index, found `{ity}`")
                                    .with_help("cast the index with `as i32`"))
                settle(tcx, ix, I32)
                k = tcx.program.dims.get(ix)
                kv = k.const_value if k is not None else None
                if kv is None and fx.in_kernel:
                    return tcx.emit(tcx.err(T.NOT_CONSTANT, "a shape index in a kernel must be a constant",
                                            ix.span, "not a constant")
                                    .with_help("write the index as a literal, e.g. `k.shape()[1]`"))
                if kv is not None and rty.rank is not None and not 0 <= kv < rty.rank:
                    return tcx.emit(tcx.err(T.NO_FIELD, f"index {kv} is out of range for a shape of "
                                            f"rank {rty.rank}", ix.span, "out of range")
                                    .with_help(f"a shape of rank {rty.rank} has indices 0..{rty.rank}"))
                sv = tcx.shape_values.get(r)
                if sv is None and isinstance(r, ast.Name):
                    s = tcx.program.symbols.get(r)
                    sv = s.value if s is not None and isinstance(s.value, tuple) else None
                if sv is not None and kv is not None and 0 <= kv < len(sv) and sv[kv] is not None:
                    tcx.program.dims[e] = sv[kv]  # type: ignore[assignment]
                return I32
            if isinstance(rty, TupleT):
                return tcx.emit(tcx.err(T.NO_FIELD, "tuples are indexed with `.0`, `.1`, ...", e.span,
                                        "cannot index a tuple with `[]`")
                                .with_help("write `t.0`, `t.1`, ..."))
            host = deref(rty)
            if isinstance(host, TensorT) and not fx.in_kernel:
                return _index_tensor(tcx, e, host, ix, ity)
            if isinstance(rty, ScalarT) and not fx.in_kernel and isinstance(r, ast.Index):
                # `x[2][1]` of a 1-D tensor: `x[2]` is already one element
                return tcx.emit(tcx.err(T.INVALID_OPERAND, f"cannot index a value of type `{rty}`", e.span,
                                        "not indexable")
                                .note(f"`{tcx.snippet(r) or 'x[i]'}` is one element, a scalar: a tensor takes "
                                      "one index per axis")
                                .with_help(f"drop the last index: `{tcx.snippet(r) or 'x[i]'}`"))
            hint = "index host tensors and shapes; in a kernel, load another tile or use `where`"
            if isinstance(host, TensorT) and fx.in_kernel:  # `off[b]` of a tensor parameter (round 13)
                return tcx.emit(_kernel_tensor_index(tcx, e, r, ix, rty, host))
            if isinstance(rty, TileT) and len(rty.shape) == 1:
                n = rty.shape[0].const_value
                if n is None and str(rty.shape[0]).isidentifier():
                    n = str(rty.shape[0])  # a const generic's name: `arange::<i32>(B)` (round 9)
                t = tcx.snippet(r) or "t"
                t = t if t.isidentifier() else "t"
                if isinstance(ix, ast.RangeExpr):  # `t[1..5]`: a window of a tile
                    hint = ("a tile has no slices: read the window as a tile of its own (a view's tile of size 1 "
                            "along an axis starts at any position), or move elements with a 0/1 matrix through "
                            "`dot` (see `tilec doc kernels`)")
                    nw = n if n is not None else f"({rty.shape[0]})" if len(str(rty.shape[0])) < 20 else None
                    if nw is not None:
                        n = nw
                        # (huser30: a head's quarter `merged[p * 16..(p + 1) * 16]` of a flash-decoding merge: a
                        # window at a multiple of its length L is a row of the tile reshaped [N / L, L], picked
                        # exactly with a mask and a sum; the 0/1 product costs N x L multiplies)
                        i, ln = _aligned_window(tcx, ix) or ("i", "L")
                        rows = f"{n} / {ln}" if not (isinstance(n, int) and ln.isdigit()) else str(n // int(ln))
                        hint = (f"a tile has no slices: a window of {ln} elements starting at a multiple of {ln} is row "
                                f"{i} of `{t}.reshape([{rows}, {ln}])`, picked with a mask and a sum: "
                                f"`where(arange::<i32>({rows}).reshape([{rows}, 1]) == {i}, {t}.reshape([{rows}, "
                                f"{ln}]), 0.0).sum(0)`; another window: read it as a tile of its own (a view's tile "
                                "of size 1 along an axis starts at any position), or move elements with a 0/1 matrix "
                                "through `dot` (see `tilec doc kernels`)")
                elif n is not None:  # `t[i]`: one element, as a scalar
                    i = tcx.snippet(ix) or "i"
                    hint = (f"pick one element with a mask and a sum: `where(arange::<i32>({n}) == {i}, {t}, 0).sum(0)`"
                            if len(i) < 30 else hint)
            elif isinstance(rty, TileT) and len(rty.shape) >= 2 and not isinstance(ix, ast.RangeExpr):
                hint = _tile_row_help(tcx, e, r, ix, rty) or hint
            return tcx.emit(tcx.err(T.INVALID_OPERAND, f"cannot index a value of type `{rty}`", e.span,
                                    "not indexable")
                            .note("tiles are whole values: use `where`, reductions or `reshape`")
                            .with_help(hint))
        case ast.Unary(op=op, operand=x):
            return check_unary(tcx, e, op, x, fx, expected)
        case ast.Binary(op=op, lhs=lhs, rhs=rhs):
            if op in COMPARE:
                note_loose_bitwise(tcx, e)
            if e in tcx.store_dtypes and op in ("+", "-", "*", "/", "%"):  # the stored type holds its operands'
                tcx.store_dtypes[lhs] = tcx.store_dtypes[rhs] = tcx.store_dtypes[e]
            lt = tcx.check_expr(lhs, fx, expected if op not in (*COMPARE, "&&", "||") else None)
            rt = tcx.check_expr(rhs, fx, lt if isinstance(lt, (ScalarT, TileT)) else expected
                                if op not in (*COMPARE, "&&", "||") else None)
            if isinstance(lt, (UntypedInt, UntypedFloat)) and isinstance(rt, (ScalarT,)):
                pass
            ty = binary_types(tcx, op, lt, rt, lhs, rhs, e.op_span, fx, stored=tcx.store_dtypes.get(e))
            a, b = tcx.program.dims.get(lhs), tcx.program.dims.get(rhs)
            if op in ("/", "%") and b is not None and b.const_value == 0 and is_intlike(rt) \
                    and (is_intlike(lt) or (isinstance(lt, TileT) and elem_is_int(lt.dtype)
                                            and (_literal_zero(rhs) or isinstance(rt, ScalarT) or isinstance(rhs, ast.Name)))):
                # a tile of integers by a literal zero too (`t / 0`): the instance refused it at `tilec run`
                # (lower/exprs, E0226) after `tilec check` passed it (huser29); and by a named or typed value known
                # to be 0 (`let zero = 0; t / zero`: a `let`'s value is fixed in its own type there, `i32` for an
                # untyped one, overflow refused, so its fold is exact). Not an untyped constant expression written
                # beside the tile: the instance computes it in the tile's type while the dims here fold it in `i32`
                # (`x % (100 << 32)` of an `i64` tile is 0 here, tests/run/untyped_shift_in_wide_context.tile)
                div_by_zero(tcx, op, rhs)
                return ERROR
            if a is not None and b is not None and is_intlike(lt) and is_intlike(rt):
                try:
                    d = dim_op(op, a, b)
                except ZeroDivisionError:
                    d = None
                if d is not None and op in ("<<", ">>") and d.const_value is not None:
                    # `(1 << 31) >> 28` is -8, as it runs; an untyped shift in the width its context gives
                    # (`x % (100 << 32)` of an `i64` `x` is not a remainder by zero: hrev16, generic_diff --const)
                    wide = isinstance(ty, UntypedInt) and isinstance(expected, ScalarT) and \
                        isinstance(expected.dtype, DType) and expected.dtype.is_int
                    d = Dim.const(shift_wrap(expected if wide else ty, d.const_value))
                if d is not None:
                    tcx.program.dims[e] = d
                    if isinstance(ty, ScalarT):
                        check_overflow(tcx, e, ty)
                elif op in ("<<", ">>") and isinstance(ty, ScalarT) and a.const_value is not None \
                        and b.const_value is not None:
                    # a constant shifted by 64 or more has no value here (`dim_op`), but it overflows as
                    # `3u8 >> 8u8` does: `3u8 >> 200u8` passed, and only a kernel's lowering refused it
                    check_overflow(tcx, e, ty)
            return ty
        case ast.Cast(expr=x, ty=te):
            return check_cast(tcx, e, x, te, fx)
        case ast.Ref(mutable=m, expr=x):
            ity = tcx.check_expr(x, fx, None)
            if is_poison(ity):
                return ERROR
            if isinstance(ity, RefT):
                if m and not ity.mutable:
                    return tcx.emit(tcx.err(T.MISMATCHED_TYPES, "cannot borrow a `&` reference as "
                                            "mutable", e.span, f"`{tcx.snippet(x)}` is `{ity}`")
                                    .with_help("declare the parameter `&mut`, or borrow a `mut` tensor"))
                return RefT(m, ity.inner)  # re-borrow
            return RefT(m, ity)
        case ast.TupleExpr(elems=elems):
            if not elems:
                return UNIT
            want = expected.elems if isinstance(expected, TupleT) and \
                len(expected.elems) == len(elems) else (None,) * len(elems)
            # a list, not `tuple(<generator>)`: no recursion through C (Python 3.12's fixed limit)
            return TupleT(tuple([tcx.check_expr(x, fx, w) for x, w in zip(elems, want, strict=False)]))
        case ast.ArrayExpr(elems=elems):
            dims: list[Dim | None] = []
            tys = [tcx.check_expr(x, fx, None) for x in elems]
            values = [x for x, t in zip(elems, tys, strict=True) if _is_value(t) and _is_literal(x)]
            if values:  # `[0.25, 0.5, 0.25]`: a list of values, which Tile has not (not a shape to cast)
                return tcx.emit(tcx.err(T.MISMATCHED_TYPES, "Tile has no lists of values", values[0].span,
                                        f"expected an integer, found `{tcx.program.types[values[0]]}`")
                                .note("`[..]` lists a shape or a tile index, whose elements are integers")
                                .with_help(_value_list_help(tcx, elems)))
            for x, t in zip(elems, tys, strict=True):
                if isinstance(t, TileT) and x in tcx.atomic_indexes and any(str(d) != "1" for d in t.shape):
                    # a scatter (a one-element tile is `.item()`, `_index_help`): the atomic's rule says how
                    tcx.scatters.setdefault(tcx.atomic_indexes[x], (x, t))
                elif not is_poison(t) and not is_intlike(t):
                    tcx.emit(tcx.err(T.MISMATCHED_TYPES, "mismatched types", x.span,
                                     f"expected an integer, found `{t}`")
                             .note("`[..]` lists shapes and tile indices, which are integers")
                             .with_help(_not_a_number(t, _index_help(tcx, x, t))))
                before = len(tcx.sink.diagnostics)
                if isinstance(t, UntypedInt):
                    # an untyped dimension or index is an `i32`: its literals
                    # are range-checked and its constant arithmetic
                    # overflow-checked, as anywhere else (no silent wrap)
                    settle(tcx, x, I32)
                # a value refused there (out of range, overflowing) is unknown
                # here: no second error about a shape it does not have
                refused = any(d.severity.value == "error" for d in tcx.sink.diagnostics[before:])
                dims.append(None if refused else tcx.program.dims.get(x))
            tcx.shape_values[e] = tuple(dims)
            if len(elems) > MAX_RANK:
                return rank_limit(tcx, e.span, len(elems))
            return ShapeT(len(elems))
        case ast.RangeExpr(start=s, end=en):
            st = tcx.check_expr(s, fx, None)
            et = tcx.check_expr(en, fx, st if isinstance(st, ScalarT) else None)
            if is_poison(st, et):
                return RangeT(ERROR)
            if not is_intlike(st) or not is_intlike(et):
                bad = s if not is_intlike(st) else en
                tcx.emit(tcx.err(T.MISMATCHED_TYPES, "ranges are over integers", bad.span,
                                 f"expected an integer, found `{tcx.program.types[bad]}`")
                         .with_help(_not_a_number(bt := tcx.program.types[bad], _index_help(tcx, bad, bt)
                                                  if isinstance(bt, TileT) else "cast the bounds with `as i32`")))
                return RangeT(ERROR)
            if isinstance(st, ScalarT) and isinstance(et, ScalarT) and st != et:
                tcx.emit(tcx.err(T.MISMATCHED_DTYPES, f"mismatched dtypes: `{st}` and `{et}`", e.span,
                                 "both ends of a range must have the same type")
                         .with_help(f"cast with `as`: `{tcx.cast_snippet(en)} as {st}`"))
                return RangeT(ERROR)
            elem = st if isinstance(st, ScalarT) else et if isinstance(et, ScalarT) else I32
            settle(tcx, s, elem)
            settle(tcx, en, elem)
            return RangeT(elem)
        case ast.Block():
            if e in tcx.store_dtypes and e.tail is not None:  # a block's value is its tail's
                tcx.store_dtypes[e.tail] = tcx.store_dtypes[e]
            return tcx.check_block(e, fx, expected)
        case ast.If(cond=c, then=then, else_=els):
            if e in tcx.store_dtypes:  # returned or stored: so is each branch's value (round 12, fuzz seed 281)
                for b in (then, els):
                    if isinstance(b, ast.Block) and b.tail is not None:
                        tcx.store_dtypes[b.tail] = tcx.store_dtypes[e]
            tails = [b.tail for b in (then, els) if isinstance(b, ast.Block) and not b.stmts and b.tail is not None]
            branches = tuple(tcx.snippet(t) for t in tails) if len(tails) == 2 else None
            tile_cond = expect_bool(tcx, c, fx, allow_tile=False, branches=branches)
            outer, axis = fx.last_block, last_block_axis(c)
            if axis is not None:
                fx.last_block = axis
            fx.regions.append((len(fx.scopes), e.span, "branch"))
            try:
                tt = tcx.check_block(then, fx, expected)
            finally:
                fx.last_block = outer
                fx.regions.pop()
            if els is None:
                if not is_poison(tt) and not isinstance(tt, UnitT) and expected is not None \
                        and not isinstance(expected, UnitT):
                    tcx.emit(tcx.err(T.MISMATCHED_TYPES, "`if` may be missing an `else` clause", e.span,
                                     f"expected `{tt}`, found `()`")
                             .with_help("add an `else` branch with a value"))
                    return ERROR
                return UNIT
            fx.regions.append((len(fx.scopes), e.span, "branch"))
            try:
                et = tcx.check_expr(els, fx, expected or (tt if not is_poison(tt) else None))
            finally:
                fx.regions.pop()
            if tile_cond:  # `if t > 0.0 { t } else { 0.0 }`: `where` is the fix, not "make both branches `..`"
                return ERROR
            joined = _join(tcx, tt, et, then, els)
            if fx.in_kernel and _holds_view(joined) and _run_time_cond(tcx, c, fx):
                _view_if(tcx, e, joined)
            return joined
        case ast.UnsafeBlock(body=b):
            fx.unsafe += 1
            try:
                return tcx.check_block(b, fx, expected)
            finally:
                fx.unsafe -= 1
        case ast.GraphBlock(body=b):
            if fx.in_kernel:
                tcx.check_block(b, fx, None)
                return tcx.emit(tcx.err(T.HOST_ONLY, "`graph` is only allowed in host code", e.span,
                                        "inside a kernel")
                                .with_help("record launches in a `graph { .. }` block in `main`"))
            fx.graph += 1
            try:
                tcx.check_block(b, fx, None)
            finally:
                fx.graph -= 1
            return GraphT()
        case _:
            assert_never(e)


def _join(tcx: CheckCx, a: Type, b: Type, na: Any, nb: Any) -> Type:
    if isinstance(a, NeverT):
        return b
    if isinstance(b, NeverT):
        return a
    if is_poison(a, b):
        return ERROR
    if a == b:
        return a
    if coerce(tcx, b, a, nb):
        settle(tcx, nb, a)
        return a
    if coerce(tcx, a, b, na):
        settle(tcx, na, b)
        return b
    if isinstance(a, TensorT) and isinstance(b, TensorT) and a.dtype == b.dtype:
        if a.shape is None or b.shape is None or len(a.shape) != len(b.shape):
            return TensorT(a.dtype, None)
        return TensorT(a.dtype, tuple(x if x == y else None for x, y in zip(a.shape, b.shape, strict=False)))
    tcx.emit(tcx.err(T.MISMATCHED_TYPES, "`if` and `else` have incompatible types", nb.span,
                     f"expected `{a}`, found `{b}`")
             .secondary(na.span, f"this is `{a}`")
             .with_help(f"make both branches `{a}` (cast one with `as`)"))
    return ERROR


def expect_bool(tcx: CheckCx, c: ast.Expr, fx: Fx, allow_tile: bool = False,
                branches: tuple[str, ...] | None = None) -> bool:
    """Check a condition; True where it is a tile of `bool`s (reported), whose `if`'s branches are then not
    compared: `branches` (the two values of an `if`/`else` expression) go into the `where` of the help."""
    ty = tcx.check_expr(c, fx, BOOL)
    if is_poison(ty) or ty == BOOL:
        return False
    x = tcx.snippet(c) or "c"
    x = x if len(x) < 40 else "c"
    if isinstance(ty, TileT) and ty.dtype is DType.BOOL:
        yes, no = branches if branches and all(0 < len(b) < 40 for b in branches) else ("yes", "no")
        d = tcx.err(T.MISMATCHED_TYPES, "a condition must be a single `bool`", c.span, f"this is a `{ty}`")
        if all(dim.const_value == 1 for dim in ty.shape):  # (round 21) `m > worst` of `m = t.max(1)`: `.item()`
            sides = [o for o in ((c.lhs, c.rhs) if isinstance(c, ast.Binary) else ())
                     if isinstance(tcx.program.types.get(o), TileT) and len(tcx.snippet(o) or "") < 30]
            one = tcx.snippet(sides[0]) if len(sides) == 1 else None
            tcx.emit(d.with_help(f"`{one}` is a tile of one element: its value is `{one}.item()`" if one else
                                 f"a tile of one element: its value is `({x}).item()`"))
            return True
        tcx.emit(d.with_help(f"select element-wise with `where({x}, {yes}, {no})`, or reduce the tile to one "
                             f"`bool` first: `{tcx.cast_snippet(c) if len(x) < 40 else x}.min()` is true when all "
                             "are, `.max()` when any is"))
        return True
    d = tcx.err(T.MISMATCHED_TYPES, "mismatched types", c.span, f"expected `bool`, found `{ty}`")
    if isinstance(ty, TensorT) and ty.dtype is DType.BOOL:  # NumPy's "truth value of an array is ambiguous"
        d = d.with_help(f"a comparison of tensors is a tensor of `bool`s: all of them is `({x}).min()`, any "
                        f"`({x}).max()`; whole tensors compare with `assert_close(&a, &b)`")
    tcx.emit(d.with_help("compare it, e.g. `x != 0`") if not d.help else d)
    return False


def _index_tensor(tcx: CheckCx, e: ast.Index, t: TensorT, ix: ast.Expr, ity: Type) -> Type:
    """Host tensors: `t[i]` removes the first axis (an element of a 1-D
    tensor is a scalar), `t[a..b]` keeps the rows a..b; both copy. The bounds
    are checked at run time (E0721); `t[i][j]` indexes further."""
    if t.shape is None:
        return tcx.emit(tcx.err(T.INVALID_OPERAND, "cannot index a tensor whose rank is unknown", e.span,
                                f"this is `{t}`")
                        .with_help("give it a shape first, e.g. `.reshape([n])`"))
    if not t.shape:
        return tcx.emit(tcx.err(T.INVALID_OPERAND, "cannot index a 0-D tensor", e.span,
                                "it has no axis to index")
                        .with_help("a 0-D tensor is one value: read it with `.item()`"))
    if isinstance(ity, RangeT):
        if not is_intlike(ity.elem) and not is_poison(ity.elem):
            return tcx.emit(tcx.err(T.MISMATCHED_TYPES, "a slice is a range of integers", ix.span,
                                    f"found `{ity}`")
                            .with_help("write the bounds as integers, e.g. `t[0..n]`"))
        assert isinstance(ix, ast.RangeExpr)
        lo, hi = tcx.program.dims.get(ix.start), tcx.program.dims.get(ix.end)
        n: Dim | None = None
        if lo is not None and hi is not None and lo.const_value is not None and hi.const_value is not None:
            end = hi.const_value + (1 if ix.inclusive else 0)
            n = Dim.const(max(0, end - lo.const_value))
            _constant_bounds(tcx, ix, t.shape[0], lo.const_value, end)
        return TensorT(t.dtype, (n, *t.shape[1:]))
    if not is_intlike(ity):
        help_ = "index with an integer (`t[i]`) or a range (`t[a..b]`)"
        if isinstance(deref(ity), (TensorT, TileT)) and deref(ity).dtype is DType.BOOL:  # NumPy's `x[x > 3.0]`
            m, x = tcx.snippet(ix) or "m", tcx.snippet(e.receiver)
            x = x if x and len(x) < 30 else "x"
            m = m if len(m) < 40 else "m"
            xt = deref(tcx.program.types.get(e.receiver))
            zero = "0" if isinstance(xt, TensorT) and isinstance(xt.dtype, DType) and xt.dtype.is_int else "0.0"
            help_ = (f"Tile has no selection by a mask (its length would depend on the values): keep the shape, "
                     f"`where({m}, {x}, {zero})`, and count the selected with `(({m}) as i32).sum()`")
        return tcx.emit(tcx.err(T.MISMATCHED_TYPES, "mismatched types", ix.span,
                                f"expected an integer index or a range `a..b`, found `{ity}`")
                        .with_help(help_))
    settle(tcx, ix, I32)
    i = tcx.program.dims.get(ix)
    if i is not None and i.const_value is not None:
        _constant_bounds(tcx, ix, t.shape[0], i.const_value, None)
    if len(t.shape) == 1:
        return ScalarT(t.dtype)  # type: ignore[arg-type]
    return TensorT(t.dtype, t.shape[1:])


def _constant_bounds(tcx: CheckCx, ix: ast.Expr, axis: Dim | None, lo: int, hi: int | None) -> None:
    """E0721 at check time: a constant index (`hi` None) or slice `lo..hi`
    outside an axis whose length is a constant (the run-time check, with the
    same message, stays for every other index)."""
    n = axis.const_value if axis is not None else None
    if n is None:
        return
    bad = index_out_of_bounds(n, lo) if hi is None else slice_out_of_bounds(n, lo, hi)
    if bad is None:
        return
    tcx.emit(tcx.err(HOST_INDEX, bad.message, ix.span, bad.label)
             .note("the index and the tensor's length are both known before the program runs")
             .with_help(bad.help))


def _field_help(tcx: CheckCx, d: Diagnostic, r: ast.Expr, name: str, rty: Type) -> Diagnostic:
    """What `x.T`, `x.shape` or `x.dtype` is spelt in Tile (NumPy/PyTorch habits)."""
    if isinstance(rty, TupleT):
        return d.with_help(f"a tuple's fields are numbered: `.0` to `.{len(rty.elems) - 1}`" if rty.elems
                           else "the empty tuple has no fields")
    if not isinstance(deref(rty), (TensorT, TileT)):
        if name == "await":  # Rust's async (round 21: "a `Op<add>` has no fields; call a method")
            return d.with_help("Tile has no `async`/`.await`: `.sync()` runs an operation and waits for it; "
                               "`.launch()` starts it and returns a handle to `.wait()` on")
        if name in ("sync", "launch", "wait", "replay"):  # `op.sync` without the call's `()`
            x = tcx.snippet(r) or "x"
            return d.with_help(f"`{name}` is a method: `{x if len(x) < 40 else 'x'}.{name}()`")
        return d.with_help(f"a `{rty}` has no fields; call a method (`x.name(..)`) or a function instead")
    x = tcx.snippet(r) or "x"
    x = x if len(x) < 30 else "x"
    if isinstance(rty, TileT) and name in ("shape", "size", "ndim", "shapes"):
        return d.with_help(tile_dims_help(rty))
    if name in ("T", "mT"):
        return d.with_help(f"`{x}.transpose()` swaps the two axes")
    if name in METHODS:
        return d.with_help(f"`{name}` is a method: `{x}.{name}()`")
    if name in ("dtype", "ndim", "size"):
        return d.with_help(f"the type `{rty}` says it; `{x}.shape()` lists the sizes of the axes")
    if name in ("values", "indices") and isinstance(r, ast.MethodCall) and r.method.name in ("max", "min"):
        # PyTorch's `t.max(1).values` / `.indices` (round 16): the call is the values; the indices an argmax
        t = tcx.snippet(r.receiver) or "t"
        args = ", ".join(tcx.snippet(a.value) or "" for a in r.args)
        arg = f"`{t}.arg{r.method.name}({args})`"
        return d.with_help(f"`{x}` is the values already" if name == "values" else f"the indices are {arg}")
    return d.with_help(f"tiles and tensors have no fields: use their methods (`{x}.shape()`, `{x}.sum()`, ..)")


def _holds_view(ty: Type) -> bool:
    """A type no branch of device code can give: a tensor, a view (or a tuple holding one). A
    string can be neither, but where it can go (`print`'s format) it says so itself (E0232)."""
    if isinstance(ty, TupleT):
        return any(_holds_view(t) for t in ty.elems)
    return isinstance(ty, (RefT, TensorT, PartitionT, TileViewT))


def _run_time_cond(tcx: CheckCx, c: ast.Expr, fx: Fx) -> bool:
    """A condition surely known only at run time: it reads a kernel's scalar parameter or
    `block_id`/`num_blocks` (a constant one, `B > 2`, is decided when the kernel is
    compiled, and the lowering keeps one branch)."""
    for n in ast.walk(c):
        if isinstance(n, ast.Call) and isinstance(n.callee, ast.Name) and \
                n.callee.ident.name in ("block_id", "num_blocks"):
            return True
        if isinstance(n, ast.Name) and fx.info is not None and fx.info.is_kernel:
            sym = tcx.program.symbols.get(n)
            if sym is not None and sym.kind is SymbolKind.PARAM:
                return True
    return False


def _view_if(tcx: CheckCx, e: ast.If, ty: Type) -> None:
    """E0701 where `tilec check` can see it (the lowering refuses it at the launch)."""
    tcx.emit(tcx.err(KERNEL_UNSUPPORTED, f"an `if` in device code that gives `{ty}`, with a condition known "
                     "only at run time", e.span, "no branch of device code can give a tensor or a view")
             .secondary(e.cond.span, "known only at run time")
             .note("only numbers, tiles and tuples of them are carried out of a branch")
             .with_help("load in each branch and let the `if` give the tile: `let t = if c { y.load(..) } "
                        "else { x.load(..) };`"))


def _is_value(t: Type) -> bool:
    """A float or `bool` scalar: what no shape or index holds (a list of them is a list of values)."""
    return isinstance(t, UntypedFloat) or isinstance(t, ScalarT) and isinstance(t.dtype, DType) and \
        (t.dtype.is_float or t.dtype is DType.BOOL)


def _unsigned(x: ast.Expr) -> ast.Expr:
    while isinstance(x, ast.Unary):
        x = x.operand
    return x


def _is_literal(x: ast.Expr) -> bool:
    """`0.25`, `-1.5`, `true`: a value written out (a float variable in an index is a cast's business)."""
    return isinstance(_unsigned(x), (ast.FloatLit, ast.BoolLit))


def _value_list_help(tcx: CheckCx, elems: tuple[ast.Expr, ...] | list[ast.Expr]) -> str:
    """How to hold a few values: a constant each, or a tile of them picked by position (for a short list of
    literals, written out: `where(i == 0, 0.25, where(i == 1, 0.5, 0.25))` with `i = arange::<i32>(3)`)."""
    texts = [tcx.snippet(x) or "" for x in elems]
    base = "name each value (`const W0: f32 = ..;`), or pass them in a tensor"
    if not 2 <= len(texts) <= 6 or not all(t and len(t) < 16 and " " not in t for t in texts) \
            or not all(_is_literal(x) or isinstance(_unsigned(x), ast.IntLit) for x in elems):
        return base
    n = len(texts)
    expr = texts[-1]
    for k in range(n - 2, -1, -1):
        expr = f"where(arange::<i32>({n}) == {k}, {texts[k]}, {expr})"
    return f"{base}; a tile of them, element k the k-th: `{expr}`"


def _index_help(tcx: CheckCx, x: ast.Expr, t: Type) -> str:
    """E0203's help for a value in `[..]` that is no integer: a cast for a scalar; a tile's value for a tile
    (`[o]` with `o` a one-element tile loaded from an offsets tensor: `o.item()`, where a cast keeps a tile)."""
    if isinstance(t, TileT):
        v = tcx.snippet(x) or "t"
        v = v if len(v) < 30 else "t"
        if all(str(d) == "1" for d in t.shape):
            cast = "" if isinstance(t.dtype, DType) and t.dtype.is_int else " as i32"
            return f"`{v}` is a tile of one element: its value is `{v}.item(){cast}`"
        if x in tcx.gather_indexes and isinstance(t.dtype, DType) and t.dtype.is_int:
            return _gather_help(v, t)
        return (f"an index is one number, and `{v}` is a `{t}`: reduce it to one (`.max(0)`, `.sum(0)`), or "
                "take `.item()` of a one-element tile")
    return "cast it with `as i32`, or compute the index in integers"


def _gather_help(v: str, t: TileT) -> str:
    """E0203's help for a tile of indices in a load's `[..]` (round 30: Triton's `tl.load(x_ptr + cols)`, a
    gather, written `x.partition([1]).load([cols])`; the help said to reduce the indices to one number, which
    checks and reads one element for all of them)."""
    n = str(t.shape[-1]) if len(t.shape) == 1 else "B"
    return (f"a load reads one tile at one tile index, and `{v}` is a `{t}` of them: Tile has no gather of "
            f"elements by a tile of indices. Read one element an index, `for j in 0..{n} {{ let k = where("
            f"arange::<i32>({n}) == j, {v}, 0).sum(0); .. x.partition([1]).load([k]).item() .. }}`; a row an index "
            f"with one block an index (`table.partition([1, D]).load([id, 0])`); or, where the indexed tensor is "
            f"short (N elements), a one-hot against all of it: `where({v}.reshape([{n}, 1]) == "
            f"arange::<i32>(N).reshape([1, N]), x.partition([N]).load([0]).reshape([1, N]), 0.0).sum(1)`")


def _tile_row_help(tcx: CheckCx, e: ast.Index, r: ast.Expr, ix: ast.Expr, t: TileT) -> str | None:
    """`m[i]` or `m[i][j]` of a tile of rank 2 or more (round 14: a Cholesky's `m[j][j]`): a mask along
    axis 0 (and axis 1 for `[i][j]` of a 2-D tile) and a sum over it."""
    def size(d: Dim) -> str | None:
        return str(d.const_value) if d.const_value is not None else str(d) if str(d).isidentifier() else None

    n, name, i = size(t.shape[0]), tcx.snippet(r) or "t", tcx.snippet(ix) or "i"
    name = name if name.isidentifier() else "t"
    if n is None or len(i) > 30:
        return None
    mask = f"arange::<i32>({n}).reshape([{n}{', 1' * (len(t.shape) - 1)}]) == {i}"
    j = _next_index(tcx, e) if len(t.shape) == 2 else None
    m = size(t.shape[1])
    zero, red = ("false", "max") if t.dtype == DType.BOOL else ("0", "sum")  # `bool` has no sum: `max` is "any"
    if j is not None and m is not None:  # `m[i][j]`: one element
        return (f"pick the element with a mask and {red}s: `where(({mask}) & (arange::<i32>({m}).reshape([1, {m}]) "
                f"== {j}), {name}, {zero}).{red}(1).{red}(0)` (`tilec doc kernels`: tiles have no element access)")
    return (f"pick row {i} with a mask and a {red} over axis 0: `where({mask}, {name}, {zero}).{red}(0)`, a tile of "
            f"shape {shape_str(t.shape[1:])}, whose elements are picked the same way (`tilec doc kernels`: tiles "
            "have no element access)")


def _next_index(tcx: CheckCx, e: ast.Index) -> str | None:
    """The `j` of `[j]` right after `e` in the source (`m[i][j]`: the checker meets `m[i]` first), or None."""
    try:
        text = tcx.sources.get(e.span.file).text[e.span.end:e.span.end + 40]
    except Exception:  # noqa: BLE001 (no source: no element form)
        return None
    if not text.startswith("["):
        return None
    depth = 0
    for k, ch in enumerate(text):
        depth += {"[": 1, "]": -1}.get(ch, 0)
        if depth == 0:
            inner = text[1:k].strip()
            return inner if inner and "[" not in inner else None
    return None


def _aligned_window(tcx: CheckCx, r: ast.RangeExpr) -> tuple[str, str] | None:
    """(i, L) of a window written `i * L..(i + 1) * L` or `i * L..i * L + L`, L a literal or a name, or of literals
    `a..b` with `a` a multiple of `b - a`; else None."""
    a, b = r.start, r.end
    if not r.inclusive and isinstance(a, ast.IntLit) and isinstance(b, ast.IntLit) and b.value > a.value \
            and a.value % (b.value - a.value) == 0:   # `qkv[64..128]`
        return str(a.value // (b.value - a.value)), str(b.value - a.value)
    if r.inclusive or not (isinstance(a, ast.Binary) and a.op == "*" and isinstance(b, ast.Binary)):
        return None
    i, ln = tcx.snippet(a.lhs), tcx.snippet(a.rhs)
    if not ln or not (ln.isdigit() or ln.isidentifier()) or not i or len(i) > 30:
        return None
    if b.op == "*" and tcx.snippet(b.rhs) == ln and (tcx.snippet(b.lhs) or "").replace(" ", "") in (
            f"({i}+1)".replace(" ", ""), f"{i}+1".replace(" ", "")):
        return i, ln
    if b.op == "+" and tcx.snippet(b.lhs) == tcx.snippet(a) and tcx.snippet(b.rhs) == ln:
        return i, ln
    return None


def _not_a_number(t: Type, help: str) -> str:
    """`help`, unless `t` is `()`, which no cast makes a number (hrev11:
    `let old = unsafe { atomic_add(..) };` then `0..old`)."""
    if isinstance(t, UnitT):
        return ("this value is `()`: what makes it gives no value (an atomic or `store_unchecked` gives "
                "none back; a block whose last statement ends in `;` is `()`): compute the number another way")
    return help


def _kernel_tensor_index(tcx: CheckCx, e: ast.Index, r: ast.Expr, ix: ast.Expr, rty: Type, t: TensorT) -> Any:
    """`off[b]` of a tensor parameter in a kernel (EmbeddingBag's offsets, a
    CSR row pointer): a kernel reads tensors in tiles; one element is the
    tile of one element at `b`, read as a scalar with `item()`."""
    x = tcx.snippet(r) or "x"
    x = x if x.isidentifier() else "x"
    idx: list[str] = []
    cur: ast.Expr = e
    while isinstance(cur, ast.Index):  # `x[i][j]`: the indices outermost last
        idx.insert(0, tcx.snippet(cur.index) or "i")
        cur = cur.receiver
    rank = len(t.shape) if t.shape is not None else len(idx)
    if isinstance(tcx.program.type_of(e.index), TileT):  # `t[ids]` of a tile of indices: a gather
        help_ = (f"a tile of indices is a gather, which a kernel writes as one-element reads in a loop "
                 f"(`{x}.partition([1]).load([i]).item()` for each index `i`), or as a one-hot sum over a tile "
                 "of the table (`tilec doc gather`)")
    elif len(idx) == 1 and rank > 1:
        help_ = (f"read a row as a tile: `{x}.partition([1, {', '.join(['N'] * (rank - 1))}]).load([{idx[0]}, "
                 f"{', '.join(['0'] * (rank - 1))}])` (N the row's width), or one element: "
                 f"`{x}.partition([{', '.join(['1'] * rank)}]).load([{idx[0]}, {', '.join(['j'] * (rank - 1))}])"
                 ".item()`")
    else:
        full = idx + ["0"] * max(0, rank - len(idx))
        help_ = (f"read one element as a scalar: `{x}.partition([{', '.join(['1'] * rank)}]).load([{', '.join(full)}])"
                 ".item()` (the tile of one element at that index)")
    return (tcx.err(T.INVALID_OPERAND, f"cannot index a tensor parameter in a kernel: `{rty}`", e.span,
                    "not indexable in a kernel")
            .note("a kernel reads tensors in tiles: `load_like`, or `load` of a partition")
            .with_help(help_))


def _literal_zero(e: ast.Expr) -> bool:
    """`0`, `0u8`, `(0)`, `-0`: a divisor written as zero."""
    while isinstance(e, ast.Unary) and e.op == "-":
        e = e.operand
    return isinstance(e, ast.IntLit) and e.value == 0
