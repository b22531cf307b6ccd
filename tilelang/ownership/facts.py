"""What the ownership checker hands to later stages: `OwnershipFacts`.

The checker proves most kernel-side index facts at compile time. What depends
on values known only at launch (const generics inferred from a partition
shape, `num_blocks(axis)` from the grid) is recorded as a `LaunchCheck`: a
condition `lhs REL rhs` over a tiny symbolic expression language (`SymExpr`).
The host runtime evaluates every check of a kernel before any GPU work:

    for check in facts.checks_for(kernel_name):
        if not check.holds(env):
            raise TileError(check.diagnostic(env, launch_span))

`env` maps symbol names to integers:
  - each const generic parameter by its name (`"B"`, `"BN"`), i.e. the
    instantiation the type checker recorded for the call;
  - each module constant by its name;
  - `"num_blocks(0)"`, `"num_blocks(1)"`, `"num_blocks(2)"`: the launch grid.
A symbol missing from `env` makes `holds` raise `KeyError` (a runtime bug, not
a user error). Invariant: every `LaunchCheck` is sound to evaluate before the
launch: it mentions no tensor data.
"""

from __future__ import annotations

import re

from collections.abc import Mapping
from dataclasses import dataclass, field

from tilelang.diagnostics.model import Diagnostic
from tilelang.dtypes import kernel_div
from tilelang.frozen import frozen
from tilelang.source import Span


# ---------------------------------------------------------------- symbolic ints
@frozen(eq=True)
class Const:
    value: int

    def __str__(self) -> str:
        return str(self.value)


@frozen(eq=True)
class Sym:
    """A value known at launch: a const generic, a module const, `num_blocks(k)`."""

    name: str

    def __str__(self) -> str:
        return self.name


@frozen(eq=True)
class BinOp:
    op: str  # "+", "-", "*", "/" (truncating), "%", "min", "max"; guards, whose value is `lhs`: "fits" (where
    # `rhs` is an i32 too) and "nonneg" (where `rhs` is at least 0)
    lhs: SymExpr
    rhs: SymExpr

    def __str__(self) -> str:
        if self.op in ("fits", "nonneg"):
            return str(self.lhs)
        if self.op in ("min", "max"):
            return f"{self.op}({self.lhs}, {self.rhs})"
        return f"({self.lhs} {self.op} {self.rhs})"


SymExpr = Const | Sym | BinOp


def evaluate(e: SymExpr, env: Mapping[str, int]) -> int:
    """The integer value of `e` under `env` (Rust/C truncating `/` and `%`)."""
    match e:
        case Const(value=v):
            return v
        case Sym(name=n):
            return int(env[n])
        case BinOp(op=op, lhs=a, rhs=b):
            x, y = evaluate(a, env), evaluate(b, env)
            if op == "+":
                return x + y
            if op == "-":
                return x - y
            if op == "*":
                return x * y
            if op == "min":
                return min(x, y)
            if op == "max":
                return max(x, y)
            if op in ("fits", "nonneg"):
                # `lhs`, a bound that holds where `rhs` (a bound it was computed from and dropped, as
                # `minimum(a, b)`'s lower bound drops `a`'s upper one) is an i32 (`fits_i32` tests both), or
                # at least 0 for "nonneg" (`unmet`)
                return x
            # the kernel's rule for a zero divisor (`x / 0 == 0`, `x % 0 == x`): a check
            # is about the values the kernel computes (a sentinel here once passed
            # `B % (B / C) == 0` with C = 0, a nested tile of 0, and an index
            # `B - 1 + B % C`, which the kernel computes as 2 B - 1)
            return kernel_div(x, y, op)
    raise AssertionError(f"not a symbolic expression: {e!r}")


def fits_i32(e: SymExpr, env: Mapping[str, int]) -> bool:
    """Whether every intermediate value of `e` under `env` is an i32 (a bound
    computed past one stands for an index the kernel's i32 arithmetic wraps)."""
    if isinstance(e, BinOp) and not (fits_i32(e.lhs, env) and fits_i32(e.rhs, env)):
        return False
    return -(1 << 31) <= evaluate(e, env) < (1 << 31)


