"""Where a kernel's `if last_block(axis) { .. }` is and which tensors its group owns.

Pure questions about the syntax of one kernel, shared by the ownership
checker (`ownership/combine.py`), the lowering (`ir/lower/kernel.py`) and the
launch (`runtime/launch.py`), so the three agree on one reading:

- `region(decl)`: the `if` that ends the kernel's body (its tail, or its last
  statement) when its condition is exactly `last_block(<literal axis>)` and it
  has no `else`; with the axis. Anything else is not a region (the checker
  reports every other `last_block`).
- `group_params(decl)`: the `&mut` parameters the region names other than as
  the receiver of `.group()`: tiles owned by the group, one a group (their
  partition's grid is the launch grid with 1 along the axis), written only by
  the block that arrives last.
"""

from __future__ import annotations

from tilelang.syntax import ast


def region(decl: ast.FnDecl) -> tuple[ast.If, int] | None:
    body = decl.body
    last: ast.Expr | None = body.tail
    if last is None and body.stmts and isinstance(body.stmts[-1], ast.ExprStmt):
        last = body.stmts[-1].expr
    if isinstance(last, ast.If) and last.else_ is None:
        axis = axis_of(last.cond)
        if axis is not None:
            return last, axis
    return None


def axis_of(cond: ast.Expr) -> int | None:
    """The axis of a condition that is exactly `last_block(<literal 0..2>)`."""
    if isinstance(cond, ast.Call) and isinstance(cond.callee, ast.Name) \
            and cond.callee.ident.name == "last_block" and len(cond.args) == 1 \
            and isinstance(cond.args[0].value, ast.IntLit) and 0 <= cond.args[0].value.value < 3:
        return cond.args[0].value.value
    return None


def mut_params(decl: ast.FnDecl) -> dict[str, ast.Param]:
    return {p.name.name: p for p in decl.params if isinstance(p.ty, ast.RefType) and p.ty.mutable}


def receiver_names(e: ast.Expr) -> list[ast.Name]:
    """The names a `.group()` receiver may be: itself, a block's value, either arm of an `if`, a `&` of one
    (round 27: `{ part }.group()` counted `part` as named in the region, so the region was refused, E0411)."""
    match e:
        case ast.Name():
            return [e]
        case ast.Ref(expr=x):
            return receiver_names(x)
        case ast.UnsafeBlock(body=b):
            return receiver_names(b)
        case ast.Block(tail=t):
            return receiver_names(t) if t is not None else []
        case ast.If(then=t, else_=els):
            return receiver_names(t) + (receiver_names(els) if els is not None else [])
    return []


def group_reads(then: ast.Block) -> set[int]:
    """ids of the `Name` receivers of `.group()` calls in the region (through blocks and `if`s)."""
    return {id(x) for n in ast.walk(then) if isinstance(n, ast.MethodCall) and n.method.name == "group"
            for x in receiver_names(n.receiver)}


def group_params(decl: ast.FnDecl) -> dict[str, int]:
    """The group's own `&mut` parameters, by name, with the grouped axis."""
    found = region(decl)
    if found is None:
        return {}
    node, axis = found
    muts = mut_params(decl)
    reads = group_reads(node.then)
    return {n.ident.name: axis for n in ast.walk(node.then)
            if isinstance(n, ast.Name) and n.ident.name in muts and id(n) not in reads}
