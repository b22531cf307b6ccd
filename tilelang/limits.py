"""Size limits every stage shares, so deep or long input fails the same way.

`MAX_NESTING`: the syntax tree of one item may be at most this many levels
deep. Each AST node is a level: a block, a statement, an operator (a chain
`a + b + c` is a left-leaning tree, one level per operator), a unary
operator, a cast, an index, a call, a method call, a field, an `if` (an
`else if` nests inside the `if` before it), a type, a pattern. The parser
enforces it (E0023, at the node that passes the limit) before any other
stage runs, so `tilec check`, `tilec run`, `tilec emit`, the REPL, the
language server and the Python API all report the same located error.

Every later stage walks the tree recursively; `ensure_recursion_budget()`
raises Python's recursion limit once per process so that a tree at the
limit fits with room to spare (`tests/unit/test_limits.py` runs every stage
on trees exactly at the limit, of every kind of node). Python 3.12 also counts
recursion through C (`tuple(<generator>)`, `any(<generator>)`, a
`functools.lru_cache` wrapper) against a fixed limit that no call raises: the
recursive walks build lists or loop instead (3.12's run of that test found
five such places).
"""

from __future__ import annotations

import sys

MAX_NESTING = 1000

# `MAX_RANK`: a shape (a tensor's, a tile's, a type's) or a tile index has at
# most this many dimensions; more is E0217 where it is written (NumPy stops at
# 64, the GPU's layouts long before: 5000 ones made NumPy raise inside the run).
MAX_RANK = 16

# Measured at MAX_NESTING: the deepest stage needs about 5 Python frames per
# level (nested calls and tuples); 20,000 leaves four times that, and is
# also the host evaluator's budget for user functions calling each other
# (past it, E0719 "recursed too deeply", not a crash). At this depth the C
# stack of a default 8 MiB thread is enough (tested in a thread).
RECURSION_LIMIT = 20_000


def ensure_recursion_budget() -> None:
    """Raise Python's recursion limit to `RECURSION_LIMIT` (never lowers it)."""
    if sys.getrecursionlimit() < RECURSION_LIMIT:
        sys.setrecursionlimit(RECURSION_LIMIT)
