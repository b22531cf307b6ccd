"""What a written type claims about a kernel's tensor: the sizes a device function's parameter or result type,
or a `let`'s, declares for a `?` dimension of a kernel's tensor parameter (`ir.DimClaim`), recorded as the
lowering meets them and checked at every launch, on every engine, before any work (`ir/arg_dims.py`).

Invariant: a claim only adds a launch check; the kernel's code is the same with or without it (no size is
folded from a claim: `backend/llvm.static_dims` reads the kernel's own parameter types alone).
"""

from __future__ import annotations

from typing import Any

from tilelang.ir import nodes as ir
from tilelang.ir.lower.context import FnFrame, LowerCx
from tilelang.ir.lower.values import CVal, TensorRef, TupleVal, Unsupported
from tilelang.source import Span
from tilelang.syntax import ast


def claim_dims(cx: LowerCx, ty: ast.TypeExpr | None, a: Any, arg: Span, owner: str, what: str, where: str) -> None:
    """A `?` dimension of the kernel's tensor `a` that a written type `ty` fixes (a device function's parameter
    `t: &Tensor<f32, [16]>`, `[N]` of this call's generics, its result type, a `let`'s; a tensor in a tuple by
    its element's type): an `ir.DimClaim`, which every launch checks (`ir/arg_dims.py`). Without it the written
    size was a hint accepted and ignored: `first(x)` of an 8-element `x` ran, the type said 16 (hrev29). A
    size the kernel's own type fixes was compared by the checker, as a `&mut` parameter's own tile; a group
    view's extent along its axis is the whole tensor's (a claim on the `&mut` parameter's tensor). `arg`: where
    the tensor reaches the type; `owner`, `what` and `where` word the error."""
    if isinstance(ty, ast.RefType):
        ty = ty.inner
    if isinstance(a, TupleVal) and isinstance(ty, ast.TupleType) and len(a.elems) == len(ty.elems):
        for t, x in zip(ty.elems, a.elems, strict=True):
            claim_dims(cx, t, x, arg, owner, what, where)
        return
    if not isinstance(a, TensorRef) or (a.param.mutable and a.group is None) or not isinstance(ty, ast.NamedType) \
            or ty.name.name != "Tensor" or len(ty.args) != 2 or not isinstance(ty.args[1], ast.ShapeType):
        return
    dims = ty.args[1].dims
    if len(dims) != a.param.rank or all(d is None for d in dims):
        return
    sizes: list[int | None] = []
    saved, cx.f = cx.f, FnFrame(cx.f.generics, cx.f.type_params)  # a type's names: generics, constants, no locals
    try:
        for d in dims:
            try:
                v = cx.expr(d) if d is not None else None
            except Unsupported:
                v = None
            sizes.append(int(v.value) if isinstance(v, CVal) and isinstance(v.value, int)
                         and not isinstance(v.value, bool) else None)
    finally:
        cx.f = saved
    index = next((i for i, q in enumerate(cx.b.params) if q is a.param), None)
    if index is None:
        return
    declared = f"&Tensor<{a.param.dtype.value}, [{', '.join('?' if n is None else str(n) for n in sizes)}]>"
    label = f"{what} is `{declared}` in this instance"
    # a group view (`part.group()`) spans the whole tensor along its axis, the tile's static shape elsewhere
    open_dims = [d is None for d in a.param.dims] if a.group is None else [d == a.group for d in range(len(sizes))]
    for dim, (unknown, size) in enumerate(zip(open_dims, sizes, strict=True)):
        if unknown and size is not None:
            claim = ir.DimClaim(index, dim, size, owner, label, where, arg, ty.span)
            if claim not in cx.claims:
                cx.claims.append(claim)
