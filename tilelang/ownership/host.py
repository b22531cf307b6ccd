"""The host-side ownership checker: borrows of tensors by launches (BRIEF §6).

Flow-sensitive, intraprocedural, over each host `fn` body. The analysis is a
structured dataflow pass over the AST (the AST's control flow is structured:
`if`/`else`, `for`, `while`, `break`, `continue`, `return`), so no explicit
CFG is built. The abstract `State` at a program point holds what MAY be true
on some path reaching it:

  - `moved`:    variables that may have been moved, with the move's span;
  - `loans`:    borrows taken by `.launch()` that may not have been waited
                for (`Loan`: which variable, shared or mutable, which launch);
  - `captures`: tensors recorded by a graph that is still alive;
  - `values`:   for partition, reference, operation, handle and graph
                variables, the abstract values they may hold.

States join by union (`State.join`); loops iterate to a fixpoint, so a launch
in a loop body that is not waited in the same iteration meets its own loan on
the next one. Every finding is reported once (deduplicated by code and spans)
however often a loop body is re-walked.

Invariants: the walker never raises on a well-formed AST (unknown constructs
are treated as plain reads); a tensor variable is tracked only when its kind
is known to be `Kind.TENSOR` (from the type checker, or syntactically from
constructors, annotations and arithmetic), so scalars are never "moved".

Decisions (documented in ARCHITECTURE.md and the explain files):
  - a handle that goes out of scope (end of block, `break`, `return`,
    reassignment, or a `.launch()` whose result is not bound) while its launch
    may still run is an error, E0308; `h.wait()` is idempotent;
  - handles and graphs cannot leave their function (E0310): the analysis is
    intraprocedural, and a caller could not know what they borrow;
  - host fns are checked at their call sites through their signatures: a
    `&mut Tensor` argument is a write now, `&Tensor` a read now, a by-value
    `Tensor` argument a move.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import assert_never

from tilelang.diagnostics.codes import ownership as codes
from tilelang.diagnostics.model import Diagnostic, DiagnosticSink
from tilelang.ownership.env import Kind, ProgramView, type_kind
from tilelang.source import Span
from tilelang.syntax import ast

TENSOR_CONSTRUCTORS = frozenset(
    ("zeros", "ones", "full", "arange", "rand", "randn", "load_npy", "empty")
)
TENSOR_METHODS = frozenset(("clone", "reshape", "transpose", "permute", "broadcast"))
# Methods that read a tensor's shape, not its data: no conflict with a launch.
METADATA_METHODS = frozenset(("shape", "dtype", "rank"))
_MAX_LOOP_ROUNDS = 32


# ---------------------------------------------------------------- abstract values
@dataclass(eq=False, slots=True)
class Var:
    """One binding (a `let` name or a parameter); shadowing makes a new Var."""

    name: str
    span: Span
    kind: Kind
    mutable: bool  # `let mut`, `mut` param, or a `&mut` parameter
    is_ref: bool = False  # a `&`/`&mut Tensor` parameter: never dropped, never moved


@dataclass(frozen=True, slots=True)
class PartVal:
    var: Var
    span: Span  # the `.partition(..)` call
    shape: ast.Expr | None


@dataclass(frozen=True, slots=True)
class RefVal:
    var: Var
    mutable: bool
    span: Span


@dataclass(frozen=True, slots=True)
class Borrow:
    var: Var
    mutable: bool
    span: Span  # the argument
    param: str


@dataclass(frozen=True, slots=True)
class OpVal:
    kernel: str
    borrows: tuple[Borrow, ...]
    span: Span  # the kernel call


@dataclass(frozen=True, slots=True)
class HandleVal:
    token: ast.MethodCall  # the `.launch()` call that made it


@dataclass(frozen=True, slots=True)
class GraphVal:
    token: ast.GraphBlock


AbsVal = PartVal | RefVal | OpVal | HandleVal | GraphVal


@dataclass(frozen=True, slots=True)
class Val:
    """The abstract result of an expression."""

    kind: Kind
    alts: frozenset[AbsVal] = frozenset()
    place: Var | None = None  # the expression is exactly this variable


OTHER = Val(Kind.OTHER)


@dataclass(frozen=True, slots=True)
class Loan:
    token: ast.MethodCall  # the `.launch()` call
    var: Var
    mutable: bool
    arg: Span
    kernel: str


@dataclass(frozen=True, slots=True)
class Capture:
    token: ast.GraphBlock
    var: Var
    mutable: bool
    arg: Span


@dataclass(slots=True)
class State:
    moved: dict[Var, frozenset[Span]] = field(default_factory=dict)
    loans: frozenset[Loan] = frozenset()
    captures: frozenset[Capture] = frozenset()
    values: dict[Var, frozenset[AbsVal]] = field(default_factory=dict)

    def copy(self) -> State:
        return State(dict(self.moved), self.loans, self.captures, dict(self.values))

    def same(self, other: State) -> bool:
        return (
            self.moved == other.moved
            and self.loans == other.loans
            and self.captures == other.captures
            and self.values == other.values
        )

    @staticmethod
    def join(states: list[State | None]) -> State | None:
        live = [s for s in states if s is not None]
        if not live:
            return None
        out = live[0].copy()
        for s in live[1:]:
            for v, spans in s.moved.items():
                out.moved[v] = out.moved.get(v, frozenset()) | spans
            out.loans |= s.loans
            out.captures |= s.captures
            for v, alts in s.values.items():
                out.values[v] = out.values.get(v, frozenset()) | alts
        return out


# ---------------------------------------------------------------- control context
@dataclass(slots=True)
class _Scope:
    vars: list[Var] = field(default_factory=list)
    names: dict[str, Var] = field(default_factory=dict)
    loop: _Loop | None = None  # set on the scope that a loop body opens


@dataclass(slots=True)
class _Loop:
    breaks: list[State] = field(default_factory=list)
    continues: list[State] = field(default_factory=list)


def _closing(span: Span) -> Span:
    return Span(span.file, max(span.start, span.end - 1), span.end)


def _verb(mutable: bool) -> str:
    return "writing" if mutable else "reading"


# ---------------------------------------------------------------- the checker
class HostChecker:
    def __init__(self, view: ProgramView, sink: DiagnosticSink) -> None:
        self.view = view
        self.sink = sink
        self._seen: set[tuple[object, ...]] = set()
        self._vars: dict[int, Var] = {}  # binding node id -> Var, stable across loop rounds
        self._keep: list[object] = []  # keeps binding nodes alive while ids are keys
        self.scopes: list[_Scope] = []
        self.graphs: list[ast.GraphBlock] = []  # graph bodies being recorded
        self.waits: dict[object, tuple[object, ...]] = {}
        self._moved_uses: set[tuple[Var, Span]] = set()  # reported uses after move

    # -- reporting ------------------------------------------------------------
    def report(self, diag: Diagnostic, *key: object) -> None:
        k = (diag.code, diag.primary_span, *key)
        if k not in self._seen:
            self._seen.add(k)
            self.sink.emit(diag)

    # -- entry ----------------------------------------------------------------
    def check_fn(self, fn: ast.FnDecl) -> None:
        self.scopes = [_Scope()]
        st = State()
        for p in fn.params:
            kind, mut_ref = type_kind(p.ty)
            is_ref = isinstance(p.ty, ast.RefType)
            v = self._var(p, p.name.name, p.name.span, kind, p.mutable or mut_ref, is_ref)
            self._declare(v)
        out = self.block(fn.body, st, value=True, fn_body=True)
        if out is not None:
            st2, val = out
            self._escape_check(val, fn.body.tail.span if fn.body.tail else fn.body.span)
            self._exit_scope(self.scopes[0], st2, _closing(fn.body.span))

    # -- scopes and variables ---------------------------------------------------
    def _var(
        self, node: object, name: str, span: Span, kind: Kind, mutable: bool, is_ref: bool = False
    ) -> Var:
        v = self._vars.get(id(node))
        if v is None:
            v = Var(name, span, kind, mutable, is_ref)
            self._vars[id(node)] = v
            self._keep.append(node)
        return v

    def _declare(self, v: Var) -> None:
        scope = self.scopes[-1]
        scope.vars.append(v)
        scope.names[v.name] = v

    def lookup(self, name: str) -> Var | None:
        for scope in reversed(self.scopes):
            v = scope.names.get(name)
            if v is not None:
                return v
        return None

    def _exit_scope(self, scope: _Scope, st: State, end: Span) -> None:
        """Drop the scope's variables in reverse order of declaration."""
        for v in reversed(scope.vars):
            self._drop(v, st, end)
            st.values.pop(v, None)
            st.moved.pop(v, None)

    def _exit_to(self, depth: int, st: State, end: Span) -> State:
        """Drops for a jump (`break`, `continue`, `return`) leaving scopes above `depth`."""
        st = st.copy()
        for scope in reversed(self.scopes[depth:]):
            self._exit_scope(scope, st, end)
        return st

    def _drop(self, v: Var, st: State, at: Span, how: str = "dropped") -> None:
        if v in st.moved and v.kind is not Kind.TENSOR:
            return
        if v.kind is Kind.HANDLE:
            for alt in st.values.get(v, frozenset()):
                if isinstance(alt, HandleVal):
                    self._drop_handle(alt.token, st, at, v.name, how)
        elif v.kind is Kind.GRAPH:
            tokens = {a.token for a in st.values.get(v, frozenset()) if isinstance(a, GraphVal)}
            st.captures = frozenset(c for c in st.captures if c.token not in tokens)
        elif v.kind is Kind.TENSOR and not v.is_ref and v not in st.moved:
            self.check_use(v, "drop" if how == "dropped" else "assign", at, st)

    def _drop_handle(
        self, token: ast.MethodCall, st: State, at: Span, name: str | None, how: str = "dropped"
    ) -> None:
        live = [ln for ln in st.loans if ln.token is token]
        if not live:
            return
        self._report_dropped(live, at, name, how)
        st.loans = frozenset(ln for ln in st.loans if ln.token is not token)

    def _report_dropped(self, live: list[Loan], at: Span, name: str | None, how: str) -> None:
        token = min((ln.token for ln in live), key=lambda t: t.span.start)
        what = f"`{name}`" if name else "the handle"
        subject = f"launch handle `{name}`" if name else "the launch handle"
        d = (
            Diagnostic.error(
                codes.HANDLE_DROPPED, f"{subject} is {how} while its launch may still be running"
            )
            .primary(token.span, "this launch may not have been waited for")
            .secondary(at, f"{what} is {how} here")
        )
        d = d.note(f"the launch borrows {self._loan_list(live)} until it is waited for")
        where = (
            "before assigning a new handle to it"
            if how == "overwritten"
            else "before it goes out of scope"
        )
        d = d.with_help(
            f"call `{name}.wait()` {where}"
            if name
            else "bind the handle and call `.wait()` on it, or use `.sync()`"
        )
        self.report(d, at)

    @staticmethod
    def _loan_list(loans: list[Loan]) -> str:
        # "`z` mutably and `x` shared", never "`x`, `z` mutably" (which reads
        # as if both were mutable)
        mutable = sorted({f"`{ln.var.name}`" for ln in loans if ln.mutable})
        shared = sorted({f"`{ln.var.name}`" for ln in loans if not ln.mutable} - set(mutable))
        parts = [", ".join(mutable) + " mutably"] if mutable else []
        if shared:
            parts.append(", ".join(shared) + (" shared" if mutable else ""))
        return " and ".join(parts)

    # -- uses of tensors --------------------------------------------------------
    def check_use(
        self,
        v: Var,
        mode: str,
        span: Span,
        st: State,
        *,
        kernel: str | None = None,
        mutable_borrow: bool = False,
    ) -> None:
        """Check one use of a tracked variable.

        mode: "read", "write", "move", "assign" (drops the old value), "drop",
        "borrow" (by a launch or sync of `kernel`, `mutable_borrow` saying how).
        """
        if v.kind is not Kind.TENSOR and mode not in ("read", "move"):
            return
        if v in st.moved:
            # Assigning to a moved variable re-initialises it and drops nothing.
            if mode != "assign":
                self._report_moved(v, mode, span, st.moved[v])
            return
        if v.kind is not Kind.TENSOR:
            return
        writes = mode in ("write", "move", "assign", "drop") or (
            mode == "borrow" and mutable_borrow
        )
        for ln in sorted(st.loans, key=lambda ln: (ln.arg.start, ln.mutable)):
            if ln.var is not v or not (writes or ln.mutable):
                continue
            self._report_conflict(v, mode, span, ln, st, kernel, mutable_borrow)
            break
        if mode in ("move", "assign", "drop"):
            for cap in st.captures:
                if cap.var is v:
                    self._report_captured(v, mode, span, cap, st)
                    break

    def _handle_name(self, token: ast.MethodCall, st: State) -> str | None:
        for var, alts in st.values.items():
            if var.kind is Kind.HANDLE and HandleVal(token) in alts:
                return var.name
        return None

    def _report_conflict(
        self,
        v: Var,
        mode: str,
        span: Span,
        ln: Loan,
        st: State,
        kernel: str | None,
        mutable_borrow: bool,
    ) -> None:
        name = f"`{v.name}`"
        running = f"a launched kernel may still be {_verb(ln.mutable)} it"
        loan_label = (
            f"{name} is borrowed {'mutably' if ln.mutable else 'shared'} "
            f"by this launch of `{ln.kernel}`"
        )
        handle = self._handle_name(ln.token, st)
        this = {"borrow": "this launch", "drop": "the end of this block"}.get(
            mode, f"this use of {name}"
        )
        help_ = (
            f"call `{handle}.wait()` before {this}"
            if handle
            else f"wait for the launch of `{ln.kernel}` before {this}"
        )
        if mode == "borrow" and mutable_borrow and ln.mutable:
            d = Diagnostic.error(
                codes.CONCURRENT_WRITES, f"two launches in flight at once would both write {name}"
            ).primary(span, f"the launch of `{kernel}` writes {name} here")
            if ln.arg != span:
                d = d.secondary(
                    ln.arg, f"the launch of `{ln.kernel}` writes {name} and may still be running"
                )
        else:
            msg = {
                "read": f"cannot read {name} while {running}",
                "write": f"cannot write {name} while {running}",
                "move": f"cannot move {name} while {running}",
                "assign": f"cannot assign to {name} while {running}",
                "drop": f"{name} is dropped while {running}",
                "borrow": f"cannot launch `{kernel}` {_verb(mutable_borrow)} {name} "
                f"while {running}",
            }[mode]
            label = {
                "drop": f"{name} is dropped here",
                "borrow": f"`{kernel}` {'writes' if mutable_borrow else 'reads'} {name} here",
                "read": f"{name} is read here",
                "write": f"{name} is written here",
                "move": f"{name} is moved here",
                "assign": f"{name} is assigned here, dropping its old value",
            }[mode]
            d = Diagnostic.error(codes.USE_WHILE_IN_FLIGHT, msg).primary(span, label)
            if ln.arg != span:
                d = d.secondary(ln.arg, loan_label)
        if ln.arg.start >= span.start and ln.arg.file == span.file:
            d = d.note(
                "the launch is from the previous iteration of the loop and was "
                "not waited for in that iteration"
            )
        d = d.note("`.launch()` borrows its tensors until `.wait()` is called on its handle")
        d = d.with_help(help_)
        self.report(d, ln.arg)

    def _report_moved(self, v: Var, mode: str, span: Span, moves: frozenset[Span]) -> None:
        self._moved_uses.add((v, span))
        what = {Kind.HANDLE: "handle", Kind.GRAPH: "graph"}.get(v.kind, "value")
        first = min(moves, key=lambda s: (s.start, s.end))
        d = Diagnostic.error(codes.USE_AFTER_MOVE, f"use of moved {what} `{v.name}`").primary(
            span, "value used here after move"
        )
        for m in sorted(moves, key=lambda s: s.start):
            later = m.start >= span.start and m.file == span.file
            d = d.secondary(
                m,
                "value moved here, in a previous iteration of the loop"
                if later
                else "value moved here",
            )
        d = d.note(
            f"`{v.name}` owns tensor data, which is affine: `let b = a;` and "
            "passing by value move it"
            if v.kind is Kind.TENSOR
            else f"a {what} is affine: binding it to another name moves it"
        )
        if v.kind is Kind.TENSOR:
            d = d.with_help(
                f"borrow it with `&{v.name}` instead, or copy it with "
                f"`{v.name}.clone()` before the move"
            )
        self.report(d, first)

    def _report_captured(self, v: Var, mode: str, span: Span, cap: Capture, st: State) -> None:
        gname = None
        for var, alts in st.values.items():
            if var.kind is Kind.GRAPH and GraphVal(cap.token) in alts:
                gname = var.name
        g = f"`{gname}`" if gname else "a graph"
        verb = {"move": "move", "assign": "assign to", "drop": "drop"}[mode]
        d = (
            Diagnostic.error(
                codes.MOVE_OF_CAPTURED,
                f"cannot {verb} `{v.name}` while graph {g} captures it"
                if gname
                else f"cannot {verb} `{v.name}` while a graph captures it",
            )
            .primary(
                span,
                {
                    "move": f"`{v.name}` is moved here",
                    "assign": f"`{v.name}` is reassigned here, dropping the captured tensor",
                    "drop": f"`{v.name}` is dropped here",
                }[mode],
            )
            .secondary(cap.arg, f"`{v.name}` is captured by the graph here")
        )
        d = d.note(
            "a graph replays its operations on the tensors it recorded; those must "
            "stay alive and in place while the graph lives"
        )
        d = d.with_help(
            "reading and writing the tensor between replays is fine; to "
            "replace it, write into it (e.g. with a kernel) instead of "
            "rebinding it"
            if mode == "assign"
            else f"borrow it with `&{v.name}`, or use `{v.name}.clone()`"
        )
        self.report(d, cap.arg)

    # -- statements -------------------------------------------------------------
    def block(
        self,
        b: ast.Block,
        st: State,
        *,
        value: bool,
        fn_body: bool = False,
        loop: _Loop | None = None,
    ) -> tuple[State, Val] | None:
        scope = self.scopes[0] if fn_body else _Scope(loop=loop)
        if not fn_body:
            self.scopes.append(scope)
        try:
            cur = st
            for s in b.stmts:
                nxt = self.stmt(s, cur)
                if nxt is None:
                    return None
                cur = nxt
            val = OTHER
            if b.tail is not None:
                val = self.value(b.tail, cur) if value else self.operand(b.tail, cur)
                if not value:
                    self._discard(val, cur, b.tail.span)
            if not fn_body:
                self._exit_scope(scope, cur, _closing(b.span))
            return cur, val
        finally:
            if not fn_body:
                self.scopes.pop()

    def stmt(self, s: ast.Stmt, st: State) -> State | None:
        match s:
            case ast.Let(pattern=pat, ty=ty, value=init):
                if init is None:
                    self._bind(pat, OTHER, st, ty, None)
                    return st
                val = self.value(init, st)
                self._bind(pat, val, st, ty, init)
                return st
            case ast.Assign():
                self.assign(s, st)
                return st
            case ast.ExprStmt(expr=e):
                out = self.expr_stmt(e, st)
                return out
            case ast.For(pattern=pat, iter=it, body=body):
                self.operand(it, st)
                return self.loop(body, st, pat, None)
            case ast.While(cond=cond, body=body):
                return self.loop(body, st, None, cond)
            case ast.Return(value=v):
                val = self.value(v, st) if v is not None else OTHER
                self._escape_check(val, v.span if v is not None else s.span)
                self._exit_to(0, st, s.span)
                return None
            case ast.Break() | ast.Continue():
                depth = (
                    max(i for i, sc in enumerate(self.scopes) if sc.loop is not None)
                    if any(sc.loop for sc in self.scopes)
                    else None
                )
                if depth is None:
                    return None  # outside a loop: the type checker reports it
                out = self._exit_to(depth, st, s.span)
                lp = self.scopes[depth].loop
                assert lp is not None
                (lp.breaks if isinstance(s, ast.Break) else lp.continues).append(out)
                return None
            case _:
                assert_never(s)

    def expr_stmt(self, e: ast.Expr, st: State) -> State | None:
        match e:
            case ast.If() | ast.Block() | ast.UnsafeBlock():
                out = self.control(e, st, value=False)
                return out[0] if out is not None else None
            case _:
                val = self.operand(e, st)
                if self.graphs and val.kind is Kind.OP:
                    for alt in val.alts:
                        if isinstance(alt, OpVal):
                            self.run_op(alt, st, e.span, None)
                self._discard(val, st, e.span)
                return st

    def _discard(self, val: Val, st: State, span: Span) -> None:
        """A value computed and thrown away: temporaries' handles and graphs end now."""
        if val.place is not None:
            return
        for alt in val.alts:
            if isinstance(alt, HandleVal):
                self._drop_handle(alt.token, st, span, None, "dropped")
            elif isinstance(alt, GraphVal):
                st.captures = frozenset(c for c in st.captures if c.token is not alt.token)

    def _escape_check(
        self, val: Val, span: Span, how: str = "returned", st: State | None = None
    ) -> None:
        if val.kind in (Kind.HANDLE, Kind.GRAPH):
            if st is not None:  # reported once here; its borrows end with it
                toks = {a.token for a in val.alts if isinstance(a, (HandleVal, GraphVal))}
                st.loans = frozenset(ln for ln in st.loans if ln.token not in toks)
                st.captures = frozenset(c for c in st.captures if c.token not in toks)
            what = "launch handle" if val.kind is Kind.HANDLE else "graph"
            d = Diagnostic.error(
                codes.HANDLE_ESCAPES,
                f"a {what} cannot be {how}: it must stay in the function that created it",
            ).primary(span, f"this {what} is {how} here")
            d = d.note(
                "the ownership checker follows borrows within one function; a "
                "caller could not know which tensors are still in use"
            )
            d = d.with_help(
                "wait for the launch inside the function, and return the tensor instead"
                if val.kind is Kind.HANDLE
                else "build and replay the graph in one function"
            )
            self.report(d)

    def _bind(
        self, pat: ast.Pattern, val: Val, st: State, ty: ast.TypeExpr | None, init: ast.Expr | None
    ) -> None:
        match pat:
            case ast.NamePat(name=n, mutable=m):
                kind = val.kind
                if kind is Kind.OTHER and ty is not None:
                    kind, _ = type_kind(ty)
                if kind is Kind.OTHER and init is not None:
                    kind = self.view.kind_of(init) or Kind.OTHER
                if kind is Kind.OTHER:
                    # e.g. a tuple element: the type checker knows the binding's type
                    bk = self.view.binding_kind(pat)
                    if bk in (Kind.TENSOR, Kind.HANDLE, Kind.GRAPH):
                        kind = bk
                if kind is Kind.REF and not val.alts:
                    kind = Kind.OTHER
                v = self._var(pat, n.name, n.span, kind, m)
                self._declare(v)
                st.moved.pop(v, None)
                if val.alts:
                    st.values[v] = val.alts
                else:
                    st.values.pop(v, None)
            case ast.TuplePat(elems=elems):
                parts: list[Val] = [OTHER] * len(elems)
                if isinstance(init, ast.TupleExpr) and len(init.elems) == len(elems):
                    # The elements were evaluated (and moved) by `value`; rebuild per element.
                    parts = [self._shallow(x, st) for x in init.elems]
                for p, part in zip(elems, parts, strict=True):
                    self._bind(p, part, st, None, None)
            case ast.WildcardPat():
                self._discard(val, st, pat.span)
            case _:
                assert_never(pat)

    def _shallow(self, e: ast.Expr, st: State) -> Val:
        """The kind of an already evaluated tuple element, without new checks."""
        if isinstance(e, ast.Name):
            v = self.lookup(e.ident.name)
            if v is not None and v.kind in (Kind.TENSOR, Kind.HANDLE, Kind.GRAPH):
                return Val(v.kind)
        k = self.view.kind_of(e)
        return Val(k) if k in (Kind.TENSOR,) else OTHER

    def assign(self, s: ast.Assign, st: State) -> None:
        target = s.target
        # Loans of the handle being overwritten, taken before the right-hand side
        # runs: in a loop, a new launch at the same site has the same token.
        old = self.lookup(target.ident.name) if isinstance(target, ast.Name) else None
        pre: list[Loan] = []
        if old is not None and old.kind is Kind.HANDLE and old not in st.moved:
            toks = {a.token for a in st.values.get(old, frozenset()) if isinstance(a, HandleVal)}
            pre = [ln for ln in st.loans if ln.token in toks]
        val = self.value(s.value, st) if s.op == "=" else self.operand(s.value, st)
        if isinstance(target, ast.Name):
            v = self.lookup(target.ident.name)
            if v is None:
                return
            if s.op == "=" and v.kind is Kind.OTHER and val.kind is not Kind.OTHER:
                v.kind = val.kind  # `let h;` declared without a value, typed by its first one
            if s.op != "=":
                if v.kind is Kind.TENSOR:
                    self.check_use(v, "write", target.span, st)
                return
            if v.kind is Kind.TENSOR:
                self.check_use(v, "assign", target.span, st)
            elif v.kind is Kind.HANDLE and pre:
                self._report_dropped(pre, target.span, v.name, "overwritten")
                # The old launch is reported; forget its borrows (a new launch at the
                # same site, in a loop, keeps its own).
                new = {a.token for a in val.alts if isinstance(a, HandleVal)}
                gone = {ln.token for ln in pre} - new
                st.loans = frozenset(ln for ln in st.loans if ln.token not in gone)
            elif v.kind is Kind.GRAPH:
                self._drop(v, st, target.span, "overwritten")
            st.moved.pop(v, None)
            if val.alts:
                st.values[v] = val.alts
            else:
                st.values.pop(v, None)
        else:
            self.operand(target, st)

    def loop(
        self, body: ast.Block, entry: State, pat: ast.Pattern | None, cond: ast.Expr | None
    ) -> State | None:
        head = entry.copy()
        lp = _Loop()
        for _ in range(_MAX_LOOP_ROUNDS):
            lp.breaks.clear()
            lp.continues.clear()
            cur = head.copy()
            if cond is not None:
                self.operand(cond, cur)
            scope = _Scope(loop=lp)
            self.scopes.append(scope)
            try:
                if pat is not None:
                    self._bind(pat, OTHER, cur, None, None)
                out = self.block(body, cur, value=False)
                end = out[0] if out is not None else None
                if end is not None:
                    self._exit_scope(scope, end, _closing(body.span))
            finally:
                self.scopes.pop()
            nxt = State.join([head, end, *lp.continues])
            assert nxt is not None
            if nxt.same(head):
                break
            head = nxt
        exit_ = State.join([head, *lp.breaks])
        return exit_

    # -- expressions ------------------------------------------------------------
    def value(self, e: ast.Expr, st: State) -> Val:
        """Evaluate `e` where its value is kept: a tensor or handle named here moves."""
        if isinstance(e, ast.Name):
            v = self.lookup(e.ident.name)
            if v is None:
                return OTHER
            if v.kind is Kind.TENSOR:
                if v.is_ref:
                    self.check_use(v, "read", e.span, st)
                    return Val(Kind.REF, frozenset((RefVal(v, v.mutable, e.span),)))
                self.check_use(v, "move", e.span, st)
                st.moved[v] = frozenset((e.span,))
                return Val(Kind.TENSOR, place=None)
            if v.kind in (Kind.HANDLE, Kind.GRAPH):
                if v in st.moved:
                    self._report_moved(v, "move", e.span, st.moved[v])
                alts = st.values.get(v, frozenset())
                st.moved[v] = frozenset((e.span,))
                return Val(v.kind, alts)
            return Val(v.kind, st.values.get(v, frozenset()), v)
        if isinstance(e, (ast.Block, ast.If, ast.UnsafeBlock)):
            out = self.control(e, st, value=True)
            return out[1] if out is not None else OTHER
        if isinstance(e, (ast.TupleExpr, ast.ArrayExpr)):
            for x in e.elems:
                val = self.value(x, st)
                if val.kind in (Kind.HANDLE, Kind.GRAPH):
                    self._escape_check(
                        val,
                        x.span,
                        "put in a tuple" if isinstance(e, ast.TupleExpr) else "put in an array",
                        st,
                    )
            return OTHER
        return self.operand(e, st)

    def control(self, e: ast.Expr, st: State, *, value: bool) -> tuple[State, Val] | None:
        """Blocks and `if`: returns the state after and the value; mutates nothing
        in `st` when a branch diverges (the join is built from copies)."""
        match e:
            case ast.Block():
                out = self.block(e, st.copy(), value=value)
            case ast.UnsafeBlock(body=body):
                out = self.block(body, st.copy(), value=value)
            case ast.If(cond=c, then=t, else_=els):
                self.operand(c, st)
                a = self.block(t, st.copy(), value=value)
                b: tuple[State, Val] | None = (st.copy(), OTHER)
                if els is not None:
                    b = self.control(els, st.copy(), value=value)
                states = [x[0] for x in (a, b) if x is not None]
                vals = [x[1] for x in (a, b) if x is not None]
                joined = State.join(list(states))
                if joined is None:
                    out = None
                else:
                    kind = next((v.kind for v in vals if v.kind is not Kind.OTHER), Kind.OTHER)
                    alts: frozenset[AbsVal] = frozenset().union(*(v.alts for v in vals))
                    out = (joined, Val(kind, alts))
            case _:
                raise AssertionError(e)
        if out is None:
            return None
        # Write the result back into the caller's state object.
        st.moved, st.loans, st.captures, st.values = (
            out[0].moved,
            out[0].loans,
            out[0].captures,
            out[0].values,
        )
        return st, out[1]

    def operand(self, e: ast.Expr, st: State) -> Val:
        """Evaluate `e` as an operand: tensors are read, never moved."""
        match e:
            case ast.IntLit() | ast.FloatLit() | ast.BoolLit() | ast.StrLit() | ast.Path():
                return OTHER
            case ast.Name(ident=i):
                v = self.lookup(i.name)
                if v is None:
                    return OTHER
                if v.kind is Kind.TENSOR:
                    self.check_use(v, "read", e.span, st)
                    return Val(Kind.TENSOR, place=v)
                if v.kind in (Kind.HANDLE, Kind.GRAPH) and v in st.moved:
                    self._report_moved(v, "read", e.span, st.moved[v])
                return Val(v.kind, st.values.get(v, frozenset()), v)
            case ast.Call():
                return self.call(e, st)
            case ast.MethodCall():
                return self.method(e, st)
            case ast.Field(receiver=r) | ast.Index(receiver=r):
                self.operand(r, st)
                if isinstance(e, ast.Index):
                    self.operand(e.index, st)
                return OTHER
            case ast.Unary(operand=x):
                return self._tensorish(self.operand(x, st), st, e.span, e)
            case ast.Binary(lhs=a, rhs=b):
                va = self._tensorish(self.operand(a, st), st, a.span)
                vb = self._tensorish(self.operand(b, st), st, b.span)
                k = Kind.TENSOR if Kind.TENSOR in (va.kind, vb.kind) else Kind.OTHER
                return Val(self.view.kind_of(e) or k) if k is Kind.OTHER else Val(k)
            case ast.Cast(expr=x):
                return self._tensorish(self.operand(x, st), st, x.span, e)
            case ast.Ref(mutable=m, expr=x):
                return self.ref(m, x, e.span, st)
            case ast.TupleExpr() | ast.ArrayExpr():
                for x in e.elems:
                    self.operand(x, st)
                return OTHER
            case ast.RangeExpr(start=a, end=b):
                self.operand(a, st)
                self.operand(b, st)
                return OTHER
            case ast.Block() | ast.If() | ast.UnsafeBlock():
                out = self.control(e, st, value=False)
                return out[1] if out is not None else OTHER
            case ast.GraphBlock(body=b):
                return self.graph(e, b, st)
            case _:
                assert_never(e)

    def _tensorish(self, v: Val, st: State, span: Span, node: ast.Expr | None = None) -> Val:
        """An operand of host arithmetic: a reference operand is a read of its target."""
        self._consume_refs(v, st, span, write=False)
        if v.kind in (Kind.TENSOR, Kind.REF):
            return Val(Kind.TENSOR)
        if node is not None:
            k = self.view.kind_of(node)
            if k is Kind.TENSOR:
                return Val(k)
        return OTHER

    def _consume_refs(self, v: Val, st: State, span: Span, *, write: bool) -> None:
        for alt in v.alts:
            if isinstance(alt, RefVal):
                self.check_use(alt.var, "write" if write and alt.mutable else "read", span, st)
            elif isinstance(alt, PartVal):
                self.check_use(alt.var, "write" if write else "read", span, st)

    def ref(self, mutable: bool, x: ast.Expr, span: Span, st: State) -> Val:
        if not isinstance(x, ast.Name):
            self.operand(x, st)
            return OTHER
        v = self.lookup(x.ident.name)
        if v is None:
            return OTHER
        if v.kind is Kind.REF:
            alts = frozenset(a for a in st.values.get(v, frozenset()) if isinstance(a, RefVal))
            return Val(Kind.REF, alts)
        if v.kind is not Kind.TENSOR:
            return OTHER
        if v in st.moved:
            self._report_moved(v, "read", x.span, st.moved[v])
        if mutable and not v.mutable:
            self._report_immutable(v, span, "borrow", st)
        return Val(Kind.REF, frozenset((RefVal(v, mutable, span),)))

    def _report_immutable(self, v: Var, span: Span, what: str, st: State) -> None:
        if what == "partition":
            msg = f"cannot partition `{v.name}` for writing, as it is not declared as mutable"
            label = "`.partition` borrows the tensor mutably"
        else:
            msg = f"cannot borrow `{v.name}` as mutable, as it is not declared as mutable"
            label = "cannot borrow as mutable"
        d = Diagnostic.error(codes.MUT_USE_OF_IMMUTABLE, msg).primary(span, label)
        if v.is_ref:
            d = d.secondary(
                v.span, f"`{v.name}` is a `&` reference, so the data it refers to cannot be written"
            )
            d = d.with_help(f"make the parameter `&mut`: `{v.name}: &mut Tensor<..>`")
        else:
            d = d.secondary(v.span, f"`{v.name}` is declared here without `mut`")
            d = d.with_help(f"consider making this binding mutable: `mut {v.name}`")
        self.report(d)

    # -- calls ------------------------------------------------------------------
    def call(self, e: ast.Call, st: State) -> Val:
        decl = self.view.callee(e)
        if decl is not None and decl.is_kernel:
            return self.kernel_call(e, decl, st)
        if decl is not None:
            return self.host_call(e, decl, st)
        name = e.callee.ident.name if isinstance(e.callee, ast.Name) else e.callee.segments[-1].name
        for a in e.args:
            v = self.operand(a.value, st)
            self._consume_refs(v, st, a.value.span, write=True)
        if name in TENSOR_CONSTRUCTORS:
            return Val(Kind.TENSOR)
        k = self.view.kind_of(e)
        return Val(k) if k is Kind.TENSOR else OTHER

    def host_call(self, e: ast.Call, decl: ast.FnDecl, st: State) -> Val:
        borrows: list[Borrow] = []
        for i, a in enumerate(e.args):
            p = decl.params[i] if i < len(decl.params) else None
            if p is not None and isinstance(p.ty, ast.RefType):
                v = self.operand(a.value, st)
                if v.place is not None and v.place.kind is Kind.TENSOR:
                    # a `&`/`&mut` parameter of the caller passed on as is
                    self.check_use(v.place, "write" if p.ty.mutable else "read", a.value.span, st)
                    borrows.append(Borrow(v.place, p.ty.mutable, a.value.span, p.name.name))
                self._consume_refs(v, st, a.value.span, write=p.ty.mutable)
                borrows.extend(
                    Borrow(r.var, r.mutable and p.ty.mutable, a.value.span, p.name.name)
                    for r in v.alts
                    if isinstance(r, RefVal)
                )
            else:
                v = self.value(a.value, st)
                self._escape_check(v, a.value.span, "passed to a function", st)
                self._consume_refs(v, st, a.value.span, write=False)
        # The callee may launch kernels on its parameters: the same tensor as
        # `&mut` and as anything else would alias inside it, as in one launch.
        self._check_launch_aliasing(e, borrows, what="call")
        if self.graphs:
            # A host fn called while a graph records may launch on its arguments.
            g = self.graphs[-1]
            st.captures |= frozenset(Capture(g, b.var, b.mutable, b.span) for b in borrows)
        kind, _ = type_kind(decl.ret)
        if kind is Kind.TENSOR and not isinstance(decl.ret, ast.RefType):
            return Val(Kind.TENSOR)
        return OTHER

    def kernel_call(self, e: ast.Call, decl: ast.FnDecl, st: State) -> Val:
        borrows: list[Borrow] = []
        for i, a in enumerate(e.args):
            p = decl.params[i] if i < len(decl.params) else None
            pkind, pmut = type_kind(p.ty) if p is not None else (Kind.OTHER, False)
            v = (
                self.operand(a.value, st)
                if not isinstance(a.value, ast.Name)
                else self._name_no_use(a.value, st)
            )
            pname = p.name.name if p is not None else f"#{i}"
            if pkind is not Kind.TENSOR:
                continue
            parts = [x for x in v.alts if isinstance(x, PartVal)]
            refs = [x for x in v.alts if isinstance(x, RefVal)]
            if pmut:
                if parts:
                    for pv in parts:
                        borrows.append(Borrow(pv.var, True, a.value.span, pname))
                    continue
                target = [r.var for r in refs] + (
                    [v.place] if v.place and v.place.kind is Kind.TENSOR else []
                )
                for t in target:
                    assert p is not None
                    self._report_no_partition(t, a.value.span, p, decl)
                    borrows.append(Borrow(t, True, a.value.span, pname))
            else:
                for r in refs:
                    borrows.append(Borrow(r.var, False, a.value.span, pname))
                for pv in parts:
                    borrows.append(Borrow(pv.var, True, a.value.span, pname))
                if v.place is not None and v.place.kind is Kind.TENSOR:
                    borrows.append(Borrow(v.place, False, a.value.span, pname))
        self._check_launch_aliasing(e, borrows)
        return Val(Kind.OP, frozenset((OpVal(decl.name.name, tuple(borrows), e.span),)))

    def _name_no_use(self, e: ast.Name, st: State) -> Val:
        v = self.lookup(e.ident.name)
        if v is None:
            return OTHER
        if v.kind is Kind.TENSOR:
            if v in st.moved:
                self._report_moved(v, "read", e.span, st.moved[v])
            return Val(Kind.TENSOR, place=v)
        return Val(v.kind, st.values.get(v, frozenset()), v)

    def _report_no_partition(self, t: Var, span: Span, p: ast.Param, decl: ast.FnDecl) -> None:
        d = (
            Diagnostic.error(
                codes.MUT_TENSOR_WITHOUT_PARTITION,
                f"mutable tensor `{t.name}` passed to kernel `{decl.name.name}` "
                "without `.partition(...)`",
            )
            .primary(span, "every block of the launch would write all of it")
            .secondary(p.span, f"`{p.name.name}` is a `&mut` parameter: each block gets one tile")
        )
        d = d.with_help(f"split it into tiles, e.g. `{t.name}.partition([1024])`")
        self.report(d)

    def _check_launch_aliasing(
        self, e: ast.Call, borrows: list[Borrow], what: str = "launch"
    ) -> None:
        for j, b in enumerate(borrows):
            for a in borrows[:j]:
                if a.var is b.var and (a.mutable or b.mutable) and a.span != b.span:
                    how = "mutably" if b.mutable else "as shared"
                    d = (
                        Diagnostic.error(
                            codes.CONFLICTING_BORROWS_IN_LAUNCH,
                            f"cannot pass `{b.var.name}` {how} because it is "
                            f"also passed {'mutably' if a.mutable else 'as shared'}"
                            f" to the same {what}",
                        )
                        .primary(b.span, f"`{b.var.name}` passed again here")
                        .secondary(
                            a.span,
                            f"first {'mutable' if a.mutable else 'shared'} "
                            f"borrow of `{b.var.name}` here",
                        )
                    )
                    d = d.note(
                        "the kernel would read and write the same memory through two "
                        "parameters; blocks could race on it"
                    )
                    d = d.with_help(
                        f"pass a copy instead: `&{b.var.name}.clone()`, or use separate tensors"
                    )
                    self.report(d)
                    break

    def method(self, e: ast.MethodCall, st: State) -> Val:
        m = e.method.name
        if m == "partition":
            rexpr = e.receiver
            for a in e.args:
                self.operand(a.value, st)
            while isinstance(rexpr, (ast.Field, ast.Index)):
                rexpr = rexpr.receiver  # `pair.0.partition(..)` borrows all of `pair`
            if isinstance(rexpr, ast.Name):
                var = self.lookup(rexpr.ident.name)
                if var is not None and var.kind is Kind.TENSOR:
                    if var in st.moved:
                        self._report_moved(var, "read", rexpr.span, st.moved[var])
                    if not var.mutable:
                        self._report_immutable(var, e.span, "partition", st)
                    shape = e.args[0].value if e.args else None
                    return Val(Kind.PARTITION, frozenset((PartVal(var, e.span, shape),)))
                if var is not None and var.kind is Kind.REF:
                    alts = frozenset(
                        PartVal(r.var, e.span, e.args[0].value if e.args else None)
                        for r in st.values.get(var, frozenset())
                        if isinstance(r, RefVal)
                    )
                    return Val(Kind.PARTITION, alts)
            self.operand(rexpr, st)
            return OTHER
        if m in METADATA_METHODS and isinstance(e.receiver, ast.Name):
            mv = self.lookup(e.receiver.ident.name)
            if mv is not None and mv.kind is Kind.TENSOR:
                if mv in st.moved:
                    self._report_moved(mv, "read", e.receiver.span, st.moved[mv])
                return OTHER
        recv = self.operand(e.receiver, st)
        for a in e.args:
            v = self.operand(a.value, st)
            self._consume_refs(v, st, a.value.span, write=False)
        if m in ("sync", "launch") and recv.kind is Kind.OP:
            token = e if m == "launch" else None
            for alt in recv.alts:
                if isinstance(alt, OpVal):
                    self.run_op(alt, st, e.span, token)
            if token is not None:
                return Val(Kind.HANDLE, frozenset((HandleVal(token),)))
            return OTHER
        if m == "wait" and recv.kind is Kind.HANDLE:
            htokens = {a.token for a in recv.alts if isinstance(a, HandleVal)}
            self.waits[e] = tuple(htokens)
            st.loans = frozenset(ln for ln in st.loans if ln.token not in htokens)
            return OTHER
        if m == "replay" and recv.kind is Kind.GRAPH:
            gtokens = {a.token for a in recv.alts if isinstance(a, GraphVal)}
            for cap in sorted(st.captures, key=lambda c: c.arg.start):
                if cap.token in gtokens and cap.var not in st.moved:
                    self.check_use(
                        cap.var,
                        "borrow",
                        e.span,
                        st,
                        kernel="the graph",
                        mutable_borrow=cap.mutable,
                    )
            return OTHER
        if recv.kind in (Kind.TENSOR, Kind.REF):
            self._consume_refs(recv, st, e.receiver.span, write=False)
            if m in TENSOR_METHODS:
                return Val(Kind.TENSOR)
        k = self.view.kind_of(e)
        return Val(k) if k is Kind.TENSOR else OTHER

    def run_op(self, op: OpVal, st: State, span: Span, token: ast.MethodCall | None) -> None:
        """`.sync()` (token None) or `.launch()` of an operation, or its recording in a graph."""
        for b in op.borrows:
            if b.var in st.moved:
                # Reported already if the argument itself named the moved tensor.
                if not any(
                    u is b.var and b.span.start <= s.start and s.end <= b.span.end
                    for u, s in self._moved_uses
                ):
                    self._report_moved(b.var, "read", b.span, st.moved[b.var])
                continue
            self.check_use(b.var, "borrow", b.span, st, kernel=op.kernel, mutable_borrow=b.mutable)
        if token is not None:
            st.loans |= frozenset(
                Loan(token, b.var, b.mutable, b.span, op.kernel) for b in op.borrows
            )
        if self.graphs:
            g = self.graphs[-1]
            st.captures |= frozenset(Capture(g, b.var, b.mutable, b.span) for b in op.borrows)

    def graph(self, e: ast.GraphBlock, body: ast.Block, st: State) -> Val:
        self.graphs.append(e)
        try:
            out = self.control(body, st, value=False)
        finally:
            self.graphs.pop()
        del out
        return Val(Kind.GRAPH, frozenset((GraphVal(e),)))


def check_host(view: ProgramView, sink: DiagnosticSink) -> dict[object, tuple[object, ...]]:
    """Check every host function of the root module; returns the `waits` table."""
    waits: dict[object, tuple[object, ...]] = {}
    kernel_reachable = _device_fns(view)
    for fn in view.root_fns():
        if fn.is_kernel or fn.name.name in kernel_reachable:
            continue
        checker = HostChecker(view, sink)
        checker.check_fn(fn)
        waits.update(checker.waits)
    return waits


def _device_fns(view: ProgramView) -> set[str]:
    """Names of fns called (transitively) from kernels and never from host fns:
    those are device functions, checked by the kernel checker instead."""
    from tilelang.ownership.kernel import called_names

    device: set[str] = set()
    todo = [f for f in view.all_fns() if f.is_kernel]
    while todo:
        f = todo.pop()
        for n in called_names(f.body):
            d = view.fns.get(n)
            if d is not None and not d.is_kernel and n not in device:
                device.add(n)
                todo.append(d)
    host_called: set[str] = set()
    for f in view.root_fns():
        if not f.is_kernel and f.name.name not in device:
            host_called |= called_names(f.body)
    return device - host_called
