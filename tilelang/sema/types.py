"""Semantic types of Tile and symbolic shape dimensions.

Every type is a frozen, slotted dataclass; equal types compare equal, so types
can be used as dict keys and compared with `==`.

Shape dimensions are `Dim`s: a small normalised polynomial over the const
generics in scope (`B`, `B * 2`, `N / 4`), so that `[B]` equals `[B]` and
`[2 * B]` equals `[B * 2]`. Division and remainder that cannot be folded stay
as opaque atoms (`B / 4` is not simplified to a fraction). A dimension known
only at run time (`?` in `Tensor<f32, [?]>`) is `None` in a tensor shape.

The lowering specialises one kernel per instantiation with `eval_dim` and
`subst_type`; after substitution every dim of a tile type is constant
(`Dim.const` is not None).

Invariants:
- a `Dim` never holds a zero coefficient; its terms are sorted, so structural
  equality is semantic equality for polynomials;
- `TileT.shape` dims are never None (every tile dim is a compile-time
  constant expression); `TensorT.shape` may hold None (a `?` dim) and may be
  None as a whole (rank unknown, e.g. `load_npy`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tilelang.dtypes import DType, kernel_div, trunc_div, trunc_rem
from tilelang.frozen import frozen

# ---------------------------------------------------------------- dims


@frozen(eq=True)
class DivAtom:
    """An unfoldable `num / den` (op "/") or `num % den` (op "%")."""

    op: str
    num: Dim
    den: Dim

    def __str__(self) -> str:
        def side(d: Dim) -> str:
            return str(d) if d.is_const or d.as_symbol() else f"({d})"

        return f"{side(self.num)} {self.op} {side(self.den)}"


Atom = str | DivAtom
Monomial = tuple[Atom, ...]  # sorted atoms, with repetition for powers


def _atom_key(a: Atom) -> str:
    return a if isinstance(a, str) else "~" + str(a)


@frozen(eq=True)
class Dim:
    """A normalised integer polynomial: a sum of coefficient * monomial."""

    terms: tuple[tuple[Monomial, int], ...] = ()

    # -- construction -----------------------------------------------------
    @staticmethod
    def const(value: int) -> Dim:
        return Dim((((), value),)) if value else Dim(())

    @staticmethod
    def var(name: str) -> Dim:
        return Dim((((name,), 1),))

    @staticmethod
    def _atom(atom: DivAtom) -> Dim:
        return Dim((((atom,), 1),))

    @staticmethod
    def _from(acc: dict[Monomial, int]) -> Dim:
        items = [(m, c) for m, c in acc.items() if c != 0]
        items.sort(key=lambda mc: (len(mc[0]), [_atom_key(a) for a in mc[0]]))
        return Dim(tuple(items))

    # -- queries ------------------------------------------------------------
    @property
    def const_value(self) -> int | None:
        """The value when the dim has no symbols, else None."""
        if not self.terms:
            return 0
        if len(self.terms) == 1 and self.terms[0][0] == ():
            return self.terms[0][1]
        return None

    @property
    def is_const(self) -> bool:
        return self.const_value is not None

    def symbols(self) -> set[str]:
        out: set[str] = set()
        for mono, _ in self.terms:
            for a in mono:
                if isinstance(a, str):
                    out.add(a)
                else:
                    out |= a.num.symbols() | a.den.symbols()
        return out

    def as_symbol(self) -> str | None:
        """`B` for the dim that is exactly one const generic, else None."""
        if len(self.terms) == 1:
            mono, coef = self.terms[0]
            if coef == 1 and len(mono) == 1 and isinstance(mono[0], str):
                return mono[0]
        return None

    # -- arithmetic -------------------------------------------------------
    def __add__(self, other: Dim | int) -> Dim:
        other = _dim(other)
        acc: dict[Monomial, int] = dict(self.terms)
        for m, c in other.terms:
            acc[m] = acc.get(m, 0) + c
        return Dim._from(acc)

    def __neg__(self) -> Dim:
        return Dim(tuple((m, -c) for m, c in self.terms))

    def __sub__(self, other: Dim | int) -> Dim:
        return self + (-_dim(other))

    def __mul__(self, other: Dim | int) -> Dim:
        other = _dim(other)
        acc: dict[Monomial, int] = {}
        for m1, c1 in self.terms:
            for m2, c2 in other.terms:
                m = tuple(sorted(m1 + m2, key=_atom_key))
                acc[m] = acc.get(m, 0) + c1 * c2
        return Dim._from(acc)

    def floordiv(self, other: Dim | int) -> Dim:
        """Integer division rounding toward zero (dims are non-negative)."""
        other = _dim(other)
        a, b = self.const_value, other.const_value
        if b == 0:
            raise ZeroDivisionError("division of a dimension by zero")
        if a is not None and b is not None:
            return Dim.const(trunc_div(a, b))
        if b is not None and all(c % b == 0 for _, c in self.terms):
            return Dim._from({m: c // b for m, c in self.terms})
        if self == other:
            return Dim.const(1)
        return Dim._atom(DivAtom("/", self, other))

    def mod(self, other: Dim | int) -> Dim:
        other = _dim(other)
        a, b = self.const_value, other.const_value
        if b == 0:
            raise ZeroDivisionError("remainder of a dimension by zero")
        if a is not None and b is not None:
            return Dim.const(trunc_rem(a, b))
        if b is not None and all(c % b == 0 for _, c in self.terms):
            return Dim.const(0)
        if self == other:
            return Dim.const(0)
        return Dim._atom(DivAtom("%", self, other))

    # -- display ------------------------------------------------------------
    def __str__(self) -> str:
        if not self.terms:
            return "0"
        parts: list[str] = []
        for mono, coef in reversed(self.terms):  # highest degree first, constant last
            lone = len(mono) == 1 and abs(coef) == 1  # `B / 3`, not `(B / 3)`
            names = [str(a) if isinstance(a, str) or lone else f"({a})" for a in mono]
            if not names:
                body = str(abs(coef))
            elif abs(coef) == 1:
                body = " * ".join(names)
            else:
                body = " * ".join([*names, str(abs(coef))])
            if not parts:
                parts.append(body if coef > 0 else "-" + body)
            else:
                parts.append(("+ " if coef > 0 else "- ") + body)
        return " ".join(parts)

    def __repr__(self) -> str:
        return f"Dim({self})"


def divisibility_gap(sa: Sequence[Dim | None], sb: Sequence[Dim | None],
                     broadcast: bool = False) -> tuple[Dim, Dim, int] | None:
    """(`G / 2 * 2`, `G`, 2) where two shapes of one rank differ only in dims that would be equal if a
    division `X / k` (k a constant) in them were exact: `(G / 2) * 2` against `G` (round 19: int4 nibbles
    unpacked from a [BR, G / 2] tile into [BR, 2 * (G / 2)], stored into a [BR, G] tile). The checker
    assumes no divisibility, so the fix is a generic for the quotient; None where the gap is anything else
    (`broadcast`: a dim of 1 against any other is no gap)."""
    if len(sa) != len(sb):
        return None
    found = None
    for a, b in zip(sa, sb, strict=True):
        if a is None or b is None or a == b or (broadcast and 1 in (a.const_value, b.const_value)):
            continue
        gap = None
        for x, y in ((a, b), (b, a)):
            for atom in {t for mono, _ in x.terms for t in mono if isinstance(t, DivAtom)}:
                k = atom.den.const_value
                if atom.op != "/" or k is None or k <= 1:
                    continue
                exact = Dim(())  # k * x with `num / k` read as exact
                for mono, c in x.terms:
                    if atom in mono:
                        rest = list(mono)
                        rest.remove(atom)
                        term = Dim.const(c) * atom.num
                        for r in rest:
                            term = term * (Dim.var(r) if isinstance(r, str) else Dim._atom(r))
                        exact = exact + term
                    else:
                        exact = exact + Dim((((mono), c * k),))
                if exact == y * k:
                    gap = (x, y, k)
                    break
            if gap is not None:
                break
        if gap is None:
            return None
        found = found or gap
    return found


def divisibility_help(gap: tuple[Dim, Dim, int]) -> str:
    """The help for `divisibility_gap`'s shapes."""
    x, y, k = gap
    quot = next(t for mono, _ in x.terms for t in mono if isinstance(t, DivAtom) and t.den.const_value == k)
    name = "H" if "H" not in x.symbols() | y.symbols() else "Q"
    return (f"`{x}` equals `{y}` only where `{quot.num}` is a multiple of {k}, which the checker does not "
            f"assume: make the quotient a const generic of its own, `const {name}: i32` for `{quot}`, and write "
            f"`{k} * {name}` where `{quot.num}` was (both sides then read `{k} * {name}`)")


