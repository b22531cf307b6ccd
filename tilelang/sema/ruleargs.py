"""Reading the arguments of a builtin call, for the typing rules (`rules.py`,
`access.py`): constant integers, axes, and shapes `[d0, d1, ..]`, each
reported where it is not what the builtin needs."""

from __future__ import annotations

import math
from typing import Literal

from tilelang.diagnostics.codes import types as T
from tilelang.sema.coerce import settle
from tilelang.sema.context import CallCx, CheckCx
from tilelang.sema.typeops import deref, is_intlike, is_poison
from tilelang.sema.types import I32, Dim, ScalarT, ShapeT, TensorT, TileT, TupleT, Type, UntypedFloat, const_shape
from tilelang.syntax import ast


def const_arg(tcx: CheckCx, cx: CallCx, e: ast.Expr, what: str) -> int | None:
    d = tcx.program.dims.get(e)
    v = d.const_value if d is not None else None
    if v is None:
        tcx.emit(tcx.err(T.AXIS_OUT_OF_RANGE if what == "axis" else T.NOT_CONSTANT,
                         f"the {what} of `{cx.name}` must be a constant", e.span, "not a constant")
                 .with_help(f"write the {what} as a literal, e.g. `{cx.name}(.., 0)`"))
    return v


def listed_axes(e: ast.Expr) -> list[int] | None:
    """The axes of `(1, 2)` or `[1, 2]` (NumPy's and PyTorch's several axes at once; `[1]`, `(1,)` one), each an
    integer literal; None for anything else."""
    if not isinstance(e, (ast.TupleExpr, ast.ArrayExpr)) or not e.elems:
        return None
    out = []
    for x in e.elems:
        neg = isinstance(x, ast.Unary) and x.op == "-"
        lit = x.operand if isinstance(x, ast.Unary) and neg else x
        if not isinstance(lit, ast.IntLit):
            return None
        out.append(-lit.value if neg else lit.value)
    return out


def several_axes_help(tcx: CheckCx, node: ast.Expr, name: str, x: ast.Expr, xty: Type | None,
                      axes: list[int]) -> str | None:
    """A reduction over several axes at once (`t.sum((1, 2))`, `sum(t, [1, 2])`, `t.max(axis = (1, 2))`):
    Tile reduces one axis at a time, in a kernel as on the host, so the spelling chains the reductions, the
    highest axis first (the lower ones keep their numbers); `argmax`/`argmin` of adjacent axes reshape them
    into one (their index is row-major over them, as NumPy's of the flattened axes). NumPy's negative axes
    are counted from the end. None where the axes are not those of the value."""
    src = deref(xty) if xty is not None else None
    if not isinstance(src, (TileT, TensorT)) or src.shape is None:
        return None
    rank = len(src.shape)
    axes = [a + rank if a < 0 else a for a in axes]
    if not all(0 <= a < rank for a in axes) or len(set(axes)) != len(axes):
        return None
    method = isinstance(node, ast.MethodCall)
    t = tcx.receiver_snippet(x) if method else tcx.snippet(x)
    if not t or len(t) > 40:
        return None
    if len(axes) == 1:  # `t.sum([1])`, NumPy's `axis=(1,)`
        one = f"{t}.{name}({axes[0]})" if method else f"{name}({t}, {axes[0]})"
        return f"an axis is written alone, not as a list: `{one}`"
    if name in ("argmax", "argmin"):
        lo, hi = min(axes), max(axes)
        shape = const_shape(src.shape)
        if hi - lo + 1 != len(axes) or shape is None:
            return None
        merged = [*shape[:lo], math.prod(shape[lo:hi + 1]), *shape[hi + 1:]]
        flat = f"{t}.reshape([{', '.join(map(str, merged))}])"
        call = f"{flat}.{name}({lo})" if method else f"{name}({flat}, {lo})"
        return f"reshape the axes into one and take the `{name}` along it: `{call}` (the index runs row-major over them)"
    call = t
    for a in sorted(axes, reverse=True):
        call = f"{call}.{name}({a})" if method else f"{name}({call}, {a})"

    whole = (f"; `{t}.{name}()` reduces every axis to a scalar" if method else
             f"; `{name}({t})` reduces every axis to a scalar") if len(axes) == rank else ""
    return f"Tile reduces one axis at a time: `{call}`, the highest axis first so the others keep their numbers{whole}"


