"""The kernel-side ownership checker (BRIEF §6 rule 8).

A block owns exactly one tile of each `&mut` parameter and may only read its
`&` parameters. This pass checks, over every kernel and every device
function of every module the program loads:

  - `store` only through a `&mut` parameter or a nested partition of one
    (E0401 otherwise); decided by the type checker's type of the receiver,
    so an alias (`let y = x;`), a block or an `if` cannot hide a `&` tensor;
  - a `&mut` parameter is read or written only inside the block's own tile:
    `b.load_like(a)` with `b` itself `&mut` needs `b`'s tile shape to equal
    `a`'s (E0408, or a "tile-equal" `LaunchCheck`), nested partitions tile
    the own tile and nested indices stay in it (E0402, E0403, E0407; see
    `kernel_index.py`), and a load or store through a nested partition that
    cannot be traced to one is refused (E0407);
  - a `&mut` parameter never escapes: not returned, not bound to another
    name, not put in a tuple (E0404), and not passed where a `&` tensor is
    expected, however it is spelled (`z`, `&z`, `{ z }`; E0406);
  - `atomic_add`, `atomic_max`, `store_unchecked` only inside `unsafe { }`
    (E0405), and never on a `&mut` parameter (E0416): their index is an
    element of the whole tensor, so they would reach the tiles that other
    blocks store to (the escape hatch is for `&` tensors, which the launch
    then borrows as written).

Which tensor parameter an expression denotes is followed through names
(by the type checker's symbol of each binding), `&`, blocks and `if`.

Entry point: `check_kernels(view, sink, checks)`. Invariant: the pass is
flow-insensitive and never raises on a well-typed program.
"""

from __future__ import annotations

from typing import Any

from tilelang import lastblock
from tilelang.diagnostics.codes import kernel as codes
from tilelang.diagnostics.model import Diagnostic, DiagnosticSink
from tilelang.ownership.device_facts import hand_down
from tilelang.ownership.env import ProgramView
from tilelang.ownership.facts import BinOp, Const, LaunchCheck, Sym, SymExpr, simplify
from tilelang.ownership.kernel_bounds import UNTRACED, Int, Local, Nested, Param, View, const_diff
from tilelang.ownership.kernel_index import KernelIndex
from tilelang.source import Span
from tilelang.syntax import ast

UNSAFE_OPS = frozenset(("atomic_add", "atomic_max", "atomic_min", "store_unchecked"))


def _tname(ty: object) -> str:
    return type(ty).__name__


def _mut_ref(p: ast.Param) -> bool:
    return isinstance(p.ty, ast.RefType) and p.ty.mutable


def _is_tensor_ref(ty: object) -> bool:
    return _tname(ty) in ("RefT", "TileViewT")


def _holds_tensor_ref(ty: object) -> bool:
    """A tensor reference, or a tuple holding one at any depth (a device function's argument `(x, 0)`)."""
    if _tname(ty) == "TupleT":
        return any(_holds_tensor_ref(t) for t in getattr(ty, "elems", ()))
    return _is_tensor_ref(ty)


def _holds_shared_param(p: ast.Param) -> bool:
    """A parameter that is a `&Tensor`, or a tuple holding one at any depth (`t: (&Tensor<..>, i32)`)."""
    def holds(ty: object) -> bool:
        if isinstance(ty, ast.TupleType):
            return any(holds(t) for t in ty.elems)
        return (isinstance(ty, ast.RefType) and not ty.mutable and isinstance(ty.inner, ast.NamedType)
                and ty.inner.name.name == "Tensor")
    return holds(p.ty)


def _shared_ref(ty: object) -> bool:
    """A read-only tensor: `&Tensor` or a view of one."""
    if _tname(ty) == "RefT":
        return _tname(getattr(ty, "inner", None)) == "TensorT" and not getattr(ty, "mutable", True)
    return _tname(ty) == "TileViewT" and not getattr(ty, "mutable", True)


