"""`tilec repl`: an interactive Tile session.

Two layers, so the core is testable without a terminal:

- `ReplSession.feed(text) -> ReplOutput` holds the session and calls the
  driver and the host evaluator; `ReplSession.completions(text)` is the
  completion logic.
- `main()` wires prompt_toolkit to it (multi-line input, history, Tile syntax
  highlighting, completion, meta-commands); when stdin is not a terminal it
  reads the input and feeds it entry by entry, so `tilec repl < script` works.

How a session runs. An entry holds items (`fn`, `kernel fn`, `const`, `use`)
and host statements, optionally ending in an expression whose value is shown.

- Checking: the session is one synthesised program: every accepted item, then
  a `fn main()` holding every accepted statement in order. Each entry is
  checked as part of that whole program, so the type and ownership checkers
  see everything, exactly as in a file: a `.launch()` in one entry keeps its
  borrows until `.wait()` in a later one. The only error tolerated is the
  ownership checker's "handle dropped at the end of `main`" (E0308 pointing at
  the synthesised closing brace): that handle is simply still in flight.
- Running: only the new entry's statements run, in the host evaluator
  (`HostEvaluator.run_statements`), against `env`, the values of the
  variables bound so far. One device and one `Runtime` live for the whole
  session, so tensors stay in device memory and compiled kernels are reused.
- Failure: an entry that does not parse or check is dropped whole: nothing
  ran. An entry that fails at run time is dropped too and its bindings are
  rolled back (the names mean what they meant before the entry, so the
  checker's view and the values never disagree); what it already did stays
  done: lines it printed, tensor elements a kernel or `store` wrote.
- Redefinition: an item with the name of an earlier one (or a `use` of one
  item by that name) replaces it for later entries. The earlier statements
  keep meaning what they meant when they ran: the old item stays in the
  program under a hidden name (`sq__1`), and the earlier statements (and the
  old item's references to itself) are rewritten to that name; operations,
  handles and graphs already made keep naming the old kernel, and compiled
  kernels are dropped. Other earlier items refer to the name, so they see the
  new item (as in Python); if they no longer check, the entry is rejected. A
  replaced `use` is dropped (earlier statements then see the new item).
- Cost: checking grows with the session (about 1 ms per earlier statement);
  running does not.

Diagnostics point into the entry that caused them: each entry is registered in
the display `SourceMap` as `<repl-N>`, and spans into the synthesised program
are mapped back to it.

Invariants: prompt_toolkit is imported only by `main()`; rich only to colour
a shown value when colour is on; the core imports the driver and the host
runtime lazily, per entry. The session never raises on user input: a crash
inside tilec is reported as an internal error and the session goes on.
"""

from __future__ import annotations

import dataclasses
import io
import os
import re
import sys
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from tilelang.diagnostics.codes.names import DUPLICATE_DEFINITION
from tilelang.diagnostics.codes.ownership import HANDLE_DROPPED
from tilelang.diagnostics.model import Diagnostic, DiagnosticSink, Label
from tilelang.source import SourceFile, SourceMap, Span

HELP = """\
Type Tile at the prompt: items (`fn`, `kernel fn`, `const`, `use`) and host
statements, as in the body of `main`. An expression without a trailing `;`
shows its value and type. Enter continues the entry while it is unfinished
(an open bracket, a missing `;`); Enter on a blank line submits it as it is;
Ctrl-C drops it. Tab completes keywords, builtins, methods (after `.`) and
your names; Up/Down walk the history (~/.tilec_history, or $TILEC_HISTORY).

  >>> let mut x = arange::<f32>(8);
  >>> kernel fn double<const B: i32>(y: &mut Tensor<f32, [B]>) {
  ...     y.store(y.load() * 2.0);
  ... }
  >>> double(x.partition([4])).sync();
  >>> x
  Tensor<f32, [8]> = [ 0.0,  2.0,  4.0,  6.0,  8.0, 10.0, 12.0, 14.0]

Definitions and `let` bindings persist; defining a name again replaces it.
Every entry is checked with the whole session (types, ownership: a
`.launch()` keeps its tensors borrowed until `.wait()`). An entry that does
not check changes nothing, and its error points into it; one that fails
while running keeps what it wrote into tensors but none of its bindings.

Commands:
  :help                this text
  :help NAME           a builtin function or method (`:help load`), or your item
  :help builtins       every builtin, for kernels and for host code
  :type EXPR           the type of an expression, without running it
  :ast [ENTRY]         the syntax tree of ENTRY, or of the whole session
  :ir KERNEL           Tile IR of a kernel as launched (or as its launches fix it)
  :llvm KERNEL         its LLVM IR          :ptx KERNEL   its PTX
  :load FILE           add the items of a .tile file (not its `main`)
  :device [cpu|gpu|auto]  where kernels run (tensors move along)
  :time STMT           run STMT once and show the wall time it took
  :vars                the variables bound so far, with their types
  :program             the session as one program (the checker's view)
  :reset               forget everything
  :quit                leave (also Ctrl-D)

An error's code (`error[E0305]`) is explained by `tilec explain E0305`.
The language tour: examples/README.md."""

COMMANDS = (
    "help",
    "type",
    "ast",
    "ir",
    "llvm",
    "ptx",
    "load",
    "device",
    "time",
    "vars",
    "program",
    "reset",
    "quit",
)


@dataclass(slots=True)
class ReplOutput:
    """What one entry produced: program stdout (and the shown value),
    rendered diagnostics or notes, and whether the entry was accepted."""

    stdout: str = ""
    stderr: str = ""
    ok: bool = True
    quit: bool = False


@dataclass(slots=True)
class _Chunk:
    """A piece of entry text placed in the synthesised program."""

    text: str
    file: int  # its entry's file id in the display SourceMap
    base: int  # its offset inside that entry
    # After a rename (see the module docstring) `text` differs from the entry:
    # the entry offset of each offset of `text` (len(text) + 1 entries).
    origin: tuple[int, ...] | None = None

    def to_entry(self, offset: int) -> int:
        if self.origin is None:
            return self.base + offset
        return self.base + self.origin[max(0, min(offset, len(self.origin) - 1))]


@dataclass(slots=True)
class _Item:
    chunk: _Chunk
    name: str | None  # None for `use`
    kind: str  # "fn", "kernel", "const", "use"


