"""The ownership rules of the tile queue, `for s in queue(axis) { .. }`, and
of its static sibling, the tile walk `for s in tiles(axis) { .. }` (block b
of G along the axis takes tiles b, b + G, ..: the same tiles, the same one
wave of blocks, the same rules; the diagnostics name the kind, `_Words`).

A kernel with a queue launches fewer blocks along `axis` than its `&mut`
partitions have tiles there; each block pulls tile indices from its row's
counter until they are gone, and inside the loop its `&mut` tiles are the
pulled tile's (`s` along `axis`). Two blocks never pull the same index, so
the writes stay disjoint as long as the pulled index is the only way to
name a written tile. This pass proves that, per kernel, or refuses it:

  - E0412: `queue(axis)` is only the range of one `for` at the top level of
    a kernel's body (not in a device function, another loop, an `if`, an
    expression, not twice), bound to one immutable name or `_`; no block may
    stop pulling before the queue is empty (the counter is reset by the
    block that makes the row's last pull, so every block pulls until it gets
    an index past the end): no `return` in such a kernel, no `break` out of
    the queue's loop, no `last_block` beside it;
  - E0413: a `&mut` parameter is named only inside the loop (outside it the
    block has no tile: a store there would have no tile to go to); a local
    that shadows its name is another variable (resolved by symbol);
  - E0414: no `block_id(axis)` or `num_blocks(axis)` of the queue's axis (or
    of an axis that is not a literal) in the kernel or a device function it
    calls: they give the pulling block's position and the launch's count of
    pulling blocks, which the device chooses and which name no tile (the
    tile is `s`); nothing the kernel computes may depend on them. Nor may
    it depend on which tiles the block pulled before: inside the loop, no
    assignment to a variable declared outside it (a value carried from one
    pulled tile to the next, or out of the loop, differs with the device's
    schedule: `a = a + 1.0` counts the tiles this block happened to pull),
    and no `print` or `unsafe` write (an atomic, `store_unchecked`) outside
    the loop (it would run once a pulling block: an atomic count there
    counted the interpreter's 2 walking blocks, the simulator's 3 and a GPU's
    hundreds).

Stores take no index, so `s` itself may be used freely (read, passed on)
inside the iteration that pulled it.
Entry point: `check_queues(view, sink)`. Never raises on a well-typed program.
"""

from __future__ import annotations

from typing import Any

from tilelang.diagnostics.codes import kernel as codes
from tilelang.diagnostics.model import Diagnostic, DiagnosticSink
from tilelang.lastblock import mut_params
from tilelang.ownership.env import ProgramView
from tilelang.ownership.kernel import UNSAFE_OPS
from tilelang.ownership.placement import OnceSink, reached_calls, refuse_in_device_fns
from tilelang.share_queue import NAME, NAMES, is_call, kind_of, loop
from tilelang.source import Span
from tilelang.syntax import ast


def _help(kind: str) -> str:
    return f"write the {'queue' if kind == NAME else 'walk'} as `for s in {kind}(axis) {{ .. }}`, a statement of the " \
        "kernel's own body"


