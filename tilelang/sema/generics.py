"""Generic instantiation: inferring and checking generic arguments of a call.

Decides the values of a callee's const generics and type parameters from an
explicit turbofish (`turbofish`) and from the argument types (`unify`:
element types, shapes, references, tuples), reports conflicting values of
one generic (`bind_dim`, E0214 with where each value came from), and
builds the mismatch diagnostic of an argument (`arg_mismatch`).
"""

from __future__ import annotations

import re
from typing import Any

from tilelang.diagnostics.codes import syntax as S
from tilelang.diagnostics.codes import types as T
from tilelang.dtypes import DTYPE_NAMES, DType
from tilelang.source import Span
from tilelang.sema.coerce import coerce, settle
from tilelang.sema.context import CheckCx, Fx
from tilelang.sema.items import is_type_expr, resolve_type
from tilelang.sema.program import FnInfo
from tilelang.sema.typeops import deref, is_intlike, is_numeric_scalar, is_poison
from tilelang.sema.types import (
    I32,
    Dim,
    GraphT,
    HandleT,
    OpT,
    PartitionT,
    RefT,
    ScalarT,
    ShapeT,
    TensorT,
    TileT,
    TupleT,
    Type,
    TypeParam,
    UntypedFloat,
    UntypedInt,
    elem_of,
    shape_str,
    subst_dim,
)
from tilelang.sema.widen import widened_sum_help
from tilelang.syntax import ast


def turbofish(tcx: CheckCx, e: ast.Call, info: FnInfo, fx: Fx, env: dict[str, Any], srcs: dict[str, Any],
              deferred: dict[str, ast.Expr]) -> None:
    for g, targ in zip(info.decl.generics, e.generics, strict=False):
        name = g.name.name
        if g.is_const:
            expr = _typearg_as_expr(targ)
            if expr is None:
                tcx.emit(tcx.err(T.MISMATCHED_TYPES, f"expected a constant for `{name}`, found a type",
                                 targ.span, "not a constant")
                         .with_help("give an integer, e.g. `::<128>`"))
                continue
            if isinstance(expr, ast.Name) and expr.ident.name == "_":
                tcx.emit(_underscore_generic(tcx, e, targ, name))
                continue
            t = tcx.check_expr(expr, fx, None)
            if not is_poison(t) and not is_intlike(t):
                tcx.emit(tcx.err(T.MISMATCHED_TYPES, "mismatched types", targ.span,
                                 f"expected an integer, found `{t}`")
                         .with_help("const generics take integers"))
                continue
            settle(tcx, expr, I32)
            d = tcx.program.dims.get(_block_tail(expr))
            if d is None:
                deferred[name] = expr
            else:
                env[name] = d
            srcs[name] = targ
        else:
            gt = resolve_type(tcx, targ, fx.generics, fx.module, fx.in_kernel) if is_type_expr(targ) else None
            if not isinstance(gt, ScalarT):
                if gt is None or not is_poison(gt):
                    tcx.emit(tcx.err(T.MISMATCHED_TYPES, f"expected an element type for `{name}`", targ.span,
                                     "not a scalar type")
                             .with_help("give a scalar type such as `f32` or `i32`"))
                continue
            env[name] = gt.dtype
            srcs[name] = targ


def _underscore_generic(tcx: CheckCx, e: ast.Call, targ: Any, name: str) -> Any:
    """E0022 for `k::<_>(..)` written to mean "infer it": the call infers
    generics only where the turbofish is left out."""
    from tilelang.tuner.space import listed_generics

    info = tcx.program.callee_of(e)
    cands = listed_generics(info.decl) if info is not None and info.is_kernel else {}
    callee = tcx.snippet(e.callee)
    value = str(cands[name][0]) if name in cands else "64"
    given = f"{callee}::<{', '.join(value if g is targ else tcx.snippet(g) for g in e.generics)}>(..)"
    if name in cands:  # round 14: the `_` a tuned tile dimension takes does not pick a generic in a turbofish
        how = (f"give its value, e.g. `{given}` (the first of its `#[autotune]` candidates {list(cands[name])}): "
               f"in Tile source the tuner picks `{name}` only where a tile dimension written `_` leaves it open "
               "(`z.partition([_])`), and from Python where the call leaves it open")
    elif len(e.generics) == 1:
        how = (f"leave the turbofish out, `{callee}(..)`, for the call to infer `{name}` from its arguments, or "
               f"give its value, e.g. `{given}`")
    else:
        how = (f"give `{name}` its value, e.g. `{given}`, or leave the whole turbofish out, `{callee}(..)`, where "
               "the arguments fix every generic")
    return (tcx.err(S.UNDERSCORE_EXPR, "`_` can only be used in a pattern", targ.span,
                    f"`_` is not a value for `{name}`")
            .with_help(how))