def generic_constant_gap(sa: Sequence[Dim | None], sb: Sequence[Dim | None],
                         broadcast: bool = False) -> tuple[Dim, Dim] | None:
    """(`4`, `W / 8`) where two shapes of one rank differ only in dims that are a constant on one side and an
    expression of const generics on the other (round 20: a HOG kernel's `[1, 4, 9]` accumulator against its
    `[1, W / 8, 9]` cell sums; the help said to reshape or add a dimension of size 1). The checker proves a
    kernel for every value of its generics, so the constant must become the expression; None for any other
    gap (`broadcast`: a dim of 1 against any other is no gap)."""
    if len(sa) != len(sb):
        return None
    found = None
    for a, b in zip(sa, sb, strict=True):
        if a is None or b is None or a == b or (broadcast and 1 in (a.const_value, b.const_value)):
            continue
        pair = (a, b) if a.const_value is not None else (b, a)
        if pair[0].const_value is None or pair[1].const_value is not None or not pair[1].symbols():
            return None
        found = found or pair
    return found


def generic_constant_help(gap: tuple[Dim, Dim]) -> str:
    """The help for `generic_constant_gap`'s shapes."""
    c, e = gap
    names = ", ".join(f"`{g}`" for g in sorted(e.symbols()))
    return (f"`{e}` is not known to be {c}: it depends on {names}, and a kernel is checked for every value of "
            f"{'it' if len(e.symbols()) == 1 else 'them'}; write `{e}` where the other shape has {c} (in the "
            f"`zeros`/`full` that made it, or the parameter's `Tensor<..>` type)")