@dataclass(slots=True)
class _Synth:
    text: str = ""
    # (start, end, chunk) for each chunk, in the synthesised text
    where: list[tuple[int, int, _Chunk]] = field(default_factory=list)
    new_from: int = 0  # where the new entry's statements start
    close: int = 0  # offset of `main`'s closing brace


@dataclass(slots=True)
class _Checked:
    """A check of the synthesised session."""

    synth: _Synth
    result: Any  # driver.CompileResult
    errors: list[Diagnostic]  # real errors (not the handles in flight)
    in_flight: list[Diagnostic]  # E0308 at the end of `main`

    @property
    def program(self) -> Any:
        checked = self.result.context.outputs.get("checked")
        return None if checked is None else checked.program

    @property
    def ownership(self) -> Any:
        checked = self.result.context.outputs.get("checked")
        return None if checked is None else checked.ownership

    @property
    def root(self) -> Any:
        return self.result.context.outputs.get("ast")


_HANDLE_DROPPED = HANDLE_DROPPED  # E0308: a launch handle never waited for


class _Forward(io.TextIOBase):
    """The device's `print` sink: forwards to the current entry's buffer."""

    def __init__(self, session: ReplSession) -> None:
        self.session = session

    def write(self, s: str) -> int:
        return self.session._out.write(s)