class _Words:
    """How the diagnostics name a walk of one kind (`queue` or `tiles`)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        queue = kind == "queue"
        self.noun = "queue" if queue else "tile walk"
        self.take = "pull" if queue else "take"
        self.taken = "pulled" if queue else "dealt"
        self.walkers = "pulling" if queue else "walking"
        self.takes = "pulls" if queue else "takes"
        self.took = "pulled" if queue else "took"
        self.move = "pull" if queue else "walk"  # what the blocks of a row do
        self.schedule = ("is decided at run time" if queue else
                         "follows from how many there are")
        # why a block may not stop before the walk's end
        self.stop_note = (
            "the block that makes a row's last pull resets its counter for the next launch, so every block must "
            "pull until it gets no tile" if queue else
            "a block's tiles are b, b + G, b + 2 G, .. with G the launch's blocks along the axis (the device's "
            "choice): a block that stops early leaves tiles undone, and which ones differs between devices and "
            "between the interpreter and the GPU")
        self.until_end = ("every block pulls from this queue until it is empty" if queue
                          else "every block walks the tiles dealt to it to the end")


def check_queues(view: ProgramView, sink: DiagnosticSink) -> None:
    emit = OnceSink(sink)
    for kind in NAMES:
        refuse_in_device_fns(view, emit, lambda n, k=kind: is_call(n) and kind_of(n) == k, codes.QUEUE_PLACEMENT,
                             kind, "the launch sizes its grid and the checker its tiles from the kernel itself", _help(kind))
    for info in view.kernels():
        if any(is_call(n) for n in ast.walk(info.decl.body)):
            _check(view, info.decl, emit)


def _literal_axis(call: ast.Call) -> bool:
    return bool(call.args) and isinstance(call.args[0].value, ast.IntLit)


def _check(view: ProgramView, decl: ast.FnDecl, emit: Any) -> None:
    found = loop(decl)
    node = found[0] if found else None
    w = _Words(kind_of(node.iter) if node is not None else NAME)
    for n in ast.walk(decl.body):
        if is_call(n) and (node is None or n is not node.iter) and _literal_axis(n):
            _misplaced(decl, n, node, w, emit)
    if found is None:
        return
    node, axis = found
    header = node.iter.span
    pat = node.pattern
    if not (isinstance(pat, ast.WildcardPat) or (isinstance(pat, ast.NamePat) and not pat.mutable)):
        emit(Diagnostic.error(codes.QUEUE_PLACEMENT, f"the tile index of a {w.noun} is one immutable name")
             .primary(pat.span, "not a plain name" if not isinstance(pat, ast.NamePat) else "declared `mut`")
             .secondary(header, f"the {w.noun}")
             .note(f"the loop's `&mut` tiles are the {w.taken} index's: a name that could change would no longer "
                   "say which tile they are")
             .with_help(f"write `for s in {w.kind}(axis)` and compute other indices from `s` with `let`"))
    for n in ast.walk(decl.body):
        if isinstance(n, ast.Return):
            emit(Diagnostic.error(codes.QUEUE_PLACEMENT, f"`return` in a kernel with a {w.noun}")
                 .primary(n.span, f"a block that returns here stops {w.walkers} tiles")
                 .secondary(header, w.until_end)
                 .note(w.stop_note)
                 .with_help(f"skip work with `if` (or `continue` inside the {w.noun}'s loop) instead"))
        elif isinstance(n, ast.Call) and isinstance(n.callee, ast.Name) \
                and n.callee.ident.name == "last_block":
            emit(Diagnostic.error(codes.QUEUE_PLACEMENT, f"`last_block` in a kernel with a {w.noun}")
                 .primary(n.span, "a group's last arrival is not defined here")
                 .secondary(header, f"the blocks of a row {w.take} this {w.noun}'s tiles")
                 .with_help(f"merge the {w.noun}'s tiles in a second launch (or use `last_block` without a "
                            f"{w.noun})"))
    for b in _breaks(node.body):
        emit(Diagnostic.error(codes.QUEUE_PLACEMENT, f"`break` out of a {w.noun}'s loop")
             .primary(b.span, f"a block that leaves here stops {w.walkers} tiles")
             .secondary(header, w.until_end)
             .note(w.stop_note if w.kind != NAME else
                   "the tiles it would have pulled would then be done by nobody, and the row's counter "
                   "would not be reset for the next launch")
             .with_help("use `continue` to skip a tile's work"))
    muts = mut_params(decl)
    inside = {id(x) for x in ast.walk(node.body)}
    param_syms = {name: view.symbol_of(p) for name, p in muts.items()}
    for n in ast.walk(decl.body):
        if isinstance(n, ast.Name) and n.ident.name in muts and id(n) not in inside:
            sym, psym = view.symbol_of(n), param_syms[n.ident.name]
            if sym is not None and psym is not None and sym is not psym:
                continue  # a local that shadows the parameter's name, not the parameter
            emit(Diagnostic.error(codes.OWN_TILE_OUTSIDE_QUEUE,
                                  f"`{n.ident.name}` is named outside the {w.noun}'s loop")
                 .primary(n.span, "no tile of it is this block's here")
                 .secondary(header, f"its tiles are {w.taken} here, one an iteration")
                 .note(f"in a kernel with a {w.noun}, a block's `&mut` tiles are those of the indices it "
                       f"{w.takes}, named only inside the loop")
                 .with_help(f"move the use of `{n.ident.name}` into the loop"))
    once_a_walker = [(n, via, _base_name(n.callee), "what it writes",
                      f"write inside the loop (once a tile), e.g. `if s == 0 {{ {_base_name(n.callee)}(..); }}` "
                      "for once a row") for n, via in _unsafe_outside(view, decl, inside)]
    once_a_walker += [(n, via, "print", "the output",
                       "print inside the loop (once a tile), e.g. `if s == 0 { print(..); }`")
                      for n, via in _prints_outside(view, decl, inside)]
    for n, via, what, effect, help_ in once_a_walker:
        d = (Diagnostic.error(codes.QUEUE_WORKER_INDEX, f"`{what}` outside the {w.noun}'s loop")
             .primary(n.span, f"runs once for each {w.walkers} block"))
        if via is not None:
            d = d.secondary(via.span, "called outside the loop here")
        emit(d.secondary(header, f"how many blocks {w.move} along axis {axis} is the device's choice")
             .note(f"outside the loop a kernel with a {w.noun} runs once a {w.walkers} block, not once a tile: "
                   f"{effect} would differ between devices and between the interpreter and the GPU")
             .with_help(help_))
    for n in _carried_assigns(node):
        name = _base_name(n.target)
        emit(Diagnostic.error(codes.QUEUE_WORKER_INDEX,
                              f"`{name}` is declared outside the {w.noun}'s loop and assigned inside it")
             .primary(n.span, f"carries a value from the tiles this block {w.took} before")
             .secondary(header, f"which tiles along axis {axis} a block {w.takes} is decided at run time")
             .note("a variable assigned in one iteration and read in a later one (or after the loop) holds what "
                   "depends on the device's schedule, not on the tile `s`")
             .with_help(f"declare `{name}` inside the loop (`let mut {name} = ..;`) so that each tile starts "
                        "from the same value"))
    for n, via in _worker_reads(view, decl, axis):
        assert isinstance(n.callee, ast.Name)
        what = n.callee.ident.name
        a = n.args[0].value
        d = (Diagnostic.error(codes.QUEUE_WORKER_INDEX,
                              f"`{what}({axis if isinstance(a, ast.IntLit) else '..'})` in a kernel with a {w.noun} "
                              f"along axis {axis}")
             .primary(n.span, f"the {w.walkers} block's position, not a tile's"))
        if via is not None:
            d = d.secondary(via.span, "called from the kernel here")
        emit(d.secondary(header, f"the tile along axis {axis} is the index {w.taken} here")
             .note(f"the launch runs fewer blocks along axis {axis} than there are tiles (how many is the device's "
                   f"choice) and which block {w.takes} which tile {w.schedule}: nothing may depend on it")
             .with_help("use the loop's index (and a view's `num_tiles(axis)` for the tile count)"))


def _worker_reads(view: ProgramView, decl: ast.FnDecl, axis: int) -> list[tuple[ast.Call, ast.Call | None]]:
    """`block_id`/`num_blocks` calls of the queue's axis (or a non-literal
    one) in the kernel and the device functions it calls, each with the
    kernel's call that reaches it (None in the kernel itself)."""
    def pick(n: ast.Call) -> bool:
        if not (isinstance(n.callee, ast.Name) and n.callee.ident.name in ("block_id", "num_blocks") and n.args):
            return False
        a = n.args[0].value
        return not isinstance(a, ast.IntLit) or a.value == axis

    return reached_calls(view, decl, pick)


