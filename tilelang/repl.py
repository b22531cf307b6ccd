"""`tilec repl`: an interactive Tile session.

Two layers, so the core is testable without a terminal:

- `ReplSession.feed(text) -> ReplOutput` holds the session and calls the driver.
- `main()` wires prompt_toolkit to it (multi-line input, history, Tile syntax
  highlighting, meta-commands); when stdin is not a terminal it reads the
  whole input and feeds it entry by entry, so `echo '1 + 2' | tilec repl` works.

How a session runs: an entry holds items (`fn`, `kernel fn`, `const`, `use`)
and host statements, optionally ending in an expression whose value is shown.
The session is one synthesised program: every accepted item, then a
`fn main()` holding every accepted statement in order. Each entry is checked
and run as part of that whole program (so the type and ownership checkers see
everything, exactly as in a file), and only the output the new entry adds is
shown. Earlier statements are therefore re-run on each entry, like "restart and
run all": programs are deterministic (`rand` is seeded), so this is
unobservable except in time. An entry that fails to check or run is not kept.

Diagnostics point into the entry that caused them: each entry is registered in
the display `SourceMap` as `<repl-N>`, and spans into the synthesised program
are mapped back to it.

Invariant: prompt_toolkit is imported only by `main()`; the core imports the
driver and the host runtime lazily, per entry.
"""

from __future__ import annotations

import dataclasses
import io
import os
import sys
from dataclasses import dataclass, field
from typing import Any

from tilelang.diagnostics.model import Diagnostic, DiagnosticSink, Label
from tilelang.source import SourceFile, SourceMap, Span

HELP = """\
Enter items (fn, kernel fn, const, use) and host statements; an expression
without a trailing `;` shows its value. Input continues while brackets are open.
Meta-commands:
  :help               this text
  :type EXPR          the type of an expression
  :ast                the AST of the session's program
  :ir [KERNEL]        Tile IR of the kernels launched so far
  :llvm [KERNEL]      LLVM IR            :ptx [KERNEL]   PTX
  :load FILE          add the items of a .tile file (not its `main`)
  :program            the session as one program
  :reset              forget everything
  :quit               leave (also Ctrl-D)"""


@dataclass(slots=True)
class ReplOutput:
    """What one entry produced: program stdout, rendered diagnostics (or a
    meta-command's text) and whether the entry was accepted."""

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


@dataclass(slots=True)
class _Synth:
    text: str
    # (start, end, chunk) for each chunk, in the synthesised text
    where: list[tuple[int, int, _Chunk]] = field(default_factory=list)