class ReplSession:
    """The state of one REPL session (see the module docstring)."""

    def __init__(self, device: str = "cpu", color: bool = False) -> None:
        self.device = device  # the `:device` choice: cpu, gpu or auto
        self.color = color
        self.display = SourceMap()  # entries as `<repl-N>` files, for rendering
        self.items: list[_Item] = []
        self.stmts: list[_Chunk] = []
        self.env: dict[str, Any] = {}  # variable name -> value, after the last entry
        self.types: dict[str, str] = {}  # variable name -> its type, for `:vars`
        self.entries = 0
        self.renames = 0
        self._out: io.StringIO = io.StringIO()
        self._runtime: Any = None  # runtime.launch.Runtime, made on first use
        self.last_time: float | None = None  # seconds the last entry ran

    # ---------------------------------------------------------------- entry
    def feed(self, text: str) -> ReplOutput:
        """Check and run one entry (or a `:command`); never raises on user input."""
        stripped = text.strip()
        if not stripped:
            return ReplOutput()
        try:
            if stripped.startswith(":"):
                return self._meta(stripped)
            return self._entry(text)
        except KeyboardInterrupt:
            return ReplOutput(stderr="error: interrupted\n", ok=False)
        except Exception as e:  # a bug in tilec: say so, keep the session
            return ReplOutput(stderr=_ice_text(e), ok=False)

    def _new_file(self, text: str) -> SourceFile:
        self.entries += 1
        return self.display.add(f"<repl-{self.entries}>", text)

    def _entry(self, text: str, timed: bool = False) -> ReplOutput:
        from tilelang.syntax import ast
        from tilelang.syntax.parser import parse_repl

        sf = self._new_file(text)
        sink = DiagnosticSink()
        parsed = parse_repl(sf, sink)
        if parsed is None or sink.has_errors:
            return ReplOutput(stderr=self._render(sink.diagnostics), ok=False)
        for item in parsed.items:
            if isinstance(item, ast.FnDecl) and item.name.name == "main":
                d = (
                    Diagnostic.error(DUPLICATE_DEFINITION, "the REPL defines `main` itself")
                    .primary(item.name.span, "`main` defined here")
                    .with_help("write the statements of `main` directly at the prompt")
                )
                return ReplOutput(stderr=self._render([d]), ok=False)
        new_items = [_item_of(sf, it) for it in parsed.items]
        names = [it.name for it in new_items if it.name is not None]
        dup = next((n for n in names if names.count(n) > 1), None)
        if dup is not None:
            first, second = [it for it in parsed.items if _item_name(it) == dup][:2]
            d = (
                Diagnostic.error(
                    DUPLICATE_DEFINITION, f"the name `{dup}` is defined twice in this entry"
                )
                .primary(_name_span(second), f"`{dup}` redefined here")
                .secondary(_name_span(first), "first defined here")
                .with_help("keep one of them; to replace a definition, enter it on its own")
            )
            return ReplOutput(stderr=self._render([d]), ok=False)
        old_items, old_stmts, redefined = self._redefine(set(names))
        items = old_items + new_items
        new_stmts = [_chunk(sf, st.span) for st in parsed.body.stmts]
        tail = parsed.body.tail
        tail_chunk = _chunk(sf, tail.span) if tail is not None else None
        stmts = old_stmts + new_stmts + ([tail_chunk] if tail_chunk is not None else [])
        checked = self._check(items, stmts, len(old_stmts))
        if checked.errors:
            return self._reject(checked)
        main = checked.root.items[-1]
        nodes: list[Any] = [s for s in main.body.stmts if s.span.start >= checked.synth.new_from]
        if main.body.tail is not None and main.body.tail.span.start >= checked.synth.new_from:
            nodes.append(main.body.tail)
        show_ty: str | None = None
        if tail_chunk is not None and nodes:
            last = nodes[-1]
            expr = last.expr if isinstance(last, ast.ExprStmt) else last
            ty = checked.program.type_of(expr)
            if ty is not None and str(ty) != "()":
                show_ty = str(ty)
                nodes[-1] = expr  # evaluated for its value
                stmts = stmts[:-1]  # a shown value is not kept (`z` would move `z`)

        value: Any = None
        elapsed = 0.0
        env = dict(self.env)
        self._out = io.StringIO()
        if redefined:
            self._rekey(redefined)
        if nodes:
            runtime = self._runtime_for(checked.program)
            compiled = len(runtime.kernels)
            from tilelang.diagnostics.model import ICE, TileError
            from tilelang.runtime.host import HostEvaluator

            ev = HostEvaluator(
                checked.program,
                checked.root,
                checked.result.sources,
                runtime,
                out=self._out,
                ownership=checked.ownership,
            )
            start = time.perf_counter()
            ran = False
            try:
                value = ev.run_statements(nodes, env)
                ran = True
            except TileError as e:
                mapped = [
                    self._map(d, checked.result.sources, checked.synth) for d in e.diagnostics
                ]
                return ReplOutput(
                    stdout=self._out.getvalue(), stderr=self._render(mapped), ok=False
                )
            except KeyboardInterrupt:
                return ReplOutput(
                    stdout=self._out.getvalue(), stderr="error: interrupted\n", ok=False
                )
            except RecursionError:
                return ReplOutput(
                    stdout=self._out.getvalue(),
                    stderr="error: the host stack overflowed (a recursion too deep)\n",
                    ok=False,
                )
            except ICE as e:
                return ReplOutput(stdout=self._out.getvalue(), stderr=_ice_text(e), ok=False)
            finally:
                elapsed = time.perf_counter() - start
                if not ran:  # the entry is dropped: undo what it changed in the session
                    _wait_new_handles(env, self.env)
                    self._rekey({v: k for k, v in redefined.items()})
            compiled = len(runtime.kernels) - compiled
        else:
            compiled = 0
        # Accepted: commit.
        self.items, self.stmts, self.env = items, stmts, env
        self._record_types(checked, main)
        self.last_time = elapsed
        out = self._out.getvalue()
        if show_ty is not None:
            out += self._show_value(value, show_ty)
        err = ""
        fresh = [d for d in checked.in_flight if _in_file(d, sf.id, self, checked)]
        if fresh:
            handles = ", ".join(f"`{n}`" for n in _handle_names(fresh))
            err = f"note: {handles} in flight: its tensors stay borrowed until `.wait()`\n"
        if timed:
            note = " (includes compiling the kernel it launched first)" if compiled else ""
            out += f"time: {_fmt_seconds(elapsed)}, one run, wall clock{note}\n"
        return ReplOutput(stdout=out, stderr=err)

    def _reject(self, checked: _Checked) -> ReplOutput:
        mapped = [self._map(d, checked.result.sources, checked.synth) for d in checked.errors]
        return ReplOutput(stderr=self._render(mapped), ok=False)

    def _record_types(self, checked: _Checked, main: Any) -> None:
        """Remember the type of each top-level `let` binding (for `:vars`)."""
        from tilelang.syntax import ast

        for s in main.body.stmts:
            if isinstance(s, ast.Let):
                for node in _walk(s.pattern):
                    if isinstance(node, ast.NamePat) and node.name.name in self.env:
                        sym = checked.program.symbol_of(node)
                        ty = getattr(sym, "ty", None) or checked.program.type_of(node)
                        if ty is not None:
                            self.types[node.name.name] = str(ty)

    # ---------------------------------------------------------------- devices
    def _runtime_for(self, program: Any) -> Any:
        if self._runtime is None:
            from tilelang import run as run_mod
            from tilelang.runtime.launch import Runtime

            dev = run_mod.make_device(self.device, _Forward(self))  # type: ignore[arg-type]
            self._runtime = Runtime(dev, program)
        self._runtime.program = program
        return self._runtime

    def switch_device(self, choice: str) -> ReplOutput:
        """`:device cpu|gpu|auto`: run later launches there; tensors move along."""
        from tilelang import run as run_mod
        from tilelang.runtime.launch import Handle

        if choice not in ("cpu", "gpu", "auto"):
            return ReplOutput(
                stderr=f"error: unknown device `{choice}` (cpu, gpu or auto)\n", ok=False
            )
        pending = [n for n, v in self.env.items() if isinstance(v, Handle) and not v.done]
        if pending:
            names = ", ".join(f"`{n}`" for n in pending)
            return ReplOutput(
                stderr=f"error: {names} still in flight\nhelp: call `.wait()` on it first\n",
                ok=False,
            )
        try:
            dev = run_mod.make_device(choice, _Forward(self))  # type: ignore[arg-type]
        except run_mod.GpuUnavailable as e:
            if self._runtime is not None:
                stay = f"note: the session stays on the {_device_words(self._runtime.device)}\n"
            elif self.device != choice:
                stay = f"note: the session stays on `{self.device}`\n"
            else:  # starting with `--device gpu`
                stay = "help: start it with `--device cpu` (`--device auto` falls back to it)\n"
            return ReplOutput(stderr=f"error: {e}\n{stay}", ok=False)
        self.device = choice
        if self._runtime is not None and self._runtime.device is not dev:
            old = self._runtime.device
            moved = _move_tensors(self.env.values(), old, dev)
            self._runtime.device = dev
            self._runtime.kernels.clear()
            msg = f"kernels now run on the {_device_words(dev)}"
            if moved:
                msg += f" ({moved} tensor{'s' if moved != 1 else ''} moved there)"
            return ReplOutput(stdout=msg + "\n")
        if self._runtime is None:
            from tilelang.runtime.launch import Runtime

            self._runtime = Runtime(dev, None)
        return ReplOutput(stdout=f"kernels now run on the {_device_words(dev)}\n")

    # ---------------------------------------------------------------- program
    def _synth(
        self, items: list[_Item], stmts: list[_Chunk], first_new: int | None = None
    ) -> _Synth:
        out = _Synth()
        parts: list[str] = []
        pos = 0

        def put(text: str, chunk: _Chunk | None = None) -> None:
            nonlocal pos
            if chunk is not None:
                out.where.append((pos, pos + len(text), chunk))
            parts.append(text)
            pos += len(text)

        for it in items:
            put(it.chunk.text, it.chunk)
            put("\n")
        put("fn main() {\n")
        out.new_from = pos
        for i, st in enumerate(stmts):
            if i == first_new:
                out.new_from = pos
            put("    ")
            put(st.text, st)
            # Every statement gets its `;` (a block-like one too: `if c {1} else {2};`
            # is a statement, so no entry becomes `main`'s tail).
            put("\n" if st.text.rstrip().endswith(";") else ";\n")
        if first_new is not None and first_new >= len(stmts):
            out.new_from = pos
        out.close = pos
        put("}\n")
        out.text = "".join(parts)
        return out

    def program_text(self) -> str:
        return self._synth(self.items, self.stmts).text

    def _check(
        self, items: list[_Item], stmts: list[_Chunk], first_new: int | None = None
    ) -> _Checked:
        from tilelang import driver

        synth = self._synth(items, stmts, first_new)
        result = driver.compile(synth.text, "checked", name="<repl>")
        errors: list[Diagnostic] = []
        in_flight: list[Diagnostic] = []
        for d in result.diagnostics:
            if d.severity.value != "error":
                continue
            if d.code == _HANDLE_DROPPED and any(
                lb.span.start == synth.close and lb.span.end == synth.close + 1 for lb in d.labels
            ):
                in_flight.append(d)
            else:
                errors.append(d)
        if not errors and result.context.outputs.get("checked") is None:
            errors = [Diagnostic.error("ICE", "the session could not be checked")]
        return _Checked(synth, result, errors, in_flight)

    # ---------------------------------------------------------------- redefinition
    def _redefine(self, names: set[str]) -> tuple[list[_Item], list[_Chunk], dict[str, str]]:
        """The session's items and statements with the items named in `names`
        kept under hidden names (see the module docstring), and those names
        (old name -> hidden name)."""
        from tilelang.syntax import ast

        # A `use` of a replaced name is dropped; a `fn` or `const` is renamed.
        imports = [it for it in self.items if it.name in names and it.kind == "use"]
        kept = [it for it in self.items if not any(it is u for u in imports)]
        old = [it for it in kept if it.name in names]
        if not old:
            return kept, list(self.stmts), {}
        checked = self._check(self.items, self.stmts)
        program, root = checked.program, checked.root
        hidden: dict[str, str] = {}
        for it in old:
            assert it.name is not None
            self.renames += 1
            hidden[it.name] = f"{it.name}__{self.renames}"
        consts = {it.name for it in old if it.kind == "const"}
        old_chunks = {id(it.chunk) for it in old}
        # Offsets (in the synthesised text) of every reference to rename.
        edits: list[tuple[int, int, str]] = []
        if root is not None and program is not None:
            for node in _walk(root):
                match node:
                    case ast.Name(ident=ident) if ident.name in hidden:
                        sym = program.symbol_of(node)
                        kind = getattr(getattr(sym, "kind", None), "value", None)
                        if kind in ("fn", "kernel", "const") or (
                            sym is None and ident.name in consts
                        ):
                            edits.append((ident.span.start, ident.span.end, hidden[ident.name]))
                    case ast.NamedType(name=ident) if ident.name in consts:
                        edits.append((ident.span.start, ident.span.end, hidden[ident.name]))
                    case ast.FnDecl(name=ident) | ast.ConstDecl(name=ident) if ident.name in hidden:
                        edits.append((ident.span.start, ident.span.end, hidden[ident.name]))
        where = checked.synth.where

        def rewrite(chunk: _Chunk, rename_here: bool) -> _Chunk:
            if not rename_here:
                return chunk
            start = next((s for s, _e, c in where if c is chunk), None)
            if start is None:
                return chunk
            mine = sorted(
                (s - start, e - start, n)
                for s, e, n in edits
                if start <= s and e <= start + len(chunk.text)
            )
            return _apply_edits(chunk, mine) if mine else chunk

        items = [
            dataclasses.replace(
                it,
                chunk=rewrite(it.chunk, True),
                name=hidden[it.name] if it.name is not None else None,
            )
            if id(it.chunk) in old_chunks
            else it
            for it in kept
        ]
        stmts = [rewrite(st, True) for st in self.stmts]
        return items, stmts, hidden

    def _rekey(self, names: dict[str, str]) -> None:
        """Items were renamed (`names`: old -> new): operations, handles and
        graphs made before keep naming the kernel they were made with, and
        compiled kernels are dropped (a kernel inlines the functions it calls,
        which may be the ones redefined)."""
        from tilelang.runtime.launch import Graph, Handle, Operation

        def visit(v: Any) -> None:
            match v:
                case Operation() if v.kernel_key in names:
                    v.kernel_key = names[v.kernel_key]
                case Handle():
                    visit(v.op)
                case Graph():
                    for op in v.ops:
                        visit(op)
                case list() | tuple():
                    for x in v:
                        visit(x)
                case _:
                    pass

        for v in self.env.values():
            visit(v)
        if self._runtime is not None:
            self._runtime.kernels.clear()

    # ---------------------------------------------------------------- values
    def _show_value(self, value: Any, ty: str) -> str:
        """The shown value: its type (with shape and dtype), then its value."""
        from tilelang.runtime.builtins import format_value
        from tilelang.runtime.tensor import Partition, Tensor

        if isinstance(value, Tensor):
            header = value.type_name()  # the run-time shape and dtype
            body = format_value(value)[len(header) :].lstrip()
            extra = f"(checked as {ty})" if "?" in ty else ""
        elif isinstance(value, Partition):
            header = value.type_name()
            body = f"{value.tensor.type_name()} in tiles of {list(value.tile)}, grid {list(value.grid)}"
            extra = ""
        else:
            header, body, extra = _default_literals(ty), _describe(value), ""
        sep = "\n" if "\n" in body else " "
        if not self.color:
            return f"{header}{extra and ' ' + extra} ={sep}{body}\n"
        from rich.console import Console
        from rich.text import Text

        buf = io.StringIO()
        console = Console(file=buf, force_terminal=True, color_system="standard", width=200)
        text = Text(header, style="bold cyan")
        if extra:
            text.append(" " + extra, style="dim")
        text.append(f" ={sep}")
        text.append(body)
        console.print(text, soft_wrap=True, highlight=False)
        return buf.getvalue()

    # ---------------------------------------------------------------- diagnostics
    def _map(self, diag: Diagnostic, sources: SourceMap, synth: _Synth) -> Diagnostic:
        """`diag` with its spans moved from the synthesised program back into
        the entries they came from (labels on the REPL's glue are dropped)."""
        labels: list[Label] = []
        for label in diag.labels:
            span = self._map_span(label.span, sources, synth)
            if span is not None:
                labels.append(dataclasses.replace(label, span=span))
        return dataclasses.replace(diag, labels=tuple(labels))

    def _map_span(self, span: Span, sources: SourceMap, synth: _Synth) -> Span | None:
        try:
            name = sources.get(span.file).name if span.file >= 0 else None
        except IndexError:
            name = None
        if name == "<repl>":
            for start, end, chunk in synth.where:
                if start <= span.start and span.end <= end:
                    return Span(
                        chunk.file,
                        chunk.to_entry(span.start - start),
                        chunk.to_entry(span.end - start),
                    )
            return None  # inside the glue the REPL wrote (`fn main`, `;`)
        if name is None:
            return None
        # A span into another file (the stdlib, a `use`d file): show that file.
        sf = self.display.by_name(name) or self.display.add(name, sources.get(span.file).text)
        return Span(sf.id, span.start, span.end)

    def _render(self, diags: list[Diagnostic]) -> str:
        from tilelang.diagnostics.render import render_human

        return render_human(diags, self.display, color=self.color, footer=False)

    # ---------------------------------------------------------------- meta-commands
    def _meta(self, line: str) -> ReplOutput:
        cmd, _, arg = line[1:].partition(" ")
        arg = arg.strip()
        match cmd:
            case "q" | "quit" | "exit":
                return ReplOutput(quit=True)
            case "h" | "help" | "?":
                return ReplOutput(stdout=HELP + "\n") if not arg else self._help_on(arg)
            case "reset":
                self.items, self.stmts, self.env, self.types = [], [], {}, {}
                if self._runtime is not None:
                    self._runtime.kernels.clear()
                return ReplOutput(stdout="session cleared\n")
            case "program":
                return ReplOutput(stdout=self.program_text())
            case "vars":
                return self._vars()
            case "type" | "t":
                return self._type_of(arg)
            case "ast":
                return self._ast(arg)
            case "ir" | "llvm" | "ptx":
                return self._emit(cmd, arg or None)
            case "load":
                return self._load(arg)
            case "device":
                if not arg:
                    if self._runtime is not None:
                        return ReplOutput(
                            stdout=f"kernels run on the {_device_words(self._runtime.device)}\n"
                        )
                    return ReplOutput(
                        stdout=f"device: {self.device} (chosen at the first launch)\n"
                    )
                return self.switch_device(arg)
            case "time":
                if not arg:
                    return ReplOutput(
                        stderr="error: `:time` needs a statement, e.g. `:time k(x).sync();`\n",
                        ok=False,
                    )
                return self._entry(line[1:].partition(" ")[2], timed=True)
            case _:
                import difflib

                near = difflib.get_close_matches(cmd, COMMANDS, n=1)
                hint = f" (did you mean `:{near[0]}`?)" if near else ""
                return ReplOutput(
                    stderr=f"error: unknown command `:{cmd}`{hint}; `:help` lists them\n", ok=False
                )

    def _help_on(self, name: str) -> ReplOutput:
        """`:help NAME`: a builtin's signature and doc, or a session item's header."""
        from tilelang.intrinsics.signatures import FUNCTIONS, METHODS, Context

        name = name.strip().lstrip(".")
        if name == "builtins":
            lines = []
            for title, table in (("functions", FUNCTIONS), ("methods", METHODS)):
                for ctx, where in (
                    (Context.KERNEL, "in kernels"),
                    (Context.HOST, "on the host"),
                    (Context.BOTH, "anywhere"),
                ):
                    names = sorted(n for n, sig in table.items() if sig.context is ctx)
                    if names:
                        prefix = "." if title == "methods" else ""
                        lines.append(f"{title} {where}:")
                        lines.append(_wrap(", ".join(prefix + n for n in names), "  "))
            lines.append("`:help NAME` shows one of them.")
            return ReplOutput(stdout="\n".join(lines) + "\n")
        found = []
        for sig in (FUNCTIONS.get(name), METHODS.get(name)):
            if sig is not None:
                found.append(f"{sig.signature}\n    {sig.doc}\n    allowed {sig.context.where}")
        for it in self.items:
            if it.name == name:
                header = it.chunk.text.split("{", 1)[0].split("=", 1)[0].strip()
                found.append(f"{header}\n    defined in this session")
        if name in self.env:
            ty = self.types.get(name) or type(self.env[name]).__name__
            found.append(f"{name}: {_default_literals(ty)}\n    a variable of this session")
        if found:
            return ReplOutput(stdout="\n".join(found) + "\n")
        import difflib

        names = sorted({*FUNCTIONS, *METHODS, *(it.name for it in self.items if it.name)})
        near = difflib.get_close_matches(name, names, n=3)
        hint = f" (did you mean {', '.join(f'`{n}`' for n in near)}?)" if near else ""
        return ReplOutput(
            stderr=f"error: no builtin or item `{name}`{hint}; `:help builtins` lists them\n",
            ok=False,
        )

    def _vars(self) -> ReplOutput:
        from tilelang.runtime.tensor import Tensor

        if not self.env:
            return ReplOutput(stdout="(no variables yet)\n")
        lines = []
        for name, v in self.env.items():
            if isinstance(v, Tensor):
                lines.append(f"{name}: {v.type_name()}")
                continue
            ty = _default_literals(self.types.get(name, type(v).__name__))
            lines.append(f"{name}: {ty} = {_describe(v)}")
        return ReplOutput(stdout="\n".join(lines) + "\n")

    def _type_of(self, text: str) -> ReplOutput:
        from tilelang.syntax import ast

        if not text:
            return ReplOutput(stderr="error: `:type` needs an expression\n", ok=False)
        sf = self._new_file(text)
        tail = _Chunk(text, sf.id, 0)
        checked = self._check(self.items, [*self.stmts, tail], len(self.stmts))
        if checked.errors:
            return self._reject(checked)
        main = checked.root.items[-1]
        last = main.body.stmts[-1]
        ty = checked.program.type_of(last.expr if isinstance(last, ast.ExprStmt) else last)
        return ReplOutput(stdout=f"{text.strip()}: {ty}\n")

    def _ast(self, text: str) -> ReplOutput:
        from tilelang.syntax.parser import parse_repl
        from tilelang.syntax.printer import format_ast

        if not text:
            checked = self._check(self.items, self.stmts)
            return ReplOutput(stdout=format_ast(checked.root, checked.result.sources))
        sf = self._new_file(text)
        sink = DiagnosticSink()
        parsed = parse_repl(sf, sink)
        if parsed is None or sink.has_errors:
            return ReplOutput(stderr=self._render(sink.diagnostics), ok=False)
        nodes = [*parsed.items, *parsed.body.stmts] + (
            [parsed.body.tail] if parsed.body.tail else []
        )
        return ReplOutput(stdout="".join(format_ast(n, self.display) for n in nodes))

    def _emit(self, stage: str, kernel: str | None) -> ReplOutput:
        """`:ir`/`:llvm`/`:ptx`: the instances that ran in this session (as
        lowered for those launches), else those the program's launches fix."""
        kernels = self._kernels_ran(kernel)
        checked = None
        if not kernels:
            checked = self._check(self.items, self.stmts)
            if checked.errors:
                return self._reject(checked)
            from tilelang import driver
            from tilelang.ir.lower import lower_kernel

            known = sorted(checked.program.kernels) if checked.program else []
            if kernel is not None and kernel not in known:
                listing = ", ".join(f"`{k}`" for k in known if not _is_hidden(k)) or "none yet"
                return ReplOutput(
                    stderr=f"error: no kernel `{kernel}` (kernels: {listing})\n", ok=False
                )
            for name, inst in driver.kernel_instances(checked.program):
                if kernel is None or name == kernel:
                    kernels.append(lower_kernel(checked.program, name, inst, None))
        if not kernels:
            what = f"`{kernel}`" if kernel else "a kernel"
            return ReplOutput(
                stdout=f"(launch {what} first: its const generics come from the launch)\n"
            )
        if stage == "ir":
            from tilelang.ir.printer import print_kernel

            return ReplOutput(
                stdout="\n".join(str(print_kernel(k)).rstrip("\n") for k in kernels) + "\n"
            )
        from tilelang import backend

        emit = backend.emit_llvm_diagnostics if stage == "llvm" else backend.emit_ptx_diagnostics
        sink = DiagnosticSink()
        texts = []
        for k in kernels:
            text = emit(k, sink)
            if text is not None:
                texts.append(str(text).rstrip("\n"))
        if sink.has_errors:
            sources = checked.result.sources if checked is not None else SourceMap()
            synth = checked.synth if checked is not None else _Synth()
            return ReplOutput(
                stderr=self._render([self._map(d, sources, synth) for d in sink.diagnostics]),
                ok=False,
            )
        return ReplOutput(stdout="\n".join(texts) + "\n")

    def _kernels_ran(self, kernel: str | None) -> list[Any]:
        if self._runtime is None:
            return []
        out: list[Any] = []
        seen: set[int] = set()
        for key, (kir, _prepared) in self._runtime.kernels.items():
            if (kernel is None or key[0] == kernel) and id(kir) not in seen:
                seen.add(id(kir))
                out.append(kir)
        return out

    def _load(self, path: str) -> ReplOutput:
        from tilelang.syntax import ast
        from tilelang.syntax.parser import parse

        if not path:
            return ReplOutput(stderr="error: `:load` needs a file name\n", ok=False)
        path = os.path.expanduser(path)
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            return ReplOutput(stderr=f"error: couldn't read `{path}`: {e.strerror}\n", ok=False)
        sf = self.display.add(path, text)
        sink = DiagnosticSink()
        module = parse(sf, sink)
        if sink.has_errors:
            return ReplOutput(stderr=self._render(sink.diagnostics), ok=False)
        new = [
            _item_of(sf, it)
            for it in module.items
            if not (isinstance(it, ast.FnDecl) and it.name.name == "main")
        ]
        names = {it.name for it in new if it.name is not None}
        old_items, old_stmts, redefined = self._redefine(names)
        checked = self._check(old_items + new, old_stmts)
        if checked.errors:
            return self._reject(checked)
        self.items, self.stmts = old_items + new, old_stmts
        if redefined:
            self._rekey(redefined)
        return ReplOutput(
            stdout=f"loaded {len(new)} item{'s' if len(new) != 1 else ''} from {path}\n"
        )

    # ---------------------------------------------------------------- completion
    def completions(self, text: str) -> list[tuple[str, str]]:
        """Completions for the text before the cursor: (word, what it is),
        sorted; `word` replaces the identifier the text ends with."""
        from tilelang.highlight import BUILTIN_TYPES, DTYPES, KEYWORDS
        from tilelang.intrinsics.signatures import FUNCTIONS, METHODS

        line = text.rsplit("\n", 1)[-1]
        if text.lstrip().startswith(":") and "\n" not in text:
            head, space, rest = text.lstrip()[1:].partition(" ")
            if not space:
                return [(c, "command") for c in COMMANDS if c.startswith(head)]
            if head == "load":
                return _complete_path(rest)
            if head == "help":
                names = {*FUNCTIONS, *METHODS, "builtins"}
                names |= {it.name for it in self.items if it.name and not _is_hidden(it.name)}
                return [(n, "help") for n in sorted(names) if n.startswith(rest.strip())]
            if head == "device":
                return [(d, "device") for d in ("cpu", "gpu", "auto") if d.startswith(rest.strip())]
            if head in ("ir", "llvm", "ptx"):
                kernels = [
                    it.name
                    for it in self.items
                    if it.kind == "kernel" and it.name and not _is_hidden(it.name)
                ]
                return [(k, "kernel") for k in sorted(kernels) if k.startswith(rest.strip())]
            line = rest
        m = re.search(r"([A-Za-z_][A-Za-z0-9_]*)?$", line)
        word = (m.group(1) if m else None) or ""
        before = line[: len(line) - len(word)]
        found: dict[str, str] = {}
        if before.endswith("."):
            for name, sig in METHODS.items():
                found[name] = f"method: {sig.signature}"
        elif before.endswith("::"):
            return [(w, what) for w, what in _module_names(before) if w.startswith(word)]
        else:
            for it in self.items:
                if it.name is not None and not _is_hidden(it.name):
                    found[it.name] = it.kind
            for name in self.env:
                found[name] = f"variable: {self.types.get(name, '')}".rstrip(": ")
            for name, sig in FUNCTIONS.items():
                found.setdefault(name, f"builtin: {sig.signature}")
            for kw in KEYWORDS:
                found.setdefault(kw, "keyword")
            for ty in DTYPES + BUILTIN_TYPES:
                found.setdefault(ty, "type")
        return sorted((w, what) for w, what in found.items() if w.startswith(word) and w != word)


