"""Nested tiles and tile indices inside kernels: the symbolic half of the
kernel ownership checker (BRIEF §6 rule 8).

`KernelIndex` is the part of `KernelChecker` that reasons about integers:

  - `sym(e)`: a compile-time integer expression (literals, the function's
    const generics, module constants), resolved through the type checker's
    symbols, so a local `let` that shadows a const generic is the local;
  - `bounds(e)`: inclusive bounds of an index expression from constants,
    immutable `let`s, `for` headers, `block_id`/`num_blocks`, `num_tiles`;
  - `partition(..)` of a `&mut` parameter: the nested tiles must tile the
    own tile (E0402, or a "tile-divides" `LaunchCheck`);
  - `index(..)`: every index into nested tiles stays inside the own tile
    (E0403 when a constant decides it, E0407 when nothing bounds it, a
    "tile-index" `LaunchCheck` otherwise). A loop variable of
    `for j in 0..q.num_tiles(k)` is in range for exactly that partition
    value (compared by identity, not by name, so `let q = r;` cannot
    smuggle another partition's range in).

Facts are keyed by the type checker's `Symbol` of each binding (one object
per binding), so shadowing can never confuse two variables.

Entry points: `KernelIndex.sym`, `KernelIndex.bounds`,
`KernelIndex.partition_of`, `KernelIndex.index`.
"""

from __future__ import annotations

from typing import Any

from tilelang.diagnostics.codes import kernel as codes
from tilelang.diagnostics.model import Diagnostic
from tilelang.frozen import frozen
from tilelang.ownership.facts import BinOp, Const, LaunchCheck, Sym, SymExpr, simplify
from tilelang.source import Span
from tilelang.syntax import ast

_I32_MIN, _I32_MAX = -(1 << 31), (1 << 31) - 1


# ---------------------------------------------------------------- linear forms
def _linear(e: SymExpr) -> dict[str, int] | None:
    """`e` as {atom: coefficient} with the constant under key "" (None if non-linear)."""
    match e:
        case Const(value=v):
            return {"": v}
        case Sym(name=n):
            return {n: 1}
        case BinOp(op="fits" | "nonneg"):
            return {repr(e): 1}  # (printed as its bound alone: two with other guards are other atoms)
        case BinOp(op="+" | "-", lhs=a, rhs=b):
            la, lb = _linear(a), _linear(b)
            if la is None or lb is None:
                return None
            sign = 1 if e.op == "+" else -1
            out = dict(la)
            for k, c in lb.items():
                out[k] = out.get(k, 0) + sign * c
            return {k: c for k, c in out.items() if c != 0 or k == ""}
        case BinOp(op="*", lhs=a, rhs=b):
            la, lb = _linear(a), _linear(b)
            if la is None or lb is None:
                return None
            if set(la) == {""}:
                la, lb = lb, la
            if set(lb) == {""}:
                c = lb[""]
                return {k: v * c for k, v in la.items()}
            return {str(e): 1}
        case BinOp():
            return {str(simplify(e)): 1}
    return None


def const_diff(a: SymExpr, b: SymExpr) -> int | None:
    """`a - b` when it is a constant whatever the symbols are, else None."""
    la, lb = _linear(simplify(a)), _linear(simplify(b))
    if la is None or lb is None:
        return None
    diff = dict(la)
    for k, c in lb.items():
        diff[k] = diff.get(k, 0) - c
    if any(c != 0 for k, c in diff.items() if k != ""):
        return None
    return diff.get("", 0)


# ---------------------------------------------------------------- local facts
@frozen
class Param:
    name: str
    own: bool  # `&mut Tensor`: this block's own tile
    dims: tuple[SymExpr | None, ...] | None
    node: ast.Param

    @property
    def shared(self) -> bool:
        return not self.own


@frozen
class Nested:
    """`z.partition([..])` of an own tile (compared by identity)."""

    param: Param
    tiles: tuple[SymExpr, ...] | None  # number of nested tiles per axis
    span: Span


@frozen
class View:
    """`x.partition([..])` of a `&` parameter."""

    param: Param
    tile: tuple[SymExpr | None, ...] | None


@frozen(eq=True)
class Int:
    lo: SymExpr
    hi: SymExpr  # inclusive
    tiles_of: tuple[Nested, int] | None = None  # `for j in 0..q.num_tiles(k)`: (q, k)


class Untraced:
    """In `KernelChecker.resolve`'s answer: an arm of an `if` that holds a tensor reference the pass cannot
    trace, so the `if` may denote any tensor parameter (`UNTRACED`, the one instance)."""

    def __repr__(self) -> str:
        return "UNTRACED"


UNTRACED = Untraced()

Local = Param | Nested | View | Int | Untraced | None


def _pick(a: SymExpr | None, b: SymExpr | None, *, larger: bool, both: bool = False
          ) -> SymExpr | None:
    """Combine two bounds of `maximum(x, y)` (`larger`) or `minimum(x, y)`:
    the result is the max (min) of the two, folded when their difference is
    a constant, else left symbolic for the launch-time check. With `both`
    False one known side suffices (`minimum(x, hi)` is at most `hi` whatever
    `x` is; `maximum(x, lo)` at least `lo`); with `both` True the bound needs
    both sides (the upper bound of `maximum(x, y)`)."""
    if a is None or b is None:
        return None if both else (a if a is not None else b)
    op = "max" if larger else "min"
    d = const_diff(a, b)
    if d is None:
        return simplify(BinOp(op, a, b))
    return (a if d >= 0 else b) if op == "max" else (a if d <= 0 else b)


def _guard(x: SymExpr | None, parts: tuple[SymExpr | None, ...]) -> SymExpr | None:
    """`x`, with each symbolic bound of `parts` it does not contain kept for the launch's i32 test ("fits")."""
    if x is None:
        return None
    for g in parts:
        if g is not None and not _never_wraps(g) and not _contains(x, g):
            x = BinOp("fits", x, g)
    return x


def _never_wraps(g: SymExpr) -> bool:
    """A bound whose value is an i32 under any launch: a constant, a generic or `num_blocks(k)`, and
    `num_blocks(k) - 1` (block_id's; a grid has at most 2^31 - 1 blocks an axis)."""
    return isinstance(g, Const | Sym) or (
        isinstance(g, BinOp) and g.op == "-" and isinstance(g.lhs, Sym) and g.lhs.name.startswith("num_blocks(")
        and g.rhs == Const(1))