class ReplSession:
    """The state of one REPL session (see the module docstring)."""

    def __init__(self, device: str = "cpu", color: bool = False) -> None:
        self.device = device
        self.color = color
        self.display = SourceMap()  # entries as `<repl-N>` files, for rendering
        self.items: list[_Chunk] = []
        self.stmts: list[_Chunk] = []
        self.shown = 0  # characters of program output already shown
        self.entries = 0

    # ---------------------------------------------------------------- entry
    def feed(self, text: str) -> ReplOutput:
        stripped = text.strip()
        if not stripped:
            return ReplOutput()
        if stripped.startswith(":"):
            return self._meta(stripped)
        return self._entry(text)

    def _new_file(self, text: str) -> SourceFile:
        self.entries += 1
        return self.display.add(f"<repl-{self.entries}>", text)

    def _entry(self, text: str) -> ReplOutput:
        from tilelang.syntax.parser import parse_repl

        sf = self._new_file(text)
        sink = DiagnosticSink()
        parsed = parse_repl(sf, sink)
        if parsed is None or sink.has_errors:
            return ReplOutput(stderr=self._render(sink.diagnostics, self.display), ok=False)
        from tilelang.syntax import ast

        for item in parsed.items:
            if isinstance(item, ast.FnDecl) and item.name.name == "main":
                span = item.name.span
                d = (
                    Diagnostic.error("E0106", "the REPL defines `main` itself")
                    .primary(span, "`main` defined here")
                    .with_help("write the statements of `main` directly at the prompt")
                )
                return ReplOutput(stderr=self._render([d], self.display), ok=False)
        new_items = [self._chunk(sf, it.span) for it in parsed.items]
        new_stmts = [self._chunk(sf, st.span) for st in parsed.body.stmts]
        tail = parsed.body.tail
        tail_chunk = self._chunk(sf, tail.span) if tail is not None else None

        show_tail = False
        if tail_chunk is not None:
            # Is the tail a value worth showing? Ask the type checker.
            synth = self._synth(self.items + new_items, self.stmts + new_stmts, tail_chunk, False)
            result = self._check(synth)
            if not result.ok:
                return self._reject(result, synth, sf)
            show_tail = self._tail_has_value(result)
        items, stmts = self.items + new_items, self.stmts + new_stmts
        if tail_chunk is not None and not show_tail:
            stmts.append(tail_chunk)  # a unit-valued tail (`op.sync()`) is a statement
        session = self._synth(items, stmts, None, False)
        checked = self._check(session)
        if not checked.ok:
            errors = [d for d in checked.diagnostics if d.severity.value == "error"]
            if errors and all(d.code == _HANDLE_DROPPED for d in errors) and not show_tail:
                # `let h = k(...).launch();` at the prompt: the handle is
                # waited for in a later entry. Keep the entry, run nothing
                # until the session checks clean again.
                self.items, self.stmts = items, stmts
                names = ", ".join(f"`{n}`" for n in _handle_names(errors))
                return ReplOutput(
                    stderr=f"note: {names} in flight: the session runs again once it is waited for\n"
                )
            return self._reject(checked, session, sf)
        # The session's output is deterministic, so the first `shown`
        # characters of a replay are what earlier entries already showed.
        status, out, err = self._run(session)
        if status == 0 and show_tail:
            # The value is printed once, after the replay, and not kept.
            session_len = len(out)
            status, out, err = self._run(self._synth(items, stmts, tail_chunk, True))
        else:
            session_len = len(out)
        fresh = out[self.shown :]
        if status != 0:
            return ReplOutput(stdout=fresh, stderr=err, ok=False)
        self.items, self.stmts, self.shown = items, stmts, session_len
        return ReplOutput(stdout=fresh)

    def _reject(self, result: Any, synth: _Synth, entry: SourceFile) -> ReplOutput:
        """The entry does not check: its diagnostics, without the reminders
        about handles that earlier entries left in flight (already noted)."""
        mapped = [self._map(d, result.sources, synth) for d in result.diagnostics]
        shown = [
            d
            for d in mapped
            if d.code != _HANDLE_DROPPED
            or (d.primary_span is not None and d.primary_span.file == entry.id)
        ]
        return ReplOutput(stderr=self._render(shown, self.display), ok=False)

    @staticmethod
    def _chunk(sf: SourceFile, span: Span) -> _Chunk:
        return _Chunk(sf.text[span.start : span.end], sf.id, span.start)

    # ---------------------------------------------------------------- program
    def _synth(
        self, items: list[_Chunk], stmts: list[_Chunk], tail: _Chunk | None, show: bool
    ) -> _Synth:
        out = _Synth("")
        parts: list[str] = []
        pos = 0

        def put(text: str, chunk: _Chunk | None = None) -> None:
            nonlocal pos
            if chunk is not None:
                out.where.append((pos, pos + len(text), chunk))
            parts.append(text)
            pos += len(text)

        for it in items:
            put(it.text, it)
            put("\n")
        put("fn main() {\n")
        for st in stmts:
            put("    ")
            put(st.text, st)
            put("\n" if st.text.rstrip().endswith((";", "}")) else ";\n")
        if tail is not None:
            if show:
                put("    print(")
                put(tail.text, tail)
                put(");\n")
            else:
                put("    ")
                put(tail.text, tail)
                put(";\n")
        put("}\n")
        out.text = "".join(parts)
        return out

    def program_text(self) -> str:
        return self._synth(self.items, self.stmts, None, False).text

    def _check(self, synth: _Synth, until: str = "checked") -> Any:
        from tilelang import driver

        return driver.compile(synth.text, until, name="<repl>")

    def _tail_has_value(self, result: Any) -> bool:
        module = result.context.outputs.get("ast")
        checked = result.output
        if module is None or checked is None:
            return False
        main = module.items[-1]
        last = main.body.stmts[-1] if main.body.stmts else main.body.tail
        expr = getattr(last, "expr", last)
        ty = checked.program.type_of(expr)
        return ty is not None and str(ty) != "()"

    def _run(self, synth: _Synth) -> tuple[int, str, str]:
        """Run the synthesised program: (status, stdout, rendered diagnostics)."""
        from tilelang import run as run_mod
        from tilelang.diagnostics.model import TileError

        out = io.StringIO()
        sources = SourceMap()
        sf = sources.add("<repl>", synth.text)
        try:
            run_mod._execute_source(sf, sources, self.device, out)
        except run_mod.CheckFailed as e:
            return 1, out.getvalue(), self._diags(list(e.diagnostics), e.sources, synth)
        except TileError as e:
            return 3, out.getvalue(), self._diags(list(e.diagnostics), sources, synth)
        return 0, out.getvalue(), ""

    # ---------------------------------------------------------------- diagnostics
    def _diags(self, diags: list[Diagnostic], sources: SourceMap, synth: _Synth) -> str:
        """Render diagnostics about the synthesised program, with their spans
        moved back into the entries they came from."""
        mapped = [self._map(d, sources, synth) for d in diags]
        return self._render(mapped, self.display)

    def _map(self, diag: Diagnostic, sources: SourceMap, synth: _Synth) -> Diagnostic:
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
                        chunk.file, chunk.base + span.start - start, chunk.base + span.end - start
                    )
            return None  # inside the glue the REPL wrote (`fn main`, `print(`)
        if name is None:
            return None
        # A span into another file (the stdlib, a `use`d file): show that file.
        sf = self.display.by_name(name) or self.display.add(name, sources.get(span.file).text)
        return Span(sf.id, span.start, span.end)

    def _render(self, diags: list[Diagnostic], sources: SourceMap) -> str:
        from tilelang.diagnostics.render import render_human

        return render_human(diags, sources, color=self.color, footer=False)

    # ---------------------------------------------------------------- meta-commands
    def _meta(self, line: str) -> ReplOutput:
        cmd, _, arg = line[1:].partition(" ")
        arg = arg.strip()
        match cmd:
            case "q" | "quit" | "exit":
                return ReplOutput(quit=True)
            case "h" | "help" | "?":
                return ReplOutput(stdout=HELP + "\n")
            case "reset":
                self.items, self.stmts, self.shown = [], [], 0
                return ReplOutput(stdout="session cleared\n")
            case "program":
                return ReplOutput(stdout=self.program_text())
            case "type" | "t":
                return self._type_of(arg)
            case "ast" | "ir" | "llvm" | "ptx":
                return self._emit(cmd, arg or None)
            case "load":
                return self._load(arg)
            case _:
                return ReplOutput(
                    stderr=f"error: unknown command `:{cmd}` (try `:help`)\n", ok=False
                )

    def _type_of(self, text: str) -> ReplOutput:
        if not text:
            return ReplOutput(stderr="error: `:type` needs an expression\n", ok=False)
        sf = self._new_file(text)
        tail = _Chunk(text, sf.id, 0)
        synth = self._synth(self.items, self.stmts, tail, False)
        result = self._check(synth)
        if not result.ok:
            return ReplOutput(
                stderr=self._diags(result.diagnostics, result.sources, synth), ok=False
            )
        module = result.context.outputs["ast"]
        last = module.items[-1].body.stmts[-1]
        ty = result.output.program.type_of(getattr(last, "expr", last))
        return ReplOutput(stdout=f"{text.strip()}: {ty}\n")

    def _emit(self, stage: str, kernel: str | None) -> ReplOutput:
        from tilelang import driver

        synth = self._synth(self.items, self.stmts, None, False)
        try:
            result = driver.compile(
                synth.text, stage, name="<repl>", options=driver.Options(kernel=kernel), strict=True
            )
        except driver.StageUnavailable as e:
            return ReplOutput(stderr=f"error: {e}\n", ok=False)
        if not result.ok:
            return ReplOutput(
                stderr=self._diags(result.diagnostics, result.sources, synth), ok=False
            )
        text = driver.format_output(stage, result)
        if not text.strip():
            return ReplOutput(stdout="(no kernel is launched yet)\n")
        return ReplOutput(stdout=text.rstrip("\n") + "\n")

    def _load(self, path: str) -> ReplOutput:
        from tilelang.syntax import ast
        from tilelang.syntax.parser import parse

        if not path:
            return ReplOutput(stderr="error: `:load` needs a file name\n", ok=False)
        try:
            text = open(path, encoding="utf-8").read()  # noqa: SIM115 - one read
        except OSError as e:
            return ReplOutput(stderr=f"error: couldn't read `{path}`: {e.strerror}\n", ok=False)
        sf = self.display.add(path, text)
        sink = DiagnosticSink()
        module = parse(sf, sink)
        if sink.has_errors:
            return ReplOutput(stderr=self._render(sink.diagnostics, self.display), ok=False)
        new = [
            self._chunk(sf, it.span)
            for it in module.items
            if not (isinstance(it, ast.FnDecl) and it.name.name == "main")
        ]
        synth = self._synth(self.items + new, self.stmts, None, False)
        result = self._check(synth)
        if not result.ok:
            return ReplOutput(
                stderr=self._diags(result.diagnostics, result.sources, synth), ok=False
            )
        self.items += new
        return ReplOutput(
            stdout=f"loaded {len(new)} item{'s' if len(new) != 1 else ''} from {path}\n"
        )


