"""Calls, methods, launches and graphs in the host ownership checker.

`HostCalls` is the part of `HostChecker` that knows what a call does to the
places its arguments name:

  - a kernel call builds an `OpVal` with one `Borrow` per tensor argument
    (a partition: mutable; a reference or a tensor: shared; a bare tensor for
    a `&mut` parameter: E0301), and refuses the same place twice when one of
    them writes (E0303);
  - `.sync()` checks the borrows against the loans in flight, `.launch()`
    also turns them into loans owned by the handle, `.wait()` ends them;
  - a host function is checked at its call site through its signature: every
    reference the arguments carry, however nested in tuples, is a read (`&`)
    or a write (`&mut`) now, a by-value argument is moved, and two arguments
    may not alias when one of them writes (E0303). Its body is checked on its
    own (`host.py`), with each reference parameter pointing to a place of its
    own;
  - a graph records the borrows of its operations as captures.

Entry points: `HostCalls.call`, `HostCalls.method`, `HostCalls.graph`.
"""

from __future__ import annotations

from typing import Any

from tilelang.ownership.env import has_tensor_ref, is_affine
from tilelang.ownership.host_expr import HostExprs
from tilelang.ownership.values import (
    EMPTY,
    At,
    AVal,
    Borrow,
    Capture,
    GraphVal,
    HandleVal,
    Loan,
    OpVal,
    PartOf,
    RefTo,
    State,
)
from tilelang.source import Span
from tilelang.syntax import ast

TENSOR_CONSTRUCTORS = frozenset(
    ("zeros", "ones", "full", "arange", "rand", "randn", "load_npy", "empty")
)
# Methods that read a tensor's shape, not its data: no conflict with a launch.
METADATA_METHODS = frozenset(("shape", "dtype", "rank"))


def _param_kind(p: ast.Param | None) -> tuple[bool, bool]:
    """(is a tensor reference parameter, is `&mut`) from a kernel parameter."""
    if p is None:
        return False, False
    ty = p.ty
    if isinstance(ty, ast.RefType) and isinstance(ty.inner, ast.NamedType):
        return ty.inner.name.name == "Tensor", ty.mutable
    return False, False


def _flat(v: AVal, pos: tuple[int, ...]) -> list[tuple[tuple[int, ...], Any]]:
    """Every atom of `v` with the position (tuple path) it sits at, sorted."""
    out = [(pos, a) for a in sorted(v.atoms, key=repr)]
    for i, e in enumerate(v.elems or ()):
        out.extend(_flat(e, (*pos, i)))
    return out


def may_be_temporary(e: ast.Expr, dropped: frozenset[str] = frozenset()) -> bool:
    """Whether the host expression `e` may evaluate to a tensor no variable
    outside it holds (a `.partition` of it would hand a kernel a copy that is
    dropped, E0313): a variable or a tuple field of one is held; an `if` or
    a block is held when every value it may give is; anything else (a call,
    a method's result, arithmetic, a cast) is a temporary. `dropped`: the
    variables of the blocks around `e` inside the expression, dropped at
    their ends (round 27: `{ let t = zeros(..); &t }` and `{ let t = ..;
    { &t } }` were held); a variable of a block bound to `&v` of a variable
    from outside it (`{ let q = &a; q }`) is `v` (it was E0313 for `a`)."""
    match e:
        case ast.Name():
            return e.ident.name in dropped
        case ast.Field(receiver=r, field=f) if f.name.isdigit():
            return may_be_temporary(r, dropped)
        case ast.Ref(expr=x):
            return may_be_temporary(x, dropped)
        case ast.If(then=t, else_=el):
            return may_be_temporary(t, dropped) or (el is not None and may_be_temporary(el, dropped))
        case ast.UnsafeBlock(body=b):
            return may_be_temporary(b, dropped)
        case ast.Block(stmts=stmts, tail=tail):
            if tail is None:
                return False  # no value: the type checker reports it
            lets = [st for st in stmts if isinstance(st, ast.Let)]
            target = _outer_ref(lets, tail)
            if target is not None:
                return may_be_temporary(target, dropped)
            local = {n for st in lets for n in _bound_names(st.pattern)}
            return may_be_temporary(tail, dropped | local)
    return True