def _dim(x: Dim | int) -> Dim:
    return x if isinstance(x, Dim) else Dim.const(x)


def eval_dim(dim: Dim | int | None, env: Mapping[str, int]) -> int:
    """The value of `dim` under `env` (const generic name -> value).

    Raises KeyError naming the first symbol `env` lacks, ValueError for a `?`
    (None) dim.
    """
    if dim is None:
        raise ValueError("a `?` dimension has no compile-time value")
    if isinstance(dim, int):
        return dim
    total = 0
    for mono, coef in dim.terms:
        value = coef
        for atom in mono:
            if isinstance(atom, str):
                value *= env[atom]
            else:
                n, d = eval_dim(atom.num, env), eval_dim(atom.den, env)
                value *= kernel_div(n, d, atom.op)  # `B / C` with C = 0 is 0, as the kernel computes it
        total += value
    return total


def subst_dim(dim: Dim, env: Mapping[str, Dim | int]) -> Dim:
    """Replace the symbols of `env` in `dim` (others stay symbolic)."""
    out = Dim(())
    for mono, coef in dim.terms:
        term = Dim.const(coef)
        for atom in mono:
            if isinstance(atom, str):
                term = term * (_dim(env[atom]) if atom in env else Dim.var(atom))
            else:
                num, den = subst_dim(atom.num, env), subst_dim(atom.den, env)
                if den.const_value == 0:  # a generic of 0: the kernel's rule, as `eval_dim`
                    term = term * (Dim.const(0) if atom.op == "/" else num)
                    continue
                term = term * (num.floordiv(den) if atom.op == "/" else num.mod(den))
        out = out + term
    return out


Shape = tuple[Dim, ...]  # a tile shape: every dim a constant expression
TensorShape = tuple[Dim | None, ...]  # a tensor shape: None is `?`


def shape_str(shape: tuple[Dim | None, ...] | None) -> str:
    if shape is None:
        return "[..]"
    return "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"


def const_shape(shape: tuple[Dim | None, ...] | None) -> tuple[int, ...] | None:
    """The shape as plain ints when every dim is a known constant, else None."""
    if shape is None:
        return None
    out: list[int] = []
    for d in shape:
        v = None if d is None else d.const_value
        if v is None:
            return None
        out.append(v)
    return tuple(out)


def broadcast_shapes(a: tuple[Dim | None, ...], b: tuple[Dim | None, ...]) -> tuple[Dim | None, ...] | None:
    """NumPy broadcasting of two shapes (aligned on the right; equal dims, or
    one of them 1). None when they do not broadcast. `?` (None) dims are
    assumed compatible (host tensors; checked at run time)."""
    n = max(len(a), len(b))
    one = Dim.const(1)
    a2 = (one,) * (n - len(a)) + tuple(a)
    b2 = (one,) * (n - len(b)) + tuple(b)
    out: list[Dim | None] = []
    for x, y in zip(a2, b2, strict=False):
        if x is None or y is None:
            # `?` with 1 (or a missing axis) stays `?`: `t * 4.0` of a `[?]`
            # tensor has its length, not 1; `?` with n is n (or an error at run time)
            other = y if x is None else x
            out.append(None if other is None or other == one else other)
        elif x == y:
            out.append(x)
        elif x == one:
            out.append(y)
        elif y == one:
            out.append(x)
        else:
            return None
    return tuple(out)


