"""Expressions of the host ownership checker: what each one evaluates to.

`HostExprs` is the part of `HostChecker` that turns an expression into an
abstract value (`values.AVal`) and checks the uses it makes on the way:

  - `value(e)`: `e` is kept (a `let`, an assignment, a by-value argument, a
    returned value, a tuple element): an affine place named here (an owned
    tensor, a handle, a graph, a tuple holding one) is moved;
  - `operand(e)`: `e` is read in place (arithmetic, a method receiver, a
    builtin's argument): a tensor place is read, and the result keeps an
    `At(place)` atom so that `&{ a }`, `&if c { a } else { b }` and
    `(a, b).0` still name the place they use;
  - `ref(e)`: `&e` / `&mut e`: a `RefTo` on every place `e` may denote.

A place expression is a variable or a tuple field of one (`t.0.1`); any
other expression yields a temporary that no other name can reach.

Entry points: `HostExprs.value`, `HostExprs.operand`, `HostExprs.check_use`.
"""

from __future__ import annotations

from typing import Any, assert_never

from tilelang.ownership.env import holds, is_affine, is_tensor, is_tensor_ref, tuple_elems
from tilelang.ownership.host_report import HostReports
from tilelang.ownership.values import (
    EMPTY,
    At,
    AVal,
    GraphVal,
    HandleVal,
    PartOf,
    Place,
    RefTo,
    State,
)
from tilelang.source import Span
from tilelang.syntax import ast


def place_type(place: Place) -> object:
    ty = place.var.ty
    for i in place.path:
        elems = tuple_elems(ty)
        if elems is None or i >= len(elems):
            return None
        ty = elems[i]
    return ty


def _arity(ty: object) -> int:
    elems = tuple_elems(ty)
    return len(elems) if elems is not None else 0


def _what(ty: object) -> str:
    """How a message names a moved value of type `ty`."""
    name = type(ty).__name__
    return {"HandleT": "handle", "GraphT": "graph"}.get(name, "value")