_HANDLE_DROPPED = "E0308"  # codes/ownership.py: a launch handle never waited for


def _handle_names(errors: list[Diagnostic]) -> list[str]:
    """The handle names in "launch handle `h` is dropped ..." messages."""
    import re

    names = []
    for d in errors:
        m = re.search(r"`([^`]+)`", d.message)
        names.append(m.group(1) if m else "a launch")
    return names


# ---------------------------------------------------------------- terminal front end
def _is_incomplete(text: str) -> bool:
    try:
        from tilelang.syntax.parser import is_incomplete
    except ImportError:
        return False
    if text.strip().startswith(":"):
        return False
    return bool(is_incomplete(text))


def _feed_stream(session: ReplSession, stream: Any) -> int:
    """Non-interactive: feed each complete entry of `stream`; status 1 if any failed."""
    status = 0
    buf = ""
    for line in stream:
        buf += line
        if _is_incomplete(buf):
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


def main(device: str = "cpu") -> int:
    """Run the REPL on the terminal (or over piped stdin); the exit status."""
    from tilelang.diagnostics import render

    color = render.use_color(render.settings().color, sys.stderr)
    session = ReplSession(device=device, color=color)
    if not sys.stdin.isatty():
        return _feed_stream(session, sys.stdin)

    from prompt_toolkit import PromptSession
    from prompt_toolkit.auto_suggest import AutoSuggestFromHistory
    from prompt_toolkit.filters import Condition
    from prompt_toolkit.history import FileHistory, InMemoryHistory
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.lexers import PygmentsLexer

    bindings = KeyBindings()

    @bindings.add("enter", filter=Condition(lambda: True))
    def _enter(event: Any) -> None:
        buf = event.current_buffer
        text = buf.document.text
        # Accept when the entry is complete (or ends in an empty line);
        # otherwise continue on a new, indented line.
        if text.endswith("\n") or not _is_incomplete(text):
            buf.validate_and_handle()
        else:
            indent = len(text.rsplit("\n", 1)[-1]) - len(text.rsplit("\n", 1)[-1].lstrip())
            extra = 4 if text.rstrip().endswith(("{", "(", "[")) else 0
            buf.insert_text("\n" + " " * (indent + extra))

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
        key_bindings=bindings,
        multiline=True,
        prompt_continuation=lambda width, line, wrap: "...".ljust(width),
    )
    sys.stdout.write("Tile REPL: `:help` for commands, Ctrl-D to leave.\n")
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