class KernelChecker(KernelIndex):
    def __init__(
        self, view: ProgramView, sink: DiagnosticSink, info: Any, checks: list[LaunchCheck]
    ) -> None:
        self.view = view
        self.sink = sink
        self.fn = info.decl
        self.key = info.qualname
        self.launch_checks = checks
        self.facts: dict[object, Local] = {}
        self.unsafe = 0
        self._parts: dict[int, Local] = {}  # `.partition(..)` call id -> its Nested/View
        self._keep: list[object] = []
        self._seen: set[tuple[object, ...]] = set()
        # `&` parameters (by index) written by atomics or unchecked stores in
        # `unsafe`, and the calls that pass them on: (callee, its param index,
        # the indices of ours the argument may denote). See `unsafe_writes`.
        self.writes: set[int] = set()
        self.raw: set[int] = set()  # of those, written by `store_unchecked`, not atomics only
        self.passes: list[tuple[str, int, frozenset[int]]] = []
        # what E0417 needs: the first plain read (a load) of each `&` parameter outside the
        # kernel's `if last_block(..)` region (E0410's), the first `unsafe` write of each, and
        # for each of `passes` the argument's span and whether the call is in that region
        self.reads: dict[int, tuple[Span, bool]] = {}  # (span, True where the receiver was not traced)
        self.write_at: dict[int, Span] = {}
        self.pass_spans: list[tuple[Span, bool]] = []
        # E0418: the `unsafe` writes of each parameter (by index), with their kind (`atomic_add`, ..,
        # `store_unchecked`)
        self.atomic_ops: dict[int, list[tuple[str, ast.Call]]] = {}
        self._region: set[int] = set()
        # in a device function: the launch checks that depend on the grid alone, which
        # every kernel that calls it (at any depth) makes at its launches
        self.device_checks: list[LaunchCheck] = []

    def report(self, d: Diagnostic) -> None:
        key = (d.code, d.primary_span, d.message)
        if key not in self._seen:
            self._seen.add(key)
            self.sink.emit(d)

    # -- entry ------------------------------------------------------------------------
    def run(self) -> None:
        reg = lastblock.region(self.fn) if self.fn.is_kernel else None
        if reg is not None:
            self._region = {id(n) for n in ast.walk(reg[0].then)}
        for p in self.fn.params:
            sym = self.view.symbol_of(p)
            param = self._param(p)
            if sym is not None and param is not None:
                self.facts[sym] = param
        self.block(self.fn.body, tail_escapes="returned")

    def _param(self, p: ast.Param) -> Param | None:
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
        return Param(p.name.name, ty.mutable, dims, p)

    # -- what an expression denotes -----------------------------------------------------
    def resolve(self, e: ast.Expr) -> list[Local]:
        """The parameters, nested partitions and views `e` may denote."""
        match e:
            case ast.Name():
                loc = self.local(e)
                return [loc] if isinstance(loc, (Param, Nested, View)) else []
            case ast.Ref(expr=x):
                return self.resolve(x)
            case ast.Block():
                return self._resolve_block(e)
            case ast.UnsafeBlock(body=b):
                return self._resolve_block(b)
            case ast.If(then=t, else_=els):
                # an arm the pass cannot trace may be any tensor: its answer is `UNTRACED`, not nothing, or the
                # union would be the other arm's alone (round 27: `bump(if c { let q = x; q } else { y })`
                # counted only `y` as written)
                holds = _holds_tensor_ref(self.view.type_of(e))
                out: list[Local] = []
                for arm in (t, els):
                    if arm is not None:
                        got = self.resolve(arm)
                        out += got or ([UNTRACED] if holds else [])
                return out
            case ast.MethodCall(receiver=r, method=m) if m.name == "partition":
                if id(e) not in self._parts:
                    self._keep.append(e)
                    locs = self.resolve(r)
                    ps = [x for x in locs if isinstance(x, Param)]
                    # (a receiver that may also be a tensor the pass cannot trace is no one parameter's tiling:
                    # `(if c { t.0 } else { y }).partition(..)` read only `y`, round 27)
                    one = len(ps) == 1 and UNTRACED not in locs
                    self._parts[id(e)] = self.partition_of(ps[0], e) if one else None
                loc = self._parts[id(e)]
                return [loc] if loc is not None else []
        return []

    def _resolve_block(self, b: ast.Block) -> list[Local]:
        """What a block's value denotes: its immutable `let`s are bound first (an argument's block is resolved
        before the walk reaches its statements: `bump({ let q = x; q })`), then its tail."""
        for s in b.stmts:
            if isinstance(s, ast.Let) and s.value is not None:
                self._bind(s.pattern, s.value)
        return self.resolve(b.tail) if b.tail is not None else []

    def _owns(self, e: ast.Expr) -> list[Param]:
        return [x for x in self.resolve(e) if isinstance(x, Param) and x.own]

    # -- walking ------------------------------------------------------------------------
    def block(self, b: ast.Block, *, tail_escapes: str | None = None) -> None:
        for s in b.stmts:
            self.stmt(s)
        if b.tail is not None:
            self.expr(b.tail, escape=tail_escapes)

    def stmt(self, s: ast.Stmt) -> None:
        match s:
            case ast.Let(pattern=pat, value=init):
                if init is not None:
                    self.expr(init, escape="bound to a new name")
                    self._bind(pat, init)
            case ast.Assign(target=t, value=v):
                self.expr(t)
                self.expr(v, escape="assigned to a variable")
            case ast.ExprStmt(expr=e):
                self.expr(e)
            case ast.For(pattern=pat, iter=it, body=body):
                self.expr(it)
                if isinstance(pat, ast.NamePat) and not pat.mutable:
                    # (`for mut j in ..`: the body may assign `j`, so the range bounds nothing)
                    self._set(pat, self.range_fact(it))
                self.block(body)
            case ast.While(cond=c, body=body):
                self.expr(c)
                self.block(body)
            case ast.Return(value=v):
                if v is not None:
                    self.expr(v, escape="returned")
            case ast.Break() | ast.Continue():
                pass

    def _set(self, pat: ast.NamePat, loc: Local) -> None:
        sym = self.view.symbol_of(pat)
        if sym is not None and loc is not None:
            self.facts[sym] = loc

    def _bind(self, pat: ast.Pattern, init: ast.Expr) -> None:
        match pat:
            case ast.NamePat(mutable=False):
                locs = self.resolve(init)
                if len(locs) == 1 and not (isinstance(locs[0], Param) and locs[0].own):
                    self._set(pat, locs[0])
                elif not locs:
                    b = self.bounds(init)
                    if b is not None:
                        self._set(pat, Int(b[0], b[1]))
            case ast.TuplePat(elems=elems) if isinstance(init, ast.TupleExpr) and len(
                init.elems
            ) == len(elems):
                for p, x in zip(elems, init.elems, strict=True):
                    self._bind(p, x)

    def expr(self, e: ast.Expr, escape: str | None = None) -> None:
        """Walk `e`; `escape` says how a `&mut` parameter denoted here would escape."""
        match e:
            case ast.Name():
                if escape:
                    for p in self._owns(e):
                        self._report_escape(p, e, escape)
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
                how = "put in a tuple" if isinstance(e, ast.TupleExpr) else "put in an array"
                for x in xs:
                    self.expr(x, how)
            case ast.GraphBlock(body=b):
                self.block(b)
            case _:
                for n in _children(e):
                    self.expr(n, "used as a value")

    # -- calls ---------------------------------------------------------------------------
    def call(self, e: ast.Call) -> None:
        name = e.callee.ident.name if isinstance(e.callee, ast.Name) else e.callee.segments[-1].name
        info = self.view.callee_info(e)
        if info is None and name in UNSAFE_OPS and self.unsafe == 0:
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
        decl = info.decl if info is not None else None
        if info is None and name in UNSAFE_OPS and e.args:
            for p in self._owns(e.args[0].value):
                self._report_unsafe_own(e, p, name)
            # a target the pass cannot trace (`let y = if c { x } else { w };`,
            # `let mut y = x;`) may be any tensor parameter
            hit = self._param_indices(e.args[0].value) or frozenset(range(len(self.fn.params)))
            self.writes |= hit
            for i in sorted(hit):
                self.write_at.setdefault(i, e.span)
                self.atomic_ops.setdefault(i, []).append((name, e))  # a `store_unchecked` is a kind too
            if not name.startswith("atomic_"):
                self.raw |= hit
        elif info is not None and not info.is_kernel:
            for i, a in enumerate(e.args):
                idx = self._arg_indices(a.value)
                if idx:
                    self.passes.append((info.qualname, i, idx))
                    self.pass_spans.append((a.value.span, id(e) in self._region))
        for i, a in enumerate(e.args):
            owns = self._owns(a.value)
            dp = decl.params[i] if decl is not None and i < len(decl.params) else None
            if owns and dp is not None and isinstance(dp.ty, ast.RefType):
                if not dp.ty.mutable:
                    for p in owns:
                        self._report_as_shared(p, a.value, decl, dp)  # type: ignore[arg-type]
                self.expr(a.value)
            elif owns and decl is None:
                self.expr(a.value)  # a builtin (`atomic_add(&z, ..)`): its own rules
            else:
                self.expr(a.value, "passed to a function" if owns else None)

    def _arg_indices(self, e: ast.Expr) -> frozenset[int]:
        """The indices of this function's tensor parameters a device function's argument may carry:
        the argument itself, or, of a tuple, any element at any depth (`bump((x, 0))`: round 25, a
        tuple's tensor was not followed, so the `unsafe` writes of `x` in `bump` went unseen); an
        argument holding a tensor reference the pass cannot trace may carry any of them."""
        if isinstance(e, ast.TupleExpr):
            return frozenset().union(*(self._arg_indices(x) for x in e.elems))
        idx = self._param_indices(e)
        if not idx and _holds_tensor_ref(self.view.type_of(e)):
            idx = frozenset(range(len(self.fn.params)))  # untraced: any of them
        return idx

    def _param_indices(self, e: ast.Expr) -> frozenset[int]:
        """The indices of this function's tensor parameters `e` may denote
        (directly or through a partition view of one)."""
        if isinstance(e, ast.MethodCall) and e.method.name == "group":  # a group view: its parameter's
            e = e.receiver
        out: set[int] = set()
        for loc in self.resolve(e):
            if loc is UNTRACED:
                return frozenset(range(len(self.fn.params)))
            p = loc.param if isinstance(loc, (View, Nested)) else loc
            if isinstance(p, Param):
                out |= {i for i, q in enumerate(self.fn.params) if q is p.node}
        return frozenset(out)

    def atomics_apart(self, a: ast.Call, b: ast.Call) -> bool:
        """Whether two atomics on one tensor surely touch different elements: along some
        axis, one's offsets (bounded, `bounds`) plus its value's extent end before the
        other's begin, by a constant."""
        ba, bb = self._atomic_box(a), self._atomic_box(b)
        if ba is None or bb is None or len(ba) != len(bb):
            return False
        for (lo1, hi1), (lo2, hi2) in zip(ba, bb, strict=True):
            for lo, hi in ((lo2, hi1), (lo1, hi2)):
                d = const_diff(lo, hi)
                if d is not None and d > 0:
                    return True
        return False

    def _atomic_box(self, e: ast.Call) -> list[tuple[SymExpr, SymExpr]] | None:
        """Per axis, the inclusive range of elements the atomic `e` may touch."""
        if len(e.args) < 3 or not isinstance(e.args[1].value, ast.ArrayExpr):
            return None
        elems = e.args[1].value.elems
        vty = self.view.type_of(e.args[2].value)
        shape = tuple(getattr(vty, "shape", ()) or ())
        ext: list[SymExpr | None] = [Const(1)] * (len(elems) - len(shape)) + [_dim_sym(d) for d in shape]
        if len(ext) != len(elems):
            return None
        out = []
        for ie, x in zip(elems, ext, strict=True):
            b = self.bounds(ie)
            if b is None or x is None:
                return None
            out.append((simplify(b[0]), simplify(BinOp("-", BinOp("+", b[1], x), Const(1)))))
        return out

    def method(self, e: ast.MethodCall) -> None:
        m = e.method.name
        recv = e.receiver
        if not isinstance(recv, ast.Name):
            self.expr(recv)
        for a in e.args:
            if m == "load_like":
                self.expr(a.value)  # `x.load_like(z)` reads only `z`'s position and shape
            else:
                self.expr(a.value, "passed to a method")
        rname = _name(recv)
        rty = self.view.type_of(recv)
        if m in ("load", "load_padded", "load_like") and id(e) not in self._region:
            idx = self._param_indices(recv)
            # a receiver the pass cannot trace (`let mut y = x;`, a tuple's field, what a device
            # function returns) may be any `&` parameter, as an untraced `unsafe` target may
            untraced = (not idx or UNTRACED in self.resolve(recv)) and _shared_ref(rty)
            for i in idx or (range(len(self.fn.params)) if untraced else ()):
                if _holds_shared_param(self.fn.params[i]):  # (a tuple parameter's `&` too: `t.0`)
                    self.reads.setdefault(i, (e.span, untraced))
        if m in ("store", "store_unchecked"):
            if _shared_ref(rty):
                self._report_store_shared(e, recv, rname)
            elif _tname(rty) == "TileViewT":
                self._nested_access(e, e.args[1].value if len(e.args) >= 2 else None, rname, True)
        elif m in ("load", "load_padded") and e.args:
            if _tname(rty) == "TileViewT" and getattr(rty, "mutable", False):
                self._nested_access(e, e.args[0].value, rname, False)
            else:
                for loc in self.resolve(recv):
                    if isinstance(loc, View):
                        self.view_index(loc, e.args[0].value)
        elif m == "load_like" and e.args and _tname(rty) == "RefT" and getattr(rty, "mutable", False):
            self._load_like_own(e, recv, e.args[0].value)

    def _nested_access(self, e: ast.MethodCall, idx: ast.Expr | None, rname: str, write: bool) -> None:
        locs = self.resolve(e.receiver)
        if not locs or not all(isinstance(x, Nested) for x in locs):
            self._unknown_partition(e, rname, write)
            return
        if idx is not None:
            for q in locs:
                assert isinstance(q, Nested)
                self.index(q, idx, rname or f"{q.param.name}.partition(..)", write=write)

    # -- the own tile of a `&mut` parameter ------------------------------------------------
    def _load_like_own(self, e: ast.MethodCall, recv: ast.Expr, other: ast.Expr) -> None:
        """`b.load_like(a)` with `b` a `&mut` parameter reads `b` at `a`'s own
        tile: that is `b`'s own tile only when both tile shapes are equal."""
        bs, as_ = self._owns(recv), self._owns(other)
        if not bs or not as_:
            self._report_outside_own(e, None, None, "cannot tell which own tile it reads")
            return
        for b in bs:
            for a in as_:
                if a is b:
                    continue
                if a.dims is None or b.dims is None or len(a.dims) != len(b.dims):
                    self._report_outside_own(e, b, a, "the tile shapes cannot be compared")
                    continue
                for k, (x, y) in enumerate(zip(b.dims, a.dims, strict=True)):
                    if x is None or y is None:
                        self._report_outside_own(e, b, a, "a tile dimension is not constant")
                        break
                    diff = const_diff(x, y)
                    if diff == 0:
                        continue
                    if diff is not None:
                        self._report_outside_own(
                            e, b, a, f"its tile is {x} along axis {k} but `{a.name}`'s is {y}"
                        )
                        break
                    self.defer(
                        LaunchCheck(
                            self.key,
                            "tile-equal",
                            x,
                            "==",
                            y,
                            e.span,
                            codes.MUT_PARAM_OUTSIDE_OWN,
                            f"`{b.name}.load_like({a.name})` reads `{b.name}` outside its own "
                            f"tile unless their tiles agree along axis {k}",
                        )
                    )

    # -- reports ---------------------------------------------------------------------------
    def _report_outside_own(self, e: ast.MethodCall, b: Param | None, a: Param | None, why: str) -> None:
        bname = b.name if b is not None else (_name(e.receiver) or "x")
        d = (
            Diagnostic.error(
                codes.MUT_PARAM_OUTSIDE_OWN,
                f"`{bname}.load_like(..)` reads `&mut` parameter `{bname}` outside this "
                f"block's own tile: {why}",
            )
            .primary(e.span, "reads another block's tile, which that block writes")
        )
        if b is not None:
            d = d.secondary(b.node.span, f"`{b.name}` is this block's own tile of its tensor")
        if a is not None and a is not b:
            d = d.secondary(a.node.span, f"`{a.name}`'s own tile has another shape")
        d = d.note("a `&mut` parameter may be read or written only inside the block's own tile")
        d = d.with_help(f"read the own tile with `{bname}.load()`")
        self.report(d)

    def _report_unsafe_own(self, e: ast.Call, p: Param, name: str) -> None:
        self.report(
            Diagnostic.error(
                codes.UNSAFE_WRITE_OWN_TILE,
                f"`{name}` writes `&mut` parameter `{p.name}` by an index of the whole tensor",
            )
            .primary(e.span, "the index counts from the tensor's origin, not from this block's tile")
            .secondary(p.node.span, f"`{p.name}` is this block's own tile of its tensor")
            .note(
                f"other blocks store to their own tiles of it with plain stores at the same time: an "
                f"`unsafe` write that reaches one of them races with that store, and inside its own tile "
                f"`{p.name}.load()` / `{p.name}.store(..)` do the same without `unsafe`"
            )
            .with_help(
                f"pass the tensor as `&` (`{p.name}: &Tensor<..>`, the launch then borrows it as written) to "
                f"update it with atomics from every block, or compute the own tile and `{p.name}.store(..)` it"
            )
        )

    def _report_store_shared(self, e: ast.MethodCall, recv: ast.Expr, rname: str) -> None:
        ps = [x.param if isinstance(x, View) else x for x in self.resolve(recv)]
        rname = rname or next((p.name for p in ps if isinstance(p, Param)), "")
        d = Diagnostic.error(
            codes.STORE_THROUGH_SHARED,
            f"cannot store through `{rname}`, which is a `&` reference"
            if rname
            else "cannot store through a `&` reference",
        ).primary(e.span, "store through a shared reference")
        for p in ps:
            if isinstance(p, Param):
                d = d.secondary(
                    p.node.span,
                    f"`{p.name}` is declared here as `&Tensor`, read-only for every block",
                )
        d = d.note("every block of the launch can read a `&` tensor; a store would race with them")
        name = next((p.name for p in ps if isinstance(p, Param)), rname)
        own = self._own_tile_param()
        if own is not None and own != name:  # most often the result was meant for the output
            d = d.with_help(f"store the block's result into `{own}`, its own tile (`{own}.store(..)`), "
                            f"or make `{name}` a `&mut` parameter and partition it at the launch")
        else:
            d = d.with_help(f"make `{name}` a `&mut` parameter and partition it at the launch")
        self.report(d)

    def _own_tile_param(self) -> str | None:
        """The first `&mut Tensor` parameter of a kernel (its block's own tile), or None."""
        if not getattr(self.fn, "is_kernel", False):
            return None
        return next((p.name.name for p in self.fn.params
                     if isinstance(p.ty, ast.RefType) and p.ty.mutable), None)

    def _report_escape(self, p: Param, e: ast.Expr, how: str) -> None:
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

    def _report_as_shared(self, p: Param, arg: ast.Expr, decl: ast.FnDecl, dp: ast.Param) -> None:
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

    def _unknown_partition(self, e: ast.MethodCall, rname: str, write: bool) -> None:
        self.report(
            Diagnostic.error(
                codes.UNBOUNDED_TILE_INDEX,
                f"cannot tell which tiles `{rname}` indexes"
                if rname
                else "cannot tell which tiles this partition indexes",
            )
            .primary(
                e.receiver.span,
                "the checker cannot trace this partition to a `&mut` parameter's own tile",
            )
            .note(
                f"an indexed {'store' if write else 'load'} must go through a partition of a "
                "`&mut` parameter bound with `let q = z.partition([..]);`"
            )
            .with_help(f"bind the partition directly: `let {rname or 'q'} = z.partition([..]);`")
        )


