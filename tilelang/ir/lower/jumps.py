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
    loops nested inside), `return` at any depth.

    Each node's answer is computed once (`_summary`, memoised by node): the
    lowering asks it of every `if` and loop for its whole body, and walking
    the body afresh each time was quadratic in how deep they nest."""
    roots = ([*nodes.stmts, nodes.tail] if isinstance(nodes, ast.Block) else list(nodes))
    for n in roots:
        if n is not None:
            yield from _summary(n, False)


# `_summary`'s memo, by (node, nested): nodes hash by identity. A dict, not `functools.lru_cache`: on
# Python 3.12+ a recursion through the C-level cache wrapper counts against the interpreter's fixed C
# recursion limit, which `sys.setrecursionlimit` does not raise, and a tree at `MAX_NESTING` passed it
# (a RecursionError ICE). Emptied when it holds 65,536 summaries (as the cache was bounded).
_SUMMARIES: dict[tuple[Any, bool], tuple[str, ...]] = {}


def _summary(n: Any, nested: bool) -> tuple[str, ...]:
    got = _SUMMARIES.get((n, nested))
    if got is not None:
        return got
    if len(_SUMMARIES) >= 1 << 16:
        _SUMMARIES.clear()
    got = _summary_of(n, nested)
    _SUMMARIES[(n, nested)] = got
    return got


def _summary_of(n: Any, nested: bool) -> tuple[str, ...]:
    own: tuple[str, ...] = ()
    match n:
        case ast.Assign(target=ast.Name(ident=ident)):
            own = (ident.name,)
        case ast.Break() if not nested:
            own = (BRK,)
        case ast.Continue() if not nested:
            own = (CONT,)
        case ast.Return():
            own = (RET, RETV)
    inner = nested or isinstance(n, (ast.For, ast.While))
    parts = [own]
    for slot in getattr(type(n), "__slots__", ()):
        c = getattr(n, slot, None)
        if isinstance(c, tuple):
            parts.extend(_summary(x, inner) for x in c if _is_node(x))
        elif _is_node(c):
            parts.append(_summary(c, inner))
    return tuple(name for part in parts for name in part)


def assigned_names(nodes: Any) -> Iterator[str]:
    return _walk_jumps(nodes)


def jump_flags(nodes: Any) -> set[str]:
    """The jump flags (`BRK`, `CONT`, `RET`) that `nodes` may set."""
    return {n for n in _walk_jumps(nodes) if n in (BRK, CONT, RET)}


def _is_node(x: Any) -> bool:
    return hasattr(x, "span") and type(x).__module__ == ast.__name__
