"""Typing a kernel launch: `k(z.partition([B]), &x, n)` on the host.

Decides the operation a kernel call builds (`OpT`, with which arguments are
borrowed mutably): each `&mut` parameter takes a partition into tiles of its
tile shape, each `&` parameter a borrowed tensor, scalars coerce. Infers the
kernel's const generics from the partitions' tile shapes, the tensors'
static shapes and the turbofish, records them (`Program.instantiations`,
`deferred` for values known only at run time) and checks the backend's tile
limits for this instantiation.
"""

from __future__ import annotations

from typing import Any

from tilelang.diagnostics.codes import types as T
from tilelang.diagnostics.codes.launch import GRID_MISMATCH, GRID_RANK, NO_GRID
from tilelang.diagnostics.grid import (
    grid_mismatch_help,
    group_count_error,
    merge_axes_help,
    no_grid_help,
)
from tilelang.dtypes import DType
from tilelang.lastblock import group_params, region
from tilelang.requires import trim_grid
from tilelang.sema.coerce import coerce, settle
from tilelang.sema.context import CheckCx, Fx
from tilelang.sema.generics import (
    arg_mismatch,
    generic_values_fit,
    solve_linear,
    subst_env,
    turbofish,
    turbofish_elem_mismatch,
    unify_dims,
    unify_elem,
)
from tilelang.sema.kernel import MAX_TILE_ELEMENTS, check_instantiation
from tilelang.sema.program import FnInfo
from tilelang.sema.typeops import is_poison
from tilelang.sema.types import (
    Dim,
    OpT,
    PartitionT,
    RefT,
    ScalarT,
    TensorT,
    Type,
    TypeParam,
    UntypedInt,
    shape_str,
    subst_dim,
    subst_type,
)
from tilelang.share_queue import loop as walk_loop
from tilelang.syntax import ast


