"""The kernel: parameters, own tiles, grid, hints.

`lower_kernel` builds one kernel instance: const generics from the
instantiation (missing ones inferred from the launch's argument facts),
one IR parameter per kernel parameter, the own-tile offsets of the `&mut`
parameters computed once at entry, the body, the grid rank and the
`#[hints]`. The result is verified before it is returned; an
`Unsupported` construct becomes a located E0701, a store the checker could
not size (`StoreShape`: a device function's `[?]` `&mut` parameter) E0218.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from tilelang.cluster import MAX_CLUSTER_BLOCKS
from tilelang.cluster import shape_of as cluster_shape
from tilelang.diagnostics.codes.runtime import KERNEL_UNSUPPORTED
from tilelang.diagnostics.codes.types import (
    ARANGE_RANGE,
    CONSTANT_OVERFLOW,
    INVALID_OPERAND,
    MISMATCHED_DTYPES,
    MISMATCHED_TYPES,
    MMA_MISMATCH,
)
from tilelang.diagnostics.instances import (
    CONST_GENERIC_NOTE,
    const_generic_problem,
    float_value_problem,
    int_bounds,
    literal_problem,
    shift_problem,
)
from tilelang.diagnostics.model import ICE, Diagnostic, TileError
from tilelang.dtypes import DType
from tilelang.ir import nodes as ir
from tilelang.ir.lower.context import FnFrame, LowerCx
from tilelang.ir.lower.control import lower_block
from tilelang.ir.lower.exprs import lower_expr
from tilelang.ir.lower.jumps import jump_flags
from tilelang.ir.lower.ranges import Grid
from tilelang.ir.lower.values import (
    BOOL,
    I32,
    RET,
    CVal,
    InstanceArange,
    InstanceConstGeneric,
    InstanceDomain,
    InstanceDot,
    InstanceFloatValue,
    InstanceMismatch,
    InstanceOverflow,
    StoreShape,
    TensorRef,
    Unsupported,
)
from tilelang.ir.verify import verify_kernel
from tilelang.lastblock import group_params
from tilelang.sema.program import Program
from tilelang.source import Span
from tilelang.syntax import ast


def _names_a_generic(decl: ast.FnDecl, span: Any, instantiation: Mapping[str, Any]) -> bool:
    """Whether the expression of `decl` at `span` reads one of the instance's generics by name (True where
    no expression is found there: the instance's wording stays)."""
    node = next((n for n in ast.walk(decl.body) if getattr(n, "span", None) == span and not isinstance(n, ast.Ident)),
                None)
    if node is None:
        return True
    # the names whose values come from a generic: the generics, and the variables a `let` or an assignment
    # gives a value that reads one of them (`let c: i8 = -B;`), to a fixed point (names, not scopes: a
    # shadowed name errs toward the instance's wording)
    sources: dict[str, set[str]] = {}
    for n in ast.walk(decl.body):
        if isinstance(n, ast.Let) and isinstance(n.pattern, ast.NamePat) and n.value is not None:
            target, value = n.pattern.name.name, n.value
        elif isinstance(n, ast.Assign) and isinstance(n.target, ast.Name):
            target, value = n.target.ident.name, n.value
        else:
            continue
        sources.setdefault(target, set()).update(m.ident.name for m in ast.walk(value) if isinstance(m, ast.Name))
    tainted = set(instantiation)
    grew = True
    while grew:
        grew = False
        for name, reads in sources.items():
            if name not in tainted and reads & tainted:
                tainted.add(name)
                grew = True
    return any(isinstance(n, ast.Name) and n.ident.name in tainted for n in ast.walk(node))


def _widened(decl: ast.FnDecl, span: Any, dt: DType) -> str:
    """The binary operation of `decl` at `span` with its left operand cast to the 64-bit type of its kind
    (`(shard as i64) * 1000000000`), or a general form."""
    from tilelang.syntax.printer import unparse

    wide = "f64" if dt.is_float else "i64" if dt.is_signed else "u64"
    node = next((n for n in ast.walk(decl.body) if isinstance(n, ast.Binary) and n.span == span), None)
    if node is None:
        return f"(x as {wide}) * y"
    lhs = unparse(node.lhs)
    lhs = lhs if isinstance(node.lhs, (ast.Name, ast.IntLit)) else f"({lhs})"
    return f"({lhs} as {wide}) {node.op} {unparse(node.rhs)}"


