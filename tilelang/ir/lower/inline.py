"""Device function calls: inlined into the kernel.

`inline_call` lowers the callee's body in a new frame, its generics taken
from the turbofish, the argument types or the checker's instantiation
table (symbolic in the caller's generics); an early `return` becomes a flag
and one result variable of the declared return type.
"""

from __future__ import annotations

from typing import Any

from tilelang.diagnostics.codes.types import LITERAL_OUT_OF_RANGE
from tilelang.diagnostics.generic_range import generic_misfit_words, generic_misfits
from tilelang.diagnostics.model import ICE, Diagnostic, TileError
from tilelang.dtypes import DType
from tilelang.ir import nodes as ir
from tilelang.ir.lower.claims import claim_dims
from tilelang.ir.lower.context import FnFrame, LowerCx
from tilelang.ir.lower.control import lower_seq
from tilelang.ir.lower.fold import convert_const
from tilelang.ir.lower.jumps import jump_flags
from tilelang.ir.lower.values import BOOL, RET, RETV, UNIT, CVal, TensorRef, TupleVal, Unsupported
from tilelang.syntax import ast


def inline_call(cx: LowerCx, decl: ast.FnDecl, call: ast.Call) -> Any:
    if cx.inline_depth > 64:
        raise Unsupported(call.span, "device functions nested more than 64 deep (recursion?)")
    args = cx.lower_args(call.args)
    if len(args) != len(decl.params):
        raise ICE(f"lowering: `{decl.name.name}` called with {len(args)} arguments")
    generics, tparams = _callee_generics(cx, decl, call, args)
    saved = cx.f
    cx.f = FnFrame(generics, tparams)
    cx.inline_depth += 1
    try:
        for p, a in zip(decl.params, args, strict=True):
            _claim_dims(cx, decl, p, p.ty, a, call)
            if isinstance(a, CVal) and not isinstance(p.ty, ast.RefType):
                try:
                    dt = cx.dtype(p.ty)
                    a = CVal(convert_const(a.value, dt), dt)
                except Unsupported:
                    pass
            elif isinstance(a, ir.Value) and isinstance(p.ty, ast.NamedType) and not p.ty.args:
                dt = cx.dtype(p.ty)
                if a.dtype is not dt:
                    a = cx.b.cast(a, dt, span=call.span)
            cx.f.scopes[0][p.name.name] = a
        body = decl.body
        stmts = body.stmts
        tail: ast.Expr | None = body.tail
        if tail is None and stmts and isinstance(stmts[-1], ast.Return):
            tail = stmts[-1].value
            stmts = stmts[:-1]
        if RET not in jump_flags(list(stmts)):
            cx.f.scopes.append({})
            result = lower_seq(cx, stmts, tail)
            if decl.ret is not None and isinstance(result, (TensorRef, TupleVal)):  # `-> &Tensor<f32, [16]>`
                claim_dims(cx, decl.ret, result, call.span, f"function `{decl.name.name}`", "its result",
                           f"in `{decl.name.name}`'s result type")
            return result
        # An early `return`: the rest of the body runs under "not returned
        # yet" and every return assigns one result variable of the
        # declared return type.
        cx.f.scopes.append({RET: CVal(False, BOOL), RETV: _return_init(cx, decl, call)})
        if tail is not None:
            stmts = (*stmts, ast.Return(tail, tail.span))
        lower_seq(cx, stmts, None)
        return cx.flag(RETV)
    finally:
        cx.f = saved
        cx.inline_depth -= 1


def _claim_dims(cx: LowerCx, decl: ast.FnDecl, p: ast.Param, ty: ast.TypeExpr, a: Any, call: ast.Call) -> None:
    """Parameter `p`'s claims (`claim_dims`) on argument `a`, at the call's argument."""
    arg = next((x.value.span for x, y in zip(call.args, decl.params, strict=False) if y is p), call.span)
    claim_dims(cx, ty, a, arg, f"function `{decl.name.name}`", f"`{p.name.name}`", f"in `{decl.name.name}`")


def _return_init(cx: LowerCx, decl: ast.FnDecl, call: ast.Call) -> Any:
    return _init_of(cx, decl.ret, decl, call)