def check_kernel_call(tcx: CheckCx, e: ast.Call, info: FnInfo, fx: Fx, args: list[ast.Expr], tys: list[Type]) -> Type:
    env: dict[str, Any] = {}
    srcs: dict[str, Any] = {}
    deferred: dict[str, ast.Expr] = {}
    errors_before = len(tcx.sink.diagnostics)
    turbofish(tcx, e, info, fx, env, srcs, deferred)
    # (param dim, arg dim, arg node, param, is a partition)
    pending: list[tuple[Dim, Dim | None, Any, Any, bool]] = []
    borrows: list[bool | None] = []
    bad = False
    whole = False
    # partitions with tile dimensions left to the tuner (`_`): taken by this launch
    tuned_dims = {a: tcx.tuned_partitions.pop(a) for a in args if a in tcx.tuned_partitions}
    tuned: set[str] = set()  # const generics the autotuner picks in this launch
    generic_scalars: list[tuple[Any, Any, ast.Expr, Type]] = []
    parts: list[tuple[ast.Param, ast.Expr, PartitionT]] = []  # the `&mut` arguments
    for p, pty, a, aty in zip(info.decl.params, info.param_types, args, tys, strict=False):
        if is_poison(pty, aty):
            borrows.append(None)
            bad = True  # already reported: no "cannot infer" for what it would have given
            continue
        match pty:
            case RefT(mutable=True, inner=TensorT(dtype=pd, shape=pshape)):
                borrows.append(True)
                if isinstance(aty, PartitionT):
                    if pd is not None and not unify_elem(tcx, pd, aty.tensor.dtype, env):
                        if not turbofish_elem_mismatch(tcx, e, info, pd, aty.tensor.dtype, a, env, srcs):
                            arg_mismatch(tcx, p, subst_type(pty, subst_env(env)), a, aty, info)
                        bad = True
                        continue
                    assert pshape is not None
                    if len(aty.tile_shape) != len(pshape):
                        tcx.emit(tcx.err(T.PARTITION_SHAPE,
                                         f"partition into {len(aty.tile_shape)}-D tiles passed for a "
                                         f"{len(pshape)}-D parameter", a.span,
                                         f"tiles of shape {shape_str(aty.tile_shape)}")
                                 .secondary(p.ty.span, f"`{p.name.name}` has tile shape {shape_str(pshape)}")
                                 .with_help(f"partition with {len(pshape)}-D tiles, e.g. `t.partition({shape_str(pshape)})`"))
                        bad = True
                        continue
                    if a in tcx.partition_deferred:
                        for ix, ex in tcx.partition_deferred[a].values():
                            ps = pshape[ix]
                            sname = ps.as_symbol() if ps is not None else None
                            if ix in tuned_dims.get(a, ()):
                                if tuner_dim(tcx, info, p, ex, sname):
                                    tuned.add(sname)  # type: ignore[arg-type]
                                else:
                                    bad = True
                                continue
                            if sname in info.const_generics and sname not in env:
                                deferred.setdefault(sname, ex)
                                srcs.setdefault(sname, a)
                    unify_dims(tcx, pshape, aty.tile_shape, a, env, srcs, info, e, pending, p, True)
                    parts.append((p, a, aty))
                elif isinstance(aty, TensorT) or (isinstance(aty, RefT) and isinstance(aty.inner, TensorT)):
                    # a whole tensor for a `&mut` param: the ownership checker's rule
                    # (it names the missing `.partition`); no type error here, and
                    # no "cannot infer" either: the missing partition is the cause.
                    whole = True
                else:
                    arg_mismatch(tcx, p, pty, a, aty, info)
                    bad = True
            case RefT(mutable=False, inner=TensorT(dtype=pd, shape=pshape)):
                borrows.append(False)
                inner = aty.inner if isinstance(aty, RefT) else None
                if not isinstance(inner, TensorT):
                    arg_mismatch(tcx, p, pty, a, aty, info)
                    bad = True
                    continue
                if pd is not None and not unify_elem(tcx, pd, inner.dtype, env):
                    if not turbofish_elem_mismatch(tcx, e, info, pd, inner.dtype, a, env, srcs):
                        arg_mismatch(tcx, p, subst_type(pty, subst_env(env)), a, aty, info)
                    bad = True
                    continue
                if pshape is not None and inner.shape is not None:
                    if len(pshape) != len(inner.shape):
                        tcx.emit(tcx.err(T.RANK_MISMATCH,
                                         f"a {len(inner.shape)}-D tensor passed for a {len(pshape)}-D "
                                         f"parameter", a.span, f"this is `{aty}`")
                                 .secondary(p.ty.span, f"`{p.name.name}` is `{pty}`")
                                 .with_help(f"pass a {len(pshape)}-D tensor (`t.reshape([..])`), or change the parameter's type"))
                        bad = True
                        continue
                    unify_dims(tcx, pshape, inner.shape, a, env, srcs, info, e, pending, p, False, deferred)
                elif pshape is not None:  # rank unknown until run time (`load_npy`)
                    for pdim in pshape:
                        sname = pdim.as_symbol() if pdim is not None else None
                        if sname is not None and sname in info.const_generics:
                            deferred.setdefault(sname, a)
            case ScalarT(dtype=TypeParam()):
                borrows.append(None)
                generic_scalars.append((p, pty, a, aty))  # once the tensors have bound `T`
            case ScalarT():
                borrows.append(None)
                if not coerce(tcx, aty, pty, a):
                    arg_mismatch(tcx, p, pty, a, aty, info)
                    bad = True
                else:
                    settle(tcx, a, pty)
            case _:
                borrows.append(None)
    for p, pty, a, aty in generic_scalars:
        # a scalar of the kernel's element type `T`: `T` comes from the tensors
        # (or the turbofish); only then from the scalar's own type
        name = pty.dtype.name
        if name not in env and isinstance(aty, ScalarT) and isinstance(aty.dtype, DType):
            env[name] = aty.dtype
        if name not in env:
            tcx.emit(tcx.err(T.CANNOT_INFER, f"cannot infer the type parameter `{name}` of `{info.name}`",
                             a.span, f"`{p.name.name}: {name}` takes its type from the tensors or the turbofish")
                     .secondary(p.ty.span, f"`{p.name.name}` is `{name}`")
                     .with_help(f"give the scalar a type (`{_typed_example(tcx, a, aty)}`) or `{name}` "
                                f"explicitly: `{info.name}::<{_example_type(aty)}, ..>(..)`"))
            bad = True
            continue
        want = subst_type(pty, subst_env(env))
        if not coerce(tcx, aty, want, a):
            arg_mismatch(tcx, p, want, a, aty, info)
            bad = True
        else:
            settle(tcx, a, want)
    solved = True
    while solved:  # a partition's 64 for `[1, BT, 2 * HD]` gives `HD` = 32
        solved = False
        for pdim, adim, src, _param, _is_part in pending:
            x = solve_linear(pdim, adim, {k: v for k, v in env.items() if k not in deferred}, info.const_generics)
            if x is not None and x[0] not in deferred:
                env[x[0]], srcs[x[0]], solved = x[1], src, True
    # compound dims: every symbol known now?
    for pdim, adim, src, param, is_part in pending:
        if adim is None or not pdim.symbols() <= {k for k, v in env.items() if isinstance(v, Dim)}:
            continue
        want = subst_dim(pdim, {k: v for k, v in env.items() if isinstance(v, Dim)})
        if want.is_const and adim.is_const and want != adim:
            ad = adim
            shown = str(want) if pdim.is_const else f"`{pdim}` = {want}"
            if is_part:
                d = tcx.err(T.PARTITION_SHAPE, f"tile dimension {ad} does not match {shown} of parameter "
                            f"`{param.name.name}`", src.span, f"tiles of size {ad}")
            else:
                d = tcx.err(T.MISMATCHED_TYPES, f"tensor dimension {ad} does not match {shown} of parameter "
                            f"`{param.name.name}`", src.span, f"a dimension of size {ad}")
            d = d.secondary(param.ty.span, f"`{param.name.name}` is `{tcx.snippet(param.ty)}`")
            for sname in sorted(pdim.symbols()):
                if sname in srcs and srcs[sname] is not src:
                    d = d.secondary(srcs[sname].span, f"`{sname}` = {env[sname]} comes from here")
            w = want.const_value or 0
            if is_part and not 0 < w <= MAX_TILE_ELEMENTS:
                # (no tile has that size: "use tiles of size 4295098369" led to E0213)
                names = " and ".join(f"`{n}`" for n in sorted(pdim.symbols())) or "the generics"
                tcx.emit(d.with_help(f"no tile has a dimension of {want}: one is 1 to {MAX_TILE_ELEMENTS} "
                                     f"elements, so pick {names} to make `{pdim}` one of those"))
            else:
                tcx.emit(d.with_help(f"use {'tiles' if is_part else 'a tensor'} of size {want} here"))
            bad = True
    if tuned:  # a tuned launch: the tuner also picks what the attribute lists and nothing fixed
        from tilelang.tuner.space import tune_spec

        spec = tune_spec(info.decl)
        tuned |= {g for g in (spec.names if spec else ())
                  if g in info.const_generics and g not in env and g not in deferred}
    missing = [g for g in info.const_generics if g not in env and g not in deferred and g not in tuned]
    if missing and not bad and not whole:
        g = missing[0]
        gdecl = next(x for x in info.decl.generics if x.name.name == g)
        d = (tcx.err(T.CANNOT_INFER, f"cannot infer the value of const generic `{g}` of `{info.name}`",
                     e.callee.span, "cannot infer")
             .secondary(gdecl.span, f"`{g}` declared here")
             .note("const generics are inferred from the tile shapes of partitions and from the "
                   "static shapes of tensors"))
        for pdim, adim, src, _param, _is_part in pending:
            if g in pdim.symbols() and adim is not None and adim.is_const and not pdim.as_symbol():
                # `[2 * HD]` given 63: a linear dimension is solved where an integer solves it
                d = d.secondary(src.span, f"`{pdim}` is {adim} here: no positive integer `{g}` gives that")
                break
        tcx.emit(d.with_help(_turbofish_help(info, env)))
        bad = True
    inst: dict[str, Any] = {}
    for k, v in env.items():
        if isinstance(v, Dim) and v.is_const:
            inst[k] = v.const_value
        elif k in info.type_params and isinstance(v, DType):
            inst[k] = v  # `T` of `kernel fn k<T, ..>`, from the arguments or the turbofish
    tcx.program.instantiations[e] = inst
    if deferred:
        tcx.program.deferred[e] = deferred
    tcx.program.shape_sources[e] = dict(srcs)
    if tuned:
        tcx.program.tuned[e] = frozenset(tuned)
    if not bad and generic_values_fit(tcx, e, info, inst, srcs):
        check_instantiation(tcx, e, info, inst, srcs)
        if len(tcx.sink.diagnostics) == errors_before:  # (E0214's conflict says more)
            no_grid(tcx, e, info)
            constant_grids(tcx, e, info, parts)
            constant_requirements(tcx, e, info, fx, args, tys, inst, parts)
    return OpT(info.qualname, tuple(borrows))


