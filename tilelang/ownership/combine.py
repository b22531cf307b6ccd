"""The ownership rules of `if last_block(axis) { .. }` (the cross-block combine).

The blocks of a group (those whose `block_id`s differ only along `axis`) each
store their own tile of a `&mut` scratch tensor; the block that arrives last,
after every other block of its group has finished, runs the region, which
reads the whole group's tiles (`z.group()`) and writes tensors the group owns
(one tile a group). The region's effects must not depend on WHICH block
arrives last. This pass proves that, per kernel, or refuses the program:

  - E0409: `last_block` is only the whole condition of an `if` (no `else`)
    that ends a kernel's body: not in a device function, a loop, another
    `if`, an expression, not twice; no `return` in such a kernel (a block
    that leaves early never arrives);
  - E0411: a `&mut` parameter is either the block's own tile (used before the
    region, read inside it only through `.group()`) or the group's tile
    (named only inside the region): not both; a nested partition made
    before the region is not used inside it; no binding inside the region
    shadows a `&mut` parameter (the launch reads the group's tensors off the
    names);
  - E0410: nothing inside the region uses a value that may differ between
    the group's blocks: `block_id(axis)` (or of an axis that is not a
    literal), a load of the block's own tile (`z.load()`, `x.load_like(z)`,
    its nested tiles), a device function that reads `block_id` or is passed
    such a tile, a `&` tensor that `unsafe` code writes (there, in a device
    function it calls, or through a name bound to it; read there or by a
    device function: other groups may still be writing it), and every variable
    computed from one of these before the region, by data or by control
    (assigned under a condition, loop bound or loop exit that depends on one).
    The analysis is flow-insensitive and runs to a fixpoint: a variable that
    may vary on some path varies.

Entry point: `check_combines(view, sink)`. Invariant: never raises on a
well-typed program.
"""

from __future__ import annotations

from typing import Any

from tilelang.diagnostics.codes import kernel as codes
from tilelang.diagnostics.model import Diagnostic, DiagnosticSink
from tilelang.lastblock import group_reads, mut_params, region
from tilelang.ownership.env import ProgramView
from tilelang.ownership.placement import OnceSink, refuse_in_device_fns
from tilelang.source import Span
from tilelang.syntax import ast

_UNSAFE = ("atomic_add", "atomic_max", "atomic_min", "store_unchecked")
_LOADS = ("load", "load_padded", "load_like")


def _is_call(n: object, name: str) -> bool:
    return isinstance(n, ast.Call) and isinstance(n.callee, ast.Name) and n.callee.ident.name == name


def check_combines(view: ProgramView, sink: DiagnosticSink) -> None:
    emit = OnceSink(sink)
    refuse_in_device_fns(view, emit, lambda n: _is_call(n, "last_block"), codes.LAST_BLOCK_PLACEMENT,
                         "last_block", "the region runs once a group, so the checker must see it in the kernel itself",
                         "move `if last_block(axis) { .. }` to the end of the kernel")
    for info in view.kernels():
        if any(_is_call(n, "last_block") for n in ast.walk(info.decl.body)):
            _Combine(view, info.decl, emit).run()


