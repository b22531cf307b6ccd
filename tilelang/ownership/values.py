"""The abstract values and state of the host ownership checker.

The host checker tracks loans on *places*, not on names. A place is a
variable (one binding: a `let`, a parameter, the tensor a reference
parameter points to) and a path of tuple fields inside it (`t.0.1` is
`Place(t, (0, 1))`). Two places overlap when one is a prefix of the other.

Every expression evaluates to an abstract value, `AVal`: a set of atoms (what
the value may be, on some path) and, for a tuple, one `AVal` per element.
The atoms are

  - `At(place)`:      the tensor stored at `place`, used in place (an operand);
  - `RefTo(place)`:   a `&`/`&mut` reference to the tensor at `place`;
  - `PartOf(place)`:  `place.partition(..)`, a mutable borrow waiting for a launch;
  - `OpVal`:          a kernel call not yet run, with the borrows it will take;
  - `HandleVal`:      a launch handle (the `.launch()` call that made it);
  - `GraphVal`:       a recorded graph.

Values flow through every expression form (tuples, fields, blocks, `if`,
`let` patterns, host-function parameters), so a reference or a partition
carries its place wherever it goes. `AVal.join` is the union; a tuple joined
with a non-tuple loses its structure but keeps every atom, so a field of an
unknown value may be any atom of it (sound, never precise by accident).

`State` is what may hold at one program point: moved places, live loans,
graph captures and the value held by each variable. States join by union.
A handle or graph is owned by the variables whose value holds it: moving it
out takes it out of the old variable's value (on that path), so after a
join a variable holds it only where it was not moved. A wait (or a graph's
end) ends the loans (captures) of a token only when no other variable may
still hold that token: `let h = if c { h1 } else { h2 }; h.wait();` leaves
the other launch borrowed, held by `h1` or `h2`.

Invariant: everything here is immutable except `State`'s dicts, which the
checker copies before a branch.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tilelang.frozen import frozen
from tilelang.source import Span
from tilelang.syntax import ast


# ---------------------------------------------------------------- places
@dataclass(eq=False, slots=True)
class Var:
    """One binding; shadowing makes a new Var. `target`: the tensor a reference
    parameter points to (owned by a caller: never moved or dropped here)."""

    name: str
    span: Span
    mutable: bool
    ty: object = None  # the binding's semantic type (tilelang.sema.types), if known
    target: bool = False


@frozen(eq=True)
class Place:
    var: Var
    path: tuple[int, ...] = ()

    @property
    def name(self) -> str:
        return self.var.name + "".join(f".{i}" for i in self.path)

    def overlaps(self, other: Place) -> bool:
        if self.var is not other.var:
            return False
        n = min(len(self.path), len(other.path))
        return self.path[:n] == other.path[:n]

    def child(self, i: int) -> Place:
        return Place(self.var, (*self.path, i))


# ---------------------------------------------------------------- atoms
@frozen(eq=True)
class At:
    place: Place


@frozen(eq=True)
class RefTo:
    place: Place
    mutable: bool
    span: Span
    # where the variable it names was given a new tensor after the reference was taken:
    # the reference still names the old one (writing through it is E0307, as for an operation)
    reassigned: Span | None = None
    dropped: bool = False  # ... or where the variable was dropped, at the end of its block (round 25)


@frozen(eq=True)
class PartOf:
    place: Place
    span: Span  # the `.partition(..)` call
    reassigned: Span | None = None  # as `RefTo.reassigned`: a launch on it would write the old tensor
    dropped: bool = False  # as `RefTo.dropped`


@frozen(eq=True)
class Borrow:
    place: Place
    mutable: bool
    span: Span  # the argument
    param: str
    unsafe: bool = False  # a `&` parameter the kernel's `unsafe` code writes
    atomic: str = ""  # ... with atomics of this one kind only (`"atomic_add"`, ..)
    # where the variable it names was assigned a new tensor after the call was
    # built: the operation still holds the old one (run, it is E0307)
    reassigned: Span | None = None
    dropped: bool = False  # `reassigned` is where the variable was dropped, at the end of its block


@frozen(eq=True)
class OpVal:
    kernel: str
    borrows: tuple[Borrow, ...]
    span: Span  # the kernel call


@frozen(eq=True)
class HandleVal:
    token: ast.MethodCall  # the `.launch()` call that made it


@frozen(eq=True)
class GraphVal:
    token: ast.GraphBlock


Atom = At | RefTo | PartOf | OpVal | HandleVal | GraphVal


@frozen(eq=True)
class AVal:
    """The abstract result of an expression (see the module docstring)."""

    atoms: frozenset[Atom] = frozenset()
    elems: tuple[AVal, ...] | None = None

    @staticmethod
    def of(*atoms: Atom) -> AVal:
        return AVal(frozenset(atoms))

    @staticmethod
    def tuple_of(elems: list[AVal]) -> AVal:
        return AVal(frozenset(), tuple(elems))

    def all_atoms(self) -> frozenset[Atom]:
        if self.elems is None:
            return self.atoms
        out = set(self.atoms)
        for e in self.elems:
            out |= e.all_atoms()
        return frozenset(out)

    def field(self, i: int) -> AVal:
        if self.elems is not None and 0 <= i < len(self.elems) and not self.atoms:
            return self.elems[i]
        return AVal(self.all_atoms())

    def at_path(self, path: tuple[int, ...]) -> AVal:
        v = self
        for i in path:
            v = v.field(i)
        return v

    def replace(self, path: tuple[int, ...], new: AVal, arity: int) -> AVal:
        """This value with the element at `path` replaced (`arity`: the tuple
        size at the first step, to build the structure of an empty value)."""
        if not path:
            return new
        elems = list(self.elems) if self.elems is not None and not self.atoms else [
            AVal(self.all_atoms()) for _ in range(arity)
        ]
        i = path[0]
        if i >= len(elems):
            return self
        elems[i] = elems[i].replace(path[1:], new, 0)
        return AVal(frozenset(), tuple(elems))

    def join(self, other: AVal) -> AVal:
        if self is other or other == EMPTY:
            return self
        if self == EMPTY:
            return other
        if (
            self.elems is not None
            and other.elems is not None
            and len(self.elems) == len(other.elems)
            and not self.atoms
            and not other.atoms
        ):
            return AVal(
                frozenset(), tuple(a.join(b) for a, b in zip(self.elems, other.elems, strict=True))
            )
        return AVal(self.all_atoms() | other.all_atoms())

    def without_owned(self) -> AVal:
        """The value with its handles and graphs taken out (they moved away)."""
        atoms = frozenset(a for a in self.atoms if not isinstance(a, (HandleVal, GraphVal)))
        elems = None if self.elems is None else tuple([e.without_owned() for e in self.elems])
        return AVal(atoms, elems)

    def without_at(self) -> AVal:
        """The value as stored in a variable: `At` atoms (in-place operands) dropped."""
        atoms = frozenset(a for a in self.atoms if not isinstance(a, At))
        elems = None if self.elems is None else tuple([e.without_at() for e in self.elems])
        return AVal(atoms, elems)


EMPTY = AVal()


# ---------------------------------------------------------------- loans
@frozen(eq=True)
class Loan:
    token: ast.MethodCall  # the `.launch()` call
    place: Place
    mutable: bool
    arg: Span
    kernel: str
    unsafe: str | None = None  # the `&` parameter, when `unsafe` code writes it
    atomic: str = ""  # ... with atomics of this one kind only: another such launch may run too


@frozen(eq=True)
class Capture:
    token: ast.GraphBlock
    place: Place
    mutable: bool
    arg: Span


@dataclass(slots=True)
class State:
    moved: dict[Place, frozenset[Span]] = field(default_factory=dict)
    loans: frozenset[Loan] = frozenset()
    captures: frozenset[Capture] = frozenset()
    values: dict[Var, AVal] = field(default_factory=dict)

    def copy(self) -> State:
        return State(dict(self.moved), self.loans, self.captures, dict(self.values))

    def same(self, other: State) -> bool:
        return (
            self.moved == other.moved
            and self.loans == other.loans
            and self.captures == other.captures
            and self.values == other.values
        )

    def assign_from(self, other: State) -> None:
        self.moved, self.loans, self.captures, self.values = (
            other.moved,
            other.loans,
            other.captures,
            other.values,
        )

    def moved_over(self, place: Place) -> tuple[Place, frozenset[Span]] | None:
        """A moved place overlapping `place`, if any."""
        for p, spans in self.moved.items():
            if p.overlaps(place):
                return p, spans
        return None

    def holders(self, token: object, but: Var | None = None) -> list[Var]:
        """The variables (other than `but`) whose value may hold the handle or
        graph made at `token`."""
        return [
            v
            for v, val in self.values.items()
            if v is not but
            and any(
                isinstance(a, (HandleVal, GraphVal)) and a.token is token for a in val.all_atoms()
            )
        ]

    def forget_var(self, var: Var) -> None:
        self.values.pop(var, None)
        for p in [p for p in self.moved if p.var is var]:
            del self.moved[p]

    @staticmethod
    def join(states: list[State | None]) -> State | None:
        live = [s for s in states if s is not None]
        if not live:
            return None
        out = live[0].copy()
        for s in live[1:]:
            for p, spans in s.moved.items():
                out.moved[p] = out.moved.get(p, frozenset()) | spans
            out.loans |= s.loans
            out.captures |= s.captures
            for v, val in s.values.items():
                out.values[v] = out.values[v].join(val) if v in out.values else val
        return out
