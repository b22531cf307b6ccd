"""Renderers of the diagnostic model: one model, three views.

- `render_human`: rustc style, for people (`error[E0302]: ...`, ` --> file:line:col`,
  a gutter of line numbers, `^^^` under the primary label and `---` under
  secondary ones, `= note:`/`= help:` lines, and a footer via `render_footer`).
- `render_short`: `file:line:col: error[E0302]: message`, one line each, for
  editors' problem matchers and grep.
- `render_json`: one JSON object per diagnostic per line, for tools. Columns are
  1-based and count characters; `end_line`/`end_col` point just past the span.

`report()` is what every front end calls (the CLI, the host runtime, the REPL):
it renders with the session's settings (`configure()`: format and colour) and
writes to stderr.

Invariants: rendering never raises on a diagnostic whose spans are odd (out of
range, zero-width at the end of the file, a dummy span); layout is computed in
plain text first, colour is only styling on top, so the `--color never`
output is exactly the coloured output with the escapes removed; rich is
imported only when colour is on.
"""

from __future__ import annotations

import bisect
import functools
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import IO, Literal

from tilelang.diagnostics.model import Diagnostic, Label, Severity
from tilelang.frozen import frozen
from tilelang.source import SourceFile, SourceMap

ErrorFormat = Literal["human", "short", "json"]
ColorChoice = Literal["auto", "always", "never"]
ERROR_FORMATS: tuple[str, ...] = ("human", "short", "json")
COLOR_CHOICES: tuple[str, ...] = ("auto", "always", "never")

TAB_WIDTH = 4
# Lines between two shown lines beyond which the gap is elided with `...`.
_MAX_GAP = 1
# A multi-line span longer than this shows its first lines, `...`, its last.
_MAX_SPAN_LINES = 6
# Source lines wider than this (display columns) are shown in a window around
# the primary label, with `...` where they are cut.
MAX_LINE_WIDTH = 140
# Columns kept free right of the last mark in a window, for a label's message.
_MARK_ROOM = 60

# A styled piece of text: (text, style or None). Styles are rich style strings.
Seg = tuple[str, str | None]


# ---------------------------------------------------------------- session settings
@dataclass(slots=True)
class Settings:
    format: str = "human"
    color: str = "auto"


_settings = Settings()


def configure(*, format: str | None = None, color: str | None = None) -> None:
    """Set how `report` renders for the rest of the process (the CLI's
    `--error-format` and `--color`)."""
    if format is not None:
        if format not in ERROR_FORMATS:
            raise ValueError(f"unknown error format `{format}`")
        _settings.format = format
    if color is not None:
        if color not in COLOR_CHOICES:
            raise ValueError(f"unknown colour choice `{color}`")
        _settings.color = color


def settings() -> Settings:
    return Settings(_settings.format, _settings.color)


def use_color(choice: str, stream: IO[str]) -> bool:
    """`always`/`never` win; `auto` means a terminal and no `NO_COLOR`."""
    if choice == "always":
        return True
    if choice == "never":
        return False
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


def report(
    diagnostics: Sequence[Diagnostic],
    sources: SourceMap,
    *,
    footer: bool = True,
    file: IO[str] | None = None,
) -> None:
    """Write `diagnostics` to `file` (default stderr) with the session settings.

    The human format ends with the rustc footer (`error: aborting due to ...`)
    when `footer` is set and there were errors.
    """
    if not diagnostics:
        return  # nothing to write (and nothing to import for it)
    stream = file if file is not None else sys.stderr
    fmt = _settings.format
    if fmt == "json":
        text = render_json(diagnostics, sources)
    elif fmt == "short":
        text = render_short(diagnostics, sources)
    else:
        color = use_color(_settings.color, stream)
        text = render_human(diagnostics, sources, color=color, footer=footer)
    if text:
        stream.write(text)
        stream.flush()


def render(
    diagnostics: Sequence[Diagnostic],
    sources: SourceMap,
    format: str = "human",
    *,
    color: bool = False,
    footer: bool = True,
) -> str:
    if format == "json":
        return render_json(diagnostics, sources)
    if format == "short":
        return render_short(diagnostics, sources)
    return render_human(diagnostics, sources, color=color, footer=footer)


# ---------------------------------------------------------------- positions
@frozen(eq=True)
class _Pos:
    """A label's resolved position: 1-based lines, 0-based char columns
    (start inclusive, end exclusive on `end_line`)."""

    file: SourceFile
    line: int
    col: int
    end_line: int
    end_col: int