# ---------------------------------------------------------------- helpers
def _chunk(sf: SourceFile, span: Span) -> _Chunk:
    return _Chunk(sf.text[span.start : span.end], sf.id, span.start)


def _item_name(item: Any) -> str | None:
    """The name an item defines: a `fn`'s, a `const`'s, or what a `use` of one
    item imports (`use std::nn::softmax;`); None for other `use`s."""
    from tilelang.syntax import ast

    if isinstance(item, (ast.FnDecl, ast.ConstDecl)):
        return item.name.name
    if isinstance(item, ast.UseDecl) and item.path and item.names is None and not item.glob:
        return item.path[-1].name
    return None


def _name_span(item: Any) -> Span:
    from tilelang.syntax import ast

    if isinstance(item, ast.UseDecl):
        return item.path[-1].span if item.path else item.span
    return item.name.span  # type: ignore[no-any-return]


def _item_of(sf: SourceFile, item: Any) -> _Item:
    from tilelang.syntax import ast

    kind = "use"
    if isinstance(item, ast.FnDecl):
        kind = "kernel" if item.is_kernel else "fn"
    elif isinstance(item, ast.ConstDecl):
        kind = "const"
    return _Item(_chunk(sf, item.span), _item_name(item), kind)


def _apply_edits(chunk: _Chunk, edits: list[tuple[int, int, str]]) -> _Chunk:
    """`chunk` with text[s:e] replaced by each name (sorted, disjoint edits);
    `origin` maps the new offsets back to the entry's."""
    old_origin = chunk.origin or tuple(range(len(chunk.text) + 1))
    text: list[str] = []
    origin: list[int] = []
    pos = 0
    for s, e, name in edits:
        if s < pos:
            continue  # overlapping (cannot happen for identifiers): keep the first
        text.append(chunk.text[pos:s])
        origin.extend(old_origin[pos:s])
        text.append(name)
        origin.extend([old_origin[s]] * len(name))
        pos = e
    text.append(chunk.text[pos:])
    origin.extend(old_origin[pos:])
    return _Chunk("".join(text), chunk.file, chunk.base, tuple(origin))


