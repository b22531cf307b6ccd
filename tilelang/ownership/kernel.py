"""The kernel-side ownership checker (BRIEF §6 rule 8).

A block owns exactly one tile of each `&mut` parameter and may only read its
`&` parameters. This pass checks, over every kernel and every device function
(a non-kernel `fn` called from a kernel):

  - `store` only through a `&mut` parameter or a nested partition of one
    (E0401 otherwise);
  - `z.partition(shape)` of a `&mut` parameter tiles the own tile: same rank,
    every nested tile dimension divides the own one (E0402; a symbolic case
    becomes a `LaunchCheck` of kind "tile-divides");
  - every index into nested tiles stays inside the own tile: proven from
    constants, `for j in a..q.num_tiles(k)` headers and `block_id`/loop
    bounds, or recorded as a `LaunchCheck` of kind "tile-index"; a constant
    out of range is E0403; an index that depends on tensor data is E0407;
  - a `&mut` parameter never escapes: not returned, not bound to another
    name, not put in a tuple (E0404), and not passed where a `&` tensor is
    expected (E0406: a `&` view can read any tile, which other blocks write);
  - `atomic_add`, `atomic_max`, `store_unchecked` only inside `unsafe { }`
    (E0405).

Invariant: the pass is flow-insensitive and never raises on a well-formed AST.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tilelang.diagnostics.codes import kernel as codes
from tilelang.diagnostics.model import Diagnostic, DiagnosticSink
from tilelang.ownership.env import ProgramView
from tilelang.ownership.facts import BinOp, Const, LaunchCheck, Sym, SymExpr, simplify
from tilelang.source import Span
from tilelang.syntax import ast

UNSAFE_OPS = frozenset(("atomic_add", "atomic_max", "atomic_min", "store_unchecked"))


def called_names(node: object) -> set[str]:
    """Names of every plain or path call inside a subtree (kernels, fns, builtins)."""
    out: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            c = n.callee
            out.add(c.ident.name if isinstance(c, ast.Name) else c.segments[-1].name)
    return out


# ---------------------------------------------------------------- linear forms
def _linear(e: SymExpr) -> dict[str, int] | None:
    """`e` as {atom: coefficient} with the constant under key "" (None if non-linear)."""
    match e:
        case Const(value=v):
            return {"": v}
        case Sym(name=n):
            return {n: 1}
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


def _fold_minmax(op: str, x: SymExpr, y: SymExpr) -> SymExpr:
    """`min(x, y)` / `max(x, y)`, decided now when the difference is constant."""
    d = _const_diff(x, y)
    if d is None:
        return simplify(BinOp(op, x, y))
    return (x if d <= 0 else y) if op == "min" else (x if d >= 0 else y)


def _const_diff(a: SymExpr, b: SymExpr) -> int | None:
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
@dataclass(frozen=True, slots=True)
class _Param:
    name: str
    own: bool  # `&mut Tensor`: this block's own tile
    shared: bool  # `&Tensor`
    dims: tuple[SymExpr | None, ...] | None
    node: ast.Param


@dataclass(frozen=True, slots=True)
class _Nested:
    """`let q = z.partition([..])` of an own tile."""

    param: _Param
    tiles: tuple[SymExpr, ...] | None  # number of nested tiles per axis
    span: Span


@dataclass(frozen=True, slots=True)
class _View:
    """`let p = x.partition([..])` of a `&` parameter."""

    param: _Param
    tile: tuple[SymExpr | None, ...] | None


@dataclass(frozen=True, slots=True)
class _Int:
    lo: SymExpr
    hi: SymExpr  # inclusive
    tiles_of: tuple[str, int] | None = None  # `for j in 0..q.num_tiles(k)`: (q, k)


_Local = _Param | _Nested | _View | _Int | None


@dataclass(slots=True)
class KernelChecker:
    view: ProgramView
    sink: DiagnosticSink
    fn: ast.FnDecl
    launch_checks: list[LaunchCheck]
    scopes: list[dict[str, _Local]] = field(default_factory=list)
    unsafe: int = 0
    generics: set[str] = field(default_factory=set)
    _seen: set[tuple[object, ...]] = field(default_factory=set)

    def report(self, d: Diagnostic) -> None:
        key = (d.code, d.primary_span, d.message)
        if key not in self._seen:
            self._seen.add(key)
            self.sink.emit(d)

    # -- entry ----------------------------------------------------------------
    def run(self) -> None:
        self.generics = {g.name.name for g in self.fn.generics}
        scope: dict[str, _Local] = {}
        for p in self.fn.params:
            scope[p.name.name] = self._param(p)
        self.scopes = [scope]
        self.block(self.fn.body, tail_escapes="returned")

    def _param(self, p: ast.Param) -> _Param | None:
        ty = p.ty
        if not (
            isinstance(ty, ast.RefType)
            and isinstance(ty.inner, ast.NamedType)
            and ty.inner.name.name == "Tensor"
        ):
            return None
        shape = next((a for a in ty.inner.args if isinstance(a, ast.ShapeType)), None)
        dims = (
            tuple(self.sym(d) if d is not None else None for d in shape.dims)
            if shape is not None
            else None
        )
        return _Param(p.name.name, ty.mutable, not ty.mutable, dims, p)

    def lookup(self, name: str) -> _Local:
        for s in reversed(self.scopes):
            if name in s:
                return s[name]
        return None

    # -- symbolic integers ----------------------------------------------------
    def sym(self, e: ast.Expr) -> SymExpr | None:
        """A compile-time integer expression (literals, generics, module consts)."""
        match e:
            case ast.IntLit(value=v):
                return Const(v)
            case ast.Name(ident=i):
                if i.name in self.generics:
                    return Sym(i.name)
                c = self.view.consts.get(i.name)
                if c is not None:
                    inner = self.sym(c.value)
                    return inner if isinstance(inner, Const) else Sym(i.name)
                return None
            case ast.Binary(op="+" | "-" | "*" | "/" | "%" as op, lhs=a, rhs=b):
                x, y = self.sym(a), self.sym(b)
                if x is None or y is None:
                    return None
                return simplify(BinOp(op, x, y))
            case ast.Cast(expr=x):
                return self.sym(x)
        return None

    def bounds(self, e: ast.Expr) -> tuple[SymExpr, SymExpr] | None:
        """Inclusive lower and upper bounds of an integer index expression."""
        s = self.sym(e)
        if s is not None:
            return s, s
        match e:
            case ast.Name(ident=i):
                loc = self.lookup(i.name)
                if isinstance(loc, _Int):
                    return loc.lo, loc.hi
                return None
            case ast.Call(callee=ast.Name(ident=i), args=args) if (
                i.name in ("block_id", "num_blocks") and len(args) == 1
            ):
                ax = self.sym(args[0].value)
                if not isinstance(ax, Const):
                    return None
                nb = Sym(f"num_blocks({ax.value})")
                return (Const(0), BinOp("-", nb, Const(1))) if i.name == "block_id" else (nb, nb)
            case ast.MethodCall(receiver=ast.Name(ident=i), method=m, args=args) if (
                m.name == "num_tiles" and len(args) == 1
            ):
                loc = self.lookup(i.name)
                ax = self.sym(args[0].value)
                if (
                    isinstance(loc, _Nested)
                    and loc.tiles
                    and isinstance(ax, Const)
                    and 0 <= ax.value < len(loc.tiles)
                ):
                    t = loc.tiles[ax.value]
                    return t, t
                return None
            case ast.Call(callee=ast.Name(ident=i), args=args) if (
                i.name in ("minimum", "maximum") and len(args) == 2
            ):
                lo, hi = self._half_bounds(e)
                return (lo, hi) if lo is not None and hi is not None else None
            case ast.Cast(expr=x):
                return self.bounds(x)
            case ast.Unary(op="-", operand=x):
                b = self.bounds(x)
                return (
                    (simplify(BinOp("-", Const(0), b[1])), simplify(BinOp("-", Const(0), b[0])))
                    if b
                    else None
                )
            case ast.Binary(op=op, lhs=a, rhs=b):
                ba, bb = self.bounds(a), self.bounds(b)
                if ba is None or bb is None:
                    return None
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
                    lo = (
                        Const(0)
                        if isinstance(ba[0], Const) and ba[0].value >= 0
                        else Const(1 - c.value)
                    )
                    return lo, Const(c.value - 1)
                return None
        return None

    def _half_bounds(self, e: ast.Expr) -> tuple[SymExpr | None, SymExpr | None]:
        """Bounds of which one side may be unknown (None). A clamp bounds an
        index that depends on tensor data: `minimum(x, hi)` is at most `hi`
        whatever `x` is, `maximum(x, lo)` at least `lo`, so
        `minimum(maximum(pos, 0), q.num_tiles(1) - 1)` stays in the own tile
        (it writes the wrong place if `pos` is out of range, never another
        block's tile)."""
        match e:
            case ast.Call(callee=ast.Name(ident=i), args=args) if (
                i.name in ("minimum", "maximum") and len(args) == 2
            ):
                (alo, ahi), (blo, bhi) = (self._half_bounds(a.value) for a in args)
                op = "min" if i.name == "minimum" else "max"

                def both(x: SymExpr | None, y: SymExpr | None) -> SymExpr | None:
                    return None if x is None or y is None else _fold_minmax(op, x, y)

                def either(x: SymExpr | None, y: SymExpr | None) -> SymExpr | None:
                    # min(x, y) <= y for any x: one known upper bound suffices
                    # (max: one known lower bound).
                    return both(x, y) if x is not None and y is not None else x or y

                if op == "min":
                    return both(alo, blo), either(ahi, bhi)
                return either(alo, blo), both(ahi, bhi)
        b = self.bounds(e)
        return (b[0], b[1]) if b is not None else (None, None)

    # -- walking --------------------------------------------------------------
    def block(self, b: ast.Block, *, tail_escapes: str | None = None) -> None:
        self.scopes.append({})
        try:
            for s in b.stmts:
                self.stmt(s)
            if b.tail is not None:
                self.expr(b.tail, escape=tail_escapes)
        finally:
            self.scopes.pop()

    def stmt(self, s: ast.Stmt) -> None:
        match s:
            case ast.Let(pattern=pat, value=init):
                loc: _Local = None
                if init is not None:
                    self.expr(init, escape="bound to a new name")
                    loc = self._local_of(init, isinstance(pat, ast.NamePat) and pat.mutable)
                for n in ast.walk(pat):
                    if isinstance(n, ast.NamePat):
                        self.scopes[-1][n.name.name] = loc if isinstance(pat, ast.NamePat) else None
            case ast.Assign(target=t, value=v):
                self.expr(t)
                self.expr(v, escape="assigned to a variable")
                if isinstance(t, ast.Name):
                    self._forget(t.ident.name)
            case ast.ExprStmt(expr=e):
                self.expr(e)
            case ast.For(pattern=pat, iter=it, body=body):
                self.expr(it)
                self.scopes.append({})
                try:
                    if isinstance(pat, ast.NamePat):
                        self.scopes[-1][pat.name.name] = self._range_fact(it)
                    self.block(body)
                finally:
                    self.scopes.pop()
            case ast.While(cond=c, body=body):
                self.expr(c)
                self.block(body)
            case ast.Return(value=v):
                if v is not None:
                    self.expr(v, escape="returned")
            case ast.Break() | ast.Continue():
                pass

    def _forget(self, name: str) -> None:
        for s in reversed(self.scopes):
            if name in s:
                s[name] = None
                return

    def _range_fact(self, it: ast.Expr) -> _Int | None:
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
            and isinstance(e.receiver, ast.Name)
            and len(e.args) == 1
        ):
            ax = self.sym(e.args[0].value)
            if isinstance(ax, Const):
                tiles_of = (e.receiver.ident.name, ax.value)
        return _Int(lo[0], top, tiles_of)

    def _local_of(self, init: ast.Expr, mutable: bool) -> _Local:
        if (
            isinstance(init, ast.MethodCall)
            and init.method.name == "partition"
            and isinstance(init.receiver, ast.Name)
        ):
            p = self.lookup(init.receiver.ident.name)
            if isinstance(p, _Param):
                return self._partition(p, init)
        if isinstance(init, ast.Name):
            loc = self.lookup(init.ident.name)
            if isinstance(loc, (_Nested, _View)):
                return loc  # an alias of a partition has its facts
        if not mutable:
            b = self.bounds(init)
            if b is not None:
                return _Int(b[0], b[1])
        return None

    def _partition(self, p: _Param, call: ast.MethodCall) -> _Local:
        shape = call.args[0].value if call.args else None
        tile = tuple(self.sym(x) for x in shape.elems) if isinstance(shape, ast.ArrayExpr) else None
        if p.shared:
            return _View(p, tile)
        if not p.own:
            return None
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
            return _Nested(p, None, call.span)
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
            return _Nested(p, None, call.span)
        ok = True
        for k, (d, t) in enumerate(zip(dims, tiles_, strict=True)):
            elem = shape.elems[k]
            if isinstance(d, Const) and isinstance(t, Const):
                if t.value <= 0 or t.value > d.value or d.value % t.value:
                    ok = False
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
                        .primary(
                            elem.span, "the nested tiles would reach past this block's own tile"
                        )
                        .secondary(p.node.ty.span, f"the own tile of `{p.name}` is declared here")
                        .note(
                            "other blocks own the neighbouring tiles; writing there would "
                            "race with them"
                        )
                        .with_help(f"use a nested tile dimension that divides {d.value}")
                    )
            elif simplify(d) == simplify(t) or t == Const(1):
                continue
            else:
                self._defer(
                    LaunchCheck(
                        self.fn.name.name,
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
        if not ok:
            return _Nested(p, None, call.span)
        ntiles = tuple(simplify(BinOp("/", d, t)) for d, t in zip(dims, tiles_, strict=True))
        return _Nested(p, ntiles, call.span)

    # -- expressions ----------------------------------------------------------
    def expr(self, e: ast.Expr, escape: str | None = None) -> None:
        """Walk `e`; `escape` says how a bare `&mut` parameter here would escape."""
        match e:
            case ast.Name(ident=i):
                loc = self.lookup(i.name)
                if escape and isinstance(loc, _Param) and loc.own:
                    self._report_escape(loc, e, escape)
            case ast.Ref(expr=x):
                self.expr(x, escape)
            case ast.Call():
                self.call(e)
            case ast.MethodCall():
                self.method(e)
            case ast.Block():
                self.block(e, tail_escapes=escape)
            case ast.UnsafeBlock(body=b):
                self.unsafe += 1
                try:
                    self.block(b, tail_escapes=escape)
                finally:
                    self.unsafe -= 1
            case ast.If(cond=c, then=t, else_=els):
                self.expr(c)
                self.block(t, tail_escapes=escape)
                if els is not None:
                    self.expr(els, escape)
            case ast.TupleExpr(elems=xs) | ast.ArrayExpr(elems=xs):
                for x in xs:
                    self.expr(
                        x, "put in a tuple" if isinstance(e, ast.TupleExpr) else "put in an array"
                    )
            case ast.GraphBlock(body=b):
                self.block(b)
            case _:
                for n in _children(e):
                    self.expr(n)

    def _report_escape(self, p: _Param, e: ast.Expr, how: str) -> None:
        self.report(
            Diagnostic.error(
                codes.MUT_PARAM_ESCAPES, f"`&mut` parameter `{p.name}` escapes: it is {how}"
            )
            .primary(e.span, f"`{p.name}` {how} here")
            .secondary(
                p.node.span,
                f"`{p.name}` is this block's own tile, borrowed only for the kernel's body",
            )
            .note(
                "a block's own tile must be written only through the parameter itself, "
                "so no other name can alias it"
            )
            .with_help(
                f"use `{p.name}.load()` / `{p.name}.store(..)` directly instead of "
                "passing the parameter around"
            )
        )

    def call(self, e: ast.Call) -> None:
        name = e.callee.ident.name if isinstance(e.callee, ast.Name) else e.callee.segments[-1].name
        if name in UNSAFE_OPS and self.unsafe == 0:
            self.report(
                Diagnostic.error(
                    codes.UNSAFE_OP_OUTSIDE_UNSAFE,
                    f"`{name}` is only allowed inside an `unsafe` block",
                )
                .primary(e.span, f"`{name}` writes memory that other blocks may also write")
                .note(
                    "atomics and unchecked stores escape the one-tile-per-block rule, so the "
                    "checker cannot prove them race-free"
                )
                .with_help("wrap the call in `unsafe { ... }` if the access pattern is intended")
            )
        decl = self.view.callee(e)
        for i, a in enumerate(e.args):
            if isinstance(a.value, ast.Name):
                loc = self.lookup(a.value.ident.name)
                if (
                    isinstance(loc, _Param)
                    and loc.own
                    and decl is not None
                    and not decl.is_kernel
                    and i < len(decl.params)
                ):
                    pty = decl.params[i].ty
                    if isinstance(pty, ast.RefType) and not pty.mutable:
                        self._report_as_shared(loc, a.value, decl, decl.params[i])
                continue
            self.expr(a.value)

    def _report_as_shared(self, p: _Param, arg: ast.Expr, decl: ast.FnDecl, dp: ast.Param) -> None:
        self.report(
            Diagnostic.error(
                codes.MUT_PARAM_AS_SHARED,
                f"`&mut` parameter `{p.name}` passed where a `&` tensor is expected",
            )
            .primary(arg.span, f"`{p.name}` is this block's own tile")
            .secondary(
                dp.span,
                f"`{decl.name.name}` takes `{dp.name.name}` as `&`, so it may read any tile of it",
            )
            .note("other blocks write the other tiles of the same tensor at the same time")
            .with_help(
                f"pass the tile's value instead (`{p.name}.load()`), or make "
                f"`{dp.name.name}` a `&mut` parameter"
            )
        )

    def method(self, e: ast.MethodCall) -> None:
        m = e.method.name
        recv = e.receiver
        loc = self.lookup(recv.ident.name) if isinstance(recv, ast.Name) else None
        rname = (
            recv.ident.name
            if isinstance(recv, ast.Name)
            else (
                f"{recv.receiver.ident.name}.partition(..)"
                if isinstance(recv, ast.MethodCall) and isinstance(recv.receiver, ast.Name)
                else "partition"
            )
        )
        if not isinstance(recv, ast.Name):
            self.expr(recv)
            if m in ("store", "load", "load_padded") and isinstance(recv, ast.MethodCall):
                loc = self._local_of(recv, False)  # `z.partition([..]).store(t, [i])`
        for a in e.args:
            if isinstance(a.value, ast.Name) and m in ("load_like", "load_padded_like"):
                continue  # `x.load_like(z)` reads only `z`'s position and shape
            self.expr(a.value)
        if m in ("store", "store_unchecked"):
            shared = (isinstance(loc, _Param) and loc.shared) or isinstance(loc, _View)
            if shared:
                p = loc.param if isinstance(loc, _View) else loc
                assert isinstance(p, _Param)
                self.report(
                    Diagnostic.error(
                        codes.STORE_THROUGH_SHARED,
                        f"cannot store through `{rname}`, which is a `&` reference",
                    )
                    .primary(e.span, "store through a shared reference")
                    .secondary(
                        p.node.span,
                        f"`{p.name}` is declared here as `&Tensor`, read-only for every block",
                    )
                    .note(
                        "every block of the launch can read a `&` tensor; a store would race "
                        "with them"
                    )
                    .with_help(f"make `{p.name}` a `&mut` parameter and partition it at the launch")
                )
            elif isinstance(loc, _Nested) and len(e.args) >= 2:
                self.index(loc, e.args[1].value, rname, write=True)
            elif len(e.args) >= 2 and not isinstance(loc, _Param):
                self._unknown_partition(e, rname)
        elif m in ("load", "load_padded") and e.args:
            if isinstance(loc, _Nested):
                self.index(loc, e.args[0].value, rname, write=False)
            elif isinstance(loc, _View):
                self.view_index(loc, e.args[0].value)

    def _unknown_partition(self, e: ast.MethodCall, rname: str) -> None:
        self.report(
            Diagnostic.error(
                codes.UNBOUNDED_TILE_INDEX, f"cannot tell which tiles `{rname}` indexes"
            )
            .primary(
                e.receiver.span,
                "the checker cannot trace this partition to a `&mut` parameter's own tile",
            )
            .note(
                "an indexed store must go through a partition of a `&mut` parameter "
                "bound with `let q = z.partition([..]);`"
            )
            .with_help(f"bind the partition directly: `let {rname} = z.partition([..]);`")
        )

    def index(self, q: _Nested, idx: ast.Expr, qname: str, *, write: bool) -> None:
        if q.tiles is None:
            return
        elems = idx.elems if isinstance(idx, ast.ArrayExpr) else None
        if elems is None or len(elems) != len(q.tiles):
            return  # rank mismatches are type errors
        for k, (ie, nt) in enumerate(zip(elems, q.tiles, strict=True)):
            if isinstance(ie, ast.Name):
                loc = self.lookup(ie.ident.name)
                if (
                    isinstance(loc, _Int)
                    and loc.tiles_of == (qname, k)
                    and _const_diff(loc.lo, Const(0)) is not None
                    and (_const_diff(loc.lo, Const(0)) or 0) >= 0
                ):
                    continue
            b = self.bounds(ie)
            what = f"tile index `{_text(ie)}` of `{qname}` along axis {k}"
            if b is None:
                # A `let mut` counter is the usual cause, not tensor data: say so.
                muts = sorted({
                    n.ident.name for n in ast.walk(ie)
                    if isinstance(n, ast.Name) and getattr(self.view._symbol(n), "mutable", False)
                })
                why = (f"`{muts[0]}` is a `let mut` variable: its range is not tracked" if muts
                       else "this index may depend on tensor data")
                self.report(
                    Diagnostic.error(codes.UNBOUNDED_TILE_INDEX, f"cannot bound the {what}")
                    .primary(ie.span, why)
                    .secondary(
                        q.span, f"`{qname}` has nested tiles only inside this block's own tile"
                    )
                    .note(
                        "a nested tile index out of range would "
                        + ("write" if write else "read")
                        + " another block's tile"
                    )
                    .with_help(
                        f"index with a loop variable of `for j in 0..{qname}."
                        f"num_tiles({k})`, a constant, or `block_id`, or clamp it into "
                        f"range: `minimum(maximum(i, 0), {qname}.num_tiles({k}) - 1)`"
                    )
                )
                continue
            lo, hi = simplify(b[0]), simplify(b[1])
            self._bound(lo, ">=", Const(0), ie, what, q, qname, k)
            self._bound(hi, "<", nt, ie, what, q, qname, k)

    def _bound(
        self,
        x: SymExpr,
        rel: str,
        y: SymExpr,
        ie: ast.Expr,
        what: str,
        q: _Nested,
        qname: str,
        axis: int,
    ) -> None:
        diff = _const_diff(x, y)
        if diff is not None:
            holds = diff >= 0 if rel == ">=" else diff < 0
            if holds:
                return
            # The difference is a constant: decided now, whatever the generics are.
            exact = isinstance(x, Const) and self.sym(ie) is not None
            tiles = f"`{qname}` has {y} nested tile{'s' * (y != Const(1))} along axis {axis}"
            msg = (
                f"tile index {x} of `{qname}` along axis {axis} is negative"
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
                .with_help(f"keep the index in `0..{qname}.num_tiles({axis})`")
            )
            return
        self._defer(
            LaunchCheck(
                self.fn.name.name,
                "tile-index",
                x,
                rel,
                y,
                ie.span,
                codes.TILE_INDEX_OUT_OF_RANGE,
                what,
            )
        )

    def _defer(self, check: LaunchCheck) -> None:
        """Record a launch-time check; in a device function, whose generics the
        runtime does not bind at a launch, an unprovable fact is an error now."""
        if self.fn.is_kernel:
            self.launch_checks.append(check)
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

    def view_index(self, v: _View, idx: ast.Expr) -> None:
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
                        + (
                            f": `{v.param.name}` has {n} tiles along axis {k}"
                            if n is not None
                            else ""
                        ),
                    )
                    .primary(ie.span, "index out of range")
                    .secondary(v.param.node.span, f"`{v.param.name}` is declared here")
                    .with_help(f"use an index between 0 and `num_tiles({k})` - 1")
                )


