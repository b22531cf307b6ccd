"""Expressions with operators: unary and binary operators, casts.

Decides the type of `-x`, `!x` (`check_unary`), of `a op b`
(`binary_types`: the operand kinds that mix, the element type both sides
agree on, the broadcast shape of tiles, comparisons giving `bool`), and of
`x as T` (`check_cast`). Untyped literal operands take the other side's
element type; mismatched dtypes are never converted implicitly (E0201).
"""

from __future__ import annotations

from typing import Any

from tilelang.diagnostics.codes import types as T
from tilelang.dtypes import DType, common_dtype, convert_scalar
from tilelang.sema.coerce import settle
from tilelang.sema.context import CheckCx, Fx
from tilelang.sema.items import resolve_type
from tilelang.sema.typeops import (
    Num,
    deref,
    elem_is_float,
    elem_is_int,
    float_literal_overflows,
    int_range,
    is_intlike,
    is_poison,
    num_of,
)
from tilelang.sema.types import (
    BOOL,
    ERROR,
    F32,
    UNTYPED_FLOAT,
    UNTYPED_INT,
    Dim,
    ElemT,
    PartitionT,
    RefT,
    ScalarT,
    ShapeT,
    TensorT,
    TileT,
    TupleT,
    Type,
    TypeParam,
    UnitT,
    UntypedFloat,
    UntypedInt,
    broadcast_shapes,
    divisibility_gap,
    divisibility_help,
    generic_constant_gap,
    generic_constant_help,
    shape_str,
)
from tilelang.sema.widen import widened_sum_help
from tilelang.source import Span
from tilelang.syntax import ast

COMPARE = ("==", "!=", "<", ">", "<=", ">=")


def check_unary(tcx: CheckCx, e: ast.Unary, op: str, x: ast.Expr, fx: Fx, expected: Type | None) -> Type:
    if op == "-" and isinstance(x, ast.IntLit):
        tcx.negated.add(x)  # `-128i8` is in range although `128i8` is not
    ty = tcx.check_expr(x, fx, expected)
    if is_poison(ty):
        return ERROR
    d = tcx.program.dims.get(x)
    num = num_of(ty, fx.in_kernel)
    if num is None:
        return tcx.emit(tcx.err(T.INVALID_OPERAND, f"cannot apply unary `{op}` to type `{ty}`", e.span,
                                f"`{op}` does not apply to `{ty}`")
                        .with_help(scalar_ref_help(tcx, x, ty, fx) if is_scalar_ref(ty)  # type: ignore[arg-type]
                                   else "cast the operand first with `as`"))
    elem = num.elem
    if op == "-":
        if elem is DType.BOOL or (isinstance(elem, DType) and elem.is_int and not elem.is_signed):
            return tcx.emit(tcx.err(T.INVALID_OPERAND, f"cannot negate a value of type `{ty}`", e.span,
                                    "unsigned or boolean")
                            .with_help("cast to a signed type first, e.g. `x as i32`"))
        if d is not None and is_intlike(ty):
            tcx.program.dims[e] = -d
            if isinstance(ty, ScalarT) and not isinstance(x, ast.IntLit):  # `-300i8`: the literal's E0222
                from tilelang.sema.consts import check_overflow

                check_overflow(tcx, e, ty)  # `-(-128i8)` is 128: E0227, as `127i8 + 1i8` is
        return _result_of(num, ty)
    # `!`: logical not on bool, bitwise not on integers
    if num.kind == "float" or elem_is_float(elem):
        return tcx.emit(tcx.err(T.INVALID_OPERAND, f"cannot apply `!` to type `{ty}`", e.span,
                                "`!` needs `bool` or an integer")
                        .with_help("compare first to get a `bool` (e.g. `x != 0`)"))
    if d is not None and d.const_value is not None and isinstance(ty, ScalarT) and isinstance(elem, DType) \
            and elem.is_int:
        # a constant's bits, so that what it feeds is checked as a literal would be: `(!254u8) >> 63u8`
        # is E0227 here, as `1u8 >> 63u8` is (it passed `tilec check`, and only a kernel's lowering
        # refused it, at the launch)
        tcx.program.dims[e] = Dim.const(elem.wrap(~d.const_value))
    return _result_of(num, ty)  # `!` on bool or integer tensors too (the host runtime has both)


def load_first_help(tcx: CheckCx, node: ast.Expr, ty: Type, fx: Fx) -> str:
    """How to get a tile of the tensor `node` in kernel code, spelled with the
    names at hand: `x.load()` where its shape is static (no `?`), else
    `x.load_like(z)` with a `&mut` parameter `z` of this function, else a
    tile of a partition."""
    t = deref(ty)
    x = tcx.snippet(node)
    if isinstance(t, TensorT) and t.shape is not None and all(d is not None for d in t.shape):
        return f"load a tile first: `{x}.load()` reads all of it"
    own = None
    if fx.info is not None:
        own = next((n for n, pt in zip(fx.info.param_names, fx.info.param_types, strict=False)
                    if isinstance(pt, RefT) and pt.mutable), None)
    if own is not None and own != x:
        return f"load a tile first: `{x}.load_like({own})` reads the tile at `{own}`'s place"
    return f"load a tile first: `{x}.partition([..]).load([..])` reads one tile of it"


def is_scalar_ref(ty: Type) -> bool:
    """`&f32`, `&mut i32`, `&{float}`: a reference to a scalar, which nothing in Tile reads (no `*`)."""
    return isinstance(ty, RefT) and isinstance(ty.inner, (ScalarT, UntypedInt, UntypedFloat))