def _walk(node: Any) -> Iterator[Any]:
    """`node` and every AST node below it (the shared walker)."""
    from tilelang.syntax.ast import walk

    return walk(node)


def _in_file(d: Diagnostic, file: int, session: ReplSession, checked: _Checked) -> bool:
    """Is `d`'s primary label inside entry `file`?"""
    mapped = session._map(d, checked.result.sources, checked.synth)
    span = mapped.primary_span
    return span is not None and span.file == file


def _handle_names(errors: list[Diagnostic]) -> list[str]:
    """The handle names in "launch handle `h` is dropped ..." messages."""
    names = []
    for d in errors:
        m = re.search(r"`([^`]+)`", d.message)
        names.append(m.group(1) if m else "a launch")
    return names


def _wait_new_handles(env: dict[str, Any], before: dict[str, Any]) -> None:
    """After a failed entry: wait for the launches it started. Its bindings
    are rolled back, so the checker no longer knows those launches are in
    flight; they must be over before a later entry touches their tensors."""
    import contextlib

    from tilelang.diagnostics.model import TileError
    from tilelang.runtime.launch import Handle

    kept = {id(v) for v in before.values()}
    for v in env.values():
        if isinstance(v, Handle) and not v.done and id(v) not in kept:
            # The entry already failed; its first error is the one shown.
            with contextlib.suppress(TileError):
                v.wait()


