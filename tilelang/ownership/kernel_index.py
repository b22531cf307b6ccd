"""Nested tiles and tile indices inside kernels: the symbolic half of the
kernel ownership checker (BRIEF §6 rule 8).

`KernelIndex` is the part of `KernelChecker` that reasons about integers; its
base `KernelBounds` (`kernel_bounds.py`) computes them:

  - `sym(e)`: a compile-time integer expression (literals, the function's
    const generics, module constants), resolved through the type checker's
    symbols, so a local `let` that shadows a const generic is the local;
  - `bounds(e)`: inclusive bounds of an index expression from constants,
    immutable `let`s, `for` headers, `block_id`/`num_blocks`, `num_tiles`;

and this class checks with them:

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

from tilelang.diagnostics.codes import kernel as codes
from tilelang.diagnostics.model import Diagnostic
from tilelang.ownership.facts import BinOp, Const, LaunchCheck, SymExpr, simplify
from tilelang.ownership.kernel_bounds import (
    FLOAT_EXACT,
    I32_MAX,
    I32_MIN,
    INT_RANGE,
    Int,
    KernelBounds,
    Local,
    Nested,
    Param,
    View,
    branch_values,
    cast_keeps,
    const_diff,
    within,
)
from tilelang.syntax import ast

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


_DATA = "this index may depend on tensor data"


def _scatter_help(q: ast.Expr, qname: str, shown: str, k: int) -> str:
    """E0407's help for a store through the own tile's nested tiles at an index read from data (round 30: COO's
    `y[row[k]] += v` as `py.store(v, [r])` with one block a nonzero, a scatter to rows other blocks own; the help
    offered only a clamp into the block's own tile, which ran and wrote every value into the wrong row)."""
    tensor = q.receiver.ident.name if isinstance(q, ast.MethodCall) and isinstance(q.receiver, ast.Name) else "y"
    return (f"a position read from data may be in tiles other blocks own (a scatter): take `{tensor}` as a `&` "
            f"parameter and update it in `unsafe` code, `atomic_add(&{tensor}, [{shown}], v)` for a scatter-add "
            f"(`store_unchecked` where no two blocks write one element), or give each output row one block that "
            f"gathers what goes into it (sorted indices, a row pointer); where every such position is inside this "
            f"block's own tile, clamp it: `minimum(maximum({shown}, 0), {qname}.num_tiles({k}) - 1)`")


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


class KernelIndex(KernelBounds):
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
                _scatter_help(q, qname, shown, k) if write and why == _DATA else
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
                        return _DATA
                    case ast.If() if branch_values(n) is None:
                        return "the range of an `if` expression with statements in a branch is not tracked"
                    case ast.Call(callee=ast.Name(ident=i)) if self.view.callee_info(n) is not None:
                        if i.name in ("minimum", "maximum", "block_id", "num_blocks"):
                            return (f"this `{i.name}` is the program's own function, which shadows the built-in "
                                    f"`{i.name}`: the range of what it returns is not tracked")
                        return f"the range of what `{i.name}` returns is not tracked"
                    case ast.Call(callee=ast.Name(ident=i)) if i.name not in (
                            "minimum", "maximum", "block_id", "num_blocks"):
                        return f"the range of `{i.name}(..)` is not tracked"
                    case ast.Cast(expr=x, ty=ast.NamedType(name=tn)) if tn.name in FLOAT_EXACT \
                            and not cast_keeps(n.ty, self.bounds(x)) and self.bounds(x) is not None:
                        return (f"`as {tn.name}` rounds an integer past {FLOAT_EXACT[tn.name]} to a neighbour, up "
                                f"or down: `{text(x)}` is not tracked through it")
                    case ast.Cast(expr=x, ty=ast.NamedType(name=tn)) if tn.name == "bool":
                        return f"`{text(n)}` is 1 for any value but 0: not tracked"
                    case ast.Binary() if self._float(n):
                        return (f"`{text(n)}` is float arithmetic, which rounds (and whose `/` does not truncate): "
                                "do the index arithmetic in integers")
                    case ast.Unary(op="-", operand=x) if self.bounds(n) is None and self.bounds(x) is not None:
                        return f"`{text(n)}` can leave the integer type's range (the negation of its minimum wraps)"
                    case ast.Cast(expr=x, ty=ast.NamedType(name=tn)) if tn.name in ("u32", "u64") \
                            and not cast_keeps(n.ty, self.bounds(x)) and self.bounds(x) is not None:
                        return f"`{text(x)}` may be negative, and `as {tn.name}` makes a negative value a huge one"
                    case ast.Cast(expr=x, ty=ast.NamedType(name=tn)) if tn.name in INT_RANGE \
                            and not cast_keeps(n.ty, self.bounds(x)) and self.bounds(x) is not None \
                            and not any(isinstance(m, ast.Cast) and m is not n for m in ast.walk(x)):
                        return (f"`{text(x)}` may be outside `{tn.name}`'s range (unsigned arithmetic below 0 "
                                f"wraps to a huge value), and `as {tn.name}` wraps it")
                    case ast.Binary(op=op, lhs=a, rhs=b) if (rng := self._int_range(n)) is not None and (
                            (bb := self._binary_bounds_math(op, a, b)) is not None and not within(bb, rng)):
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
                            isinstance(x, Const) and not I32_MIN <= x.value <= I32_MAX
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