def scalar_ref_help(tcx: CheckCx, node: ast.Expr, ty: RefT, fx: Fx) -> str:
    """A reference to a scalar in arithmetic: Tile has no `*` to read through one, and `&` lends tensors; a
    parameter `a: &f32` is declared `a: f32` (its callers then pass the value), a `&s` is written `s`; a
    parameter `a: &mut f32` (an out-parameter in Rust) returns the new value instead."""
    x = tcx.snippet(node)
    inner = str(ty.inner).replace("{float}", "f32").replace("{integer}", "i32")
    if fx.info is not None and x in fx.info.param_names and ty.mutable:
        return (f"a scalar is passed by value (`&mut` lends tensors, and Tile has no `*` to write through it): "
                f"declare the parameter `{x}: {inner}` and return the new value (`-> {inner}`); the caller "
                f"assigns it (`s = f(s);`)")
    if fx.info is not None and x in fx.info.param_names:
        return (f"a scalar is passed by value (`&` lends tensors, and Tile has no `*` to read through it): declare "
                f"the parameter `{x}: {inner}`, and its callers pass the value (`s` for `&s`)")
    return (f"a scalar is used by value (`&` lends tensors, and Tile has no `*` to read through it): write the "
            f"`{inner}` itself where this `&` is (`s` for `&s`)")


#: the help for `()` read as a number (an operand, a cast): what gives `()` (huser30: "cannot cast `()` as `f32`"
#: had only "`as` converts a scalar, a tile or a tensor")
UNIT_VALUE_HELP = ("this value is `()`: what makes it gives no value (a block or `if` whose last statement ends in "
                   "`;`, a function without `-> T`, an atomic or `store_unchecked`): drop the `;` after the value, "
                   "or compute the number another way")


