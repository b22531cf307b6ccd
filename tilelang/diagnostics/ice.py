"""Internal compiler error reports: short on the terminal, whole in a file.

A bug in tilec (any exception a front end did not expect) is reported by
`ice_report(exc)`: the exception in one line (its text cut to a few hundred
characters), a request to report it, the versions, the innermost frames of
the innermost exception (where the bug is), and the path of a file that holds
the full trace. A RecursionError's trace is thousands of frames; it is never
printed whole.

Under `--error-format json` the report is one JSON object on one line, as a
diagnostic is (`code` "", `severity` "error", the message, `notes`), with
`internal: true`, where to report it (`report`), the versions, the innermost
frames as records (`trace`: file, line, function, source; at most
`JSON_FRAMES`) and the trace file's path (`trace_file`, or null): a tool
reading tilec's JSON never meets a human-only report.

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
from typing import IO, Any

# Frames shown on the terminal (the innermost ones), and the longest message.
SHOWN_FRAMES = 8
JSON_FRAMES = 64  # a tool can read more than a person; a RecursionError's thousands still go to the file
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
    from tilelang import __version__

    return save_text("txt", f"tilec {__version__}, Python {sys.version.split()[0]}, argv {sys.argv!r}\n\n"
                     + "".join(traceback.format_exception(exc)))


def save_text(suffix: str, text: str) -> str | None:
    """Write `text` to a new `tilec-ice-*.{suffix}` file beside the traces (`$TILEC_ICE_DIR`, else the temporary
    directory): the trace, or what a report needs besides it (the PTX an assembler refused); its path, or None."""
    folder = os.environ.get("TILEC_ICE_DIR") or tempfile.gettempdir()
    try:
        os.makedirs(folder, exist_ok=True)
        fd, path = tempfile.mkstemp(prefix=f"tilec-ice-{time.strftime('%Y%m%d-%H%M%S')}-",
                                    suffix=f".{suffix}", dir=folder)
        with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as f:
            f.write(text)
        return path
    except Exception:  # a report must never fail for want of a file
        return None


def ice_facts(exc: BaseException, *, context: str = "") -> dict[str, Any]:
    """What a report says, once for both renderers: the message, the notes,
    the versions, the innermost frames, the trace file (written here)."""
    from tilelang import __version__

    inner = _innermost(exc)
    notes = []
    if inner is not exc:
        notes.append(f"caused by {type(inner).__name__}: {_one_line(str(inner))}")
    frames = traceback.extract_tb(inner.__traceback__)
    return {
        "message": f"internal compiler error: {type(exc).__name__}: {_one_line(str(exc))}",
        "notes": notes,
        "report": f"{ISSUES_NOTE}{context}",
        "version": __version__,
        "python": sys.version.split()[0],
        "frames": len(frames),
        "trace": [{"file": fr.filename, "line": fr.lineno, "function": fr.name,
                   "source": _one_line(fr.line or "")} for fr in frames[-JSON_FRAMES:]],
        "trace_file": save_trace(exc),
    }


def ice_report(exc: BaseException, *, context: str = "") -> str:
    """The terminal text of an internal error (see the module docstring)."""
    return _human(ice_facts(exc, context=context))


def ice_json(exc: BaseException, *, context: str = "") -> str:
    """The report as one JSON line (`--error-format json`)."""
    import json

    f = ice_facts(exc, context=context)
    obj = {"code": "", "message": f["message"], "severity": "error", "labels": [],
           "notes": [*f["notes"], f["report"], f"tilec {f['version']}, Python {f['python']}"],
           "help": [], "internal": True, **{k: f[k] for k in
                                            ("report", "version", "python", "frames", "trace", "trace_file")}}
    return json.dumps(obj, ensure_ascii=False) + "\n"


def _human(f: dict[str, Any]) -> str:
    lines = [f"error: {f['message']}"]
    lines += [f"note: {n}" for n in f["notes"]]
    lines.append(f"note: {f['report']}")
    lines.append(f"note: tilec {f['version']}, Python {f['python']}")
    shown = f["trace"][-SHOWN_FRAMES:]
    if shown:
        lines.append(f"note: the innermost {len(shown)} of {f['frames']} frames:")
        for fr in shown:
            lines.append(f"  {fr['file']}:{fr['line']} in {fr['function']}")
            if fr["source"]:
                lines.append(f"    {fr['source']}")
    if f["trace_file"] is not None:
        lines.append(f"note: the full trace is in {f['trace_file']}")
    return "\n".join(lines) + "\n"


def write_report(exc: BaseException, stream: IO[str] | None = None, *, context: str = "",
                 format: str | None = None) -> None:
    """Write the report of `exc` to `stream` (stderr) in `format` (default:
    the session's `--error-format`); a closed stream is ignored."""
    stream = stream if stream is not None else sys.stderr
    if format is None:
        from tilelang.diagnostics import render

        format = render.settings().format
    text = ice_json(exc, context=context) if format == "json" else ice_report(exc, context=context)
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