def _move_tensors(values: Any, old: Any, new: Any) -> int:
    """Move every tensor reachable from `values` from device `old` to `new`,
    in place (so partitions, operations and graphs that hold it follow)."""
    import numpy as np

    from tilelang.runtime.launch import Graph, Handle, Operation
    from tilelang.runtime.tensor import Partition, Tensor

    seen: set[int] = set()
    moved = 0

    def visit(v: Any) -> None:
        nonlocal moved
        if id(v) in seen:
            return
        seen.add(id(v))
        match v:
            case Tensor():
                if v.device is old:
                    host = np.array(v.numpy(), copy=True)
                    v.storage = new.upload(host)
                    v.device = new
                    moved += 1
            case Partition():
                visit(v.tensor)
            case Operation():
                for a in v.bound.args:
                    visit(a)
            case Handle():
                visit(v.op)
            case Graph():
                v._captured = None  # a captured CUDA graph belongs to the old device
                for op in v.ops:
                    visit(op)
            case list() | tuple():
                for x in v:
                    visit(x)
            case _:
                pass

    for v in values:
        visit(v)
    return moved


def _describe(value: Any) -> str:
    """A host value as the REPL shows it (operations and handles in words)."""
    from tilelang.runtime.builtins import format_value
    from tilelang.runtime.launch import Graph, Handle, Operation

    match value:
        case Operation():
            return f"`{value.name}` not run yet (`.sync()` runs it, `.launch()` starts it)"
        case Handle():
            state = "done" if value.done else "in flight until `.wait()`"
            return f"a launch of `{value.op.name}`, {state}"
        case Graph():
            n = len(value.ops)
            return f"{n} operation{'s' if n != 1 else ''}, replayed {value.replays} times"
        case _:
            return format_value(value)