def _contains(x: SymExpr, g: SymExpr) -> bool:
    return x == g or (isinstance(x, BinOp) and (_contains(x.lhs, g) or _contains(x.rhs, g)))


_PREC = {"*": 9, "/": 9, "%": 9, "+": 8, "-": 8, "<<": 7, ">>": 7, "&": 6, "^": 5, "|": 4,
         "==": 3, "!=": 3, "<": 3, "<=": 3, ">": 3, ">=": 3, "&&": 2, "||": 1}


def text(e: ast.Expr) -> str:
    """An index expression as the user would write it (parenthesised where the
    operators' precedence needs it: `j % (B / C)`, `(B - 1) / C`)."""
    match e:
        case ast.Name(ident=i):
            return i.name
        case ast.IntLit(value=v):
            return str(v)
        case ast.Binary(op=op, lhs=a, rhs=b):
            p = _PREC.get(op, 0)

            def side(x: ast.Expr, right: bool) -> str:
                q = _PREC.get(x.op, 0) if isinstance(x, ast.Binary) else 99
                # (arithmetic under a bit operator or shift in parentheses, as written: `(i + 1) & (B - 1)`)
                mixed = isinstance(x, ast.Binary) and x.op != op and p <= _PREC["<<"]
                return f"({text(x)})" if q < p or (right and q == p) or mixed else text(x)
            return f"{side(a, False)} {op} {side(b, True)}"
        case ast.Call(callee=ast.Name(ident=i), args=args):
            return f"{i.name}({', '.join(text(a.value) for a in args)})"
        case ast.MethodCall(receiver=ast.Name(ident=r), method=m, args=args):
            return f"{r.name}.{m.name}({', '.join(text(a.value) for a in args)})"
    from tilelang.syntax.printer import unparse  # any other form (a cast, `-i`): as written

    return " ".join(unparse(e).split())  # on one line (an `if` expression prints over several)


def _whole_tensor_index(ie: ast.Expr) -> bool:
    """Whether a nested tile index is counted from the whole tensor's start: `block_id` times a size in it
    (round 26: `u.partition([1]).load([block_id(0) * B - 1])`, a neighbour of the tile before; the clamp the
    help offered ran, reading an element of the block's own tile in silence)."""
    return any(isinstance(n, ast.Binary) and n.op == "*" and any(
        isinstance(m, ast.Call) and isinstance(m.callee, ast.Name) and m.callee.ident.name == "block_id"
        for m in (n.lhs, n.rhs)) for n in ast.walk(ie))


def _neighbour_diagnostic(ie: ast.Expr, q: Nested, qname: str, k: int, what: str, shown: str) -> Diagnostic:
    """E0407 for a whole-tensor index into the own tile's nested tiles: where such reads go."""
    pn = q.param.name
    return (Diagnostic.error(codes.UNBOUNDED_TILE_INDEX, f"cannot bound the {what}")
            .primary(ie.span, "an index counted from the whole tensor's start (`block_id` times a size)")
            .secondary(q.span, f"`{qname}` has nested tiles only inside this block's own tile")
            .note(f"nested tiles of `{pn}` are this block's own tile's, indexed from 0 to "
                  f"`{qname}.num_tiles({k}) - 1`; other blocks own the rest of `{pn}`")
            .with_help(f"to read elements of the tiles around this block's (a neighbour), read them from a `&` "
                       f"tensor: the values before this step in a tensor of their own (`{pn}` written from it, "
                       f"two tensors in turn), `prev.partition([..]).load_padded([{shown}], 0.0)`"))