def _bind_dim(tcx: CheckCx, name: str, value: Dim, src: Any, env: dict[str, Any], srcs: dict[str, Any],
              info: FnInfo, e: ast.Call) -> bool:
    if name in env:
        prev = env[name]
        if isinstance(prev, Dim) and prev != value:
            d = (tcx.err(T.GENERIC_CONFLICT,
                         f"conflicting values for const generic `{name}` of `{info.name}`: "
                         f"{prev} and {value}", src.span, f"this gives `{name}` = {value}")
                 .secondary(srcs[name].span, f"this gives `{name}` = {prev}"))
            p, v = prev.const_value, value.const_value
            if any(srcs[name] is g for g in e.generics):
                key = f"{name}#turbofish"  # one report a call, not one per argument it disagrees with
                if key in srcs:
                    return False
                srcs[key] = True
                other = (f", or give `{name}` = {value} in the turbofish if this is the size you mean"
                         if not _named_twice(info, name) else "")  # ([B, B]: the other size is B too)
                if p is not None and p <= 0 and v is not None and v > 0:
                    # no tile has that size: "use 0 here" led to E0212
                    d = d.with_help(f"give `{name}` = {value} in the turbofish (a dimension of {p} is no tile "
                                    f"size), or leave the turbofish out for the call to infer it")
                else:
                    d = d.with_help(f"use {prev} here, as the turbofish says{other}")
            elif p is not None and v is not None and p != v and (
                    isinstance(src, (ast.Ref, ast.Name)) != isinstance(srcs[name], (ast.Ref, ast.Name))):
                # a tile that does not match a tensor's static dimension (rows of
                # 768 in tiles of 1024): either size the tile to the tensor, or
                # let the tensor's dimension be any (`?`) and read it padded
                small, big = min(p, v), max(p, v)
                tensor = v if isinstance(src, (ast.Ref, ast.Name)) else p
                if tensor == big:  # a tile smaller than the tensor (round 12: "a tile of 4 fits a dimension of 4")
                    whole = f"or give the partition a tile of {big} if one tile should cover it"
                    if _read_tile_by_tile(info, e, src if tensor == v else srcs[name]):
                        d = (d.with_help(f"the tensor parameter's type makes it one tile long (`{name}` = {small}), "
                                         f"but the tensor holds {big}: declare this dimension of the tensor parameter "
                                         f"`?` to read its tiles (`x.load_like(z)`, `x.partition([..]).load([..])`)")
                              .with_help(whole))
                    else:  # read whole (`mu.partition([K, 4]).load([0, 0])`): `?` would read its first tile only
                        d = d.with_help(f"the partition's tile gives `{name}` = {small}, but the tensor parameter's "
                                        f"type makes `{name}` its whole size, {big}, and the kernel reads it whole: "
                                        f"give the partition a tile of {big} where it gives `{name}` = {small}")
                    tcx.emit(d)
                    return False
                d = (d.with_help(f"tiles of any size work: a tile of {small} fits a dimension of "
                                 f"{small} exactly")
                      .with_help(f"or keep the tile of {big} and declare this dimension of the tensor "
                                 f"parameter `?`: the tile's elements past the tensor's edge are read "
                                 f"as `value` by `x.partition([..]).load_padded([..], value)` (use "
                                 f"`f32::NEG_INFINITY` for a maximum, 0 for a sum) and stores past it "
                                 f"are dropped")
                      .note("`tilec doc edges` shows both spellings for rows of 768"))
            elif _one_argument(e, src, srcs[name]):
                # `z.partition([16, 8])` for a `[B, B]` tile: a turbofish cannot help, both come from here
                d = d.with_help(f"`{name}` names more than one size of this argument's shape: give them one "
                                f"value ({prev} or {value} for each), or give the kernel parameter a generic of "
                                "its own for each size")
            elif not any(isinstance(x, (ast.Ref, ast.Name)) for x in (src, srcs[name])):
                # two partitions (round 21: "or pass the generics explicitly", which cannot give one generic
                # two values: `lion::<256>(w.partition([256]), m.partition([128]))` conflicts the same way)
                d = d.with_help(f"make the tile shapes agree: the other partition gives `{name}` = {prev}, so use "
                                f"{prev} here too (one launch's tiles share its generics)")
            else:
                d = d.with_help("make the tile shapes agree, or pass the generics explicitly with `::<..>`")
            tcx.emit(d)
            return False
        return True
    env[name] = value
    srcs[name] = src
    return True


def _read_tile_by_tile(info: FnInfo, e: ast.Call, arg: Any) -> bool:
    """Whether kernel `info` reads the tensor parameter that argument `arg` of launch `e` gives only a tile a
    block: `x.load_like(z)`, or `x.partition([..]).load(index)` with `block_id` in the index. Only then does
    declaring a dimension of it `?` keep what the kernel reads (huser21: a GMM's `mu: &Tensor<f32, [K, 4]>`,
    read whole with `mu.partition([K, 4]).load([0, 0])`, read 4 of its 8 components once declared `[?, 4]`
    beside a partition's `K` = 4)."""
    at = next((i for i, a in enumerate(e.args) if any(n is arg for n in ast.walk(a.value))), None)
    if at is None or at >= len(info.decl.params):
        return False
    name = info.decl.params[at].name.name
    uses = tiled = 0
    for n in ast.walk(info.decl.body):
        if isinstance(n, ast.Name) and n.ident.name == name:
            uses += 1
        elif isinstance(n, ast.MethodCall) and _names(n.receiver, name) and n.method.name == "load_like":
            tiled += 1
        elif isinstance(n, ast.MethodCall) and n.method.name == "load" and isinstance(n.receiver, ast.MethodCall) \
                and n.receiver.method.name == "partition" and _names(n.receiver.receiver, name) \
                and any(isinstance(c, ast.Call) and isinstance(c.callee, ast.Name) and c.callee.ident.name == "block_id"
                        for c in ast.walk(n.args)):
            tiled += 1
    return 0 < uses == tiled