def lower_kernel(program: Program, kernel_name: str, instantiation: Mapping[str, Any],
                 arg_facts: Mapping[str, Any] | None = None, *, defend: bool = True) -> ir.Kernel:
    """Lower one specialisation of kernel `kernel_name` (see `tilelang.ir.lower`).
    `defend=False` lowers a program whose ownership was not checked (the
    sanitizer's oracle runs) without the defence-in-depth refusals."""
    decl = program.find_fn(kernel_name, kernel=True)
    if decl is None:
        raise ICE(f"lower_kernel: no kernel `{kernel_name}` in the program")
    cx = LowerCx(program, decl, lower_expr)
    cx.defend = defend
    try:
        kernel = _lower_kernel_body(cx, dict(instantiation), dict(arg_facts or {}))
    except InstanceMismatch as e:
        message, label, help = literal_problem(e.value, e.dtype) or (
            f"mismatched dtypes: `{e.value}` cannot be `{e.dtype.value}`", f"`{e.dtype.value}` in this instance",
            "write a literal that every type the kernel is called with holds")
        raise TileError(_instance_error(cx, instantiation, MISMATCHED_DTYPES, message, e.span, label, help)) from None
    except InstanceDot as e:
        raise TileError(_instance_error(
            cx, instantiation, MMA_MISMATCH, f"`dot` of `{e.dtype.value}` tiles gives `{e.acc.value}` tiles, not "
            f"`{e.param}`", e.span, f"`{e.param}` is `{e.dtype.value}` in this instance",
            f"cast the call where it is made, `dot(a, b) as {e.param}` (the sums in `{e.acc.value}`, rounded "
            f"once to `{e.param}`), or name the accumulator's type: `mma(a, b, zeros::<{e.acc.value}>([M, N]))` "
            "(see `tilec doc dot`)")) from None
    except InstanceArange as e:
        raise TileError(_instance_error(
            cx, instantiation, ARANGE_RANGE,
            f"`arange::<{e.dtype.value}>` of length {e.n} makes values that `{e.dtype.value}` cannot hold",
            e.span, f"{e.why} in this instance",
            f"use a type that holds 0..={e.n - 1} for every instance, or cast a wider range with `as T` "
            "where wrapping is what you want")) from None
    except InstanceConstGeneric as e:
        code, message, label, help = const_generic_problem(e.name, e.value, e.dtype, e.kind)
        if e.name is None and e.kind != "div0" and not _names_a_generic(decl, e.span, instantiation):
            # arithmetic whose value the lowering knows and no const generic is read in (`let mut h = 3;
            # h += 1; (h * 1000000000) as u64`, round 18: "call the kernel with smaller const generics")
            lo, hi = int_bounds(e.dtype) if not e.dtype.is_float else (None, None)
            d = (Diagnostic.error(code, message)
                 .secondary(decl.name.span, f"in kernel `{decl.name.name}`")
                 .note("its operands' values are known when the kernel is compiled; the arithmetic is in its "
                       f"operands' type, `{e.dtype.value}`, whatever a cast of the result converts it to")
                 .with_help(f"compute in a wider type: cast an operand before the operation "
                            f"(`{_widened(decl, e.span, e.dtype)}`)"
                            + (f"; `{e.dtype.value}` holds {lo}..={hi}" if lo is not None else "")))
            raise TileError(d.primary(e.span, f"the value {e.value} does not fit in `{e.dtype.value}`")
                            if e.span is not None else d) from None
        note = CONST_GENERIC_NOTE if e.kind != "div0" else \
            "integer division by zero has no value, so a divisor known to be zero is an error"
        raise TileError(_instance_error(cx, instantiation, code, message, e.span, label, help, note=note)) from None
    except InstanceFloatValue as e:
        message, label, help = float_value_problem(e.dtype, "kernel", e.name)
        raise TileError(_instance_error(cx, instantiation, MISMATCHED_DTYPES, message, e.span, label, help)) from None
    except InstanceDomain as e:
        raise TileError(_domain_error(cx, instantiation, e.what, e.dtype, e.need, e.span)) from None
    except InstanceOverflow as e:
        generic = bool(cx.type_args) or any(isinstance(v, DType) for v in instantiation.values())
        message, label, help = shift_problem(e.dtype, e.amount, "kernel" if generic else None) or (
            f"this shift overflows `{e.dtype.value}`", "in this instance",
            "shift by less than the width of every type the kernel is called with")
        if not generic:  # a concrete kernel's constant the checker could not fold: no instance to blame
            d = (Diagnostic.error(CONSTANT_OVERFLOW, message)
                 .secondary(decl.name.span, f"in kernel `{decl.name.name}`"))
            raise TileError((d.primary(e.span, label) if e.span is not None else d).with_help(help)) from None
        raise TileError(_instance_error(cx, instantiation, CONSTANT_OVERFLOW, message, e.span, label, help)) from None
    except StoreShape as e:
        raise TileError(_store_shape_error(decl, e)) from None
    except Unsupported as e:
        d = (Diagnostic.error(KERNEL_UNSUPPORTED, e.what)
             .primary(e.span, "not supported in a kernel yet")
             .secondary(decl.name.span, f"while compiling kernel `{decl.name.name}`"))
        if e.help:
            d = d.with_help(e.help)
        raise TileError(d) from None
    if cx.claims:
        kernel = dataclasses.replace(kernel, claims=tuple(cx.claims))
    _check_tile_dims(kernel, decl, instantiation)
    _check_instance(cx, kernel, instantiation)
    if kernel.max_blocks and kernel.min_blocks > kernel.max_blocks:  # generics: sema checks literals
        hint = next((a.value.span for at in decl.attrs for a in at.args if a.name and a.name.name == "max_blocks"),
                    None)
        raise TileError(_hint_error(
            decl, instantiation, f"hint `max_blocks = {kernel.max_blocks}` is below `min_blocks = {kernel.min_blocks}`",
            hint, "fewer blocks than `min_blocks` asks an SM to hold",
            f"call it with `max_blocks` at least {kernel.min_blocks} (or 0: no bound), or lower `min_blocks`"))
    verify_kernel(kernel)
    return kernel


