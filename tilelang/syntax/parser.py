"""The parser: Tile source text -> `ast.Module`, with syntax diagnostics.

Entry points:
- `parse(source, sink) -> ast.Module` for a whole file;
- `parse_repl(source, sink) -> ReplInput` for REPL input (items, then
  statements and an optional tail expression);
- `parse_expr(source, sink) -> ast.Expr | None` for one expression;
- `is_incomplete(text) -> bool`: would more input make this REPL text valid?
  (an open delimiter, string or comment, or the parser wanting more at the end).

How it works: the lexical pre-pass (`lexical.py`) blanks comments and checks
delimiters; `lalr.py` runs Lark's LALR tables for `grammar/tile.lark` (with
the contextual lexer's rules) in a fast loop of its own; the builder
(`build.py`) makes the AST; on a failure Lark itself parses again, and
`errors.py` words its exception.
On a syntax error the file is re-parsed item by item (an item starts at a
line that begins with `fn`, `kernel`, `const`, `use` or `#[` in column 0), so
one broken function does not hide the rest: each broken item gets ONE
diagnostic and the intact items still reach the Module.

Invariants: these functions never raise on any input (an unexpected
exception inside Lark or the builder becomes an `ICE`, which is a bug);
every node has a span in the file's character offsets; the parser never
prints.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import hashlib
import os
import re
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from tilelang.diagnostics.model import Diagnostic, DiagnosticSink
from tilelang.frozen import frozen
from tilelang.limits import ensure_recursion_budget
from tilelang.resources import grammar_text
from tilelang.source import SourceFile, Span
from tilelang.syntax import ast
from tilelang.syntax.build import KEYWORDS, Builder, TooDeep, too_deep
from tilelang.syntax.lalr import Reject, Tables, from_lark, is_lark
from tilelang.syntax.lexical import LexProblem, Scan, check_delimiters, scan

if TYPE_CHECKING:
    from lark import Lark, Token

    from tilelang.syntax.errors import ErrorReporter, Vocabulary

# Lark is imported only when a parse fails (to word the error) or when the
# parse tables are not in their cache file yet: a program that parses does
# not pay for importing it.


class _SyntaxError(Exception):
    """Lark's syntax error (`UnexpectedInput`) as the parser's callers catch it: `_parse_tree` turns the
    exception of whichever copy of Lark's modules raised it into this one (`lalr.is_lark`); an `except` of a
    freshly imported `UnexpectedInput` missed the cached parser's after a run dropped Lark's modules (hfix)."""

    def __init__(self, error: Any) -> None:
        super().__init__(str(error))
        self.error = error


# A node of Lark's parse tree (a `Tree` or a `Token`); its shape is the grammar's,
# which the type checker cannot see, so it is `Any` here.
PT = Any

__all__ = ["ReplInput", "is_incomplete", "lark_parser", "parse", "parse_expr", "parse_repl"]

START_RULES = ("module", "repl_input", "expr_input")


@frozen
class ReplInput:
    """One REPL entry: its items (defined first) and its statements.

    `body` holds the statements in order; its `tail` is the expression whose
    value the REPL shows (e.g. `x + 1` without `;`).
    """
    items: tuple[ast.Item, ...]
    body: ast.Block
    span: Span


def _keyword(tok: Token) -> Token:
    """Make a keyword a keyword token even where the parser expects a name.

    The contextual lexer only tries the terminals the parser state accepts,
    so where a name is expected `fn` would come out as NAME; retyping it
    (Lark names a keyword's terminal by its upper-case text) lets
    `errors.py` say "expected identifier, found keyword `fn`", and lets a
    stray `else` be seen as `else`.
    """
    if tok.value in KEYWORDS:
        tok.type = tok.value.upper()
    return tok


@functools.cache
def lark_parser() -> Lark:
    """The one Lark parser (built once; Lark caches the tables on disk)."""
    from lark import Lark

    options: dict[str, Any] = {"parser": "lalr", "lexer": "contextual", "propagate_positions": True,
               "maybe_placeholders": True, "start": list(START_RULES),
               "lexer_callbacks": {"NAME": _keyword}}
    try:
        return Lark(grammar_text(), cache=True, **options)
    except OSError:  # a read-only temp dir: build without the disk cache
        return Lark(grammar_text(), **options)


@functools.cache
def _error_lark() -> Lark:
    """A Lark parser for finding errors only: its reductions build nothing
    (Lark's tree building is most of its time on a long item), except the
    `number` trees the error reporter looks at and the `?rule`s that pass
    them up; so its exception is the one `lark_parser()` raises, as far as the
    reporter reads it, for about half the work."""
    from lark import Lark, Tree

    global _PLACEHOLDER
    _PLACEHOLDER = Tree("_built_nothing", [])
    p = lark_parser()
    err = Lark.__new__(Lark)
    err.__dict__.update(p.__dict__)
    frontend = copy.copy(p.parser)
    lalr = copy.copy(frontend.parser)
    inner = copy.copy(lalr.parser)
    inner.callbacks = {rule: (cb if rule.options.expand1 or (rule.alias or rule.origin.name) == "number"
                              else _nothing)
                       for rule, cb in inner.callbacks.items()}  # `?rule`s pass their child up
    lalr.parser = inner
    frontend.parser = lalr
    err.parser = frontend
    return err


def _nothing(children: Any) -> Any:
    return _PLACEHOLDER


_PLACEHOLDER: Any = None  # a childless Tree, made with the first error parser


@functools.cache
def _tables() -> Tables:
    """The fast parser's tables: from the cache file when there is one for
    this grammar, this driver and this Lark, else built from Lark and saved."""
    path = _table_cache_path()
    if path is not None:
        try:
            return Tables.thaw(path.read_bytes())
        except Exception:  # absent, stale or damaged: build afresh
            pass
    tables = Tables(lark_parser(), KEYWORDS)
    if path is not None:
        try:
            tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
            tmp.write_bytes(tables.freeze())
            os.replace(tmp, path)  # atomic: a concurrent reader sees all or nothing
        except OSError:
            pass  # a read-only temp dir: parse without the cache
    return tables


def _table_cache_path() -> Path | None:
    """`<tmp>/tilec-parser-<key>.marshal`, next to Lark's own cache; the key
    covers the grammar, the fast driver's code, the keywords, Lark's version
    and Python's (marshal's format)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("lark")
        lark_init = Path(spec.origin).read_bytes() if spec and spec.origin else b""
        h = hashlib.sha256()
        for part in (grammar_text().encode(), Path(__file__).with_name("lalr.py").read_bytes(),
                     " ".join(sorted(KEYWORDS)).encode(), lark_init, sys.version.encode()):
            h.update(hashlib.sha256(part).digest())
        return Path(tempfile.gettempdir()) / f"tilec-parser-{h.hexdigest()[:24]}.marshal"
    except (OSError, ValueError, ImportError):
        return None


def _parse_tree(code: str, rule: str, lo: int = 0, stop: int | None = None) -> PT:
    """The parse tree of `code[lo:stop]` from `rule`, offsets into `code`.

    Raises `_SyntaxError` on a syntax error: the fast driver's failures are
    parsed again by Lark, whose exception (its `error`) `errors.py` reads.
    """
    stop = len(code) if stop is None else stop
    try:
        return _tables().parse(code, rule, lo, stop)
    except Reject:
        pass
    try:
        _error_lark().parse(code[lo:stop], start=rule)  # raises Lark's exception, cheaply
    except Exception as e:
        if is_lark(e, "UnexpectedInput"):
            raise _SyntaxError(e) from None
        raise
    return from_lark(lark_parser().parse(code[lo:stop], start=rule), lo)  # accepted after all


@functools.cache
def _vocabulary() -> Vocabulary:
    from tilelang.syntax.errors import Vocabulary

    return Vocabulary(lark_parser().terminals)


# A line that starts an item (column 0). Used only after a syntax error.
_ITEM_LINE = re.compile(r"^(?:#\s*\[|kernel\b|fn\b|const\b|use\b)", re.MULTILINE)


def _item_starts(code: str) -> list[int]:
    starts = [0]
    for m in _ITEM_LINE.finditer(code):
        at = m.start()
        if at == 0:
            continue
        before = at
        while before > 0 and code[before - 1].isspace():
            before -= 1
        if before > 0 and code[before - 1] == "]":
            continue  # after an attribute `#[...]`: it belongs to this item
        starts.append(at)
    return starts


class _Session:
    """One parse of one source: the scan, the reporter, the sink."""

    def __init__(self, source: SourceFile, sink: DiagnosticSink) -> None:
        self.source = source
        self.sink = sink
        self.scan: Scan = scan(source.text)
        self._reporter: ErrorReporter | None = None
        self.whole_error: tuple[Diagnostic, int] | None = None
        for p in self.scan.bidi:  # E0024: reported, and the parse goes on
            sink.emit(self.reporter.lex_problem(p))

    @property
    def reporter(self) -> ErrorReporter:
        """Made on the first error (it needs Lark's vocabulary)."""
        if self._reporter is None:
            from tilelang.syntax.errors import ErrorReporter

            self._reporter = ErrorReporter(_vocabulary(), self.source.id, self.scan.code, self.source.text)
        return self._reporter

    def run(self, start: int, stop: int, rule: str) -> PT | None:
        """Parse `code[start:stop]` from `rule`; report the first error."""
        try:
            return _parse_tree(self.scan.code, rule, start, stop)
        except _SyntaxError as f:
            e = f.error
            self.sink.emit(self.reporter.parse_error(e, start, stop, rule))
            return None

    def literal_cut(self) -> int:
        """Offset of the first unterminated string/comment (the text after it is blank)."""
        cut = len(self.source.text)
        for p in self.scan.problems:
            if p.kind in ("unterminated-string", "unterminated-comment"):
                cut = min(cut, p.at)
        return cut


def parse(source: SourceFile, sink: DiagnosticSink) -> ast.Module:
    """Parse a whole `.tile` file. Returns a (possibly partial) Module."""
    whole = Span(source.id, 0, len(source.text))
    ensure_recursion_budget()
    try:
        s = _Session(source, sink)
        if not s.scan.problems:
            try:
                tree = _parse_tree(s.scan.code, "module")
            except _SyntaxError as f:
                e = f.error
                s.whole_error = (s.reporter.parse_error(e, 0, len(s.scan.code), "module"),
                                 _error_offset(e, len(s.scan.code)))
            else:
                local = DiagnosticSink()
                module = Builder(source.id, local, text=s.scan.code).module(tree)
                sink.extend(local.diagnostics)
                return ast.Module(module.items, whole)
        return _parse_by_items(s, whole)
    except Exception as exc:  # a bug in tilec, not the user's fault
        raise _ice(exc) from exc


# A process's parsed files, by what a parse reads: the file's name, its id in the SourceMap (the AST's spans
# carry it) and its text. Every compile of a program that `use`s std parses the same std files again (a quarter
# of an engine build's time), and `tilec run`, the tests and the API compile one program's text several times
# (checked, then run); the AST is immutable (frozen nodes), so compiles can share one. Only parses without a
# diagnostic are kept (a failing one reports its errors again each time). Bounded: emptied past
# `_PARSED_LIMIT` files or `_PARSED_CHARS` characters of text.
_PARSED: dict[tuple[int, str, str], ast.Module] = {}
_PARSED_LIMIT = 512
_PARSED_CHARS = 1 << 21
_parsed_chars = 0  # the texts' characters `_PARSED` holds


def parse_once(source: SourceFile, sink: DiagnosticSink) -> ast.Module:
    """`parse(source, sink)`, once a process for a text that parses cleanly (the same `ast.Module`)."""
    global _parsed_chars
    ensure_recursion_budget()  # (as `parse` does: the stages after it walk the tree recursively)
    key = (source.id, source.name, source.text)
    module = _PARSED.get(key)
    if module is not None:
        return module
    local = DiagnosticSink()
    module = parse(source, local)
    sink.extend(local.diagnostics)
    if not local.diagnostics:
        if len(_PARSED) >= _PARSED_LIMIT or _parsed_chars + len(source.text) > _PARSED_CHARS:
            _PARSED.clear()
            _parsed_chars = 0
        _PARSED[key] = module
        _parsed_chars += len(source.text)
    return module


def _error_offset(e: Any, end: int) -> int:
    tok = getattr(e, "token", None)
    if tok is not None:
        return end if tok.type == "$END" else tok.start_pos
    return getattr(e, "pos_in_stream", end) or 0


def _parse_error_first(code: str, lo: int, stop: int, problem: LexProblem) -> bool:
    """Whether a stray closer is better explained by a parse error before it.

    `fn main() let x = 1; }` has a stray `}`, but the real mistake is the
    missing `{`, which the parser sees first.
    """
    if problem.kind != "unexpected-closer":
        return False
    try:
        _tables().parse(code, "module", lo, stop)
    except Reject as r:
        if r.at is not None:  # where Lark's error is: no need to run Lark
            return r.at - lo < problem.at
    else:
        return False
    try:
        _parse_tree(code, "module", lo, stop)
    except _SyntaxError as f:
        e = f.error
        return _error_offset(e, stop - lo) < problem.at
    return False


def _quiet_parse(s: _Session, start: int, stop: int, rule: str) -> PT | None:
    try:
        return _parse_tree(s.scan.code, rule, start, stop)
    except _SyntaxError:
        return None


def _parse_by_items(s: _Session, whole: Span) -> ast.Module:
    """Recovery after an error: parse each top-level item on its own."""
    code = s.scan.code
    cut = s.literal_cut()
    starts = _item_starts(code)
    bounds = list(zip(starts, [*starts[1:], len(code)], strict=True))
    items: list[ast.Item] = []
    reported = False
    for lo, hi in bounds:
        if lo >= cut and lo > 0:
            break
        contains_cut = lo <= cut < hi
        stop = min(hi, cut)
        delim = check_delimiters(s.scan.skeleton[lo:stop])
        if contains_cut:
            # The unterminated literal is the error to report here; the
            # truncated item would only add a cascade of noise.
            tree = None if delim else _quiet_parse(s, lo, stop, "module")
        elif delim and not _parse_error_first(code, lo, stop, delim[0]):
            p = delim[0]
            if p.kind == "unclosed":
                # Secondary label: the end of the file, or where the next item starts.
                other = hi if hi < len(code) else -1
            else:
                other = p.other + lo if p.other >= 0 else -1
            suspect = (p.suspect[0] + lo, p.suspect[1] + lo) if p.suspect else None
            shifted = dataclasses.replace(p, at=p.at + lo, other=other, suspect=suspect)
            s.sink.emit(s.reporter.lex_problem(shifted))
            reported = True
            continue
        elif s.whole_error is not None and len(bounds) == 1 and stop == len(code):
            # one item, the whole file: its error is the whole file's (Lark
            # already parsed it once; a second parse would cost as much again)
            tree = None
            reported = True
            s.sink.emit(s.whole_error[0])
        else:
            tree = None
            try:
                tree = _parse_tree(code, "module", lo, stop)
            except _SyntaxError as f:
                e = f.error
                reported = True
                diag = s.reporter.parse_error(e, lo, stop, "module")
                if s.whole_error is not None and lo <= s.whole_error[1] <= hi:
                    # The whole file's error lies here (or just after, when this
                    # item ran into the next one): it has the better context.
                    diag = s.whole_error[0]
                s.sink.emit(diag)
        if tree is not None:
            local = DiagnosticSink()
            b = Builder(s.source.id, local, base=lo, text=code)
            items.extend(b.module(tree).items)
            s.sink.extend(local.diagnostics)
    for p in s.scan.problems:
        if p.kind in ("unterminated-string", "unterminated-comment"):
            s.sink.emit(s.reporter.lex_problem(p))
            reported = True
            break
    if not reported:
        # The pieces parse but the whole does not: report the whole file's error.
        if s.whole_error is not None:
            s.sink.emit(s.whole_error[0])
        else:
            s.run(0, len(code), "module")
    return ast.Module(tuple(items), whole)


_T = TypeVar("_T")


def _parse_whole(source: SourceFile, sink: DiagnosticSink, rule: str,
                 build: Callable[[Builder, Any], _T]) -> _T | None:
    """Parse all of `source` as the grammar's `rule` and `build` the AST from
    its tree. None (and one diagnostic) on error."""
    ensure_recursion_budget()
    try:
        s = _Session(source, sink)
        if _report_lexical(s):
            return None
        tree = s.run(0, len(s.scan.code), rule)
        if tree is None:
            return None
        local = DiagnosticSink()
        try:
            out = build(Builder(source.id, local, text=s.scan.code), tree)
        except TooDeep as e:
            sink.extend(local.diagnostics)
            sink.emit(too_deep(e.span, e.chain))
            return None
        sink.extend(local.diagnostics)
        return out
    except Exception as exc:
        raise _ice(exc) from exc


_REPL_ITEMS = ("fn_decl", "const_decl", "use_decl", "use_file")


def parse_repl(source: SourceFile, sink: DiagnosticSink) -> ReplInput | None:
    """Parse REPL input: items and statements. None (and one diagnostic) on error."""

    def build(b: Builder, tree: Any) -> ReplInput:
        *elems, tail = tree.children
        items = [b.item(t) for t in elems if t.data in _REPL_ITEMS]
        stmt_trees = [t for t in elems if t.data not in _REPL_ITEMS]
        whole = Span(source.id, 0, len(source.text))
        return ReplInput(tuple(items), b.block_from_parts(stmt_trees, tail, whole), whole)

    return _parse_whole(source, sink, "repl_input", build)


def parse_expr(source: SourceFile, sink: DiagnosticSink) -> ast.Expr | None:
    """Parse one expression. None (and one diagnostic) on error."""
    return _parse_whole(source, sink, "expr_input", lambda b, tree: b.expr(tree.children[0]))


def is_incomplete(text: str) -> bool:
    """True when `text` is a valid beginning of REPL input that needs more lines."""
    sc = scan(text)
    if sc.problems:
        # More text can close what is open, but not fix a mismatched or stray closer.
        return sc.problems[0].kind in ("unterminated-string", "unterminated-comment", "unclosed")
    try:
        _parse_tree(sc.code, "repl_input")
    except _SyntaxError as f:
        e = f.error
        tok = getattr(e, "token", None)
        return tok is not None and tok.type == "$END"
    return False


def parses_as_repl_input(text: str) -> bool:
    """True when `text` is whole REPL input with no syntax error."""
    sc = scan(text)
    if sc.problems:
        return False
    try:
        _parse_tree(sc.code, "repl_input")
    except _SyntaxError:
        return False
    return True


def completed_by_semicolon(text: str) -> bool:
    """True when `text` is REPL input that ends where a statement's `;` is
    missing and nothing else (`let x = 5`): submitted so, the REPL
    adds the `;` (Enter still continues such an entry: the next line may go
    on with it, `.sum();`)."""
    sc = scan(text)
    if sc.problems or not text.strip():
        return False
    try:
        _parse_tree(sc.code, "repl_input")
        return False  # complete as it is
    except _SyntaxError as f:
        e = f.error
        tok = getattr(e, "token", None)
        if tok is None or tok.type != "$END":
            return False
    try:
        _parse_tree(sc.code.rstrip() + ";", "repl_input")
    except _SyntaxError:
        return False
    return True


def _report_lexical(s: _Session) -> bool:
    if s.scan.problems:
        s.sink.emit(s.reporter.lex_problem(s.scan.problems[0]))
        return True
    return False


def _ice(exc: Exception) -> Exception:
    from tilelang.diagnostics.model import ICE
    return ICE(f"the parser failed on this input: {type(exc).__name__}: {exc}")