def binary_types(tcx: CheckCx, op: str, lt: Type, rt: Type, lhs: ast.Expr, rhs: ast.Expr, op_span: Span,
                 fx: Fx, compound: bool = False, stored: Any = None) -> Type:
    """The type of `lhs op rhs`; `compound`: of `lhs op= rhs`, whose left side
    cannot be cast (the help then casts the right side or the declaration);
    `stored`: the element type of the tile the result is stored into, if it
    is (`z.store(a * b)`: a mix's help casts toward it)."""
    if is_poison(lt, rt):
        return ERROR
    a, b = num_of(lt, fx.in_kernel), num_of(rt, fx.in_kernel)
    if a is None or b is None:
        bad, bt = (lhs, lt) if a is None else (rhs, rt)
        d = tcx.err(T.INVALID_OPERAND, f"cannot apply `{op}` to `{lt}` and `{rt}`", op_span,
                    f"`{op}` is not defined for these types").secondary(bad.span, f"this is `{bt}`")
        if is_scalar_ref(bt):
            d = d.with_help(scalar_ref_help(tcx, bad, bt, fx))  # (a scalar has no tile to load)
        elif isinstance(bt, (RefT, TensorT)) and fx.in_kernel:
            d = d.with_help(load_first_help(tcx, bad, bt, fx))
        elif isinstance(bt, PartitionT):
            d = d.note("a partition only describes tiles for a kernel call").with_help(
                "compute on the tensor (or, in a kernel, on a loaded tile), then partition the result")
        elif op in ("==", "!=") and isinstance(lt, ShapeT) and isinstance(rt, ShapeT) and lt.rank == rt.rank \
                and lt.rank is not None and 0 < lt.rank <= 4:
            # `x.shape() == y.shape()` (round 22: "`==` takes numbers, tiles and tensors"): axis by axis
            a_, b_ = tcx.receiver_snippet(lhs), tcx.receiver_snippet(rhs)
            join = " && " if op == "==" else " || "
            d = d.with_help("compare the sizes axis by axis: `" + join.join(
                f"{a_}[{k}] {op} {b_}[{k}]" for k in range(lt.rank)) + "`")
        elif isinstance(bt, UnitT):
            d = d.with_help(UNIT_VALUE_HELP)   # (huser30: `{ t.sum(0); }` read as a number)
        else:
            d = d.with_help(f"`{op}` takes numbers, tiles and (on the host) tensors")
        return tcx.emit(d)
    if (a.kind == "tensor") != (b.kind == "tensor") and "tile" in (a.kind, b.kind):
        return tcx.emit(tcx.err(T.INVALID_OPERAND, f"cannot apply `{op}` to `{lt}` and `{rt}`", op_span,
                                "tensors and tiles do not mix")
                        .with_help("tiles live in kernels and tensors on the host: load the tensor's tile, or compute on the host"))
    # logical operators
    if op in ("&&", "||"):
        for n, nt, node in ((a, lt, lhs), (b, rt, rhs)):
            if n.elem is not DType.BOOL:
                return tcx.emit(tcx.err(T.INVALID_OPERAND, f"`{op}` needs `bool` operands", node.span,
                                        f"this is `{nt}`")
                                .with_help("compare it first, e.g. `x != 0`"))
        shape = _broadcast_or_err(tcx, a, b, lt, rt, lhs, rhs, op_span)
        if a.kind == "tensor" or b.kind == "tensor":  # element-wise, as on tiles (both sides run)
            return TensorT(DType.BOOL, shape)
        if shape is None:
            return ERROR
        return TileT(DType.BOOL, shape) if shape else BOOL  # type: ignore[arg-type]
    # element type
    if op in ("<<", ">>"):
        # a type parameter `T` is checked at each instance, as for `&`, `|`
        # and `^` (`ir.verify.domain_problem`, both operands of a shift)
        bads = [node for n, node in ((a, lhs), (b, rhs))
                if not (n.kind == "int" or elem_is_int(n.elem) or isinstance(n.elem, TypeParam))]
        for n, nt, node in ((a, lt, lhs), (b, rt, rhs)):
            if node in bads:
                return _int_only(tcx, op, nt, node, op_span, *_int_fix(tcx, op, bads, lhs, rhs, stored))
        elem: ElemT | str | None = a.elem if a.elem is not None else (b.elem if a.kind == "int" and
                                                                       b.kind != "int" else "int")
        if a.kind == "int" and b.kind != "int":
            settle(tcx, lhs, ScalarT(b.elem))  # type: ignore[arg-type]
    else:
        elem = _join_elem(tcx, a, b, lt, rt, lhs, rhs, op, op_span, compound, stored)
        if elem is None:
            return ERROR
    if op in ("&", "|", "^"):  # `%` is fmod on floats, as in Rust
        bads = [node for n, node in ((a, lhs), (b, rhs)) if n.kind == "float" or elem_is_float(n.elem)]
        for n, nt, node in ((a, lt, lhs), (b, rt, rhs)):
            if node in bads:
                return _int_only(tcx, op, nt, node, op_span, *_int_fix(tcx, op, bads, lhs, rhs, stored))
    if op == "%" and elem is DType.BOOL:  # both sides `bool`: both cast
        both = f"({tcx.cast_snippet(lhs)} as i32) % ({tcx.cast_snippet(rhs)} as i32)"
        return _int_only(tcx, op, lt, lhs, op_span, both=both)
    if op in ("<", ">", "<=", ">=") and elem is DType.BOOL:
        # an order of `bool`s: refused in kernels (the lowering's E0204), so on
        # the host and at check time too: one rule (hrev11)
        return tcx.emit(tcx.err(T.INVALID_OPERAND, f"`{op}` is not defined on `bool` values", op_span,
                                "an order of `bool`s")
                        .with_help(f"compare them as numbers: `({tcx.cast_snippet(lhs)} as i32) {op} "
                                   f"({tcx.cast_snippet(rhs)} as i32)`, or say it with `&`, `|` and `!` "
                                   "(`a < b` is `!a & b`)"))
    if op in ("+", "-", "*", "/") and elem is DType.BOOL:
        return tcx.emit(tcx.err(T.INVALID_OPERAND, f"cannot apply `{op}` to `bool` values", op_span,
                                "arithmetic on `bool`")
                        .with_help("convert with `as i32` first"))
    shape = _broadcast_or_err(tcx, a, b, lt, rt, lhs, rhs, op_span)
    if shape is None and not (a.kind == "tensor" or b.kind == "tensor"):
        return ERROR
    # settle literal operands to the resolved element type
    if isinstance(elem, (DType, TypeParam)):
        for n, node in ((a, lhs), (b, rhs)):
            if n.kind in ("int", "float"):
                settle(tcx, node, ScalarT(elem))
    if op in COMPARE:
        if a.kind == "tensor" or b.kind == "tensor":
            return TensorT(DType.BOOL, shape)
        return TileT(DType.BOOL, shape) if shape else BOOL  # type: ignore[arg-type]
    if a.kind == "tensor" or b.kind == "tensor":
        return TensorT(elem if isinstance(elem, (DType, TypeParam)) else None, shape)
    if elem == "int":
        return UNTYPED_INT
    if elem == "float":
        return UNTYPED_FLOAT
    assert isinstance(elem, (DType, TypeParam))
    return TileT(elem, shape) if shape else ScalarT(elem)  # type: ignore[arg-type]


def _int_fix(tcx: CheckCx, op: str, bads: list[ast.Expr], lhs: ast.Expr, rhs: ast.Expr,
             stored: Any) -> tuple[str | None, str | None]:
    """The integer operation written out for `_int_only`'s help: (`back`: stored into floats, the result cast
    back, `((z.load() as i32) << 2) as f32`; `both`: both sides needed a cast, `(a as i32) & 1`, a float
    literal of an integral value written as an integer: `z.load() & 0.0` -> `(z.load() as i32) & 0`)."""
    def side(x: ast.Expr) -> str:
        if x not in bads:
            return tcx.cast_snippet(x)
        if isinstance(x, ast.FloatLit) and float(x.value).is_integer():
            return str(int(float(x.value)))
        return f"({tcx.cast_snippet(x)} as i32)"

    whole = f"{side(lhs)} {op} {side(rhs)}"
    back = f"({whole}) as {stored[0]}" if stored is not None and isinstance(stored[0], DType) and \
        stored[0].is_float else None
    return back, (whole if len(bads) > 1 and back is None else None)


def _int_only(tcx: CheckCx, op: str, ty: Type, node: ast.Expr, op_span: Span, back: str | None = None,
              both: str | None = None) -> Type:
    if op == "%":  # only `bool` gets here: `%` is also fmod on floats
        return tcx.emit(tcx.err(T.INVALID_OPERAND, "`%` needs numeric operands", op_span,
                                "`%` is not defined on `bool`")
                        .secondary(node.span, f"this is `{ty}`")
                        .with_help(f"cast both sides with `as`: `{both}`" if both else
                                   f"cast with `as`: `{tcx.cast_snippet(node)} as i32`"))
    return tcx.emit(tcx.err(T.INVALID_OPERAND, f"`{op}` needs integer operands", op_span,
                            f"`{op}` is only defined for integers")
                    .secondary(node.span, f"this is `{ty}`")
                    .with_help(f"cast both sides with `as`: `{both}`" if both else
                               f"cast to an integer with `as`, and the result back to store it: `{back}`" if back
                               else f"cast with `as`: `{tcx.cast_snippet(node)} as i32`"))