def _prints_outside(view: ProgramView, decl: ast.FnDecl,
                    inside: set[int]) -> list[tuple[ast.Call, ast.Call | None]]:
    """`print` calls outside the queue's loop, in the kernel or in a device
    function called from outside it, each with the kernel's call that
    reaches it (None in the kernel itself)."""
    return reached_calls(view, decl,
                         lambda n: isinstance(n.callee, ast.Name) and n.callee.ident.name == "print",
                         skip=lambda n: id(n) in inside)


def _unsafe_outside(view: ProgramView, decl: ast.FnDecl,
                    inside: set[int]) -> list[tuple[ast.Call, ast.Call | None]]:
    """The `unsafe` writes (atomics, `store_unchecked`) outside the queue's loop, in the
    kernel or in a device function called from outside it (as `_prints_outside`)."""
    return reached_calls(view, decl,
                         lambda n: isinstance(n.callee, ast.Name) and n.callee.ident.name in UNSAFE_OPS
                         and view.callee_info(n) is None,
                         skip=lambda n: id(n) in inside)


def _base_name(e: Any) -> str:
    while isinstance(e, (ast.Index, ast.Field)):
        e = e.receiver
    return e.ident.name if isinstance(e, ast.Name) else "?"


def _pattern_names(p: Any) -> set[str]:
    return {n.name.name for n in ast.walk(p) if isinstance(n, ast.NamePat)}