def _init_of(cx: LowerCx, ret: ast.TypeExpr | None, decl: ast.FnDecl, call: ast.Call) -> Any:
    """The result variable's first value for a return type `ret` (overwritten by every
    `return` before it is read): zeros, and a tuple of them for a tuple (`(m, l)`, carried
    element by element through the branches and loops the returns are in)."""
    if ret is None or (isinstance(ret, ast.TupleType) and not ret.elems):
        return UNIT
    if isinstance(ret, ast.TupleType):
        return TupleVal(tuple(_init_of(cx, t, decl, call) for t in ret.elems))
    if isinstance(ret, ast.NamedType) and ret.name.name in ("Tile", "Tensor"):
        dtype, dims = cx.tensor_type(ret)
        shape = tuple(cx.need_int(d, ret.span) for d in dims)
        return cx.b.const(False if dtype is BOOL else 0, dtype, shape, span=call.span)
    if isinstance(ret, ast.NamedType) and not ret.args:
        dtype = cx.dtype(ret)
        return cx.b.const(False if dtype is BOOL else 0, dtype, span=call.span)
    raise Unsupported(decl.ret.span if decl.ret else call.span,
                      "an early `return` from a device function returning this type",
                      "return a scalar or a tile, or make the value the function's tail")


def _callee_generics(cx: LowerCx, decl: ast.FnDecl, call: ast.Call, args: list[Any]
                     ) -> tuple[dict[str, int], dict[str, DType]]:
    names = [g.name.name for g in decl.generics]
    consts = {g.name.name for g in decl.generics if g.is_const}
    generics: dict[str, int] = {}
    tparams: dict[str, DType] = {}
    # explicit turbofish
    for g, targ in zip(decl.generics, call.generics, strict=False):
        if g.is_const:
            if isinstance(targ, ast.NamedType) and not targ.args:
                # `f::<BM>(..)`: a bare name parses as a type; here it is a value
                targ = ast.Name(targ.name, targ.span)
            generics[g.name.name] = cx.const_int(cx.expr(targ), call.span)  # type: ignore[arg-type]
        else:
            tparams[g.name.name] = cx.dtype(targ)
    # from the argument types
    for p, a in zip(decl.params, args, strict=True):
        _unify_param(p.ty, a, consts, set(names) - consts, generics, tparams)
    # from the checker's table (symbolic in the caller's generics)
    inst = cx.program.instantiation_of(call)
    for k, v in inst.items():
        if k in generics or k in tparams:
            continue
        if isinstance(v, DType):
            tparams[k] = v
        elif isinstance(v, int):
            generics[k] = v
        else:
            try:
                from tilelang.sema.types import eval_dim

                generics[k] = eval_dim(v, cx.f.generics)
            except Exception:
                pass
    for g, v, dt in generic_misfits(decl.generics, generics):  # `dev::<{B * 2}>` of a `u8` `N`, B = 200 (hrev29)
        message, label, help = generic_misfit_words(g, v, dt, f"function `{decl.name.name}`")
        raise TileError(Diagnostic.error(LITERAL_OUT_OF_RANGE, message)
                        .primary(call.span, f"called with `{g.name.name}` = {v} in this instance")
                        .secondary(g.span, label).secondary(cx.decl.name.span, f"in kernel `{cx.decl.name.name}`")
                        .with_help(help))
    missing = [n for n in names if n not in generics and n not in tparams]
    if missing:
        raise Unsupported(call.span, f"cannot infer {', '.join(f'`{m}`' for m in missing)} "
                                      f"for the call of `{decl.name.name}`",
                          "give the generic arguments with a turbofish `::<..>`")
    return generics, tparams


def _unify_param(ty: ast.TypeExpr, arg: Any, consts: set[str], tnames: set[str],
                 generics: dict[str, int], tparams: dict[str, DType]) -> None:
    """Bind the callee's generics that appear bare in a parameter type from the
    argument's type (`Tile<T, [M, N]>` against an f32[4, 64] tile)."""
    if isinstance(ty, ast.RefType):
        ty = ty.inner
    if not isinstance(ty, ast.NamedType):
        return
    name = ty.name.name
    if name in tnames and not ty.args:
        dt = arg.dtype if isinstance(arg, ir.Value) else arg.dtype if isinstance(arg, CVal) else None
        if isinstance(dt, DType):
            tparams.setdefault(name, dt)
        return
    if name not in ("Tile", "Tensor") or len(ty.args) != 2:
        return
    dty, shape = ty.args
    if isinstance(arg, ir.Value):
        adt, ashape = arg.dtype, arg.shape
    elif isinstance(arg, TensorRef):
        adt = arg.param.dtype
        ashape = arg.param.tile_shape or tuple(d if d is not None else -1 for d in arg.param.dims)
    else:
        return
    if isinstance(dty, ast.NamedType) and dty.name.name in tnames:
        tparams.setdefault(dty.name.name, adt)
    if isinstance(shape, ast.ShapeType) and len(shape.dims) == len(ashape):
        for d, n in zip(shape.dims, ashape, strict=True):
            if isinstance(d, ast.Name) and d.ident.name in consts and n >= 0:
                generics.setdefault(d.ident.name, int(n))