def _names(x: Any, name: str) -> bool:
    return isinstance(x, ast.Name) and x.ident.name == name


def _named_twice(info: FnInfo, name: str) -> bool:
    """Whether one parameter's shape names const generic `name` twice
    (`Tensor<f32, [B, B]>`): then one argument gives it two values."""
    for p in info.decl.params:
        shape = p.ty.inner.args[1] if isinstance(p.ty, ast.RefType) and isinstance(p.ty.inner, ast.NamedType) \
            and len(p.ty.inner.args) > 1 else None
        if isinstance(shape, ast.ShapeType):
            names = [d.ident.name for d in shape.dims if isinstance(d, ast.Name)]
            if names.count(name) > 1:
                return True
    return False


def _one_argument(e: ast.Call, a: Any, b: Any) -> bool:
    """Whether nodes `a` and `b` both lie inside one argument of call `e`."""
    spans = [getattr(x, "span", None) for x in (a, b)]
    if any(sp is None for sp in spans):
        return False
    lo, hi = min(sp.start for sp in spans), max(sp.end for sp in spans)  # type: ignore[union-attr]
    return any(arg.span.file == spans[0].file and arg.span.start <= lo and hi <= arg.span.end  # type: ignore[union-attr]
               for arg in e.args)


def unify_dims(tcx: CheckCx, pshape: tuple[Dim | None, ...], ashape: tuple[Dim | None, ...], src: Any,
               env: dict[str, Any], srcs: dict[str, Any], info: FnInfo, e: ast.Call,
               pending: list[tuple[Dim, Dim | None, Any, Any, bool]], param: Any = None,
               partition: bool = True, deferred: dict[str, Any] | None = None) -> bool:
    ok = True
    for ix, (pd, ad) in enumerate(zip(pshape, ashape, strict=False)):
        if pd is None:
            continue
        if ad is not None and any(s.startswith("?") for s in ad.symbols()):
            ad = None  # a host partition dim known only at run time
        sym = pd.as_symbol()
        dsrc = _partition_dim_expr(src, ix) if partition else src
        if sym is not None and sym in info.const_generics:
            if ad is not None:
                ok = _bind_dim(tcx, sym, ad, dsrc, env, srcs, info, e) and ok
            elif not partition and deferred is not None:
                deferred.setdefault(sym, src)  # the tensor's run-time shape gives it
            continue
        pending.append((pd, ad, dsrc, param, partition))
    return ok