def _file_of(label: Label, sources: SourceMap) -> SourceFile | None:
    fid = label.span.file
    try:
        return sources.get(fid) if fid >= 0 else None
    except IndexError:
        return None


def _resolve(label: Label, sources: SourceMap) -> _Pos | None:
    sf = _file_of(label, sources)
    if sf is None:
        return None
    n = len(sf.text)
    start = max(0, min(label.span.start, n))
    end = max(start, min(label.span.end, n))
    # A span at the very end of a file that ends with a newline would sit on
    # an empty phantom line; show it at the end of the last real line instead.
    if start == n and n > 0 and sf.text.endswith("\n"):
        start = end = n - 1
    elif end == n and end > start and sf.text.endswith("\n"):
        end = n - 1 if end - 1 > start else end
    line, col = sf.line_col(start)
    end_line, end_col = sf.line_col(end)
    # A span ending right after a newline ends on the previous line.
    if end > start and end_col == 1 and end_line > line:
        end_line -= 1
        end_col = len(sf.line_text(end_line)) + 2
    return _Pos(sf, line, col - 1, end_line, end_col - 1)


def location(label: Label, sources: SourceMap) -> tuple[str, int, int] | None:
    """(file name, 1-based line, 1-based column) of a label, or None."""
    pos = _resolve(label, sources)
    if pos is None:
        return None
    return pos.file.name, pos.line, pos.col + 1


def _primary(diag: Diagnostic) -> Label | None:
    for label in diag.labels:
        if label.primary:
            return label
    return diag.labels[0] if diag.labels else None


# ---------------------------------------------------------------- short
def _header_word(diag: Diagnostic) -> str:
    word = diag.severity.value
    return f"{word}[{diag.code}]" if diag.code else word


def render_short(diagnostics: Sequence[Diagnostic], sources: SourceMap) -> str:
    out = []
    for diag in diagnostics:
        primary = _primary(diag)
        loc = location(primary, sources) if primary is not None else None
        prefix = f"{loc[0]}:{loc[1]}:{loc[2]}: " if loc else ""
        out.append(f"{prefix}{_header_word(diag)}: {diag.message}\n")
    return "".join(out)


# ---------------------------------------------------------------- json
def plain_error(message: str, help: Sequence[str] = (), file: IO[str] | None = None,
                format: str | None = None, severity: str = "error") -> None:
    """An error tied to no source location (a file that cannot be read, a
    usage error, no GPU) in the session's format: `error: ...` and `help:`
    lines, or one JSON object as `render_json` writes a diagnostic (code
    `""`, no labels), so `--error-format json` holds on every error path.
    `severity` "warning" or "note": the same for a warning or a note (`plain_note`)."""
    stream = file if file is not None else sys.stderr
    fmt = format or _settings.format
    if fmt == "json":
        import json

        text = json.dumps({"code": "", "message": message, "severity": severity, "labels": [],
                           "notes": [], "help": list(help)}, ensure_ascii=False) + "\n"
    elif use_color(_settings.color, stream) and fmt == "human":
        style = {"error": "1;31", "warning": "1;33"}.get(severity, "1;36")
        text = f"\x1b[{style}m{severity}\x1b[0m\x1b[1m: {message}\x1b[0m\n" + "".join(f"help: {h}\n" for h in help)
    else:
        text = f"{severity}: {message}\n" + "".join(f"help: {h}\n" for h in help)
    stream.write(text)
    stream.flush()


def plain_note(message: str, *help: str, file: IO[str] | None = None) -> None:
    """A note tied to no source location (`--device auto` falling back to the CPU), as `plain_error` writes."""
    plain_error(message, help, file=file, severity="note")


def diagnostic_to_dict(diag: Diagnostic, sources: SourceMap) -> dict[str, object]:
    labels = []
    for label in diag.labels:
        pos = _resolve(label, sources)
        labels.append(
            {
                "file": pos.file.name if pos else None,
                "line": pos.line if pos else None,
                "col": pos.col + 1 if pos else None,
                "end_line": pos.end_line if pos else None,
                "end_col": pos.end_col + 1 if pos else None,
                "message": label.message,
                "primary": label.primary,
            }
        )
    return {
        "code": diag.code,
        "message": diag.message,
        "severity": diag.severity.value,
        "labels": labels,
        "notes": list(diag.notes),
        "help": list(diag.help),
    }


