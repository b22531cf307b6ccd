"""Kernel-context rules: what device code, kernels and `graph` blocks may contain.

Decides which types a kernel parameter may have (`check_kernel_param`,
E0221), the backend's limits on tile shapes (`check_tile_limits`: every
dimension positive, at most `MAX_TILE_ELEMENTS` elements; symbolic
shapes are remembered per kernel and checked for each launch's const
generics by `check_instantiation`), that device functions do not recurse
(`check_device_recursion`, they are inlined into their kernel), and reports
host effects written inside a `graph { }` block (`graph_effect`, E0228).
"""

from __future__ import annotations

import math
from typing import Any

from tilelang.diagnostics.codes import types as T
from tilelang.diagnostics.codes.launch import GRID_RANK
from tilelang.dtypes import DType
from tilelang.sema.context import CheckCx
from tilelang.sema.program import FnInfo
from tilelang.sema.typeops import numel
from tilelang.sema.types import (
    ERROR,
    Dim,
    ErrorT,
    RefT,
    ScalarT,
    Shape,
    TensorT,
    Type,
    TypeParam,
    contains_error,
    eval_dim,
    shape_str,
)
from tilelang.source import Span
from tilelang.syntax import ast

MAX_TILE_ELEMENTS = 1 << 20


def check_device_recursion(tcx: CheckCx) -> None:
    """Device functions are inlined into their kernel, so device code
    cannot recurse: report each call that closes a cycle once."""
    graph: dict[str, list[tuple[str, Span]]] = {}
    for caller, callee, span in tcx.device_edges:
        graph.setdefault(caller, []).append((callee, span))
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    stack: list[str] = []

    def visit(fn: str) -> None:
        state[fn] = 1
        stack.append(fn)
        for callee, span in graph.get(fn, []):
            if state.get(callee) == 1:
                cycle = [*stack[stack.index(callee):], callee]
                names = " -> ".join(f"`{c.rsplit('::', 1)[-1]}`" for c in cycle)
                info = tcx.program.functions.get(callee)
                d = tcx.err(T.RECURSIVE_DEVICE_FN,
                            f"device function `{callee.rsplit('::', 1)[-1]}` calls itself", span,
                            "recursive call in device code")
                if info is not None:
                    d = d.secondary(info.decl.name.span, "defined here")
                tcx.emit(d.note(f"the cycle: {names}")
                         .note("device functions are inlined into the kernel, so they cannot recurse")
                         .with_help("write the recursion as a `for` or `while` loop"))
            elif state.get(callee) is None:
                visit(callee)
        stack.pop()
        state[fn] = 2

    for fn in list(graph):
        if fn not in state:
            visit(fn)


def _runtime_dim_help(tcx: CheckCx, p: ast.Param, item: ast.FnDecl | None) -> str:
    """The kernel's header up to `p` with each `?` of `p`'s type a new const generic (round 18: the help
    was the generic `kernel fn k<const B: i32>(z: &mut Tensor<f32, [B]>)`)."""
    generic = "use a const generic, e.g. `kernel fn k<const B: i32>(z: &mut Tensor<f32, [B]>)`"
    if item is None:
        return generic
    try:
        head = tcx.sources.snippet(Span(item.span.file, item.name.span.start, p.ty.span.end))
        ty_text = tcx.sources.snippet(p.ty.span)
    except Exception:  # noqa: BLE001 - no text to rewrite: the general help
        return generic
    taken = {g.name.name for g in item.generics}
    names = [n for n in ("W", "N", "M", "L", "K", "R") if n not in taken][:ty_text.count("?")]
    if not names or len(names) < ty_text.count("?") or not head.endswith(ty_text):
        return generic
    new_ty = ty_text
    for n in names:
        new_ty = new_ty.replace("?", n, 1)
    gens = ", ".join(f"const {n}: i32" for n in names)
    if item.generics:
        at = item.generics[-1].span.end - item.name.span.start
        head = head[:at] + ", " + gens + head[at:]
    else:
        at = len(item.name.name)
        head = head[:at] + f"<{gens}>" + head[at:]
    head = head[:len(head) - len(ty_text)] + new_ty
    return (f"give the own tile's {'size' if len(names) == 1 else 'sizes'} {'a const generic' if len(names) == 1 else 'const generics'} "
            f"of the kernel, which the partition's tile shape gives at the launch: `kernel fn {head}` (a tile "
            "may stick out past the tensor's edge: its stores there are dropped)")