def _carried_assigns(node: ast.For) -> list[ast.Assign]:
    """The assignments in the queue's loop to a variable not declared in it
    (scoped: a `let` in a nested block does not cover a later assignment
    outside that block)."""
    out: list[ast.Assign] = []

    def visit(n: Any, local: set[str]) -> None:
        if isinstance(n, tuple):
            for m in n:
                visit(m, local)
        elif isinstance(n, ast.Block):
            inner = set(local)
            for st in n.stmts:
                visit(st, inner)
            if n.tail is not None:
                visit(n.tail, inner)
        elif isinstance(n, ast.Let):
            if n.value is not None:
                visit(n.value, local)
            local |= _pattern_names(n.pattern)
        elif isinstance(n, ast.For):
            visit(n.iter, local)
            visit(n.body, local | _pattern_names(n.pattern))
        elif isinstance(n, ast.Assign):
            if _base_name(n.target) not in local:
                out.append(n)
            visit(n.target, local)
            visit(n.value, local)
        elif hasattr(n, "__slots__") and not isinstance(n, Span):
            for slot in type(n).__slots__:
                child = getattr(n, slot, None)
                if isinstance(child, tuple) or hasattr(child, "__slots__"):
                    visit(child, local)

    visit(node.body, _pattern_names(node.pattern))
    return out


def _breaks(body: ast.Block) -> list[ast.Break]:
    """The `break`s that leave the queue's loop (not those of a loop inside it)."""
    inner = {id(x) for m in ast.walk(body) if isinstance(m, (ast.For, ast.While)) for x in ast.walk(m.body)}
    return [b for b in ast.walk(body) if isinstance(b, ast.Break) and id(b) not in inner]


def _misplaced(decl: ast.FnDecl, n: ast.Call, node: ast.For | None, w: _Words, emit: Any) -> None:
    """A `queue(..)`/`tiles(..)` that is not the kernel's walk; `w` names the
    kernel's walk (`node`) where there is one, the call's own words are
    `own`: the note and help speak of what the user wrote."""
    kind = kind_of(n)
    own = _Words(kind)
    why = "as a value, not the range of a `for`"
    help_ = _help(kind)
    enclosing = None
    for m in ast.walk(decl.body):
        if isinstance(m, ast.For) and m.iter is n:
            enclosing = m
            break
    if enclosing is not None:
        why = "in a `for` that is not a statement of the kernel's own body"
        if node is not None and enclosing is not node and enclosing in decl.body.stmts:
            why = "a second time" if kind == w.kind else f"beside the kernel's {w.noun}"
            help_ = f"do all the work of a tile in the body of the kernel's one {w.noun}"
        elif node is not None and any(x is n for x in ast.walk(node.body)):
            name = node.pattern.name.name if isinstance(node.pattern, ast.NamePat) else "s"
            help_ = (f"the {w.noun}'s index `{name}` already names this block's tile: loop over the tile's parts "
                     "with a plain `for j in a..b`")
    d = (Diagnostic.error(codes.QUEUE_PLACEMENT, f"`{kind}` {why}")
         .primary(n.span, "the launch cannot size its grid from this")
         .note(f"a {own.noun} is the range of one `for` that is a statement of the kernel's body (not inside "
               "another loop or an `if`); a kernel has at most one, of one kind"))
    if node is not None:
        d = d.secondary(node.iter.span, f"the kernel's {w.noun}")
    emit(d.with_help(help_))
