"""Definite assignment of `let x: T;` (a binding declared without a value).

Such a binding must be assigned on every path before it is read (E0118), and,
unless it is `mut`, assigned at most once on any path (E0108): as in Rust,

```
let p: f32;
if c { p = 1.0; } else { p = 2.0; }   // fine: once on each path
print(p);                               // fine: assigned on every path
```

`check_definite(tcx, body, deferred)` walks one function body in evaluation
order with the set of such bindings assigned on every path (`sure`) and on some
path (`maybe`, with the span of one assignment for the label). `if`/`else` and
`&&`/`||` join their paths; a loop's body starts from the state before it with
every binding the body assigns added to `maybe` (a second round assigns again);
a `for` or `while` may run its body no time at all, so it adds nothing to
`sure` but through its condition; `break` takes its state to the loop's exit,
`return`, `break` and `continue` end their path. Only functions that declare such
a binding pay for the walk (`stmts.check_fn`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tilelang.diagnostics.codes import names as N
from tilelang.sema.context import CheckCx
from tilelang.sema.program import Symbol
from tilelang.source import Span
from tilelang.syntax import ast


@dataclass
class _State:
    sure: set[Symbol] = field(default_factory=set)
    maybe: dict[Symbol, Span] = field(default_factory=dict)
    dead: bool = False  # no path reaches here (after `return`, `break`, `continue`)

    def copy(self) -> _State:
        return _State(set(self.sure), dict(self.maybe), self.dead)


def _join(a: _State, b: _State) -> _State:
    if a.dead:
        return b.copy()
    if b.dead:
        return a.copy()
    return _State(a.sure & b.sure, {**b.maybe, **a.maybe}, False)


class _Walker:
    def __init__(self, tcx: CheckCx, deferred: set[Symbol]) -> None:
        self.tcx = tcx
        self.deferred = deferred
        self.st = _State()
        self.loops: list[tuple[list[_State], list[_State]]] = []  # each loop's breaks, continues
        self.reported: set[Symbol] = set()
        self.quiet = False  # a loop's rounds walked to find its head: no reports
        self.assigned: dict[int, list[tuple[Symbol, Span]]] = {}  # a loop body's assignments

    def sym(self, e: Any) -> Symbol | None:
        s = self.tcx.program.symbols.get(e)
        return s if s is not None and s in self.deferred else None

    # ------------------------------------------------------------ statements
    def block(self, b: ast.Block) -> None:
        for s in b.stmts:
            self.stmt(s)
        if b.tail is not None:
            self.expr(b.tail)

    def stmt(self, s: ast.Stmt) -> None:
        match s:
            case ast.Let(pattern=pat, value=v):
                if v is not None:
                    self.expr(v)
                for x in ast.walk(pat):  # a new binding (each round of a loop): not assigned yet
                    sym = self.tcx.program.symbols.get(x) if isinstance(x, ast.NamePat) else None
                    if sym is not None:
                        self.st.sure.discard(sym)
                        self.st.maybe.pop(sym, None)
            case ast.Assign(target=t, op=op, value=v):
                self.expr(v)
                sym = self.sym(t) if isinstance(t, ast.Name) else None
                if sym is None:
                    self.expr(t)
                    return
                if op != "=":
                    self.read(t, sym)  # `p += 1` reads `p`
                self.assign(s, sym)
            case ast.ExprStmt(expr=e):
                self.expr(e)
            case ast.For(iter=it, body=body):
                self.expr(it)
                self.loop(None, body)
            case ast.While(cond=c, body=body):
                self.loop(c, body)
            case ast.Return(value=v):
                if v is not None:
                    self.expr(v)
                self.st.dead = True
            case ast.Break() | ast.Continue():
                if self.loops and not self.st.dead:
                    self.loops[-1][0 if isinstance(s, ast.Break) else 1].append(self.st.copy())
                self.st.dead = True
            case _:
                pass

    def loop(self, cond: ast.Expr | None, body: ast.Block) -> None:
        # the loop's head: the state before it, where what a round assigns on its way back
        # (the end of the body, `continue`) may have happened too; found by one round walked
        # without reporting, then walked again, reporting (an assignment the next round repeats
        # is a second assignment). Inside such a quiet round a nested loop's head takes every
        # binding its body assigns (one walk a level: linear in the nesting depth)
        entry = self.st.copy()
        head = entry.copy()
        if self.quiet:
            key = id(body)
            if key not in self.assigned:
                self.assigned[key] = [(sym, x.span) for x in ast.walk((cond, body) if cond is not None else body)
                                      if isinstance(x, ast.Assign) and (sym := self.sym(x.target)) is not None]
            for sym, span in self.assigned[key]:
                head.maybe.setdefault(sym, span)
            self.st = self._round(cond, body, head, quiet=True)[0]
            return
        back = self._round(cond, body, entry, quiet=True)[1]
        if not back.dead:
            for sym, span in back.maybe.items():
                head.maybe.setdefault(sym, span)
        self.st = self._round(cond, body, head, quiet=False)[0]

    def _round(self, cond: ast.Expr | None, body: ast.Block, head: _State, *, quiet: bool) -> tuple[_State, _State]:
        """One round from `head`: the state where the loop exits (its condition false, or a
        `break`) and the state that goes back to the head."""
        saved_quiet, self.quiet = self.quiet, quiet or self.quiet
        try:
            self.st = head.copy()
            if cond is not None:
                self.expr(cond)
            exit_ = self.st.copy()
            self.loops.append(([], []))
            self.block(body)
            breaks, continues = self.loops.pop()
            back = self.st
            for c in continues:
                back = _join(back, c)
            for b in breaks:
                exit_ = _join(exit_, b)
            return exit_, back
        finally:
            self.quiet = saved_quiet

    def assign(self, s: ast.Assign, sym: Symbol) -> None:
        if self.st.dead:
            return
        if not sym.mutable and sym in self.st.maybe and not self.quiet:
            first = self.st.maybe[sym]
            twice = "assigned twice" if sym in self.st.sure else "possibly assigned twice"
            d = self.tcx.err(N.ASSIGN_IMMUTABLE, f"cannot assign twice to immutable variable `{sym.name}`",
                             s.span, f"`{sym.name}` is {twice} on a path that reaches here" if first != s.span
                             else f"`{sym.name}` is assigned again by the loop's next round")
            if first != s.span:
                d = d.secondary(first, "first assignment")
            self.tcx.emit(d.with_help(f"make the binding mutable (`let mut {sym.name}: ..;`), or assign it once on "
                                      "each path (in each branch of an `if`/`else`)"))
        self.st.sure.add(sym)
        self.st.maybe[sym] = s.span

    def read(self, e: ast.Name, sym: Symbol) -> None:
        if self.st.dead or sym in self.st.sure or sym in self.reported or self.quiet:
            return
        self.reported.add(sym)
        possibly = sym in self.st.maybe
        d = self.tcx.err(N.USE_BEFORE_INIT,
                         f"used binding `{sym.name}` is {'possibly-' if possibly else ''}uninitialized", e.span,
                         f"`{sym.name}` used here but it {'is possibly' if possibly else 'is'} not assigned"
                         + (" on every path" if possibly else ""))
        d = d.secondary(sym.span, "binding declared here but left uninitialized")
        if possibly:
            d = d.secondary(self.st.maybe[sym], "assigned here on one path only")
        # assigned on some path later: a value at the declaration needs `mut` too (else E0108)
        init = f"let mut {sym.name}: .. = value;" if possibly and not sym.mutable else f"let {sym.name}: .. = value;"
        self.tcx.emit(d.with_help(f"give it a value where it is declared (`{init}`), or "
                                  + ("assign it on every path before this use (in each branch of the `if`, "
                                     "before a loop rather than in it)" if possibly else
                                     "assign it before this use")))

    # ------------------------------------------------------------ expressions
    def expr(self, e: Any) -> None:
        match e:
            case None:
                return
            case ast.Name():
                sym = self.sym(e)
                if sym is not None:
                    self.read(e, sym)
            case ast.Block():
                self.block(e)
            case ast.UnsafeBlock(body=b) | ast.GraphBlock(body=b):
                self.block(b)
            case ast.If(cond=c, then=t, else_=els):
                self.expr(c)
                before = self.st.copy()
                self.block(t)
                after_then = self.st
                self.st = before
                if els is not None:
                    self.expr(els)
                self.st = _join(after_then, self.st)
            case ast.Binary(op=op, lhs=l, rhs=r) if op in ("&&", "||"):
                self.expr(l)
                before = self.st.copy()
                self.expr(r)
                self.st = _join(before, self.st)
            case _:
                for child in _children(e):
                    self.expr(child)


def _children(e: Any) -> list[Any]:
    """The direct sub-expressions of `e`, in source order (names of types and
    methods are not expressions)."""
    out: list[Any] = []
    for slot in type(e).__slots__:
        if slot in ("span", "op_span", "ty", "generics", "method", "field", "callee", "ident"):
            continue
        c = getattr(e, slot, None)
        if isinstance(c, tuple):
            out.extend(x.value if isinstance(x, ast.Arg) else x for x in c if hasattr(x, "__slots__"))
        elif hasattr(c, "__slots__") and not isinstance(c, Span):
            out.append(c.value if isinstance(c, ast.Arg) else c)
    return out


def check_definite(tcx: CheckCx, body: ast.Block, deferred: set[Symbol]) -> None:
    """E0118 and E0108 for the bindings of `deferred` (`let x: T;`) in `body`."""
    _Walker(tcx, deferred).block(body)