def _check_instance(cx: LowerCx, kernel: ir.Kernel, inst: Mapping[str, Any]) -> None:
    """An operation whose element type does not have it (`a & b` on `f16`,
    `exp` on `i32`, `sum` on `bool`) can only come from a type-generic kernel
    or device function: the checker checks its body once, for any `T`, and
    this instance's `T` is the first concrete type. It is the caller's error
    (E0204, at the operation, naming the instance), not an ill-formed IR."""
    from tilelang.ir.verify import domain_problem

    for node in ir.walk(kernel.body):
        if isinstance(node, ir.Mma):
            _check_mma(cx, node, inst)
        problem = domain_problem(node)
        if problem is not None:
            what, dt, need = problem
            raise TileError(_domain_error(cx, inst, what, dt, need, getattr(node, "span", None)))


def _check_mma(cx: LowerCx, op: ir.Mma, inst: Mapping[str, Any]) -> None:
    """`mma(a, b, acc)` of a generic `T` with an accumulator this instance's
    `T` does not take (`T = i8` with an `f32` acc, `T = f64` with `f32`): the
    checker's E0206 for a concrete `mma`, at the call, naming the instance."""
    from tilelang.dtypes import ACC_RULE, dot_acc_dtype

    want = dot_acc_dtype(op.a.dtype)
    if want is None or op.acc.dtype is want:
        return
    a, acc = op.a.dtype.value, op.acc.dtype.value
    raise TileError(_instance_error(
        cx, inst, MMA_MISMATCH, f"`mma` of `{a}` tiles accumulates in `{want}`, not `{acc}`",
        op.span, f"`{a}` inputs with an `{acc}` accumulator in this instance",
        f"call it with a type whose accumulator is `{acc}`, or convert inside it (`a as f32`, `b as f32`); "
        + ACC_RULE))