def _float_literal_help(tcx: CheckCx, lit: ast.Expr, other: ast.Expr, stored: Any, op: str = "") -> str:
    """An integer operand with a float literal: the cast written out, to the stored type where the result is
    stored into floats (f32 otherwise); `write an integer` only where the literal is one (`2.0`) and nothing
    stored wants a float: for `x * 0.5` it was a help that changed the value (round 12). Where the result is
    stored into integers, the whole operation with the result cast back (`x as f32` alone led to a store of
    `f32` into `i8`, E0201 again: hrev16)."""
    to = stored[0] if stored is not None and isinstance(stored[0], DType) and stored[0].is_float else DType.F32
    cast = f"`{tcx.cast_snippet(other)} as {to}`"
    value = float(lit.value) if isinstance(lit, ast.FloatLit) else None
    if value is not None and value.is_integer() and abs(value) < 2**31 and to is DType.F32 and stored is None:
        return f"write the integer `{int(value)}`, or cast the other side with `as`: {cast}"
    back = stored[0] if stored is not None and isinstance(stored[0], DType) and stored[0].is_int else None
    a, b = tcx.cast_snippet(other), tcx.snippet(lit)
    if back is not None and op and a and b and len(a) + len(b) <= 60:
        whole = f"{a} as f32 {op} {b}" if other.span.start < lit.span.start else f"{b} {op} {a} as f32"
        return f"compute in `f32` and cast the result back to store it: `({whole}) as {back}`"
    return f"cast the other side with `as`: {cast}"


def note_loose_bitwise(tcx: CheckCx, e: ast.Binary) -> None:
    """`x == 0u32 & m` is `x == (0u32 & m)` and `m & x == 0` is `(m & x) == 0` in Rust and Tile (C's order is
    the other way): record, for each `&`, `|`, `^` written without parentheses between the comparison and the
    operand it took, the expression with the comparison in parentheses, for the help of the `bool` and
    integer mix that follows when a mask was meant (round 23: "cast with `as`: `!zero as u32`")."""
    def text(start: int, end: int) -> str:
        try:
            return tcx.sources.snippet(Span(e.span.file, start, end))
        except Exception:  # noqa: BLE001 - a file without text (none is known): the help quotes nothing
            return "..."

    def bitwise(n: ast.Expr) -> bool:
        return isinstance(n, ast.Binary) and n.op in ("&", "|", "^")

    # `a == b & m & k`: the right side's `&`s down to `b`, none of them in parentheses (a node's span leaves
    # out its own parentheses, its parent's takes them in)
    spine: list[ast.Binary] = []
    n: ast.Expr | None = e.rhs
    if bitwise(n) and n.span.end == e.span.end:
        while isinstance(n, ast.Binary):
            spine.append(n)
            n = n.lhs if bitwise(n.lhs) and n.lhs.span.start == n.span.start else None
    if spine:
        cut = spine[-1].op_span.start
        fix = f"({text(e.span.start, cut).rstrip()}) {text(cut, e.span.end)}"
        tcx.precedence_fixes.update((b.op_span, (e.op, fix)) for b in spine)
    spine, n = [], e.lhs
    if bitwise(n) and n.span.start == e.span.start:
        while isinstance(n, ast.Binary):
            spine.append(n)
            n = n.rhs if bitwise(n.rhs) and n.rhs.span.end == n.span.end else None
    if spine:
        cut = spine[-1].op_span.end
        fix = f"{text(e.span.start, cut)} ({text(cut, e.span.end).lstrip()})"
        tcx.precedence_fixes.update((b.op_span, (e.op, fix)) for b in spine)


def _precedence_help(tcx: CheckCx, op: str, op_span: Span) -> str | None:
    """The help of a `bool` and an integer meeting at `op` (`&`, `|`, `^`) that took an operand of a
    comparison beside it (`note_loose_bitwise`): the comparison was meant first."""
    if op not in ("&", "|", "^") or op_span not in tcx.precedence_fixes:
        return None
    cmp, fix = tcx.precedence_fixes[op_span]
    return f"`{op}` binds tighter than `{cmp}` (as in Rust; C's order is the other way): put the comparison in " \
           f"parentheses: `{fix}`"


