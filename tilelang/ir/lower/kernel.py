"""The kernel: parameters, own tiles, grid, hints.

`lower_kernel` builds one kernel instance: const generics from the
instantiation (missing ones inferred from the launch's argument facts),
one IR parameter per kernel parameter, the own-tile offsets of the `&mut`
parameters computed once at entry, the body, the grid rank and the
`#[hints]`. The result is verified before it is returned; an
`Unsupported` construct becomes a located E0701.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from tilelang.diagnostics.codes.runtime import KERNEL_UNSUPPORTED
from tilelang.diagnostics.model import ICE, Diagnostic, TileError
from tilelang.dtypes import DType
from tilelang.ir import nodes as ir
from tilelang.ir.lower.context import FnFrame, LowerCx, find_fn
from tilelang.ir.lower.control import lower_block
from tilelang.ir.lower.exprs import lower_expr
from tilelang.ir.lower.jumps import jump_flags
from tilelang.ir.lower.values import BOOL, I32, RET, CVal, TensorRef, Unsupported
from tilelang.ir.verify import verify_kernel
from tilelang.syntax import ast


def lower_kernel(program: Any, kernel_name: str, instantiation: Mapping[str, Any],
                 arg_facts: Mapping[str, Any] | None = None) -> ir.Kernel:
    """Lower one specialisation of kernel `kernel_name` (see `tilelang.ir.lower`)."""
    decl = find_fn(program, kernel_name, kernel=True)
    if decl is None:
        raise ICE(f"lower_kernel: no kernel `{kernel_name}` in the program")
    cx = LowerCx(program, decl, lower_expr)
    try:
        kernel = _lower_kernel_body(cx, dict(instantiation), dict(arg_facts or {}))
    except Unsupported as e:
        d = (Diagnostic.error(KERNEL_UNSUPPORTED, e.what)
             .primary(e.span, "not supported in a kernel yet")
             .secondary(decl.name.span, f"while compiling kernel `{decl.name.name}`"))
        if e.help:
            d = d.with_help(e.help)
        raise TileError(d) from None
    verify_kernel(kernel)
    return kernel


def _lower_kernel_body(cx: LowerCx, inst: dict[str, Any], facts: dict[str, Any]) -> ir.Kernel:
    decl = cx.decl
    generics = {k: int(v) for k, v in inst.items() if isinstance(v, (int, np.integer))}
    tparams = {k: v for k, v in inst.items() if isinstance(v, DType)}
    _infer_from_facts(cx, decl, generics, tparams, facts)
    cx.f = FnFrame(generics, tparams)
    missing = [g.name.name for g in decl.generics
               if g.is_const and g.name.name not in generics]
    if missing:
        raise ICE(f"lower_kernel: no value for const generic(s) {', '.join(missing)} "
                  f"of `{decl.name.name}`")
    mut_ranks: list[int] = []
    pending_own: list[ir.TensorParam] = []
    for p in decl.params:
        ty = p.ty
        if isinstance(ty, ast.RefType):
            dtype, dims = cx.tensor_type(ty.inner)
            if ty.mutable:
                tile = tuple(cx.need_int(d, p.span) for d in dims)
                tp = cx.b.tensor_param(p.name.name, dtype, len(dims), mutable=True,
                                       tile_shape=tile, span=p.span)
                mut_ranks.append(len(dims))
                pending_own.append(tp)
            else:
                sdims = tuple(None if d is None else cx.need_int(d, p.span) for d in dims)
                tp = cx.b.tensor_param(p.name.name, dtype, len(dims), dims=sdims, span=p.span)
                cx.tensors[tp.name] = TensorRef(tp, None)
            cx.f.scopes[0][p.name.name] = cx.tensors.get(tp.name, tp)
        else:
            dtype = cx.dtype(ty)
            v = cx.b.scalar_param(p.name.name, dtype, span=p.span)
            cx.f.scopes[0][p.name.name] = v
    if any(r > 3 for r in mut_ranks):
        raise Unsupported(decl.span, "a `&mut` tensor parameter of rank above 3",
                          "the grid has at most 3 axes; reshape the tensor on the host")
    cx.grid_rank = max([1, *mut_ranks])
    # Own-tile offsets are computed once at entry so every region can use them.
    for tp in pending_own:
        assert tp.tile_shape is not None
        offs = tuple(cx.b.block_id(d) if t == 1 else
                     cx.b.mul(cx.b.block_id(d), cx.b.const(t, I32), hint=f"{tp.name}_off{d}")
                     for d, t in enumerate(tp.tile_shape))
        ref = TensorRef(tp, offs)
        cx.tensors[tp.name] = ref
        cx.f.scopes[0][tp.name] = ref
    if RET in jump_flags([decl.body]):
        cx.f.scopes[0][RET] = CVal(False, BOOL)
    lower_block(cx, decl.body)
    hints = _hints(cx, decl)
    return cx.b.finish(grid_rank=cx.grid_rank, num_warps=hints.get("num_warps", 4),
                       num_stages=hints.get("stages", hints.get("num_stages", 2)),
                       instantiation=list(generics.items()),
                       hints=["stages" if h == "num_stages" else h for h in hints])


def _infer_from_facts(cx: LowerCx, decl: ast.FnDecl, generics: dict[str, int],
                      tparams: dict[str, DType], facts: dict[str, Any]) -> None:
    names = {g.name.name for g in decl.generics}
    for p in decl.params:
        fact = facts.get(p.name.name)
        ty = p.ty
        if fact is None or not isinstance(ty, ast.RefType):
            continue
        inner = ty.inner
        if not (isinstance(inner, ast.NamedType) and len(inner.args) == 2):
            continue
        dt, shape = inner.args
        if isinstance(dt, ast.NamedType) and dt.name.name in names and dt.name.name not in tparams:
            tparams[dt.name.name] = fact.dtype
        if not isinstance(shape, ast.ShapeType):
            continue
        source = fact.tile if ty.mutable else fact.shape
        if source is None:
            continue
        for d, e in zip(shape.dims, source, strict=False):
            if isinstance(d, ast.Name) and d.ident.name in names and d.ident.name not in generics:
                generics[d.ident.name] = int(e)


def _hints(cx: LowerCx, decl: ast.FnDecl) -> dict[str, int]:
    out: dict[str, int] = {}
    for attr in decl.attrs:
        if attr.name.name != "hints":
            continue
        for a in attr.args:
            if a.name is not None:
                v = cx.expr(a.value)
                if isinstance(v, CVal) and isinstance(v.value, int):
                    out[a.name.name] = int(v.value)
    return out