def render_json(diagnostics: Sequence[Diagnostic], sources: SourceMap) -> str:
    import json

    return "".join(
        json.dumps(diagnostic_to_dict(d, sources), ensure_ascii=False) + "\n" for d in diagnostics
    )


# ---------------------------------------------------------------- human
def _char_width(ch: str) -> int:
    import unicodedata

    if ch == "\t":
        return TAB_WIDTH
    if unicodedata.combining(ch):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


@functools.lru_cache(maxsize=64)
def _expand(text: str) -> str:
    """The displayed form of a source line: tabs become spaces, other control
    and format characters (a zero-width space, a text-direction override)
    become `?`, so the columns of the underline stay aligned and the line is
    shown in the order it is read."""
    import unicodedata

    out = []
    for ch in text:
        if ch == "\t":
            out.append(" " * TAB_WIDTH)
        elif ch == "\r":
            continue
        elif unicodedata.category(ch) in ("Cc", "Cf"):  # controls and invisible formats (bidi
            out.append("?")                               # overrides would reorder the line)
        else:
            out.append(ch)
    return "".join(out)


@functools.lru_cache(maxsize=64)
def _columns(text: str) -> tuple[int, ...]:
    """The display column each character of a line starts at, and then the
    line's width (a `\r` takes none). Kept for the last lines seen: every
    label of every diagnostic on one long line asks for columns of it (a
    generated line of 900 errors rendered in 30 s when each summed its
    prefix again)."""
    out = [0]
    for ch in text:
        out.append(out[-1] + (0 if ch == "\r" else _char_width(ch)))
    return tuple(out)


def _display_col(text: str, col: int) -> int:
    """The display column of character column `col` of a line."""
    cols = _columns(text)
    return cols[col] if col <= len(text) else cols[-1] + col - len(text)


@dataclass(slots=True)
class _Styles:
    error: str = "bold red"
    warning: str = "bold yellow"
    note: str = "bold green"
    secondary: str = "bold blue"
    gutter: str = "bold blue"
    title: str = "bold"


_STYLES = _Styles()


def _severity_style(sev: Severity) -> str:
    match sev:
        case Severity.ERROR:
            return _STYLES.error
        case Severity.WARNING:
            return _STYLES.warning
        case Severity.NOTE:
            return _STYLES.note


@dataclass(slots=True)
class _Ann:
    """A label placed on the grid of one file."""

    label: Label
    pos: _Pos
    start: int  # display columns on the start/end lines
    end: int
    multiline: bool
    depth: int = 0  # margin column for a multi-line label

    @property
    def char(self) -> str:
        return "^" if self.label.primary else "-"


class _Canvas:
    """A row of cells, each a character and a style, written by column."""

    def __init__(self) -> None:
        self.cells: list[tuple[str, str | None]] = []

    def put(self, col: int, text: str, style: str | None) -> None:
        while len(self.cells) < col + len(text):
            self.cells.append((" ", None))
        for i, ch in enumerate(text):
            self.cells[col + i] = (ch, style)

    def get(self, col: int) -> str:
        return self.cells[col][0] if col < len(self.cells) else " "

    def segs(self) -> list[Seg]:
        out: list[Seg] = []
        for ch, style in self.cells:
            if out and out[-1][1] == style:
                out[-1] = (out[-1][0] + ch, style)
            else:
                out.append((ch, style))
        # Trailing spaces carry no information and make goldens brittle.
        while out and out[-1][0].strip() == "" and out[-1][1] is None:
            out.pop()
        if out and out[-1][1] is None:
            out[-1] = (out[-1][0].rstrip(), None)
        return out


# Draws the multi-line margin bars on a row: (row, line, below).
_BarsFn = Callable[["_Canvas", int, bool], None]


def render_human(
    diagnostics: Sequence[Diagnostic],
    sources: SourceMap,
    *,
    color: bool = False,
    footer: bool = True,
) -> str:
    lines: list[list[Seg]] = []
    for diag in diagnostics:
        lines.extend(_render_one(diag, sources))
        lines.append([])
    if footer:
        lines.extend(render_footer(diagnostics))
    return _to_text(lines, color)


