"""One REPL session: its state, and how an entry is checked, run and committed.

`SessionCore.entry` parses an entry, replaces redefined items (`redefine`,
`rekey`), checks the whole session with it (`synth.check_session`), runs only
its new statements in the host evaluator against the session's variables,
and commits them, or rolls its bindings back when it fails. One device and
one `Runtime` serve the whole session (`switch_device` moves the tensors
when the device changes). The driver, the host runtime and the backend are
imported per entry, so `tilec repl` starts fast; nothing here prints (the
results are `ReplOutput`s).
"""

from __future__ import annotations

import dataclasses
import io
import re
import time
from dataclasses import dataclass
from typing import Any

from tilelang.diagnostics.codes.names import DUPLICATE_DEFINITION, UNKNOWN_FUNCTION
from tilelang.diagnostics.codes.warnings import UNUSED_OPERATION, UNUSED_VARIABLE
from tilelang.diagnostics.model import Diagnostic, DiagnosticSink
from tilelang.repl.synth import (
    Checked,
    Chunk,
    Item,
    Synth,
    apply_edits,
    check_session,
    chunk_of,
    item_name,
    item_of,
    map_diagnostic,
    name_span,
    synthesize,
    walk_ast,
)
from tilelang.repl.values import (
    device_words,
    fmt_seconds,
    handle_names,
    ice_text,
    move_tensors,
    reachable,
    show_value,
    wait_new_handles,
)
from tilelang.source import SourceFile, SourceMap


@dataclass(slots=True)
class ReplOutput:
    """What one entry produced: program stdout (and the shown value),
    rendered diagnostics or notes, and whether the entry was accepted."""

    stdout: str = ""
    stderr: str = ""
    ok: bool = True
    quit: bool = False


class _Forward(io.TextIOBase):
    """The device's `print` sink: forwards to the current entry's buffer."""

    def __init__(self, session: SessionCore) -> None:
        self.session = session

    def write(self, s: str) -> int:
        return self.session._out.write(s)