class _Combine:
    def __init__(self, view: ProgramView, decl: ast.FnDecl, emit: Any) -> None:
        self.view = view
        self.decl = decl
        self.emit = emit
        self.muts = mut_params(decl)
        self.varying: dict[object, Span] = {}  # symbol -> where it got a varying value
        self.changed = False
        self.axis = 0
        self.own: set[str] = set()  # block-owned `&mut` params (named before the region)
        self.raced: set[str] = set()  # `&` params that `unsafe` code writes
        self.misused: list[Span] = []  # uses in the region that E0411 already reports (no E0410 on them too)
        self._fn_varies: dict[int, bool] = {}
        self._fn_names: dict[tuple[str, int], set[str]] = {}

    # -- placement --------------------------------------------------------------------
    def run(self) -> None:
        found = region(self.decl)
        node = found[0] if found else None
        for n in ast.walk(self.decl.body):
            if _is_call(n, "last_block") and (node is None or n is not node.cond):
                self._misplaced(n, node)
            elif isinstance(n, ast.Return):
                self.emit(Diagnostic.error(codes.LAST_BLOCK_PLACEMENT,
                                           "`return` in a kernel that ends with `if last_block(..)`")
                          .primary(n.span, "a block that returns here never arrives")
                          .secondary(node.cond.span if node else n.span, "the group's last block is counted here")
                          .with_help("let every block reach the end of the kernel (use `if` around the work)"))
        self.raced = self._unsafe_writes(self.decl)
        self._group_writes()
        if found is None:
            return
        node, self.axis = found
        self._owners(node)
        before = list(self.decl.body.stmts)
        if self.decl.body.tail is None:
            before = before[:-1]
        for _ in range(64):  # a fixpoint: the varying set only grows
            self.changed = False
            self.stmts(before, ctx=False)
            if not self.changed:
                break
        self.check_region(node.then)

    def _misplaced(self, n: ast.Call, node: ast.If | None) -> None:
        if n.args and not isinstance(n.args[0].value, ast.IntLit):
            return  # the type checker said so
        why = "as a value, not the whole condition of an `if`"
        for m in ast.walk(self.decl.body):
            if isinstance(m, ast.If) and m.cond is n:
                why = "in an `if` with an `else`" if m.else_ is not None else \
                    "in an `if` inside the region" if node is not None and _inside(m, node) else \
                    "in an `if` that is not the last statement of the kernel"
            elif isinstance(m, (ast.For, ast.While)) and _inside(n, m):
                why = "inside a loop"
                break
        d = (Diagnostic.error(codes.LAST_BLOCK_PLACEMENT, f"`last_block` {why}")
             .primary(n.span, "the group's arrival cannot be ordered here")
             .note("every block of the group must arrive exactly once, after all its stores, so the region is "
                   "the `if last_block(axis) { .. }` (no `else`) that ends the kernel, once"))
        if node is not None:
            d = d.secondary(node.cond.span, "the kernel's region")
        self.emit(d.with_help("write one `if last_block(axis) { .. }` as the kernel's last statement"))

    def _owners(self, node: ast.If) -> None:
        reads = group_reads(node.then)
        inside: dict[str, ast.Name] = {}
        for n in ast.walk(node.then):
            if isinstance(n, ast.Name) and n.ident.name in self.muts and id(n) not in reads:
                inside.setdefault(n.ident.name, n)
            elif isinstance(n, ast.NamePat) and n.name.name in self.muts:
                self.emit(Diagnostic.error(codes.GROUP_TILE_MISUSE, f"`{n.name.name}` shadows a `&mut` parameter "
                                           "inside the last block's region")
                          .primary(n.span, "a new binding")
                          .secondary(self.muts[n.name.name].span, "the parameter")
                          .with_help("choose another name"))
        outside: dict[str, ast.Name] = {}
        for n in ast.walk(self.decl.body):
            if n is node:
                continue
            if isinstance(n, ast.Name) and n.ident.name in self.muts and not _inside(n, node):
                outside.setdefault(n.ident.name, n)
        self.own = set(outside)
        for name, n in inside.items():
            if name in outside:
                self.misused += [m.span for m in ast.walk(node.then)
                                 if isinstance(m, ast.Name) and m.ident.name == name and id(m) not in reads]
                self.emit(Diagnostic.error(codes.GROUP_TILE_MISUSE,
                                           f"`{name}` is this block's own tile before the region and the group's "
                                           "tile inside it")
                          .primary(n.span, "inside the last block's region, a `&mut` parameter is the group's tile")
                          .secondary(outside[name].span, "here it is this block's own tile")
                          .note("which block arrives last is not known, so its own tile is not one place: "
                                "the region may read every block's tile only through `.group()`")
                          .with_help(f"read the group's tiles with `{name}.group()`, or write the result to "
                                     "another `&mut` parameter used only in the region"))
        for n in ast.walk(node.then):
            if isinstance(n, ast.MethodCall) and n.method.name == "group" and isinstance(n.receiver, ast.Name) \
                    and n.receiver.ident.name in inside and n.receiver.ident.name not in outside:
                self.emit(Diagnostic.error(codes.GROUP_TILE_MISUSE,
                                           f"`{n.receiver.ident.name}.group()` of a tensor the group owns")
                          .primary(n.span, "the group's tile is one tile, written in this region")
                          .secondary(inside[n.receiver.ident.name].span, "used as the group's tile here")
                          .with_help("`.group()` reads a tensor that every block stored before the region"))
            if isinstance(n, ast.Name) and n.ident.name not in self.muts:
                ty = self.view.type_of(n)
                if type(ty).__name__ == "TileViewT" and getattr(ty, "mutable", False):
                    sym = self.view.symbol_of(n)
                    decl_span = getattr(sym, "span", None)
                    if decl_span is not None and not (node.span.start <= decl_span.start < node.span.end):
                        self.emit(Diagnostic.error(codes.GROUP_TILE_MISUSE,
                                                   f"`{n.ident.name}` is a tiling of this block's own tile")
                                  .primary(n.span, "used inside the last block's region")
                                  .secondary(decl_span, "made before the region")
                                  .with_help("partition the group's tensor inside the region"))

    # -- the varying values before the region -----------------------------------------
    def mark(self, pat: object, why: Span) -> None:
        for n in ast.walk(pat):
            if isinstance(n, (ast.NamePat, ast.Name)):
                sym = self.view.symbol_of(n)
                if sym is not None and sym not in self.varying:
                    self.varying[sym] = why
                    self.changed = True

    def stmts(self, stmts: list[ast.Stmt] | tuple[ast.Stmt, ...], ctx: bool) -> None:
        for s in stmts:
            self.stmt(s, ctx)

    def stmt(self, s: ast.Stmt, ctx: bool) -> None:
        match s:
            case ast.Let(pattern=ast.TuplePat(elems=pats), value=ast.TupleExpr(elems=inits)) \
                    if len(pats) == len(inits):
                # `let (r, c) = (block_id(0), block_id(1));`: element by element (the
                # whole pattern marked made `r` vary with `c`, a false E0410)
                for p, e in zip(pats, inits, strict=True):
                    if self.varies(e, ctx) or ctx:
                        self.mark(p, e.span)
            case ast.Let(pattern=pat, value=init):
                if init is not None and (self.varies(init, ctx) or ctx):
                    self.mark(pat, init.span)
            case ast.Assign(target=t, value=v):
                if self.varies(v, ctx) or ctx:
                    self.mark(t, v.span)
            case ast.ExprStmt(expr=e):
                self.varies(e, ctx)
            case ast.For(pattern=pat, iter=it, body=body):
                c = ctx or self.varies(it, ctx) or self._exits_vary(body)
                if c:
                    self.mark(pat, it.span)
                self.block(body, c)
            case ast.While(cond=cnd, body=body):
                c = ctx or self.varies(cnd, ctx) or self._exits_vary(body)
                self.block(body, c)
            case _:
                pass

    def block(self, b: ast.Block, ctx: bool) -> bool:
        self.stmts(b.stmts, ctx)
        return self.varies(b.tail, ctx) if b.tail is not None else False

    def _exits_vary(self, body: ast.Block) -> bool:
        """A loop left by `break`/`continue` under a condition that may vary."""
        if not any(isinstance(n, (ast.Break, ast.Continue)) for n in ast.walk(body)):
            return False
        return any(isinstance(n, (ast.If, ast.While)) and self.varies(n.cond, False) for n in ast.walk(body))

    def varies(self, e: ast.Expr | None, ctx: bool) -> bool:
        """Whether `e` may differ between the group's blocks (walking blocks
        and `if`s in `e` marks what they assign under `ctx`)."""
        return self.why(e, ctx) is not None

    def why(self, e: ast.Expr | None, ctx: bool) -> tuple[Span, str, Span | None] | None:
        """None, or (where, what varies, where it got its value)."""
        if e is None:
            return None
        match e:
            case ast.Name():
                sym = self.view.symbol_of(e)
                if sym is not None and sym in self.varying:
                    return e.span, f"`{e.ident.name}` may differ between the group's blocks", self.varying[sym]
                return None
            case ast.Block():
                return self._block_why(e, ctx)
            case ast.UnsafeBlock(body=b):
                return self._block_why(b, ctx)
            case ast.If(cond=c, then=t, else_=els):
                w = self.why(c, ctx)
                inner = ctx or w is not None
                r = self._block_why(t, inner)
                r2 = self.why(els, inner) if els is not None else None
                return w or r or r2
            case ast.Call():
                return self._call_why(e, ctx)
            case ast.MethodCall():
                return self._method_why(e, ctx)
        out = None
        for c in _kids(e):
            w = self.why(c, ctx)
            out = out or w
        return out

    def _block_why(self, b: ast.Block, ctx: bool) -> tuple[Span, str, Span | None] | None:
        self.stmts(b.stmts, ctx)
        return self.why(b.tail, ctx)

    def _call_why(self, e: ast.Call, ctx: bool) -> tuple[Span, str, Span | None] | None:
        args = [self.why(a.value, ctx) for a in e.args]
        name = e.callee.ident.name if isinstance(e.callee, ast.Name) else e.callee.segments[-1].name
        info = self.view.callee_info(e)
        if info is None and name == "block_id":
            a = e.args[0].value if e.args else None
            if not isinstance(a, ast.IntLit) or a.value == self.axis:
                return e.span, f"`block_id` along the grouped axis {self.axis} differs between the group's blocks", None
            return None
        first = next((w for w in args if w is not None), None)
        if first is not None:
            return first
        if info is not None and not info.is_kernel:
            for a in e.args:
                p = self._own_param(a.value)
                if p is not None:
                    return a.span, f"passes `{p}`, this block's own tile, to `{name}`", None
            if self._fn_reads_block_id(info.decl):
                return e.span, f"`{name}` reads `block_id`, which differs between the group's blocks", None
            return self._raced_arg(e)
        return None

    def _method_why(self, e: ast.MethodCall, ctx: bool) -> tuple[Span, str, Span | None] | None:
        m = e.method.name
        r = e.receiver
        if m == "group":
            return None
        if m in _LOADS:
            p = self._own_param(e.args[0].value if m == "load_like" and e.args else r)
            if p is not None:
                return e.span, f"reads `{p}`'s own tile, which differs between the group's blocks", None
            hit = _labels(_names_of(r, self.view) & self.raced)
            if hit:
                return e.span, f"reads `{hit[0]}`, which `unsafe` code writes", None
        w = self.why(r, ctx)
        for a in e.args:
            w = w or self.why(a.value, ctx)
        return w

    def _own_param(self, e: ast.Expr) -> str | None:
        """The block-owned `&mut` parameter `e` names (directly, by `&`, or as a
        tiling of it)."""
        e = e.expr if isinstance(e, ast.Ref) else e
        if isinstance(e, ast.MethodCall) and e.method.name == "partition":
            return self._own_param(e.receiver)
        # a block's value and either arm of an `if` (round 27: `{ part }.load()` and `(if c { part } else { part })
        # .load()` before the region were not the own tile, so a value read so was used in the region)
        if isinstance(e, ast.UnsafeBlock):
            e = e.body
        if isinstance(e, ast.Block):
            return self._own_param(e.tail) if e.tail is not None else None
        if isinstance(e, ast.If):
            return self._own_param(e.then) or (self._own_param(e.else_) if e.else_ is not None else None)
        if isinstance(e, ast.Name):
            if e.ident.name in self.own and _bind_key(self.view, e) is self.muts[e.ident.name]:
                return e.ident.name
            ty = self.view.type_of(e)
            if type(ty).__name__ == "TileViewT" and getattr(ty, "mutable", False):
                return e.ident.name
        return None

    def _group_writes(self) -> None:
        """E0416 through `.group()`: an atomic or `store_unchecked` whose target may be a `&mut` parameter's
        group view (`part.group()`, a name bound to one, in a tuple, an `if`, ..), directly or through a device
        function whose `unsafe` code writes the argument. Its index counts from an origin the engines do not
        agree on (the interpreter's is the tensor's), and either way it reaches tiles of other groups, whose
        blocks store them meanwhile: round 25 found `atomic_add(part.group(), [0, 0], ..)` accepted (kernel.py's
        E0416 follows the parameter itself, not its group view)."""
        if not any(isinstance(m, ast.MethodCall) and m.method.name == "group" for m in ast.walk(self.decl.body)):
            return
        params: set[object] = set(self.muts.values())
        held = set(params)  # bindings that may hold a `&mut` parameter or a view of one
        edges = _alias_edges(self.decl, self.view)
        grew = True
        while grew:
            grew = False
            for left, b in edges:
                if b in held and not left <= held:
                    held |= left
                    grew = True
        sites: list[tuple[ast.Expr, str]] = []
        for n in ast.walk(self.decl.body):
            if not isinstance(n, ast.Call):
                continue
            info = self.view.callee_info(n)
            name = n.callee.ident.name if isinstance(n.callee, ast.Name) else n.callee.segments[-1].name
            if info is None and name in _UNSAFE and n.args:
                sites.append((n.args[0].value, f"`{name}`"))
            elif info is not None and not info.is_kernel:
                inner = self._unsafe_writes(info.decl)
                sites += [(a.value, f"`{name}` (its `unsafe` code)") for prm, a in
                          zip(info.decl.params, n.args, strict=False) if prm in inner]
        for target, who in sites:
            names = _names_of(target, self.view)
            grouped = any(isinstance(m, ast.MethodCall) and m.method.name == "group" for m in ast.walk(target))
            # (a target holding `.group()` whose value is a name bound to the view, not the parameter itself, is
            # an alias like any other: `{ let q = part.group(); q }` was accepted, round 27)
            grouped = grouped and bool(names & params)
            hit = _labels(names & params if grouped else (names & held) - params)
            if not hit:
                continue  # (a `&mut` parameter itself is kernel.py's E0416)
            p = hit[0]
            self.emit(Diagnostic.error(codes.UNSAFE_WRITE_OWN_TILE, f"{who} writes through `.group()` of a `&mut` "
                                       f"parameter (`{p}`)" if grouped else
                                       f"{who} writes through `{p}`, which may be a `&mut` parameter's group view")
                      .primary(target.span, "an `unsafe` write to the group's tiles")
                      .note("a group view is read only: an `unsafe` index counts from the tensor's origin, not the "
                            "group's, and reaches the tiles of other groups, whose blocks store to them meanwhile")
                      .with_help("store the group's result to a `&mut` parameter named only in the region (one tile "
                                 "a group), or update a `&` tensor with atomics"))

    def _unsafe_writes(self, decl: ast.FnDecl) -> set[str]:
        """The names in `decl` of the tensors that `unsafe` code writes: the first
        argument of an atomic or `store_unchecked`, the argument a device function
        it calls (at any depth) writes so, and every name bound to one of these
        (`let c = cnt;`, `let v = cnt.partition(..);`) or that one is bound to."""
        def direct(n: ast.Call) -> ast.Expr | None:
            ok = isinstance(n.callee, ast.Name) and n.callee.ident.name in _UNSAFE and n.args
            return n.args[0].value if ok else None
        return self._names(decl, "w", direct)

    def _reads(self, decl: ast.FnDecl) -> set[str]:
        """The names in `decl` of the tensors it loads from (as `_unsafe_writes`)."""
        def direct(n: ast.MethodCall) -> ast.Expr | None:
            return n.receiver if n.method.name in _LOADS else None
        return self._names(decl, "r", direct)

    def _names(self, decl: ast.FnDecl, tag: str, direct: Any, depth: int = 0) -> set[object]:
        key = (tag, id(decl))
        hit = self._fn_names.get(key)
        if hit is not None:
            return hit
        self._fn_names[key] = set()  # a cycle (refused elsewhere) adds nothing
        names: set[object] = set()
        kind = ast.Call if tag == "w" else ast.MethodCall
        for n in ast.walk(decl.body):
            if isinstance(n, kind):
                e = direct(n)
                bs = _names_of(e, self.view) if e is not None else set()
                if bs:
                    names |= bs
                    continue
            if isinstance(n, ast.Call) and depth < 32:
                info = self.view.callee_info(n)
                if info is not None and not info.is_kernel:
                    inner = self._names(info.decl, tag, direct, depth + 1)
                    for prm, a in zip(info.decl.params, n.args, strict=False):
                        if prm in inner:
                            names |= _names_of(a.value, self.view)
        aliases = _alias_edges(decl, self.view)
        grew = True
        while grew:
            grew = False
            for left, b in aliases:
                if (b in names or left & names) and not (left | {b}) <= names:
                    names |= left | {b}
                    grew = True
        self._fn_names[key] = names
        return names

    def _raced_arg(self, e: ast.Call) -> tuple[Span, str, Span | None] | None:
        """A device function call passing a tensor that `unsafe` code writes: what
        the function reads of it depends on how far the other blocks got."""
        info = self.view.callee_info(e)
        if info is None or info.is_kernel:
            return None
        name = e.callee.ident.name if isinstance(e.callee, ast.Name) else e.callee.segments[-1].name
        reads = self._reads(info.decl)
        for prm, a in zip(info.decl.params, e.args, strict=False):
            hit = _labels(_names_of(a.value, self.view) & self.raced)
            if hit and prm in reads:
                return a.span, f"`{name}` reads `{hit[0]}`, which `unsafe` code writes", None
        return None

    def _fn_reads_block_id(self, decl: ast.FnDecl, depth: int = 0) -> bool:
        key = id(decl)
        if key in self._fn_varies:
            return self._fn_varies[key]
        self._fn_varies[key] = True  # a cycle (refused elsewhere) counts as varying
        out = False
        for n in ast.walk(decl.body):
            if _is_call(n, "block_id") or _is_call(n, "last_block"):
                out = True
                break
            if isinstance(n, ast.Call) and depth < 32:
                info = self.view.callee_info(n)
                if info is not None and not info.is_kernel and self._fn_reads_block_id(info.decl, depth + 1):
                    out = True
                    break
        self._fn_varies[key] = out
        return out

    # -- the region ---------------------------------------------------------------------
    def check_region(self, then: ast.Block) -> None:
        for n in ast.walk(then):
            if isinstance(n, (ast.Let, ast.Assign, ast.For, ast.While)):
                pass
            w = self._leaf_why(n)
            if w is not None and not any(w[0].start <= m.start and m.end <= w[0].end for m in self.misused):
                span, what, src = w
                d = (Diagnostic.error(codes.LAST_BLOCK_VARYING, what)
                     .primary(span, f"used in `if last_block({self.axis}) {{ .. }}`"))
                if src is not None:
                    d = d.secondary(src, "computed here from a value that differs between the group's blocks")
                if "`unsafe` code writes" in what:
                    # the group's blocks have finished, not the other groups': an atomic total is
                    # complete only when the launch ends (interp and GPU disagreed on such a read)
                    self.emit(d.note("the blocks of other groups may still be writing it when a group's last "
                                     "block arrives: what the region reads depends on how far they got")
                              .with_help("read it after the launch (on the host, or in a later launch), or give "
                                         "each group its own `&mut` tile and read it with `.group()`"))
                    continue
                if what.startswith("`block_id` along the grouped axis"):
                    # the region runs once a group: it reads every block's tile, not the arriving one's
                    hint = (f"the region runs once for the whole group: read every block's tile of `.group()`, "
                            f"e.g. in a loop `for j in 0..num_blocks({self.axis}) {{ .. }}` indexing with `j`, "
                            f"or as one wider tile")
                else:
                    hint = "store what differs into a `&mut` tile before the region and read it there with `.group()`"
                self.emit(d.note("any block of the group may arrive last, so the region must compute the same "
                                 "thing in each of them")
                          .with_help(hint))

    def _leaf_why(self, n: object) -> tuple[Span, str, Span | None] | None:
        """The reason at `n` itself (not its children), for the region's report."""
        match n:
            case ast.Name():
                return self.why(n, False)
            case ast.Call():
                name = n.callee.ident.name if isinstance(n.callee, ast.Name) else n.callee.segments[-1].name
                info = self.view.callee_info(n)
                if info is None and name == "block_id":
                    a = n.args[0].value if n.args else None
                    if not isinstance(a, ast.IntLit) or a.value == self.axis:
                        return n.span, f"`block_id` along the grouped axis {self.axis} differs between the " \
                                       "group's blocks", None
                if info is not None and not info.is_kernel:
                    for a in n.args:
                        p = self._own_param(a.value)
                        if p is not None:
                            return a.span, f"passes `{p}`, this block's own tile, to `{name}`", None
                    if self._fn_reads_block_id(info.decl):
                        return n.span, f"`{name}` reads `block_id`, which differs between the group's blocks", None
                    return self._raced_arg(n)
            case ast.MethodCall(method=m, receiver=r) if m.name in _LOADS:
                p = self._own_param(n.args[0].value if m.name == "load_like" and n.args else r)
                if p is not None and p not in self.own and m.name != "load_like":
                    return None  # a tiling made inside the region (the group's tensor)
                if p is not None:
                    return n.span, f"reads `{p}`'s own tile, which differs between the group's blocks", None
                hit = _labels(_names_of(r, self.view) & self.raced)
                if hit:
                    return n.span, f"reads `{hit[0]}`, which `unsafe` code writes", None
        return None


