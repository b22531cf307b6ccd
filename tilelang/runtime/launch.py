"""Kernel launches on the host: `Operation`, `Handle`, `Graph`, and the checks
that only run-time values can decide.

A kernel call in host code (`add(z.partition([1024]), &x, &y)`) builds an
`Operation` and runs nothing. `.sync()` runs it and waits; `.launch()` starts
it and returns a `Handle` whose `.wait()` waits; a `Graph` records operations
and `.replay()` runs them again, in order, and waits.

Before any kernel work, `bind_launch` checks every launch-time fact and raises
`TileError` with a located diagnostic (codes E05xx, primary label at the
launch) on the first that fails:
- each argument's kind fits its parameter (`&mut` takes a partition),
- ranks and element types agree with the parameter types (tensors loaded
  with `load_npy` are only known now),
- const generics get one value each: from turbofish arguments, from the
  partitions' tile shapes and from the tensors' sizes; two sources that
  disagree name both,
- every static dimension of a parameter equals the tensor's run-time size,
  every tile dimension equals the partition's,
- the `&mut` partitions agree on the grid (ceil-divide per dimension).

Then `Runtime.execute` lowers the kernel once per instantiation (helper F1's
`tilelang.ir.lower.lower_kernel`, cached in `Runtime.kernels`) and hands it to
the `Device`. Invariant: a failed check leaves every tensor untouched.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tilelang.cluster import shape_of as cluster_shape
from tilelang.diagnostics.codes import launch as codes
from tilelang.diagnostics.codes import types as type_codes
from tilelang.diagnostics.grid import grid_mismatch_help, merge_axes_help, no_grid_help
from tilelang.diagnostics.generic_range import generic_misfit_words, generic_misfits
from tilelang.diagnostics.model import ICE, Diagnostic, TileError
from tilelang.dtypes import DType, round_float
from tilelang.frozen import frozen
from tilelang.lastblock import group_params
from tilelang.profiler import hook
from tilelang.requires import (
    DivisionByZero,
    Requirement,
    grid_values,
    quoted,
    requirements,
    trim_grid,
)
from tilelang.requires import evaluate as evaluate_requirement
from tilelang.runtime.device import Device
from tilelang.runtime.inflight import InFlight
from tilelang.runtime.tensor import Partition, Tensor, dtype_of_array
from tilelang.source import Span
from tilelang.syntax import ast
from tilelang.syntax.printer import unparse

GenericValue = int | DType


# ---------------------------------------------------------------- parameters
@frozen(eq=True)
class ParamSpec:
    """A kernel parameter as the launch sees it, read off the AST type.

    kind: "mut" (`&mut Tensor`, takes a partition), "ref" (`&Tensor`),
    "scalar" (`i32`, `f32`, ... or a type parameter), "other".
    """

    name: str
    kind: str
    elem: str | None  # element type name (`f32`, or a type parameter `T`)
    dims: tuple[ast.Expr | None, ...] | None  # None: not a tensor
    span: Span


def param_specs(decl: ast.FnDecl) -> tuple[ParamSpec, ...]:
    return tuple(_param_spec(p) for p in decl.params)


def _param_spec(p: ast.Param) -> ParamSpec:
    ty = p.ty
    if isinstance(ty, ast.RefType) and isinstance(ty.inner, ast.NamedType) \
            and ty.inner.name.name == "Tensor":
        args = ty.inner.args
        elem = args[0].name.name if args and isinstance(args[0], ast.NamedType) else None
        dims: tuple[ast.Expr | None, ...] = ()
        if len(args) > 1 and isinstance(args[1], ast.ShapeType):
            dims = args[1].dims
        return ParamSpec(p.name.name, "mut" if ty.mutable else "ref", elem, dims, ty.span)
    if isinstance(ty, ast.NamedType) and not ty.args:
        return ParamSpec(p.name.name, "scalar", ty.name.name, None, ty.span)
    return ParamSpec(p.name.name, "other", None, None, ty.span)


# ---------------------------------------------------------------- binding
@dataclass(slots=True)
class LaunchArg:
    value: Any  # Partition, Tensor, or a scalar
    span: Span  # the argument expression
    text: str | None = None  # its source text, to quote in a help


@dataclass(slots=True)
class BoundLaunch:
    instantiation: dict[str, GenericValue]
    grid: tuple[int, ...]
    args: list[Any]  # per parameter: Partition, Tensor or a NumPy scalar


def bind_launch(kernel: ast.FnDecl, args: list[LaunchArg], call_span: Span,
                generics: dict[str, tuple[GenericValue, Span]],
                eval_dim: Callable[[ast.Expr, dict[str, GenericValue]], int | None],
                inferred: dict[str, GenericValue] | None = None) -> BoundLaunch:
    """Check every launch-time fact of one launch and bind its generics.

    `generics` holds the turbofish arguments, with the span that gave each;
    `inferred` what the type checker inferred statically, used only for
    generics that the run-time arguments leave unbound. `eval_dim(expr, env)` evaluates a constant dimension expression
    over the generics (None when it names an unbound generic).
    Raises `TileError` (E05xx) on the first fact that fails.
    """
    kname = kernel.name.name
    specs = param_specs(kernel)
    const_names = {g.name.name for g in kernel.generics if g.is_const}
    type_names = {g.name.name for g in kernel.generics if not g.is_const}
    env: dict[str, GenericValue] = {k: v for k, (v, _) in generics.items()}
    source: dict[str, tuple[str, Span]] = {k: ("the explicit generic argument", s)
                                           for k, (_, s) in generics.items()}

    def fail(diag: Diagnostic) -> None:
        raise TileError(diag)

    def bind(name: str, value: GenericValue, why: str, span: Span) -> None:
        if name in env:
            if env[name] != value:
                old_why, old_span = source[name]
                fail(Diagnostic.error(
                    codes.GENERIC_CONFLICT,
                    f"`{name}` of kernel `{kname}` is {_show(value)} from {why} "
                    f"but {_show(env[name])} from {old_why}")
                    .primary(span, f"this gives `{name}` = {_show(value)}")
                    .secondary(old_span, f"this gives `{name}` = {_show(env[name])}")
                    .secondary(call_span, "in this launch")
                    .with_help(f"{why} uses `{name}` for more than one size: give them one value "
                               f"({_show(env[name])} or {_show(value)} for each)" if why == old_why
                               else _conflict_help(name, value, env[name], why, old_why)))
            return
        env[name] = value
        source[name] = (why, span)

    # Pass 1: kinds, ranks, element types; bind generics from shapes.
    bound: list[Any] = []
    for spec, arg in zip(specs, args, strict=False):
        v = arg.value
        if spec.kind == "mut":
            if not isinstance(v, Partition):
                fail(_misfit(codes.TILE_SHAPE_MISMATCH, spec, arg.span,
                             f"`&mut` parameter `{spec.name}` of kernel `{kname}` needs a partition",
                             f"this is {_kind(v)}", "pass `t.partition([..])` so that each block gets its own tile"))
            t = v.tensor
            _check_rank_dtype(kname, spec, t, arg.span, bind, type_names, fail)
            for dim, size in zip(spec.dims or (), v.tile, strict=False):
                if isinstance(dim, ast.Name) and dim.ident.name in const_names:
                    bind(dim.ident.name, size, f"the tile shape of `{spec.name}`", arg.span)
        elif spec.kind == "ref":
            if not isinstance(v, Tensor):
                fail(_misfit(codes.TILE_SHAPE_MISMATCH, spec, arg.span,
                             f"parameter `{spec.name}` of kernel `{kname}` takes a shared tensor, not {_kind(v)}",
                             f"this is {_kind(v)}", "pass `&t`"))
            _check_rank_dtype(kname, spec, v, arg.span, bind, type_names, fail, arg.text)
            for d, (dim, size) in enumerate(zip(spec.dims or (), v.shape, strict=False)):
                if isinstance(dim, ast.Name) and dim.ident.name in const_names:
                    bind(dim.ident.name, size, f"dimension {d} of `{spec.name}`", arg.span)
        bound.append(v)

    for k, v in (inferred or {}).items():
        if k not in env:
            env[k] = v
            source[k] = ("the type checker", call_span)

    # A dimension linear in one generic the arguments left open (`[1, BT, 2 * HD]` given tiles of 64): HD = 32;
    # to a fixpoint, each bound generic opening others (`[A + B]`, `[B - C]`, `[C * 2 + 1]`: hrev22)
    solved = True
    while solved:
        solved = _solve_linear_dims(kname, specs, args, const_names, env, eval_dim, bind, fail)
    for g, v, dt in generic_misfits(kernel.generics, env):  # `const B: u8` of a tile of 300 (hrev29)
        message, label, help = generic_misfit_words(g, v, dt, f"kernel `{kname}`")
        why, span = source.get(g.name.name, ("the launch", call_span))
        fail(Diagnostic.error(type_codes.LITERAL_OUT_OF_RANGE, message)
             .primary(span, f"{why} gives `{g.name.name}` = {v}").secondary(g.span, label).with_help(help))

    # A type parameter that only scalars name (`a: T`): the scalar's own type
    # (a NumPy scalar's dtype, `bool` for a Python bool; a plain Python number has none).
    for spec, arg in zip(specs, args, strict=False):
        if spec.kind == "scalar" and spec.elem in type_names and spec.elem not in env:
            dt = _scalar_dtype(arg.value)
            if dt is None:
                fail(Diagnostic.error(
                    type_codes.CANNOT_INFER,
                    f"cannot infer the type parameter `{spec.elem}` of kernel `{kname}`: only scalar "
                    f"`{spec.name}` names it, and {arg.value!r} is a number of no fixed type")
                    .primary(arg.span, f"`{spec.name}: {spec.elem}`")
                    .secondary(call_span, "in this launch")
                    .with_help(f"pass a typed scalar (`np.float32({arg.value!r})`) or give `{spec.elem}` "
                               f"explicitly (`{kname}[np.float32, ..]`)"))
            else:
                bind(spec.elem, dt, f"the type of `{spec.name}`", arg.span)

    # Pass 2: every static dimension now evaluates; compare.
    for spec, arg in zip(specs, args, strict=False):
        v = arg.value
        if spec.kind not in ("mut", "ref"):
            continue
        actual = v.tile if spec.kind == "mut" else v.shape
        for d, (dim, size) in enumerate(zip(spec.dims or (), actual, strict=False)):
            if dim is None:
                continue
            want = eval_dim(dim, env)
            if want is None:
                # The type checker promises every const generic of a launch a
                # value (E0215 otherwise), so this is a bug, not a user error.
                missing = sorted(n for n in const_names if n not in env)
                raise ICE(f"no value for {', '.join(missing) or 'a const generic'} of kernel "
                          f"`{kname}` at launch, although the program passed the checks")
            if want != size:
                if spec.kind == "mut":
                    fail(Diagnostic.error(
                        codes.TILE_SHAPE_MISMATCH,
                        f"partition tile shape {_shape(v.tile)} does not match the tile "
                        f"of `&mut` parameter `{spec.name}`: dimension {d} is {size}, "
                        f"the kernel wants {want}")
                        .primary(arg.span, f"tiles of {_shape(v.tile)}")
                        .secondary(dim.span, f"this is {want} in this launch")
                        .with_help(f"partition with dimension {d} = {want}"))
                fail(Diagnostic.error(
                    codes.DIM_MISMATCH,
                    f"dimension {d} of `{spec.name}` is {size} but kernel `{kname}` "
                    f"expects {want}")
                    .primary(arg.span, f"a tensor of shape {_shape(v.shape)}")
                    .secondary(dim.span, f"this is {want} in this launch")
                    .with_help("pass a tensor of the declared shape, or declare the dimension `?`"))

    # Tile shapes known only now get the backend's rule (after the shape
    # comparison above, whose message is the more useful one when both fail).
    for spec, arg in zip(specs, args, strict=False):
        if spec.kind == "mut":
            _check_tile_runnable(kname, spec, arg.value, arg.span, fail)

    # Scalars: convert to the parameter's type.
    for i, (spec, arg) in enumerate(zip(specs, args, strict=False)):
        if spec.kind == "scalar":
            dt = DType.parse(spec.elem or "")
            if dt is None and spec.elem in env and isinstance(env[spec.elem], DType):
                dt = env[spec.elem]  # type: ignore[assignment]
            if dt is not None:
                misfit = _scalar_misfit(arg.value, dt)
                if misfit is not None:
                    # a Python caller's integer for `a: T` (`T` bound by the tensors only now):
                    # refused here, before NumPy would wrap it or fail to convert it
                    fail(Diagnostic.error(
                        type_codes.LITERAL_OUT_OF_RANGE,  # as the Python API's scalar check (api/scalars.py)
                        f"argument `{spec.name}` of kernel `{kname}` is of type `{dt.value}`, and {misfit[0]}")
                        .primary(arg.span, f"`{spec.name}` is `{dt.value}` here")
                        .with_help(misfit[1]))
                bound[i] = _to_scalar(arg.value, dt)

    # Grid: the `&mut` partitions must agree (the group's own tensors of
    # `if last_block(axis)` after, with one tile along the axis).
    grid: tuple[int, ...] | None = None
    grid_from: tuple[str, Span] | None = None
    groups = group_params(kernel)
    for spec, arg in zip(specs, args, strict=False):
        if spec.kind != "mut" or spec.name in groups:
            continue
        p: Partition = arg.value
        if len(p.grid) > 3:
            fail(Diagnostic.error(
                codes.GRID_RANK,
                f"`{spec.name}` is partitioned over {len(p.grid)} dimensions but a grid has at most 3")
                .primary(arg.span, f"a grid of {_shape(p.grid)}")
                .with_help(merge_axes_help(tuple(p.tensor.shape), tuple(p.tile))))
        if grid is None:
            grid, grid_from = p.grid, (spec.name, arg.span)
        elif trim_grid(p.grid) == trim_grid(grid):
            # Grids equal up to trailing 1s are one grid (CUDA's rule): an
            # [N, D] output tiled [BM, D] and an [N] one tiled [BM] agree.
            if len(p.grid) > len(grid):
                grid = p.grid
        elif p.grid != grid:
            assert grid_from is not None
            fail(Diagnostic.error(
                codes.GRID_MISMATCH,
                f"partition grids disagree: `{grid_from[0]}` gives {_shape(grid)} blocks "
                f"but `{spec.name}` gives {_shape(p.grid)}")
                .primary(arg.span, f"{_shape(p.grid)} blocks")
                .secondary(grid_from[1], f"{_shape(grid)} blocks")
                .secondary(call_span, "in this launch")
                .with_help(grid_mismatch_help(spec.name, grid, p.grid, tuple(p.tensor.shape), tuple(p.tile))))
    if grid is None:
        fail(Diagnostic.error(codes.NO_GRID, f"kernel `{kname}` has no `&mut` partition to size its grid")
             .primary(call_span, "the grid of this launch is unknown")
             .secondary(kernel.name.span, "declared here")
             .with_help(no_grid_help(kernel)))
    assert grid is not None and grid_from is not None
    for spec, arg in zip(specs, args, strict=False):
        if spec.kind == "mut" and spec.name in groups:
            _check_group_grid(spec, arg, groups[spec.name], grid, grid_from, call_span, fail)
    cluster = cluster_shape(kernel, env)
    if cluster is not None:
        _check_cluster_grid(kname, cluster, grid, grid_from, call_span, fail)
    # The kernel's `#[requires(..)]`, over the tensors' shapes, the numbers, the generics and the grid.
    reqs = requirements(kernel)
    if reqs:
        check_requirements(kname, reqs, *requirement_inputs(specs, [a.value for a in args], bound, env, grid),
                           call_span if call_span != kernel.name.span else None)  # (None: a Python call)
    inst = {k: v for k, v in env.items() if k in const_names or k in type_names}
    return BoundLaunch(inst, grid, bound)


def _solve_linear_dims(kname: str, specs: Any, args: Any, const_names: set[str], env: dict[str, GenericValue],
                       eval_dim: Any, bind: Any, fail: Any) -> bool:
    """One pass of the launch's linear dimensions (`bind_launch`): whether it bound a generic."""
    solved = False
    for spec, arg in zip(specs, args, strict=False):
        if spec.kind in ("mut", "ref"):
            actual = arg.value.tile if spec.kind == "mut" else arg.value.shape
            for d, (dim, size) in enumerate(zip(spec.dims or (), actual, strict=False)):
                g = _linear_open(dim, const_names, env, eval_dim)
                if g is None:
                    continue
                f1, f2 = (eval_dim(dim, {**env, g: x}) for x in (1, 2))
                a, b = f2 - f1, 2 * f1 - f2  # type: ignore[operator]
                if a == 0 or (size - b) % a or (size - b) // a <= 0:
                    fail(Diagnostic.error(
                        type_codes.CANNOT_INFER,
                        f"cannot infer `{g}` of kernel `{kname}`: `{unparse(dim)}` is {size} in this launch, "
                        f"which no positive integer `{g}` gives")
                        .primary(arg.span, f"dimension {d} is {size}")
                        .secondary(dim.span, f"`{unparse(dim)}`")
                        .with_help(f"give `{g}` explicitly, or make dimension {d} a size `{unparse(dim)}` can be"))
                bind(g, (size - b) // a, f"dimension {d} of `{spec.name}`", arg.span)
                solved = True
    return solved


def _linear_open(dim: ast.Expr | None, const_names: set[str], env: dict[str, GenericValue],
                 eval_dim: Callable[[ast.Expr, dict[str, GenericValue]], int | None]) -> str | None:
    """The one const generic still open in compound dimension `dim` where `dim` is linear in it (`linear_in`),
    else None."""
    if dim is None or isinstance(dim, ast.Name) or eval_dim(dim, env) is not None:
        return None
    open_ = {n.ident.name for n in ast.walk(dim) if isinstance(n, ast.Name)} & (const_names - env.keys())
    if len(open_) != 1:
        return None
    (g,) = open_
    return g if linear_in(dim, g) else None


def linear_in(dim: ast.Expr, g: str) -> bool:
    """`dim` is `+`, `-` and `*` of `g` (at most one factor of it a term), integer literals and other names, as
    the type checker's `sema.generics.solve_linear` takes (hrev20: values at 1, 2 and 3 in a line were taken for
    linear, so the API bound `HD` = 3 for `[HD % 4 * 16]` given 48, which `HD` = 7 gives too, where a Tile launch
    of the kernel is E0215; `[HD * HD]` was an internal error)."""
    def degree(e: ast.Expr) -> int | None:
        match e:
            case ast.Name(ident=i):
                return 1 if i.name == g else 0
            case ast.IntLit():
                return 0
            case ast.Unary(op="-", operand=x):
                return degree(x)
            case ast.Binary(op="+" | "-" | "*" as op, lhs=a, rhs=b):
                da, db = degree(a), degree(b)
                if da is None or db is None:
                    return None
                return da + db if op == "*" else max(da, db)
        return None

    d = degree(dim)
    return d is not None and d <= 1


def requirement_inputs(specs: tuple[ParamSpec, ...], raw: list[Any], bound: list[Any],
                       env: dict[str, GenericValue],
                       grid: tuple[int, ...]) -> tuple[dict[str, tuple[int, ...]], dict[str, Any]]:
    """What a kernel's requirements read: the `&` tensors' shapes and those of
    the tensors the `&mut` partitions split (`o.tensor_shape()`), the scalars'
    values (as converted for the kernel), the const generics and the grid."""
    shapes = {sp.name: tuple(v.shape) if sp.kind == "ref" else tuple(v.tensor.shape)
              for sp, v in zip(specs, raw, strict=False) if sp.kind in ("ref", "mut")}
    values: dict[str, Any] = {k: v for k, v in env.items() if isinstance(v, int)}
    values.update(grid_values(grid))
    values.update((sp.name, v) for sp, v in zip(specs, bound, strict=False) if sp.kind == "scalar")
    return shapes, values


def check_requirements(kname: str, reqs: tuple[Requirement, ...], shapes: dict[str, tuple[int, ...]],
                       values: dict[str, Any], call_span: Span | None) -> None:
    """Raise E0513 for the first requirement of kernel `kname` these values break. `call_span` None: a call
    from Python, which has no Tile arguments to point at: the requirement is the place (it was the kernel's
    name, labelled "these arguments")."""
    for r in reqs:
        why = ""
        try:
            ok = bool(evaluate_requirement(r.cond, shapes, values))
        except DivisionByZero as e:
            ok, why = False, f"; its `{e.args[0]}` divides by zero"
        if ok:
            continue
        d = Diagnostic.error(
            codes.REQUIREMENT_FAILED,
            f"this launch of `{kname}` breaks a requirement: {r.message} "
            f"(here {quoted(r.cond, shapes, values, unparse)}{why})")
        d = (d.primary(r.span, "this requirement is false") if call_span is None else
             d.primary(call_span, "these arguments").secondary(r.span, "this requirement is false"))
        raise TileError(d
            .with_help("pass arguments that meet the requirement (the kernel's `#[requires(..)]` "
                       "says what it needs of its shapes and numbers)"))


def _check_group_grid(spec: ParamSpec, arg: LaunchArg, axis: int, grid: tuple[int, ...],
                      grid_from: tuple[str, Span], call_span: Span, fail: Callable[[Diagnostic], None]) -> None:
    """A tensor the group of `if last_block(axis)` owns has one tile a group:
    its grid is the launch grid with 1 along `axis`."""
    p: Partition = arg.value
    want = list(grid) + [1] * (axis + 1 - len(grid))
    want[axis] = 1
    if trim_grid(p.grid) != trim_grid(tuple(want)):
        fail(Diagnostic.error(
            codes.GRID_MISMATCH,
            f"`{spec.name}` is written once a group of `last_block({axis})`: its partition must give "
            f"{_shape(tuple(want))} blocks, not {_shape(p.grid)}")
            .primary(arg.span, f"{_shape(p.grid)} blocks")
            .secondary(grid_from[1], f"the launch grid, {_shape(grid)} blocks")
            .secondary(call_span, "in this launch")
            .note(f"the blocks that differ only along grid axis {axis} are one group; the last of them to "
                  f"arrive writes the group's tile of `{spec.name}`")
            .with_help(f"partition `{spec.name}` into one tile along axis {axis} per group"))


def _check_cluster_grid(kname: str, cluster: tuple[int, int, int], grid: tuple[int, ...],
                        grid_from: tuple[str, Span], call_span: Span, fail: Callable[[Diagnostic], None]) -> None:
    """A `#[cluster(..)]` kernel's grid is a whole number of clusters along
    every axis (CUDA launches only whole clusters; the interpreter runs each
    cluster's blocks together)."""
    full = tuple(grid) + (1,) * (3 - len(grid))
    for axis, (n, c) in enumerate(zip(full, cluster, strict=True)):
        if n % c:
            fail(Diagnostic.error(
                codes.CLUSTER_GRID,
                f"the launch of `{kname}` has {n} block{'s' if n != 1 else ''} along grid axis {axis}, not a "
                f"multiple of its cluster's {c}")
                .primary(call_span, f"a grid of {_shape(grid)} blocks")
                .secondary(grid_from[1], f"`{grid_from[0]}` gives {_shape(grid)} blocks")
                .note(f"`#[cluster({', '.join(map(str, cluster))})]`: the blocks of a cluster run together and "
                      "exchange data; every block must belong to a whole cluster")
                .with_help(f"partition so that axis {axis} has a multiple of {c} tiles (pad the tensor, or "
                           "choose another tile shape)"))
            return


def _check_tile_runnable(kname: str, spec: ParamSpec, p: Partition, span: Span,
                         fail: Callable[[Diagnostic], None]) -> None:
    """The rule the type checker applies to constant tile shapes (E0213),
    applied to one known only now, on every device, so that a program the
    interpreter accepts is one the GPU backend can run. (Non-positive sizes
    are refused with the partition, E0508.)"""
    from tilelang.sema.kernel import MAX_TILE_ELEMENTS

    n = math.prod(p.tile)
    if n > MAX_TILE_ELEMENTS:
        fail(Diagnostic.error(
            codes.TILE_NOT_RUNNABLE,
            f"a tile of `{spec.name}` holds {n} elements, more than a tile block can hold")
            .primary(span, f"tiles of {_shape(p.tile)}")
            .secondary(spec.span, f"the tile of `{spec.name}` in kernel `{kname}`")
            .note(f"a tile may hold at most {MAX_TILE_ELEMENTS} elements")
            .with_help("partition into smaller tiles"))


def _check_rank_dtype(kname: str, spec: ParamSpec, t: Tensor, span: Span,
                      bind: Callable[[str, GenericValue, str, Span], None],
                      type_names: set[str], fail: Callable[[Diagnostic], None],
                      text: str | None = None) -> None:
    if spec.dims is not None and len(spec.dims) != t.rank:
        fail(_misfit(codes.RANK_MISMATCH, spec, span,
                     f"`{spec.name}` of kernel `{kname}` has {_dims(len(spec.dims))} but the tensor passed "
                     f"has {t.rank}", f"a tensor of shape {_shape(t.shape)}",
                     "reshape the tensor to the parameter's rank"))
    if spec.elem in type_names:
        bind(spec.elem, t.dtype, f"the element type of `{spec.name}`", span)
        return
    want = DType.parse(spec.elem or "")
    if want is not None and want is not t.dtype:
        fail(_misfit(codes.DTYPE_MISMATCH, spec, span,
                     f"`{spec.name}` of kernel `{kname}` holds `{want.value}` but the tensor passed holds "
                     f"`{t.dtype.value}`", f"a `{t.type_name()}`", _convert_help(text, want)))


def _convert_help(text: str | None, want: DType) -> str:
    """`&(h as f32)` for a shared argument written `&h`; a generic form when
    the argument's text is unknown (a partition: its tensor must be converted
    before it is partitioned)."""
    if text is not None and text.startswith("&") and not text.startswith("&mut"):
        inner = text[1:].strip()
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", inner):
            inner = f"({inner})"
        return f"convert it first: `&({inner} as {want.value})`"
    return f"convert it first: `t as {want.value}` makes a `{want.value}` copy of a tensor `t`"


def _conflict_help(name: str, a: GenericValue, b: GenericValue, why: str = "", old_why: str = "") -> str:
    arrays = [w.removeprefix("the element type of ") for w in (why, old_why) if w.startswith("the element type of ")]
    if isinstance(a, DType) and isinstance(b, DType) and len(arrays) == 2 and DType.BF16 not in (a, b):
        # two tensors of one `T` in different types: which conversion (was "make both sources give `T` ..")
        return (f"{arrays[0]} and {arrays[1]} must hold one element type: convert {arrays[0]} to `{b.value}` "
                f"(a NumPy array's `.astype(numpy.{b.np_dtype.name})`, a Tile tensor's `as {b.value}`), or "
                f"{arrays[1]} to `{a.value}`")
    if {a, b} == {DType.BF16, DType.F32}:
        # a NumPy float32 array where `T` is given as bf16 (NumPy has no bf16 to hold it)
        return (f"NumPy has no bf16: float32 arrays make `{name}` `f32` (leave `{name}` out to compute in f32), "
                "or pass torch.bfloat16 CUDA tensors (a parameter declared `bf16`, not a generic, takes float32 "
                "arrays and rounds them)")
    return f"make both sources give `{name}` the same value"


def _scalar_misfit(value: Any, dt: DType) -> tuple[str, str] | None:
    """Why an integer `value` is not a value of `dt` (what follows "and" in
    the message, and the help), or None when it is one; anything but an
    integer is converted as NumPy converts it, after the caller's checks."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        return None
    v = int(value)
    shown = str(v) if abs(v) < 10**30 else f"an integer of {len(str(abs(v)))} digits"
    if dt.is_int:
        lo, hi = (-(1 << (dt.bits - 1)), (1 << (dt.bits - 1)) - 1) if dt.is_signed else (0, (1 << dt.bits) - 1)
        return None if lo <= v <= hi else (f"{shown} does not fit in it", f"`{dt.value}` holds {lo} to {hi}")
    if dt.is_float:
        from tilelang.intrinsics.constants import dtype_constant
        from tilelang.sema.typeops import FLOAT_LIMITS

        big = float(dtype_constant(dt, "MAX")[1])  # type: ignore[index]
        # below the rounding boundary (65519 is 65504 in `f16`, as the literal), compared exactly (hrev22)
        inside = abs(v) < FLOAT_LIMITS.get(dt, ("", math.inf))[1] and abs(v) < 2**1024 - 2**970  # (f64's boundary)
        return None if inside else (f"{shown} is beyond its largest finite value ({big:g})",
                                    "pass a value in range")
    return None


def _to_scalar(value: Any, dt: DType) -> Any:
    if dt.is_float and isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        # an integer rounded once from its own value, as the API's concrete scalars (`api/scalars.py`): NumPy
        # takes one past int64 through a Python float, so `2**128 - 2**103 - 1` tied to infinity in `f32` (hrev22)
        value = round_float(int(value), dt)
    arr = np.asarray(value)
    from tilelang.runtime.tensor import normalise

    return normalise(arr.reshape(()), dt)[()]


def _dims(n: int) -> str:
    return f"{n} dimension" if n == 1 else f"{n} dimensions"


def _show(v: GenericValue) -> str:
    return f"`{v.value}`" if isinstance(v, DType) else str(v)


def _shape(dims: tuple[int, ...]) -> str:
    return "[" + ", ".join(map(str, dims)) + "]"


def _misfit(code: str, spec: ParamSpec, span: Span, message: str, label: str, help: str) -> Diagnostic:
    """An argument (at `span`, what `label` says it is) that does not fit its
    tensor parameter's declaration."""
    return (Diagnostic.error(code, message).primary(span, label)
            .secondary(spec.span, "declared here").with_help(help))


def _kind(v: Any) -> str:
    if isinstance(v, Partition):
        return "a partition"
    if isinstance(v, Tensor):
        return "a whole tensor"
    return f"a `{type(v).__name__}`"


# ---------------------------------------------------------------- operations
@dataclass(eq=False, slots=True)
class Operation:
    """A kernel call that has not run yet; `bound` is filled by `bind_launch`."""

    kernel: ast.FnDecl
    kernel_key: str  # qualified name, unique in the program
    bound: BoundLaunch
    span: Span
    runtime: Runtime
    # `&` parameters the kernel's `unsafe` code writes (OwnershipFacts.unsafe_writes)
    writes: frozenset[str] = frozenset()
    # those of them updated with atomics of one kind only, with the kind (`"atomic_add"`, ..)
    atomics: dict[str, str] = field(default_factory=dict)
    runs: int = 0  # how many times `.sync()` / `.launch()` ran it (an operation can run again; the REPL says so)

    @property
    def name(self) -> str:
        return self.kernel.name.name

    def sync(self) -> None:
        self.runtime.inflight.check(self)
        self.runtime.execute(self, stream=None)
        self.runs += 1
        try:
            self.runtime.device.sync(None)
        except TileError as e:
            raise faulted(e, self) from None

    def launch(self) -> Handle:
        self.runtime.inflight.check(self)
        stream = self.runtime.device.new_stream()
        self.runtime.execute(self, stream=stream)
        self.runs += 1
        handle = Handle(self, stream, self.runtime)
        self.runtime.inflight.add(handle)
        return handle

    def tensors(self) -> list[Tensor]:
        out = []
        for a in self.bound.args:
            if isinstance(a, Partition):
                out.append(a.tensor)
            elif isinstance(a, Tensor):
                out.append(a)
        return out


@dataclass(eq=False, slots=True)
class Handle:
    op: Operation
    stream: Any
    runtime: Runtime
    done: bool = False

    def wait(self) -> None:
        if not self.done:
            try:
                self.runtime.device.sync(self.stream)
            except TileError as e:
                raise faulted(e, self.op) from None
            self.done = True
            self.runtime.inflight.remove(self)


@dataclass(eq=False, slots=True)
class Graph:
    """Operations recorded by `graph { ... }`; `replay()` runs them in order
    and waits. Recording runs nothing."""

    ops: list[Operation]
    runtime: Runtime
    replays: int = 0
    _captured: Any = None

    def replay(self) -> None:
        dev = self.runtime.device
        for op in self.ops:
            self.runtime.inflight.check(op)
        if self._captured is None and dev.kind == "gpu" and self.ops:
            # Capture once on the device (a CUDA graph), replay it afterwards.
            # Lower and compile first: an error then leaves no capture open.
            for op in self.ops:
                self.runtime._prepared(op)
            stream = dev.new_stream()
            dev.capture(stream)
            for op in self.ops:
                self.runtime.execute(op, stream=stream)
            self._captured = dev.end_capture(stream) or False
            if self._captured is False:
                try:
                    dev.sync(stream)
                except TileError as e:
                    raise graph_faulted(e, self.ops) from None
                self.replays += 1
                return
        try:
            if self._captured:
                dev.replay(self._captured, None)
            else:
                for op in self.ops:
                    self.runtime.execute(op, stream=None)
            dev.sync(None)
        except TileError as e:
            raise graph_faulted(e, self.ops) from None
        self.replays += 1


# ---------------------------------------------------------------- the runtime
LowerFn = Callable[[Any, str, dict[str, GenericValue], dict[str, Any]], Any]


@dataclass(eq=False, slots=True)
class Runtime:
    """One device, the checked program, and the kernel cache of a run."""

    device: Device
    program: Any  # tilelang.sema Program
    lower: LowerFn | None = None
    kernels: dict[tuple[Any, ...], Any] = field(default_factory=dict)
    launches: int = 0
    # The launches not waited for, checked at every launch (runtime/inflight.py).
    inflight: InFlight = field(default_factory=InFlight)

    def execute(self, op: Operation, stream: Any) -> None:
        kir, prepared = self._prepared(op)
        if op.kernel.attrs:  # `#[autotune(num_warps = ..)]`: the recorded (or now tuned) hints
            from tilelang.tuner.host import tuned_prepared

            prepared = tuned_prepared(self, op, kir, prepared, stream)
        by_name: dict[str, Any] = {}
        for p, a in zip(op.kernel.params, op.bound.args, strict=False):
            if isinstance(a, Partition):
                by_name[p.name.name] = a.tensor.storage
            elif isinstance(a, Tensor):
                by_name[p.name.name] = a.storage
            else:
                by_name[p.name.name] = a
        # The device takes the arguments in the order of the lowered kernel's
        # parameters (the lowering may drop or reorder nothing but names decide).
        names = [p.name for p in getattr(kir, "params", ())] or list(by_name)
        args = [by_name[n] for n in names]
        self.launches += 1
        prof = hook.ACTIVE
        token = prof.begin(self.device, stream) if prof is not None else None
        try:
            self.device.run(prepared, op.bound.grid, args, stream, op.span)
            if prof is not None:
                self._profiled(prof, token, op, kir, stream)
        except TileError as e:
            # The CPU device fails here, inside the launch; the GPU reports at
            # the next sync and labels the launch itself (runtime/cuda.py).
            raise at_launch(e, op.span, op.bound.instantiation) from None

    def _profiled(self, prof: Any, token: Any, op: Operation, kir: Any, stream: Any) -> None:
        shapes: dict[str, tuple[int, ...]] = {}
        nbytes: dict[str, int] = {}
        scalars: dict[str, Any] = {}
        for p, a in zip(op.kernel.params, op.bound.args, strict=False):
            t = a.tensor if isinstance(a, Partition) else a
            if isinstance(t, Tensor):
                shapes[p.name.name] = t.shape
                nbytes[p.name.name] = t.size * np.dtype(t.dtype.np_dtype).itemsize
            else:
                scalars[p.name.name] = t
        engine = "cpu" if self.device.kind == "cpu" else self.device.name
        prof.end(token, self.device, stream, kir, op.bound.grid, shapes, nbytes, scalars, engine)

    def _prepared(self, op: Operation) -> tuple[Any, Any]:
        facts = arg_facts(op)
        key = (op.kernel_key, tuple(sorted((k, str(v)) for k, v in op.bound.instantiation.items())),
               tuple(sorted((k, _fact_key(v)) for k, v in facts.items())), self.device.kind)
        hit = self.kernels.get(key)
        if hit is None:
            if self.lower is None:
                kir = _lowered(self.program, op.kernel_key, dict(op.bound.instantiation), facts, key[:3])
            else:
                kir = self.lower(self.program, op.kernel_key, dict(op.bound.instantiation), facts)
            hit = (kir, self.device.prepare(kir))
            self.kernels[key] = hit
        return hit


def faulted(err: TileError, op: Operation) -> TileError:
    """`err`, met waiting for `op`: a kernel fault on the GPU (`cuda_driver.driver_error`) as `op`'s kernel's
    failure at its launch (`cuda_driver.in_kernel`); any other error unchanged."""
    if getattr(err, "cuda_fault", None) is None:
        return err
    from tilelang.runtime.cuda_driver import in_kernel

    return in_kernel(err, op.name, op.span)


def graph_faulted(err: TileError, ops: list[Operation]) -> TileError:
    """`err`, met replaying a graph of `ops`: a kernel fault as its one kernel's failure at that launch inside the
    `graph { }`, or, of several, as one of the graph's kernels' (named; the replay statement is labelled by the
    host); any other error unchanged."""
    names = list(dict.fromkeys(op.name for op in ops))
    if getattr(err, "cuda_fault", None) is None or not names:
        return err
    if len(ops) == 1:
        return faulted(err, ops[0])
    d = err.diagnostics[0]
    if not d.message.startswith("a kernel failed on the GPU"):
        return err
    which = ", ".join(f"`{n}`" for n in names)
    out = TileError(dataclasses.replace(d, message=d.message.replace(
        "a kernel failed", f"a kernel of the graph ({which}) failed", 1)), *err.diagnostics[1:])
    out.cuda_fault = err.cuda_fault  # type: ignore[attr-defined]
    return out


def at_launch(err: TileError, span: Span, instance: dict[str, Any] | None = None) -> TileError:
    """`err` with a secondary label "in this launch" at `span` on each device
    `assert` failure (E0700) that has no label there yet: the primary label
    is at the `assert` inside the kernel, this one says which call ran it;
    the same on a GPU limit (E06xx) met compiling the launch's kernel, whose
    label inside the kernel says which operation but not which instance
    (`instance`: its const generics, named in the label); and `span` as the
    primary label of a device error that has none (a grid the GPU cannot
    launch, `cuda_arrive.launch_grid`)."""
    from tilelang.diagnostics.codes.runtime import DEVICE_ASSERT

    inst = ", ".join(f"{k} = {v}" for k, v in (instance or {}).items())
    compiled = f"the launch whose kernel this is ({inst})" if inst else "the launch whose kernel this is"
    diags = tuple(
        d.secondary(span, "in this launch")
        if d.code == DEVICE_ASSERT and all(label.span != span for label in d.labels)
        else d.secondary(span, compiled)
        if d.code.startswith("E06") and d.labels and all(label.span != span for label in d.labels)
        else d.primary(span, "this launch") if not d.labels else d  # a device's error that names no place
        for d in err.diagnostics)
    if diags == err.diagnostics:
        return err
    out = TileError(*diags)
    out.__traceback__ = err.__traceback__
    return out


@frozen(eq=True)
class ArgFact:
    """What the lowering may rely on about one tensor argument of a launch."""

    dtype: DType
    shape: tuple[int, ...]  # the tensor's run-time shape
    tile: tuple[int, ...] | None  # the partition's tile shape (`&mut` only)


def arg_facts(op: Operation) -> dict[str, Any]:
    facts: dict[str, Any] = {}
    for p, a in zip(op.kernel.params, op.bound.args, strict=False):
        if isinstance(a, Partition):
            facts[p.name.name] = ArgFact(a.tensor.dtype, a.tensor.shape, a.tile)
        elif isinstance(a, Tensor):
            facts[p.name.name] = ArgFact(a.dtype, a.shape, None)
    return facts


def _fact_key(f: ArgFact) -> tuple[Any, ...]:
    # The compiled kernel depends on dtypes, ranks and tile shapes, not on the
    # tensors' sizes (those are passed at launch).
    return (f.dtype.value, len(f.shape), f.tile)


def _default_lower(program: Any, kernel: str, inst: dict[str, GenericValue], facts: dict[str, Any]) -> Any:
    from tilelang.ir.lower import lower_kernel

    return lower_kernel(program, kernel, inst, facts)


# The IR of a kernel instance, by checked program: the lowering reads the
# program, the instance and the facts' kinds (`_fact_key`), and its IR is
# frozen, so the runtimes of one checked program (every `tilelang.load` of one
# text shares the program, `api._CHECKED`: an engine a test, a module a
# stdlib import) lower each instance once a process. The newest few programs
# are held (with them, so an id is not reused while its entries are here).
_LOWERED: dict[int, tuple[Any, dict[tuple[Any, ...], Any]]] = {}
_LOWERED_PROGRAMS = 8


def _lowered(program: Any, kernel: str, inst: dict[str, GenericValue], facts: dict[str, Any],
             key: tuple[Any, ...]) -> Any:
    held = _LOWERED.get(id(program))
    if held is None or held[0] is not program:
        if len(_LOWERED) >= _LOWERED_PROGRAMS:
            _LOWERED.pop(next(iter(_LOWERED)))  # the oldest
        held = _LOWERED[id(program)] = (program, {})
    kir = held[1].get(key)
    if kir is None:
        kir = held[1][key] = _default_lower(program, kernel, inst, facts)
    return kir


def _scalar_dtype(value: Any) -> DType | None:
    """The element type of a typed scalar (a NumPy scalar or 0-D array, or a
    Python `bool`: `bool` as Tile's `true`); None for a plain Python number,
    whose type is not fixed."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, bool):
        return DType.BOOL
    if not isinstance(value, np.generic):
        return None
    return dtype_of_array(np.asarray(value))
