"""Expressions: what each expression of a kernel body lowers to.

`lower_expr` is the entry (through `LowerCx.expr`): literals become `CVal`s
(with the dtype the checker settled), names their binding, a const generic
or a module constant, and operators, casts, blocks, `if`, calls and methods
are handed to their modules.
"""

from __future__ import annotations

from typing import Any

from tilelang.diagnostics.model import ICE
from tilelang.dtypes import DType, LiteralFloat, literal_float, round_literal
from tilelang.ir import nodes as ir
from tilelang.ir.lower.context import LowerCx, literal_dtype
from tilelang.ir.lower.control import lower_block, lower_if_expr
from tilelang.ir.lower.fold import convert_const
from tilelang.ir.lower.intrinsics import lower_call, lower_method
from tilelang.ir.lower.operators import (
    check_instance_domain,
    float_operands,
    lower_binary,
    lower_cast,
    lower_unary,
)
from tilelang.diagnostics.instances import literal_misfits
from tilelang.ir.lower.values import (
    BOOL,
    I32,
    ArrayVal,
    CVal,
    InstanceConstGeneric,
    InstanceFloatValue,
    StrVal,
    TupleVal,
    Unsupported,
)
from tilelang.sema.program import SymbolKind
from tilelang.sema.types import ScalarT, TypeParam
from tilelang.syntax import ast


def lower_expr(cx: LowerCx, e: ast.Expr) -> Any:
    if cx.f.type_params and isinstance(e, (ast.Binary, ast.Unary)):
        check_instance_domain(cx, e)  # before its untyped constant operands fold
    match e:
        case ast.IntLit(value=v, suffix=s):
            dt = DType.parse(s) if s else cx.instance_literal_dtype(e)
            return CVal(convert_const(v, dt) if dt else v, dt)
        case ast.FloatLit(value=v, suffix=s):
            dt = DType.parse(s) if s else cx.instance_literal_dtype(e)
            # `0.1f32` is f32's 0.1, rounded once from the digits (`literal_float`)
            return CVal(convert_const(literal_float(float(v), e.text, dt), dt) if dt else float(v), dt)
        case ast.BoolLit(value=v):
            return CVal(bool(v), BOOL)
        case ast.StrLit(value=v):
            return StrVal(v)
        case ast.Name(ident=ident):
            return lower_name(cx, ident.name, e)
        case ast.Path(segments=segs):
            return lower_name(cx, segs[-1].name, e)
        case ast.Binary(op=op, lhs=lhs, rhs=rhs):
            a, b = float_operands(cx, e, cx.expr(lhs), cx.expr(rhs))
            _check_const_arith(cx, e, op, a, b)
            return lower_binary(cx, op, a, b, e.span)
        case ast.Unary(op="-", operand=ast.IntLit(value=v, suffix=s) as x) if not s:
            dt = cx.instance_literal_dtype(x, negated=True)  # `-128` as an `i8` `T`
            return lower_unary(cx, "-", CVal(convert_const(v, dt) if dt else v, dt), e.span)
        case ast.Unary(op="-", operand=ast.Name(ident=ident) as x) if _is_generic(cx, x):
            # `-C` as an `i8` with `C = 128` is -128, as the literal `-128` is
            v = generic_read(cx, ident.name, cx.f.generics[ident.name], x, negated=True)
            return lower_unary(cx, "-", v, e.span)
        case ast.Unary(op=op, operand=x):
            v = cx.expr(x)
            if op == "-" and isinstance(v, CVal) and isinstance(v.value, int) and not isinstance(v.value, bool) \
                    and (dt := _settled(cx, e)) is not None and dt.is_int and literal_misfits(-v.value, dt):
                raise InstanceConstGeneric(e.span, None, -v.value, dt)  # `-c` of an `i8` `c = -128` (E0227)
            return lower_unary(cx, op, v, e.span)
        case ast.Cast(expr=x, ty=ty):
            cx.cast_depth += 1
            outer, cx.cast_operand = cx.cast_operand, x
            try:
                v = cx.expr(x)
            finally:
                cx.cast_depth -= 1
                cx.cast_operand = outer
            return lower_cast(cx, v, cx.dtype(ty), e.span)
        case ast.Ref(expr=x):
            return cx.expr(x)
        case ast.TupleExpr(elems=elems):
            return TupleVal(tuple(cx.expr(x) for x in elems))
        case ast.ArrayExpr(elems=elems):
            return ArrayVal(tuple(cx.expr(x) for x in elems))
        case ast.Field(receiver=r, field=fld):
            v = cx.expr(r)
            if isinstance(v, (TupleVal, ArrayVal)) and fld.name.isdigit():
                return v.elems[int(fld.name)]
            raise Unsupported(e.span, "field access on this value")
        case ast.Index(receiver=r, index=i):
            v, idx = cx.expr(r), cx.expr(i)
            if isinstance(v, (TupleVal, ArrayVal)):
                return v.elems[cx.const_int(idx, i.span)]
            raise Unsupported(e.span, "indexing this value")
        case ast.Block():
            return lower_block(cx, e)
        case ast.UnsafeBlock(body=body):
            return lower_block(cx, body)
        case ast.If():
            return lower_if_expr(cx, e)
        case ast.Call():
            return lower_call(cx, e)
        case ast.MethodCall():
            return lower_method(cx, e)
        case ast.RangeExpr() | ast.GraphBlock():
            raise Unsupported(e.span, "this expression inside a kernel")
        case _:
            raise ICE(f"lowering: unexpected expression {type(e).__name__}")