def _dim_sym(d: Any) -> SymExpr | None:
    """A tile dimension (`sema.types.Dim`) as a symbolic integer: a constant or a const generic."""
    v = getattr(d, "const_value", None)
    if isinstance(v, int):
        return Const(v)
    name = d.as_symbol() if hasattr(d, "as_symbol") else None
    return Sym(name) if name else None


def _name(recv: ast.Expr) -> str:
    if isinstance(recv, ast.Name):
        return recv.ident.name
    if (
        isinstance(recv, ast.MethodCall)
        and recv.method.name == "partition"
        and isinstance(recv.receiver, ast.Name)
    ):
        return f"{recv.receiver.ident.name}.partition(..)"
    return ""


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


def check_kernels(
    view: ProgramView, sink: DiagnosticSink, checks: list[LaunchCheck]
) -> dict[str, dict[str, str]]:
    """Check every kernel and every device function of every module; returns
    `unsafe_writes` (see there)."""
    checkers = []
    for info in [*view.kernels(), *view.device_fns()]:
        c = KernelChecker(view, sink, info, checks)
        c.run()
        checkers.append((info, c))
    hand_down(view, checkers, checks)
    _reads_of_written(checkers)
    kinds = _mixed_atomics(checkers)
    return unsafe_writes(checkers, kinds)