def constant_requirements(tcx: CheckCx, e: ast.Call, info: FnInfo, fx: Fx, args: list[ast.Expr],
                          tys: list[Type], inst: dict[str, Any],
                          parts: list[tuple[ast.Param, ast.Expr, PartitionT]]) -> None:
    """E0513 at check time: a `#[requires(..)]` of the kernel that every value
    it reads makes false at this launch, where they are constants (a `&`
    tensor's or a partitioned tensor's static shape, a literal or module constant scalar, a generic the
    call fixes). The launch's own check (`runtime/launch.py`) stays for the
    others."""
    from tilelang.diagnostics.codes.launch import REQUIREMENT_FAILED
    from tilelang.lastblock import group_params
    from tilelang.requires import (
        DivisionByZero,
        constant_grid,
        evaluate,
        grid_values,
        quoted,
        read_names,
        requirements,
    )
    from tilelang.sema.consts import const_value

    reqs = requirements(info.decl)
    if not reqs:
        return
    shapes: dict[str, tuple[int, ...]] = {}
    values: dict[str, Any] = {k: v for k, v in inst.items() if isinstance(v, int) and not isinstance(v, bool)}
    for p, a, aty in zip(info.decl.params, args, tys, strict=False):
        inner = aty.inner if isinstance(aty, RefT) else aty
        if isinstance(p.ty, ast.RefType) and not p.ty.mutable and isinstance(inner, TensorT) \
                and inner.shape is not None and all(d is not None and d.is_const for d in inner.shape):
            shapes[p.name.name] = tuple(d.const_value for d in inner.shape)  # type: ignore[union-attr]
        elif isinstance(p.ty, ast.NamedType) and not p.ty.args:
            v = const_value(tcx, a, fx)
            if v is None and isinstance(a, ast.Name):
                # an immutable `let` of a constant integer (`let layer = 2;`): the shapes algebra's value, exact
                # for a name (its value is fixed in its own type, overflow refused; as E0226's named divisor)
                dim = tcx.program.dims.get(a)
                v = dim.const_value if dim is not None and dim.is_const else None
            if isinstance(v, (int, float, bool)):
                values[p.name.name] = v
    for p, _, aty in parts:  # `o.tensor_shape()`: the partitioned tensor's, where constant
        dims = aty.tensor.shape
        if dims is not None and all(d is not None and d.is_const for d in dims):
            shapes[p.name.name] = tuple(d.const_value for d in dims)  # type: ignore[union-attr]
    groups = group_params(info.decl)
    grid_parts = [(tuple(getattr(n, "const_value", None) for n in aty.tensor.shape),
                   tuple(getattr(t, "const_value", None) for t in aty.tile_shape))
                  for p, _, aty in parts if p.name.name not in groups and aty.tensor.shape is not None]
    if len(grid_parts) == len([p for p, _, _ in parts if p.name.name not in groups]) and \
            all(isinstance(v, int) for shape, tile in grid_parts for v in (*shape, *tile)):
        grid = constant_grid(grid_parts)  # type: ignore[arg-type]
        if grid is not None:
            values.update(grid_values(grid))
    for r in reqs:
        if not read_names(r) <= shapes.keys() | values.keys():
            continue
        try:
            ok = bool(evaluate(r.cond, shapes, values))
        except DivisionByZero:
            ok = False
        if not ok:
            tcx.emit(tcx.err(REQUIREMENT_FAILED, f"this launch of `{info.name}` breaks a requirement: {r.message} "
                             f"(here {quoted(r.cond, shapes, values, tcx.snippet)})", e.span, "these arguments")
                     .secondary(r.span, "this requirement is false")
                     .note("every value the requirement reads is a constant here, so the launch would always fail")
                     .with_help("pass arguments that meet the requirement (the kernel's `#[requires(..)]` "
                                "says what it needs of its shapes and numbers)"))
            return