def _deep_own_tile(tcx: CheckCx, p: ast.Param, rank: int) -> Any:
    """E0510 at the declaration: a `&mut` parameter of more than 3 dimensions can never be launched (one grid
    axis a dimension). It was E0510 at a launch whose shapes were constants, else when it ran, or the lowering's
    E0701 where another kernel's generics made `tilec check` lower the instances (huser26): now always here,
    with the parameter's type rewritten, its leading axes merged."""
    inner = p.ty.inner if isinstance(p.ty, ast.RefType) else None
    shape_te = next((a for a in getattr(inner, "args", ()) if isinstance(a, ast.ShapeType)), None)
    help_ = "declare it with at most 3 dimensions, its leading axes merged, and merge the tensor's the same way"
    if shape_te is not None and all(d is not None for d in shape_te.dims) and len(shape_te.dims) == rank:
        dims = [tcx.snippet(d) for d in shape_te.dims]
        k = rank - 3
        lead = [d for d in dims[:k + 1] if d.strip() != "1"] or ["1"]
        merged = " * ".join(f"({d})" if any(c in d for c in "+-") else d for d in lead)
        elem = tcx.snippet(inner.args[0]) if inner is not None and inner.args else "f32"  # type: ignore[union-attr]
        new_ty = f"&mut Tensor<{elem}, [{', '.join([merged, *dims[k + 1:]])}]>"
        help_ = (f"merge the leading axes: `{p.name.name}: {new_ty}`, and give it a tensor whose leading axes are "
                 f"merged the same way where it is made (`[N, C, H, W]` as `zeros::<{elem}>([N * C, H, W])`, or "
                 "`.reshape([N * C, H, W])` where it is made), a tile of 1 along each merged axis but the last "
                 "and along the last a size that divides it, so that no tile holds elements of two of its rows; "
                 "reshape it back to read it")
    return (tcx.err(GRID_RANK, f"`&mut` parameter `{p.name.name}` has {rank} dimensions but a grid has at most 3",
                    p.ty.span, f"{rank} dimensions: {rank} grid axes")
            .note("a `&mut` parameter is this block's own tile: each of its dimensions is an axis of the launch's "
                  "grid (`block_id(0)`, `block_id(1)`, `block_id(2)`), and a grid has three")
            .with_help(help_))


def check_kernel_param(tcx: CheckCx, p: ast.Param, ty: Type, item: ast.FnDecl | None = None) -> Type:
    if contains_error(ty):
        return ERROR
    match ty:
        case RefT(mutable=True, inner=TensorT(shape=shape)):
            if shape is not None and any(d is None for d in shape):
                return tcx.emit(
                    tcx.err(T.INVALID_KERNEL_PARAM,
                            f"the tile shape of `&mut` parameter `{p.name.name}` must be known at "
                            "compile time", p.ty.span, "`?` dimension in a `&mut` parameter")
                    .note("a `&mut` parameter is this block's own tile; its shape is the tile shape")
                    .with_help(_runtime_dim_help(tcx, p, item)))
            if shape is not None and len(shape) > 3:
                return tcx.emit(_deep_own_tile(tcx, p, len(shape)))
            if shape is not None:  # the own tile: the same backend limits as any tile
                check_tile_limits(tcx, tuple(d for d in shape if d is not None), p.ty.span, None)
            return ty
        case RefT(mutable=False, inner=TensorT()):
            return ty
        case ScalarT(dtype=d) if isinstance(d, (DType, TypeParam)):
            return ty
        case ErrorT():
            return ty
        case _:
            diag = tcx.err(T.INVALID_KERNEL_PARAM, f"kernel parameter `{p.name.name}` has type `{ty}`",
                           p.ty.span, "cannot be passed to a kernel")
            diag = diag.note("kernel parameters are `&Tensor<..>`, `&mut Tensor<..>` or scalars")
            if isinstance(ty, TensorT):
                diag = diag.with_help(f"take a reference: `&{tcx.snippet(p.ty)}` or "
                                      f"`&mut {tcx.snippet(p.ty)}`")
            elif isinstance(ty, ScalarT):  # a scalar of a generic element type: the launch cannot type it
                diag = diag.with_help(f"take a concrete type (`{p.name.name}: f64`) and cast inside: "
                                      f"`{p.name.name} as {tcx.snippet(p.ty)}`")
            else:
                diag = diag.with_help("pass a tensor (`&Tensor<..>`) or a scalar (`f32`, `i32`, ..)")
            return tcx.emit(diag)