def shape_of(*dims: int | Dim) -> Shape:
    return tuple(_dim(d) for d in dims)


# ---------------------------------------------------------------- types


@frozen(eq=True)
class TypeParam:
    """A generic type parameter `T` of a function, standing for a dtype."""

    name: str

    def __str__(self) -> str:
        return self.name


ElemT = DType | TypeParam


def _elem_str(d: ElemT | None) -> str:
    if d is None:
        return "?"
    return d.value if isinstance(d, DType) else d.name


@frozen(eq=True)
class ScalarT:
    dtype: ElemT

    def __str__(self) -> str:
        return _elem_str(self.dtype)


@frozen(eq=True)
class UntypedInt:
    """An integer literal whose type comes from context (defaults to i32)."""

    def __str__(self) -> str:
        return "{integer}"


@frozen(eq=True)
class UntypedFloat:
    """A float literal whose type comes from context (defaults to f32)."""

    def __str__(self) -> str:
        return "{float}"


@frozen(eq=True)
class TileT:
    dtype: ElemT
    shape: Shape

    def __str__(self) -> str:
        return f"Tile<{_elem_str(self.dtype)}, {shape_str(self.shape)}>"


@frozen(eq=True)
class TensorT:
    """A tensor in memory. `dtype` None: not known statically (`load_npy`);
    `shape` None: rank unknown; a None dim: `?`."""

    dtype: ElemT | None
    shape: TensorShape | None

    def __str__(self) -> str:
        return f"Tensor<{_elem_str(self.dtype)}, {shape_str(self.shape)}>"


@frozen(eq=True)
class RefT:
    mutable: bool
    inner: Type

    def __str__(self) -> str:
        return ("&mut " if self.mutable else "&") + str(self.inner)


@frozen(eq=True)
class PartitionT:
    """Host value of `t.partition([..])`: `tensor` split into `tile_shape` tiles."""

    tensor: TensorT
    tile_shape: Shape

    def __str__(self) -> str:
        return f"Partition<{_elem_str(self.tensor.dtype)}, {shape_str(self.tile_shape)}>"


@frozen(eq=True)
class TileViewT:
    """Kernel-side tiling of a tensor parameter by `x.partition([..])`.

    `mutable` False: a read-only tiling of a `&` param (`p.load([i, k])`).
    `mutable` True: nested tiles of a `&mut` param's own tile
    (`q.store(tile, [0, j])`, indices local to the own tile).
    """

    tensor: TensorT
    tile_shape: Shape
    mutable: bool = False

    def __str__(self) -> str:
        kind = "TileViewMut" if self.mutable else "TileView"
        return f"{kind}<{_elem_str(self.tensor.dtype)}, {shape_str(self.tile_shape)}>"


@frozen(eq=True)
class OpT:
    """A kernel call not yet run. `borrows[i]` is True for a `&mut` parameter,
    False for `&`, None for a scalar (by parameter order)."""

    kernel: str
    borrows: tuple[bool | None, ...] = ()

    def __str__(self) -> str:
        return f"Op<{self.kernel}>"


@frozen(eq=True)
class HandleT:
    """The result of `.launch()`: `.wait()` on it ends the launch's borrows."""

    kernel: str

    def __str__(self) -> str:
        return f"Handle<{self.kernel}>"


@frozen(eq=True)
class GraphT:
    def __str__(self) -> str:
        return "Graph"


@frozen(eq=True)
class TupleT:
    elems: tuple[Type, ...]

    def __str__(self) -> str:
        if len(self.elems) == 1:
            return f"({self.elems[0]},)"
        return "(" + ", ".join(str(e) for e in self.elems) + ")"


@frozen(eq=True)
class UnitT:
    def __str__(self) -> str:
        return "()"


@frozen(eq=True)
class StrT:
    def __str__(self) -> str:
        return "str"


@frozen(eq=True)
class RangeT:
    elem: Type

    def __str__(self) -> str:
        return f"Range<{self.elem}>"


@frozen(eq=True)
class ShapeT:
    """A shape value: an array literal `[a, b]` or `t.shape()`; `rank` None
    when unknown. Elements are integers (`s[0]`)."""

    rank: int | None

    def __str__(self) -> str:
        return "Shape" if self.rank is None else f"Shape<{self.rank}>"