def _reads_of_written(checkers: list[tuple[Any, KernelChecker]]) -> None:
    """E0417: a kernel that reads (loads) a `&` parameter which its `unsafe` code
    writes, each directly or through device functions at any depth. The other
    blocks of the launch write the tensor while a block reads it, so what it
    reads depends on the order the blocks run in (the interpreter's and a
    GPU's differ): the sanitizer's E0731, refused here before any run. Reads
    in the kernel's `if last_block(axis) { .. }` region are E0410's."""
    # by function: param index -> (span in that function, the callee it was passed to, or None)
    reads: dict[str, dict[int, tuple[Span, str | None]]] = {
        info.qualname: {i: (sp, None) for i, (sp, _) in c.reads.items()} for info, c in checkers}
    writes: dict[str, dict[int, tuple[Span, str | None]]] = {
        info.qualname: {i: (sp, None) for i, sp in c.write_at.items()} for info, c in checkers}
    changed = True
    while changed:
        changed = False
        for info, c in checkers:
            for (callee, j, idx), (span, in_region) in zip(c.passes, c.pass_spans, strict=True):
                name = callee.rsplit("::", 1)[-1]
                for table, skip in ((writes, False), (reads, in_region)):
                    if skip or j not in table.get(callee, {}):
                        continue
                    mine = table[info.qualname]
                    for i in sorted(idx):
                        if i not in mine:
                            mine[i] = (span, name)
                            changed = True
    for info, c in checkers:
        if not info.is_kernel:
            continue
        for i in sorted(set(reads[info.qualname]) & set(writes[info.qualname])):
            p = c.fn.params[i]
            if _mut_ref(p):
                continue
            (rsp, rvia), (wsp, wvia) = reads[info.qualname][i], writes[info.qualname][i]
            pname, kname = p.name.name, c.fn.name.name
            untraced = rvia is None and c.reads[i][1]
            c.report(
                Diagnostic.error(codes.READ_OF_UNSAFE_WRITTEN,
                                 f"`{kname}` {'may read' if untraced else 'reads'} `{pname}`, which its `unsafe` "
                                 "code writes")
                .primary(rsp, f"the checker cannot tell which `&` tensor this reads: it may be `{pname}`"
                         if untraced else "read here" if rvia is None else f"passed to `{rvia}`, which reads it")
                .secondary(wsp, "written here" if wvia is None else
                           f"passed to `{wvia}`, which writes it in `unsafe` code")
                .note("the other blocks of the launch write it while this block reads it: what a block reads "
                      "depends on which blocks ran before it, and the interpreter and a GPU run them in "
                      "different orders")
                .with_help(f"name the tensor it reads directly (a parameter, or `let y = x;` without `mut`) so "
                           f"that the checker can tell it is not `{pname}`" if untraced else
                           _scatter_add_help(c, i, rsp) if rvia is None and wvia is None and i in c.raw else
                           f"read `{pname}` in a second launch (or on the host after this one); the launch that "
                           f"updates it may read a copy made before it instead (`let before = t.clone();` on the "
                           f"host, passed as another `&` argument)")
            )