def _alias_edges(decl: ast.FnDecl, view: ProgramView) -> list[tuple[set[object], object]]:
    """(names bound, a name their value may denote) for every `let` and assignment of `decl`
    (round 25: assignments too, `let mut y = x; y = cnt;`); a tuple pattern bound to a tuple
    expression pairs element by element (`let (a, b) = (x, cnt);` binds `b` to `cnt` only)."""
    out: list[tuple[set[object], object]] = []

    def bind(pat: ast.Pattern, value: ast.Expr) -> None:
        if isinstance(pat, ast.TuplePat) and isinstance(value, ast.TupleExpr) and len(pat.elems) == len(value.elems):
            for p, v in zip(pat.elems, value.elems, strict=True):
                bind(p, v)
            return
        left: set[object] = {x for x in ast.walk(pat) if isinstance(x, ast.NamePat)}
        out.extend((left, b) for b in _names_of(value, view))

    for n in ast.walk(decl.body):
        if isinstance(n, ast.Let) and n.value is not None:
            bind(n.pattern, n.value)
        elif isinstance(n, ast.Assign):
            out.extend((_names_of(n.target, view), b) for b in _names_of(n.value, view))
    return out


def _bind_key(view: ProgramView, n: ast.Name | ast.NamePat | ast.Param) -> object:
    """The binding `n` denotes: its declaring `NamePat` or `Param` (a name left unresolved: the name). A name reused
    for another binding (a shadowing `let`, one in another block) is another key: the tracing went by the name,
    so `{ let x = cnt; atomic_add(x, ..) }` made the parameter `x` read in the region an E0410 (hfix5)."""
    if isinstance(n, (ast.NamePat, ast.Param)):
        return n
    decl = getattr(view.symbol_of(n), "decl", None)
    return decl if isinstance(decl, (ast.NamePat, ast.Param)) else n.ident.name


