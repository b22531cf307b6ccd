"""Source files, spans and line/column lookup.

A `Span` is `(file, start, end)`: character offsets into one `SourceFile`, end
exclusive (ariadne's contract; Lark's `meta.start_pos`/`end_pos` give exactly
these). Line and column are computed only when something is rendered.

Invariant: this module imports nothing outside the standard library.
"""

from __future__ import annotations

import bisect
import os
import re
from dataclasses import dataclass, field
from typing import Any

from tilelang.frozen import frozen

# The largest source file read (bytes). Reads are bounded, so `use "/dev/zero"`
# or a huge generated file is an error, not an exhausted memory.
MAX_SOURCE_BYTES = 64 * 1024 * 1024


class SourceReadError(OSError):
    """A file that cannot be Tile source text, with the reason in words in
    `strerror` (an `OSError`, so every "couldn't read" path reports it)."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(reason)
        self.strerror = reason
        self.filename = path


def read_error(path: str | os.PathLike[str], err: OSError) -> str:
    """The one wording of a source file that cannot be read (`tilec check`,
    `tilec run`, the REPL's `:load`, `tilelang.load`):
    "couldn't read `PATH`: REASON"."""
    reason = err.strerror or str(err) or type(err).__name__
    return f"couldn't read `{os.fspath(path)}`: {reason}"


def decode_source(data: bytes, name: str) -> str:
    """Source bytes as text: UTF-8 (a byte-order mark is kept; the lexer
    ignores it). Anything else is a `SourceReadError` that says where."""
    if len(data) > MAX_SOURCE_BYTES:
        raise SourceReadError(name, f"the file is larger than {MAX_SOURCE_BYTES >> 20} MiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        line_start = data.rfind(b"\n", 0, e.start) + 1
        col = len(data[line_start:e.start].decode("utf-8", errors="replace")) + 1
        raise SourceReadError(
            name, f"the file is not valid UTF-8 (byte 0x{data[e.start]:02x} at line {line}, "
            f"column {col}); save it as UTF-8") from None


def read_source(path: str | os.PathLike[str] | Any) -> str:
    """Read a source file (a path or an `importlib` `Traversable`) as text.

    At most `MAX_SOURCE_BYTES + 1` bytes are read; a larger file, a
    directory or text that is not UTF-8 raises `SourceReadError`, and any
    other failure the `OSError` itself."""
    name = str(path)
    if "\0" in name:
        # no file has this name; `open` would raise ValueError, not OSError
        raise SourceReadError(name, "a file name cannot hold a NUL character (`\\0`)")
    if isinstance(path, (str, os.PathLike)) and os.path.isdir(path):
        raise SourceReadError(name, "it is a directory, not a file")
    with path.open("rb") if hasattr(path, "open") and not isinstance(path, str) else open(path, "rb") as f:
        data = f.read(MAX_SOURCE_BYTES + 1)
    return decode_source(data, name)


@frozen(eq=True)
class Span:
    file: int
    start: int
    end: int

    def to(self, other: Span) -> Span:
        """The span covering `self` through `other` (same file)."""
        return Span(self.file, min(self.start, other.start), max(self.end, other.end))

    def at_end(self) -> Span:
        """A zero-width span just after this one."""
        return Span(self.file, self.end, self.end)


DUMMY_SPAN = Span(-1, 0, 0)

# a string literal (kept), a `//` comment or a `/* */` one (not nested: declarations' headers only)
_STRING_OR_COMMENT = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/', re.S)


def doc_comment_above(sf: SourceFile, offset: int) -> str:
    """The `//` comment lines right above the line of `offset` (a declaration's doc: `help()` of a kernel,
    the language server's hover), over its `#[..]` attribute lines; `///` written as `//`."""
    line, _ = sf.line_col(offset)
    out: list[str] = []
    n = line - 1
    while n >= 1:
        text = sf.line_text(n).strip()
        if text.startswith("#["):
            n -= 1
            continue
        if not text.startswith("//"):
            break
        out.append(text[2:].lstrip("/! ").rstrip() if text.startswith("///") else text[2:].strip())
        n -= 1
    return "\n".join(reversed(out))


def without_comments(text: str) -> str:
    """`text` (a declaration's header) with each comment a space, its strings
    kept: what shows a header on one line (`help()` of a kernel, the REPL's
    `:help`), where a `// the input` after a parameter would read as if it
    commented out the parameters after it."""
    return _STRING_OR_COMMENT.sub(lambda m: m.group() if m.group().startswith('"') else " ", text)


@dataclass(slots=True)
class SourceFile:
    id: int
    name: str
    text: str
    _line_starts: list[int] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        starts = [0]
        text = self.text
        i = text.find("\n")
        while i >= 0:
            starts.append(i + 1)
            i = text.find("\n", i + 1)
        self._line_starts = starts

    def line_col(self, offset: int) -> tuple[int, int]:
        """1-based line and column of a character offset (clamped to the text)."""
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self._line_starts, offset) - 1
        return line + 1, offset - self._line_starts[line] + 1

    def line_text(self, line: int) -> str:
        """The text of a 1-based line, without its newline."""
        starts = self._line_starts
        if line < 1 or line > len(starts):
            return ""
        begin = starts[line - 1]
        end = starts[line] - 1 if line < len(starts) else len(self.text)
        return self.text[begin:end]

    @property
    def line_count(self) -> int:
        return len(self._line_starts)


class SourceMap:
    """Owns every source text of a session; maps file ids to `SourceFile`s."""

    def __init__(self) -> None:
        self._files: list[SourceFile] = []

    def add(self, name: str, text: str) -> SourceFile:
        sf = SourceFile(len(self._files), name, text)
        self._files.append(sf)
        return sf

    def get(self, file_id: int) -> SourceFile:
        return self._files[file_id]

    def by_name(self, name: str) -> SourceFile | None:
        for sf in self._files:
            if sf.name == name:
                return sf
        return None

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self._files)

    def snippet(self, span: Span) -> str:
        return self.get(span.file).text[span.start : span.end]
