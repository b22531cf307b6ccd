"""W0006 `padded_extremum` (round 12, huser12): a launch whose tiles stick
out past a tensor's edge, of a kernel that takes a maximum or minimum along
that axis of a tile read there with zero padding.

A user's first row maximum reads `x.partition([1, BN]).load([r, 0])` of an
`x: &Tensor<f32, [?, ?]>` with rows of 50 and `BN` = 64, then `t.max(1)`:
the 14 zeros read past each row's end take part, and a row of negatives has
the maximum 0, silently. The reference's answer is `load_padded(idx,
f32::NEG_INFINITY)`. A kernel's padded reads (`padded_reads`) are
`max`/`min`/`argmax`/`argmin` (method or function, a literal axis) whose
tile is, through immutable `let`s and casts, a `load(..)` of a partition of
a tensor parameter or a `load_like(..)` of one, along an axis the parameter
declares `?` and the tile is not 1 wide. `padded_launch` warns at a launch
where that axis's length and the tile's size there are constants and the
length is not a multiple of the tile (a tile sticks out);
`padded_through_host` (round 13) at a call of a host function that launches
the kernel with a tensor the call gives it, where the function's parameter
leaves the length to its caller and the call's tensor has a constant one. A
`?` tile that always fits, and launches whose shapes are known only at run
time, are not warned about: the warning is for a mistake that is sure to be
one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tilelang.diagnostics.codes import warnings as W
from tilelang.diagnostics.model import Diagnostic
from tilelang.dtypes import DType
from tilelang.sema.program import FnInfo, Program, SymbolKind
from tilelang.sema.typeops import deref
from tilelang.sema.types import Dim, TensorT
from tilelang.syntax import ast

_EXTREMA = {"max": "maximum", "min": "minimum", "argmax": "maximum", "argmin": "minimum"}


@dataclass(frozen=True, slots=True)
class PaddedRead:
    name: str  # the reduction: max, min, argmax, argmin
    span: Any  # its name's span
    axis: int
    load: ast.MethodCall  # the zero-padded read
    tensor: str  # the tensor parameter it reads
    tile_dim: Any  # the tile's size along `axis`: an expression of the kernel's (a literal, a generic's name)
    elem: Any  # the tensor's element type


def padded_reads(program: Program, decl: ast.FnDecl) -> list[PaddedRead]:
    lets: dict[int, ast.Expr] = {}
    nodes = list(ast.walk(decl.body))
    for n in nodes:
        if isinstance(n, ast.Let) and isinstance(n.pattern, ast.NamePat) and not n.pattern.mutable \
                and n.value is not None:
            sym = program.symbol_of(n.pattern)
            if sym is not None:
                lets[id(sym)] = n.value
    params = {p.name.name: p for p in decl.params}
    out = []
    for n in nodes:
        red = _reduction(program, n)
        if red is not None:
            found = _padded_read(program, red[1], red[2], lets, params)
            if found is not None:
                out.append(PaddedRead(red[0], red[3], red[2], *found))
    return out


def padded_launch(program: Program, call: ast.Call, info: FnInfo, reads: list[PaddedRead],
                  sources: Any) -> list[Diagnostic]:
    """W0006 at `call` (a launch of `info`) for each padded read whose tiles stick out in it."""
    inst = program.instantiations.get(call, {})
    names = [p.name.name for p in info.decl.params]
    out = []
    for r in reads:
        if r.tensor not in names or names.index(r.tensor) >= len(call.args):
            continue
        arg = call.args[names.index(r.tensor)].value
        n = _length(program, arg, r.axis)
        size = _const(r.tile_dim, inst, program)
        if n is None or size is None or size <= 1 or n % size == 0:
            continue
        out.append(_warning(info, r, arg, n, size, sources))
    return out


def padded_through_host(program: Program, call: ast.Call, fn: FnInfo, reads_of: Any, sources: Any,
                        depth: int = 0, env: dict[int, ast.Expr] | None = None) -> list[Diagnostic]:
    """W0006 at `call`, a call of the host function `fn`, for each launch in
    `fn` (or in the host functions it calls with these tensors, 3 deep) of a
    kernel whose padded read takes a tensor `fn` was given here, where `fn`'s
    parameter leaves the length to its caller (`?` or a generic) and this
    call's argument has a constant one: `row_max(&mut m, &x)` of a
    `fn row_max(.., x: &Tensor<f32, [?, ?]>)` that launches `rmax::<64>`
    with `x`, and `x` is [30, 50] here. `reads_of(info)`: a kernel's padded
    reads, or None where a function allows the lint. The primary label is at the
    argument (where the length comes from), the launch a secondary one."""
    if reads_of(fn) is None:  # the helper allows the lint
        return []
    here: dict[int, ast.Expr] = {}  # fn's parameters (by symbol) -> the tensors this call gives them
    for p, a in zip(fn.decl.params, call.args, strict=False):
        sym = program.symbol_of(p)
        given = a.value if env is None else env.get(_var(program, a.value))
        if sym is not None and given is not None:
            here[id(sym)] = given
    if not here:
        return []
    out: list[Diagnostic] = []
    for n in ast.walk(fn.decl.body):
        callee = program.callee_of(n) if isinstance(n, ast.Call) else None
        if callee is None:
            continue
        if not callee.is_kernel:
            if depth < 2 and not callee.decl.is_kernel and callee is not fn:
                out += padded_through_host(program, n, callee, reads_of, sources, depth + 1, here)
            continue
        reads = reads_of(callee)
        if not reads:
            continue
        inst = program.instantiations.get(n, {})
        names = [p.name.name for p in callee.decl.params]
        for r in reads:
            if r.tensor not in names or names.index(r.tensor) >= len(n.args):
                continue
            launched = n.args[names.index(r.tensor)].value
            given = here.get(_var(program, launched))
            if given is None or _length(program, launched, r.axis) is not None:
                continue  # not a tensor of this call's, or a length the launch itself warns about
            length = _length(program, given, r.axis)
            size = _const(r.tile_dim, inst, program)
            if size is None:  # `rmax::<B>(..)` with `B` a generic of `fn`: this call's value of it
                size = _turbofish_const(n, callee, r.tile_dim, program.instantiations.get(call, {}))
            if length is None or size is None or size <= 1 or length % size == 0:
                continue
            out.append(_warning(callee, r, given, length, size, sources)
                       .secondary(launched.span, f"`{fn.name}` launches `{callee.name}` with it here"))
    return out


def _turbofish_const(launch: ast.Call, kernel: FnInfo, dim: Any, outer: dict[str, Any]) -> int | None:
    """The value of the kernel's generic `dim` (a name) that the launch's
    turbofish gives as a literal or as a generic of the calling function,
    whose value `outer` (that function's call's instantiation) holds."""
    if not isinstance(dim, ast.Name):
        return None
    names = [g.name.name for g in kernel.decl.generics]
    if dim.ident.name not in names or names.index(dim.ident.name) >= len(launch.generics):
        return None
    arg = launch.generics[names.index(dim.ident.name)]
    if isinstance(arg, ast.IntLit):
        return arg.value
    name = arg.name.name if isinstance(arg, ast.NamedType) and not arg.args else \
        arg.ident.name if isinstance(arg, ast.Name) else None
    v = outer.get(name) if name is not None else None
    if isinstance(v, Dim):
        v = v.const_value
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _var(program: Program, e: ast.Expr) -> int:
    """The variable `e` is (through `&`/`&mut`), by its symbol's id; 0 for anything else."""
    while isinstance(e, ast.Ref):
        e = e.expr
    sym = program.symbol_of(e) if isinstance(e, ast.Name) else None
    return id(sym) if sym is not None else 0