def _scatter_add_help(c: KernelChecker, i: int, read: Span) -> str:
    """E0417's help where the kernel reads a `&` parameter and `store_unchecked`s it (round 30: CUDA's
    `y[row[k]] += v` written as `store_unchecked(&y, [r], y.partition([1]).load([r]) + v)`, a scatter-add whose
    blocks race on a row they share; the help said only "read `y` in a second launch", which is no scatter-add).
    Where the stored value is the read plus (or times, ..) something, the atomic of that kind, written out."""
    pname = c.fn.params[i].name.name
    from tilelang.syntax.printer import unparse

    for name, e in c.atomic_ops.get(i, []):
        if name != "store_unchecked" or len(e.args) < 3 or not e.span.start <= read.start < e.span.end:
            continue
        v, idx = e.args[2].value, e.args[1].value
        if isinstance(v, ast.Binary) and v.op == "+":
            other = v.rhs if v.lhs.span.start <= read.start < v.lhs.span.end else v.lhs
            if not other.span.start <= read.start < other.span.end:
                return (f"`{pname}` plus a value stored back is an update of elements that other blocks may update "
                        f"too (a scatter-add): `atomic_add(&{pname}, {' '.join(unparse(idx).split())}, "
                        f"{' '.join(unparse(other).split())})` adds without reading it; or give each element one "
                        "block that sums what goes into it (sorted indices, a row pointer)")
    return (f"to add into `{pname}` from several blocks (a scatter-add), use `atomic_add(&{pname}, [..], v)`, which "
            f"needs no read (`atomic_max`, `atomic_min` for a maximum, a minimum); to read it, read it in a second "
            f"launch (or on the host after this one), or a copy made before this one (`let before = t.clone();` on "
            f"the host, passed as another `&` argument)")