def _join_elem(tcx: CheckCx, a: Num, b: Num, lt: Type, rt: Type, lhs: ast.Expr, rhs: ast.Expr, op: str,
               op_span: Span, compound: bool = False, stored: Any = None) -> ElemT | str | None:
    if a.kind in ("int", "float") and b.kind in ("int", "float"):
        return "float" if "float" in (a.kind, b.kind) else "int"
    if a.kind in ("int", "float") or b.kind in ("int", "float"):
        lit, other, lit_node = (a, b, lhs) if a.kind in ("int", "float") else (b, a, rhs)
        oe = other.elem
        if oe is None:  # a host tensor of unknown dtype (`load_npy`): checked at run time
            return "?"
        if lit.kind == "float" and not (elem_is_float(oe) or isinstance(oe, TypeParam)):
            bare = lit_node.operand if isinstance(lit_node, ast.Unary) else lit_node
            what = "a float literal" if isinstance(bare, (ast.FloatLit, ast.IntLit)) else \
                "a float value of untyped numbers"
            tcx.emit(tcx.err(T.MISMATCHED_DTYPES, f"mismatched dtypes: `{oe}` and {what}", op_span,
                             f"no implicit conversion to `{oe}`")
                     .secondary(lit_node.span, what)
                     .with_help(_float_literal_help(tcx, lit_node, rhs if lit_node is lhs else lhs, stored,
                                                    "" if compound else op)))
            return None
        if lit.kind == "int" and oe is DType.BOOL:
            tcx.emit(tcx.err(T.MISMATCHED_DTYPES, "mismatched dtypes: `bool` and an integer literal",
                             op_span, "no implicit conversion to `bool`")
                     .with_help(_precedence_help(tcx, op, op_span)
                                or "write `true` or `false`, or compare the integer (`x != 0`)"))
            return None
        return oe
    ea, eb = a.elem, b.elem
    if ea is None or eb is None:  # host tensor of unknown dtype: checked at run time
        return ea if ea is not None else eb if eb is not None else "?"
    if ea != eb:
        tcx.emit(tcx.err(T.MISMATCHED_DTYPES, f"mismatched dtypes: `{ea}` and `{eb}`", op_span,
                         f"no implicit conversion between `{ea}` and `{eb}`")
                 .secondary(lhs.span, f"this is `{lt}`")
                 .secondary(rhs.span, f"this is `{rt}`")
                 .with_help((DType.BOOL in (ea, eb) and _precedence_help(tcx, op, op_span))
                            or _mixed_help(tcx, lhs, rhs, ea, eb, compound, stored, op)))
        return None
    return ea


def _mixed_help(tcx: CheckCx, lhs: ast.Expr, rhs: ast.Expr, ea: ElemT, eb: ElemT, compound: bool,
                stored: Any = None, op: str = "") -> str:
    """Cast the narrower side; in `acc += x` the target cannot be cast (a
    Triton port's f16 accumulator of an f32 `dot`): cast the right side, or
    declare the target with the wider type. A bitwise operation or shift of
    a float and an integer casts the float to the integer (the float would
    be refused next), and back where the result is stored into floats."""
    if op in ("&", "|", "^", "<<", ">>") and not compound and isinstance(ea, DType) and isinstance(eb, DType) \
            and ea.is_float != eb.is_float and DType.BOOL not in (ea, eb):
        it = eb if ea.is_float else ea
        whole = (f"({tcx.cast_snippet(lhs)} as {it}) {op} {tcx.cast_snippet(rhs)}" if ea.is_float else
                 f"{tcx.cast_snippet(lhs)} {op} ({tcx.cast_snippet(rhs)} as {it})")
        if stored is not None and isinstance(stored[0], DType) and stored[0].is_float:
            return f"`{op}` is defined on integers: cast the float side, and the result back ({stored[1]}): " \
                   f"`({whole}) as {stored[0]}`"
        return f"`{op}` is defined on integers: cast the float side: `{whole}`"
    signs = _signed_unsigned_help(tcx, lhs, rhs, ea, eb, compound, stored, op)
    if signs is not None:
        return signs
    wider = _wider(ea, eb)
    if not compound or wider == ea:
        narrow, wide = (rhs, lhs) if wider == ea else (lhs, rhs)
        other = eb if wider == ea else ea
        if stored is not None and stored[0] == other and not compound:
            # stored into a tile of the narrower type (`z.store(t * w)`, `z` f16, `w` an f32 tile of literals),
            # assigned to a variable of it (`acc = acc + x`) or returned as it: the wide side cast down (cast
            # the narrow one up, the store, assignment or return would be refused next)
            big = _literal_past(wide, other)
            if big is not None:
                # (huser29) but not a literal that the narrow type cannot hold: `70000.0f32 as f16` is infinity,
                # where E0222's help had made `t * 70000.0` the wider literal
                up = f"({tcx.cast_snippet(narrow)} as {wider})"
                whole = f"{up} {op} {big}" if narrow is lhs else f"{big} {op} {up}"
                return (f"`{big}` is past `{other}`'s range (`as {other}` makes it infinity): compute in "
                        f"`{wider}`, `{whole}`, and store it into a tile of `{wider}`")
            return f"cast with `as`: `{tcx.cast_snippet(wide)} as {other}` ({stored[1]})"
        text = widened_sum_help(tcx, narrow, other, wider) or _where_literals_help(tcx, narrow, wider) \
            or f"cast with `as`: `{tcx.cast_snippet(narrow)} as {wider}`"
        if isinstance(narrow, ast.Binary) and narrow.op in ("/", "%") and isinstance(wider, DType) \
                and wider.is_float and isinstance(other, DType) and other.is_int:
            # `(nb / total) as f32` divides the integers first (round 14: a Welford weight of 8 / 16 was 0)
            what = "quotient" if narrow.op == "/" else "remainder"
            text = (f"cast the operands, not the {what}, which `{narrow.op}` computes in integers first: "
                    f"`({tcx.cast_snippet(narrow.lhs)} as {wider}) {narrow.op} ({tcx.cast_snippet(narrow.rhs)} "
                    f"as {wider})`, or `{tcx.cast_snippet(narrow)} as {wider}` for the integer {what}")
        if stored is None and elem_is_float(ea) and elem_is_float(eb) and isinstance(other, DType) \
                and other.bits < 32:
            # not stored at once: computing in the narrower type may be what is meant
            text += f", or `{tcx.cast_snippet(wide)} as {other}` to compute in `{other}`"
        return text
    name = tcx.snippet(lhs)
    return (f"`{name}` is `{ea}`, and a compound assignment keeps its type: declare `{name}` as `{eb}` (an accumulator: "
            f"`zeros::<{eb}>([..])`, cast once when it is stored), or cast the right side: "
            f"`{tcx.cast_snippet(rhs)} as {ea}`")