class SessionCore:
    """The state of one REPL session and the way an entry is checked and run
    (see `tilelang.repl`); `ReplSession` adds the front door."""

    def __init__(self, device: str = "cpu", color: bool = False) -> None:
        self.device = device  # the `:device` choice: cpu, gpu or auto
        self.color = color
        self.display = SourceMap()  # entries as `<repl-N>` files, for rendering
        self.items: list[Item] = []
        self.stmts: list[Chunk] = []
        self.env: dict[str, Any] = {}  # variable name -> value, after the last entry
        self.types: dict[str, str] = {}  # variable name -> its type, for `:vars`
        self.entries = 0
        self.renames = 0
        self.hidden: dict[str, str] = {}  # a replaced item's hidden name -> the name the user gave it
        self._out: io.StringIO = io.StringIO()
        self._runtime: Any = None  # runtime.launch.Runtime, made on first use
        self.last_time: float | None = None  # seconds the last entry ran

    def new_file(self, text: str) -> SourceFile:
        self.entries += 1
        return self.display.add(f"<repl-{self.entries}>", text)

    def entry(self, text: str, timed: bool = False) -> ReplOutput:
        from tilelang.syntax import ast
        from tilelang.syntax.parser import completed_by_semicolon, parse_repl

        if completed_by_semicolon(text):  # `let x = 5` at the prompt: the `;` it lacks
            text = text.rstrip() + ";\n"
        sf = self.new_file(text)
        sink = DiagnosticSink()
        parsed = parse_repl(sf, sink)
        if parsed is None or sink.has_errors:
            return ReplOutput(stderr=self.render(sink.diagnostics), ok=False)
        for item in parsed.items:
            if isinstance(item, ast.FnDecl) and item.name.name == "main":
                d = (
                    Diagnostic.error(DUPLICATE_DEFINITION, "the REPL defines `main` itself")
                    .primary(item.name.span, "`main` defined here")
                    .with_help("write the statements of `main` directly at the prompt")
                )
                return ReplOutput(stderr=self.render([d]), ok=False)
        call = next((n for n in ast.walk((*parsed.items, parsed.body)) if isinstance(n, ast.Call)
                     and isinstance(n.callee, ast.Name) and n.callee.ident.name == "main"), None)
        if call is not None:  # the session's own `main` (the statements entered): it called itself, E0719
            d = (
                Diagnostic.error(UNKNOWN_FUNCTION, "the REPL has no `main` to call")
                .primary(call.callee.span, "not a function here")
                .note("the statements entered at the prompt are the session's `main`, and `:load` leaves a "
                      "file's `main` out")
                .with_help("enter the statements of the file's `main` at the prompt (or put them in a `fn` of "
                           "their own in the file, `:load` it and call that), or run the file: `tilec run FILE`")
            )
            return ReplOutput(stderr=self.render([d]), ok=False)
        new_items = [item_of(sf, it) for it in parsed.items]
        names = [it.name for it in new_items if it.name is not None]
        dup = next((n for n in names if names.count(n) > 1), None)
        if dup is not None:
            first, second = [it for it in parsed.items if item_name(it) == dup][:2]
            d = (
                Diagnostic.error(
                    DUPLICATE_DEFINITION, f"the name `{dup}` is defined twice in this entry"
                )
                .primary(name_span(second), f"`{dup}` redefined here")
                .secondary(name_span(first), "first defined here")
                .with_help("keep one of them; to replace a definition, enter it on its own")
            )
            return ReplOutput(stderr=self.render([d]), ok=False)
        old_items, old_stmts, redefined = self.redefine(set(names))
        items = old_items + new_items
        new_stmts = [chunk_of(sf, st.span) for st in parsed.body.stmts]
        tail = parsed.body.tail
        tail_chunk = chunk_of(sf, tail.span) if tail is not None else None
        stmts = old_stmts + new_stmts + ([tail_chunk] if tail_chunk is not None else [])
        checked = check_session(items, stmts, len(old_stmts), shown_last=tail_chunk is not None)
        if checked.errors:
            return self.reject(checked)
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
            self.rekey(redefined)
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
            in_flight = set(runtime.inflight.handles)  # launches of earlier entries
            try:
                value = ev.run_statements(nodes, env)
                ran = True
            except TileError as e:
                mapped = [
                    self.map_back(d, checked.result.sources, checked.synth) for d in e.diagnostics
                ]
                return ReplOutput(
                    stdout=self._out.getvalue(), stderr=self.render(mapped), ok=False
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
                return ReplOutput(stdout=self._out.getvalue(), stderr=ice_text(e), ok=False)
            finally:
                elapsed = time.perf_counter() - start
                if not ran:  # the entry is dropped: undo what it changed in the session
                    wait_new_handles(runtime, in_flight)
                    self.rekey({v: k for k, v in redefined.items()})
            compiled = len(runtime.kernels) - compiled
        else:
            compiled = 0
        # Accepted: commit.
        self.items, self.stmts, self.env = items, stmts, env
        self._record_types(checked, main)
        self.last_time = elapsed
        out = self._out.getvalue()
        if show_ty is not None:
            out += show_value(value, self.unhide(show_ty), self.color)
        err = self.warnings_of(checked, sf.id)
        fresh = [d for d in checked.in_flight if _in_file(d, sf.id, self, checked)]
        if fresh:
            handles = ", ".join(f"`{n}`" for n in handle_names(fresh))
            err += f"note: {handles} in flight: its tensors stay borrowed until `.wait()`\n"
        if timed:
            note = " (includes compiling the kernel it launched first)" if compiled else ""
            out += f"time: {fmt_seconds(elapsed)}, one run, wall clock{note}\n"
        return ReplOutput(stdout=out, stderr=err)

    def warnings_of(self, checked: Checked, file: int) -> str:
        """The rendered warnings of the entry (or `:load`ed file) `file`, as
        `tilec check` prints a file's: each is said once, by the entry it is
        in (the session checks every earlier entry again). Not an unused
        variable or operation bound at the prompt: a later entry may read it."""
        from tilelang.syntax import ast

        main = checked.root.items[-1] if checked.root is not None and checked.root.items else None
        top = [s.pattern.span for s in main.body.stmts if isinstance(s, ast.Let)] \
            if isinstance(main, ast.FnDecl) else []
        shown = []
        for d in checked.warnings:
            span = d.primary_span
            if d.code in (UNUSED_VARIABLE, UNUSED_OPERATION) and span is not None and any(
                    p.file == span.file and p.start <= span.start and span.end <= p.end for p in top):
                continue
            if _in_file(d, file, self, checked):
                shown.append(self.map_back(d, checked.result.sources, checked.synth))
        return self.render(shown) if shown else ""

    def reject(self, checked: Checked) -> ReplOutput:
        mapped = [self.map_back(d, checked.result.sources, checked.synth) for d in checked.errors]
        return ReplOutput(stderr=self.render(mapped), ok=False)

    def _record_types(self, checked: Checked, main: Any) -> None:
        """Remember the type of each top-level `let` binding (for `:vars`)."""
        from tilelang.syntax import ast

        for s in main.body.stmts:
            if isinstance(s, ast.Let):
                for node in walk_ast(s.pattern):
                    if isinstance(node, ast.NamePat) and node.name.name in self.env:
                        sym = checked.program.symbol_of(node)
                        ty = getattr(sym, "ty", None) or checked.program.type_of(node)
                        if ty is not None:
                            self.types[node.name.name] = self.unhide(str(ty))

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
        # Every launch in flight, not only those whose handle has a name: one
        # whose handle was shadowed still writes its tensors, which must not
        # be copied to another device meanwhile.
        flight = self._runtime.inflight.pending() if self._runtime is not None else []
        if flight:
            named = {id(v): n for n, v in self.env.items() if isinstance(v, Handle)}
            names = ", ".join(
                f"`{named[id(h)]}`" if id(h) in named else f"a launch of `{h.op.name}`"
                for h in flight
            )
            help_ = (
                "call `.wait()` on it first"
                if all(id(h) in named for h in flight)
                else "wait for the launches first (`:reset` waits for every one)"
            )
            return ReplOutput(
                stderr=f"error: {names} still in flight\nhelp: {help_}\n", ok=False
            )
        try:
            dev = run_mod.make_device(choice, _Forward(self))  # type: ignore[arg-type]
        except run_mod.GpuUnavailable as e:
            if self._runtime is not None:
                stay = f"note: the session stays on the {device_words(self._runtime.device)}\n"
            elif self.device != choice:
                stay = f"note: the session stays on `{self.device}`\n"
            else:  # starting with `--device gpu`
                stay = "help: start it with `--device cpu` (`--device auto` falls back to it)\n"
            return ReplOutput(stderr=f"error: {e}\n{stay}", ok=False)
        self.device = choice
        if self._runtime is not None and self._runtime.device is not dev:
            old = self._runtime.device
            moved = move_tensors(self.env.values(), old, dev)
            self._runtime.device = dev
            self._runtime.kernels.clear()
            msg = f"kernels now run on the {device_words(dev)}"
            if moved:
                msg += f" ({moved} tensor{'s' if moved != 1 else ''} moved there)"
            return ReplOutput(stdout=msg + "\n")
        if self._runtime is None:
            from tilelang.runtime.launch import Runtime

            self._runtime = Runtime(dev, None)
        return ReplOutput(stdout=f"kernels now run on the {device_words(dev)}\n")

    def program_text(self) -> str:
        return synthesize(self.items, self.stmts).text

    def redefine(self, names: set[str]) -> tuple[list[Item], list[Chunk], dict[str, str]]:
        """The session's items and statements with the items named in `names`
        kept under hidden names (see the module docstring), and those names
        (old name -> hidden name)."""
        from tilelang.syntax import ast

        # A `use` of a replaced name is dropped; a `fn` or `const` is renamed.
        imports = [it for it in self.items if it.name in names and it.kind == "use"]
        kept = [it for it in self.items if not any(it is u for u in imports)]
        old = [it for it in kept if it.name in names]
        # A name defined now is the user's, even where it was a hidden one (`sq__1` of their own, or of an entry
        # that failed): what it stood for goes with the item hidden again.
        origin = {n: self.hidden.pop(n) for n in names if n in self.hidden}
        if not old:
            return kept, list(self.stmts), {}
        checked = check_session(self.items, self.stmts)
        program, root = checked.program, checked.root
        hidden: dict[str, str] = {}
        taken = {it.name for it in self.items} | names
        for it in old:
            assert it.name is not None
            self.renames += 1
            while f"{it.name}__{self.renames}" in taken:  # the user's own `sq__1`
                self.renames += 1
            hidden[it.name] = f"{it.name}__{self.renames}"
            self.hidden[hidden[it.name]] = origin.get(it.name, it.name)  # what the user calls it
        consts = {it.name for it in old if it.kind == "const"}
        old_chunks = {id(it.chunk) for it in old}
        # Offsets (in the synthesised text) of every reference to rename.
        edits: list[tuple[int, int, str]] = []
        if root is not None and program is not None:
            for node in walk_ast(root):
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

        def rewrite(chunk: Chunk, rename_here: bool) -> Chunk:
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
            return apply_edits(chunk, mine) if mine else chunk

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

    def rekey(self, names: dict[str, str]) -> None:
        """Items were renamed (`names`: old -> new): operations, handles and
        graphs made before keep naming the kernel they were made with, and
        compiled kernels are dropped (a kernel inlines the functions it calls,
        which may be the ones redefined)."""
        from tilelang.runtime.launch import Operation

        for v in reachable(self.env.values()):
            if isinstance(v, Operation) and v.kernel_key in names:
                v.kernel_key = names[v.kernel_key]
        if self._runtime is not None:
            self._runtime.kernels.clear()

    def map_back(self, diag: Diagnostic, sources: SourceMap, synth: Synth) -> Diagnostic:
        """`diag` with its spans moved back into the entries (`synth.map_diagnostic`)."""
        return map_diagnostic(self.display, diag, sources, synth)

    def unhide(self, text: str) -> str:
        """`text` with each replaced item's hidden name (`sq__1`) written as the user's name (`sq`)."""
        if not self.hidden:
            return text
        names = "|".join(re.escape(n) for n in sorted(self.hidden, key=len, reverse=True))
        return re.sub(rf"(?<![A-Za-z0-9_])({names})(?![A-Za-z0-9_])", lambda m: self.hidden[m.group(1)], text)

    def render(self, diags: list[Diagnostic]) -> str:
        from tilelang.diagnostics.model import Label
        from tilelang.diagnostics.render import render_human

        shown = [
            dataclasses.replace(
                d,
                message=self.unhide(d.message),
                labels=tuple(Label(lb.span, self.unhide(lb.message), lb.primary) for lb in d.labels),
                notes=tuple(map(self.unhide, d.notes)),
                help=tuple(map(self.unhide, d.help)),
            )
            for d in diags
        ]
        return render_human(shown, self.display, color=self.color, footer=False)


def _in_file(d: Diagnostic, file: int, session: SessionCore, checked: Checked) -> bool:
    """Is `d`'s primary label inside entry `file`?"""
    mapped = session.map_back(d, checked.result.sources, checked.synth)
    span = mapped.primary_span
    return span is not None and span.file == file
