"""The parser keeps its syntax errors when Lark's modules are dropped (hfix2, after hfix's note).

A run that drops Lark's modules from `sys.modules` (pytester's in-process runs restore `sys.modules`,
dropping what they imported) leaves the parser's cached Lark raising the old copy's exceptions, while
a later `import lark` makes new classes: the parser caught Lark's `UnexpectedInput` by a fresh
import's class, so a syntax error became an internal error (13 tests of one worker failed so), and
`errors.py`, imported again, tested the old copy's tokens against the new classes. Both now tell
Lark's objects by their class names (`lalr.is_lark`)."""

from __future__ import annotations

import sys

from tilelang.diagnostics.model import DiagnosticSink
from tilelang.source import SourceMap
from tilelang.syntax.parser import is_incomplete, parse

BAD = ["fn main() { let = 1; }\n", "fn main() { let x = 1 @ 2; }\n", "kernel k() {}\n"]


def _diagnostics(text: str) -> list[tuple[str, str, list[str]]]:
    sources = SourceMap()
    sink = DiagnosticSink()
    parse(sources.add("t.tile", text), sink)
    return [(d.code, d.message, list(d.help)) for d in sink.diagnostics]


def _dropped(name: str) -> bool:
    return name == "lark" or name.startswith("lark.") or name == "tilelang.syntax.errors"


def test_syntax_errors_survive_a_fresh_copy_of_lark() -> None:
    before = [_diagnostics(t) for t in BAD]  # (builds the cached Lark parsers with this copy)
    assert all(d and d[0][0].startswith("E0") for d in before), before
    saved = {k: v for k, v in sys.modules.items() if _dropped(k)}
    try:
        for k in saved:
            del sys.modules[k]
        import lark

        assert lark is not saved["lark"]  # a new copy: its classes are not the cached parser's
        after = [_diagnostics(t) for t in BAD]
        incomplete = is_incomplete("fn main() {\n let x = 1;\n")
    finally:
        for k in [k for k in sys.modules if _dropped(k)]:
            del sys.modules[k]
        sys.modules.update(saved)
    assert after == before
    assert incomplete
