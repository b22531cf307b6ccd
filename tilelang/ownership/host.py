"""The host-side ownership checker: borrows of tensors by launches (BRIEF §6).

Flow-sensitive, intraprocedural, over each host `fn` body of every module
the program loads (a file brought in by `use` gets the same rules as the
root, and its diagnostics point into it). The analysis is a structured
dataflow pass over the AST (`if`/`else`, `for`, `while`, `break`,
`continue`, `return`), so no explicit CFG is built. The abstract `State`
(`values.py`) at a program point holds what MAY be true on some path:
moved places, live loans, graph captures, and the abstract value of each
variable. Loans are on places (a variable and a tuple-field path), and every
expression's value carries the places it may reference (`host_expr.py`), so
a borrow flows through tuples, fields, blocks, `if`, `let` patterns and
host-function parameters without being lost.

States join by union; loops iterate to a fixpoint, so a launch in a loop
body that is not waited in the same iteration meets its own loan on the next
one. Every finding is reported once however often a loop body is re-walked.

Decisions (documented in ARCHITECTURE.md and the explain files):
  - a handle that goes out of scope (end of block, `break`, `return`,
    reassignment, or a `.launch()` whose result is not bound) while its launch
    may still run is an error, E0308; `h.wait()` is idempotent;
  - handles and graphs cannot leave their function or go into a tuple
    (E0310): the analysis is intraprocedural;
  - a host function cannot return a reference to a tensor (E0311): the
    caller could not know which argument it points to;
  - host fns are checked at their call sites through their signatures: every
    `&mut` reference an argument carries is a write now, every `&` a read,
    a by-value tensor is moved.

Entry point: `check_host(view, sink) -> waits`. Invariant: the walker never
raises on a well-typed program.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, assert_never

from tilelang.diagnostics.model import DiagnosticSink
from tilelang.ownership.env import (
    ProgramView,
    holds,
    is_tensor_ref,
    tuple_elems,
    type_ast_has_ref,
)
from tilelang.ownership.host_calls import HostCalls
from tilelang.ownership.values import (
    EMPTY,
    At,
    AVal,
    GraphVal,
    HandleVal,
    Loan,
    OpVal,
    PartOf,
    Place,
    RefTo,
    State,
    Var,
)
from tilelang.source import Span
from tilelang.syntax import ast

_MAX_LOOP_ROUNDS = 32


@dataclass(slots=True)
class _Loop:
    breaks: list[State] = field(default_factory=list)
    continues: list[State] = field(default_factory=list)


@dataclass(slots=True)
class _Scope:
    vars: list[Var] = field(default_factory=list)
    names: dict[str, Var] = field(default_factory=dict)
    loop: _Loop | None = None  # set on the scope that a loop body opens


def _closing(span: Span) -> Span:
    return Span(span.file, max(span.start, span.end - 1), span.end)


class HostChecker(HostCalls):
    def __init__(
        self,
        view: ProgramView,
        sink: DiagnosticSink,
        unsafe_writes: dict[str, dict[str, str]] | None = None,
    ) -> None:
        self.view = view
        self.sink = sink
        self.unsafe_writes = unsafe_writes or {}
        self._seen: set[tuple[object, ...]] = set()
        # binding node id (or (param id, path) for a reference parameter's
        # target) -> Var, stable across loop rounds
        self._vars: dict[object, Var] = {}
        self._keep: list[object] = []  # keeps binding nodes alive while ids are keys
        self.scopes: list[_Scope] = []
        self.graphs: list[ast.GraphBlock] = []  # graph bodies being recorded
        self.waits: dict[object, tuple[object, ...]] = {}
        self._moved_uses: set[Any] = set()  # reported uses after move

    # -- entry ------------------------------------------------------------------
    def check_fn(self, info: Any) -> None:
        fn: ast.FnDecl = info.decl
        ref = type_ast_has_ref(fn.ret)
        if ref is not None:
            self.report_ref_returned(fn, ref)
        self.scopes = [_Scope()]
        st = State()
        for p, pty in zip(fn.params, tuple(info.param_types), strict=False):
            v = self._var(p, p.name.name, p.name.span, p.mutable, pty)
            self._declare(v)
            st.values[v] = self._param_refs(p, pty, ())
        out = self.block(fn.body, st, "value", fn_body=True)
        if out is not None:
            st2, val = out
            self.escape(val, fn.body.tail.span if fn.body.tail else fn.body.span, "returned", st2)
            self._exit_scope(self.scopes[0], st2, _closing(fn.body.span))

    def _param_refs(self, p: ast.Param, ty: object, path: tuple[int, ...]) -> AVal:
        """The value of a parameter: each `&`/`&mut Tensor` in its type points to
        a place of its own (the caller's tensor, never moved or dropped here)."""
        if is_tensor_ref(ty):
            name = p.name.name + "".join(f".{i}" for i in path)
            mutable = bool(getattr(ty, "mutable", False))
            target = self._var((p, path), name, p.name.span, mutable, getattr(ty, "inner", None))
            target.target = True
            return AVal.of(RefTo(Place(target), mutable, p.span))
        elems = tuple_elems(ty)
        if elems is not None:
            return AVal.tuple_of(
                [self._param_refs(p, t, (*path, i)) for i, t in enumerate(elems)]
            )
        return EMPTY

    # -- scopes and variables -----------------------------------------------------
    def _var(self, node: object, name: str, span: Span, mutable: bool, ty: object) -> Var:
        key = (id(node[0]), node[1]) if isinstance(node, tuple) else id(node)
        v = self._vars.get(key)
        if v is None:
            v = Var(name, span, mutable, ty)
            self._vars[key] = v
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

    def _exit_scope(self, scope: _Scope, st: State, end: Span) -> list[Place]:
        """Drop the scope's variables in reverse order of declaration. A tensor's partitions,
        references and the operations built on it that outer variables still hold are marked
        (`_mark_reassigned`): writing through them, or running such an operation, would write a
        tensor no name holds (round 25: `let op = { let mut w = ..; k(w.partition(..)) };
        op.sync();` lost its results without a word, where `k(zeros(..).partition(..))` is E0313).
        Returns the dropped tensors, whose marks the block's value takes too (`block`)."""
        gone: list[Place] = []
        for v in reversed(scope.vars):
            self._drop(v, st, end)
            if holds(v.ty, ("TensorT",)) and not v.target and st.moved_over(Place(v)) is None:
                _mark_reassigned(st, Place(v), end, dropped=True)
                gone.append(Place(v))
            st.forget_var(v)
        return gone

    def _exit_to(self, depth: int, st: State, end: Span) -> State:
        """Drops for a jump (`break`, `continue`, `return`) leaving scopes above `depth`."""
        st = st.copy()
        for scope in reversed(self.scopes[depth:]):
            self._exit_scope(scope, st, end)
        return st

    def _drop(self, v: Var, st: State, at: Span, how: str = "dropped") -> None:
        whole = Place(v)
        # A variable's value holds a handle or graph only on the paths where
        # it was not moved out (`HostExprs.value`), so a maybe-moved one is
        # checked too.
        atoms = [a for a in st.values.get(v, EMPTY).all_atoms() if isinstance(a, (HandleVal, GraphVal))]
        for a in sorted(atoms, key=lambda a: a.token.span.start):
            if isinstance(a, HandleVal):
                self.drop_handle(a.token, st, at, v.name, how, v)
            elif isinstance(a, GraphVal) and not st.holders(a.token, v):
                st.captures = frozenset(c for c in st.captures if c.token is not a.token)
        if whole in st.moved:
            return
        if holds(v.ty, ("TensorT",)) and not v.target:
            self.check_use(whole, "drop" if how == "dropped" else "assign", at, st)

    def drop_handle(
        self, token: ast.MethodCall, st: State, at: Span, name: str | None, how: str = "dropped",
        var: Var | None = None,
    ) -> None:
        live = [ln for ln in st.loans if ln.token is token]
        if not live:
            return
        self.report_dropped(live, at, name, how, var)
        st.loans = frozenset(ln for ln in st.loans if ln.token is not token)

    def discard(self, v: AVal, st: State, span: Span) -> None:
        """A value computed and thrown away: temporaries' handles and graphs end now."""
        for a in v.all_atoms():
            if isinstance(a, HandleVal):
                self.drop_handle(a.token, st, span, None, "dropped")
            elif isinstance(a, GraphVal):
                st.captures = frozenset(c for c in st.captures if c.token is not a.token)

    # -- blocks and control ------------------------------------------------------------
    def block(
        self,
        b: ast.Block,
        st: State,
        mode: str,
        *,
        fn_body: bool = False,
        loop: _Loop | None = None,
    ) -> tuple[State, AVal] | None:
        """Walk a block; `mode` says what its tail is: "stmt" (thrown away),
        "value" (kept), "operand" (read in place), "place" (in place, unread)."""
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
            val = EMPTY
            if b.tail is not None:
                val = self._eval(b.tail, cur, mode)
                if mode == "stmt":
                    if self.place_of(b.tail) is None:
                        self.discard(val, cur, b.tail.span)
                    val = EMPTY
            if not fn_body:
                for place in self._exit_scope(scope, cur, _closing(b.span)):
                    val = _marked(val, place, _closing(b.span), True)
            return cur, val
        finally:
            if not fn_body:
                self.scopes.pop()

    def _eval(self, e: ast.Expr, st: State, mode: str) -> AVal:
        if mode == "value":
            return self.value(e, st)
        return self.operand(e, st, read=mode != "place")

    def control(self, e: ast.Expr, st: State, mode: str) -> tuple[State, AVal] | None:
        """Blocks and `if`: returns the state after and the value; writes the
        result back into `st` (unless every branch diverges)."""
        match e:
            case ast.Block():
                out = self.block(e, st.copy(), mode)
            case ast.UnsafeBlock(body=body):
                out = self.block(body, st.copy(), mode)
            case ast.If(cond=c, then=t, else_=els):
                self.operand(c, st)
                a = self.block(t, st.copy(), mode)
                b: tuple[State, AVal] | None = (st.copy(), EMPTY)
                if els is not None:
                    b = self.control(els, st.copy(), mode)
                branches = [x for x in (a, b) if x is not None]
                joined = State.join([x[0] for x in branches])
                if joined is None:
                    out = None
                else:
                    val = EMPTY
                    for x in branches:
                        val = val.join(x[1])
                    out = (joined, val)
            case _:
                raise AssertionError(e)
        if out is None:
            return None
        st.assign_from(out[0])
        return st, out[1]

    # -- statements ---------------------------------------------------------------------
    def stmt(self, s: ast.Stmt, st: State) -> State | None:
        match s:
            case ast.Let(pattern=pat, value=init):
                self._bind(pat, self.value(init, st) if init is not None else EMPTY, st)
                return st
            case ast.Assign():
                self.assign(s, st)
                return st
            case ast.ExprStmt(expr=e):
                return self.expr_stmt(e, st)
            case ast.For(pattern=pat, iter=it, body=body):
                items = AVal(self.operand(it, st).without_at().all_atoms())
                return self.loop(body, st, pat, None, items)
            case ast.While(cond=cond, body=body):
                return self.loop(body, st, None, cond, EMPTY)
            case ast.Return(value=v):
                val = self.value(v, st) if v is not None else EMPTY
                self.escape(val, v.span if v is not None else s.span, "returned", st)
                self._exit_to(0, st, s.span)
                return None
            case ast.Break() | ast.Continue():
                loops = [i for i, sc in enumerate(self.scopes) if sc.loop is not None]
                if not loops:
                    return None  # outside a loop: the type checker reports it
                depth = max(loops)
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
                out = self.control(e, st, "stmt")
                return out[0] if out is not None else None
            case _:
                val = self.operand(e, st)
                if self.graphs:
                    for op in sorted(
                        (a for a in val.all_atoms() if isinstance(a, OpVal)),
                        key=lambda o: o.span.start,
                    ):
                        self.run_op(op, st, e.span, None)
                if self.place_of(e) is None:
                    self.discard(val, st, e.span)
                return st

    def _bind(self, pat: ast.Pattern, val: AVal, st: State) -> None:
        match pat:
            case ast.NamePat(name=n, mutable=m):
                v = self._var(pat, n.name, n.span, m, self.view.binding_type(pat))
                self._declare(v)
                st.forget_var(v)
                stored = val.without_at()
                if stored != EMPTY:
                    st.values[v] = stored
            case ast.TuplePat(elems=elems):
                for i, p in enumerate(elems):
                    self._bind(p, val.field(i), st)
            case ast.WildcardPat():
                self.discard(val, st, pat.span)
            case _:
                assert_never(pat)

    def assign(self, s: ast.Assign, st: State) -> None:
        target = s.target
        old = self.lookup(target.ident.name) if isinstance(target, ast.Name) else None
        # Loans of the handle being overwritten, taken before the right-hand side
        # runs: in a loop, a new launch at the same site has the same token.
        pre: list[Loan] = []
        if old is not None:
            # (its value holds a handle only where it was not moved out)
            toks = {a.token for a in st.values.get(old, EMPTY).all_atoms() if isinstance(a, HandleVal)}
            pre = [ln for ln in st.loans if ln.token in toks]
        if s.op != "=":
            rhs = self.operand(s.value, st)
            self.consume(rhs, st, s.value.span, write=False)
            if old is not None and holds(old.ty, ("TensorT",)):
                self.check_use(Place(old), "write", target.span, st)
            elif old is None:
                self.operand(target, st)
            return
        val = self.value(s.value, st)
        if old is None:
            self.operand(target, st)
            return
        if holds(old.ty, ("TensorT",)):
            self.check_use(Place(old), "assign", target.span, st)
            if st.moved_over(Place(old)) is None:  # a moved-out variable drops nothing (E0306 if run)
                _mark_reassigned(st, Place(old), target.span)
        if pre:
            self.report_dropped(pre, target.span, old.name, "overwritten")
            # The old launch is reported; forget its borrows (a new launch at the
            # same site, in a loop, keeps its own).
            new = {a.token for a in val.all_atoms() if isinstance(a, HandleVal)}
            gone = {ln.token for ln in pre} - new
            st.loans = frozenset(ln for ln in st.loans if ln.token not in gone)
        for a in st.values.get(old, EMPTY).all_atoms():
            if isinstance(a, GraphVal) and not st.holders(a.token, old):
                st.captures = frozenset(c for c in st.captures if c.token is not a.token)
        self._retire_moved(old, s, st)
        st.forget_var(old)
        stored = val.without_at()
        if stored != EMPTY:
            st.values[old] = stored

    def _retire_moved(self, var: Var, site: ast.Assign, st: State) -> None:
        """`a = ..` re-initialises a variable whose old value may have been
        moved (`let b = a;`): references, partitions and operations taken from
        the old `a` point to storage that now lives elsewhere, so they must
        not come to name the new `a`. They are moved to a ghost of the old
        binding, which stays moved: any use of them is a use after move."""
        moved = {p: spans for p, spans in st.moved.items() if p.var is var}
        if not moved:
            return
        ghost = self._var(("ghost", site), var.name, var.span, var.mutable, var.ty)

        def move(p: Place) -> Place:
            return Place(ghost, p.path) if p.var is var else p

        st.values = {v: _remap(val, move) for v, val in st.values.items()}
        st.loans = frozenset(
            Loan(ln.token, move(ln.place), ln.mutable, ln.arg, ln.kernel, ln.unsafe, ln.atomic)
            for ln in st.loans
        )
        st.captures = frozenset(
            type(c)(c.token, move(c.place), c.mutable, c.arg) for c in st.captures
        )
        for p, spans in moved.items():
            st.moved[move(p)] = st.moved.get(move(p), frozenset()) | spans

    def loop(
        self,
        body: ast.Block,
        entry: State,
        pat: ast.Pattern | None,
        cond: ast.Expr | None,
        items: AVal,
    ) -> State | None:
        head = entry.copy()
        lp = _Loop()
        for _ in range(_MAX_LOOP_ROUNDS):
            lp.breaks.clear()
            lp.continues.clear()
            cur = head.copy()
            leave = head  # the state when the loop ends at its head
            if cond is not None:
                self.operand(cond, cur)
                # a `while` ends after its condition ran (and came out false):
                # what the condition did (a move, an assignment) holds after it
                leave = cur.copy()
            scope = _Scope(loop=lp)
            self.scopes.append(scope)
            try:
                if pat is not None:
                    self._bind(pat, items, cur)
                out = self.block(body, cur, "stmt")
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
        return State.join([leave, *lp.breaks])


def _mark_reassigned(st: State, place: Place, span: Span, dropped: bool = False) -> None:
    """`z = ..;`: every operation built before (held in a variable, not
    yet run) that borrows the old `z` keeps the old tensor: its borrows of it
    are marked, so that running it is refused (`run_op`) rather than silently
    writing a tensor no name holds any more. So are the partitions of `z` and
    the references to it held in variables: an operation built on one later
    borrows the old tensor (`kernel_call`), and so does a host call that
    writes through one."""
    for var, v in list(st.values.items()):
        nv = _marked(v, place, span, dropped)
        if nv != v:
            st.values[var] = nv


def _marked(v: AVal, place: Place, span: Span, dropped: bool) -> AVal:
    """`v` with its operations' borrows of `place`, and its partitions of and references to it, marked as
    holding the tensor `place` had before `span` (`_mark_reassigned`)."""

    def atom(a: Any) -> Any:
        if isinstance(a, OpVal) and any(b.place.overlaps(place) and b.reassigned is None for b in a.borrows):
            return OpVal(a.kernel, tuple(replace(b, reassigned=span, dropped=dropped) if b.place.overlaps(place)
                                         and b.reassigned is None else b for b in a.borrows), a.span)
        if isinstance(a, RefTo | PartOf) and a.place.overlaps(place) and a.reassigned is None:
            # `let p = z.partition(..); z = ..;`: `p` keeps the old tensor (a launch on it is E0307)
            return replace(a, reassigned=span, dropped=dropped)
        return a

    def val(v: AVal) -> AVal:
        elems = None if v.elems is None else tuple(val(e) for e in v.elems)
        return AVal(frozenset(atom(a) for a in v.atoms), elems)

    return val(v)


def _remap(v: AVal, move: Any) -> AVal:
    """`v` with every place replaced by `move(place)`."""

    def atom(a: Any) -> Any:
        match a:
            case At(place=p):
                return At(move(p))
            case RefTo(place=p):
                return replace(a, place=move(p))
            case PartOf(place=p):
                return replace(a, place=move(p))
            case OpVal(kernel=k, borrows=bs, span=sp):
                return OpVal(k, tuple(replace(b, place=move(b.place)) for b in bs), sp)
        return a

    atoms = frozenset(atom(a) for a in v.atoms)
    elems = None if v.elems is None else tuple(_remap(e, move) for e in v.elems)
    return AVal(atoms, elems)


def check_host(
    view: ProgramView,
    sink: DiagnosticSink,
    unsafe_writes: dict[str, dict[str, str]] | None = None,
) -> dict[object, tuple[object, ...]]:
    """Check every host function of every module; returns the `waits` table.
    `unsafe_writes`: the kernel checker's `&` parameters written in `unsafe`
    code (`OwnershipFacts.unsafe_writes`), borrowed as writes by a launch."""
    waits: dict[object, tuple[object, ...]] = {}
    for info in view.host_fns():
        checker = HostChecker(view, sink, unsafe_writes)
        checker.check_fn(info)
        waits.update(checker.waits)
    return waits
