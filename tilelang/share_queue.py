"""Where a kernel's `for s in queue(axis) { .. }` is, read off the syntax.

The tiles of the kernel's `&mut` partitions along grid axis `axis` form a
queue, one a row (the blocks that differ only along `axis`, as the groups
of `last_block`): the launch runs fewer blocks along the axis than there
are tiles, and each block pulls tile indices until none is left, so a
block that finishes early takes more. Inside the loop the `&mut` tiles are
the pulled tile's (`s` along `axis`, the block's own position on the other
axes); outside it no tile is the block's.

One reading for the checker (`ownership/queue.py`), the lowering
(`ir/lower/control.py`) and the runtime (the launch grid):

- `loop(decl)`: the `for` statement at the top level of the kernel's body
  whose range is exactly `queue(<literal axis>)`, with the axis (None when
  there is none, or it stands elsewhere: the checker reports that).
- `axis_of(expr)`: the axis of an expression that is exactly
  `queue(<literal 0..2>)`.
"""

from __future__ import annotations

from tilelang.syntax import ast

NAME = "queue"


def is_call(e: object) -> bool:
    return isinstance(e, ast.Call) and isinstance(e.callee, ast.Name) and e.callee.ident.name == NAME


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