def _labels(keys: set[object]) -> list[str]:
    """The names of binding keys, sorted (for messages)."""
    return sorted(k if isinstance(k, str) else k.name.name for k in keys)  # type: ignore[attr-defined]


def _names_of(e: ast.Expr, view: ProgramView) -> set[object]:
    """The names a tensor-valued expression may denote: through `&`, tilings and tuple fields
    (`cnt.partition(..)`, `t.0`), a block's or `unsafe` block's value, both arms of an `if`, every
    element of a tuple, and every argument of a device function's call (what it returns may be any
    of them). Round 25: only a plain name (or a tiling of one) was followed, so `(cnt, 0)` passed
    to a device function whose `unsafe` code writes `t.0`, or `let y = if K > 0 { cnt } else { x };`
    read inside the region, hid `cnt`'s writes from E0410. Each is the binding's key (`_bind_key`)."""
    match e:
        case ast.Name():
            return {_bind_key(view, e)}
        case ast.Ref(expr=x) | ast.Field(receiver=x) | ast.MethodCall(receiver=x):
            return _names_of(x, view)
        case ast.Block(tail=t) | ast.UnsafeBlock(body=ast.Block(tail=t)):
            return _names_of(t, view) if t is not None else set()
        case ast.If(then=t, else_=els):
            return (_names_of(t, view) | (_names_of(els, view) if els is not None else set()))
        case ast.TupleExpr(elems=xs):
            return set().union(*(_names_of(x, view) for x in xs))
        case ast.Call(args=args):
            return set().union(*(_names_of(a.value, view) for a in args))
    return set()


def _inside(n: Any, outer: Any) -> bool:
    return outer.span.start <= n.span.start and n.span.end <= outer.span.end and n is not outer


def _kids(e: object) -> list[ast.Expr]:
    out: list[ast.Expr] = []
    for slot in getattr(type(e), "__slots__", ()):
        c = getattr(e, slot, None)
        for x in c if isinstance(c, tuple) else (c,):
            if isinstance(x, ast.Arg):
                out.append(x.value)
            elif isinstance(x, (ast.Ident, Span)) or x is None:
                continue
            elif hasattr(x, "__slots__") and not isinstance(
                    x, (ast.NamedType, ast.ShapeType, ast.RefType, ast.TupleType)):
                out.append(x)
    return out
