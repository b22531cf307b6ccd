"""Internal compiler error reports: short on the terminal, whole in a file.

A bug in tilec (any exception a front end did not expect) is reported by
`ice_report(exc)`: the exception in one line (its text cut to a few hundred
characters), a request to report it, the versions, the innermost frames of
the innermost exception (where the bug is), and the path of a file that holds
the full trace. A RecursionError's trace is thousands of frames; it is never
printed whole.

`write_report(exc, stream)` writes the report and survives a reader that went
away (`tilec check f.tile 2>&1 | head`): the caller still exits with status
101. The trace file goes to `$TILEC_ICE_DIR`, else the temporary directory;
if it cannot be written the report says so and shows no path.

Every front end uses it: `tilec` (`cli.main`), `tilec run` (`run.run_file`),
the REPL (which keeps its session going).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
import traceback
from typing import IO

# Frames shown on the terminal (the innermost ones), and the longest message.
SHOWN_FRAMES = 8
MAX_MESSAGE = 300

ISSUES_NOTE = "this is a bug in tilec, not in your program; please report it"


def _one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 3] + "..."


def _innermost(exc: BaseException) -> BaseException:
    """The exception at the bottom of the chain (`raise ICE(..) from e`): where it broke."""
    seen = {id(exc)}
    while True:
        nxt = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
        if nxt is None or id(nxt) in seen:
            return exc
        seen.add(id(nxt))
        exc = nxt


def save_trace(exc: BaseException) -> str | None:
    """Write the full trace to a new file; its path, or None if that failed."""
    folder = os.environ.get("TILEC_ICE_DIR") or tempfile.gettempdir()
    try:
        from tilelang import __version__

        os.makedirs(folder, exist_ok=True)
        fd, path = tempfile.mkstemp(prefix=f"tilec-ice-{time.strftime('%Y%m%d-%H%M%S')}-",
                                    suffix=".txt", dir=folder)
        with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as f:
            f.write(f"tilec {__version__}, Python {sys.version.split()[0]}, "
                    f"argv {sys.argv!r}\n\n")
            f.write("".join(traceback.format_exception(exc)))
        return path
    except Exception:  # a report must never fail for want of a file
        return None


def ice_report(exc: BaseException, *, context: str = "") -> str:
    """The terminal text of an internal error (see the module docstring)."""
    from tilelang import __version__

    inner = _innermost(exc)
    lines = [f"error: internal compiler error: {type(exc).__name__}: {_one_line(str(exc))}"]
    if inner is not exc:
        lines.append(f"note: caused by {type(inner).__name__}: {_one_line(str(inner))}")
    lines.append(f"note: {ISSUES_NOTE}{context}")
    lines.append(f"note: tilec {__version__}, Python {sys.version.split()[0]}")
    frames = traceback.extract_tb(inner.__traceback__)
    if frames:
        shown = frames[-SHOWN_FRAMES:]
        lines.append(f"note: the innermost {len(shown)} of {len(frames)} frames:")
        for fr in shown:
            lines.append(f"  {fr.filename}:{fr.lineno} in {fr.name}")
            if fr.line:
                lines.append(f"    {_one_line(fr.line)}")
    path = save_trace(exc)
    if path is not None:
        lines.append(f"note: the full trace is in {path}")
    return "\n".join(lines) + "\n"


def write_report(exc: BaseException, stream: IO[str] | None = None, *, context: str = "") -> None:
    """Write `ice_report(exc)` to `stream` (stderr); a closed stream is ignored."""
    stream = stream if stream is not None else sys.stderr
    text = ice_report(exc, context=context)
    try:
        stream.write(text)
        stream.flush()
    except (OSError, ValueError):  # the reader went away (`2>&1 | head`), or it is closed
        _silence(stream)


def _silence(stream: IO[str]) -> None:
    """Point a broken standard stream at /dev/null, so the interpreter's flush
    at exit does not fail again (and change the exit status)."""
    try:
        fd = stream.fileno()
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fd)
    except (OSError, ValueError, AttributeError):
        pass
