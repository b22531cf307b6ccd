"""W0012 `atomic_past_edge` (round 24, huser25): an `unsafe` atomic or `store_unchecked` of a tile at a constant
index of a `&` tensor whose declared shape is constant, where the tile runs past the tensor's edge in every launch.

A user's global maximum, `atomic_max(&best, [0], v)` with `v` a block's [256] tile and `best: &Tensor<f32, [1]>`,
is the reference's rule at work (a tile value updates a tile at that offset, elements past the edge are dropped),
so 255 of each block's values were dropped and `best` held the maximum of the blocks' first elements, silently
(`--sanitize` too: a tile that starts inside is the edge rule). The tile was meant reduced first, `v.max(0)`.
The warning is for an overhang sure to happen: the tensor's declared dimensions and the index are constants, and
the tile's dimensions constants or const generics every launch of the kernel in the program fixes (a generic
no launch here fixes is not judged)."""

from __future__ import annotations

from typing import Any

from tilelang.diagnostics.codes import warnings as W
from tilelang.diagnostics.model import Diagnostic
from tilelang.sema.program import Program, SymbolKind
from tilelang.sema.typeops import deref
from tilelang.sema.types import Dim, TensorT, TileT, eval_dim
from tilelang.syntax import ast

_REDUCE = {"atomic_add": "sum", "atomic_max": "max", "atomic_min": "min", "store_unchecked": None}


def atomic_overhangs(program: Program, decl: ast.FnDecl) -> list[Diagnostic]:
    """W0012 for each atomic (or `store_unchecked`) of kernel `decl` whose tile runs past its tensor's edge."""
    sites = [s for n in ast.walk(decl.body) if (s := _site(program, n)) is not None]
    if not sites:
        return []
    envs = _launch_envs(program, decl)
    out = []
    for call, name, tensor, shape, index, tile in sites:
        generics = set().union(*(d.symbols() for d in tile))
        runs = [{}] if not generics else [e for e in envs if generics <= set(e)]  # (a launch fixing them)
        worst = None
        for env in runs:
            dims = [eval_dim(d, env) for d in tile]
            over = [i for i, (at, t, n) in enumerate(zip(index, dims, shape, strict=True)) if at + t > n]
            if over:
                worst = (dims, over)
                break
        if worst is None:
            continue
        dims, over = worst
        inside = 1
        for at, t, n in zip(index, dims, shape, strict=True):
            inside *= max(0, min(t, n - at))
        total = 1
        for t in dims:
            total *= t
        shown = ", ".join(map(str, dims))
        d = (Diagnostic.warning(W.ATOMIC_PAST_EDGE,
                                f"`{name}` of a [{shown}] tile at [{', '.join(map(str, index))}] of `{tensor}`, a "
                                f"tensor of [{', '.join(map(str, shape))}]: {total - inside} of its {total} elements "
                                "fall past the edge and are dropped, in every launch")
             .primary(call.args[2].value.span, f"a [{shown}] tile")
             .note("a tile value updates the tile of its shape at the index, element by element; the elements "
                   "past the tensor's edge are dropped"))
        red = _REDUCE[name]
        if red is not None and inside == 1:
            value = call.args[2].value
            axes = "".join(f".{red}({a})" for a in reversed(range(len(dims))))
            what = {"sum": "add the tile's sum", "max": "keep only the tile's largest value",
                    "min": "keep only the tile's smallest value"}[red]
            d = d.with_help(f"to {what}, reduce it first: `{name}(&{tensor}, "
                            f"[{', '.join(map(str, index))}], {_operand(value)}{axes})`")
        else:
            d = d.with_help(f"declare `{tensor}` with room for the tile, or write a tile of the shape that fits")
        out.append(d)
    return out


def _site(program: Program, n: Any) -> tuple[Any, str, str, list[int], list[int], list[Dim]] | None:
    if not (isinstance(n, ast.Call) and isinstance(n.callee, ast.Name) and n.callee.ident.name in _REDUCE
            and len(n.args) == 3):
        return None
    sym = program.symbol_of(n.callee)
    if sym is not None and sym.kind is not SymbolKind.BUILTIN:
        return None
    target, index, value = (a.value for a in n.args)
    if isinstance(target, ast.Ref):
        target = target.expr
    tsym = program.symbol_of(target) if isinstance(target, ast.Name) else None
    tty = deref(tsym.ty) if tsym is not None and tsym.ty is not None else None
    vty = program.type_of(value)
    if not isinstance(tty, TensorT) or tty.shape is None or not isinstance(vty, TileT) \
            or not isinstance(index, ast.ArrayExpr) or len(index.elems) != len(tty.shape) \
            or len(vty.shape) != len(tty.shape):
        return None
    shape = [d.const_value if isinstance(d, Dim) else None for d in tty.shape]
    at = [e.value if isinstance(e, ast.IntLit) else None for e in index.elems]
    if any(v is None for v in (*shape, *at)) or any(v < 0 for v in at):  # type: ignore[operator]
        return None
    tile = [d if isinstance(d, Dim) else Dim.const(d) for d in vty.shape]
    return n, n.callee.ident.name, target.ident.name, shape, at, tile  # type: ignore[return-value]


def _launch_envs(program: Program, decl: ast.FnDecl) -> list[dict[str, int]]:
    """The constant const generics of every launch of kernel `decl` in the program (one dict a launch)."""
    envs = []
    for mod in program.modules.values():
        for item in mod.ast.items:
            if not isinstance(item, ast.FnDecl):
                continue
            for c in ast.walk(item.body):
                info = program.callee_of(c) if isinstance(c, ast.Call) else None
                if info is None or info.decl is not decl:
                    continue
                inst = program.instantiations.get(c, {})
                envs.append({k: v for k, v in inst.items() if isinstance(v, int) and not isinstance(v, bool)})
    return envs


def _operand(e: Any) -> str:
    return e.ident.name if isinstance(e, ast.Name) else "t"