def _length(program: Program, arg: ast.Expr, axis: int) -> int | None:
    """The constant length of the tensor `arg` along `axis`, or None."""
    t = deref(program.types.get(arg))
    n = t.shape[axis] if isinstance(t, TensorT) and t.shape is not None and axis < len(t.shape) else None
    return n.const_value if isinstance(n, Dim) and n.is_const else None


def _warning(info: FnInfo, r: PaddedRead, arg: ast.Expr, n: int, size: int, sources: Any) -> Diagnostic:
    pad = _never_wins(r.elem, r.name)
    given = sources.snippet(arg.span).lstrip("&").strip() if sources is not None else r.tensor
    given = given if given.isidentifier() else r.tensor
    where = f"`{given}`" + ("" if given == r.tensor else f" (the kernel's `{r.tensor}`)")
    code = (f"`{sources.snippet(r.load.receiver.span)}.load_padded({sources.snippet(r.load.args[0].span)}, "
            f"{pad})`" if r.load.method.name == "load" and pad and sources is not None
            else "`p.load_padded([..], ..)` of a partition `p` of it")
    return (Diagnostic.warning(
        W.PADDED_EXTREMUM, f"`{info.name}` takes a {_EXTREMA[r.name]} of tiles that stick out past the "
        f"edge of {where}, where it reads zeros")
        .primary(arg.span, f"{n} long on axis {r.axis}: not a multiple of the tile's {size}")
        .secondary(r.load.span, "reads zeros where the tile sticks out")
        .secondary(r.span, f"`{r.name}` along axis {r.axis} takes them")
        .note(f"a row of {'negative' if _EXTREMA[r.name] == 'maximum' else 'positive'} values has the "
              f"{_EXTREMA[r.name]} 0 there")
        .with_help(f"read it with a padding that never wins{f' ({pad})' if pad else ''}: {code}"))