def axis_arg(tcx: CheckCx, cx: CallCx, e: ast.Expr, rank: int) -> int | None:
    ty = tcx.program.types.get(e)
    if ty is not None and not is_intlike(ty):
        d = tcx.err(T.MISMATCHED_TYPES, "mismatched types", e.span, f"expected an axis (`i32`), found `{ty}`")
        axes = listed_axes(e)
        several = (several_axes_help(tcx, cx.node, cx.name, cx.operands[0], cx.operand_tys[0], axes)
                   if axes is not None else None)
        if several is not None:
            d = d.with_help(several)
        elif cx.name in ("max", "min"):  # Python's `max(a, b)`, NumPy's `np.max` of two arrays
            a, b = (tcx.snippet(cx.operands[0]) or "a"), (tcx.snippet(e) or "b")
            a, b = (a, b) if len(a) + len(b) < 60 else ("a", "b")
            d = d.note(f"`{cx.name}(t, axis)` reduces along an axis").with_help(
                f"the element-wise {cx.name}imum of two values is `{cx.name}imum({a}, {b})`")
        tcx.emit(d.with_help("an axis is an integer constant, e.g. `0` or `1`") if not d.help else d)
        return None
    settle(tcx, e, I32)
    v = const_arg(tcx, cx, e, "axis")
    if v is None:
        return None
    if not 0 <= v < rank:
        noun = "a tensor" if isinstance(deref(cx.operand_tys[0]), TensorT) else "a tile"
        tcx.emit(tcx.err(T.AXIS_OUT_OF_RANGE, f"axis {v} is out of range for {noun} of rank {rank}", e.span,
                         f"valid axes are 0..{rank}" if rank else "a scalar has no axes")
                 .note("axes count from 0")
                 .with_help(f"NumPy's axis {v} counts from the end; Tile's axes count from 0: here it is `{rank + v}`"
                            if 0 <= rank + v < rank else
                            f"use an axis below {rank}" if rank else "reduce a tile or tensor, not a scalar"))
        return None
    return v


def shape_typed(tcx: CheckCx, e: ast.Expr, expected: str) -> ShapeT | None:
    """The `ShapeT` of argument `e`; else None, having said what it is instead."""
    ty = tcx.program.types.get(e)
    if isinstance(ty, ShapeT):
        return ty
    if ty is not None and not is_poison(ty):
        d = tcx.err(T.MISMATCHED_TYPES, "mismatched types", e.span, f"expected {expected}, found `{ty}`")
        if isinstance(ty, TupleT) and isinstance(e, ast.TupleExpr):  # NumPy's `zeros((m, n))`
            inner = ", ".join(tcx.snippet(x) or "_" for x in e.elems)
            d = d.with_help(f"a shape is written in brackets: `[{inner}]`")
        elif is_intlike(ty) and len(tcx.snippet(e) or "") < 40:  # `partition(B)`, `load(block_id(0))`
            d = d.with_help(f"write it in brackets, one entry per axis: `[{tcx.snippet(e)}]`")
        tcx.emit(d.with_help(f"pass {expected}") if not d.help else d)
    return None