def _domain_error(cx: LowerCx, inst: Mapping[str, Any], what: str, dt: DType, need: str,
                  span: Span | None) -> Diagnostic:
    return _instance_error(
        cx, inst, INVALID_OPERAND, f"{what} is not defined on `{dt.value}`", span,
        f"applied to `{dt.value}` in this instance",
        f"{what} needs {need}: call it with such a type, or convert inside it "
        f"(e.g. `x as {'f32' if 'float' in need or need.startswith('numbers') else 'i32'}`)")


def _hint_error(decl: ast.FnDecl, inst: Mapping[str, Any], message: str, span: Span | None, label: str,
                help: str) -> Diagnostic:
    """A hint this instance's const generics make invalid (E0203), at the hint,
    naming the instance on the kernel's name."""
    shown = ", ".join(f"{k} = {v}" for k, v in inst.items() if not isinstance(v, DType))
    d = Diagnostic.error(MISMATCHED_TYPES, message).secondary(
        decl.name.span, f"in kernel `{decl.name.name}`" + (f" with {shown}" if shown else ""))
    return (d.primary(span, label) if span is not None else d).with_help(help)


def _store_shape_error(decl: ast.FnDecl, e: StoreShape) -> Diagnostic:
    """E0218 of a store the checker could not size (`StoreShape`), with the kernel whose tile it met."""
    from tilelang.diagnostics.codes.types import STORE_SHAPE
    from tilelang.sema.types import shape_str

    got, want = shape_str(e.value), shape_str(e.tile)
    n_got, n_want = math.prod(e.value), math.prod(e.tile)
    help = (f"store a tile of shape {want} there in this kernel, e.g. `.reshape({want})` of it"
            if n_got == n_want else
            f"store a tile of shape {want} there in this kernel (a size-1 dimension broadcasts), or give kernel "
            f"`{decl.name.name}` an own tile of shape {got}")
    return (Diagnostic.error(STORE_SHAPE, f"stored tile has shape {got} but the destination tile is {want}")
            .primary(e.span, f"this is {got}")
            .secondary(decl.name.span, f"kernel `{decl.name.name}`'s `&mut` parameter `{e.param}` has tile shape {want}")
            .note("a device function's `&mut` parameter whose type fixes no tile shape (`[?]`) stores into the own "
                  "tile of the kernel that passes it")
            .with_help(help))


def _instance_error(cx: LowerCx, inst: Mapping[str, Any], code: str, message: str,
                    span: Span | None, label: str, help: str, note: str | None = None) -> Diagnostic:
    """An error of one instance of a generic kernel, at `span`, naming the
    instance's generics on the kernel's name."""
    decl = cx.decl
    args = {**{k: v.value for k, v in cx.type_args.items()},
            **{k: v for k, v in inst.items() if not isinstance(v, DType)}}
    shown = ", ".join(f"{k} = {v}" for k, v in args.items())
    d = (Diagnostic.error(code, message)
         .secondary(decl.name.span, f"in kernel `{decl.name.name}`" + (f" with {shown}" if shown else "")))
    if span is not None and span.file >= 0:
        d = d.primary(span, label)
    return (d.note(note or "a generic kernel or function is checked once, for any element type `T`; "
                   "its body must also hold for each `T` it is called with")
            .with_help(help))