def no_grid(tcx: CheckCx, e: ast.Call, info: FnInfo) -> None:
    """E0509 at check time: a kernel without a `&mut` parameter has no
    partition to size a launch's grid, whatever its arguments (the launch's
    own check, `runtime/launch.py` `bind_launch`, said so only when it ran)."""
    if any(isinstance(p.ty, ast.RefType) and p.ty.mutable for p in info.decl.params):
        return
    tcx.emit(tcx.err(NO_GRID, f"kernel `{info.name}` has no `&mut` partition to size its grid", e.span,
                     "the grid of this launch is unknown")
             .secondary(info.decl.name.span, "declared here")
             .note("a launch runs one tile block a tile of its `&mut` partitions: a kernel without a `&mut` "
                   "parameter has no tiles to count")
             .with_help(no_grid_help(info.decl)))


def constant_grids(tcx: CheckCx, e: ast.Call, info: FnInfo,
                   parts: list[tuple[ast.Param, ast.Expr, PartitionT]]) -> None:
    """E0500 at check time: the `&mut` partitions of a launch give different
    grids, where every tensor and tile dimension involved is a constant; a
    tensor that the group of `if last_block(axis)` owns (`lastblock.group_params`)
    gives the launch grid with 1 along `axis`. The launch's own check
    (`runtime/launch.py` `bind_launch`, whose rules these are: grids equal up
    to trailing 1s) stays for every other launch. Also E0510, a partition over more than 3 axes (round 24:
    refused only when it ran, or as the lowering's E0701 where another kernel of the program made `tilec check`
    lower the instances)."""
    for p, a, aty in parts:
        if aty.tensor.shape is None or len(aty.tile_shape) <= 3 or len(aty.tensor.shape) != len(aty.tile_shape):
            continue
        shape = tuple(d.const_value if d is not None else None for d in aty.tensor.shape)
        tile = tuple(t.const_value for t in aty.tile_shape)
        if any(v is None for v in (*shape, *tile)) or any(t <= 0 for t in tile):  # type: ignore[operator]
            continue
        grid = ", ".join(str(-(-n // t)) for n, t in zip(shape, tile, strict=True))  # type: ignore[operator]
        tcx.emit(tcx.err(GRID_RANK, f"`{p.name.name}` is partitioned over {len(tile)} dimensions but a grid has "
                         "at most 3", a.span, f"a grid of [{grid}]")
                 .note("every shape here is a constant, so the launch would always fail")
                 .with_help(merge_axes_help(shape, tile)))  # type: ignore[arg-type]
        return
    if _group_counts(tcx, e, info, parts):
        return
    if len(parts) < 2:
        return
    groups: dict[str, int] = {}
    if any(isinstance(n, ast.Name) and n.ident.name == "last_block" for n in ast.walk(info.decl.body)):
        found = region(info.decl)
        if found is None:
            return  # E0409 says more
        groups = group_params(info.decl)
        before = {n.ident.name for st in info.decl.body.stmts if st is not found[0] and
                  not (isinstance(st, ast.ExprStmt) and st.expr is found[0])
                  for n in ast.walk(st) if isinstance(n, ast.Name)}
        if set(groups) & before:
            return  # a parameter both the block's own tile and the group's: E0411 says more
    grids: list[tuple[str, ast.Expr, tuple[int, ...]]] = []
    for p, a, aty in parts:
        if aty.tensor.shape is None:
            continue
        dims = [(n.const_value if n is not None else None, t.const_value if t is not None else None)
                for n, t in zip(aty.tensor.shape, aty.tile_shape, strict=False)]
        if len(aty.tensor.shape) != len(aty.tile_shape) or \
                any(n is None or t is None or n < 0 or t <= 0 for n, t in dims):
            continue
        grids.append((p.name.name, a, tuple(-(-n // t) for n, t in dims)))  # type: ignore[operator]
    def _shape_tile(parts: Any, name: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
        aty = next(a for p, _, a in parts if p.name.name == name)
        return (tuple(d.const_value for d in aty.tensor.shape), tuple(t.const_value for t in aty.tile_shape))

    plain = [g for g in grids if g[0] not in groups]
    if not plain:
        return
    first = plain[0]
    for name, a, grid in plain[1:]:
        if trim_grid(grid) != trim_grid(first[2]):
            g0, g1 = (f"[{', '.join(map(str, g))}]" for g in (first[2], grid))
            tcx.emit(tcx.err(GRID_MISMATCH, f"partition grids disagree: `{first[0]}` gives {g0} blocks but "
                             f"`{name}` gives {g1}", a.span, f"{g1} blocks")
                     .secondary(first[1].span, f"{g0} blocks")
                     .note("every shape here is a constant, so the launch would always fail")
                     .with_help(grid_mismatch_help(name, first[2], grid, *_shape_tile(parts, name))))
            return
    if len(plain) < len([p for p in parts if p[0].name.name not in groups]):
        return  # a launch grid not known here: the launch checks the group's tensors
    for name, a, grid in grids:
        if name not in groups:
            continue
        axis = groups[name]
        want = list(first[2]) + [1] * (axis + 1 - len(first[2]))
        want[axis] = 1
        if trim_grid(grid) != trim_grid(tuple(want)):
            w, g = (f"[{', '.join(map(str, x))}]" for x in (trim_grid(tuple(want)), grid))
            tcx.emit(tcx.err(GRID_MISMATCH, f"`{name}` is written once a group of `last_block({axis})`: its "
                             f"partition must give {w} blocks, not {g}", a.span, f"{g} blocks")
                     .secondary(first[1].span, f"the launch grid, [{', '.join(map(str, first[2]))}] blocks")
                     .note(f"the blocks that differ only along grid axis {axis} are one group; the last of them "
                           f"to arrive writes the group's tile of `{name}` (every shape here is a constant)")
                     .with_help(f"partition `{name}` into one tile along axis {axis} per group"))
            return


def _group_counts(tcx: CheckCx, e: ast.Call, info: FnInfo, parts: list[tuple[ast.Param, ast.Expr, PartitionT]]) -> bool:
    """E0515 at check time (hrev30): a `last_block` or queue kernel launched on a grid of constant shapes with
    more groups than `i32` numbers (the launch refuses it too: `runtime/tile_counts.check_group_counts`)."""
    if region(info.decl) is None and walk_loop(info.decl) is None:
        return False
    owned = group_params(info.decl) if region(info.decl) is not None else {}
    for p, _a, aty in parts:
        if p.name.name in owned or aty.tensor.shape is None or len(aty.tensor.shape) != len(aty.tile_shape):
            continue
        dims = [(n.const_value if n is not None else None, t.const_value if t is not None else None)
                for n, t in zip(aty.tensor.shape, aty.tile_shape, strict=True)]
        if any(n is None or t is None or n < 0 or t <= 0 for n, t in dims):
            return False
        diag = group_count_error(info.decl, tuple(-(-n // t) for n, t in dims), e.span)  # type: ignore[operator]
        if diag is not None:
            tcx.emit(diag.note("every shape here is a constant, so the launch would always fail"))
        return diag is not None
    return False


def tuner_dim(tcx: CheckCx, info: FnInfo, p: ast.Param, ex: ast.Expr, sname: str | None) -> bool:
    """A tile dimension `_` of a partition passed for `&mut` parameter `p`: the
    tuner picks it when the parameter's dimension there is a const generic
    that the kernel's `#[autotune]` lists (then every candidate is an
    ordinary launch, checked as any other); otherwise E0229."""
    from tilelang.tuner.space import tune_spec

    if sname is None or sname not in info.const_generics:
        tcx.emit(tcx.err(T.TUNED_TILE_MISUSE, f"the autotuner cannot pick this tile dimension of `{p.name.name}`",
                         ex.span, "left to the tuner here")
                 .secondary(p.ty.span, f"`{p.name.name}` is `{tcx.snippet(p.ty)}`: this dimension is not a "
                            "const generic")
                 .note("the tuner picks a tile dimension by picking the const generic the parameter's "
                       "tile shape names there")
                 .with_help("give the tile dimension"))
        return False
    spec = tune_spec(info.decl)
    if spec is None or sname not in spec.names:
        attr = next((a for a in info.decl.attrs if a.name.name == "autotune"), None)
        d = tcx.err(T.TUNED_TILE_MISUSE,
                    f"`_` leaves `{sname}` of kernel `{info.name}` to the autotuner, but "
                    + ("its `#[autotune]` does not list it" if attr is not None else "it has no `#[autotune]`"),
                    ex.span, f"the tuner would pick `{sname}` here")
        d = d.secondary(attr.span, "the candidates the tuner may pick from") if attr is not None else \
            d.secondary(info.decl.name.span, f"`{info.name}` declared here")
        tcx.emit(d.with_help(f"list its candidates: `#[autotune({sname} = [64, 128])]` before "
                             f"`kernel fn {info.name}`, or give the tile dimension"))
        return False
    return True


def untaken_tuner_partitions(tcx: CheckCx) -> None:
    """E0229 for each partition with a `_` dimension that no kernel launch took:
    the tuner picks a tile shape by timing the launch it is written in."""
    for node in list(tcx.tuned_partitions):
        arg = node.args[0].value
        hole = next((x for x in (arg.elems if isinstance(arg, ast.ArrayExpr) else (arg,))
                     if x in tcx.tuner_dims), arg)
        tcx.emit(tcx.err(T.TUNED_TILE_MISUSE, "a tile dimension left to the autotuner outside a kernel launch",
                         hole.span, "no launch here for the tuner to time")
                 .secondary(node.span, "this partition is not an argument of a kernel launch")
                 .note("the tuner picks `_` by timing the launch the partition is written in")
                 .with_help("write the partition in the launch: `k(z.partition([_]), ..)`"))
    tcx.tuned_partitions.clear()


def _example_type(aty: Any) -> str:
    """The type a help line suggests for a scalar of no fixed type: `i32` for
    an integer literal, `f32` otherwise."""
    return "i32" if isinstance(aty, UntypedInt) else "f32"


def _typed_example(tcx: CheckCx, a: ast.Expr, aty: Any) -> str:
    """`<the argument> as <type>`, the argument's own text when it is short."""
    text = tcx.snippet(a)
    if not text or text == "..." or len(text) > 24 or "\n" in text:
        text = "2" if _example_type(aty) == "i32" else "2.0"
    elif not isinstance(a, (ast.IntLit, ast.FloatLit, ast.Name)):
        text = f"({text})"
    return f"{text} as {_example_type(aty)}"


def _turbofish_help(info: Any, env: dict[str, Any]) -> str:
    """`give it explicitly: `k::<f16, 64, BN, 128>(..)``: every generic in the
    declaration's order (type parameters too, or the turbofish would be
    refused), with the values the launch already fixed."""
    shown, open_, tuned = [], [], []
    from tilelang.tuner.space import listed_generics

    cands = listed_generics(info.decl)
    for gp in info.decl.generics:
        v = env.get(gp.name.name)
        if isinstance(v, Dim) and v.is_const:
            shown.append(str(v.const_value))
        elif isinstance(v, DType):
            shown.append(v.value)
        elif gp.name.name in cands:  # listed in `#[autotune]`: its first candidate (round 14)
            shown.append(str(cands[gp.name.name][0]))
            tuned.append(f"`{gp.name.name}` is the first of its `#[autotune]` candidates "
                         f"{list(cands[gp.name.name])}")
        else:
            shown.append(gp.name.name)
            open_.append(f"`{gp.name.name}`")
    out = f"give it explicitly: `{info.name}::<{', '.join(shown)}>(..)`"
    if open_:
        out += f" with a value for {', '.join(open_)}"
    if tuned:
        out += (f" ({'; '.join(tuned)}: in Tile source the tuner picks a listed generic only where a tile "
                "dimension written `_` leaves it open, `z.partition([_])`)")
    return out

