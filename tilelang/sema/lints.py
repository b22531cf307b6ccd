"""Warnings (W0xxx): code that checks but is probably not what was meant.

`check_lints(program, sink, root_path)` runs after the type and ownership
checks have passed, over the functions and kernels of the user's own files
(not the standard library):

- W0001 `unused_variables`: a `let` binding or a parameter that is never
  read (assigning to it is not reading it). A name starting with `_` is
  exempt, as in Rust.
- W0002 `unused_operations`: a kernel call bound to a variable that is never
  used, so the operation is never run (a kernel call used as a statement is
  the error E0224).
- W0003 `unreachable_code`: a statement after a `return`, `break` or
  `continue` (or after an `if`/block every path of which leaves).
- W0004 `unused_unsafe`: an `unsafe { }` block with no `atomic_*` or
  `store_unchecked` call of its own.
- W0005 `ineffective_hints`: a kernel hint that can change nothing in this
  kernel: `stages` or `evict_first` (it marks the loads a `stages` ring
  streams) with no loop in the kernel and the device functions it calls
  (`evict_first` also with no `stages` hint); `prefetch_lines` with no `prefetch` there; `arrive_wait` with no
  `if last_block(axis)` in the kernel. (A loop the backend
  does not stream is known only to the backend: the reference documents
  that the hint then does nothing.)
- W0006 `padded_extremum` (`sema/padded.py`), W0007 `constant_block_id`,
  W0008 `misaligned_reduction` (`sema/realign.py`): `t - t.max(1)` whose
  shapes pass only by accident (a square tile); W0009 `scaled_tile_index`
  (`sema/scaled_index.py`): `p.load([page * P])` of a partition of tiles of `P`.
- W0010 `own_tile_shape`: `z.shape()` of a kernel's `&mut` parameter, the block's own tile's shape (constants
  the kernel names already), bounding something (an ordering comparison, `min`/`clamp`) or made a float that
  divides (a count) where the partitioned tensor's extent was meant (round 23: an edge mask
  `rows < img.shape()[0]` kept one block of an image's sum; round 29: label smoothing's
  `eps / (logits.shape()[1] as f32)` divided by the tile's width, not the vocab's).
- W0011 `graph_kept_value` (`sema/graph_values.py`): a `let mut` number a `graph { .. }` recorded, assigned
  afterwards in a function that replays the graph (the replays keep the recorded value).
- W0012 `atomic_past_edge` (`sema/atomic_edge.py`): an atomic of a tile at a constant index of a tensor of
  constant shape that it runs past in every launch (round 24: `atomic_max(&best, [0], v)` of a [256] tile into
  a [1] tensor kept the blocks' first elements' maximum).
- W0013 `narrow_sum_cast` (`sema/narrow_sum.py`): `t.sum(0) as u32` of a `u8` tile, a sum that wrapped in `u8`
  before the cast (round 27: a byte checksum; the cast belongs on the elements, `(t as u32).sum(0)`).
- W0014 `nan_comparison` (`sema/nan_compare.py`): `x == f32::NAN` (any comparison with a NaN constant), always
  false, `!=` always true (round 28: NumPy's `x == np.nan`; the NaN test is `x != x`).

`#[allow(unused_variables, ...)]` (or `#[allow(warnings)]`) before a `fn` or
`kernel fn` silences them there; `tilec check --deny warnings` makes them
errors (the driver, `Options.deny_warnings`). `LINTS` maps each lint name to
its code; the attribute checker (`sema/items.py`) validates names against it.
"""

from __future__ import annotations

from typing import Any

from tilelang.diagnostics.codes import warnings as W
from tilelang.diagnostics.model import Diagnostic, DiagnosticSink
from tilelang.requires import read_names, requirements
from tilelang.sema.program import Program, SymbolKind
from tilelang.sema.types import OpT, RefT, TensorT
from tilelang.source import Span
from tilelang.syntax import ast