def _literal_past(e: ast.Expr, dt: ElemT) -> str | None:
    """The text of a float literal (`70000.0f32`, `-1e30`) that rounds to infinity in the float type `dt`."""
    neg = isinstance(e, ast.Unary) and e.op == "-"
    lit = e.operand if isinstance(e, ast.Unary) and e.op == "-" else e
    if not (isinstance(lit, ast.FloatLit) and isinstance(dt, DType) and dt.is_float
            and float_literal_overflows(lit.value, dt, lit.text)):
        return None
    return ("-" if neg else "") + lit.text   # (the text as written, its suffix with it)


def _where_literals_help(tcx: CheckCx, narrow: ast.Expr, wider: ElemT) -> str | None:
    """`x + where(m, 0.1, 0.0)` of an f64 `x` (round 22): the `where` of untyped literals makes f32 values, so the
    cast the usual help proposes, `where(..) as f64`, multiplies by f32's 0.1; the branches written in the wider
    type keep the literals' values."""
    if not (isinstance(narrow, ast.Call) and isinstance(narrow.callee, ast.Name) and narrow.callee.ident.name ==
            "where" and len(narrow.args) == 3 and isinstance(wider, DType) and wider.is_float):
        return None
    branches = [a.value for a in narrow.args[1:]]
    bare = [b.operand if isinstance(b, ast.Unary) and b.op == "-" else b for b in branches]
    if not all(isinstance(b, (ast.FloatLit, ast.IntLit)) and not b.suffix for b in bare):
        return None
    lits = [f"{'-' if b is not o else ''}{o.text if isinstance(o, ast.FloatLit) else f'{o.value}.0'}{wider}"
            for b, o in zip(branches, bare, strict=True)]
    return (f"write the branches in `{wider}`: `where({tcx.snippet(narrow.args[0].value)}, {lits[0]}, {lits[1]})` "
            f"(`where` of untyped literals makes `f32` values: a cast of it keeps f32's)")


_COMPARE = ("<", "<=", ">", ">=", "==", "!=")


def _signed_unsigned_help(tcx: CheckCx, lhs: ast.Expr, rhs: ast.Expr, ea: ElemT, eb: ElemT, compound: bool,
                          stored: Any, op: str) -> str | None:
    """A comparison, `/` or `%` of a signed and an unsigned integer (round 14:
    `a < b` of `u32` and `i32` was told `b as u32`, which makes a negative `b`
    a huge one and the comparison false, and `a as i32` would make `a` past
    2^31 negative): both cast to a type that holds every value of both
    (`i64` for `u32` and `i32`), the result back where it is stored. Where
    none does (`u64` and `i64`), a comparison tests the signed side's sign
    first. None where the usual cast of one side is right (`+ - *` wrap to
    the same bits either way; `u8` and `i32`: `i32` holds every `u8`)."""
    if compound or op not in (*_COMPARE, "/", "%") or not (isinstance(ea, DType) and isinstance(eb, DType)) \
            or not (ea.is_int and eb.is_int) or ea.is_signed == eb.is_signed:
        return None
    common = common_dtype(ea, eb)
    if common in (ea, eb) and common is _wider(ea, eb):
        return None
    a, b = tcx.cast_snippet(lhs), tcx.cast_snippet(rhs)
    if common is not None:
        whole = f"({a} as {common}) {op} ({b} as {common})"
        text = f"cast both to `{common}`, which holds every `{ea}` and `{eb}` value: `{whole}`"
        if op in _COMPARE or stored is None or not isinstance(stored[0], DType):
            return text
        return f"{text}, and the result back ({stored[1]}): `({whole}) as {stored[0]}`"
    if op not in _COMPARE:
        return None
    s_left = ea.is_signed
    s, u = (a, eb) if s_left else (b, ea)
    cmp = f"({a} as {eb}) {op} {b}" if s_left else f"{a} {op} ({b} as {ea})"
    # what the comparison is where the signed side is negative: below every unsigned value
    negative_true = op in (("<", "<=", "!=") if s_left else (">", ">=", "!="))
    whole = f"{s} < 0 || {cmp}" if negative_true else f"{s} >= 0 && {cmp}"
    return (f"no integer type holds every `{ea}` and `{eb}` value, and `{s} as {u}` makes a negative `{s}` a huge "
            f"one: test its sign first, `{whole}`")


