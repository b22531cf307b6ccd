"""Symbolic integers inside kernels: the bounds half of the kernel ownership
checker's index reasoning (BRIEF §6 rule 8), split from `kernel_index.py`.

`KernelBounds` (the base of `KernelIndex`, itself `KernelChecker`'s base):

  - `sym(e)`: a compile-time integer expression (literals, the function's
    const generics, module constants), resolved through the type checker's
    symbols, so a local `let` that shadows a const generic is the local;
  - `bounds(e)`: inclusive bounds of an index expression from constants,
    immutable `let`s, `for` headers, `block_id`/`num_blocks`, `num_tiles`;
  - `range_fact(it)`: what a `for` header's range tells of its variable.

The local facts a binding holds (`Param`, `Nested`, `View`, `Int`, `Local`)
and the linear forms `const_diff` compares live here too.
"""

from __future__ import annotations

from typing import Any

from tilelang.diagnostics.model import Diagnostic
from tilelang.frozen import frozen
from tilelang.ownership.facts import BinOp, Const, LaunchCheck, Sym, SymExpr, simplify
from tilelang.source import Span
from tilelang.syntax import ast

I32_MIN, I32_MAX = -(1 << 31), (1 << 31) - 1


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


class KernelBounds:
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
                return inner if cast_keeps(t, (inner, inner) if inner is not None else None) else None
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
                return b if cast_keeps(t, b) else None
            case ast.Unary(op="-", operand=x):
                b = self.bounds(x)
                if b is None:
                    return None
                out = simplify(BinOp("-", Const(0), b[1])), simplify(BinOp("-", Const(0), b[0]))
                # a negation wraps as the other arithmetic does (hrev20: `-x` of `x` = i32::MIN is i32::MIN, not the
                # 2147483648 of these bounds: `(-((j & 3) - 2147483647 - 1)) % 3` was "in 0..=2" and is -2 at j = 0)
                rng = self._int_range(e) or ((I32_MIN, I32_MAX) if self._type_range(e) is not None else None)
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
        tails = branch_values(e)
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
        return INT_RANGE.get(name) if isinstance(name, str) else None

    def _float(self, e: ast.Expr) -> bool:
        name = getattr(getattr(self.view.type_of(e), "dtype", None), "value", None)
        return name in FLOAT_EXACT

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
        return INT_RANGE[name] if name in INT_RANGE and name not in ("i32", "i64") else None

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
            if out is not None and within(out, rng):
                return out
            return (Const(rng[0]), Const(rng[1])) if rng[0] == 0 else None
        if out is not None and any(isinstance(x, Const) and not I32_MIN <= x.value <= I32_MAX for x in out):
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


def branch_values(e: ast.If) -> list[ast.Expr] | None:
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


def within(b: tuple[SymExpr, SymExpr], rng: tuple[int, int]) -> bool:
    """Whether bounds `b` surely stay in `rng`: constants in it, or, in a type of 32 bits or
    more, an upper end that is symbolic over a constant lower end in range (the launch-time
    check keeps a symbolic bound within i32, `facts.fits_i32`)."""
    lo, hi = b
    if not (isinstance(lo, Const) and rng[0] <= lo.value <= rng[1]):
        return False
    if isinstance(hi, Const):
        return rng[0] <= hi.value <= rng[1]
    return rng[1] >= I32_MAX


# the largest integer each float type holds with every integer below it: 2^(mantissa bits + 1)
FLOAT_EXACT = {"f16": 1 << 11, "bf16": 1 << 8, "f32": 1 << 24, "f64": 1 << 53}

INT_RANGE = {f"{s}{n}": ((-(1 << (n - 1)), (1 << (n - 1)) - 1) if s == "i" else (0, (1 << n) - 1))
          for s in "iu" for n in (8, 16, 32, 64)}


def cast_keeps(ty: ast.TypeExpr, b: tuple[SymExpr, SymExpr] | None) -> bool:
    """Whether `x as ty` has the value of `x` for every `x` in the bounds `b`: constant
    bounds inside the target's range; a symbolic upper bound only into a type of 32 bits or
    more (`(j as i8) as i32` is negative for `j` >= 128), over a lower bound that is a
    constant >= 0 for an unsigned target (`(j as u32) / 1073741824u32` is 3 at j = -1, not
    the 0 the bounds of `j` would give). The launch-time check keeps a symbolic bound in i32."""
    if b is None:
        return False
    name = ty.name.name if isinstance(ty, ast.NamedType) else ""
    if name in FLOAT_EXACT:
        # (hrev20) a float holds the integers up to 2^p exactly and rounds the others, up as well as down:
        # `(2051 as f16) as i32` is 2052 and `(16777219 as f32) as i32` 16777220, past bounds that kept 2051
        # and 16777219; a symbolic bound only into f64 (the launch-time check keeps it in i32)
        lim = FLOAT_EXACT[name]
        if isinstance(b[0], Const) and isinstance(b[1], Const):
            return -lim <= b[0].value and b[1].value <= lim
        return lim > I32_MAX and (not isinstance(b[0], Const) or -lim <= b[0].value)
    if name == "bool":  # (any value but 0 is `true`: 2..=3 as bool is 1; hrev20)
        return all(isinstance(x, Const) and 0 <= x.value <= 1 for x in b)
    if name not in INT_RANGE:
        return True
    lo, hi = INT_RANGE[name]
    if isinstance(b[0], Const) and isinstance(b[1], Const):
        return lo <= b[0].value and b[1].value <= hi
    if hi < I32_MAX:
        return False
    return (not isinstance(b[0], Const) and lo < 0) or (isinstance(b[0], Const) and lo <= b[0].value)