def _inferred_dim_help(cx: CallCx, dims: tuple[Dim | None, ...]) -> str:
    """NumPy's `t.reshape([-1, 2])`: the size `-1` stands for, where the tensor's shape and the other
    dims are constants."""
    src = deref(cx.recv_ty) if cx.recv_ty is not None else None
    shape = const_shape(src.shape) if isinstance(src, (TensorT, TileT)) else None
    others = [d.const_value for d in dims if d is None or d.const_value != -1]
    if shape is not None and all(isinstance(o, int) and o > 0 for o in others) and len(others) == len(dims) - 1:
        n, rest = math.prod(shape), math.prod(others)  # type: ignore[arg-type]
        if n % rest == 0:
            fixed = ", ".join(str(n // rest) if d is not None and d.const_value == -1 else str(d.const_value)
                              for d in dims)
            return f"NumPy's `-1` (the size that is left) is written out in Tile: `reshape([{fixed}])`"
    return "NumPy's `-1` (the size that is left) is written out in Tile: the element count over the other sizes"


def shape_arg(tcx: CheckCx, cx: CallCx, e: ast.Expr, need_const: bool, *,
              kind: Literal["shape", "tiles", "axes"] = "shape") -> tuple[Dim | None, ...] | None:
    """The dims of shape argument `e` (None where one is not known here). In
    host code a constant dim that cannot be is refused here, with its span,
    where the run would refuse it later (E0714) or a launch far away (E0212):
    a negative dim of a tensor's shape (E0230), a dim below 1 of a partition's
    tiles (E0212). A list of `axes` is the caller's to check."""
    if cx.name == "reshape" and isinstance(e, ast.Unary) and e.op == "-" and isinstance(e.operand, ast.IntLit) \
            and e.operand.value == 1 and (flat := _flat_size(cx)) is not None:
        # NumPy's `t.reshape(-1)` (round 24: "write it in brackets: `[-1]`", then E0212 "write every size")
        x = tcx.receiver_snippet(cx.recv) if cx.recv is not None else "t"
        tcx.emit(tcx.err(T.MISMATCHED_TYPES, "mismatched types", e.span, "expected a shape `[d0, d1, ..]`, "
                         "found an integer")
                 .with_help(f"NumPy's `reshape(-1)` flattens; Tile writes the whole shape: "
                            f"`{x if len(x or '') < 30 else 't'}.reshape([{flat}])`"))
        return None
    ty = shape_typed(tcx, e, "a shape `[d0, d1, ..]`")
    if ty is None:
        return None
    dims = tcx.shape_values.get(e)
    if dims is None:
        return None if need_const else (tuple([None] * ty.rank) if ty.rank is not None else None)
    if kind != "axes" and not cx.fx.in_kernel:
        elems = e.elems if isinstance(e, ast.ArrayExpr) and len(e.elems) == len(dims) else [e] * len(dims)
        for d, x in zip(dims, elems, strict=True):
            v = d.const_value if d is not None else None
            if v is None or v >= (1 if kind == "tiles" else 0):
                continue
            if kind == "tiles":
                diag = (tcx.err(T.TILE_DIM_NOT_POSITIVE, f"tile dimension {v} is not positive", x.span,
                                f"{v} elements")
                        .note("a tile has at least one element along every dimension")
                        .with_help("use a positive size (any size: edge tiles may be partial)"))
            else:
                diag = (tcx.err(T.NEGATIVE_DIM, f"a tensor dimension cannot be negative, but this one is {v}",
                                x.span, f"{v} elements")
                        .note("a tensor has 0 or more elements along each dimension"))
                diag = diag.with_help(_inferred_dim_help(cx, dims) if v == -1 and cx.name == "reshape"
                                      else "use a dimension of 0 or more")
            tcx.emit(diag)
            return None
    if need_const:
        elems = e.elems if isinstance(e, ast.ArrayExpr) else [e] * len(dims)
        for d, x in zip(dims, elems, strict=False):
            xt = tcx.program.types.get(x)
            if d is None and (is_poison(xt) or (isinstance(xt, (ScalarT, UntypedFloat)) and not is_intlike(xt))):
                return None  # already reported (E0203: "expected an integer")
            if d is None:
                tcx.emit(tcx.err(T.NOT_CONSTANT, "tile dimension is not a compile-time constant", x.span,
                                 "not constant")
                         .note("every tile dimension is a compile-time constant: a literal, a `const`, "
                               "a const generic, or arithmetic on them")
                         .with_help(_const_generic_help(tcx, cx, x)))
                return None
    return dims


def _const_generic_help(tcx: CheckCx, cx: CallCx, x: ast.Expr) -> str:
    """A run-time tile size made a const generic; spelled out when it is one
    of the function's own scalar parameters (`n: i32`)."""
    info = cx.fx.info
    if isinstance(x, ast.Name) and info is not None and x.ident.name in info.param_names \
            and not info.type_params:
        n = x.ident.name
        g = n.upper() if n.upper() not in info.const_generics and n.upper() != n else f"{n.upper()}_"
        names = [*info.const_generics, g]
        gens = ", ".join(f"const {c}: i32" for c in names)
        return (f"make `{n}` a const generic instead of a parameter: `{info.name}<{gens}>` without "
                f"`{n}: i32`, `{g}` here, and a call gives the values: `{info.name}::<{', '.join(names)}>(..)`")
    src = tcx.snippet(x) or ""
    if info is not None and cx.fx.in_kernel and 0 < len(src) <= 30 and "\n" not in src:
        # a run-time size, `x.shape()[0]` or a local holding one (round 20: the help was "make it a const
        # generic of the kernel", which says nothing of the elements past the run-time size)
        g = next(c for c in ("N", "NMAX", "N_") if c not in info.const_generics)
        gens = ", ".join(f"const {c}: i32" for c in [*info.const_generics, g])
        return (f"a tile's size is fixed when the kernel is compiled: give `{info.name}` a const generic for the "
                f"largest size, `{info.name}<{gens}>`, write `{g}` here, give it at the launch "
                f"(`{info.name}::<..>(..)`), and mask the elements past `{src}`: "
                f"`where(arange::<i32>({g}) < {src}, .., 0)`")
    return "make it a const generic of the kernel"


def axis_forms(tcx: CheckCx, cx: CallCx, x: ast.Expr, rank: int) -> str:
    """`dist.argmin(0)` .. `dist.argmin(1)`: the call as written (method or function), the axes filled in
    (round 14: it was `argmin(t, 0)` for `dist.argmin()`); and the index over every element, which a host
    tensor's `x.argmin()` gives (row-major): the tile reshaped to one axis, `dist.reshape([4 * K]).argmin(0)`
    (a kernel has no whole-tile `argmin`: the help named the axes only)."""
    xty = cx.operand_tys[0] if cx.operand_tys else None
    n = ""
    if isinstance(xty, TileT) and len(xty.shape) == rank:
        dims = [str(d) for d in xty.shape]
        n = str(math.prod(int(d) for d in dims)) if all(d.isdigit() for d in dims) else " * ".join(dims)
    if isinstance(cx.node, ast.MethodCall):
        t = tcx.receiver_snippet(x)
        flat = f"`{t}.reshape([{n}]).{cx.name}(0)`"
        axes = f"give the axis: `{t}.{cx.name}(0)` .. `{t}.{cx.name}({rank - 1})`"
    else:
        t = tcx.snippet(x)
        flat = f"`{cx.name}({t}.reshape([{n}]), 0)`"
        axes = f"give the axis: `{cx.name}({t}, 0)` .. `{cx.name}({t}, {rank - 1})`"
    return f"{axes}; over all its elements (a row-major index), {flat}" if n and len(t) < 40 else axes


def _flat_size(cx: CallCx) -> str | None:
    """The element count of `reshape`'s receiver as a dimension to write: a number, or the product of its
    dimensions as written (`B * 4`); None where a dimension is `?`."""
    src = deref(cx.recv_ty) if cx.recv_ty is not None else None
    if not isinstance(src, (TensorT, TileT)) or not src.shape or any(d is None for d in src.shape):
        return None
    shape = const_shape(src.shape)
    if shape is not None:
        return str(math.prod(shape))  # type: ignore[arg-type]
    return " * ".join(str(d) if isinstance(d, int) or d.is_const or d.as_symbol() else f"({d})" for d in src.shape)