def _wrap(text: str, indent: str) -> str:
    import textwrap

    return textwrap.fill(text, width=79, initial_indent=indent, subsequent_indent=indent)


def _is_hidden(name: str) -> bool:
    """A replaced item's hidden name (`sq__1`, see `_redefine`)."""
    return re.fullmatch(r".+__[0-9]+", name) is not None


def _default_literals(ty: str) -> str:
    """An untyped literal's type as the value has it (BRIEF: `i32`, `f32`)."""
    return ty.replace("{integer}", "i32").replace("{float}", "f32")


def _device_words(dev: Any) -> str:
    return "GPU" if getattr(dev, "kind", "") == "gpu" else "CPU (the NumPy interpreter)"


def _fmt_seconds(s: float) -> str:
    if s < 1e-3:
        return f"{s * 1e6:.0f} µs"
    if s < 1:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.3f} s"


def _ice_text(e: BaseException) -> str:
    return (
        f"error: internal compiler error: {e}\n"
        "note: this is a bug in tilec, not in your input; please report it with the session "
        "and the trace below (the session goes on, without this entry)\n\n"
        + "".join(traceback.format_exception(e))
    )


def _module_names(before: str) -> list[tuple[str, str]]:
    """Completions after `std::` (the modules) or `std::nn::` (its items)."""
    from tilelang.resources import stdlib_dir

    m = re.search(r"((?:[A-Za-z_][A-Za-z0-9_]*::)+)$", before)
    if m is None:
        return []
    segments = m.group(1).split("::")[:-1]
    if segments[0] != "std":
        return []
    node: Any = stdlib_dir()
    for seg in segments:
        node = node.joinpath(seg)
    if len(segments) == 1:
        return sorted((p.name[:-5], "module") for p in node.iterdir() if p.name.endswith(".tile"))
    try:
        text = node.parent.joinpath(segments[-1] + ".tile").read_text(encoding="utf-8")
    except (OSError, ValueError):
        return []
    items = re.findall(r"^(kernel fn|fn|const)\s+([A-Za-z_][A-Za-z0-9_]*)", text, re.MULTILINE)
    return sorted((name, kind) for kind, name in items)


