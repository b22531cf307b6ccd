"""The rules of the cluster exchange `let p = cluster_gather(x);` (E0415).

In a `#[cluster(..)]` kernel the blocks of one thread-block cluster run at
once; `cluster_gather(x)` gives every block of the cluster the `x` of every
other, through a cluster barrier that each block must reach (a block that
never arrives leaves the others waiting forever, on the GPU a hang). The
exchange is a read-only copy: nothing a block writes is shared, so it adds
no write to prove disjoint (each block still stores only its own tiles).
This pass proves that every block of a cluster reaches each exchange exactly
once, in the same order, or refuses the kernel:

  - the exchange is the whole initializer of a `let` that is a statement of
    the kernel's own body (`tilelang/cluster.py`): not inside a loop, an
    `if`, a block, another expression or a device function (the type checker
    refuses those: only a kernel's body knows its cluster);
  - no `return` anywhere in such a kernel (a block that returned before an
    exchange would never arrive; one that returned after it would leave its
    shared memory while others still read it);
  - no tile queue (`for s in queue(axis)`) or walk (`tiles(axis)`): the
    blocks of a row take a number of tiles the device decides.

Entry point: `check_clusters(view, sink)`. Never raises on a well-typed program.
"""

from __future__ import annotations

from tilelang.cluster import is_call, placed, uses
from tilelang.diagnostics.codes import kernel as codes
from tilelang.diagnostics.model import Diagnostic, DiagnosticSink
from tilelang.ownership.env import ProgramView
from tilelang.ownership.placement import OnceSink
from tilelang.share_queue import NAME as QUEUE
from tilelang.share_queue import is_call as is_queue
from tilelang.share_queue import kind_of
from tilelang.syntax import ast

_NOTE = ("every block of a cluster must run each exchange exactly once, in the same order: a block that "
         "skips one leaves the others of its cluster waiting at its barrier forever")


def check_clusters(view: ProgramView, sink: DiagnosticSink) -> None:
    emit = OnceSink(sink)
    for info in view.kernels():
        decl = info.decl
        if not uses(decl):
            _walk_without_exchange(decl, emit)
            continue
        ok = {id(c) for c in placed(decl)}
        first: ast.Call | None = None
        for n in ast.walk(decl.body):
            if is_call(n) and id(n) in ok:
                first = first or n
            elif is_call(n) and (inside := _enclosing_let(decl, n)) is not None:
                # (round 27: `let all = cluster_gather(mine).sum(0);` was told that not every block is sure
                # to reach it, which a statement of the body is; what is wrong is the expression around it)
                arg = n.args[0].value if len(n.args) == 1 else None
                x = arg.ident.name if isinstance(arg, ast.Name) else "x"
                name = inside.pattern.name.name if isinstance(inside.pattern, ast.NamePat) else ".."
                emit(Diagnostic.error(codes.CLUSTER_PLACEMENT,
                                      "`cluster_gather` is only allowed as the whole initializer of a `let` "
                                      "in the kernel's own body")
                     .primary(n.span, "the exchange is part of a larger expression here")
                     .note("the exchange is a barrier every block of the cluster meets; the checker places it "
                           "where it is a `let` of its own")
                     .with_help(f"give it a `let` of its own, `let parts = cluster_gather({x});`, and compute "
                                f"`{name}` from `parts` in the next statement (this initializer with `parts` in "
                                "place of the call)"))
            elif is_call(n):
                emit(Diagnostic.error(codes.CLUSTER_PLACEMENT,
                                      "`cluster_gather` is only allowed as the whole initializer of a `let` "
                                      "in the kernel's own body")
                     .primary(n.span, "here not every block of the cluster is sure to reach it once")
                     .note(_NOTE)
                     .with_help("write `let parts = cluster_gather(x);` as a statement of the kernel's body "
                                "(outside loops and branches), and branch on its result afterwards"))
        where = first.span if first is not None else None
        for n in ast.walk(decl.body):
            if isinstance(n, ast.Return):
                d = (Diagnostic.error(codes.CLUSTER_PLACEMENT, "`return` in a kernel with a cluster exchange")
                     .primary(n.span, "a block that returns here leaves its cluster's exchange"))
                if where is not None:
                    d = d.secondary(where, "every block of the cluster must arrive here")
                emit(d.note(_NOTE + "; and no block may leave while the others still read its shared memory")
                     .with_help("skip work with `if` instead of returning"))
            elif is_queue(n):
                noun, why = (("tile queue", "the blocks of a queue pull as many tiles as the device decides")
                             if kind_of(n) == QUEUE else
                             ("tile walk", "how many tiles a block takes follows from how many blocks the device runs"))
                emit(Diagnostic.error(codes.CLUSTER_PLACEMENT, f"a {noun} in a kernel with a cluster exchange")
                     .primary(n.span, why)
                     .with_help(f"use the cluster exchange in a kernel without a {noun} (`{kind_of(n)}`), or "
                                f"do the {noun}'s work in a second launch"))


def _enclosing_let(decl: ast.FnDecl, call: ast.Call) -> ast.Let | None:
    """The `let` statement of the kernel's own body whose initializer holds `call` inside a larger expression
    (no loop, branch or block between them), or None."""
    for st in decl.body.stmts:
        if not (isinstance(st, ast.Let) and st.value is not None and st.value is not call):
            continue
        if st.value.span.file == call.span.file and st.value.span.start <= call.span.start \
                and call.span.end <= st.value.span.end:
            between = [m for m in ast.walk(st.value) if isinstance(m, (ast.If, ast.Block, ast.For, ast.While))]
            return None if between else st
    return None


def _walk_without_exchange(decl: ast.FnDecl, emit: OnceSink) -> None:
    """A `#[cluster(..)]` kernel with no exchange and a tile queue or walk (hrev22): the device launches one
    wave of blocks a row along the walk's axis (as many as fill the card), no whole number of clusters, which
    a GPU refuses at the launch; and the attribute keeps nothing there (no block exchanges)."""
    if not any(a.name.name == "cluster" for a in decl.attrs):
        return
    for n in ast.walk(decl.body):
        if is_queue(n):
            noun = "tile queue" if kind_of(n) == QUEUE else "tile walk"
            emit(Diagnostic.error(codes.CLUSTER_PLACEMENT, f"a {noun} in a `#[cluster(..)]` kernel")
                 .primary(n.span, "along its axis the device launches one wave of blocks a row, no whole number "
                          "of clusters")
                 .with_help(f"remove `#[cluster(..)]` (this kernel exchanges nothing over its cluster), or do the "
                            f"{noun}'s work in a kernel without one"))