def render_footer(diagnostics: Sequence[Diagnostic]) -> list[list[Seg]]:
    """rustc's closing lines: the error count and where to read more."""
    errors = [d for d in diagnostics if d.severity is Severity.ERROR]
    warnings = [d for d in diagnostics if d.severity is Severity.WARNING]
    nw = len(warnings)
    warned = f"{nw} warning{'' if nw == 1 else 's'} emitted"
    if not errors:
        return [[("warning", _STYLES.warning), (": " + warned, _STYLES.title)]] if warnings else []
    n = len(errors)
    text = f": aborting due to {n} previous error{'' if n == 1 else 's'}"
    if warnings:
        text += "; " + warned
    out: list[list[Seg]] = [[("error", _STYLES.error), (text, _STYLES.title)]]
    codes = sorted({d.code for d in errors if d.code})
    if len(codes) > 1:
        out.append(
            [(f"Some errors have detailed explanations: {', '.join(codes)}.", _STYLES.title)]
        )
        out.append(
            [
                (
                    f"For more information about an error, try `tilec explain {codes[0]}`.",
                    _STYLES.title,
                )
            ]
        )
    elif codes:
        out.append(
            [
                (
                    f"For more information about this error, try `tilec explain {codes[0]}`.",
                    _STYLES.title,
                )
            ]
        )
    return out


def _to_text(lines: Iterable[list[Seg]], color: bool) -> str:
    if not color:
        return "".join("".join(text for text, _ in line) + "\n" for line in lines)
    import io

    from rich.console import Console
    from rich.text import Text

    buf = io.StringIO()
    console = Console(
        file=buf,
        force_terminal=True,
        color_system="standard",
        width=100_000,
        soft_wrap=True,
        highlight=False,
        emoji=False,
        markup=False,
    )
    for line in lines:
        console.print(Text.assemble(*((text, style or "") for text, style in line)), end="\n")
    return buf.getvalue()


def _render_one(diag: Diagnostic, sources: SourceMap) -> list[list[Seg]]:
    sev_style = _severity_style(diag.severity)
    out: list[list[Seg]] = [[(_header_word(diag), sev_style), (": " + diag.message, _STYLES.title)]]
    # Group the labels by file, the primary label's file first.
    resolved = [(label, _resolve(label, sources)) for label in diag.labels]
    placed = [(label, pos) for label, pos in resolved if pos is not None]
    primary = _primary(diag)
    files: list[SourceFile] = []
    for _, pos in sorted(placed, key=lambda lp: not lp[0].primary):
        if pos.file not in files:
            files.append(pos.file)
    max_line = max((max(p.line, p.end_line) for _, p in placed), default=0)
    width = len(str(max_line)) if placed else 0
    pad = " " * width
    for i, sf in enumerate(files):
        in_file = [(lb, p) for lb, p in placed if p.file is sf]
        head = next((p for lb, p in in_file if lb is primary), None) or min(
            (p for _, p in in_file), key=lambda p: (p.line, p.col)
        )
        arrow = "-->" if i == 0 else ":::"
        out.append(
            [(f"{pad}{arrow} ", _STYLES.gutter), (f"{sf.name}:{head.line}:{head.col + 1}", None)]
        )
        out.append([(f"{pad} |", _STYLES.gutter)])
        out.extend(_render_file(sf, in_file, width, sev_style))
    if (diag.notes or diag.help) and placed:
        out.append([(f"{pad} |", _STYLES.gutter)])
    for kind, texts in (("note", diag.notes), ("help", diag.help)):
        for text in texts:
            first, *rest = text.split("\n")
            out.append([(f"{pad} = ", _STYLES.gutter), (kind, _STYLES.title), (": " + first, None)])
            indent = " " * (len(pad) + 3 + len(kind) + 2)
            out.extend([[(indent + more, None)] for more in rest])
    return out