def solve_linear(pd: Dim, ad: Dim | None, env: dict[str, Any], generics: tuple[str, ...]) -> tuple[str, Dim] | None:
    """The one const generic left in `pd` whose value makes it `ad`, where `pd` is linear in it (`2 * HD`,
    `B + 1`, `BM * BN` with `BM` known) and the value a positive integer: a tile of 64 for `[2 * HD]` gives
    `HD` = 32 (round 18: it was "cannot infer"). None where `ad` is not a constant, more or fewer than one
    generic is unknown, or no positive integer solves it (the shape check then reports the mismatch). A symbolic
    `ad` whose every coefficient the generic's divides solves it too: a device function's `[2 * HD]` given a
    caller's `[2 * HD]` (or `[4 * Q + 2]`) tile (huser26: "cannot infer the generic parameter `HD`", whose help
    `norm_rope::<..>(..)` led to `{ D / 2 }` and a mismatch of `(D / 2) * 2` against `D`)."""
    if ad is None:
        return None
    known = {k: v for k, v in env.items() if isinstance(v, Dim)}
    free = [x for x in pd.symbols() if x not in known]
    if len(free) != 1 or free[0] not in generics:
        return None
    g = free[0]
    coef, rest = 0, Dim(())
    for mono, c in subst_dim(pd, known).terms:
        if mono == (g,):
            coef += c
        elif g in Dim(((mono, 1),)).symbols():
            return None  # `B * B`, `B / 2`: not linear in `g`
        else:
            rest = rest + Dim(((mono, c),))
    if coef == 0 or rest.const_value is None:
        return None
    if ad.const_value is None:
        diff = ad - rest
        if any(c % coef for _, c in diff.terms):
            return None
        return g, Dim(tuple((m, c // coef) for m, c in diff.terms))
    num = ad.const_value - rest.const_value
    if num % coef or num // coef <= 0:
        return None
    return g, Dim.const(num // coef)


def turbofish_elem_mismatch(tcx: CheckCx, e: ast.Call, info: FnInfo, pd: Any, got: Any, a: ast.Expr,
                            env: dict[str, Any], srcs: dict[str, Any]) -> bool:
    """An argument whose element type differs from the one the turbofish gave
    the type parameter (`flash_attention::<f32, ..>` of `f16` tensors): one
    error for the call, at the turbofish's type, saying to write the
    arguments' type there (it proposed `as` casts of each argument, a
    partition's too). True when handled (reported now or already)."""
    name = pd.name if isinstance(pd, TypeParam) else None
    if name is None or not any(srcs.get(name) is g for g in e.generics) or not isinstance(got, DType):
        return False
    key = f"{name}#turbofish"  # not a generic's name: one report a call
    if key not in srcs:
        srcs[key] = True
        given = env[name].value if isinstance(env[name], DType) else env[name]
        shown = ", ".join(got.value if g is srcs[name] else tcx.snippet(g) for g in e.generics)
        tcx.emit(tcx.err(T.MISMATCHED_TYPES, f"the turbofish gives `{name}` = `{given}`, but the arguments hold "
                         f"`{got.value}`", srcs[name].span, f"`{name}` = `{given}` here")
                 .secondary(a.span, f"this holds `{got.value}`")
                 .with_help(f"write the arguments' element type there: `{info.name}::<{shown}>(..)`, or "
                            f"convert the data to `{given}` where it is made"))
    return True


def _cast_arg_help(tcx: CheckCx, a: ast.Expr, fe: DType, we: DType, info: FnInfo, call: ast.Expr | None) -> str:
    """`cast with as: X as we`; where the call's result (of `we`) is stored into, assigned to or returned as
    `fe`, the whole call with the result cast back (round 12: `z.store(softmax(x.load_like(z)))` of an f16
    tile was told `x.load_like(z) as f32`, which then stored f32 into f16)."""
    cast = f"{tcx.cast_snippet(a)} as {we.value}"
    held = tcx.store_dtypes.get(call) if call is not None else None
    if held is None or held[0] != fe or elem_of(info.ret) != we:
        # (round 27: `widen(x.sum())` of a `u8` tensor for a `u32` parameter was told `x.sum() as u32`, a
        # sum taken in `u8` that wraps)
        return widened_sum_help(tcx, a, fe, we) or f"cast with `as`: `{cast}`"
    text, whole = tcx.snippet(a), tcx.snippet(call)
    at = a.span.start - call.span.start
    if whole[at:at + len(text)] != text:
        return f"cast with `as`: `{cast}`"
    back = f"{whole[:at]}{cast}{whole[at + len(text):]} as {fe.value}"
    return f"cast with `as`, and the result back ({held[1]}): `{back}`"


def arg_mismatch(tcx: CheckCx, p: ast.Param, pty: Type, a: ast.Expr, aty: Type, info: FnInfo,
                 call: ast.Expr | None = None) -> None:
    d = (tcx.err(T.MISMATCHED_TYPES, "mismatched types", a.span, f"expected `{pty}`, found `{aty}`")
         .secondary(p.span, f"parameter `{p.name.name}` of `{info.name}`"))
    if isinstance(a, ast.Ref) and isinstance(pty, (ScalarT, UntypedInt, UntypedFloat)) and isinstance(aty, RefT) \
            and isinstance(aty.inner, (ScalarT, UntypedInt, UntypedFloat)):
        # `f(&s)` for a scalar parameter: a scalar is passed by value
        d = d.with_help(f"pass the value: `{tcx.snippet(a.expr)}` (a scalar is passed by value; `&` lends tensors)")
    elif isinstance(pty, RefT) and pty.mutable and not info.is_kernel and isinstance(aty, (TensorT, RefT)):
        # a host function's `&mut` tensor (round 22: "partition it", a kernel's argument)
        x = tcx.snippet(a.expr if isinstance(a, ast.Ref) else a)
        d = d.with_help(f"lend it mutably: `&mut {x}` (the function writes it; `{x}` declared `let mut`)")
    elif isinstance(pty, RefT) and isinstance(aty, TensorT):
        d = d.with_help(f"borrow it: `{tcx.borrow_snippet(a)}`" if not pty.mutable else
                        f"partition it: `{tcx.receiver_snippet(a)}.partition([..])`")
    elif isinstance(pty, RefT) and not pty.mutable and isinstance(aty, PartitionT):
        # the kernel's output declared `&` (read-only) though the launch partitions it
        d = d.note("a partition is for a `&mut` parameter: each block gets one tile to write").with_help(
            f"if `{p.name.name}` is the kernel's output, declare it `&mut`: "
            f"`{p.name.name}: &mut {tcx.snippet(p.ty).lstrip('&').strip()}`; to only read it, pass "
            f"`&{tcx.snippet(a.receiver) if isinstance(a, ast.MethodCall) else 'it'}`")
    elif isinstance(pty, RefT) and pty.mutable and isinstance(aty, RefT):
        d = d.with_help(f"partition it: `{tcx.snippet(a.expr if isinstance(a, ast.Ref) else a)}"
                        ".partition([..])`")
    else:
        fe, we = elem_of(aty), elem_of(pty)
        if isinstance(fe, DType) and isinstance(we, DType) and fe != we and isinstance(a, ast.Ref) \
                and not a.mutable:  # `&w` of the wrong element type: borrow the cast, `&(w as bf16)`
            d = d.with_help(f"cast with `as`, then borrow: `&({tcx.cast_snippet(a.expr)} as {we.value})`")
        elif isinstance(fe, DType) and isinstance(we, DType) and fe != we and isinstance(aty, PartitionT):
            # a partition has no cast (E0205): the kernel writes `we` into the tensor itself
            t = tcx.snippet(a.receiver) if isinstance(a, ast.MethodCall) else None
            t = t if t and t.isidentifier() else "t"
            d = d.with_help(f"`{t}` holds `{fe.value}` and the kernel writes `{we.value}` into its tiles: partition a "
                            f"tensor of `{we.value}` (`let mut {t}2 = {t} as {we.value};` then `{t}2.partition([..])`, "
                            f"the results in `{t}2`), or declare the parameter with `{fe.value}` elements")
        elif isinstance(fe, DType) and isinstance(we, DType) and fe != we and isinstance(aty, RefT) \
                and isinstance(aty.inner, TensorT):
            # a tensor parameter given on in a kernel: tensors have no cast there (E0205)
            name = tcx.snippet(a) or "x"
            d = d.with_help(f"a tensor has no cast inside a kernel: declare `{info.name}`'s parameter with "
                            f"`{fe.value}` elements, or give the kernel a tensor of `{we.value}` for `{name}` (cast "
                            "it on the host)" + ("" if aty.mutable else ", or load its tile and cast that"))
        elif isinstance(fe, DType) and isinstance(we, DType) and fe != we and isinstance(aty, TensorT) \
                and isinstance(pty, RefT):
            # a host tensor for a `&Tensor<..>` parameter of another element type: the cast, borrowed
            d = d.with_help(f"cast with `as`, then borrow: `&({tcx.cast_snippet(a)} as {we.value})`")
        elif isinstance(fe, DType) and isinstance(we, DType) and fe != we:
            d = d.with_help(_cast_arg_help(tcx, a, fe, we, info, call))
        elif isinstance(pty, RefT) and isinstance(pty.inner, TensorT) \
                and isinstance(aty, (UntypedFloat, UntypedInt, ScalarT)):
            # a number for a tensor parameter (round 23: "pass a value of type `f32`, or cast: `3.0 as f32`",
            # still a number)
            t = we.value if isinstance(we, DType) else "f32"
            v = tcx.snippet(a) or "v"
            dims = pty.inner.shape or (None,)
            shape = "[" + ", ".join(str(x.const_value) if x is not None and x.const_value is not None else "1"
                                    for x in dims) + "]"   # of the parameter's rank, its constant dimensions
            d = d.with_help(f"`{p.name.name}` is a tensor: pass one, borrowed (`&full::<{t}>({shape}, {v})` holds "
                            f"that value), or declare the parameter as a number, `{p.name.name}: {t}`")
        elif isinstance(aty, (UntypedFloat, UntypedInt)) and isinstance(we, DType):
            # a literal the parameter's type cannot take: `2.5` for an `i32`, `1` for a `bool`
            d = d.with_help(f"pass a value of type `{we.value}`, or cast: `{tcx.cast_snippet(a)} as {we.value}`")
        elif isinstance(aty, (HandleT, OpT, GraphT)):
            d = d.with_help(unwritten_help(tcx, a, aty, pty, info, call))
        elif (gen := _generic_fn_help(tcx, pty, aty, info)) is not None:
            d = d.with_help(gen)
        elif (gen := _symbolic_size_help(tcx, p, pty, aty, info)) is not None:
            d = d.with_help(gen)
        elif isinstance(pty, TileT) and isinstance(aty, TileT) and len(pty.shape) == len(aty.shape) + 1:
            # a 1-D tile for a row-wise 2-D function (`std::nn::softmax`)
            d = d.with_help(f"add a leading axis: `{tcx.receiver_snippet(a)}.reshape("
                            f"{shape_str((Dim.const(1), *aty.shape))})`")
    if not d.help and isinstance(deref(pty), TensorT) and isinstance(deref(aty), ShapeT):
        # `let lens = [0, 1, 50]; k(.., &lens)`: a list literal is a shape, and Tile has no tensor literal
        d = d.note("`[..]` makes a shape (a list of integers for `partition`, `reshape`, tile indices), "
                   "not a tensor").with_help(_list_as_tensor_help(tcx, a))
    if not d.help and isinstance(pty, TileT) and isinstance(deref(aty), TensorT):
        x = tcx.snippet(a) or "x"
        x = x if len(x) < 30 and x.isidentifier() else "x"
        d = d.with_help(f"a tile exists only inside a kernel: call `{info.name}` in one, on a tile loaded there "
                        f"(`z.store({info.name}({x}.load_like(z)))`, `{x}` passed as `&{x}`)"
                        + ("" if info.module.startswith("std") else
                           f", or make `{p.name.name}` a tensor parameter (`&Tensor<..>`)"))
    if not d.help:
        d = d.with_help(f"pass a `{pty}` here (`.reshape([..])` changes a tile's or tensor's shape), or change "
                        f"the parameter `{p.name.name}`'s type")
    tcx.emit(d)


def unwritten_help(tcx: CheckCx, a: ast.Expr, aty: Type, pty: Type, info: FnInfo, call: ast.Expr | None) -> str:
    """A launch handle, kernel call or graph passed to a function (round 20's `fn finish<T>(h: T) { h.wait(); }`
    called `finish(h)`): no type names one, so no parameter takes it, and a type parameter stands for an
    element type. The help finishes it where it was made, the call's work after that (it said "pass a `T`
    here (`.reshape([..])` ..), or change the parameter's type", which no type can)."""
    what, verb, method = (("a launch handle", "wait for it", "wait") if isinstance(aty, HandleT) else
                          ("a kernel call", "run it", "sync") if isinstance(aty, OpT) else
                          ("a graph", "replay it", "replay"))
    x = tcx.snippet(a) or ""
    x = x if x.isidentifier() else "it"
    generic = (f" (a type parameter such as `{pty}` stands for an element type: `f32`, `i32`, ..)"
               if isinstance(pty, ScalarT) and isinstance(pty.dtype, TypeParam) else "")
    if isinstance(deref(pty), TensorT):  # the launch's output meant: the handle is not its tensor
        return (f"{what} is not a tensor (no function or kernel takes one): {verb} where it was made, "
                f"`{x}.{method}();`, then pass the tensor it writes")
    text = tcx.snippet(call) if call is not None else ""
    where = (f" in place of `{text}`, and the rest of what `{info.name}` does after that"
             if text and len(text) < 50 and "\n" not in text else "")
    return (f"{what} has no written type, so no function takes one{generic}: {verb} where it was made, "
            f"`{x}.{method}();`{where}")


def _generic_fn_help(tcx: CheckCx, pty: Type, aty: Type, info: FnInfo) -> str | None:
    """A device function written for one size (`fn hash(k: Tile<u32, [512]>) -> Tile<i32, [512]>`) given a
    tile whose size is the caller's const generic (`[B]`): its header made generic over that size, every
    dimension of that value in it named (round 18: the help said to reshape to [512] or "change the
    parameter's type")."""
    if not (isinstance(pty, TileT) and isinstance(aty, TileT) and len(pty.shape) == len(aty.shape)) \
            or info.module.startswith("std") or info.is_kernel:
        return None
    pairs = [(p.const_value, a.as_symbol()) for p, a in zip(pty.shape, aty.shape, strict=False)
             if p is not None and a is not None and p != a]
    if not pairs or any(v is None or g is None for v, g in pairs):
        return None
    decl = info.decl
    head = tcx.sources.snippet(Span(decl.span.file, decl.name.span.start, decl.body.span.start)).rstrip()
    new, gens = head, []
    for v, g in dict(pairs).items():
        name = g if g not in info.const_generics else f"{g}2"
        new = re.sub(r"\[[^\]]*\]", lambda m, v=v, name=name: re.sub(
            r"\b\w+\b", lambda w, v=v, name=name: name if _names_size(tcx, w.group(0), v) else w.group(0),
            m.group(0)), new)  # shapes
        gens.append(f"const {name}: i32")
    one = len(dict(pairs)) == 1
    sizes = " and ".join(str(v) for v in dict(pairs))
    if new == head:
        # no word of the header names the size: it is the function's own generics as this call gives them
        # (`fold::<64>` of `fn fold<const H: i32>(s: Tile<f32, [2 * H]>)`, round 26: the help made `fold`
        # generic over a `B` it never used, the same error again); no generic expression of the caller's `B`
        # is `[B]` for every `B` (`fold::<{ B / 2 }>` takes `[(B / 2) * 2]`), so the size becomes a constant
        consts = " and ".join(f"`const {g}: i32 = {v};`" for v, g in dict(pairs).items())
        names = " and ".join(f"`{g}`" for g in dict(pairs).values())
        return (f"`{info.name}` takes {'a size' if one else 'sizes'} of {sizes} at this call, and this tile's "
                f"{'is' if one else 'are'} {names}, the caller's const generic{'' if one else 's'}, any size as far "
                f"as the checker knows (shapes are compared as written, for every instance at once): make "
                f"{'it a module constant' if one else 'them module constants'}, {consts}, in place of the "
                f"caller's generic parameter{'' if one else 's'}")
    if decl.generics:
        at = new.index("<") + 1
        new = new[:at] + ", ".join(gens) + ", " + new[at:]
    else:
        at = len(decl.name.name)
        new = new[:at] + "<" + ", ".join(gens) + ">" + new[at:]
    return (f"`{info.name}` is written for {'a size' if one else 'sizes'} of {sizes} only, and this tile's "
            f"{'is the caller' if one else 'are the caller'}'s const generic{'' if one else 's'}: make "
            f"`{info.name}` generic over {'it' if one else 'them'}, `fn {new}`")


def _symbolic_size_help(tcx: CheckCx, p: ast.Param, pty: Type, aty: Type, info: FnInfo) -> str | None:
    """A device function's tile parameter whose size, with the call's generics, is an expression of the caller's
    generic other than the argument's (round 26: `fold::<{ B / 2 }>(s)` of `fn fold<const H: i32>(s: Tile<f32,
    [2 * H]>)` with `s: [B]` takes `[(B / 2) * 2]`, not `[B]` for an odd `B`; the help was to reshape into
    that shape, the same error). What works: the caller generic in the function's own size, its tiles written
    as the parameter is, or the caller's generic a module constant."""
    if not (isinstance(pty, TileT) and isinstance(aty, TileT) and len(pty.shape) == len(aty.shape)) \
            or info.module.startswith("std") or info.is_kernel or not info.const_generics:
        return None
    pairs = [(pd, ad.as_symbol()) for pd, ad in zip(pty.shape, aty.shape, strict=False)
             if pd is not None and ad is not None and pd != ad and not pd.is_const]
    if not pairs or any(g is None or g not in pd.symbols() for pd, g in pairs):
        return None
    declared = tcx.snippet(p.ty) or ""
    own = [g for g in info.const_generics if re.search(rf"\b{re.escape(g)}\b", declared)]
    if not declared or not own:
        return None
    g = pairs[0][1]
    gens = ", ".join(own)
    over = ", ".join(f"`{x}`" for x in own)
    return (f"`{info.name}`'s `{p.name.name}` is `{pty}` at this call and this tile is `{aty}`: shapes are compared "
            f"as written, for every instance at once, and `{pairs[0][0]}` is `{g}` only for some `{g}`: write the "
            f"caller's tiles in `{info.name}`'s own form, `{declared}`, the caller generic over {over} in "
            f"place of `{g}` (then `{info.name}::<{gens}>`), or make `{g}` a module constant")


def _names_size(tcx: CheckCx, word: str, v: int) -> bool:
    """Whether `word`, in a shape of a function's header, is the size `v`: the literal, or a module constant
    of that value (`[NB]` with `const NB: i32 = 16;`, round 20: the help kept `NB`, the same error again)."""
    if word == str(v):
        return True
    c = tcx.program.find_const(word) if word.isidentifier() else None
    return isinstance(c, int) and not isinstance(c, bool) and c == v


def unify(tcx: CheckCx, p: Type, a: Type, env: dict[str, Any], srcs: dict[str, Any], node: Any, info: FnInfo) -> bool:
    """Match argument type `a` against parameter type `p`, binding generics."""
    if is_poison(p, a):
        return True
    match p, a:
        case ScalarT(dtype=pd), _ if is_numeric_scalar(a):
            if isinstance(pd, TypeParam):
                if isinstance(a, ScalarT):
                    return _bind_elem(tcx, pd.name, a.dtype, env)
                return True  # a literal: any element type
            return coerce(tcx, a, p, node)
        case TileT(dtype=pd, shape=ps), TileT(dtype=ad, shape=as_):
            if not unify_elem(tcx, pd, ad, env):
                return False
            if len(ps) != len(as_):
                return False
            return _unify_shape(tcx, ps, as_, env, srcs, node, info)
        case TensorT(), TensorT():
            return _unify_tensor(tcx, p, a, env, srcs, node, info)
        case RefT(mutable=pm, inner=pi), RefT(mutable=am, inner=ai):
            if pm and not am:
                return False
            return unify(tcx, pi, ai, env, srcs, node, info)
        case TupleT(elems=pe), TupleT(elems=ae):
            return len(pe) == len(ae) and all(unify(tcx, x, y, env, srcs, node, info) for x, y in zip(pe, ae, strict=False))
        case _:
            return coerce(tcx, a, p, node)


def _bind_elem(tcx: CheckCx, name: str, d: Any, env: dict[str, Any]) -> bool:
    if name in env:
        return bool(env[name] == d)
    env[name] = d
    return True


def unify_elem(tcx: CheckCx, pd: Any, ad: Any, env: dict[str, Any]) -> bool:
    if isinstance(pd, TypeParam):
        return ad is None or _bind_elem(tcx, pd.name, ad, env)
    return pd is None or ad is None or pd == ad


def _unify_shape(tcx: CheckCx, ps: tuple[Dim | None, ...], as_: tuple[Dim | None, ...], env: dict[str, Any],
                 srcs: dict[str, Any], node: Any, info: FnInfo) -> bool:
    later: list[tuple[Dim, Dim]] = []
    for pd, ad in zip(ps, as_, strict=False):
        if pd is None:
            continue
        sym = pd.as_symbol()
        if sym is not None and sym in info.const_generics:
            if ad is None:
                continue
            if sym in env:
                if env[sym] != ad:
                    return False
            else:
                env[sym] = ad
                srcs[sym] = node
            continue
        if ad is not None:
            later.append((pd, ad))
    solved = True
    while solved:  # `Tile<f32, [2 * N]>` given a tile of 64: N = 32
        solved = False
        for pd, ad in later:
            x = solve_linear(pd, ad, env, info.const_generics)
            if x is not None:
                env[x[0]], srcs[x[0]], solved = x[1], node, True
    known = {k: v for k, v in env.items() if isinstance(v, (Dim, int))}
    return all(not pd.symbols() <= env.keys() or subst_dim(pd, known) == ad for pd, ad in later)


def _unify_tensor(tcx: CheckCx, p: TensorT, a: TensorT, env: dict[str, Any], srcs: dict[str, Any], node: Any,
                  info: FnInfo) -> bool:
    if not unify_elem(tcx, p.dtype, a.dtype, env):
        return False
    if p.shape is None or a.shape is None:
        return True
    if len(p.shape) != len(a.shape):
        return False
    return _unify_shape(tcx, p.shape, a.shape, env, srcs, node, info)


def _typearg_as_expr(t: Any) -> ast.Expr | None:
    """A turbofish argument as a value: `128`, `N * 2`, or a bare name `BM`."""
    if isinstance(t, ast.NamedType):
        if t.args:
            return None
        if t.name.name in DTYPE_NAMES:
            return None
        return ast.Name(t.name, t.span)
    if is_type_expr(t):
        return None
    return t  # type: ignore[no-any-return]


def _block_tail(e: ast.Expr) -> ast.Expr:
    """`{ B / 2 }` -> `B / 2`: a braced constant has its tail's dimension."""
    while isinstance(e, ast.Block) and not e.stmts and e.tail is not None:
        e = e.tail
    return e


def subst_env(env: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in env.items() if isinstance(v, (Dim, int, DType, TypeParam))}


def _partition_dim_expr(arg: Any, ix: int) -> Any:
    """The expression that gives dimension `ix` of a partition argument written
    in place (`x.partition([32, B])` -> `B` for 1), so that a label points at
    that dimension; otherwise the argument itself."""
    if (isinstance(arg, ast.MethodCall) and arg.method.name == "partition" and len(arg.args) == 1
            and isinstance(arg.args[0].value, ast.ArrayExpr) and ix < len(arg.args[0].value.elems)):
        return arg.args[0].value.elems[ix]
    return arg


def _list_as_tensor_help(tcx: CheckCx, a: ast.Expr) -> str:
    """A tensor of a shape literal's values on the host, with the program's own values where they are
    known and few (round 13: an EmbeddingBag's offsets `[0, 3, 3, 10, 11, 23]` were shown [10, 50, 64])."""
    inner = a.expr if isinstance(a, ast.Ref) else a
    dims = tcx.shape_values.get(inner)
    values = [x.const_value if isinstance(x, Dim) else None for x in dims] if dims else []
    if 2 <= len(values) <= 8 and all(isinstance(v, int) for v in values):
        name = tcx.snippet(inner) if isinstance(inner, ast.Name) else "t"
        chain = str(values[-1])
        for i in range(len(values) - 2, -1, -1):
            chain = f"where(at == {i}, {values[i]}, {chain})"
        return (f"make a tensor of the values on the host: `let at = arange::<i32>({len(values)}); let {name} = "
                f"{chain};` is {'[' + ', '.join(map(str, values)) + ']'} (or read one with `load_npy(\"..\")`)")
    return ("make a tensor of the values on the host: `let k = arange::<i32>(3); let t = where(k == 0, 10, "
            "where(k == 1, 50, 64));` is [10, 50, 64] (or read one with `load_npy(\"..\")`)")



def generic_values_fit(tcx: CheckCx, e: ast.Call, info: FnInfo, values: dict[str, Any], srcs: dict[str, Any]) -> bool:
    """E0222 for a const generic whose value this call fixes out of its declared type's range (`k::<300>` of
    `const B: u8`, a partition's tile of 300): the kernel read 300, a host function 44 (hrev29). False when
    one was reported."""
    from tilelang.diagnostics.generic_range import generic_misfit_words, generic_misfits

    consts = {k: v.const_value if isinstance(v, Dim) else v for k, v in values.items()}
    ok = True
    for g, v, dt in generic_misfits(info.decl.generics, consts):
        owner = f"{'kernel' if info.is_kernel else 'function'} `{info.name}`"
        message, label, help = generic_misfit_words(g, v, dt, owner)
        src = srcs.get(g.name.name)
        span = src.span if src is not None and hasattr(src, "span") else e.span
        tcx.emit(tcx.err(T.LITERAL_OUT_OF_RANGE, message, span, f"this gives `{g.name.name}` = {v}")
                 .secondary(g.span, label).with_help(help))
        ok = False
    return ok