def _outer_ref(lets: list[ast.Let], tail: ast.Expr) -> ast.Name | None:
    """`v` where the block's value `tail` is a name whose last `let` in the block binds it alone to `&v` or
    `&mut v` of a variable `v` that no earlier `let` of the block binds (`{ let q = &a; q }`: `a`)."""
    if not isinstance(tail, ast.Name):
        return None
    for i in range(len(lets) - 1, -1, -1):
        st = lets[i]
        if tail.ident.name not in _bound_names(st.pattern):
            continue
        init = st.value
        if not (isinstance(st.pattern, ast.NamePat) and isinstance(init, ast.Ref) and isinstance(init.expr, ast.Name)):
            return None
        v = init.expr
        return None if any(v.ident.name in _bound_names(x.pattern) for x in lets[:i]) else v
    return None


def written_temporaries(e: ast.Expr, dropped: frozenset[str] = frozenset()) -> list[ast.Expr]:
    """The temporaries a host function's argument `e` lends as `&mut`
    (`&mut z.clone()`, `&mut a.reshape([..])`, also in a tuple literal, a
    block's value or an `if`'s arm: `{ &mut zeros(..) }`, `{ let q = &mut
    zeros(..); q }`, round 27): the function's writes to them would be lost
    (E0313). `dropped`: as `may_be_temporary`'s."""
    match e:
        case ast.Ref(mutable=True, expr=x) if may_be_temporary(x, dropped):
            return [x]
        case ast.TupleExpr(elems=es):
            return [t for x in es for t in written_temporaries(x, dropped)]
        case ast.UnsafeBlock(body=b):
            return written_temporaries(b, dropped)
        case ast.If(then=t, else_=el):
            return written_temporaries(t, dropped) + (written_temporaries(el, dropped) if el is not None else [])
        case ast.Block(stmts=stmts, tail=tail) if tail is not None:
            lets = [st for st in stmts if isinstance(st, ast.Let)]
            if isinstance(tail, ast.Name):
                for i in range(len(lets) - 1, -1, -1):  # the tail's `let`: what it binds is what the block gives
                    if tail.ident.name in _bound_names(lets[i].pattern):
                        init = lets[i].value
                        if isinstance(lets[i].pattern, ast.NamePat) and init is not None:
                            before = {n for x in lets[:i] for n in _bound_names(x.pattern)}
                            return written_temporaries(init, dropped | before)
                        return []
            return written_temporaries(tail, dropped | {n for st in lets for n in _bound_names(st.pattern)})
    return []


def _at(b: Any, run: Span) -> Span:
    """Where a borrow of an operation is taken when it runs at `run`: its argument
    when the call builds and runs it at once (`k(z.partition(..)).sync()`); the run
    (`op.sync()`, `op.launch()`) for an operation kept in a variable, whose
    arguments were written earlier (a conflict found there pointed at the build,
    with a note about a loop the program need not have)."""
    inside = b.span.file == run.file and run.start <= b.span.start <= run.end
    return b.span if inside else run


def _bound_names(p: object) -> set[str]:
    match p:
        case ast.NamePat(name=n):
            return {n.name}
        case ast.TuplePat(elems=es):
            return {x for q in es for x in _bound_names(q)}
    return set()


