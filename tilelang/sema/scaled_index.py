"""W0009 `scaled_tile_index`: a tile index multiplied by the tile's own size along that axis.

A tile index counts tiles: `p = x.partition([1, P, D]); p.load([h, page, 0])` reads the `page`-th tile of
`P` rows, rows `page * P ..`. A CUDA or Triton programmer computes the element offset instead and writes
`p.load([h, page * P, 0])`, which reads tile `page * P`, rows `page * P * P ..`: past the wanted rows, or
past the tensor's edge, where the load reads zeros without a word (round 18, a paged KV cache's pages). An
index element `i * T` or `T * i`, where `T` is written as the partition's tile dimension on that axis (the
same name, or the same literal) and that dimension is not 1, is reported; `i` is the tile index.

`scaled_tile_indices(program, decl, sources)` gives the warnings of one function or kernel; `lints._Linter`
emits them under the lint's name.
"""

from __future__ import annotations

from typing import Any

from tilelang.diagnostics.codes import warnings as W
from tilelang.diagnostics.model import Diagnostic
from tilelang.sema.program import Program
from tilelang.sema.realign import _bindings
from tilelang.syntax import ast

#: the methods of a partition that take a tile index
_INDEXED = frozenset(("load", "load_padded", "store", "prefetch"))


def _same(a: Any, b: Any) -> bool:
    """`a` and `b` are written as one value: the same name, or equal integer literals."""
    if isinstance(a, ast.Name) and isinstance(b, ast.Name):
        return a.ident.name == b.ident.name
    return isinstance(a, ast.IntLit) and isinstance(b, ast.IntLit) and a.value == b.value


def _text(sources: Any, node: Any) -> str | None:
    try:
        return sources.snippet(node.span) if sources is not None else None
    except Exception:  # noqa: BLE001 - no text: no quoted fix
        return None


def scaled_tile_indices(program: Program, decl: ast.FnDecl, sources: Any = None) -> list[Diagnostic]:
    lets = _bindings(program, decl)
    found: list[Diagnostic] = []
    for n in ast.walk(decl.body):
        if not (isinstance(n, ast.MethodCall) and n.method.name in _INDEXED and n.args):
            continue
        recv = n.receiver
        if isinstance(recv, ast.Name):
            sym = program.symbol_of(recv)
            recv = lets.get(id(sym), recv) if sym is not None else recv
        if not (isinstance(recv, ast.MethodCall) and recv.method.name == "partition" and recv.args
                and isinstance(recv.args[0].value, ast.ArrayExpr)):
            continue
        dims = recv.args[0].value.elems
        index = n.args[0 if n.method.name != "store" else 1].value if n.method.name != "store" or \
            len(n.args) > 1 else None
        if not isinstance(index, ast.ArrayExpr) or len(index.elems) != len(dims):
            continue
        for axis, (ie, dim) in enumerate(zip(index.elems, dims, strict=True)):
            if isinstance(dim, ast.IntLit) and dim.value == 1:
                continue
            if not (isinstance(ie, ast.Binary) and ie.op == "*"):
                continue
            tile = ie.lhs if _same(ie.rhs, dim) else ie.rhs if _same(ie.lhs, dim) else None
            if tile is None:
                continue
            size, idx = _text(sources, dim) or "T", _text(sources, tile)
            d = (Diagnostic.warning(
                W.SCALED_TILE_INDEX, f"tile index `{_text(sources, ie) or 'i * T'}` is multiplied by the tile's "
                f"own size along axis {axis}")
                .primary(ie.span, f"tile {_text(sources, ie) or 'i * T'}, which starts at element "
                         f"{_text(sources, ie) or 'i * T'} * {size}")
                .secondary(dim.span, f"the tiles are {size} long along axis {axis}")
                .note("a tile index counts tiles, not elements: index `i` reads elements `i * T` to `i * T + T - 1`, "
                      "and a tile past the tensor's edge reads zeros"))
            found.append(d.with_help(f"index the tile, not its first element: `{idx}`" if idx else
                                     "index the tile, not its first element"))
    return found