def lower_name(cx: LowerCx, name: str, node: ast.Expr) -> Any:
    sym = cx.program.symbol_of(node)
    if sym is not None and sym.kind is SymbolKind.CONST and sym.decl is None:
        # a built-in constant (`f32::MAX`, `inf`): its value, in the type the
        # checker settled (an untyped `inf` takes its context's)
        settled = literal_dtype(cx.program, node)
        declared = getattr(sym.ty, "dtype", None)
        return _float_read(cx, CVal(sym.value, settled or (declared if isinstance(declared, DType) else None)),
                           node, name)
    if sym is not None and sym.kind is SymbolKind.CONST and isinstance(sym.decl, ast.ConstDecl):
        # a module constant: the one the checker resolved this name to. Two modules may
        # each define a `C` (and the root a third): a lookup by name took the root's, or
        # the first module's, in another module's kernel
        return _float_read(cx, _module_const(cx, sym.decl, sym, node), node, name)
    scope = cx.f.lookup(name)
    if scope is not None:
        return _read_as(cx, _float_read(cx, scope[name], node, name), node)
    if name in cx.f.generics:
        return generic_read(cx, name, cx.f.generics[name], node)
    if name in cx.tensors:
        return cx.tensors[name]
    const = cx.program.find_const(name)
    if const is not None:
        if isinstance(const, ast.ConstDecl):
            return _module_const(cx, const, None)
        sym = cx.program.symbol_of(node)
        sdt = getattr(getattr(sym, "ty", None), "dtype", None)
        return CVal(const, sdt if isinstance(sdt, DType) else None)
    raise ICE(f"lowering: unknown name `{name}`")


def _settled(cx: LowerCx, node: ast.Expr) -> DType | None:
    """The number type the checker settled `node` to (an instance's `T` resolved), or None."""
    dt = getattr(cx.program.type_of(node), "dtype", None)
    if isinstance(dt, TypeParam):
        dt = cx.f.type_params.get(dt.name)
    return dt if isinstance(dt, DType) and dt is not BOOL else None


def _is_generic(cx: LowerCx, node: ast.Name) -> bool:
    sym = cx.program.symbol_of(node)
    return sym is not None and sym.kind is SymbolKind.GENERIC and node.ident.name in cx.f.generics \
        and cx.f.lookup(node.ident.name) is None


def generic_read(cx: LowerCx, name: str, value: int, node: ast.Expr, negated: bool = False) -> CVal:
    """A const generic read: untyped in a kernel, as a literal (it takes the
    type of what it meets), so its value must fit that type, which only the
    instance knows (E0222 there, as for the literal; a cast's whole operand
    converts it, as for an untyped `let`). An integer type it fits types the
    constant, so that arithmetic of it folds in that type: `B * B * B * B`
    in an `i64` context was folded in `i32` (0 for `B = 256`)."""
    dt = _settled(cx, node)
    if dt is None or isinstance(value, bool) or not isinstance(value, int) or cx.cast_operand is node:
        return CVal(value, I32)
    if literal_misfits(-value if negated else value, dt):  # (`negated`: under a minus, as `-128` is)
        raise InstanceConstGeneric(node.span, f"-{name}" if negated else name, -value if negated else value, dt)
    return CVal(convert_const(value, dt), dt) if dt.is_int else CVal(value, I32)


def _check_const_arith(cx: LowerCx, e: ast.Binary, op: str, a: Any, b: Any) -> None:
    """Integer arithmetic of constants whose exact value does not fit the type
    the checker settled it to: the checker refuses it for literals (E0227);
    a const generic's (`B * B` as an `i16` with `B = 256`) only an instance
    can judge. (Folded, it wrapped silently.)"""
    if op in ("/", "%") and isinstance(b, CVal) and b.value == 0 and isinstance(b.value, int) \
            and not isinstance(b.value, bool) and (dt := _settled(cx, e)) is not None and dt.is_int:
        # a divisor that only the instance knows is zero (`x / (C - 4)` with `C = 4`): E0226, as the checker
        # says of a literal's (it ran as the run-time rule's `x / 0 == 0`)
        raise InstanceConstGeneric(e.rhs.span, op, 0, dt, kind="div0")
    if op not in ("+", "-", "*") or not (isinstance(a, CVal) and isinstance(b, CVal)):
        return
    x, y = a.value, b.value
    if not (isinstance(x, int) and isinstance(y, int)) or isinstance(x, bool) or isinstance(y, bool):
        return
    dt = _settled(cx, e) or (I32 if a.dtype in (None, I32) and b.dtype in (None, I32) else None)
    exact = x + y if op == "+" else x - y if op == "-" else x * y
    if dt is not None and dt.is_int and literal_misfits(exact, dt):
        raise InstanceConstGeneric(e.span, None, exact, dt)