LINTS: dict[str, str] = {
    "unused_variables": W.UNUSED_VARIABLE,
    "unused_operations": W.UNUSED_OPERATION,
    "unreachable_code": W.UNREACHABLE_CODE,
    "unused_unsafe": W.UNUSED_UNSAFE,
    "ineffective_hints": W.INEFFECTIVE_HINT,
    "padded_extremum": W.PADDED_EXTREMUM,
    "constant_block_id": W.CONSTANT_BLOCK_ID,
    "misaligned_reduction": W.MISALIGNED_REDUCTION,
    "scaled_tile_index": W.SCALED_TILE_INDEX,
    "own_tile_shape": W.OWN_TILE_SHAPE,
    "graph_kept_value": W.GRAPH_KEPT_VALUE,
    "atomic_past_edge": W.ATOMIC_PAST_EDGE,
    "narrow_sum_cast": W.NARROW_SUM_CAST,
    "nan_comparison": W.NAN_COMPARISON,
}
ALL_LINTS = "warnings"  # `#[allow(warnings)]`

# The operations only `unsafe { }` allows (the kernel checker's rule, E04xx).
UNSAFE_OPERATIONS = frozenset(("atomic_add", "atomic_max", "atomic_min", "store_unchecked"))


def allowed_lints(decl: ast.FnDecl) -> set[str]:
    """The lint names an item's `#[allow(..)]` attributes name."""
    out: set[str] = set()
    for attr in decl.attrs:
        if attr.name.name != "allow":
            continue
        for arg in attr.args:
            if arg.name is None and isinstance(arg.value, ast.Name):
                out.add(arg.value.ident.name)
    return out


def check_lints(program: Program, sink: DiagnosticSink, skip_paths: frozenset[str] = frozenset(),
                sources: Any = None) -> None:
    """Warn about the functions of every module whose path is not in
    `skip_paths` (the caller passes the standard library's files);
    `sources` (a SourceMap) lets a help quote the code."""
    for mod in program.modules.values():
        if mod.path in skip_paths:
            continue
        for item in mod.ast.items:
            if isinstance(item, ast.FnDecl):
                _Linter(program, sink, allowed_lints(item), sources).fn(item)