def extremum_signs(tcx: CheckCx, cx: Any, k: int = 0) -> Type | None:
    """`maximum(a, b)` / `minimum(a, b)` (`k` = 0) or `where(c, a, b)` (`k` = 1) of a signed and an unsigned
    integer (round 14: `maximum` of `u32` and `i32` was told `b as u32`, which makes a negative `b` the
    maximum; `where` was told `a as i32`, which makes an `a` past 2^31 negative): E0201 with both cast to a
    type that holds every value of both, the result back where it is stored; None (the usual check follows)
    for any other pair."""
    args, tys = cx.args[k:k + 2], cx.arg_tys[k:k + 2]
    if len(args) != 2:
        return None
    nums = [num_of(t, cx.fx.in_kernel) for t in tys]
    ea, eb = (n.elem if n is not None else None for n in nums)
    if not (isinstance(ea, DType) and isinstance(eb, DType) and ea.is_int and eb.is_int) \
            or ea.is_signed == eb.is_signed:
        return None
    common = common_dtype(ea, eb)
    if common is None or (common in (ea, eb) and common is _wider(ea, eb)):
        return None
    head = "".join(f"{tcx.snippet(x)}, " for x in cx.args[:k])
    whole = f"{cx.name}({head}{tcx.cast_snippet(args[0])} as {common}, {tcx.cast_snippet(args[1])} as {common})"
    stored = tcx.store_dtypes.get(cx.node)
    back = f", and the result back ({stored[1]}): `{whole} as {stored[0]}`" \
        if stored is not None and isinstance(stored[0], DType) else f": `{whole}`"
    return tcx.emit(tcx.err(T.MISMATCHED_DTYPES, f"mismatched dtypes: `{ea}` and `{eb}`", cx.span,
                            f"no implicit conversion between `{ea}` and `{eb}`")
                    .secondary(args[0].span, f"this is `{tys[0]}`")
                    .secondary(args[1].span, f"this is `{tys[1]}`")
                    .with_help(f"cast both to `{common}`, which holds every `{ea}` and `{eb}` value{back}"))


def _broadcast_or_err(tcx: CheckCx, a: Num, b: Num, lt: Type, rt: Type, lhs: ast.Expr, rhs: ast.Expr,
                      op_span: Span) -> tuple[Dim | None, ...] | None:
    if a.shape is None or b.shape is None:
        return None
    out = broadcast_shapes(a.shape, b.shape)
    if out is None:
        tcx.emit(tcx.err(T.SHAPE_MISMATCH,
                         f"shapes {shape_str(a.shape)} and {shape_str(b.shape)} cannot be broadcast together",
                         op_span, "incompatible shapes")
                 .secondary(lhs.span, f"this has shape {shape_str(a.shape)}")
                 .secondary(rhs.span, f"this has shape {shape_str(b.shape)}")
                 .note("tiles broadcast only where a dimension is 1 (NumPy rules)")
                 .with_help(_reshape_hint(tcx, a.shape, b.shape, lhs, rhs)))
    return out


def _reshape_hint(tcx: CheckCx, sa: tuple[Dim | None, ...], sb: tuple[Dim | None, ...], lhs: ast.Expr,
                  rhs: ast.Expr) -> str:
    """`m.reshape([BM, 1])` when one shape is the other without one axis
    (the usual result of a reduction), else the general advice."""
    from tilelang.sema.realign import reduction_axis

    gap = divisibility_gap(sa, sb, broadcast=True)
    if gap is not None:
        return divisibility_help(gap)
    fixed = generic_constant_gap(sa, sb, broadcast=True)
    if fixed is not None:
        return generic_constant_help(fixed)
    for long, short, node in ((sa, sb, rhs), (sb, sa, lhs)):
        if len(long) == len(short) + 1:
            fits = [k for k in range(len(long)) if long[:k] + long[k + 1:] == short]
            if not fits:
                continue
            # where the reduction took it (`g.max(2)` of [2, 3, 3]: axis 2, though a 1 at axis 1 fits too and
            # would pair the wrong elements); else the one place that fits, or each place that does
            axis = reduction_axis(node)
            known = [axis] if axis in fits else fits if len(fits) == 1 else None
            shapes = [shape_str((*short[:k], Dim.const(1), *short[k:])) for k in known or fits]
            if known is not None:
                return f"insert the reduced axis: `{tcx.receiver_snippet(node)}.reshape({shapes[0]})`"
            return ("insert a 1 where the reduction removed its axis: " + ", ".join(
                f"`{tcx.receiver_snippet(node)}.reshape({sh})` (axis {k})" for k, sh in zip(fits, shapes, strict=True)))
    for other, mine, node in ((sa, sb, rhs), (sb, sa, lhs)):
        # the same axes in another place (`b.reshape([N, 1])` added to [M, N]):
        # the sizes other than 1, in order, where they broadcast with the other side
        placed = _placed_like(other, mine)
        if placed is not None:
            base = node.receiver if isinstance(node, ast.MethodCall) and node.method.name == "reshape" else node
            return (f"put its axes where they match {shape_str(other)}: `{tcx.receiver_snippet(base)}.reshape("
                    f"{shape_str(placed)})`")
    if len(sa) == len(sb) == 2 and sa == tuple(reversed(sb)) and sa[0] != sa[1]:
        # [M, N] and [N, M]: one of them the other way round (`b.transpose()` when it is
        # laid out so; `.reshape` would keep the element order and mix the rows)
        return (f"swap the axes of one side: `{tcx.receiver_snippet(rhs)}.transpose()` is {shape_str(sa)} "
                f"(or `.reshape({shape_str(sa)})` to read its elements in order)")
    if len(sa) == len(sb):
        # same rank, and the axes that differ are all longer than 1 (`x + y` of lengths 10 and 11): no
        # reshape or broadcast makes them agree (the general advice below led nowhere)
        diff = [(k, x, y) for k, (x, y) in enumerate(zip(sa, sb, strict=True)) if x != y]
        if diff and all(isinstance(v, Dim) and (v.const_value or 0) > 1 for _, x, y in diff for v in (x, y)):
            k, x, y = diff[0]
            return (f"axis {k} is {x} on one side and {y} on the other, and neither is 1: nothing broadcasts "
                    f"them; make the two lengths agree")
    return "use `.reshape([..])` to add a dimension of size 1, or `.broadcast([..])`"