def _mixed_atomics(checkers: list[tuple[Any, KernelChecker]]) -> dict[str, dict[int, frozenset[str]]]:
    """E0418: atomics of different kinds (`atomic_add`, `atomic_max`, `atomic_min`), or an
    atomic and a `store_unchecked`, on one parameter of a function, unless the checker sees
    that they touch different elements (constant or bounded offsets and the values'
    extents, in the function itself). Kinds do not commute (0, add 5, max 3 is 5; max 3
    first is 8; a plain store and an add neither), so where two meet one element the
    result depends on the order the blocks run in. (Two `store_unchecked`s stay the
    author's promise: one site's stores from different blocks are not sites to compare.)
    Kinds that reach a parameter by two routes (the function's own atomics, each device
    function it passes the parameter to) are refused where they meet, whatever the
    offsets (a device function's are not seen from its caller). Returns, for each function, the kinds each parameter is updated
    with (at any depth)."""
    by_name = {info.qualname: c for info, c in checkers}
    kinds: dict[str, dict[int, frozenset[str]]] = {
        q: {i: frozenset(k for k, _ in ops) for i, ops in c.atomic_ops.items()} for q, c in by_name.items()}
    changed = True
    while changed:
        changed = False
        for q, c in by_name.items():
            for callee, j, idx in c.passes:
                got = kinds.get(callee, {}).get(j, frozenset())
                for i in idx:
                    if not got <= kinds[q].get(i, frozenset()):
                        kinds[q][i] = kinds[q].get(i, frozenset()) | got
                        changed = True
    for q, c in by_name.items():
        for i in sorted(kinds[q]):
            if len(kinds[q][i]) < 2 or _mut_ref(c.fn.params[i]):
                continue
            # the routes: this function's own atomics, and each call that passes the parameter on
            routes: list[tuple[frozenset[str], Span, str]] = []
            ops = c.atomic_ops.get(i, [])
            if ops:
                routes.append((frozenset(k for k, _ in ops), ops[0][1].span, ""))
            for (callee, j, idx), (span, _) in zip(c.passes, c.pass_spans, strict=True):
                got = kinds.get(callee, {}).get(j, frozenset())
                if i in idx and got:
                    routes.append((got, span, callee.rsplit("::", 1)[-1]))
            pname = c.fn.params[i].name.name
            if len(routes) > 1:
                seen: frozenset[str] = frozenset()
                first: tuple[frozenset[str], Span, str] | None = None
                for r in sorted(routes, key=lambda r: r[1].start):
                    if first is not None and len(r[0] | seen) > 1:
                        _report_mixed(c, pname, r, first)
                        break
                    seen |= r[0]
                    first = first or r
                continue
            # one route, this function's own atomics: kinds apart where their boxes are
            for n, (k2, e2) in enumerate(ops):
                clash = next((e1 for k1, e1 in ops[:n] if k1 != k2 and not c.atomics_apart(e1, e2)), None)
                if clash is not None:
                    k1 = next(k for k, e in ops if e is clash)
                    _report_mixed(c, pname, (frozenset((k2,)), e2.span, ""), (frozenset((k1,)), clash.span, ""))
                    break
    return kinds


