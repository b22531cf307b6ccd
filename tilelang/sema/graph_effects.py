"""Host work inside `graph { }` that the recording would run only once.

A `graph { .. }` block records kernel launches; its other host statements
run once, while the block is evaluated, and never on `g.replay()`. The
type checker refuses the ones written in the block itself as it meets them
(`print`, `assert`, `.save_npy()`, an assignment to a tensor: `kernel.
graph_effect`, E0228). This pass, run once every body is typed, refuses
the rest (E0228 too):

  - host computation on tensor data in the block (`a.sum()`, `a.clone()`,
    `a + 1.0`, `a as f16`): it reads the tensor once, at recording, before
    any launch the block records has run, so `let s = a.sum();` after
    `inc(a.partition(..));` is the value from before `inc`, and an `if`
    on it picks the launches the graph replays for ever;
  - a call of a host function whose body (or a host function it calls, to
    any depth) does any of that or any of the block's own refusals: the
    effect is as much a one-off as when written in the block.

`.partition(..)` and `.shape()` read no tensor data and stay allowed, and so
do host functions that only launch kernels.

Entry point: `check_graph_effects(tcx)`. Reads the `Program`'s side tables;
never raises on a typed program.
"""

from __future__ import annotations

from tilelang.diagnostics.codes import types as T
from tilelang.sema.context import CheckCx
from tilelang.sema.program import SymbolKind
from tilelang.sema.types import RefT, TensorT
from tilelang.source import Span
from tilelang.syntax import ast

# What the type checker already refuses when written in a block (sema/calls.py, stmts.py).
_EFFECT_CALLS = frozenset({"print", "assert", "assert_close", "load_npy"})
_EFFECT_METHODS = frozenset({"replay", "save_npy"})
# Tensor methods that read no element: they describe the tensor for a launch.
_NO_DATA_METHODS = frozenset({"partition", "shape"})


def _is_tensor(ty: object) -> bool:
    return isinstance(ty, TensorT) or (isinstance(ty, RefT) and isinstance(ty.inner, TensorT))


class _Scan:
    """One host function body: its first effect, its calls of host
    functions, and (inside its `graph` blocks) what must be refused."""

    def __init__(self, tcx: CheckCx) -> None:
        self.tcx = tcx
        self.first: tuple[Span, str] | None = None  # the body's first effect
        self.calls: list[tuple[str, Span, bool]] = []  # (callee, call span, inside a graph block)
        self.in_graph: list[tuple[Span, str]] = []  # data reads written inside a graph block
        self.reported: list[Span] = []  # effects in a graph block the type checker reported

    def effect(self, span: Span, what: str, graph: bool, lexical: bool) -> None:
        if self.first is None:
            self.first = (span, what)
        if graph and lexical:
            self.reported.append(span)
        elif graph:
            self.in_graph.append((span, what))

    def walk(self, root: object, graph: bool) -> None:
        types = self.tcx.program.types
        for node in ast.walk(root, stop=ast.GraphBlock):
            match node:
                case ast.GraphBlock(body=body) if node is not root:
                    self.walk(body, True)
                case ast.Call(callee=ast.Name(ident=i) as callee):
                    sym = self.tcx.program.symbols.get(callee) or self.tcx.program.symbols.get(node)
                    kind = getattr(sym, "kind", None)
                    if kind is SymbolKind.FN and sym is not None:
                        self.calls.append((sym.qualname or i.name, node.span, graph))
                    elif kind is SymbolKind.BUILTIN and i.name in _EFFECT_CALLS:
                        self.effect(node.span, f"`{i.name}`", graph, lexical=True)
                case ast.MethodCall(receiver=r, method=m):
                    if m.name in _EFFECT_METHODS:
                        self.effect(node.span, f"`.{m.name}()`", graph, lexical=True)
                    elif m.name not in _NO_DATA_METHODS and _is_tensor(types.get(r)):
                        self.effect(node.span, f"`.{m.name}()` of a tensor", graph, lexical=False)
                case ast.Binary() | ast.Unary() | ast.Cast() if isinstance(types.get(node), TensorT):
                    self.effect(node.span, "arithmetic on tensors", graph, lexical=False)
                case ast.Assign(target=ast.Name() as t) if _is_tensor(types.get(t)):
                    self.effect(node.span, "an assignment to a tensor", graph, lexical=True)
                case _:
                    pass


def _outermost(found: list[tuple[Span, str]]) -> list[tuple[Span, str]]:
    """The reads not inside another one (`(a + 1.0).sum()` is one error, at
    the `.sum()`; a chain `a + 1 + 1 + ..` of n operators one, not n, each
    with the whole line under it), in source order."""
    out: list[tuple[Span, str]] = []
    for span, what in sorted(found, key=lambda f: (f[0].file, f[0].start, -f[0].end)):
        last = out[-1][0] if out else None
        if last is not None and last.file == span.file and span.end <= last.end:
            continue
        out.append((span, what))
    return out


def check_graph_effects(tcx: CheckCx) -> None:
    scans: dict[str, _Scan] = {}
    for info in tcx.program.functions.values():
        if info.is_kernel or "host" not in info.contexts:
            continue
        s = _Scan(tcx)
        s.walk(info.decl.body, False)
        scans[info.qualname] = s

    # the first effect each host function reaches (its own, else a callee's, in call order)
    reach: dict[str, tuple[Span, str, str] | None] = {}

    def effect_of(fn: str, stack: set[str]) -> tuple[Span, str, str] | None:
        if fn in reach:
            return reach[fn]
        s = scans.get(fn)
        if s is None or fn in stack:
            return None
        stack.add(fn)
        found = (s.first[0], s.first[1], fn) if s.first is not None else None
        for callee, _, _ in s.calls:
            if found is not None:
                break
            found = effect_of(callee, stack)
        stack.discard(fn)
        reach[fn] = found
        return found

    for s in scans.values():
        for span, what in _outermost(s.in_graph):
            if any(r.file == span.file and r.start <= span.start and span.end <= r.end for r in s.reported):
                continue  # inside `print(a.sum())`, reported as the `print`
            tcx.emit(tcx.err(T.HOST_EFFECT_IN_GRAPH, f"{what} in a `graph` block runs only once, while recording",
                             span, "reads the tensor once, before the recorded launches run")
                     .note("a graph records kernel launches; host computation in its block runs when the block "
                           "is evaluated, not on each replay, and sees none of the recorded launches' writes")
                     .with_help("compute it outside the `graph { .. }` block (after a `replay()`, to see its "
                                "results), or in a kernel the graph records"))
        for callee, span, graph in s.calls:
            if not graph:
                continue
            found = effect_of(callee, set())
            if found is None:
                continue
            espan, what, where = found
            short = callee.rsplit("::", 1)[-1]
            tcx.emit(tcx.err(T.HOST_EFFECT_IN_GRAPH,
                             f"`{short}` does host work in a `graph` block: it runs only once, while recording",
                             span, f"`{short}` is called here")
                     .secondary(espan, f"{what} in `{where.rsplit('::', 1)[-1]}`: not replayed by `g.replay()`")
                     .note("a graph records kernel launches; a host function called in its block runs when the "
                           "block is evaluated, and only its launches are replayed")
                     .with_help(f"call `{short}` outside the `graph {{ .. }}` block, or record only its launches "
                                "in the block"))