def check_tile_limits(tcx: CheckCx, shape: Shape, span: Span, kernel: str | None,
                      secondary: tuple[Span, str] | None = None) -> bool:
    """Every constant dim positive and not too many elements; symbolic dims of
    a kernel body are remembered and checked per instantiation. Any positive
    dim is fine: the GPU backend lays a dim that is not a power of two out at
    the next one, with masked lanes."""
    ok = True
    for d in shape:
        v = d.const_value
        if v is not None and v <= 0:
            dd = (tcx.err(T.TILE_DIM_NOT_POSITIVE, f"tile dimension {v} is not positive", span,
                          f"tile shape {shape_str(shape)}")
                  .note("a tile has at least one element along every dimension")
                  .with_help("use a positive size (any size: edge tiles may be partial)" if v != -1 else
                             "write every size: NumPy's `-1` (the size that is left) is written out in Tile, "
                             "the element count over the other sizes"))
            if secondary:
                dd = dd.secondary(*secondary)
            tcx.emit(dd)
            return False
    n = numel(shape).const_value
    if n is not None and n > MAX_TILE_ELEMENTS:
        dd = (tcx.err(T.TILE_TOO_LARGE, f"a tile of shape {shape_str(shape)} has {n} elements",
                      span, "too large for one tile block")
              .note(f"a tile may hold at most {MAX_TILE_ELEMENTS} elements")
              .with_help(_smaller_tiles_help(shape)))
        if secondary:
            dd = dd.secondary(*secondary)
        tcx.emit(dd)
        ok = False
    if kernel is not None and any(not d.is_const for d in shape):
        tcx.kernel_tiles.setdefault(kernel, []).append((shape, span))
    return ok


def _smaller_tiles_help(shape: Shape) -> str:
    """E0213's help: a tile shape of at most MAX_TILE_ELEMENTS elements (the
    largest sizes halved), where every size is a constant."""
    vals = [d.const_value for d in shape]
    if any(v is None or v <= 0 for v in vals):
        return "use smaller tiles and loop over them"
    while math.prod(vals) > MAX_TILE_ELEMENTS:  # type: ignore[arg-type]
        i = max(range(len(vals)), key=lambda j: vals[j])  # type: ignore[arg-type, return-value]
        vals[i] = (vals[i] + 1) // 2  # type: ignore[operator]
    return (f"use smaller tiles, e.g. [{', '.join(map(str, vals))}] (a partition's edge tiles may be partial), "
            "and loop over them where one block needs more")


def _reshape_help(count: int, after: tuple[Dim, ...], vals: tuple[int, ...], where: str) -> str:
    fix = reshape_proposal(count, after, vals)
    if fix is None:
        return "the new shape must hold the same number of elements"
    return f"`.reshape({shape_str(fix)})` keeps the {count} elements {where}"