def _render_file(
    sf: SourceFile, labels: list[tuple[Label, _Pos]], width: int, sev_style: str
) -> list[list[Seg]]:
    anns: list[_Ann] = []
    for label, pos in labels:
        start_text = sf.line_text(pos.line)
        end_text = sf.line_text(pos.end_line)
        start = _display_col(start_text, pos.col)
        end = _display_col(end_text, pos.end_col)
        multiline = pos.end_line > pos.line
        if not multiline:
            end = max(end, start + 1)  # zero-width spans still get one mark
        anns.append(_Ann(label, pos, start, end, multiline))
    multi = sorted((a for a in anns if a.multiline), key=lambda a: (a.pos.line, -a.pos.end_line))
    for depth, ann in enumerate(multi):
        ann.depth = depth
    margin = 2 * len(multi)  # one bar column and one space per multi-line label

    # Which lines to show: every labelled line; all lines of short multi-line
    # spans, the ends of long ones.
    shown: set[int] = set()
    for a in anns:
        shown.add(a.pos.line)
        shown.add(a.pos.end_line)
        if a.multiline:
            n = a.pos.end_line - a.pos.line + 1
            if n <= _MAX_SPAN_LINES:
                shown.update(range(a.pos.line, a.pos.end_line + 1))
            else:
                shown.update((a.pos.line + 1, a.pos.end_line - 1))
    order = sorted(ln for ln in shown if 1 <= ln <= sf.line_count)
    view = _window(sf, order, anns)

    pad = " " * width
    out: list[list[Seg]] = []

    def bars(row: _Canvas, line: int, below: bool) -> None:
        _bars(row, sf, multi, line, below, sev_style)

    prev: int | None = None
    for ln in order:
        if prev is not None and ln - prev > 1:
            if ln - prev - 1 <= _MAX_GAP:
                for mid in range(prev + 1, ln):
                    out.append(_source_row(sf, mid, width, margin, bars, view))
            else:
                out.append([("...", _STYLES.gutter)])
        prev = ln
        out.append(_source_row(sf, ln, width, margin, bars, view))
        out.extend(_annotation_rows(sf, ln, anns, multi, pad, margin, sev_style, bars))
    return out


def _window(sf: SourceFile, order: list[int], anns: list[_Ann]) -> tuple[int, int] | None:
    """The display columns `[left, right)` shown of long source lines, or None
    when every shown line fits in `MAX_LINE_WIDTH`. The window follows the
    primary label (rustc trims long lines the same way), and the labels are
    moved into it (`anns` is updated), so a label's message stays in view
    however long the line or the span."""
    widest = max((_display_col(sf.line_text(ln), len(sf.line_text(ln))) for ln in order),
                 default=0)
    if widest <= MAX_LINE_WIDTH:
        return None
    focus = next((a for a in anns if a.label.primary), anns[0] if anns else None)
    start = focus.start if focus is not None else 0
    left = 0 if start < MAX_LINE_WIDTH // 2 else start - MAX_LINE_WIDTH // 4
    right = left + MAX_LINE_WIDTH
    # Room for the message after a mark: marks end well before the right edge.
    last_mark = right - left - _MARK_ROOM
    for a in anns:
        a.start = min(max(a.start - left, 0), last_mark - 1)
        a.end = min(max(a.end - left, 0), last_mark)
        if not a.multiline:
            a.end = max(a.end, a.start + 1)
    return left, right


def _cut(text: str, left: int, right: int) -> str:
    """Display columns `[left, right)` of an expanded line, with `...` where
    text is cut off (the marks keep their columns: `...` replaces text)."""
    cols = _columns(text)  # the characters starting at columns left .. right - 1
    cut = text[bisect.bisect_left(cols, left, 0, len(text)):bisect.bisect_left(cols, right, 0, len(text))]
    if left > 0:
        cut = "..." + cut[3:]
    if cols[-1] > right:
        cut = cut[:-3] + "..."
    return cut


def _starts_at_margin(sf: SourceFile, a: _Ann) -> bool:
    """A multi-line span that starts at the first non-blank of its line is
    drawn with `/` in the margin (rustc) instead of an underscore run."""
    text = sf.line_text(a.pos.line)
    return text[: a.pos.col].strip() == ""


def _bars(
    row: _Canvas, sf: SourceFile, multi: list[_Ann], line: int, below: bool, sev_style: str
) -> None:
    """Draw the margin bars of the multi-line labels open at `line`: on its
    source row (`below` false) or on the annotation rows under it."""
    for a in multi:
        s, e = a.pos.line, a.pos.end_line
        at_margin = _starts_at_margin(sf, a)
        # Below a line the bar continues until the end line (which draws its
        # own corner); on a source row it shows from the line after the start.
        active = s <= line < e if below else (s < line <= e or (line == s and at_margin))
        if active:
            ch = "/" if (not below and line == s) else "|"
            row.put(2 * a.depth, ch, sev_style if a.label.primary else _STYLES.secondary)


