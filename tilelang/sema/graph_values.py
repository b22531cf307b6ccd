"""W0011 `graph_kept_value`: a variable a `graph { .. }` recorded, assigned afterwards while the graph replays.

A recording keeps its launches' arguments as they were when it was made, as a CUDA graph keeps its kernels'
parameters: after `let g = graph { add(z.partition([4]), step); };`, an assignment `step = 2.0;` does not
change what `g.replay()` runs (the reference, `replay`). Round 23's user counted the steps of a loop that way
and every replay added the first step. A `let mut` number read by a kernel call inside a graph (an argument,
or a partition's tile size), assigned after the graph in a function that replays that graph, is reported at
the assignment; tensors are not (a replay reads their memory as it is then).

`graph_kept_values(program, decl, sources)` gives the warnings of one function; `lints._Linter` emits them
under the lint's name.
"""

from __future__ import annotations

from typing import Any

from tilelang.diagnostics.codes import warnings as W
from tilelang.diagnostics.model import Diagnostic
from tilelang.sema.program import Program, SymbolKind
from tilelang.sema.types import ScalarT, UntypedFloat, UntypedInt
from tilelang.syntax import ast


def graph_kept_values(program: Program, decl: ast.FnDecl, sources: Any = None) -> list[Diagnostic]:
    nodes = list(ast.walk(decl.body))
    found: list[Diagnostic] = []
    for let in nodes:
        if not (isinstance(let, ast.Let) and isinstance(let.value, ast.GraphBlock)
                and isinstance(let.pattern, ast.NamePat)):
            continue
        gsym = program.symbol_of(let.pattern)
        after = let.span.end
        replays = [n for n in nodes if isinstance(n, ast.MethodCall) and n.method.name == "replay"
                   and isinstance(n.receiver, ast.Name) and program.symbol_of(n.receiver) is gsym
                   and n.span.start > after] if gsym is not None else []
        if not replays:
            continue
        kept: dict[int, ast.Name] = {}  # the recorded numbers: symbol -> its first read in the graph
        for n in ast.walk(let.value.body):
            if isinstance(n, ast.Name):
                sym = program.symbol_of(n)
                if sym is not None and sym.kind is SymbolKind.LOCAL and sym.mutable \
                        and isinstance(sym.ty, (ScalarT, UntypedInt, UntypedFloat)):
                    kept.setdefault(id(sym), n)
        reported: set[int] = set()
        loops = [n for n in nodes if isinstance(n, (ast.For, ast.While)) and n.span.start > after]
        for a in nodes:
            if not (isinstance(a, ast.Assign) and isinstance(a.target, ast.Name) and a.span.start > after):
                continue
            sym = program.symbol_of(a.target)
            if sym is None or id(sym) not in kept or id(sym) in reported \
                    or not any(_replayed_after(a, r, loops) for r in replays):
                continue
            reported.add(id(sym))
            name, g = a.target.ident.name, let.pattern.name.name
            found.append(
                Diagnostic.warning(W.GRAPH_KEPT_VALUE,
                                   f"`{name}` is assigned after graph `{g}` recorded it: `{g}.replay()` keeps the "
                                   "value it had then")
                .primary(a.span, f"not seen by `{g}`'s replays")
                .secondary(kept[id(sym)].span, f"recorded here, with `{name}`'s value at the `graph {{ .. }}`")
                .note("a recording keeps its launches' numbers, tile shapes and generics, as a CUDA graph keeps its "
                      "kernels' parameters; it reads its tensors' memory as it is at each replay")
                .with_help(f"for a value that changes between replays, keep it in a tensor the kernel loads (`let mut "
                           f"{name}_t = full::<..>([1], {name});` passed as `&{name}_t`, written in place between "
                           f"replays: `{name}_t *= 0.0; {name}_t += v;`), or record the graph again after the "
                           "assignment"))
    return found


def _replayed_after(a: ast.Assign, r: ast.MethodCall, loops: list[Any]) -> bool:
    """Whether replay `r` may run after assignment `a`: later in the text, or in a loop around both."""
    def inside(loop: Any, n: Any) -> bool:
        return loop.span.start <= n.span.start and n.span.end <= loop.span.end

    return r.span.start > a.span.start or any(inside(lp, a) and inside(lp, r) for lp in loops)