def _check_tile_dims(kernel: ir.Kernel, decl: ast.FnDecl, inst: Mapping[str, Any]) -> None:
    """A tile dimension that is not positive (`arange::<i32>(N)` with `N = 0`
    from a caller's generic) is the caller's error, E0212, at the operation:
    the checker reports it for Tile callers, and a Python caller's generics
    reach it here, before the IR verifier would call it ill-formed."""
    from tilelang.diagnostics.codes.types import TILE_DIM_NOT_POSITIVE

    for node in ir.walk(kernel.body):
        for v in ir.op_results(node):
            bad = next((d for d in v.type.shape if d <= 0), None)
            if bad is None:
                continue
            gen = ", ".join(f"{k} = {val}" for k, val in inst.items())
            d = (Diagnostic.error(TILE_DIM_NOT_POSITIVE, f"tile dimension {bad} is not positive")
                 .secondary(decl.name.span, f"in kernel `{decl.name.name}`"
                                           + (f" with {gen}" if gen else "")))
            span = getattr(node, "span", None)
            if span is not None:
                d = d.primary(span, f"this makes a tile of shape {list(v.type.shape)}")
            zero = [f"`{k} = {val}`" for k, val in inst.items() if isinstance(val, (int, np.integer)) and val <= 0]
            raise TileError(d.with_help(
                "tile dimensions come from the kernel's generic arguments: give them positive values (powers "
                "of two)" if not zero else
                f"{', '.join(zero)} here, given or read from an array's shape (an empty axis gives 0): a tile "
                "cannot be empty; skip the call for an empty array, or give positive values (powers of two)"))


def _lower_kernel_body(cx: LowerCx, inst: dict[str, Any], facts: dict[str, Any]) -> ir.Kernel:
    decl = cx.decl
    generics = {k: int(v) for k, v in inst.items() if isinstance(v, (int, np.integer))}
    tparams = {k: v for k, v in inst.items() if isinstance(v, DType)}
    _infer_from_facts(cx, decl, generics, tparams, facts)
    cx.type_args = tparams
    cx.f = FnFrame(generics, tparams)
    missing = [g.name.name for g in decl.generics
               if g.is_const and g.name.name not in generics]
    if missing:
        raise ICE(f"lower_kernel: no value for const generic(s) {', '.join(missing)} "
                  f"of `{decl.name.name}`")
    cx.cluster = cluster_shape(decl, generics)
    attr = next((a for a in decl.attrs if a.name.name == "cluster"), None)
    bad = [int(generics[a.value.ident.name]) for a in attr.args if isinstance(a.value, ast.Name)
           and isinstance(generics.get(a.value.ident.name), int) and generics[a.value.ident.name] <= 0] if attr else []
    if bad:  # (hrev22: `C` = 0 was "`cluster_gather` in a kernel without `#[cluster(..)]`" at the lowering)
        raise TileError(_hint_error(
            decl, inst, f"`#[cluster(..)]` has a dimension of {bad[0]} blocks", attr.span,  # type: ignore[union-attr]
            f"{bad[0]} in this instance", "give each dimension of `#[cluster(..)]` 1 block or more"))
    if cx.cluster is not None and cx.cluster[0] * cx.cluster[1] * cx.cluster[2] > MAX_CLUSTER_BLOCKS:
        n = cx.cluster[0] * cx.cluster[1] * cx.cluster[2]
        attr = next(a for a in decl.attrs if a.name.name == "cluster")
        raise TileError(_hint_error(
            decl, inst, f"a cluster of {n} blocks is more than the {MAX_CLUSTER_BLOCKS} every GPU can place",
            attr.span, f"{n} blocks in this instance", f"use at most {MAX_CLUSTER_BLOCKS} blocks a cluster"))
    pending_own: list[ir.TensorParam] = []
    for p in decl.params:
        ty = p.ty
        if isinstance(ty, ast.RefType):
            dtype, dims = cx.tensor_type(ty.inner)
            if ty.mutable:
                tile = tuple(cx.need_int(d, p.span) for d in dims)
                tp = cx.b.tensor_param(p.name.name, dtype, len(dims), mutable=True,
                                       tile_shape=tile, span=p.span)
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
    deep = next((tp for tp in pending_own if tp.rank > 3), None)
    if deep is not None:
        raise Unsupported(deep.span, f"a `&mut` tensor parameter of rank {deep.rank} (above 3)",
                          "a kernel's grid has at most 3 axes, one per dimension of its `&mut` tiles: "
                          "declare it with at most 3 dimensions and reshape the tensor on the host")
    cx.grid_rank = max([1, *(tp.rank for tp in pending_own)])
    # Own-tile offsets are computed once at entry so every region can use them.
    groups = group_params(decl)
    cx.ranges.grid = Grid.of([(tp.tile_shape or (), groups.get(tp.name)) for tp in pending_own])
    for tp in pending_own:
        assert tp.tile_shape is not None
        axis = groups.get(tp.name)  # the group's tile of `if last_block(axis)`: 0 along the axis
        if axis is not None:
            cx.grid_rank = max(cx.grid_rank, axis + 1)
        offs = tuple(cx.b.const(0, I32) if d == axis else cx.b.block_id(d) if t == 1 else
                     cx.b.mul(cx.b.block_id(d), cx.b.const(t, I32), hint=f"{tp.name}_off{d}")
                     for d, t in enumerate(tp.tile_shape))
        ref = TensorRef(tp, offs)
        cx.tensors[tp.name] = ref
        cx.f.scopes[0][tp.name] = ref
    if RET in jump_flags([decl.body]):
        cx.f.scopes[0][RET] = CVal(False, BOOL)
    lower_block(cx, decl.body)
    hints = _hints(cx, decl, inst)
    cluster = cx.cluster or ()
    if cluster:  # the grid spans every axis a cluster spans
        cx.grid_rank = max(cx.grid_rank, 1 + max(d for d, c in enumerate(cluster) if c > 1 or d == 0))
    return cx.b.finish(grid_rank=cx.grid_rank, num_warps=hints.get("num_warps", 4),
                       num_stages=hints.get("stages", hints.get("num_stages", 2)),
                       instantiation=list(generics.items()),
                       type_args=[(k, v.value) for k, v in cx.type_args.items()],
                       hints=["stages" if h == "num_stages" else h for h in hints],
                       min_blocks=hints.get("min_blocks", 0), max_blocks=hints.get("max_blocks", 0),
                       pdl_early=hints.get("pdl_early", 0) > 0
                       and hints.get("pdl_early", 0) not in (ir.PDL_LAST, ir.PDL_EXIT),
                       pdl_last=hints.get("pdl_early", 0) == ir.PDL_LAST,
                       pdl_exit=hints.get("pdl_early", 0) == ir.PDL_EXIT,
                       prefetch_lines=hints.get("prefetch_lines", 0) > 0,
                       evict_first=hints.get("evict_first", 0) > 0,
                       arrive_wait=hints.get("arrive_wait", 0) > 0,
                       fast_math=bool(hints.get("fast_math", 0)),
                       cluster=cluster, walk=cx.walk)


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