def _report_mixed(c: KernelChecker, pname: str, here: tuple[frozenset[str], Span, str],
                  there: tuple[frozenset[str], Span, str] | None) -> None:
    def what(r: tuple[frozenset[str], Span, str]) -> str:
        return " and ".join(f"`{k}`" for k in sorted(r[0]))

    other = there[0] if there is not None else frozenset()
    mine = sorted(here[0] - other) or sorted(here[0])
    kinds = sorted(here[0] | other)
    if there is not None and len(kinds) > 1 and not here[0] - other:
        # both routes update with every kind: name each kind once (round 27: "`atomic_add` and `atomic_max` and
        # `atomic_add` and `atomic_max` both update `t`" of two calls of one device function)
        text = f"{', '.join(f'`{k}`' for k in kinds[:-1])} and `{kinds[-1]}` update `{pname}` by two routes"
    else:
        text = f"{' and '.join(f'`{k}`' for k in mine)} and {what(there) if there else 'another kind'} both update " \
               f"`{pname}`"
    d = Diagnostic.error(
        codes.MIXED_ATOMICS,
        text,
    ).primary(here[1], "updates it here" if not here[2] else
              f"passed to `{here[2]}`, which updates it with {what(here)}")
    if there is not None:
        d = d.secondary(there[1], f"{what(there)} here" if not there[2] else
                        f"passed to `{there[2]}`, which updates it with {what(there)}")
    c.report(
        d.note("atomics of different kinds do not commute (0, add 5, max 3 is 5; max 3 first is 8), nor do an "
               "atomic and a plain store: where two meet one element, the result depends on their order, which "
               "is the blocks' (the interpreter's and a GPU's differ)")
        .with_help("use a separate tensor for each kind (another `&` parameter), or keep the kinds on elements "
                   "the checker can tell apart: constant offsets, or offsets a constant apart")
    )


