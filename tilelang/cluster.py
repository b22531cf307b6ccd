"""Where a kernel's cluster exchanges `let p = cluster_gather(x);` are, read
off the syntax: one reading for the checker (`ownership/cluster.py`) and
the interpreter's tests. A well-placed exchange is the whole initializer of
a `let` that is a statement of the kernel's own body (not in a loop, a
branch, a block or a device function), so every block of a cluster runs
each exchange exactly once and in the same order.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tilelang.syntax import ast

NAME = "cluster_gather"
# blocks a cluster may hold where every GPU places it (CUDA's portable size)
MAX_CLUSTER_BLOCKS = 8


def is_call(e: object) -> bool:
    return isinstance(e, ast.Call) and isinstance(e.callee, ast.Name) and e.callee.ident.name == NAME


def placed(decl: ast.FnDecl) -> list[ast.Call]:
    """The well-placed exchanges of kernel `decl`, in order."""
    out = []
    for st in decl.body.stmts:
        if isinstance(st, ast.Let) and is_call(st.value):
            assert isinstance(st.value, ast.Call)
            out.append(st.value)
    return out


def shape_of(decl: ast.FnDecl, generics: Mapping[str, Any] | None = None) -> tuple[int, int, int] | None:
    """The kernel's `#[cluster(x, y, z)]` padded with 1s, a const generic
    dimension read from `generics` (an instance's values); None where the
    kernel has none (or one the type checker refused, or a generic without
    a value)."""
    for attr in decl.attrs:
        if attr.name.name == "cluster":
            vals: list[int] = []
            for a in attr.args:
                if a.name is None and isinstance(a.value, ast.IntLit):
                    vals.append(a.value.value)
                elif a.name is None and isinstance(a.value, ast.Name) and generics is not None \
                        and isinstance(generics.get(a.value.ident.name), int):
                    vals.append(int(generics[a.value.ident.name]))
                else:
                    return None
            if not 1 <= len(vals) <= 3 or min(vals) <= 0:
                return None
            x, y, z = (*vals, 1, 1)[:3]
            return x, y, z
    return None


def uses(decl: ast.FnDecl) -> bool:
    return any(is_call(n) for n in ast.walk(decl.body))