@frozen(eq=True)
class FnT:
    """The type of a function or kernel item used as a value (qualified name)."""

    name: str
    params: tuple[Type, ...]
    ret: Type
    is_kernel: bool = False

    def __str__(self) -> str:
        ps = ", ".join(str(p) for p in self.params)
        return f"fn({ps}) -> {self.ret}"


@frozen(eq=True)
class NeverT:
    """The type of `return`, `break`, `continue`: coerces to anything."""

    def __str__(self) -> str:
        return "!"


@frozen(eq=True)
class ErrorT:
    """Poison: an error was already reported; suppresses cascading errors."""

    def __str__(self) -> str:
        return "{error}"


Type = (
    ScalarT | UntypedInt | UntypedFloat | TileT | TensorT | RefT | PartitionT | TileViewT
    | OpT | HandleT | GraphT | TupleT | UnitT | StrT | RangeT | ShapeT | FnT | NeverT | ErrorT
)

UNIT = UnitT()
ERROR = ErrorT()
NEVER = NeverT()
BOOL = ScalarT(DType.BOOL)
I32 = ScalarT(DType.I32)
I64 = ScalarT(DType.I64)
F32 = ScalarT(DType.F32)
UNTYPED_INT = UntypedInt()
UNTYPED_FLOAT = UntypedFloat()


def elem_of(ty: Type) -> ElemT | None:
    """The element type of a scalar, tile, tensor (through references)."""
    match ty:
        case ScalarT(dtype=d) | TileT(dtype=d):
            return d
        case TensorT(dtype=d):
            return d
        case RefT(inner=inner):
            return elem_of(inner)
        case PartitionT(tensor=t) | TileViewT(tensor=t):
            return t.dtype
        case _:
            return None


def any_part(ty: Type, kind: type | tuple[type, ...]) -> bool:
    """Whether `ty`, or a type inside it (behind a reference, in a tuple), is a `kind`."""
    match ty:
        case RefT(inner=inner):
            return isinstance(ty, kind) or any_part(inner, kind)
        case TupleT(elems=elems):
            return isinstance(ty, kind) or any(any_part(e, kind) for e in elems)
        case _:
            return isinstance(ty, kind)


def contains_error(ty: Type) -> bool:
    return any_part(ty, ErrorT)


# ---------------------------------------------------------------- substitution

SubstEnv = Mapping[str, Dim | int | DType | TypeParam]


def _subst_elem(d: ElemT | None, env: SubstEnv) -> ElemT | None:
    if isinstance(d, TypeParam) and d.name in env:
        v = env[d.name]
        assert isinstance(v, (DType, TypeParam))
        return v
    return d


def _subst_shape(shape: tuple[Dim | None, ...] | None, env: SubstEnv) -> tuple[Dim | None, ...] | None:
    if shape is None:
        return None
    dims = {k: v for k, v in env.items() if isinstance(v, (Dim, int))}
    return tuple(None if d is None else subst_dim(d, dims) for d in shape)


def subst_type(ty: Type, env: SubstEnv) -> Type:
    """`ty` with const generics (-> Dim or int) and type params (-> DType) replaced."""
    match ty:
        case ScalarT(dtype=d):
            return ScalarT(_subst_elem(d, env))  # type: ignore[arg-type]
        case TileT(dtype=d, shape=s):
            return TileT(_subst_elem(d, env), _subst_shape(s, env))  # type: ignore[arg-type]
        case TensorT(dtype=d, shape=s):
            return TensorT(_subst_elem(d, env), _subst_shape(s, env))
        case RefT(mutable=m, inner=inner):
            return RefT(m, subst_type(inner, env))
        case PartitionT(tensor=t, tile_shape=s):
            return PartitionT(subst_type(t, env), _subst_shape(s, env))  # type: ignore[arg-type]
        case TileViewT(tensor=t, tile_shape=s, mutable=m):
            return TileViewT(subst_type(t, env), _subst_shape(s, env), m)  # type: ignore[arg-type]
        case TupleT(elems=elems):
            return TupleT(tuple(subst_type(e, env) for e in elems))
        case RangeT(elem=e):
            return RangeT(subst_type(e, env))
        case FnT(name=n, params=ps, ret=r, is_kernel=k):
            return FnT(n, tuple(subst_type(p, env) for p in ps), subst_type(r, env), k)
        case (UntypedInt() | UntypedFloat() | OpT() | HandleT() | GraphT() | UnitT() | StrT()
              | ShapeT() | NeverT() | ErrorT()):
            return ty
        case _:
            raise TypeError(f"subst_type: unexpected {ty!r}")