def _source_row(sf: SourceFile, ln: int, width: int, margin: int, bars: _BarsFn,
                view: tuple[int, int] | None = None) -> list[Seg]:
    row = _Canvas()
    bars(row, ln, False)
    segs: list[Seg] = [(f"{ln:>{width}} | ", _STYLES.gutter)]
    m = row.segs()
    used = sum(len(t) for t, _ in m)
    segs.extend(m)
    text = _expand(sf.line_text(ln))
    if view is not None:
        text = _cut(text, *view)
    if text or used:
        segs.append((" " * (margin - used) + text, None))
    else:
        segs[0] = (f"{ln:>{width}} |", _STYLES.gutter)
    return _rstrip(segs)


def _rstrip(segs: list[Seg]) -> list[Seg]:
    while segs and segs[-1][0].rstrip() == "" and segs[-1][1] is None:
        segs.pop()
    if segs and segs[-1][1] is None:
        segs[-1] = (segs[-1][0].rstrip(), None)
    return segs


def _annotation_rows(
    sf: SourceFile,
    ln: int,
    anns: list[_Ann],
    multi: list[_Ann],
    pad: str,
    margin: int,
    sev_style: str,
    bars: _BarsFn,
) -> list[list[Seg]]:
    def style_of(a: _Ann) -> str:
        return sev_style if a.label.primary else _STYLES.secondary

    rows: list[_Canvas] = []

    # Multi-line labels starting here (not at the margin): `_____^` from the margin.
    for a in multi:
        if a.pos.line == ln and not _starts_at_margin(sf, a):
            row = _Canvas()
            bars(row, ln, True)
            row.put(2 * a.depth, " ", None)
            row.put(2 * a.depth + 1, "_" * (margin - 2 * a.depth - 1 + a.start), style_of(a))
            row.put(margin + a.start, a.char, style_of(a))
            rows.append(row)

    # Single-line labels on this line, plus the ends of multi-line labels.
    singles = sorted(
        (a for a in anns if not a.multiline and a.pos.line == ln), key=lambda a: (a.start, a.end)
    )
    ends = [a for a in multi if a.pos.end_line == ln]
    if singles:
        under = _Canvas()
        bars(under, ln, True)
        for a in ends:
            under.put(2 * a.depth, "|", style_of(a))
        # Wider marks first, so a label nested inside another stays visible
        # (`^^^^--^^` as rustc draws it); for equal spans the primary wins.
        for a in sorted(singles, key=lambda a: (-(a.end - a.start), a.label.primary)):
            under.put(margin + a.start, a.char * (a.end - a.start), style_of(a))
        with_msg = [a for a in singles if a.label.message]
        if with_msg:
            last = with_msg[-1]
            # The rightmost label's message goes on the underline row, unless
            # another mark reaches past its start: then it would read as that
            # mark's message.
            if all(b is last or b.end <= last.start for b in singles):
                under.put(
                    margin + max(a.end for a in singles) + 1, last.label.message, style_of(last)
                )
                hanging = with_msg[:-1]
            else:
                hanging = with_msg
        else:
            hanging = []
        rows.append(under)
        if hanging:
            connector = _Canvas()
            bars(connector, ln, True)
            for a in hanging:
                connector.put(margin + a.start, "|", style_of(a))
            rows.append(connector)
            for i in range(len(hanging) - 1, -1, -1):
                row = _Canvas()
                bars(row, ln, True)
                for b in hanging[:i]:
                    row.put(margin + b.start, "|", style_of(b))
                row.put(margin + hanging[i].start, hanging[i].label.message, style_of(hanging[i]))
                rows.append(row)

    # The ends of multi-line labels: `|_____^ message`.
    for a in ends:
        row = _Canvas()
        for b in multi:
            if b is not a and b.pos.line < ln < b.pos.end_line:
                row.put(2 * b.depth, "|", style_of(b))
        row.put(2 * a.depth, "|", style_of(a))
        last_col = max(a.end - 1, 0)
        row.put(2 * a.depth + 1, "_" * (margin - 2 * a.depth - 1 + last_col), style_of(a))
        row.put(margin + last_col, a.char, style_of(a))
        if a.label.message:
            row.put(margin + last_col + 2, a.label.message, style_of(a))
        rows.append(row)

    out: list[list[Seg]] = []
    for row in rows:
        segs: list[Seg] = [(f"{pad} | ", _STYLES.gutter)]
        segs.extend(row.segs())
        out.append(_rstrip(segs) if len(segs) > 1 else [(f"{pad} |", _STYLES.gutter)])
    return out