def _complete_path(prefix: str) -> list[tuple[str, str]]:
    import glob

    prefix = prefix.strip()
    out = []
    for p in sorted(glob.glob(os.path.expanduser(prefix) + "*"))[:200]:
        if os.path.isdir(p):
            out.append((p + "/", "directory"))
        elif p.endswith(".tile"):
            out.append((p, "file"))
    return out


# ---------------------------------------------------------------- terminal front end
def _is_incomplete(text: str) -> bool:
    if text.strip().startswith(":"):
        return False
    try:
        from tilelang.syntax.parser import is_incomplete
    except ImportError:
        return False
    return bool(is_incomplete(text))


def _bracket_open(text: str) -> bool:
    """Does `text` leave a bracket, string or comment open?"""
    from tilelang.syntax.lexical import scan

    problems = scan(text).problems
    return bool(problems) and problems[0].kind in (
        "unclosed",
        "unterminated-string",
        "unterminated-comment",
    )


def _feed_stream(session: ReplSession, stream: Any) -> int:
    """Non-interactive: feed each complete entry of `stream`; status 1 if any
    failed. A blank line submits an unfinished entry, as at the prompt, except
    inside an open bracket (scripts have blank lines inside function bodies)."""
    status = 0
    buf = ""
    for line in stream:
        buf += line
        if buf.strip() and _is_incomplete(buf) and (line.strip() or _bracket_open(buf)):
            continue
        result = session.feed(buf)
        buf = ""
        _show(result)
        if not result.ok:
            status = 1
        if result.quit:
            return status
    if buf.strip():
        result = session.feed(buf)
        _show(result)
        status = status or (0 if result.ok else 1)
    return status


def _show(result: ReplOutput) -> None:
    if result.stdout:
        sys.stdout.write(result.stdout)
        sys.stdout.flush()
    if result.stderr:
        sys.stderr.write(result.stderr)
        sys.stderr.flush()


def _make_completer(session: ReplSession) -> Any:
    from prompt_toolkit.completion import Completer, Completion

    class TileCompleter(Completer):
        def get_completions(self, document: Any, complete_event: Any) -> Iterator[Any]:
            text = document.text_before_cursor
            try:
                found = session.completions(text)
            except Exception:
                return
            if text.lstrip().startswith(":load ") and "\n" not in text:
                start = -len(text.lstrip()[len(":load ") :].strip())
            else:
                m = re.search(r"[A-Za-z_][A-Za-z0-9_]*$", text)
                start = -len(m.group(0)) if m else 0
            for word, what in found:
                yield Completion(word, start_position=start, display_meta=what)

    return TileCompleter()


def main(device: str = "cpu") -> int:
    """Run the REPL on the terminal (or over piped stdin); the exit status."""
    from tilelang.diagnostics import render
    from tilelang.run import HOST_RECURSION_LIMIT

    sys.setrecursionlimit(max(sys.getrecursionlimit(), HOST_RECURSION_LIMIT))
    color = render.use_color(render.settings().color, sys.stderr)
    session = ReplSession(device=device, color=color)
    # Make the device now: `--device gpu` without a GPU fails here, not at
    # the first launch, and the banner can say where kernels run.
    started = session.switch_device(device)
    if not started.ok:
        _show(started)
        return 3
    if not sys.stdin.isatty():
        return _feed_stream(session, sys.stdin)

    from prompt_toolkit import PromptSession
    from prompt_toolkit.auto_suggest import AutoSuggestFromHistory
    from prompt_toolkit.history import FileHistory, InMemoryHistory
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.lexers import PygmentsLexer

    bindings = KeyBindings()

    @bindings.add("enter")
    def _enter(event: Any) -> None:
        buf = event.current_buffer
        text = buf.document.text
        # Accept when the entry is complete (or ends in a blank line);
        # otherwise continue on a new, indented line.
        blank_last = "\n" in text and not text.rsplit("\n", 1)[-1].strip()
        if not text.strip() or blank_last or not _is_incomplete(text):
            buf.validate_and_handle()
        else:
            last = text.rsplit("\n", 1)[-1]
            indent = len(last) - len(last.lstrip())
            extra = 4 if text.rstrip().endswith(("{", "(", "[")) else 0
            buf.insert_text("\n" + " " * (indent + extra))

    @bindings.add("}")
    def _close(event: Any) -> None:
        # A `}` typed on an indentation-only line closes a block: dedent it.
        buf = event.current_buffer
        line = buf.document.current_line_before_cursor
        if line and not line.strip() and len(line) >= 4:
            buf.delete_before_cursor(4)
        buf.insert_text("}")

    history_path = os.environ.get("TILEC_HISTORY", os.path.expanduser("~/.tilec_history"))
    try:
        history: Any = FileHistory(history_path)
    except OSError:
        history = InMemoryHistory()
    lexer = None
    try:
        from tilelang.highlight import TileLexer

        lexer = PygmentsLexer(TileLexer)
    except ImportError:
        pass
    prompt: PromptSession[str] = PromptSession(
        history=history,
        auto_suggest=AutoSuggestFromHistory(),
        lexer=lexer,
        completer=_make_completer(session),
        complete_while_typing=False,
        key_bindings=bindings,
        multiline=True,
        prompt_continuation=lambda width, line, wrap: "...".ljust(width),
    )
    where = _device_words(session._runtime.device) if session._runtime is not None else "CPU"
    sys.stdout.write(f"Tile REPL, kernels run on the {where}: `:help` for help, Ctrl-D to leave.\n")
    while True:
        try:
            text = prompt.prompt(">>> ")
        except KeyboardInterrupt:
            continue
        except EOFError:
            return 0
        result = session.feed(text)
        _show(result)
        if result.quit:
            return 0
