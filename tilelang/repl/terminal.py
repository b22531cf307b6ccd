"""`tilec repl` on a terminal: prompt_toolkit wired to a `ReplSession`.

Multi-line input (Enter continues an unfinished entry), history, Tile syntax
highlighting and completion; when stdin is not a terminal the input is read
and fed entry by entry, so `tilec repl < script` works. prompt_toolkit is
imported only by `main`.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from typing import Any

from tilelang.repl.core import ReplOutput
from tilelang.repl.session import ReplSession
from tilelang.repl.values import device_words


def _is_incomplete(text: str) -> bool:
    if text.strip().startswith(":"):
        return False
    from tilelang.syntax.parser import is_incomplete

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
    from tilelang.syntax.parser import completed_by_semicolon, is_incomplete, parses_as_repl_input

    status = 0

    def submit(entry: str) -> bool:
        """Feed one entry and show what it gave (status 1 if it failed); True if it quits."""
        nonlocal status
        result = session.feed(entry)
        _show(result)
        if not result.ok:
            status = 1
        return result.quit

    buf = ""
    for line in stream:
        joined = buf + line
        if buf.strip() and line.strip() and completed_by_semicolon(buf) and not is_incomplete(joined) \
                and not parses_as_repl_input(joined):
            # `let x = 5` then a line that cannot go on with it: the entry ended without its `;`
            if submit(buf):
                return status
            buf = ""
        buf += line
        if buf.strip() and _is_incomplete(buf) and (line.strip() or _bracket_open(buf)):
            continue
        entry, buf = buf, ""
        if submit(entry):
            return status
    if buf.strip():
        submit(buf)
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
    from tilelang.highlight import TileLexer

    lexer = PygmentsLexer(TileLexer)
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
    where = device_words(session._runtime.device) if session._runtime is not None else "CPU"
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
