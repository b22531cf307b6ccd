"""The session as one synthesised program, and diagnostics mapped back to entries.

Every accepted item, then a `fn main()` holding every accepted statement in
order (`synthesize`); an entry is checked as part of that whole program
(`check_session`), so the checkers see everything, exactly as in a file. A
`Chunk` is a piece of entry text placed in it (after a redefinition its text
names hidden items, and `origin` maps its offsets back to the entry's);
`map_diagnostic` moves a diagnostic's spans from the synthesised program back
into the entries they came from.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from dataclasses import dataclass, field
from typing import Any

from tilelang.diagnostics.codes.ownership import HANDLE_DROPPED
from tilelang.diagnostics.model import Diagnostic, Label
from tilelang.ownership.host_report import HIDES_HANDLE
from tilelang.source import SourceFile, SourceMap, Span


@dataclass(slots=True)
class Chunk:
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
class Item:
    chunk: Chunk
    name: str | None  # None for `use`
    kind: str  # "fn", "kernel", "const", "use"
    base: str | None = None  # the folder of the file `:load` took it from (where its `use`s look)


@dataclass(slots=True)
class Synth:
    text: str = ""
    # (start, end, chunk) for each chunk, in the synthesised text
    where: list[tuple[int, int, Chunk]] = field(default_factory=list)
    new_from: int = 0  # where the new entry's statements start
    close: int = 0  # offset of `main`'s closing brace
    shown_at: int = -1  # offset of the shown expression (the last chunk, `shown_last`); -1: none


@dataclass(slots=True)
class Checked:
    """A check of the synthesised session."""

    synth: Synth
    result: Any  # driver.CompileResult
    errors: list[Diagnostic]  # real errors (not the handles in flight)
    in_flight: list[Diagnostic]  # E0308 at the end of `main`
    warnings: list[Diagnostic] = field(default_factory=list)  # the lints' (every entry's: `SessionCore.warnings_of`)

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


def synthesize(items: list[Item], stmts: list[Chunk], first_new: int | None = None,
               shown_last: bool = False) -> Synth:
    """The session as one program: every item, then `fn main()` of every statement."""
    out = Synth()
    parts: list[str] = []
    pos = 0

    def put(text: str, chunk: Chunk | None = None) -> None:
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
        if shown_last and i == len(stmts) - 1:
            out.shown_at = pos + len(st.text) - len(st.text.lstrip())
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


def check_session(
    items: list[Item], stmts: list[Chunk], first_new: int | None = None, shown_last: bool = False
) -> Checked:
    """Check the session made of `items` and `stmts` (`first_new`: where this
    entry's statements start; `shown_last`: the last chunk is the entry's
    expression whose value is shown, written without `;`); the E0308 of
    handles still in flight at the end of `main` are kept apart from the real
    errors."""
    from tilelang import driver

    from tilelang.sema.loader import SEARCH, SHOWN_AT

    synth = synthesize(items, stmts, first_new, shown_last)
    # a `:load`ed file's `use`s name files beside it, not in the working directory
    token = SEARCH.set(tuple(dict.fromkeys(Path(it.base) for it in items if it.base is not None)))
    shown = SHOWN_AT.set(synth.shown_at)
    try:
        result = driver.compile(synth.text, "checked", name="<repl>")
    finally:
        SHOWN_AT.reset(shown)
        SEARCH.reset(token)
    errors: list[Diagnostic] = []
    in_flight: list[Diagnostic] = []
    warnings: list[Diagnostic] = []
    for d in result.diagnostics:
        if d.severity.value != "error":
            if d.severity.value == "warning":
                warnings.append(d)
            continue
        if d.code == _HANDLE_DROPPED and any(
            lb.span.start == synth.close and lb.span.end == synth.close + 1 for lb in d.labels
        ) and not any(HIDES_HANDLE in lb.message for lb in d.labels):
            # in flight at the end of the session so far: the REPL keeps it (waited for later). Not when a
            # `let` hid its handle: nothing could wait for it after that entry (the file's E0308, refused now)
            in_flight.append(d)
        else:
            errors.append(d)
    if not errors and result.context.outputs.get("checked") is None:
        errors = [Diagnostic.error("ICE", "the session could not be checked")]
    return Checked(synth, result, errors, in_flight, warnings)


def map_diagnostic(display: SourceMap, diag: Diagnostic, sources: SourceMap, synth: Synth) -> Diagnostic:
    """`diag` with its spans moved from the synthesised program back into
    the entries they came from (labels on the REPL's glue are dropped)."""
    labels: list[Label] = []
    for label in diag.labels:
        span = _map_span(display, label.span, sources, synth)
        if span is not None:
            labels.append(dataclasses.replace(label, span=span))
    return dataclasses.replace(diag, labels=tuple(labels))


def _map_span(display: SourceMap, span: Span, sources: SourceMap, synth: Synth) -> Span | None:
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
    sf = display.by_name(name) or display.add(name, sources.get(span.file).text)
    return Span(sf.id, span.start, span.end)


def chunk_of(sf: SourceFile, span: Span) -> Chunk:
    return Chunk(sf.text[span.start : span.end], sf.id, span.start)


def item_name(item: Any) -> str | None:
    """The name an item defines: a `fn`'s, a `const`'s, or what a `use` of one
    item imports (`use std::nn::softmax;`); None for other `use`s."""
    from tilelang.syntax import ast

    if isinstance(item, (ast.FnDecl, ast.ConstDecl)):
        return item.name.name
    if isinstance(item, ast.UseDecl) and item.path and item.names is None and not item.glob:
        return item.path[-1].name
    return None


def name_span(item: Any) -> Span:
    from tilelang.syntax import ast

    if isinstance(item, ast.UseDecl):
        return item.path[-1].span if item.path else item.span
    return item.name.span  # type: ignore[no-any-return]


def item_of(sf: SourceFile, item: Any, base: str | None = None) -> Item:
    from tilelang.syntax import ast

    kind = "use"
    if isinstance(item, ast.FnDecl):
        kind = "kernel" if item.is_kernel else "fn"
    elif isinstance(item, ast.ConstDecl):
        kind = "const"
    return Item(chunk_of(sf, item.span), item_name(item), kind, base)


def apply_edits(chunk: Chunk, edits: list[tuple[int, int, str]]) -> Chunk:
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
    return Chunk("".join(text), chunk.file, chunk.base, tuple(origin))


def walk_ast(node: Any) -> Iterator[Any]:
    """`node` and every AST node below it (the shared walker)."""
    from tilelang.syntax.ast import walk

    return walk(node)