def _hints(cx: LowerCx, decl: ast.FnDecl, inst: Mapping[str, Any]) -> dict[str, int]:
    out: dict[str, int] = {}
    for attr in decl.attrs:
        if attr.name.name != "hints":
            continue
        for a in attr.args:
            if a.name is not None:
                v = cx.expr(a.value)
                if isinstance(v, CVal) and isinstance(v.value, int):
                    if int(v.value) < 0 and a.name.name != "stages":  # a const generic's value (sema: literals)
                        raise TileError(_hint_error(decl, inst, f"hint `{a.name.name}` is {v.value} in this instance",
                                                    a.value.span, "a negative value",
                                                    "call it with a positive value, or 0 for no hint"))
                    if a.name.name == "pdl_early" and int(v.value) > ir.PDL_EXIT:
                        raise TileError(_hint_error(decl, inst, f"hint `pdl_early` is {v.value} in this instance",
                                                    a.value.span, "not 0, 1, 2 or 3",
                                                    "call it with 0 (not early), 1 (trigger at entry), 2 "
                                                    "(trigger at the main loop's last iteration) or 3 (at exit)"))
                    if a.name.name == "stages" and int(v.value) <= 0:
                        # 0 or below from a const generic (std::llm's ST -1: a peel): as if unhinted, but said, so
                        # that `stream_loads`' auto switch keeps such loops' loads in registers as asked
                        out["stages_off"] = 1
                        continue
                    out[a.name.name] = int(v.value)
    return out