def _children(e: object) -> list[ast.Expr]:
    out: list[ast.Expr] = []
    for slot in getattr(type(e), "__slots__", ()):
        c = getattr(e, slot, None)
        items = c if isinstance(c, tuple) else (c,)
        for x in items:
            if isinstance(x, ast.Arg):
                out.append(x.value)
            elif isinstance(x, (ast.Ident, Span)) or x is None:
                continue
            elif hasattr(x, "__slots__") and not isinstance(
                x, (ast.NamedType, ast.ShapeType, ast.RefType, ast.TupleType)
            ):
                out.append(x)
    return out


def _text(e: ast.Expr) -> str:
    match e:
        case ast.Name(ident=i):
            return i.name
        case ast.IntLit(value=v):
            return str(v)
        case ast.Binary(op=op, lhs=a, rhs=b):
            return f"{_text(a)} {op} {_text(b)}"
        case ast.Call(callee=ast.Name(ident=i), args=args):
            return f"{i.name}({', '.join(_text(a.value) for a in args)})"
        case ast.MethodCall(receiver=ast.Name(ident=r), method=m, args=args):
            return f"{r.name}.{m.name}({', '.join(_text(a.value) for a in args)})"
    return "index"


def check_kernels(view: ProgramView, sink: DiagnosticSink, checks: list[LaunchCheck]) -> None:
    """Check every kernel of the root module and every fn reachable from one."""
    fns = [f for f in view.root_fns() if f.is_kernel]
    seen = {f.name.name for f in fns}
    todo = list(fns)
    while todo:
        f = todo.pop()
        for n in sorted(called_names(f.body)):
            d = view.fns.get(n)
            if d is not None and n not in seen and not d.is_kernel:
                seen.add(n)
                fns.append(d)
                todo.append(d)
    root_ids = {id(f) for f in view.root_fns()}
    for f in fns:
        if id(f) not in root_ids:
            continue  # stdlib / imported device fns are checked in their own module
        KernelChecker(view, sink, f, checks).run()
