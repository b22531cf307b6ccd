"""Where a kernel's `for s in queue(axis) { .. }` (or its static sibling,
`for s in tiles(axis) { .. }`) is, read off the syntax.

The tiles of the kernel's `&mut` partitions along grid axis `axis` form a
queue, one a row (the blocks that differ only along `axis`, as the groups
of `last_block`): the launch runs fewer blocks along the axis than there
are tiles, and each block pulls tile indices until none is left, so a
block that finishes early takes more. Inside the loop the `&mut` tiles are
the pulled tile's (`s` along `axis`, the block's own position on the other
axes); outside it no tile is the block's.

The static walk `tiles(axis)` deals the same tiles out instead: block b of
G along the axis takes tiles b, b + G, b + 2 G, .. (G the launch's blocks
along the axis, one wave as the queue's), so no block waits on a counter
and a block's next tile is known before its current one is done. The rules
that keep its writes disjoint are the queue's (each tile is named only by
`s`, every block walks to the end), so both are one construct here, a
"walk", with a `kind`.

One reading for the checker (`ownership/queue.py`), the lowering
(`ir/lower/control.py`) and the runtime (the launch grid):

- `loop(decl)`: the `for` statement at the top level of the kernel's body
  whose range is exactly `queue(<literal axis>)` or `tiles(<literal axis>)`,
  with the axis (None when there is none, or it stands elsewhere: the
  checker reports that); `kind_of(for_.iter)` says which.
- `axis_of(expr)`: the axis of an expression that is exactly
  `queue(<literal 0..2>)` or `tiles(<literal 0..2>)`.
"""

from __future__ import annotations

from tilelang.syntax import ast

NAME = "queue"  # the tile queue: blocks pull tiles from a row's counter
STATIC = "tiles"  # the static walk: tiles dealt round-robin to the row's blocks
NAMES = (NAME, STATIC)


def is_call(e: object) -> bool:
    return isinstance(e, ast.Call) and isinstance(e.callee, ast.Name) and e.callee.ident.name in NAMES


def kind_of(e: object) -> str:
    """`queue` or `tiles`: which walk the call `e` (`is_call`) is."""
    assert isinstance(e, ast.Call) and isinstance(e.callee, ast.Name)
    return e.callee.ident.name


def axis_of(e: ast.Expr) -> int | None:
    if is_call(e):
        assert isinstance(e, ast.Call)
        if len(e.args) == 1 and isinstance(e.args[0].value, ast.IntLit) and 0 <= e.args[0].value.value < 3:
            return e.args[0].value.value
    return None


def loop(decl: ast.FnDecl) -> tuple[ast.For, int] | None:
    for st in decl.body.stmts:
        if isinstance(st, ast.For):
            axis = axis_of(st.iter)
            if axis is not None:
                return st, axis
    return None