class HostCalls(HostExprs):
    unsafe_writes: dict[str, dict[str, str]]
    graphs: list[ast.GraphBlock]
    waits: dict[object, tuple[object, ...]]
    _moved_uses: set[Any]

    def discard(self, v: AVal, st: State, span: Span) -> None: ...
    def drop_handle(
        self, token: ast.MethodCall, st: State, at: Span, name: str | None, how: str = "dropped",
        var: Any = None,
    ) -> None: ...

    # -- calls ------------------------------------------------------------------------
    def call(self, e: ast.Call, st: State) -> AVal:
        info = self.view.callee_info(e)
        if info is not None and info.is_kernel:
            return self.kernel_call(e, info.decl, st, self.unsafe_writes.get(info.qualname, {}))
        if info is not None:
            return self.host_call(e, info, st)
        for a in e.args:
            v = self.operand(a.value, st)
            self.consume(v, st, a.value.span, write=True)
        return EMPTY

    def host_call(self, e: ast.Call, info: Any, st: State) -> AVal:
        borrows: list[tuple[tuple[int, ...], Borrow]] = []
        ptypes = tuple(info.param_types)
        pnames = [p.name.name for p in info.decl.params]
        for i, a in enumerate(e.args):
            pty = ptypes[i] if i < len(ptypes) else None
            pname = pnames[i] if i < len(pnames) else f"#{i}"
            if pty is not None and is_affine(pty):
                v = self.value(a.value, st)
            elif pty is not None and has_tensor_ref(pty):
                v = self.operand(a.value, st, read=False)
                stale = any(isinstance(x, RefTo | PartOf) and x.reassigned is not None and (
                    isinstance(x, PartOf) or x.mutable) for _, x in _flat(v, (i,)))
                # (E0307 below names a dropped block variable; no E0313 besides for the same argument)
                for temp in [] if stale else written_temporaries(a.value):
                    self.report_write_to_temporary(temp, info.decl.name.name, pname, kernel=False)
            else:
                v = self.operand(a.value, st)
            self.escape(v, a.value.span, "passed to a function", st)
            for pos, atom in _flat(v, (i,)):
                if isinstance(atom, RefTo | PartOf) and atom.reassigned is not None and (
                        isinstance(atom, PartOf) or atom.mutable):
                    self.report_stale_write(atom, a.value.span, info.decl.name.name)
                if isinstance(atom, RefTo):
                    borrows.append((pos, Borrow(atom.place, atom.mutable, a.value.span, pname)))
                elif isinstance(atom, PartOf):
                    borrows.append((pos, Borrow(atom.place, True, a.value.span, pname)))
                elif isinstance(atom, At):
                    borrows.append((pos, Borrow(atom.place, False, a.value.span, pname)))
        for _, b in borrows:
            self.check_use(b.place, "write" if b.mutable else "read", b.span, st)
        # The callee may launch kernels on its parameters: the same tensor as
        # `&mut` and as anything else would alias inside it, as in one launch.
        self.check_aliasing(borrows, "call")
        if self.graphs:
            # A host fn called while a graph records may launch on its arguments.
            g = self.graphs[-1]
            st.captures |= frozenset(Capture(g, b.place, b.mutable, b.span) for _, b in borrows)
        return EMPTY

    def kernel_call(
        self, e: ast.Call, decl: ast.FnDecl, st: State, writes: dict[str, str] | None = None
    ) -> AVal:
        """`writes`: the `&` parameters the kernel's `unsafe` code writes
        (atomics, `store_unchecked`): borrowed mutably, like a partition;
        one updated with atomics of one kind only does not conflict with another
        such of the same kind (atomics of different kinds do not commute)."""
        writes = writes or {}
        borrows: list[tuple[tuple[int, ...], Borrow]] = []
        for i, a in enumerate(e.args):
            p = decl.params[i] if i < len(decl.params) else None
            is_tensor_param, pmut = _param_kind(p)
            v = self.operand(a.value, st, read=False)
            if not is_tensor_param or p is None:
                self.consume(v, st, a.value.span, write=False)
                continue
            pname = p.name.name
            atoms = sorted(v.all_atoms(), key=repr)
            # a partition of, or a reference to, a tensor since dropped or reassigned (round 27: a `&` reference
            # too, where `unsafe` code writes the parameter: `let r = { let t = zeros(..); &t }; tally(.., r)` put
            # the atomics into the dropped `t`); E0307 says so, and no E0313 besides for the same argument
            stale = [x for x in atoms if isinstance(x, RefTo | PartOf) and x.reassigned is not None and (
                isinstance(x, PartOf) or pname in writes or (x.mutable and pmut))]
            if pname in writes and not stale:
                given = a.value.expr if isinstance(a.value, ast.Ref) else a.value
                if may_be_temporary(given):  # `&total.clone()`: its atomics would be lost
                    self.report_write_to_temporary(given, decl.name.name, pname, kernel=True)
            parts = [x for x in atoms if isinstance(x, PartOf)]
            pos = (i,)
            for x in stale:
                self.report_stale_write(x, a.value.span, decl.name.name)
            if pmut:
                for pv in parts:
                    borrows.append((pos, Borrow(pv.place, True, a.value.span, pname)))
                if parts:
                    continue
                for x in atoms:
                    if isinstance(x, (RefTo, At)):
                        self.report_no_partition(x.place, a.value.span, p, decl)
                        borrows.append((pos, Borrow(x.place, True, a.value.span, pname)))
            else:
                for x in atoms:
                    if isinstance(x, (RefTo, At)):
                        w = pname in writes
                        if w and x.place.var.target and not x.place.var.mutable:
                            self.report_unsafe_shared(x.place, a.value.span, decl.name.name, pname)
                        how = writes.get(pname, "")
                        at = how if how.startswith("atomic_") else ""
                        borrows.append((pos, Borrow(x.place, w, a.value.span, pname, w, at)))
                    elif isinstance(x, PartOf):
                        borrows.append((pos, Borrow(x.place, True, a.value.span, pname)))
        self.check_aliasing(borrows, "launch", decl)
        return AVal.of(OpVal(decl.name.name, tuple(b for _, b in borrows), e.span))

    def check_aliasing(self, borrows: list[tuple[tuple[int, ...], Borrow]], what: str, decl: Any = None) -> None:
        """Two borrows at different positions (arguments, tuple fields of one)
        are taken together; atoms at one position are alternatives (the values
        an `if` may give), never taken together."""
        for j, (pb, b) in enumerate(borrows):
            for pa, a in borrows[:j]:
                if (
                    pa != pb
                    and a.place.overlaps(b.place)
                    and (a.mutable or b.mutable)
                    and not (a.atomic and a.atomic == b.atomic)
                ):
                    self.report_aliasing(a, b, what, decl)
                    break

    # -- methods ----------------------------------------------------------------------
    def method(self, e: ast.MethodCall, st: State) -> AVal:
        m = e.method.name
        if m == "partition":
            recv = self.operand(e.receiver, st, read=False)
            for a in e.args:
                self.operand(a.value, st)
            out: list[PartOf] = []
            for x in recv.all_atoms():
                if isinstance(x, (At, RefTo)):
                    writable = x.place.var.mutable if isinstance(x, At) else x.mutable
                    if not writable:
                        self.report_immutable(x.place.var, e.span, "partition")
                    out.append(PartOf(x.place, e.span, *((x.reassigned, x.dropped) if isinstance(x, RefTo) else ())))
            if not out or may_be_temporary(e.receiver):
                self.report_partition_of_temporary(e)
            return AVal(frozenset(out))
        if m in METADATA_METHODS:
            self.operand(e.receiver, st, read=False)
            return EMPTY
        recv = self.operand(e.receiver, st)
        for a in e.args:
            self.consume(self.operand(a.value, st), st, a.value.span, write=False)
        atoms = recv.all_atoms()
        if m in ("sync", "launch") and any(isinstance(x, OpVal) for x in atoms):
            token = e if m == "launch" else None
            # the operations a value may be (`if c { k(..) } else { k(..) }`): one of them runs, so each is
            # checked against the launches in flight before any takes its loans (round 25: the second was
            # checked against the first's, E0309 "two launches in flight" for one launch)
            ops = sorted((x for x in atoms if isinstance(x, OpVal)), key=lambda o: o.span.start)
            for x in ops:
                self.run_op(x, st, e.span, None if token is not None and not self.graphs else token)
            if token is not None and not self.graphs:
                for x in ops:
                    self.take_loans(x, st, e.span, token)
            return AVal.of(HandleVal(e)) if token is not None else EMPTY
        if m == "wait":
            htokens = {x.token for x in atoms if isinstance(x, HandleVal)}
            if htokens:
                self.waits[e] = tuple(htokens)
                place = self.place_of(e.receiver)
                me = place.var if place is not None else None
                # `h` is one of these launches (an `if` may give either); a
                # launch whose handle another variable may still hold stays
                # borrowed: that variable waits for it, or drops it (E0308)
                done = {t for t in htokens if not st.holders(t, me)}
                st.loans = frozenset(ln for ln in st.loans if ln.token not in done)
                if place is not None and not place.path:
                    # waited: `h` holds no launch in flight any more
                    left = st.values.get(place.var, EMPTY)
                    left = AVal(
                        frozenset(a for a in left.atoms if not isinstance(a, HandleVal)), left.elems
                    )
                    if left != EMPTY:
                        st.values[place.var] = left
                    else:
                        st.values.pop(place.var, None)
            return EMPTY
        if m == "replay":
            gtokens = {x.token for x in atoms if isinstance(x, GraphVal)}
            for cap in sorted(st.captures, key=lambda c: c.arg.start):
                if cap.token in gtokens and st.moved_over(cap.place) is None:
                    self.check_use(
                        cap.place, "borrow", e.span, st, mutable_borrow=cap.mutable,
                        kernel=f"graph `{e.receiver.ident.name}`" if isinstance(e.receiver, ast.Name) else "graph"
                    )
            return EMPTY
        self.consume(recv, st, e.receiver.span, write=False)
        return EMPTY

    def run_op(self, op: OpVal, st: State, span: Span, token: ast.MethodCall | None) -> None:
        """`.sync()` (token None) or `.launch()` of an operation, or its recording in a graph."""
        for b in op.borrows:
            if b.reassigned is not None and (b.mutable or not b.dropped):
                # (a dropped tensor it only reads: the operation holds it, nothing else can touch it)
                self.report_reassigned(op, b, span)
                continue
            hit = st.moved_over(b.place)
            if hit is not None:
                # Reported already if the argument itself named the moved tensor.
                if not any(
                    u.overlaps(b.place) and b.span.start <= s.start and s.end <= b.span.end
                    for u, s in self._moved_uses
                ):
                    inside = b.span.file == span.file and span.start <= b.span.start <= span.end
                    self.report_moved(b.place, "value", b.span if inside else span, hit[0], hit[1])
                continue
            if self.graphs and token is None:
                # recorded, not run (round 21: E0309 "two launches in flight" against a launch not yet waited
                # for): each replay is checked against the launches in flight then, as the Python API's is
                continue
            self.check_use(
                b.place,
                "borrow",
                _at(b, span),
                st,
                kernel=op.kernel,
                mutable_borrow=b.mutable,
                unsafe=b.param if b.unsafe else None,
                atomic=b.atomic,
            )
        if token is not None:
            self.take_loans(op, st, span, token)
        if self.graphs:
            g = self.graphs[-1]
            st.captures |= frozenset(Capture(g, b.place, b.mutable, _at(b, span)) for b in op.borrows)

    def take_loans(self, op: OpVal, st: State, span: Span, token: ast.MethodCall) -> None:
        """The loans of `op`'s borrows, held until the launch `token` is waited for."""
        st.loans |= frozenset(
            Loan(token, b.place, b.mutable, _at(b, span), op.kernel, b.param if b.unsafe else None, b.atomic)
            for b in op.borrows
        )

    def graph(self, e: ast.GraphBlock, st: State) -> AVal:
        self.graphs.append(e)
        try:
            self.control(e.body, st, "stmt")
        finally:
            self.graphs.pop()
        return AVal.of(GraphVal(e))