def _placed_like(other: tuple[Dim | None, ...], mine: tuple[Dim | None, ...]) -> tuple[Dim, ...] | None:
    """`mine`'s sizes other than 1, in order, at the positions of equal sizes
    of `other` (1 elsewhere, same rank as `other`), or None when there is no
    such placement or it is `mine` itself."""
    one = Dim.const(1)
    sizes = [d for d in mine if d != one]
    if not sizes or any(d is None for d in sizes) or any(d is None for d in other):
        return None
    out: list[Dim] = []
    k = 0
    for d in other:
        if k < len(sizes) and d == sizes[k]:
            out.append(d)  # type: ignore[arg-type]
            k += 1
        else:
            out.append(one)
    if k < len(sizes) or tuple(out) == mine:
        return None
    return tuple(out)


def check_cast(tcx: CheckCx, e: ast.Cast, x: ast.Expr, te: ast.TypeExpr, fx: Fx) -> Type:
    src = tcx.check_expr(x, fx, None)
    target = resolve_type(tcx, te, fx.generics, fx.module, fx.in_kernel)
    if is_poison(src, target):
        return ERROR
    if not isinstance(target, ScalarT):
        return tcx.emit(tcx.err(T.INVALID_CAST, f"cannot cast to `{target}`", te.span,
                                "`as` converts to an element type")
                        .with_help("write the element type: `t as f16` converts every element"))
    d = tcx.program.dims.get(x)
    match src:
        case UntypedInt() | UntypedFloat():
            if isinstance(src, UntypedInt) and d is not None and elem_is_int(target.dtype):
                _cast_dim(tcx, e, d, DType.I32, target.dtype)
            settle(tcx, x, target if not (isinstance(src, UntypedFloat) and elem_is_int(target.dtype))
                   else F32, cast=True)
            if isinstance(src, UntypedFloat) and elem_is_int(target.dtype):
                _float_cast_dim(tcx, e, x, fx, target.dtype)
            return target
        case ScalarT():
            if d is not None and elem_is_int(target.dtype):
                _cast_dim(tcx, e, d, src.dtype, target.dtype)
            elif isinstance(src.dtype, DType) and src.dtype.is_float and elem_is_int(target.dtype):
                _float_cast_dim(tcx, e, x, fx, target.dtype)
            return target
        case TileT(shape=s):
            return TileT(target.dtype, s)
        case TensorT(shape=s) if not fx.in_kernel:
            return TensorT(target.dtype, s)
        case RefT(inner=TensorT(shape=s)) if not fx.in_kernel:
            return TensorT(target.dtype, s)
        case _:
            d2 = tcx.err(T.INVALID_CAST, f"cannot cast `{src}` as `{target}`", e.span,
                         "invalid cast")
            if is_scalar_ref(src):
                d2 = d2.with_help(scalar_ref_help(tcx, x, src, fx))  # type: ignore[arg-type]
            elif fx.in_kernel and isinstance(deref(src), TensorT):
                d2 = d2.with_help("load a tile first, then cast the tile")
            elif isinstance(src, TupleT):
                d2 = d2.with_help("cast each element of the tuple: `(p.0 as f32, p.1 as f32)`")
            elif isinstance(src, UnitT):
                d2 = d2.with_help(UNIT_VALUE_HELP)
            elif isinstance(src, ShapeT):
                d2 = d2.with_help(f"a shape holds one integer per axis: cast one of them, "
                                  f"`{tcx.snippet(x)}[0] as {target}`")
            else:
                d2 = d2.with_help("`as` converts a scalar, a tile or a tensor to another element type "
                                  "(`x as f32`)")
            return tcx.emit(d2)


def _wider(a: ElemT, b: ElemT) -> ElemT:
    if isinstance(a, DType) and isinstance(b, DType):
        if a.is_float != b.is_float:
            return a if a.is_float else b
        return a if a.bits >= b.bits else b
    return a


def _result_of(num: Num, ty: Type) -> Type:
    return ty.inner if isinstance(ty, RefT) else ty


def _float_cast_dim(tcx: CheckCx, e: ast.Expr, x: ast.Expr, fx: Fx, target: Any) -> None:
    """The value of a float constant cast to an integer type (`3.3f32 as i16` is 3), so that what it
    feeds is checked as a literal would be: `(3.3f32 as i16) * 16383i16` is E0227, where it passed and
    held 49149 in a `const` (-16387 at run time)."""
    from tilelang.sema.consts import const_value

    if not isinstance(target, DType):
        return
    v = const_value(tcx, x, fx)
    if isinstance(v, float):
        tcx.program.dims[e] = Dim.const(convert_scalar(v, target))  # truncates and saturates, as it runs


def _cast_dim(tcx: CheckCx, e: ast.Expr, d: Any, src: Any, target: Any) -> None:
    """The value of integer cast `e` of a value `d` known to the checker, as
    it runs: a constant wrapped to the target type (`let w: i32 = 300; w as
    u8` is 44, not 300), a symbolic one kept only where the target holds
    every value of the source (`B as i64`), else unknown."""
    if not isinstance(target, DType):
        return
    if d.const_value is not None:
        tcx.program.dims[e] = Dim.const(target.wrap(d.const_value))
        return
    if isinstance(src, DType) and src.is_int:
        lo, hi = int_range(src)
        tlo, thi = int_range(target)
        if tlo <= lo and hi <= thi:
            tcx.program.dims[e] = d