def _float_read(cx: LowerCx, v: Any, node: ast.Expr, name: str) -> Any:
    """A float variable or constant (`let c = 2.5;`, `const C = 2.5;`) read
    where the checker typed it an instance's `T`, and `T` is an integer (or
    `bool`), outside a cast's operand: E0201, as the host's instance says it
    (`runtime/host_instances.name_value`). The concrete form is refused (E0203
    or E0201); the instance converted it silently (`return c;` gave 2), or, in
    arithmetic, refused it on one engine and not the other (`x + C`)."""
    if cx.cast_depth or not isinstance(v, (CVal, ir.Value)) or (isinstance(v, ir.Value) and v.shape):
        return v
    ty = cx.program.type_of(node)
    tp = ty.dtype if isinstance(ty, ScalarT) else None
    dt = cx.f.type_params.get(tp.name) if isinstance(tp, TypeParam) else None
    if not isinstance(dt, DType) or dt.is_float:
        return v
    if isinstance(v, CVal) and isinstance(v.value, bool):
        return v
    is_float = v.dtype.is_float if v.dtype is not None else isinstance(v.value, float)
    if is_float:
        raise InstanceFloatValue(node.span, v.dtype, dt, name)
    return v


def _read_as(cx: LowerCx, v: Any, node: ast.Expr) -> Any:
    """A scalar variable read where the checker typed the read another number
    type: an untyped `let`, whose reads its context types (`c << 16` typed by
    an `i16` `T` of a `let c = ..;` held as `i32`: the shift was judged by
    `i32`'s width; `x + c` of an `f16` `x` and `let c = 2.0 + 1e3;` held as
    `f32`: an ill-formed-IR ICE). It takes the read's type, as the host
    converts it (`runtime/host_instances.name_value`); never a float to an
    integer (an instance's E0201, `operators.float_operands`)."""
    if not isinstance(v, (CVal, ir.Value)) or (isinstance(v, ir.Value) and v.shape) or v.dtype is BOOL:
        return v
    if isinstance(v, CVal) and (isinstance(v.value, bool) or not isinstance(v.value, (int, float))):
        return v
    dt = getattr(cx.program.type_of(node), "dtype", None)
    if isinstance(dt, TypeParam):
        dt = cx.f.type_params.get(dt.name)
    if not isinstance(dt, DType) or dt is BOOL or dt is v.dtype:
        return v
    is_float = v.dtype.is_float if v.dtype is not None else isinstance(v.value, float)
    if is_float and not dt.is_float:
        return v
    if isinstance(v, CVal):
        if isinstance(v.value, int) and not isinstance(v.value, bool) and literal_misfits(v.value, dt) \
                and isinstance(node, ast.Name):
            # an untyped `let` of a const generic (`let c = C;` read as an `i8`, `C = 300`): the checker
            # says it of a literal's `let` (E0222), only the instance knows this value (it wrapped)
            raise InstanceConstGeneric(node.span, node.ident.name, v.value, dt, kind="let")
        if v.dtype is None and not is_float and dt.is_float:
            return v  # an untyped integer meets a float: `unify` and `float_operands` convert it
        if isinstance(v.value, LiteralFloat):
            return CVal(convert_const(round_literal(v.value, dt) if dt.is_float else float(v.value), dt), dt)
        return CVal(convert_const(v.value, dt), dt)
    return cx.mat(v, dt, node.span)


def _module_const(cx: LowerCx, decl: ast.ConstDecl, sym: Any, node: ast.Expr | None = None) -> Any:
    """The value of module constant `decl` (its checked value where the checker
    evaluated it, else its expression lowered), in its declared type; an untyped
    float constant in the type its use settled (an instance's `T` resolved), as a float literal."""
    value = getattr(sym, "value", None)
    if value is not None:
        sdt = getattr(getattr(sym, "ty", None), "dtype", None)
        if isinstance(value, float) and decl.ty is None and node is not None:
            # in an instance the use may be typed `T` (`d * C` of a `Tile<T, ..>`): `T`'s float type, as a
            # float literal there (it was the constant's default, f32, so `T = f64` read f32's value)
            inst = _settled(cx, node)
            sdt = literal_dtype(cx.program, node) or (inst if inst is not None and inst.is_float else sdt)
        return CVal(convert_const(value, sdt), sdt) if isinstance(sdt, DType) else CVal(value, None)
    v = cx.expr(decl.value)
    if decl.ty is not None and isinstance(v, CVal):
        dt = cx.dtype(decl.ty)
        v = CVal(convert_const(v.value, dt), dt)
    return v