class HostExprs(HostReports):
    # Provided by the statement walker and the call checker (host.py, host_calls.py).
    view: Any

    def call(self, e: ast.Call, st: State) -> AVal: ...
    def method(self, e: ast.MethodCall, st: State) -> AVal: ...
    def graph(self, e: ast.GraphBlock, st: State) -> AVal: ...
    def control(self, e: ast.Expr, st: State, mode: str) -> tuple[State, AVal] | None: ...

    # -- places ---------------------------------------------------------------------
    def place_of(self, e: ast.Expr) -> Place | None:
        match e:
            case ast.Name(ident=i):
                v = self.lookup(i.name)
                return Place(v) if v is not None else None
            case ast.Field(receiver=r, field=f) if f.name.isdigit():
                p = self.place_of(r)
                return p.child(int(f.name)) if p is not None else None
        return None

    def place_value(self, place: Place, st: State) -> AVal:
        """What reading `place` in place gives: `At` for its tensors, the stored
        references, partitions, operations, handles and graphs for the rest."""
        return self._shape(place, place_type(place), st.values.get(place.var, EMPTY).at_path(place.path))

    def _shape(self, place: Place, ty: object, stored: AVal) -> AVal:
        if is_tensor(ty):
            return AVal.of(At(place))
        elems = tuple_elems(ty)
        if elems is not None:
            return AVal.tuple_of(
                [self._shape(place.child(i), t, stored.field(i)) for i, t in enumerate(elems)]
            )
        return stored

    # -- uses ---------------------------------------------------------------------------
    def check_moved(self, place: Place, span: Span, st: State) -> bool:
        """Report a use of a moved place; True when it was moved."""
        hit = st.moved_over(place)
        if hit is None:
            return False
        moved, spans = hit
        self.report_moved(place, _what(place_type(moved)), span, moved, spans)
        return True

    def check_use(
        self,
        place: Place,
        mode: str,
        span: Span,
        st: State,
        *,
        kernel: str | None = None,
        mutable_borrow: bool = False,
        unsafe: str | None = None,
        atomic: str = "",
    ) -> None:
        """Check one use of a place.

        mode: "read", "write", "move", "assign" (drops the old value), "drop",
        "borrow" (by a launch or sync of `kernel`, `mutable_borrow` saying how;
        `unsafe`: the `&` parameter it writes in `unsafe` code, if that is why;
        `atomic`: with atomics of this one kind only, e.g. `"atomic_add"`).
        """
        if mode == "drop":
            if place in st.moved:
                return
        elif mode == "assign" and not place.path:
            pass  # assigning re-initialises a moved variable and drops nothing moved
        elif self.check_moved(place, span, st):
            return
        if not holds(place_type(place), ("TensorT",)):
            return
        writes = mode in ("write", "move", "assign", "drop") or (
            mode == "borrow" and mutable_borrow
        )
        for ln in sorted(st.loans, key=lambda ln: (ln.arg.start, ln.mutable)):
            if not ln.place.overlaps(place) or not (writes or ln.mutable):
                continue
            if atomic and ln.atomic == atomic:
                continue  # two launches that only update it with atomics of one kind (they commute)
            if mode in ("drop", "assign") and st.moved_over(ln.place) is not None:
                continue  # that part was moved out (and reported then)
            self.report_conflict(place, mode, span, ln, st, kernel, mutable_borrow, unsafe, atomic)
            break
        if mode in ("move", "assign", "drop"):
            for cap in st.captures:
                if cap.place.overlaps(place) and st.moved_over(cap.place) is None:
                    self.report_captured(place, mode, span, cap, st)
                    break

    def consume(self, v: AVal, st: State, span: Span, *, write: bool) -> None:
        """A value used by a builtin or a host operation: its references and
        partitions read (or write) what they point to."""
        for a in v.all_atoms():
            if isinstance(a, RefTo):
                self.check_use(a.place, "write" if write and a.mutable else "read", span, st)
            elif isinstance(a, PartOf):
                self.check_use(a.place, "write" if write else "read", span, st)

    def escape(self, v: AVal, span: Span, how: str, st: State) -> None:
        """A handle or graph leaving its function (or put in a tuple): E0310;
        its borrows end with it, so it is reported once."""
        toks = {a.token for a in v.all_atoms() if isinstance(a, (HandleVal, GraphVal))}
        if not toks:
            return
        st.loans = frozenset(ln for ln in st.loans if ln.token not in toks)
        st.captures = frozenset(c for c in st.captures if c.token not in toks)
        handle = any(isinstance(a, HandleVal) for a in v.all_atoms())
        self.report_escape(handle, span, how)

    # -- evaluation ------------------------------------------------------------------------
    def value(self, e: ast.Expr, st: State) -> AVal:
        """Evaluate `e` where its value is kept: an affine place named here moves."""
        place = self.place_of(e)
        if place is not None:
            ty = self.view.type_of(e)
            if ty is None:
                ty = place_type(place)
            if is_affine(ty):
                if not self.check_moved(place, e.span, st):
                    self.check_use(place, "move", e.span, st)
                whole = st.values.get(place.var, EMPTY)
                stored = whole.at_path(place.path)
                st.moved[place] = frozenset((e.span,))
                # the handles and graphs it held go with it: on this path the
                # old variable no longer owns them
                left = whole.replace(place.path, stored.without_owned(), _arity(place_type(Place(place.var))))
                if left != EMPTY:
                    st.values[place.var] = left
                else:
                    st.values.pop(place.var, None)
                return stored
            return self.operand(e, st)
        match e:
            case ast.Block() | ast.If() | ast.UnsafeBlock():
                out = self.control(e, st, "value")
                return out[1] if out is not None else EMPTY
            case ast.TupleExpr(elems=xs):
                vals = [self.value(x, st) for x in xs]
                for x, v in zip(xs, vals, strict=True):
                    self.escape(v, x.span, "put in a tuple", st)
                return AVal.tuple_of(vals)
            case ast.ArrayExpr(elems=xs):
                out = EMPTY
                for x in xs:
                    v = self.value(x, st)
                    self.escape(v, x.span, "put in an array", st)
                    out = out.join(AVal(v.all_atoms()))
                return out
        return self.operand(e, st).without_at()

    def operand(self, e: ast.Expr, st: State, *, read: bool = True) -> AVal:
        """Evaluate `e` in place: tensors are read (unless `read` is False:
        `&e`, `e.partition(..)`, a launch argument, which check later), never moved."""
        place = self.place_of(e)
        if place is not None:
            if self.check_moved(place, e.span, st):
                return self.place_value(place, st)
            if read:
                self.check_use(place, "read", e.span, st)
            return self.place_value(place, st)
        match e:
            case ast.IntLit() | ast.FloatLit() | ast.BoolLit() | ast.StrLit() | ast.Path():
                return EMPTY
            case ast.Name():
                return EMPTY  # not a variable: a constant or an item
            case ast.Call():
                return self.call(e, st)
            case ast.MethodCall():
                return self.method(e, st)
            case ast.Field(receiver=r, field=f):
                v = self.operand(r, st, read=read)
                return v.field(int(f.name)) if f.name.isdigit() else EMPTY
            case ast.Index(receiver=r, index=i):
                self.consume(self.operand(r, st), st, r.span, write=False)
                self.operand(i, st)
                return EMPTY
            case ast.Unary(operand=x) | ast.Cast(expr=x):
                self.consume(self.operand(x, st), st, x.span, write=False)
                return EMPTY
            case ast.Binary(op=op, lhs=a, rhs=b):
                self.consume(self.operand(a, st), st, a.span, write=False)
                if op in ("&&", "||"):
                    # the right-hand side may not run: join both outcomes
                    ran = st.copy()
                    self.consume(self.operand(b, ran), ran, b.span, write=False)
                    joined = State.join([st, ran])
                    assert joined is not None
                    st.assign_from(joined)
                else:
                    self.consume(self.operand(b, st), st, b.span, write=False)
                return EMPTY
            case ast.Ref():
                return self.ref(e, st)
            case ast.TupleExpr(elems=xs):
                return AVal.tuple_of([self.operand(x, st, read=read) for x in xs])
            case ast.ArrayExpr(elems=xs):
                out = EMPTY
                for x in xs:
                    out = out.join(AVal(self.operand(x, st, read=read).all_atoms()))
                return out
            case ast.RangeExpr(start=a, end=b):
                self.operand(a, st)
                self.operand(b, st)
                return EMPTY
            case ast.Block() | ast.If() | ast.UnsafeBlock():
                out = self.control(e, st, "operand" if read else "place")
                return out[1] if out is not None else EMPTY
            case ast.GraphBlock():
                return self.graph(e, st)
            case _:
                assert_never(e)

    def ref(self, e: ast.Ref, st: State) -> AVal:
        """`&x` / `&mut x`: a reference to every place `x` may denote."""
        inner = self.operand(e.expr, st, read=False)
        through_ref = is_tensor_ref(self.view.type_of(e.expr))
        out: list[RefTo] = []
        for a in inner.all_atoms():
            if isinstance(a, At) and not through_ref:
                if e.mutable and not a.place.var.mutable:
                    self.report_immutable(a.place.var, e.span, "borrow")
                out.append(RefTo(a.place, e.mutable, e.span))
            elif isinstance(a, RefTo):
                if e.mutable and not a.mutable:
                    self.report_immutable(a.place.var, e.span, "borrow")
                out.append(RefTo(a.place, e.mutable and a.mutable, e.span, a.reassigned, a.dropped))
        return AVal(frozenset(out))
