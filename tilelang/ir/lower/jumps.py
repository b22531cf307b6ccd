"""Which variables and jump flags a piece of code may set.

`jumps(nodes)` are the flags (`BRK`, `CONT`, `RET`) a statement list may
set: `break`/`continue` of this loop level only, `return` at any depth;
`assigned_names(nodes)` the variables it may assign, in order. The control
flow lowering carries exactly these through loops and `if`s.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tilelang.ir.lower.values import BRK, CONT, RET, RETV
from tilelang.syntax import ast


def _walk_jumps(nodes: Any) -> Iterator[str]:
    """Names assigned (`x = ..`, `x += ..`) anywhere inside `nodes`, in order,
    plus the flags a jump sets: `break`/`continue` of THIS loop level (not of
    loops nested inside), `return` at any depth."""
    roots = ([*nodes.stmts, nodes.tail] if isinstance(nodes, ast.Block) else list(nodes))
    stack: list[tuple[Any, bool]] = [(n, False) for n in reversed(roots)]
    while stack:
        n, nested = stack.pop()
        if n is None:
            continue
        match n:
            case ast.Assign(target=ast.Name(ident=ident)):
                yield ident.name
            case ast.Break() if not nested:
                yield BRK
            case ast.Continue() if not nested:
                yield CONT
            case ast.Return():
                yield RET
                yield RETV
        inner = nested or isinstance(n, (ast.For, ast.While))
        children: list[Any] = []
        for slot in getattr(type(n), "__slots__", ()):
            c = getattr(n, slot, None)
            if isinstance(c, tuple):
                children.extend(x for x in c if _is_node(x))
            elif _is_node(c):
                children.append(c)
        stack.extend((c, inner) for c in reversed(children))


def assigned_names(nodes: Any) -> Iterator[str]:
    return _walk_jumps(nodes)


def jump_flags(nodes: Any) -> set[str]:
    """The jump flags (`BRK`, `CONT`, `RET`) that `nodes` may set."""
    return {n for n in _walk_jumps(nodes) if n in (BRK, CONT, RET)}


def _is_node(x: Any) -> bool:
    return hasattr(x, "span") and type(x).__module__ == ast.__name__