class _Linter:
    def __init__(self, program: Program, sink: DiagnosticSink, allowed: set[str], sources: Any = None) -> None:
        self.program = program
        self.sink = sink
        self.allowed = allowed
        self.sources = sources

    def warn(self, lint: str, diag: Diagnostic) -> None:
        if lint in self.allowed or ALL_LINTS in self.allowed:
            return
        self.sink.emit(diag.note(f"the `{lint}` lint is on by default")
                       .with_help(f"to allow it here, put `#[allow({lint})]` before the function"))

    # ---------------------------------------------------------------- entry
    def fn(self, decl: ast.FnDecl) -> None:
        self._unused(decl)
        if decl.is_kernel:
            self._hints(decl)
            self._grid_axes(decl)
            self._own_tile_shape(decl)
            if any(isinstance(n, ast.UnsafeBlock) for n in ast.walk(decl.body)):
                from tilelang.sema.atomic_edge import atomic_overhangs

                for d in atomic_overhangs(self.program, decl):
                    self.warn("atomic_past_edge", d)
        else:
            self._padded(decl)
            if any(isinstance(n, ast.GraphBlock) for n in ast.walk(decl.body)):
                from tilelang.sema.graph_values import graph_kept_values

                for d in graph_kept_values(self.program, decl, self.sources):
                    self.warn("graph_kept_value", d)
        if any(isinstance(n, ast.Cast) for n in ast.walk(decl.body)):
            from tilelang.sema.narrow_sum import narrow_sum_casts

            for d in narrow_sum_casts(self.program, decl, self.sources):
                self.warn("narrow_sum_cast", d)
        if any(isinstance(n, ast.Path) and n.segments[-1].name == "NAN" for n in ast.walk(decl.body)):
            from tilelang.sema.nan_compare import nan_comparisons

            for d in nan_comparisons(decl, self.sources):
                self.warn("nan_comparison", d)
        from tilelang.sema.realign import misaligned_reductions

        for d in misaligned_reductions(self.program, decl, self.sources):
            self.warn("misaligned_reduction", d)
        if decl.is_kernel or any(isinstance(n, ast.MethodCall) and n.method.name == "partition"
                                 for n in ast.walk(decl.body)):
            from tilelang.sema.scaled_index import scaled_tile_indices

            for d in scaled_tile_indices(self.program, decl, self.sources):
                self.warn("scaled_tile_index", d)
        for node in ast.walk(decl.body):
            if isinstance(node, ast.Block):
                self._unreachable(node)
            elif isinstance(node, ast.UnsafeBlock):
                self._unsafe(node)

    # ---------------------------------------------------------------- W0001/W0002
    def _unused(self, decl: ast.FnDecl) -> None:
        nodes = list(ast.walk(decl.body))
        targets = {id(s.target) for s in nodes if isinstance(s, ast.Assign)}
        assigned = {id(self.program.symbol_of(s.target)) for s in nodes
                    if isinstance(s, ast.Assign) and isinstance(s.target, ast.Name)}
        read: set[int] = set()
        bindings: list[tuple[Any, ast.Ident]] = []
        for node in nodes:
            if isinstance(node, ast.Name) and id(node) not in targets:
                sym = self.program.symbol_of(node)
                if sym is not None:
                    read.add(id(sym))
            elif isinstance(node, ast.NamePat):
                sym = self.program.symbol_of(node)
                if sym is not None:
                    bindings.append((sym, node.name))
        required = {n for r in requirements(decl) for n in read_names(r)}  # `#[requires(..)]` reads them
        # a turbofish's bare name (`k::<8, n>(..)`, a host value for a const generic) parses as a
        # type name, and the checker reads it through a Name of its own, outside this tree
        named = {n.name.name for n in nodes if isinstance(n, ast.NamedType) and not n.args}
        for p in decl.params:
            sym = self.program.symbol_of(p)
            if sym is not None and p.name.name not in required:
                bindings.append((sym, p.name))
        for sym, ident in bindings:
            if id(sym) in read or ident.name.startswith("_") or ident.name in named:
                continue
            if isinstance(sym.ty, OpT):
                self.warn("unused_operations", Diagnostic.warning(
                    W.UNUSED_OPERATION, f"the operation `{ident.name}` is never run")
                    .primary(ident.span, "this kernel call is never run")
                    .with_help(f"run it with `{ident.name}.sync()`, or start it with "
                               f"`{ident.name}.launch()`"))
                continue
            what = "parameter" if sym.kind is SymbolKind.PARAM else "variable"
            message = (f"{what} `{ident.name}` is assigned to, but never used" if id(sym) in assigned
                       else f"unused {what}: `{ident.name}`")
            self.warn("unused_variables", Diagnostic.warning(W.UNUSED_VARIABLE, message)
                      .primary(ident.span, "never read")
                      .with_help(f"if this is intentional, prefix it with an underscore: "
                                 f"`_{ident.name}`"))

    # ---------------------------------------------------------------- W0003
    def _unreachable(self, block: ast.Block) -> None:
        items: list[Any] = [*block.stmts, *([block.tail] if block.tail is not None else [])]
        for i, st in enumerate(items[:-1]):
            if _diverges(st):
                nxt = items[i + 1]
                self.warn("unreachable_code", Diagnostic.warning(
                    W.UNREACHABLE_CODE, "unreachable statement" if i + 1 < len(block.stmts)
                    else "unreachable expression")
                    .primary(nxt.span, "this is never run")
                    .secondary(st.span, "any code following this is unreachable"))
                return

    # ---------------------------------------------------------------- W0004
    def _unsafe(self, u: ast.UnsafeBlock) -> None:
        for node in ast.walk(u.body, stop=ast.UnsafeBlock):
            if isinstance(node, ast.Call) and isinstance(node.callee, ast.Name):
                sym = self.program.symbol_of(node.callee)
                if node.callee.ident.name in UNSAFE_OPERATIONS and (
                        sym is None or sym.kind is SymbolKind.BUILTIN):
                    return
        nested = any(isinstance(n, ast.UnsafeBlock) for n in ast.walk(u.body, stop=ast.UnsafeBlock)
                     if n is not u)
        keyword = Span(u.span.file, u.span.start, u.span.start + len("unsafe"))
        d = (Diagnostic.warning(W.UNUSED_UNSAFE, "unnecessary `unsafe` block")
             .primary(keyword, "nothing in it needs `unsafe`"))
        if nested:
            d = d.note("the `unsafe` blocks inside it need their own")
        self.warn("unused_unsafe", d.with_help(
            "remove the `unsafe`: only `atomic_add`, `atomic_max`, `atomic_min` and "
            "`store_unchecked` need it"))


    # ---------------------------------------------------------------- W0006
    def _padded(self, decl: ast.FnDecl) -> None:
        from tilelang.sema.padded import padded_launch, padded_reads, padded_through_host

        reads: dict[int, Any] = {}

        def reads_of(info: Any) -> Any:
            if "padded_extremum" in allowed_lints(info.decl):
                return None
            if id(info) not in reads:
                reads[id(info)] = padded_reads(self.program, info.decl)
            return reads[id(info)]

        for n in ast.walk(decl.body):
            info = self.program.callee_of(n) if isinstance(n, ast.Call) else None
            if info is None or reads_of(info) is None:
                continue
            found = (padded_launch(self.program, n, info, reads_of(info), self.sources) if info.is_kernel
                     else padded_through_host(self.program, n, info, reads_of, self.sources))
            for d in found:
                self.warn("padded_extremum", d)

    # ---------------------------------------------------------------- W0007
    def _grid_axes(self, decl: ast.FnDecl) -> None:
        tiles = []
        for p in decl.params:
            sym = self.program.symbol_of(p)
            t = sym.ty if sym is not None else None
            if isinstance(t, RefT) and t.mutable and isinstance(t.inner, TensorT) and t.inner.shape is not None:
                tiles.append((p, len(t.inner.shape)))
        if not tiles:
            return
        rank = max(r for _, r in tiles)
        p = next(p for p, r in tiles if r == rank)
        for n in ast.walk(decl.body):
            if not (isinstance(n, ast.Call) and isinstance(n.callee, ast.Name) and n.args
                    and n.callee.ident.name in ("block_id", "num_blocks") and isinstance(n.args[0].value, ast.IntLit)):
                continue
            sym = self.program.symbol_of(n.callee)
            axis = n.args[0].value.value
            if (sym is not None and sym.kind is not SymbolKind.BUILTIN) or not rank <= axis <= 2:
                continue
            what, value = n.callee.ident.name, "0" if n.callee.ident.name == "block_id" else "1"
            grid = f"{rank}-D"
            self.warn("constant_block_id", Diagnostic.warning(
                W.CONSTANT_BLOCK_ID, f"`{what}({axis})` is always {value}: the grid of `{decl.name.name}` is {grid}")
                .primary(n.span, f"always {value}")
                .secondary(p.ty.span, f"the grid has one axis per axis of the `&mut` tiles: `{p.name.name}`'s "
                                      f"tile has {rank}")
                .note("a partition's tile shape makes the grid: `z.partition([BM, BN])` launches a 2-D grid of "
                      "blocks, `z.partition([B])` a 1-D one")
                .with_help(f"give `{p.name.name}` a tile of {axis + 1} axes (and partition it so) to launch blocks "
                           f"along axis {axis}, or use an axis the grid has (`{what}(0)`)"))

    # ---------------------------------------------------------------- W0010
    def _own_tile_shape(self, decl: ast.FnDecl) -> None:
        tiles: dict[int, tuple[ast.Param, TensorT]] = {}
        for p in decl.params:
            sym = self.program.symbol_of(p)
            t = sym.ty if sym is not None else None
            if isinstance(t, RefT) and t.mutable and isinstance(t.inner, TensorT) and t.inner.shape is not None:
                tiles[id(sym)] = (p, t.inner)
        # only where the shape bounds something (an ordering comparison, a `min`/`clamp`): an edge mask or a clamp
        # against the own tile's shape is always true or a no-op; the tile's size in integer arithmetic is what it
        # says, but made a float that divides it is a count (below)
        bounds: list[ast.Expr] = []
        for n in ast.walk(decl.body) if tiles else ():
            if isinstance(n, ast.Binary) and n.op in ("<", ">", "<=", ">="):
                bounds += [n.lhs, n.rhs]
            elif isinstance(n, ast.Call) and isinstance(n.callee, ast.Name) \
                    and n.callee.ident.name in ("min", "minimum", "clamp"):
                bounds += [a.value for a in n.args]
            elif isinstance(n, ast.MethodCall) and n.method.name in ("min", "clamp") and n.args:
                bounds += [n.receiver, *(a.value for a in n.args)]
            elif isinstance(n, ast.Binary) and n.op == "/":
                # (huser30: a count made a float that divides, `eps / (logits.shape()[1] as f32)` for label smoothing
                # over the vocab, or a mean's `/ (z.shape()[1] as f32)`: the tile's extent, wrong where the tile is
                # not the row, at a partial edge tile or one wider than the row; `(h * 2) as f32` stays silent)
                bounds += [c.expr for c in ast.walk(n.rhs) if isinstance(c, ast.Cast)
                           and isinstance(c.ty, ast.NamedType) and c.ty.name.name in ("f16", "bf16", "f32", "f64")]
        # a `let h = img.shape()[0];` read in a bound bounds with the shape too (the lets' values, by symbol)
        lets = {id(sym): n.value for n in ast.walk(decl.body) if tiles and isinstance(n, ast.Let)
                and isinstance(n.pattern, ast.NamePat) and n.value is not None
                and (sym := self.program.symbol_of(n.pattern)) is not None}
        seen: set[int] = set()
        i = 0
        while i < len(bounds):  # (`bounds` grows by the lets' values it reads)
            for n in ast.walk(bounds[i]):
                if id(n) in seen:
                    continue
                seen.add(id(n))
                if isinstance(n, ast.Name) and (ref := self.program.symbol_of(n)) is not None and id(ref) in lets:
                    bounds.append(lets.pop(id(ref)))
                if not (isinstance(n, ast.MethodCall) and n.method.name == "shape" and not n.args
                        and isinstance(n.receiver, ast.Name)):
                    continue
                sym = self.program.symbol_of(n.receiver)
                if sym is None or id(sym) not in tiles:
                    continue
                p, t = tiles[id(sym)]
                name = p.name.name
                dims = "[" + ", ".join(str(d) for d in t.shape) + "]"  # type: ignore[union-attr]
                self.warn("own_tile_shape", Diagnostic.warning(
                    W.OWN_TILE_SHAPE, f"`{name}.shape()` is the shape of this block's own tile, `{dims}`, not of "
                                      "the tensor partitioned")
                    .primary(n.span, f"always `{dims}`")
                    .secondary(p.ty.span, f"`{name}` is the block's own tile of a partition")
                    .note("a kernel sees a `&mut` parameter as its own tile: the launch's partition sets its shape, "
                          "and the tensor's extent is not a value of the kernel")
                    .with_help(f"for the tile's size write `{dims}` itself; for the tensor's extent (an edge mask: "
                               "`rows < n`), pass it in as a scalar parameter or read `x.shape()` of an input of "
                               "that size (a count that divides too: `eps / (n as f32)`)"))
            i += 1

    # ---------------------------------------------------------------- W0005
    def _hints(self, decl: ast.FnDecl) -> None:
        args = {a.name.name: a for at in decl.attrs if at.name.name == "hints" for a in at.args
                if a.name is not None}
        evict, prefetch = args.get("evict_first"), args.get("prefetch_lines")
        wait = args.get("arrive_wait")
        if wait is not None and not any(isinstance(n, ast.Name) and n.ident.name == "last_block"
                                        for n in ast.walk(decl.body)):
            self.warn("ineffective_hints", Diagnostic.warning(
                W.INEFFECTIVE_HINT, "hint `arrive_wait` has no effect on this kernel")
                .primary(wait.span, "no group arrives")
                .note("`arrive_wait` changes which block of a group runs `if last_block(axis) { .. }`; "
                      "the kernel has none")
                .with_help("remove the hint"))
        stages = args.get("stages")
        if evict is None and prefetch is None and stages is None:
            return
        nodes = self._reached(decl)
        if stages is not None and not any(isinstance(n, (ast.For, ast.While)) for n in nodes):
            self.warn("ineffective_hints", Diagnostic.warning(  # (hrev29: accepted and ignored, without a word)
                W.INEFFECTIVE_HINT, "hint `stages` has no effect on this kernel")
                .primary(stages.span, "no loop to pipeline")
                .note("`stages` is how many iterations' loads of a loop a ring keeps in flight; the kernel (and "
                      "the functions it calls) has no loop")
                .with_help("remove the hint"))
        if evict is not None:
            why = None
            if "stages" not in args:
                why = "there is no `stages` hint, so no loop's loads stream through a ring"
            elif not any(isinstance(n, (ast.For, ast.While)) for n in nodes):
                why = "the kernel (and the functions it calls) has no loop whose loads a ring could stream"
            if why is not None:
                self.warn("ineffective_hints", Diagnostic.warning(
                    W.INEFFECTIVE_HINT, "hint `evict_first` has no effect on this kernel")
                    .primary(evict.span, "nothing to mark evict-first")
                    .note(f"`evict_first` marks the loads a `stages` ring streams; {why}")
                    .with_help("remove the hint" if "stages" in args else
                               "remove the hint, or add `stages = N` to stream a loop's loads"))
        if prefetch is not None and not any(
                isinstance(n, ast.MethodCall) and n.method.name == "prefetch" for n in nodes):
            self.warn("ineffective_hints", Diagnostic.warning(
                W.INEFFECTIVE_HINT, "hint `prefetch_lines` has no effect on this kernel")
                .primary(prefetch.span, "no `prefetch` to issue as lines")
                .note("`prefetch_lines` changes how the kernel's `p.prefetch([..])` requests go out; "
                      "the kernel (and the functions it calls) makes none")
                .with_help("remove the hint"))

    def _reached(self, decl: ast.FnDecl) -> list[Any]:
        """The nodes of a kernel and of every function it calls, to any depth."""
        out: list[Any] = []
        seen: set[int] = set()
        todo = [decl]
        while todo:
            fn = todo.pop()
            if id(fn) in seen:
                continue
            seen.add(id(fn))
            for n in ast.walk(fn.body):
                out.append(n)
                if isinstance(n, ast.Call):
                    info = self.program.callee_of(n)
                    if info is not None and not info.is_kernel:
                        todo.append(info.decl)
        return out


def _diverges(node: Any) -> bool:
    """Whether every path through a statement or expression leaves the block."""
    match node:
        case ast.Return() | ast.Break() | ast.Continue():
            return True
        case ast.ExprStmt(expr=e):
            return _diverges(e)
        case ast.Let(value=v):
            return v is not None and _diverges(v)
        case ast.Block(stmts=stmts, tail=tail):
            return any(_diverges(s) for s in stmts) or (tail is not None and _diverges(tail))
        case ast.UnsafeBlock(body=b):
            return _diverges(b)
        case ast.If(then=then, else_=els):
            return els is not None and _diverges(then) and _diverges(els)
    return False