def unmet(e: SymExpr, env: Mapping[str, int]) -> SymExpr | None:
    """The first "nonneg" guard of `e` whose condition fails under `env` (its `rhs`), else None."""
    if not isinstance(e, BinOp):
        return None
    if e.op == "nonneg" and evaluate(e.rhs, env) < 0:
        return e.rhs
    return unmet(e.lhs, env) or unmet(e.rhs, env)


def free_symbols(e: SymExpr) -> frozenset[str]:
    match e:
        case Const():
            return frozenset()
        case Sym(name=n):
            return frozenset((n,))
        case BinOp(lhs=a, rhs=b):
            return free_symbols(a) | free_symbols(b)
    raise AssertionError(f"not a symbolic expression: {e!r}")


def simplify(e: SymExpr) -> SymExpr:
    """Fold constants and the identities `x*1`, `x+0`, `x/1`, `x-x`, `x/x`."""
    match e:
        case Const() | Sym():
            return e
        case BinOp(op=op, lhs=a, rhs=b):
            a, b = simplify(a), simplify(b)
            if op in ("fits", "nonneg") and isinstance(b, Const) and -(1 << 31) <= b.value < (1 << 31) \
                    and (op == "fits" or b.value >= 0):
                return a
            if op in ("fits", "nonneg"):
                return BinOp(op, a, b)
            if isinstance(a, Const) and isinstance(b, Const):
                return Const(evaluate(BinOp(op, a, b), {}))
            if (op == "*" and b == Const(1)) or (op in ("+", "-") and b == Const(0)):
                return a
            if (op == "*" and a == Const(1)) or (op == "+" and a == Const(0)):
                return b
            if op == "/" and b == Const(1):
                return a
            if op == "-" and a == b:
                return Const(0)
            if op == "/" and a == b:
                return Const(1)
            if op == "%" and (a == b or b == Const(1)):
                return Const(0)
            return BinOp(op, a, b)
    raise AssertionError(f"not a symbolic expression: {e!r}")


# ---------------------------------------------------------------- launch checks
@frozen(eq=True)
class LaunchCheck:
    """A kernel fact to verify at launch, before any GPU work: `lhs rel rhs`.

    kind: "tile-index" (a nested tile index stays inside the own tile's
    nested tiles), "tile-divides" (a nested tile shape divides the own tile
    shape) or "tile-equal" (`b.load_like(a)` of two `&mut` parameters: their
    tile shapes agree, so `b` is read inside its own tile). `span` is where the fact comes from in the kernel; `code` is the
    error code to report (`E0403`, `E0402` or `E0408`), `what` a phrase naming the fact
    ("tile index `j` of `q` along axis 1").
    """

    kernel: str
    kind: str
    lhs: SymExpr
    rel: str  # "<", "<=", ">=", "=="
    rhs: SymExpr
    span: Span
    code: str
    what: str
    help: str = ""  # a help of this fact's own (a remainder made at least 0), else the kind's

    def holds(self, env: Mapping[str, int]) -> bool:
        if self.kind == "tile-index" and not (fits_i32(self.lhs, env) and fits_i32(self.rhs, env)):
            return False  # the kernel's i32 index arithmetic would wrap on the way to this bound
        if unmet(self.lhs, env) is not None or unmet(self.rhs, env) is not None:
            return False  # a bound that holds only where a value is at least 0 (`x & m`'s, of `m`)
        x, y = evaluate(self.lhs, env), evaluate(self.rhs, env)
        match self.rel:
            case "<":
                return x < y
            case "<=":
                return x <= y
            case ">=":
                return x >= y
            case "==":
                return x == y
        raise AssertionError(self.rel)

    @property
    def symbols(self) -> frozenset[str]:
        return free_symbols(self.lhs) | free_symbols(self.rhs)

    def describe(self, env: Mapping[str, int]) -> str:
        x, y = evaluate(self.lhs, env), evaluate(self.rhs, env)
        wraps = self.kind == "tile-index" and not (fits_i32(self.lhs, env) and fits_i32(self.rhs, env))
        neg = unmet(self.lhs, env) or unmet(self.rhs, env)
        return (f"{self.what}: `{self.lhs} {self.rel} {self.rhs}` is `{x} {self.rel} {y}`"
                + (", computed past the i32 range (index arithmetic wraps)" if wraps else
                   f", but `{neg}` is {evaluate(neg, env)}: `&` with a negative value can set any bit"
                   if neg is not None else ""))

    def diagnostic(
        self, env: Mapping[str, int], launch: Span | None = None, *, static: bool = False
    ) -> Diagnostic:
        """The located error for a failed check (primary at the launch if given);
        `static` when the checker decided it at compile time for this call."""
        msg = (
            f"this launch of kernel `{self.kernel}` fails a check: {self.what}"
            if static
            else f"launch-time check failed in kernel `{self.kernel}`: {self.what}"
        )
        d = Diagnostic.error(self.code, msg)
        if launch is not None:
            d = d.primary(launch, "this launch violates the check").secondary(
                self.span, self.describe(env)
            )
        else:
            d = d.primary(self.span, self.describe(env))
        bindings = ", ".join(f"{k} = {env[k]}" for k in sorted(self.symbols) if k in env)
        if bindings:
            d = d.note(f"with {bindings}")
        m = re.search(r"of `(\w+)\.partition", self.what) or re.search(r"`(\w+)\.load_like\(", self.what)
        if self.kind == "tile-divides" and isinstance(self.lhs, BinOp) and self.lhs.op == "%":
            return d.with_help(_divides_help(self.lhs, env))
        if self.help:
            return d.with_help(self.help)
        return d.with_help(_HELP.get(self.kind, "change the launch so that the check holds")
                           .replace("{name}", m.group(1) if m else "z"))