def reshape_proposal(count: int, after: tuple[Dim, ...], vals: tuple[int, ...]) -> tuple[Dim, ...] | None:
    """A shape like `after` (whose sizes are `vals` here) that holds `count`
    elements: one size changed to what the others leave, a literal one
    first (`[B, 4]` of 8 elements with B = 4 -> `[B, 2]`); None if no one size can."""
    order = [i for i in reversed(range(len(after))) if after[i].is_const] + \
        [i for i in reversed(range(len(after))) if not after[i].is_const]
    for i in order:
        rest = math.prod(v for j, v in enumerate(vals) if j != i)
        if rest > 0 and count % rest == 0 and count // rest > 0 and count // rest != vals[i]:
            return tuple(Dim.const(count // rest) if j == i else d for j, d in enumerate(after))
    return None


def graph_effect(tcx: CheckCx, span: Span, what: str) -> None:
    """A host effect written inside `graph { }`: it would run once, while
    the graph is recorded, and never on `replay()`, which is not what the
    block reads like."""
    tcx.emit(tcx.err(T.HOST_EFFECT_IN_GRAPH, f"{what} in a `graph` block runs only once, while recording",
                     span, "not replayed by `g.replay()`")
             .note("a graph records kernel launches; other host statements in its block run when the "
                   "block is evaluated, not on each replay")
             .with_help("move it out of the `graph { .. }` block, next to the `replay()` calls"))


def check_instantiation(tcx: CheckCx, e: ast.Call, info: FnInfo, inst: dict[str, int], srcs: dict[str, Any]) -> None:
    """Backend limits for one kernel instantiation: the tile shapes of the
    `&mut` params and every symbolic tile shape the body creates."""
    for p, pty in zip(info.decl.params, info.param_types, strict=False):
        if isinstance(pty, RefT) and pty.mutable and isinstance(pty.inner, TensorT) and pty.inner.shape:
            shape = pty.inner.shape
            if not all(d is not None and d.symbols() <= inst.keys() for d in shape):
                continue
            vals = tuple(Dim.const(eval_dim(d, inst)) for d in shape)
            if any(not d.is_const for d in shape if d is not None):
                src = _culprit(shape, vals, srcs, e)  # type: ignore[arg-type]
                if not check_tile_limits(tcx, vals, src.span, None,
                                         (p.ty.span, f"the tile shape of `{p.name.name}`")):
                    return
    for before, after, span, like in tcx.kernel_reshapes.get(info.qualname, []):
        if not all(d.symbols() <= inst.keys() for d in (*before, *after)):
            continue
        a, b = eval_dim(numel(before), inst), eval_dim(numel(after), inst)
        if a != b:
            vb = shape_str(tuple(Dim.const(eval_dim(d, inst)) for d in before))
            va = shape_str(tuple(Dim.const(eval_dim(d, inst)) for d in after))
            tcx.emit(tcx.err(T.RESHAPE_COUNT, f"cannot reshape {vb} ({a} elements) into {va} ({b} elements) "
                             f"in this launch of `{info.name}`", e.span, "with these const generics")
                     .secondary(span, f"reshape of {shape_str(before)} into {shape_str(after)}")
                     .with_help(like or _reshape_help(a, after, tuple(eval_dim(d, inst) for d in after), "here")))
            return
    for shape, span in tcx.kernel_tiles.get(info.qualname, []):
        if not all(d.symbols() <= inst.keys() for d in shape):
            continue
        vals = tuple(Dim.const(eval_dim(d, inst)) for d in shape)
        src = _culprit(shape, vals, srcs, e)
        if not check_tile_limits(tcx, vals, src.span, None, (span, f"tile shape {shape_str(shape)} "
                                       f"is {shape_str(vals)} for this launch")):
            return


def _culprit(shape: Shape, vals: Shape, srcs: dict[str, Any], default: Any) -> Any:
    """The partition or turbofish argument that gave a bad tile dimension."""
    order = sorted(range(len(shape)), key=lambda i: (vals[i].const_value or 0) > 0)
    for i in order:
        for sname in sorted(shape[i].symbols()):
            if sname in srcs:
                return srcs[sname]
    return default