def unsafe_writes(checkers: list[tuple[Any, KernelChecker]],
                  kinds: dict[str, dict[int, frozenset[str]]] | None = None) -> dict[str, dict[str, str]]:
    """For each kernel, its `&` parameters that its `unsafe` code writes (an
    atomic or `store_unchecked` on the parameter, in the kernel or in a device
    function it passes the parameter to, at any depth), each with how:
    atomics only (see below) or `"store"` (some `store_unchecked`).

    Such a launch writes that tensor although the parameter is `&`: the host
    checker and the run-time checks treat the argument as written, so no
    host access or other launch can touch it while the launch is in flight.
    (Inside the launch, `unsafe` is the author's promise; outside it, the
    tensor is not shared.) A parameter updated with atomics of one kind only
    says which (`"atomic_add"`, `"atomic_max"`, `"atomic_min"`): launches in
    flight together may share it only with the same kind (E0418's reason);
    `"atomic"` is several kinds on elements the checker saw apart."""
    writes: dict[str, set[int]] = {info.qualname: set(c.writes) for info, c in checkers}
    raw: dict[str, set[int]] = {info.qualname: set(c.raw) for info, c in checkers}
    changed = True
    while changed:
        changed = False
        for info, c in checkers:
            for table in (writes, raw):
                mine = table[info.qualname]
                for callee, j, idx in c.passes:
                    if j in table.get(callee, ()) and not idx <= mine:
                        mine |= idx
                        changed = True
    out: dict[str, dict[str, str]] = {}
    for info, c in checkers:
        if info.is_kernel and writes[info.qualname]:
            ks = (kinds or {}).get(info.qualname, {})
            got = {
                c.fn.params[i].name.name: "store" if i in raw[info.qualname] else
                next(iter(ks[i])) if len(ks.get(i, ())) == 1 else "atomic"
                for i in writes[info.qualname]
                if not _mut_ref(c.fn.params[i])
            }
            if got:
                out[info.qualname] = got
    return out


__all__ = ["UNSAFE_OPS", "Const", "check_kernels"]