def _divides_help(rem: BinOp, env: Mapping[str, int]) -> str:
    """The own tile's dimension rounded up to a multiple of the nested one's (round 18: a band of 150 columns
    in nested tiles of 64 was told "launch with an own tile that the nested tile shape divides")."""
    own, nested = evaluate(rem.lhs, env), evaluate(rem.rhs, env)
    if nested <= 0 or own <= 0:
        return _HELP["tile-divides"]
    up = -(-own // nested) * nested
    what = f"`{rem.lhs} = {up}`" if isinstance(rem.lhs, Sym) else f"{up}"
    return (f"make the own tile's dimension a multiple of {nested}: {what}, {own} rounded up (an own tile may "
            f"stick out past the tensor's edge: its loads there read zeros and its stores there are dropped), "
            f"partitioned so at the launch; or nest tiles of a size that divides {own}")


_HELP = {
    "tile-index": "launch with tile shapes that keep the index inside the own tile's nested "
    "tiles, or loop over `0..q.num_tiles(axis)`; a block reads only its own tile of a `&mut` "
    "parameter: to read other blocks' tiles, pass the data as a `&` input as well (a copy, "
    "`&{name}.clone()`), whose tiles every block may read",
    "tile-divides": "launch with an own tile that the nested tile shape divides",
    "tile-equal": "read `{name}`'s own tile with `{name}.load()` (its own shape, which broadcasts where a "
    "dimension is 1), or partition both tensors with the same tile shape at this launch",
}


@dataclass(slots=True)
class OwnershipFacts:
    """The ownership checker's output.

    launch_checks: every fact deferred to launch time (see module docstring).
    waits: for each `h.wait()` call node, the launch call nodes whose borrows
        it may end (informational; the REPL and LSP can show it).
    unsafe_writes: for each kernel (qualified name), its `&` parameters that
        its `unsafe` code writes, each with how: `"atomic_add"`, `"atomic_max"`
        or `"atomic_min"` (atomics of that one kind only), `"atomic"` (atomics
        of several kinds, on elements the checker saw apart) or `"store"`
        (`store_unchecked`). A launch writes those arguments, for the host
        checker and the run-time checks alike; two launches that only update a
        tensor with atomics of the same one kind may be in flight together.
    """

    launch_checks: list[LaunchCheck] = field(default_factory=list)
    waits: dict[object, tuple[object, ...]] = field(default_factory=dict)
    unsafe_writes: dict[str, dict[str, str]] = field(default_factory=dict)

    def writes_for(self, kernel: str) -> frozenset[str]:
        """The `&` parameters of `kernel` that a launch writes (`unsafe_writes`)."""
        return frozenset(self.unsafe_writes.get(kernel, ()))

    def atomics_for(self, kernel: str) -> dict[str, str]:
        """Those of them that the launch only updates with atomics of one kind, with the kind."""
        return {p: how for p, how in self.unsafe_writes.get(kernel, {}).items() if how.startswith("atomic_")}

    def checks_for(self, kernel: str) -> list[LaunchCheck]:
        return [c for c in self.launch_checks if c.kernel == kernel]