def _const(e: Any, inst: dict[str, Any], program: Program) -> int | None:
    if isinstance(e, ast.IntLit):
        return e.value
    if isinstance(e, ast.Name):
        v = inst.get(e.ident.name)
        if isinstance(v, int):
            return v
        sym = program.symbol_of(e)
        c = program.consts.get(sym.qualname if sym is not None and hasattr(sym, "qualname") else e.ident.name)
        return c if isinstance(c, int) and not isinstance(c, bool) else None
    return None


def _reduction(program: Program, n: Any) -> tuple[str, ast.Expr, int, Any] | None:
    """(name, tile, axis, span) of `t.max(axis)` / `max(t, axis)` with a literal axis."""
    if isinstance(n, ast.MethodCall) and n.method.name in _EXTREMA and len(n.args) == 1 \
            and isinstance(n.args[0].value, ast.IntLit):
        return n.method.name, n.receiver, n.args[0].value.value, n.method.span
    if isinstance(n, ast.Call) and isinstance(n.callee, ast.Name) and n.callee.ident.name in _EXTREMA \
            and len(n.args) == 2 and isinstance(n.args[1].value, ast.IntLit):
        sym = program.symbol_of(n.callee)
        if sym is None or sym.kind is SymbolKind.BUILTIN:
            return n.callee.ident.name, n.args[0].value, n.args[1].value.value, n.callee.span
    return None


def _resolve(program: Program, e: ast.Expr, lets: dict[int, ast.Expr]) -> ast.Expr:
    for _ in range(8):
        if isinstance(e, ast.Cast):
            e = e.expr
        elif isinstance(e, ast.Name):
            sym = program.symbol_of(e)
            if sym is None or id(sym) not in lets:
                return e
            e = lets[id(sym)]
        else:
            return e
    return e


def _padded_read(program: Program, tile: ast.Expr, axis: int, lets: dict[int, ast.Expr],
                 params: dict[str, ast.Param]) -> tuple[ast.MethodCall, str, Any, Any] | None:
    """The zero-padded read the tile is, its tensor parameter's name, the tile's size along `axis` and the
    element type, where that tensor's length on `axis` is declared `?`."""
    load = _resolve(program, tile, lets)
    if not isinstance(load, ast.MethodCall) or load.method.name not in ("load", "load_like"):
        return None
    if load.method.name == "load_like":
        if len(load.args) != 1:
            return None
        source = _resolve(program, load.receiver, lets)
        tile_dim = _declared_dim(params, _resolve(program, load.args[0].value, lets), axis)
    else:
        part = _resolve(program, load.receiver, lets)
        if not load.args or not isinstance(part, ast.MethodCall) or part.method.name != "partition" \
                or len(part.args) != 1 or not isinstance(part.args[0].value, ast.ArrayExpr):
            return None  # the own tile (`z.load()`) or a partition held otherwise
        dims = part.args[0].value.elems
        tile_dim = dims[axis] if axis < len(dims) else None
        source = _resolve(program, part.receiver, lets)
    if not isinstance(source, ast.Name) or source.ident.name not in params or tile_dim is None:
        return None
    sym = program.symbol_of(params[source.ident.name])
    t = deref(sym.ty) if sym is not None else None
    if not isinstance(t, TensorT) or t.shape is None or axis >= len(t.shape) or t.shape[axis] is not None:
        return None
    return load, source.ident.name, tile_dim, t.dtype


def _declared_dim(params: dict[str, ast.Param], e: ast.Expr, axis: int) -> Any:
    """The declared tile dimension of a `&mut` parameter named by `e` (a `load_like`'s shape)."""
    if not isinstance(e, ast.Name) or e.ident.name not in params:
        return None
    for n in ast.walk(params[e.ident.name].ty):
        if isinstance(n, ast.ShapeType):
            return n.dims[axis] if axis < len(n.dims) else None
    return None


def _never_wins(elem: Any, name: str) -> str | None:
    if not isinstance(elem, DType) or elem is DType.BOOL:
        return None
    low = _EXTREMA[name] == "maximum"
    if elem.is_float:
        return f"{elem.value}::{'NEG_INFINITY' if low else 'INFINITY'}"
    return f"{elem.value}::{'MIN' if low else 'MAX'}"