class KernelIndex:
    view: Any
    fn: ast.FnDecl
    key: str  # the kernel's qualified name (launch checks are keyed by it)
    launch_checks: list[LaunchCheck]
    facts: dict[object, Local]  # binding Symbol -> what it holds

    def report(self, d: Diagnostic) -> None: ...
    def resolve(self, e: ast.Expr) -> list[Local]: ...

    # -- symbolic integers ----------------------------------------------------------
    def local(self, name: ast.Name) -> Local:
        sym = self.view.symbol_of(name)
        return self.facts.get(sym) if sym is not None else None

    def sym(self, e: ast.Expr) -> SymExpr | None:
        """A compile-time integer expression (literals, generics, module consts)."""
        match e:
            case ast.IntLit(value=v):
                return Const(v)
            case ast.Name(ident=i):
                s = self.view.symbol_of(e)
                kind = getattr(getattr(s, "kind", None), "value", None)
                if kind == "generic":
                    return Sym(i.name)
                if kind == "const":
                    v = getattr(s, "value", None)
                    return Const(v) if isinstance(v, int) and not isinstance(v, bool) else None
                return None
            case ast.Binary(op="+" | "-" | "*" | "/" | "%" as op, lhs=a, rhs=b):
                x, y = self.sym(a), self.sym(b)
                if x is None or y is None:
                    return None
                return simplify(BinOp(op, x, y))
            case ast.Cast(expr=x, ty=t):
                inner = self.sym(x)
                return inner if _cast_keeps(t, (inner, inner) if inner is not None else None) else None
        return None

    def bounds(self, e: ast.Expr) -> tuple[SymExpr, SymExpr] | None:
        """Inclusive lower and upper bounds of an integer index expression."""
        s = self.sym(e)
        if s is not None:
            return s, s
        match e:
            case ast.Name():
                loc = self.local(e)
                return (loc.lo, loc.hi) if isinstance(loc, Int) else None
            case ast.Call(callee=ast.Name(ident=i), args=args) if (
                i.name in ("block_id", "num_blocks") and len(args) == 1 and self._builtin(e)
            ):
                ax = self.sym(args[0].value)
                if not isinstance(ax, Const):
                    return None
                nb = Sym(f"num_blocks({ax.value})")
                return (Const(0), BinOp("-", nb, Const(1))) if i.name == "block_id" else (nb, nb)
            case ast.MethodCall(receiver=r, method=m, args=args) if (
                m.name == "num_tiles" and len(args) == 1
            ):
                ax = self.sym(args[0].value)
                locs = self.resolve(r)
                if (
                    len(locs) == 1
                    and isinstance(locs[0], Nested)
                    and locs[0].tiles
                    and isinstance(ax, Const)
                    and 0 <= ax.value < len(locs[0].tiles)
                ):
                    t = locs[0].tiles[ax.value]
                    return t, t
                return None
            case ast.Call(callee=ast.Name(ident=i), args=args) if (
                i.name in ("minimum", "maximum") and len(args) == 2 and self._builtin(e)
            ):
                lo, hi = self._half(e)
                return (lo, hi) if lo is not None and hi is not None else None
            case ast.Cast(expr=x, ty=t):
                b = self.bounds(x)
                return b if _cast_keeps(t, b) else None
            case ast.Unary(op="-", operand=x):
                b = self.bounds(x)
                if b is None:
                    return None
                out = simplify(BinOp("-", Const(0), b[1])), simplify(BinOp("-", Const(0), b[0]))
                # a negation wraps as the other arithmetic does (hrev20: `-x` of `x` = i32::MIN is i32::MIN, not the
                # 2147483648 of these bounds: `(-((j & 3) - 2147483647 - 1)) % 3` was "in 0..=2" and is -2 at j = 0)
                rng = self._int_range(e) or ((_I32_MIN, _I32_MAX) if self._type_range(e) is not None else None)
                if rng is not None and any(isinstance(v, Const) and not rng[0] <= v.value <= rng[1] for v in out):
                    return None
                return out
            case ast.Binary(op=op, lhs=a, rhs=b):
                if self._float(e):
                    # float arithmetic rounds, and its `/` does not truncate: `(i as f32) / (4 as f32) * (4 as
                    # f32)` is `i`, not the `i / 4 * 4` of integer bounds (hrev20)
                    return None
                return self._binary_bounds(op, a, b, self._int_range(e))
            case ast.If():
                return self._if_bounds(e)
        return None

    def _if_bounds(self, e: ast.If) -> tuple[SymExpr, SymExpr] | None:
        """An `if` expression whose branches are values alone (no statements): from the lowest of the
        branches' lower bounds to the highest of their upper ones (hrev19: any `if` was E0407)."""
        tails = _branch_values(e)
        if tails is None:
            return None
        got = [self.bounds(t) for t in tails]
        if any(b is None for b in got):
            return None
        lo, hi = got[0]  # type: ignore[misc]
        for b in got[1:]:
            lo = _pick(lo, b[0], larger=False, both=True)  # type: ignore[index]
            hi = _pick(hi, b[1], larger=True, both=True)  # type: ignore[index]
        return (lo, hi) if lo is not None and hi is not None else None

    def _type_range(self, e: ast.Expr) -> tuple[int, int] | None:
        """The range of `e`'s integer type (i32 and i64 too), or None."""
        name = getattr(getattr(self.view.type_of(e), "dtype", None), "value", None)
        return _RANGE.get(name) if isinstance(name, str) else None

    def _float(self, e: ast.Expr) -> bool:
        name = getattr(getattr(self.view.type_of(e), "dtype", None), "value", None)
        return name in _FLOAT_EXACT

    def _builtin(self, call: ast.Call) -> bool:
        """The call is of the built-in function its name says, not of a user function that
        shadows it (`fn block_id(a: i32) -> i32 { a + 5 }` is no block index: its range was
        taken as `0..num_blocks(0)` and an index of 5 passed the check)."""
        return self.view.callee_info(call) is None

    def _int_range(self, e: ast.Expr) -> tuple[int, int] | None:
        """The range of `e`'s integer type where it is not i32/i64 (whose bounds the i32
        checks cover): arithmetic in an 8- or 16-bit or unsigned type wraps inside it."""
        dt = getattr(self.view.type_of(e), "dtype", None)
        name = getattr(dt, "value", None)
        return _RANGE[name] if name in _RANGE and name not in ("i32", "i64") else None

    def _half(self, e: ast.Expr) -> tuple[SymExpr | None, SymExpr | None]:
        """Bounds known on one side only: `maximum(pos, 0)` is at least 0
        whatever `pos` is, `minimum(x, n - 1)` at most `n - 1`, so a clamp
        `minimum(maximum(pos, 0), n - 1)` is bounded even when `pos` is data."""
        if (
            isinstance(e, ast.Call)
            and isinstance(e.callee, ast.Name)
            and e.callee.ident.name in ("minimum", "maximum")
            and len(e.args) == 2
            and self._builtin(e)
        ):
            (la, ha), (lb, hb) = self._half(e.args[0].value), self._half(e.args[1].value)
            if e.callee.ident.name == "maximum":
                lo, hi = _pick(la, lb, larger=True), (
                    _pick(ha, hb, larger=True, both=True) if ha is not None and hb is not None else None
                )
            else:
                lo, hi = (
                    _pick(la, lb, larger=False, both=True) if la is not None and lb is not None else None
                ), _pick(ha, hb, larger=False)
            # the bounds hold while the operands are computed without a wrap: `minimum(num_blocks(0) + i, 3)` is
            # at least `min(num_blocks(0), 3)` only where `num_blocks(0) + 5` is an i32 (hfix2), so a bound keeps
            # the operands' bounds it drops, for the launch-time check to test (`facts.fits_i32`)
            parts = (la, ha, lb, hb)
            return _guard(lo, parts), _guard(hi, parts)
        b = self.bounds(e)
        return (b[0], b[1]) if b is not None else (None, None)

    def _binary_bounds(self, op: str, a: ast.Expr, b: ast.Expr, rng: tuple[int, int] | None = None
                       ) -> tuple[SymExpr, SymExpr] | None:
        if rng is not None and rng[0] == 0 and op == "%":
            c = self.bounds(b)
            if c is not None and isinstance(c[0], Const) and c[0] == c[1] and 0 < c[0].value <= rng[1]:
                return Const(0), Const(c[0].value - 1)  # an unsigned remainder, wrapped or not
        out = self._binary_bounds_math(op, a, b)
        if rng is not None:
            # arithmetic in a narrow or unsigned type wraps inside that type, not at the i32 edges:
            # `(j as i8 * 50i8)` is -106 at j = 3, `(block_id(0) as u32 - 1u32) / 2u32` is
            # 2147483647 in block 0. Unsigned values stay in the type's range whatever wraps, so a
            # result that may wrap has all of it (`(j - 1u32) / 2147483648u32` is 0..=1).
            if out is not None and _within(out, rng):
                return out
            return (Const(rng[0]), Const(rng[1])) if rng[0] == 0 else None
        if out is not None and any(isinstance(x, Const) and not _I32_MIN <= x.value <= _I32_MAX for x in out):
            # index arithmetic is i32 and wraps: `j * 1073741824 * 2 / 1073741824 / 2` is -1 at
            # j = 1, not the 1 of these bounds (the launch-time check tests a symbolic bound's
            # intermediate values the same way, `facts.fits_i32`)
            return None
        return out

    def _binary_bounds_math(self, op: str, a: ast.Expr, b: ast.Expr) -> tuple[SymExpr, SymExpr] | None:
        ba, bb = self.bounds(a), self.bounds(b)
        if op == "&":
            # the result's bits are some of each operand's: with one operand in 0..=hi (its sign bit clear) the
            # result is in 0..=hi whatever the other is (`j & 3` of tensor data; hrev19: `&` was E0407)
            # (an operand's symbolic lower bound, `B - 1` of a const generic, makes the result's `min(0, B - 1)`:
            # the launch-time check then tests that it is at least 0, as `%`'s below)
            ok = [x for x in (ba, bb) if x is not None and ((d := const_diff(x[0], Const(0))) is None or d >= 0)]
            if not ok:
                return None
            pick = min(ok, key=lambda x: const_diff(x[0], Const(0)) is None)  # (one known at least 0 first)
            # (the launch also tests that the symbolic lower bound is at least 0 where the result's own lower
            # bound is not the index's: `nb - ((i * nb) & (nb - 2))` is -1 at nb = 1, i = 2, hfix2)
            lo = Const(0) if const_diff(pick[0], Const(0)) is not None else \
                BinOp("nonneg", simplify(BinOp("min", Const(0), pick[0])), pick[0])
            both = all(const_diff(x[0], Const(0)) is not None for x in ok) and len(ok) == 2
            hi = _pick(ok[0][1], ok[1][1], larger=False, both=True) if both else pick[1]
            return (lo, hi) if hi is not None else None
        if op == ">>":
            # a shift right by a constant amount inside the width is monotone: the operand's bounds (its type's
            # range where it has none) shifted, in its type (an arithmetic shift keeps a negative value's sign)
            rng = self._type_range(a)
            c = bb[0] if bb is not None and bb[0] == bb[1] and isinstance(bb[0], Const) else None
            lim = ba if ba is not None else (Const(rng[0]), Const(rng[1])) if rng is not None else None
            if c is None or rng is None or lim is None or not 0 <= c.value < (rng[1] - rng[0]).bit_length():
                return None
            if rng[0] < 0 and not all(isinstance(x, Const) for x in lim):
                # a symbolic operand (`(num_blocks(0) - 1) >> 1`): `x >> c` is x / 2^c rounded down, at least
                # `(lo - 2^c + 1) / 2^c` (truncating: the floor for lo < 0, at least 0 for lo >= 0) and at most
                # `hi / 2^c`; the launch-time check evaluates both (`facts.fits_i32` keeps them in i32)
                p = Const(1 << c.value)
                return (simplify(BinOp("/", BinOp("-", lim[0], BinOp("-", p, Const(1))), p)),
                        simplify(BinOp("/", lim[1], p)))
            if not all(isinstance(x, Const) and rng[0] <= x.value <= rng[1] for x in lim):
                return None
            return Const(lim[0].value >> c.value), Const(lim[1].value >> c.value)  # type: ignore[union-attr]
        if op == "%" and ba is None and bb is not None and bb[0] == bb[1] and isinstance(bb[0], Const) \
                and bb[0].value > 0:
            # a truncated remainder by c > 0 is in 1 - c..=c - 1 whatever the dividend is (hrev19: a dividend of
            # tensor data was E0407; `(j % 4 + 4) % 4` is then in 0..=3)
            return Const(1 - bb[0].value), Const(bb[0].value - 1)
        if ba is None or bb is None:
            return None
        if ba[0] == ba[1] and bb[0] == bb[1] and op in ("+", "-", "*", "/", "%"):
            # both operands exact (`num_blocks(0) - 1`): so is the result, which the launch-time check computes
            # as the kernel does (huser21: `(num_blocks(0) - 1) % 2` was E0403 "can be -1", a bound of any
            # remainder by 2, where a block's `num_blocks(0)` is at least 1)
            v = simplify(BinOp(op, ba[0], bb[0]))
            return v, v
        if op in ("/", "%") and bb[0] == bb[1] and not isinstance(bb[0], Const):
            # a divisor known only at the launch (`block_id(0) / num_blocks(0)`): a truncating `x / d` is monotone
            # in `x` for any `d` (and 0 for d = 0, the kernel's rule); `|x % d|` is at most `|x|`, with its sign
            d = bb[0]
            if op == "/":
                q0, q1 = BinOp("/", ba[0], d), BinOp("/", ba[1], d)
                return simplify(BinOp("min", q0, q1)), simplify(BinOp("max", q0, q1))
            return simplify(BinOp("min", Const(0), ba[0])), simplify(BinOp("max", Const(0), ba[1]))
        if op == "+":
            return simplify(BinOp("+", ba[0], bb[0])), simplify(BinOp("+", ba[1], bb[1]))
        if op == "-":
            return simplify(BinOp("-", ba[0], bb[1])), simplify(BinOp("-", ba[1], bb[0]))
        c = bb[0] if bb[0] == bb[1] else None
        if op == "*" and c is None and ba[0] == ba[1]:
            ba, bb, c = bb, ba, ba[0]
        if isinstance(c, Const) and c.value >= 0 and op in ("*", "/"):
            return (
                (simplify(BinOp(op, ba[0], c)), simplify(BinOp(op, ba[1], c)))
                if c.value > 0 or op == "*"
                else None
            )
        if isinstance(c, Const) and c.value > 0 and op == "%":
            if (d0 := const_diff(ba[0], Const(0))) is not None:
                ba = (Const(d0), ba[1])  # (`num_blocks(0) - block_id(0) - 1` is at least 0)
            if not isinstance(ba[0], Const):
                # a dividend whose lower bound is known only at the launch (`(block_id(0) + num_blocks(0) - 1) % 2`):
                # a remainder is at least `max(1 - c, min(0, lo))` (0 where lo >= 0), which the launch-time check
                # evaluates, with the dividend's upper bound kept to test its way up for a wrap (as below)
                lo = simplify(BinOp("max", Const(1 - c.value), BinOp("min", Const(0), ba[0])))
                return _guard(lo, (ba[1],)), Const(c.value - 1)
            if ba[0].value < 0:
                return Const(1 - c.value), Const(c.value - 1)
            if isinstance(ba[1], Const):
                return Const(0), Const(c.value - 1)
            # A dividend at least 0 leaves a remainder at least 0 only if it never wraps past
            # the i32 range on its way up (`(2147483647 + block_id(0)) % 4` is -3 in block 2): the
            # lower bound keeps the dividend's upper bound, so the launch-time check tests its
            # intermediate values (`facts.fits_i32`), and is 0 wherever it holds.
            return simplify(BinOp("min", Const(0), BinOp("%", ba[1], c))), Const(c.value - 1)
        return None

    def range_fact(self, it: ast.Expr) -> Int | None:
        if not isinstance(it, ast.RangeExpr):
            return None
        lo, hi = self.bounds(it.start), self.bounds(it.end)
        if lo is None or hi is None:
            return None
        top = hi[1] if it.inclusive else simplify(BinOp("-", hi[1], Const(1)))
        tiles_of = None
        e = it.end
        if (
            not it.inclusive
            and isinstance(e, ast.MethodCall)
            and e.method.name == "num_tiles"
            and len(e.args) == 1
        ):
            ax = self.sym(e.args[0].value)
            locs = self.resolve(e.receiver)
            if isinstance(ax, Const) and len(locs) == 1 and isinstance(locs[0], Nested):
                tiles_of = (locs[0], ax.value)
        return Int(lo[0], top, tiles_of)

    # -- nested partitions -------------------------------------------------------------
    def partition_of(self, p: Param, call: ast.MethodCall) -> Local:
        shape = call.args[0].value if call.args else None
        tile = tuple(self.sym(x) for x in shape.elems) if isinstance(shape, ast.ArrayExpr) else None
        if p.shared:
            return View(p, tile)
        if (
            tile is None
            or p.dims is None
            or any(d is None for d in p.dims)
            or any(t is None for t in tile)
        ):
            # Nested tiles that cannot be measured cannot be proven inside the own tile.
            what = "its own tile shape" if p.dims is None or None in p.dims else "the nested shape"
            self.report(
                Diagnostic.error(
                    codes.NESTED_TILE_OUTSIDE_OWN,
                    f"cannot check the nested tiles of `{p.name}`: {what} is not a "
                    "compile-time constant",
                )
                .primary(call.span, "nested partition here")
                .secondary(p.node.ty.span, f"`{p.name}` is declared here")
                .with_help(
                    "give the own tile and the nested tiles constant shapes "
                    "(literals, const generics or module consts)"
                )
            )
            return Nested(p, None, call.span)
        dims = [d for d in p.dims if d is not None]
        tiles_ = [t for t in tile if t is not None]
        assert isinstance(shape, ast.ArrayExpr)
        if len(tiles_) != len(dims):
            self.report(
                Diagnostic.error(
                    codes.NESTED_TILE_OUTSIDE_OWN,
                    f"nested partition of `{p.name}` has rank {len(tiles_)} but "
                    f"its own tile has rank {len(dims)}",
                )
                .primary(shape.span, f"a rank-{len(tiles_)} tile shape")
                .secondary(p.node.ty.span, f"`{p.name}` is a tile of rank {len(dims)}")
                .with_help("give one nested tile dimension per dimension of the own tile")
            )
            return Nested(p, None, call.span)
        ok = True
        for k, (d, t) in enumerate(zip(dims, tiles_, strict=True)):
            ok &= self._divides(p, d, t, shape.elems[k], k)
        if not ok:
            return Nested(p, None, call.span)
        ntiles = tuple(simplify(BinOp("/", d, t)) for d, t in zip(dims, tiles_, strict=True))
        return Nested(p, ntiles, call.span)

    def _divides(self, p: Param, d: SymExpr, t: SymExpr, elem: ast.Expr, k: int) -> bool:
        if isinstance(d, Const) and isinstance(t, Const):
            if t.value <= 0 or t.value > d.value or d.value % t.value:
                why = (
                    "is larger than"
                    if t.value > d.value
                    else "does not divide"
                    if t.value > 0
                    else "is not positive for"
                )
                self.report(
                    Diagnostic.error(
                        codes.NESTED_TILE_OUTSIDE_OWN,
                        f"nested tile dimension {t.value} {why} the own tile "
                        f"dimension {d.value} of `{p.name}`",
                    )
                    .primary(elem.span, "the nested tiles would reach past this block's own tile")
                    .secondary(p.node.ty.span, f"the own tile of `{p.name}` is declared here")
                    .note(
                        "other blocks own the neighbouring tiles; writing there would race with them"
                    )
                    .with_help(f"use a nested tile dimension that divides {d.value}")
                )
                return False
            return True
        if simplify(d) == simplify(t) or t == Const(1):
            return True
        self.defer(
            LaunchCheck(
                self.key,
                "tile-divides",
                simplify(BinOp("%", d, t)),
                "==",
                Const(0),
                elem.span,
                codes.NESTED_TILE_OUTSIDE_OWN,
                f"nested tile dimension `{t}` must divide the own tile dimension `{d}` "
                f"of `{p.name}` along axis {k}",
            )
        )
        return True

    # -- indices -----------------------------------------------------------------------
    def index(self, q: Nested, idx: ast.Expr, qname: str, *, write: bool) -> None:
        if q.tiles is None:
            return
        elems = idx.elems if isinstance(idx, ast.ArrayExpr) else None
        if elems is None or len(elems) != len(q.tiles):
            return  # rank mismatches are type errors
        for k, (ie, nt) in enumerate(zip(elems, q.tiles, strict=True)):
            if isinstance(ie, ast.Name):
                loc = self.local(ie)
                lo = const_diff(loc.lo, Const(0)) if isinstance(loc, Int) else None
                if isinstance(loc, Int) and loc.tiles_of is not None and loc.tiles_of[0] is q \
                        and loc.tiles_of[1] == k and lo is not None and lo >= 0:
                    continue
            b = self.bounds(ie)
            what = f"tile index `{text(ie)}` of `{qname}` along axis {k}"
            if b is None:
                self._unbounded(ie, q, qname, k, what, write)
                continue
            lo, hi = simplify(b[0]), simplify(b[1])
            self._bound(lo, ">=", Const(0), ie, what, q, qname, k)
            self._bound(hi, "<", nt, ie, what, q, qname, k)

    def _unbounded(
        self, ie: ast.Expr, q: Nested, qname: str, k: int, what: str, write: bool
    ) -> None:
        # A `let mut` counter is the usual cause, not tensor data: say so.
        muts = sorted({
            n.ident.name
            for n in ast.walk(ie)
            if isinstance(n, ast.Name) and getattr(self.view.symbol_of(n), "mutable", False)
        })
        loops = {id(self.view.symbol_of(n.pattern)) for n in ast.walk(self.fn.body)
                 if isinstance(n, ast.For) and isinstance(n.pattern, ast.NamePat) and n.pattern.mutable}
        mut_loop = next((n.ident.name for n in ast.walk(ie) if isinstance(n, ast.Name)
                         and id(self.view.symbol_of(n)) in loops), None)
        other = self._other_tiles_loop(ie, qname)
        sized = self._shape_loop(ie) if other is None else None
        if sized is not None:
            other = (sized[0], "")
        v = ie.ident.name if isinstance(ie, ast.Name) else "j"
        why = (
            f"`{sized[0]}` counts up to `{sized[1]}`, a run-time size the checker does not relate to "
            f"`{qname}`'s own tile"
            if sized is not None
            else f"`{other[0]}` counts the tiles of `{other[1]}`, not of `{qname}`: they may be more"
            if other is not None
            else f"`{mut_loop}` is a `for mut` loop variable: the body may assign it, so its range is not tracked"
            if mut_loop is not None
            else f"`{muts[0]}` is a `let mut` variable: its range is not tracked"
            if muts
            else self._untracked(ie)
        )
        shown = text(ie) if len(text(ie)) <= 40 else "i"  # (the index itself, clamped: hrev19)
        if other is None and _whole_tensor_index(ie):
            self.report(_neighbour_diagnostic(ie, q, qname, k, what, shown))
            return
        self.report(
            Diagnostic.error(codes.UNBOUNDED_TILE_INDEX, f"cannot bound the {what}")
            .primary(ie.span, why)
            .secondary(q.span, f"`{qname}` has nested tiles only inside this block's own tile")
            .note(
                "a nested tile index out of range would "
                + ("write" if write else "read")
                + " another block's tile"
            )
            .with_help(
                f"loop over `{qname}`'s own nested tiles: `for {other[0]} in 0..{qname}.num_tiles({k})`"
                + (" (loads past a tensor's edge read zeros and stores past it are dropped, so the tiles "
                   "past the data do no harm)" if sized is not None else "")
                if other is not None else
                f"index with a loop variable of `for {v} in 0..{qname}."
                f"num_tiles({k})`, a constant, or `block_id`, or clamp it into "
                f"range: `minimum(maximum({shown}, 0), {qname}.num_tiles({k}) - 1)`"
            )
        )

    def _other_tiles_loop(self, ie: ast.Expr, qname: str) -> tuple[str, str] | None:
        """(`j`, `px`) where index `ie` is the variable of `for j in 0..px.num_tiles(k)` over another partition
        than `qname` (round 18: an integral image's band stored through its own nested tiles while the loop
        counted the input's: the label said "`x` is a parameter: its range is not known")."""
        if not isinstance(ie, ast.Name):
            return None
        sym = self.view.symbol_of(ie)
        for n in ast.walk(self.fn.body):
            if isinstance(n, ast.For) and isinstance(n.pattern, ast.NamePat) and \
                    self.view.symbol_of(n.pattern) is sym and isinstance(n.iter, ast.RangeExpr):
                end = n.iter.end
                if isinstance(end, ast.MethodCall) and end.method.name == "num_tiles" and \
                        isinstance(end.receiver, ast.Name) and end.receiver.ident.name != qname:
                    return ie.ident.name, end.receiver.ident.name
        return None

    def _shape_loop(self, ie: ast.Expr) -> tuple[str, str] | None:
        """(`c`, `(len + C - 1) / C`) where index `ie` is the variable of a `for c in 0..END` whose END reads a
        tensor's shape (round 19: a chunked scan over `q.shape()[1]` stored through the output's nested tiles:
        the label said "this index may depend on tensor data", which it does not)."""
        if not isinstance(ie, ast.Name):
            return None
        sym = self.view.symbol_of(ie)
        inits = {id(self.view.symbol_of(n.pattern)): n.value for n in ast.walk(self.fn.body)
                 if isinstance(n, ast.Let) and isinstance(n.pattern, ast.NamePat) and n.value is not None}
        for n in ast.walk(self.fn.body):
            if isinstance(n, ast.For) and isinstance(n.pattern, ast.NamePat) and \
                    self.view.symbol_of(n.pattern) is sym and isinstance(n.iter, ast.RangeExpr) and \
                    n.iter.end is not None:
                todo, seen = [n.iter.end], 0
                while todo and seen < 64:
                    e = todo.pop()
                    seen += 1
                    for m in ast.walk(e):
                        if isinstance(m, ast.MethodCall) and m.method.name in ("load", "load_padded", "load_like",
                                                                                "item"):
                            return None  # data: `_untracked` says so
                        if isinstance(m, ast.MethodCall) and m.method.name == "shape":
                            return ie.ident.name, text(n.iter.end)
                        if isinstance(m, ast.Name) and id(self.view.symbol_of(m)) in inits:
                            todo.append(inits[id(self.view.symbol_of(m))])
        return None

    def _untracked(self, ie: ast.Expr) -> str:
        """Why the range of `ie` is unknown: the first form in it (or in the
        `let`s its names are bound by) that `bounds` does not follow."""
        inits = {id(self.view.symbol_of(n.pattern)): n.value for n in ast.walk(self.fn.body)
                 if isinstance(n, ast.Let) and isinstance(n.pattern, ast.NamePat) and n.value is not None}
        inits.update({id(self.view.symbol_of(n.pattern)): n.iter for n in ast.walk(self.fn.body)
                      if isinstance(n, ast.For) and isinstance(n.pattern, ast.NamePat)})
        todo, seen = [ie], set()
        while todo:
            e = todo.pop(0)
            if id(e) in seen:
                continue
            seen.add(id(e))
            # an `if`'s condition is no part of its value: its branches are (`_if_bounds`)
            conds = {id(m) for n in ast.walk(e) if isinstance(n, ast.If) for m in ast.walk(n.cond)}
            for n in ast.walk(e):
                if id(n) in conds:
                    continue
                match n:
                    case ast.MethodCall(method=m) if m.name in ("load", "load_padded", "load_like", "item", "shape"):
                        return "this index may depend on tensor data"
                    case ast.If() if _branch_values(n) is None:
                        return "the range of an `if` expression with statements in a branch is not tracked"
                    case ast.Call(callee=ast.Name(ident=i)) if self.view.callee_info(n) is not None:
                        if i.name in ("minimum", "maximum", "block_id", "num_blocks"):
                            return (f"this `{i.name}` is the program's own function, which shadows the built-in "
                                    f"`{i.name}`: the range of what it returns is not tracked")
                        return f"the range of what `{i.name}` returns is not tracked"
                    case ast.Call(callee=ast.Name(ident=i)) if i.name not in (
                            "minimum", "maximum", "block_id", "num_blocks"):
                        return f"the range of `{i.name}(..)` is not tracked"
                    case ast.Cast(expr=x, ty=ast.NamedType(name=tn)) if tn.name in _FLOAT_EXACT \
                            and not _cast_keeps(n.ty, self.bounds(x)) and self.bounds(x) is not None:
                        return (f"`as {tn.name}` rounds an integer past {_FLOAT_EXACT[tn.name]} to a neighbour, up "
                                f"or down: `{text(x)}` is not tracked through it")
                    case ast.Cast(expr=x, ty=ast.NamedType(name=tn)) if tn.name == "bool":
                        return f"`{text(n)}` is 1 for any value but 0: not tracked"
                    case ast.Binary() if self._float(n):
                        return (f"`{text(n)}` is float arithmetic, which rounds (and whose `/` does not truncate): "
                                "do the index arithmetic in integers")
                    case ast.Unary(op="-", operand=x) if self.bounds(n) is None and self.bounds(x) is not None:
                        return f"`{text(n)}` can leave the integer type's range (the negation of its minimum wraps)"
                    case ast.Cast(expr=x, ty=ast.NamedType(name=tn)) if tn.name in ("u32", "u64") \
                            and not _cast_keeps(n.ty, self.bounds(x)) and self.bounds(x) is not None:
                        return f"`{text(x)}` may be negative, and `as {tn.name}` makes a negative value a huge one"
                    case ast.Cast(expr=x, ty=ast.NamedType(name=tn)) if tn.name in _RANGE \
                            and not _cast_keeps(n.ty, self.bounds(x)) and self.bounds(x) is not None \
                            and not any(isinstance(m, ast.Cast) and m is not n for m in ast.walk(x)):
                        return (f"`{text(x)}` may be outside `{tn.name}`'s range (unsigned arithmetic below 0 "
                                f"wraps to a huge value), and `as {tn.name}` wraps it")
                    case ast.Binary(op=op, lhs=a, rhs=b) if (rng := self._int_range(n)) is not None and (
                            (bb := self._binary_bounds_math(op, a, b)) is not None and not _within(bb, rng)):
                        ty = getattr(getattr(self.view.type_of(n), "dtype", None), "value", "?")
                        return (f"`{text(n)}` is `{ty}` arithmetic, which wraps outside {rng[0]}..={rng[1]}"
                                if rng[0] < 0 else
                                f"`{text(n)}` is `{ty}` arithmetic, which wraps below 0 to a huge value")
                    case ast.Binary(op=op) if op not in ("+", "-", "*", "/", "%", "&", ">>"):
                        return (f"`{op}` is not tracked (only `+ - * / %`, `&` with a value at least 0, `>>` by a "
                                "constant, `minimum`/`maximum` clamps, `if` expressions and casts)")
                    case ast.Binary(op="&", lhs=a, rhs=b) if self.bounds(n) is None:
                        return (f"`{text(n)}`: `&` is bounded only where an operand is at least 0 (then 0 up to "
                                "that operand's upper bound)")
                    case ast.Binary(op=">>", lhs=a, rhs=b) if self.bounds(n) is None and self.bounds(a) is not None:
                        return f"`{text(n)}`: `>>` is tracked only by a constant amount inside the type's width"
                    case ast.Binary(op=op, lhs=a, rhs=b) if self._int_range(n) is None and any(
                            isinstance(x, Const) and not _I32_MIN <= x.value <= _I32_MAX
                            for x in self._binary_bounds_math(op, a, b) or ()):
                        return f"`{text(n)}` can leave the i32 range, and index arithmetic wraps"
                    case ast.Name() if id(self.view.symbol_of(n)) in inits:
                        todo.append(inits[id(self.view.symbol_of(n))])
                    case ast.Name(ident=i) if getattr(getattr(self.view.symbol_of(n), "kind", None),
                                                      "value", None) == "param":
                        return (f"`{i.name}` is a parameter of `{self.fn.name.name}`: its range is not known "
                                "here")
        return "this index's range is not tracked (only constants, `for` ranges, `block_id`, `num_tiles` and " \
               "`+ - * / %` of them by constants)"

    def _bound(
        self,
        x: SymExpr,
        rel: str,
        y: SymExpr,
        ie: ast.Expr,
        what: str,
        q: Nested,
        qname: str,
        axis: int,
    ) -> None:
        diff = const_diff(x, y)
        if diff is not None:
            holds = diff >= 0 if rel == ">=" else diff < 0
            if holds:
                return
            # The difference is a constant: decided now, whatever the generics are.
            exact = isinstance(x, Const) and self.sym(ie) is not None
            tiles = f"`{qname}` has {y} nested tile{'s' * (y != Const(1))} along axis {axis}"
            msg = (
                f"tile index {x} of `{qname}` along axis {axis} is negative"
                if rel == ">=" and exact
                else f"tile index of `{qname}` along axis {axis} can be {x}, which is negative"
                if rel == ">="
                else f"tile index {x} is out of range: {tiles}"
                if exact
                else f"tile index can reach {x} but {tiles}"
            )
            self.report(
                Diagnostic.error(codes.TILE_INDEX_OUT_OF_RANGE, msg)
                .primary(ie.span, "index out of range")
                .secondary(q.span, f"`{qname}` is partitioned here")
                .note("nested tiles cover only this block's own tile; other blocks own the rest")
                .with_help(_keep_help(ie, rel, qname, axis))
            )
            return
        self.defer(
            LaunchCheck(
                self.key, "tile-index", x, rel, y, ie.span, codes.TILE_INDEX_OUT_OF_RANGE, what,
                _remainder_help(ie, rel, qname, axis) or "",
            )
        )

    def defer(self, check: LaunchCheck) -> None:
        """Record a launch-time check; in a device function, whose generics the
        runtime does not bind at a launch, an unprovable fact is an error now."""
        if self.fn.is_kernel:
            self.launch_checks.append(check)
            return
        own = {g.name.name for g in self.fn.generics if g.is_const}
        if check.symbols and all(s.startswith("num_blocks(") or s in own for s in check.symbols):
            # a fact of the grid and the function's own const generics (`(block_id(0) + 5) % 4 >= 0`
            # holds while the dividend stays in i32; `8 % H == 0` of `z.partition([H])`): the grid is
            # the calling kernel's and the generics each call's, so each kernel that reaches this
            # function decides it for every call's values, now or at its launches
            # (`kernel._hand_down`; hrev29: a generic's fact was E0402 at every instance)
            self.device_checks.append(check)
            return
        self.report(
            Diagnostic.error(
                check.code,
                f"cannot prove at compile time that the {check.what} "
                f"is in range, in device function `{self.fn.name.name}`"
                if check.kind == "tile-index"
                else f"cannot prove at compile time that {check.what}, in device "
                f"function `{self.fn.name.name}`",
            )
            .primary(check.span, f"needs `{check.lhs} {check.rel} {check.rhs}`")
            .note("facts that depend on const generics are checked at launch only in kernels")
            .with_help(
                "use constant shapes in the device function, or move the nested "
                "partition into the kernel"
            )
        )

    def view_index(self, v: View, idx: ast.Expr) -> None:
        """Loads from `&` views past the edge read zeros; a constant negative or
        (for static shapes) constant too-large index is still surely a mistake."""
        if not isinstance(idx, ast.ArrayExpr):
            return
        for k, ie in enumerate(idx.elems):
            c = self.sym(ie)
            if not isinstance(c, Const):
                continue
            n: int | None = None
            if v.tile and v.param.dims and k < len(v.tile) and k < len(v.param.dims):
                d, t = v.param.dims[k], v.tile[k]
                if isinstance(d, Const) and isinstance(t, Const) and t.value > 0:
                    n = -(-d.value // t.value)
            if c.value < 0 or (n is not None and c.value >= n):
                self.report(
                    Diagnostic.error(
                        codes.TILE_INDEX_OUT_OF_RANGE,
                        f"tile index {c.value} is out of range"
                        + (f": `{v.param.name}` has {n} tiles along axis {k}" if n is not None else ""),
                    )
                    .primary(ie.span, "index out of range")
                    .secondary(v.param.node.span, f"`{v.param.name}` is declared here")
                    .with_help(f"use an index between 0 and `num_tiles({k})` - 1")
                )


def _keep_help(ie: ast.Expr, rel: str, qname: str, axis: int) -> str:
    """E0403's help; a remainder that may be negative (it keeps the dividend's sign) made one at least 0."""
    return _remainder_help(ie, rel, qname, axis) or f"keep the index in `0..{qname}.num_tiles({axis})`"


def _remainder_help(ie: ast.Expr, rel: str, qname: str, axis: int) -> str | None:
    """For a remainder that may be negative, the spelling that is at least 0 (also at a launch's check)."""
    if rel == ">=" and isinstance(ie, ast.Binary) and ie.op == "%" and isinstance(ie.rhs, ast.IntLit):
        c, x = ie.rhs.value, text(ie.lhs) if isinstance(ie.lhs, ast.Name | ast.Call) else f"({text(ie.lhs)})"
        return (f"a remainder has the sign of what is divided: `({x} % {c} + {c}) % {c}` is in `0..{c}` "
                f"(keep it below `{qname}.num_tiles({axis})`)")
    return None


def _branch_values(e: ast.If) -> list[ast.Expr] | None:
    """The values of an `if` expression's branches where each is a value alone (a block of no statements,
    `else if` followed), else None."""
    out: list[ast.Expr] = []
    x: Any = e
    while isinstance(x, ast.If):
        if x.then.stmts or x.then.tail is None:
            return None
        out.append(x.then.tail)
        x = x.else_
    if not isinstance(x, ast.Block) or x.stmts or x.tail is None:
        return None
    return [*out, x.tail]


def _within(b: tuple[SymExpr, SymExpr], rng: tuple[int, int]) -> bool:
    """Whether bounds `b` surely stay in `rng`: constants in it, or, in a type of 32 bits or
    more, an upper end that is symbolic over a constant lower end in range (the launch-time
    check keeps a symbolic bound within i32, `facts.fits_i32`)."""
    lo, hi = b
    if not (isinstance(lo, Const) and rng[0] <= lo.value <= rng[1]):
        return False
    if isinstance(hi, Const):
        return rng[0] <= hi.value <= rng[1]
    return rng[1] >= _I32_MAX


# the largest integer each float type holds with every integer below it: 2^(mantissa bits + 1)
_FLOAT_EXACT = {"f16": 1 << 11, "bf16": 1 << 8, "f32": 1 << 24, "f64": 1 << 53}

_RANGE = {f"{s}{n}": ((-(1 << (n - 1)), (1 << (n - 1)) - 1) if s == "i" else (0, (1 << n) - 1))
          for s in "iu" for n in (8, 16, 32, 64)}


def _cast_keeps(ty: ast.TypeExpr, b: tuple[SymExpr, SymExpr] | None) -> bool:
    """Whether `x as ty` has the value of `x` for every `x` in the bounds `b`: constant
    bounds inside the target's range; a symbolic upper bound only into a type of 32 bits or
    more (`(j as i8) as i32` is negative for `j` >= 128), over a lower bound that is a
    constant >= 0 for an unsigned target (`(j as u32) / 1073741824u32` is 3 at j = -1, not
    the 0 the bounds of `j` would give). The launch-time check keeps a symbolic bound in i32."""
    if b is None:
        return False
    name = ty.name.name if isinstance(ty, ast.NamedType) else ""
    if name in _FLOAT_EXACT:
        # (hrev20) a float holds the integers up to 2^p exactly and rounds the others, up as well as down:
        # `(2051 as f16) as i32` is 2052 and `(16777219 as f32) as i32` 16777220, past bounds that kept 2051
        # and 16777219; a symbolic bound only into f64 (the launch-time check keeps it in i32)
        lim = _FLOAT_EXACT[name]
        if isinstance(b[0], Const) and isinstance(b[1], Const):
            return -lim <= b[0].value and b[1].value <= lim
        return lim > _I32_MAX and (not isinstance(b[0], Const) or -lim <= b[0].value)
    if name == "bool":  # (any value but 0 is `true`: 2..=3 as bool is 1; hrev20)
        return all(isinstance(x, Const) and 0 <= x.value <= 1 for x in b)
    if name not in _RANGE:
        return True
    lo, hi = _RANGE[name]
    if isinstance(b[0], Const) and isinstance(b[1], Const):
        return lo <= b[0].value and b[1].value <= hi
    if hi < _I32_MAX:
        return False
    return (not isinstance(b[0], Const) and lo < 0) or (isinstance(b[0], Const) and lo <= b[0].value)
