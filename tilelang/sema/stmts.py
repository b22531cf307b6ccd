"""Statements and bindings: function bodies, blocks, `let`, assignment, loops.

`check_fn` checks one function body in one context (host or device code)
against its signature; `check_block` (through `CheckCx.check_block`) checks
the statements of a block in a new scope and gives the block its type.
Decides how patterns bind (`let (a, b) = ..`), which assignments are allowed
(E0108 immutable, E0114 not a variable), that `break`/`continue` are inside
a loop, and that `return` values match the function's result.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any, assert_never

from tilelang.diagnostics.codes import names as N
from tilelang.diagnostics.codes import types as T
from tilelang.diagnostics.codes.runtime import KERNEL_UNSUPPORTED
from tilelang.dtypes import DType
from tilelang.sema.coerce import NO_VALUE, adopt_tuple, coerce, has_untyped, mismatch, settle
from tilelang.sema.context import CheckCx, Fx
from tilelang.sema.definite import check_definite
from tilelang.sema.exprs import expect_bool
from tilelang.sema.items import resolve_type
from tilelang.sema.kernel import graph_effect
from tilelang.sema.loader import SHOWN_AT
from tilelang.sema.operators import binary_types
from tilelang.sema.program import FnInfo, Symbol, SymbolKind
from tilelang.sema.typeops import is_poison
from tilelang.sema.types import (
    ERROR,
    NEVER,
    UNIT,
    NeverT,
    OpT,
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
from tilelang.source import Span
from tilelang.syntax import ast
from tilelang.syntax.build import destructuring


def check_fn(tcx: CheckCx, info: FnInfo, in_kernel: bool) -> None:
    mod = tcx.program.modules.get(info.module, tcx.root)
    generics = {g.name.name: tcx.program.symbols[g] for g in info.decl.generics
                if g in tcx.program.symbols}
    fx = Fx(mod, info, in_kernel, info.ret, generics,
            kernel_name=info.qualname if info.is_kernel else None)
    tcx.cur_fx = fx
    scope: dict[str, Symbol] = {}
    for p, ty in zip(info.decl.params, info.param_types, strict=False):
        sym = Symbol(SymbolKind.PARAM, p.name.name, p.name.span, p, ty=ty, mutable=p.mutable)
        tcx.program.symbols[p] = sym
        scope[p.name.name] = sym
    fx.scopes.append(scope)
    _returned(tcx, info.decl.body.tail, info.ret)
    body_ty = tcx.check_block(info.decl.body, fx, info.ret, new_scope=False)
    if not is_poison(body_ty) and not coerce(tcx, body_ty, info.ret, info.decl.body.tail):
        at = info.decl.body.tail if info.decl.body.tail is not None else None
        if at is not None:
            mismatch(tcx, info.ret, body_ty, at, info.decl.ret)
        else:
            tcx.emit(tcx.err(T.MISMATCHED_TYPES, "mismatched types",
                             info.decl.body.span.at_end(),
                             f"expected `{info.ret}`, found `()`")
                     .secondary(info.decl.ret.span if info.decl.ret else info.decl.name.span,
                                f"`{info.name}` returns `{info.ret}`")
                     .with_help("end the body with the value to return (no `;`)"))
    elif info.decl.body.tail is not None:
        settle(tcx, info.decl.body.tail, info.ret)
    if fx.deferred:  # `let p: f32;`: assigned before every read, once unless `mut`
        check_definite(tcx, info.decl.body, fx.deferred)


def check_block(tcx: CheckCx, b: ast.Block, fx: Fx, expected: Type | None, new_scope: bool = True) -> Type:
    if new_scope:
        fx.scopes.append({})
    diverges = False
    try:
        for st in b.stmts:
            if _check_stmt(tcx, st, fx):
                diverges = True
        if b.tail is not None and isinstance(b.tail, ast.Block) and \
                destructuring(tail_st := ast.ExprStmt(b.tail, True, b.tail.span)) is not None:
            # `for .. { (x, n) = two(x, n); }`: the desugared assignment is the block's last expression;
            # it is a statement (its mismatches reported together, as anywhere else)
            ty = NEVER if _check_stmt(tcx, tail_st, fx) else UNIT
        elif b.tail is not None:
            ty = tcx.check_expr(b.tail, fx, expected)
        else:
            ty = NEVER if diverges else UNIT
    finally:
        if new_scope:
            fx.scopes.pop()
    tcx.program.types[b] = ty
    return ty


def _bind_pattern(tcx: CheckCx, pat: ast.Pattern, ty: Type, fx: Fx, value: ast.Expr | None,
                  kind: SymbolKind = SymbolKind.LOCAL) -> None:
    match pat:
        case ast.NamePat(name=ident, mutable=m):
            sym = Symbol(kind, ident.name, ident.span, pat, ty=ty, mutable=m)
            if m and isinstance(ty, (UntypedInt, UntypedFloat)):
                # `let mut acc = 0.0;`: the variable takes the type of its first
                # typed use (`acc += t.sum()` on f16 makes it f16), else the default
                tcx.mut_literals[sym] = (value, [])
            elif m and isinstance(ty, TupleT) and has_untyped(ty):
                tcx.mut_tuples[sym] = (value, [])  # `let mut q = (x, 0);`
            if value is not None and not m:
                sym.dim = tcx.program.dims.get(value)
                v, dt = getattr(sym.dim, "const_value", None), getattr(ty, "dtype", None)
                if isinstance(v, int) and not isinstance(v, bool) and isinstance(dt, DType) and dt.is_int \
                        and dt is not DType.BOOL and dt.wrap(v) != v:
                    # `let c: i16 = 300 << 9;` is 22528 (a shift's bits shifted out are lost, as it runs; any
                    # other overflow of the init is its own E0227): its reads saw 153600 (`c + 1` was E0227)
                    sym.dim = type(sym.dim).const(dt.wrap(v))
                if isinstance(ty, StrT) and (s := tcx.const_str(value)) is not None:
                    tcx.const_strings[sym] = s
                if value in tcx.shape_values:
                    sym.value = tcx.shape_values[value]
            tcx.program.symbols[pat] = sym
            tcx.program.types[pat] = ty
            fx.scopes[-1][ident.name] = sym
        case ast.TuplePat(elems=elems):
            if isinstance(ty, TupleT) and len(ty.elems) == len(elems):
                vals = value.elems if isinstance(value, ast.TupleExpr) and \
                    len(value.elems) == len(elems) else [None] * len(elems)
                for p, t, v in zip(elems, ty.elems, vals, strict=True):
                    _bind_pattern(tcx, p, t, fx, v, kind)
            else:
                if not is_poison(ty):
                    tcx.emit(tcx.err(T.MISMATCHED_TYPES, "mismatched types", pat.span,
                                     f"expected a tuple of {len(elems)} elements, found `{ty}`")
                             .with_help(_values_indices_help(tcx, elems, value)
                                        or _shape_parts_help(tcx, elems, ty, value)
                                        or f"bind {len(elems)} names to a tuple of {len(elems)} values"))
                for p in elems:
                    _bind_pattern(tcx, p, ERROR, fx, None, kind)
            tcx.program.types[pat] = ty
        case ast.WildcardPat():
            tcx.program.types[pat] = ty
        case _:
            assert_never(pat)


def _no_value_call(value: ast.Expr) -> ast.Call | None:
    """The call of an atomic or `store_unchecked` that `value` is (`atomic_add(..)`, `unsafe { atomic_add(..) }`,
    `unsafe { atomic_add(..); }`), else None."""
    while isinstance(value, ast.UnsafeBlock):
        body = value.body
        if not body.stmts and body.tail is not None:
            value = body.tail
        elif len(body.stmts) == 1 and body.tail is None and isinstance(body.stmts[0], ast.ExprStmt):
            value = body.stmts[0].expr   # `unsafe { atomic_add(..); }`: the block's `()`
        else:
            break
    if isinstance(value, ast.Call) and isinstance(value.callee, ast.Name) and value.callee.ident.name in NO_VALUE:
        return value
    return None


def _check_stmt(tcx: CheckCx, st: ast.Stmt, fx: Fx) -> bool:
    """Check one statement; True when it always diverges (return/break/continue)."""
    match st:
        case ast.Let(pattern=pat, ty=te, value=value):
            want = resolve_type(tcx, te, fx.generics, fx.module, fx.in_kernel) if te else None
            if value is None:
                if want is None:
                    tcx.emit(tcx.err(T.MISMATCHED_TYPES, "type annotations needed", pat.span,
                                     "give this binding a type or a value")
                             .with_help("write `let x: T = value;`"))
                    want = ERROR
                if fx.in_kernel and not _carriable(want):
                    # the lowering gives such a binding no value to start from (E0701 at the launch)
                    tcx.emit(tcx.err(KERNEL_UNSUPPORTED, f"a `let` without a value, of type `{want}`, in device code",
                                     st.span, "only a number, a tile or a tuple of them can be declared without a value "
                                     "here")
                             .with_help("give it its value where it is declared (`let r = if c { .. } else { .. };` "
                                        "for a number or a tile; load a tile in each branch rather than pick a "
                                        "tensor)"))
                _bind_pattern(tcx, pat, want, fx, None)
                fx.deferred.update(s for x in ast.walk(pat) if isinstance(x, ast.NamePat)
                                   and (s := tcx.program.symbols.get(x)) is not None)
                return False
            if isinstance(pat, ast.NamePat) and isinstance(value, (ast.Name, ast.Path)):
                tcx.fn_value_lets[value] = pat.name.name  # `let f = twice;`: E0203's help names `f`
            ty = tcx.check_expr(value, fx, want)
            if want is not None:
                if not is_poison(ty) and not coerce(tcx, ty, want, value):
                    mismatch(tcx, want, ty, value, te)
                else:
                    settle(tcx, value, want)
                ty = want
            _bind_pattern(tcx, pat, ty, fx, value)
            if isinstance(ty, UnitT) and isinstance(pat, ast.NamePat) and (call := _no_value_call(value)) is not None:
                # `let x = f();` of a unit function is legal, if useless; read, an atomic's is E0203 (names.py)
                tcx.no_value_lets[tcx.program.symbols[pat]] = (call.callee.ident.name, call.span)  # type: ignore[union-attr]
            return isinstance(ty, NeverT)
        case ast.Assign():
            _check_assign(tcx, st, fx)
            return False
        case ast.ExprStmt(expr=e, semi=semi) if destructuring(st) is not None:
            # `(a, b) = value;`: one error for the elements that do not fit, each at the
            # value's element where it is written as a tuple, one error where it is not
            saved, tcx.destructured = tcx.destructured, []
            try:
                tcx.check_expr(e, fx, UNIT)
                _report_destructured(tcx, tcx.destructured, destructuring(st)[1])  # type: ignore[index]
            finally:
                tcx.destructured = saved
            return False
        case ast.ExprStmt(expr=e, semi=semi):
            if isinstance(e, (ast.Name, ast.Path)) and _in_repl(tcx, e) and e.span.start == SHOWN_AT.get():
                # `twice` at the prompt: the REPL shows what it is; `twice;` shows nothing, so it is E0203 with the
                # call, as in a file (huser26: the REPL printed nothing at all)
                tcx.shown_names.add(e)
            ty = tcx.check_expr(e, fx, None if semi else UNIT)
            if isinstance(ty, OpT) and not fx.graph and not (isinstance(e, ast.Name) and _in_repl(tcx, e)):
                tcx.emit(tcx.err(T.UNUSED_OPERATION, f"the launch of `{ty.kernel}` is never run", e.span,
                                 "this builds an operation and drops it")
                         .note("a kernel call only builds an operation")
                         .with_help("run it with `.sync()`, or start it with `.launch()`"))
            return isinstance(ty, NeverT)
        case ast.For(pattern=pat, iter=it, body=body):
            ity = tcx.check_expr(it, fx, None)
            elem: Type = ERROR
            if isinstance(ity, RangeT):
                elem = ity.elem
            elif not is_poison(ity):
                tcx.emit(tcx.err(T.MISMATCHED_TYPES, "`for` loops iterate over ranges", it.span,
                                 f"expected a range `a..b`, found `{ity}`")
                         .with_help(_list_loop_help(it, pat) or "write `for i in a..b`"))
            fx.regions.append((len(fx.scopes), st.span, "loop"))
            fx.scopes.append({})
            _bind_pattern(tcx, pat, elem, fx, None)
            fx.loops += 1
            try:
                tcx.check_block(body, fx, UNIT)
            finally:
                fx.loops -= 1
                fx.scopes.pop()
                fx.regions.pop()
            return False
        case ast.While(cond=c, body=body):
            fx.regions.append((len(fx.scopes), st.span, "loop"))
            fx.loops += 1
            try:
                expect_bool(tcx, c, fx)  # the condition is part of the loop (`while { p = ..; c }`)
                tcx.check_block(body, fx, UNIT)
            finally:
                fx.loops -= 1
                fx.regions.pop()
            return False
        case ast.Return(value=v):
            if v is None:
                if not isinstance(fx.ret, UnitT) and not is_poison(fx.ret):
                    tcx.emit(tcx.err(T.MISMATCHED_TYPES, "mismatched types", st.span,
                                     f"expected `{fx.ret}`, found `()`")
                             .with_help("return a value: `return <expr>;`"))
                return True
            _returned(tcx, v, fx.ret)
            _early_return_in_device_code(tcx, st, fx)
            ty = tcx.check_expr(v, fx, fx.ret)
            if not is_poison(ty) and not coerce(tcx, ty, fx.ret, v):
                mismatch(tcx, fx.ret, ty, v, fx.info.decl.ret if fx.info else None)
            else:
                settle(tcx, v, fx.ret)
            return True
        case ast.Break() | ast.Continue():
            if fx.loops == 0:
                word = "break" if isinstance(st, ast.Break) else "continue"
                tcx.emit(tcx.err(N.LOOP_CONTROL_OUTSIDE_LOOP, f"`{word}` outside of a loop", st.span,
                                 f"cannot `{word}` outside of a loop")
                         .with_help("use `return` to leave a function"))
            return True
        case _:
            assert_never(st)


def _report_destructured(tcx: CheckCx, bad: list[tuple[ast.Name, Type, Type, ast.Name]],
                         whole: ast.Expr | None = None) -> None:
    """The mismatches of a destructuring assignment's elements: each alone at its own span
    (the value's element), and those that share a span (a value not written as a tuple)
    as one error there."""
    by_span: dict[Span, list[tuple[ast.Name, Type, Type, ast.Name]]] = {}
    for b in bad:
        by_span.setdefault(b[3].span, []).append(b)
    for span, group in by_span.items():
        if len(group) == 1:
            target, tty, vty, value = group[0]
            if whole is not None and not isinstance(whole, ast.TupleExpr) and value.span == whole.span:
                # `(x, n) = two(x, n);`: the element's span is the whole value's, which has no cast (a tuple)
                snip = tcx.snippet(value) or "f(..)"
                snip = snip if len(snip) < 40 else "f(..)"
                tcx.emit(tcx.err(T.MISMATCHED_TYPES, "mismatched types", value.span,
                                 f"expected `{tty}` for `{target.ident.name}`, found `{vty}`")
                         .secondary(target.span, f"`{target.ident.name}` is `{tty}`, assigned a `{vty}`")
                         .with_help(f"bind the tuple first (`let t = {snip};`) and give `{target.ident.name}` its "
                                    f"element converted with `as {tty}`, or change the type of `{target.ident.name}`"))
                continue
            mismatch(tcx, tty, vty, value, None)
            continue
        names = ", ".join(f"`{t.ident.name}`" for t, _, _, _ in group)
        d = tcx.err(T.MISMATCHED_TYPES, "mismatched types", span,
                    f"expected `({', '.join(str(t) for _, t, _, _ in group)})` for {names}, "
                    f"found `({', '.join(str(v) for _, _, v, _ in group)})`")
        for target, tty, vty, _ in group:
            d = d.secondary(target.span, f"`{target.ident.name}` is `{tty}`, assigned a `{vty}`")
        tcx.emit(d.with_help("give each variable a value of its type (`as` converts a number), or assign the "
                             "elements one by one"))


def _carriable(ty: Type) -> bool:
    """A value a kernel's branch or loop can carry out: a number, a tile, a tuple of them."""
    if isinstance(ty, TupleT):
        return all(_carriable(t) for t in ty.elems)
    return isinstance(ty, (ScalarT, TileT, UntypedInt, UntypedFloat)) or is_poison(ty)


def _early_return_in_device_code(tcx: CheckCx, st: ast.Return, fx: Fx) -> None:
    """E0701 where `tilec check` can see it (round 27: the lowering refused it at the launch only): a `return`
    before the end of a device function whose result is not a number, a tile or a tuple of them (a tensor
    reference, a view): the lowering carries the result of an early return in a variable of its type, and no
    variable carries such a value out of the branch the `return` is in."""
    decl = fx.info.decl if fx.info is not None else None
    if not fx.in_kernel or decl is None or decl.is_kernel or is_poison(fx.ret):
        return
    if _carriable(fx.ret) or isinstance(fx.ret, (UnitT, TensorT)):
        return
    body = decl.body
    if body.tail is None and body.stmts and body.stmts[-1] is st:
        return  # the body's last statement: its value, not an early return
    tcx.emit(tcx.err(KERNEL_UNSUPPORTED, f"an early `return` from a device function returning `{fx.ret}`",
                     st.span, "a `return` before the end of the function")
             .secondary(decl.ret.span if decl.ret is not None else decl.name.span, "the function's result type")
             .note("only numbers, tiles and tuples of them are carried out of the branch a `return` is in")
             .with_help("make the value the function's tail (`if c { a } else { b }`, not `if c { return a; } b`), "
                        "or return a tile loaded in each branch"))


def _carried_in_kernel(tcx: CheckCx, st: ast.Assign, sym: Symbol, ty: Type, fx: Fx) -> None:
    """E0701 where `tilec check` can see it (the lowering refuses it too, at the launch):
    in device code, a variable that holds a view, a tensor reference or a string, declared
    outside a branch or loop and assigned inside it. No region carries such a value: the
    rest of the kernel would read the branch's view whatever the condition."""
    if _carriable(ty):
        return
    depth = next((i for i in range(len(fx.scopes) - 1, -1, -1) if fx.scopes[i].get(sym.name) is sym), None)
    if depth is None:
        return
    found = next(((sp, kw) for start, sp, kw in reversed(fx.regions) if depth < start), None)
    if found is None:
        return
    region, kw = found
    what = "a tensor view" if isinstance(ty, (TileViewT, PartitionT)) else \
        "a tensor reference" if isinstance(ty, (RefT, TensorT)) else "a string" if isinstance(ty, StrT) \
        else "a tuple holding a tensor view, a tensor reference or a string" if isinstance(ty, TupleT) \
        else f"a `{ty}`"
    tcx.emit(tcx.err(KERNEL_UNSUPPORTED, f"assigning `{sym.name}` ({what}) inside a {kw} of device code",
                     st.span, f"`{sym.name}` holds {what}, which a {kw} cannot carry out")
             .secondary(region, f"this {kw}")
             .secondary(sym.span, f"`{sym.name}` declared here, outside the {kw}")
             .note("which view the rest of the kernel reads would depend on the path taken; only numbers, "
                   "tiles and tuples of them are carried out of a branch or loop")
             .with_help("load in each branch and let the `if` give the tile (`let t = if c { y.load(..) } else "
                        "{ x.load(..) };`), or bind a new name with `let` inside the " + kw))


def _assign_element(tcx: CheckCx, st: ast.Assign, target: ast.Index, fx: Fx) -> None:
    """E0114 for `x[i][j] = v` / `x[i] += v` (NumPy's, PyTorch's and CUDA's element
    writes): one error for the one mistake, whose help is the Tile spelling for
    what `x` is: a kernel's own tile (`z.store(where(..))`), a host tensor (a
    new tensor made whole with `where`), a tile value (a new tile)."""
    base: ast.Expr = target
    while isinstance(base, ast.Index):
        tcx.check_expr(base.index, fx, None)
        base = base.receiver
    bty = tcx.check_expr(base, fx, None)
    tcx.check_expr(st.value, fx, None)
    if is_poison(bty):
        return
    x = tcx.snippet(base) if isinstance(base, ast.Name) else None
    x = x or "x"
    cur = f"{x}.load()" if isinstance(bty, RefT) and bty.mutable and fx.in_kernel else x
    v = "v" if st.op == "=" else f"{cur} {st.op[:-1]} v"  # `t[0] += 1.0`: the new value is `t + v` there
    inner = bty.inner if isinstance(bty, RefT) else bty
    if isinstance(bty, RefT) and bty.mutable and fx.in_kernel:
        what, note = "a tensor element", "a kernel writes its own tile whole, with one `store`"
        help_ = (f"build the tile and store it: `{x}.store(where(mask, {v}, {x}.load()))`, with `mask` a `bool` "
                 "tile of comparisons of `arange` (`tilec doc where`)")
    elif isinstance(bty, RefT) and bty.mutable and isinstance(inner, TensorT):
        # a host function's `&mut` tensor: the caller's, changed through a kernel launched on it
        what, note = "a tensor element", "elements are not assigned one by one"
        help_ = (f"write into `{x}` with a kernel launched on it: `k({x}.partition([..]), ..).sync()`, with `k` "
                 f"storing `where(mask, {'v' if st.op == '=' else 'z.load() ' + st.op[:-1] + ' v'}, z.load())` "
                 "into its tile")
    elif isinstance(inner, TensorT) and not fx.in_kernel:
        what, note = "a tensor element", "a host tensor is made whole: elements are not assigned one by one"
        val = tcx.snippet(st.value) or "v"
        val = val if len(val) <= 30 and st.op == "=" else f"{x} {st.op[:-1]} {val}" if len(val) <= 30 else v
        help_ = _tile_element_help(tcx, target, inner, x, val, "tensor") if isinstance(base, ast.Name) else ""
        if not help_.startswith("make"):
            help_ = (f"make the new tensor with `where`: `{x} = where(mask, {v}, {x});`, with `mask` a `bool` "
                     "tensor of comparisons of `arange` (`tilec doc where`)")
    elif isinstance(inner, TensorT):
        what, note = "a tensor element", "a kernel writes only its own `&mut` tile, with one `store`"
        help_ = "make the values a tile and `store` it into a `&mut` parameter"
    else:
        what, note = "a tile element", "tiles are immutable values; only variables can be assigned"
        val = tcx.snippet(st.value) or "v"
        val = val if len(val) <= 20 and st.op == "=" else f"{x} {st.op[:-1]} {val}" if len(val) <= 20 else v
        help_ = _tile_element_help(tcx, target, inner, x, val)
    tcx.emit(tcx.err(N.INVALID_ASSIGN_TARGET, f"cannot assign to {what}", target.span, "not a variable")
             .note(note).with_help(help_))


def _tile_element_help(tcx: CheckCx, target: ast.Index, ty: Type, x: str, v: str, kind: str = "tile") -> str:
    """`t[i] = v` / `t[i][j] += v` of a tile `t` of known shape (round 17: the help was `let t2 = where(mask, v,
    t);` with the mask left to write): the mask of the element from `arange`s of the tile's own dimensions and
    the statement's indices, assigned back to `t` (a `let mut`'s new value)."""
    idx: list[str] = []
    node: ast.Expr = target
    while isinstance(node, ast.Index):
        idx.insert(0, tcx.snippet(node.index) or "")
        node = node.receiver
    shape = getattr(ty, "shape", None)
    # a host tensor of constant shape too, and fewer indices than axes (round 18: `z[0] = ones::<f32>([8])`, a
    # row of a [16, 8] tensor, got `where(mask, ..)` with the mask left to write): the value broadcasts over
    # the axes not indexed, by NumPy's rules
    whole = isinstance(ty, TileT) and shape and len(idx) == len(shape)
    rows = kind == "tensor" and isinstance(ty, TensorT) and shape and all(d is not None for d in shape) \
        and 0 < len(idx) <= len(shape)
    if not (whole or rows) or not all(idx) or sum(len(i) for i in idx) > 30:
        return f"bind a new value: `let t2 = where(mask, {v}, {x});`"
    n = len(shape)
    parts = []
    for a, (d, i) in enumerate(zip(shape, idx, strict=False)):
        dims = ", ".join(str(d) if b == a else "1" for b in range(n))
        parts.append(f"arange::<i32>({d})" + (f".reshape([{dims}])" if n > 1 else "") + f" == {i}")
    mask = " && ".join(f"({m})" for m in parts) if len(parts) > 1 else parts[0]
    return f"make the new {kind} with `where`: `{x} = where({mask}, {v}, {x});` (`{x}` a `let mut`)"


def _later_typed(tcx: CheckCx, sym: Any, value: ast.Expr) -> None:
    """`c = c + 5000000000;` (or `c += ..`) of a `let mut c = 0;` not typed yet: the value takes the type the
    variable takes (its first typed use's, else its default), with its literals' range checks (round 17: the
    value stayed untyped, its literal became an `i64`, and the sum wrapped into `c`'s `i32`: 705032704)."""
    if sym is not None and sym in tcx.mut_literals and isinstance(sym.ty, (UntypedInt, UntypedFloat)) \
            and isinstance(tcx.program.types.get(value), (UntypedInt, UntypedFloat)):
        tcx.mut_literals[sym][1].append(value)
    elif sym is not None and sym in tcx.mut_tuples and isinstance(value, ast.TupleExpr):
        tcx.mut_tuples[sym][1].append(value)  # `q = (q.0 + 5000000000, ..)`: its elements likewise


def _returned(tcx: CheckCx, v: ast.Expr | None, ret: Type) -> None:
    """`v` is what a function returns: a mix inside it casts toward the declared return type."""
    held = ret.dtype if isinstance(ret, (TileT, ScalarT)) else None
    if v is not None and isinstance(held, DType):
        tcx.store_dtypes[v] = (held, f"the function returns `{ret}`")


def _check_assign(tcx: CheckCx, st: ast.Assign, fx: Fx) -> None:
    target = st.target
    if isinstance(target, ast.Index):
        _assign_element(tcx, st, target, fx)
        return
    if not isinstance(target, ast.Name):
        tcx.check_expr(target, fx, None)
        tcx.check_expr(st.value, fx, None)
        tcx.emit(tcx.err(N.INVALID_ASSIGN_TARGET, "cannot assign to this expression", target.span,
                         "not a variable")
                 .note("tiles are immutable values; only variables can be assigned")
                 .with_help("assign to a `let mut` variable"))
        return
    tty = tcx.check_expr(target, fx, None)
    if fx.graph and isinstance(tty, TensorT):
        graph_effect(tcx, st.span, f"this assignment to `{target.ident.name}`")
    sym = tcx.program.symbols.get(target)
    if sym is not None and not sym.mutable and not is_poison(tty) and sym not in fx.deferred:
        if sym.kind in (SymbolKind.LOCAL, SymbolKind.PARAM):
            noun = "variable" if sym.kind is SymbolKind.LOCAL else "parameter"
            d = (tcx.err(N.ASSIGN_IMMUTABLE, f"cannot assign twice to immutable {noun} `{sym.name}`",
                         st.span, "cannot assign twice to immutable variable")
                 .secondary(sym.span, f"first assignment to `{sym.name}`" if noun == "variable"
                            else f"`{sym.name}` is not declared `mut`"))
            if isinstance(tty, RefT) and tty.mutable and isinstance(tty.inner, TensorT) and not fx.in_kernel:
                # `z += 1.0` / `z = ..` on a host function's `&mut` tensor: `mut z` would only rebind the name
                tcx.emit(d.note(f"`{sym.name}` is a reference to the caller's tensor: assigning it would not "
                                "change the tensor").with_help(
                    f"write into it with a kernel launched on it: `k({sym.name}.partition([..]), ..).sync()`, "
                    "with `k` storing the new values into its tile"))
                tcx.check_expr(st.value, fx, None)  # one error for the one mistake: the value is not compared
                return
            else:
                d = d.with_help(f"consider making this binding mutable: `mut {sym.name}`")
        else:
            d = (tcx.err(N.INVALID_ASSIGN_TARGET, f"cannot assign to {sym.kind.value} `{sym.name}`",
                         target.span, "not a variable")
                 .with_help(f"only a `let mut` variable can be assigned: `let mut x = {sym.name};`, then `x = ..;`"
                            if sym.kind is SymbolKind.CONST else "only a `let mut` variable can be assigned"))
        tcx.emit(d)
    if sym is not None and fx.in_kernel and fx.regions and sym.mutable and sym not in fx.deferred:
        _carried_in_kernel(tcx, st, sym, tty, fx)
    if st.op == "=":
        held = tty.dtype if isinstance(tty, (TileT, ScalarT)) else None
        if isinstance(held, DType):  # `acc = acc + x`: a mix in the value casts toward `acc`'s type
            tcx.store_dtypes[st.value] = (held, f"it is assigned to `{target.ident.name}`, of `{held}`")
        vty = tcx.check_expr(st.value, fx, tty)
        if isinstance(tty, (UntypedInt, UntypedFloat)) and isinstance(vty, ScalarT) and \
                coerce(tcx, tty, vty, target):
            settle(tcx, target, vty)  # the variable adopts the assigned type
            tty = vty
        elif sym is not None and sym in tcx.mut_tuples and isinstance(vty, TupleT) and \
                coerce(tcx, tty, vty, target):
            tty = adopt_tuple(tcx, sym, vty)  # `q = (y, i)`: its untyped elements take `i`'s type
            tcx.program.types[target] = tty
        if not is_poison(tty, vty) and not coerce(tcx, vty, tty, st.value):
            if tcx.destructured is not None and isinstance(st.value, ast.Name) \
                    and st.value.ident.name.startswith("("):  # an element of `(a, b) = value;`
                tcx.destructured.append((target, tty, vty, st.value))
            else:
                mismatch(tcx, tty, vty, st.value, None)
        else:
            settle(tcx, st.value, tty)
        _later_typed(tcx, sym, st.value)
        return
    op = st.op[:-1]
    vty = tcx.check_expr(st.value, fx, tty)
    rty = binary_types(tcx, op, tty, vty, st.target, st.value, st.op_span, fx, compound=True)
    _later_typed(tcx, sym, st.value)
    if sym is not None and isinstance(tty, (UntypedInt, UntypedFloat)) and sym.ty is not None:
        tty = sym.ty  # adopted by the operation
    if not is_poison(rty, tty) and not coerce(tcx, rty, tty, st.value):
        name = sym.name if sym else "target"
        d = tcx.err(T.MISMATCHED_TYPES, "mismatched types", st.span,
                    f"`{name}` has type `{tty}` but `{op}` gives `{rty}`")
        val = tcx.snippet(st.value) or "v"
        val = val if len(val) < 30 else "v"
        if isinstance(tty, RefT) and tty.mutable and isinstance(tty.inner, TensorT) and not fx.in_kernel:
            # `z += 1.0` on a host function's `&mut` tensor: its values change through a kernel
            d = d.note(f"`{name}` is a reference to the caller's tensor; `{op}` makes a new tensor").with_help(
                f"write into it with a kernel launched on it: `k({name}.partition([..]), ..).sync()`, with `k` "
                f"storing the new values (`z.store(z.load() {op} {val})`)")
        if not d.help and isinstance(rty, TileT) and not isinstance(tty, TileT) and isinstance(rty.dtype, DType):
            # `let mut acc = 0.0; acc += tile;`: the accumulator must be a tile from the start
            start = f"start `{name}` as a tile of that shape: `let mut {name} = " \
                    f"zeros::<{rty.dtype.value}>({shape_str(rty.shape)});`"
            if isinstance(vty, TileT) and all(str(x) == "1" for x in vty.shape):  # `acc += row.sum(1)` (round 14)
                one = tcx.receiver_snippet(st.value)
                start = f"`{one}` is a tile of one element: use its value, `{name} {st.op} {one}.item();`, or {start}"
            d = d.with_help(start)
        tcx.emit(d.with_help("a compound assignment cannot change the variable's type") if not d.help else d)


def _values_indices_help(tcx: CheckCx, elems: tuple[ast.Pattern, ...], value: ast.Expr | None) -> str | None:
    """`let (m, i) = t.max(1);` (PyTorch's `torch.max(t, 1)`, values and indices; round 16): Tile's `max` is
    the values, `argmax` the indices."""
    if len(elems) != 2 or not isinstance(value, ast.MethodCall) or value.method.name not in ("max", "min") \
            or not all(isinstance(p, ast.NamePat) for p in elems):
        return None
    x, args = tcx.snippet(value.receiver) or "t", ", ".join(tcx.snippet(a.value) or "" for a in value.args)
    x = x if len(x) < 30 else "t"
    v, i = (p.name.name for p in elems)  # type: ignore[attr-defined]
    arg = "argmax" if value.method.name == "max" else "argmin"
    return (f"`{x}.{value.method.name}({args})` is the values only (PyTorch's gives values and indices): "
            f"`let {v} = {x}.{value.method.name}({args}); let {i} = {x}.{arg}({args});`")


def _shape_parts_help(tcx: CheckCx, elems: tuple[ast.Pattern, ...], ty: Type, value: ast.Expr | None) -> str | None:
    """`let (r, c) = x.shape();` (round 22: "bind 2 names to a tuple of 2 values", which it does): a shape is
    indexed, one axis at a time."""
    if not isinstance(ty, ShapeT) or value is None or ty.rank != len(elems) \
            or not all(isinstance(p, (ast.NamePat, ast.WildcardPat)) for p in elems):
        return None
    v = tcx.receiver_snippet(value)
    lets = [f"let {p.name.name} = {v}[{k}];" for k, p in enumerate(elems) if isinstance(p, ast.NamePat)]
    return "a shape is indexed, one axis at a time: `" + " ".join(lets) + "`"


def _in_repl(tcx: CheckCx, e: ast.Expr) -> bool:
    """`e` is in the REPL's session program (`repl.synth`), where a variable entered at the prompt (`op`) is shown:
    it reads the operation, which stays in the variable (E0224 said "the launch of `inc` is never run")."""
    return e.span.file >= 0 and tcx.sources.get(e.span.file).name == "<repl>"


def _int_value(e: Any) -> int | None:
    if isinstance(e, ast.IntLit) and e.suffix is None:
        return e.value
    if isinstance(e, ast.Unary) and e.op == "-" and isinstance(e.operand, ast.IntLit) and e.operand.suffix is None:
        return -e.operand.value
    return None


def _list_loop_help(it: Any, pat: Any) -> str | None:
    """`for half in [32, 16, 8, 4, 2, 1]` (Rust iterates over an array; round 27, huser28: the help was "write
    `for i in a..b`"): a range over the positions, each value computed from the position where the list is an
    arithmetic progression or halves or doubles; else the range and the values left to the body."""
    if not isinstance(it, ast.ArrayExpr) or not isinstance(pat, ast.NamePat) or len(it.elems) < 2:
        return None
    vals = [_int_value(e) for e in it.elems]
    if any(v is None for v in vals):
        return None
    v: list[int] = [x for x in vals if x is not None]
    name, n = pat.name.name, len(v)
    i = "k" if name == "i" else "i"
    d = v[1] - v[0]
    if all(b - a == d for a, b in pairwise(v)):
        step = i if abs(d) == 1 else f"{i} * {abs(d)}"
        value = step if v[0] == 0 and d > 0 else f"{v[0]} {'+' if d >= 0 else '-'} {step}"
    elif v[0] > 0 and all(a == 2 * b for a, b in pairwise(v)):
        value = f"{v[0]} >> {i}"
    elif v[0] != 0 and all(b == 2 * a for a, b in pairwise(v)):
        value = f"{v[0]} << {i}"
    else:
        return (f"a `for` runs over a range, not a list: `for {i} in 0..{n} {{ .. }}`, with the value of each "
                f"step computed from `{i}` (or the body written once for each value)")
    return f"a `for` runs over a range, not a list: `for {i} in 0..{n} {{ let {name} = {value}; .. }}`"
