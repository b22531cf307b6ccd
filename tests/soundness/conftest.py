"""Helpers shared by the soundness corpus tests: run only the parser, the type
checker (when it is there) and the ownership checker on one file."""

from __future__ import annotations

import re
from pathlib import Path

from tilelang.diagnostics.model import Diagnostic, DiagnosticSink
from tilelang.source import SourceFile, SourceMap

HERE = Path(__file__).resolve().parent
_ANNOT = re.compile(r"//(?P<up>~\^*)?\s*error\[(?P<code>E\d{4})\]")


def expected_errors(text: str) -> set[tuple[str, int]]:
    """(code, line) of every `// error[CODE]` / `//~^ error[CODE]` annotation."""
    out: set[tuple[str, int]] = set()
    for i, line in enumerate(text.splitlines(), start=1):
        for m in _ANNOT.finditer(line):
            up = (m.group("up") or "").count("^")
            out.add((m.group("code"), i - up))
    return out


def check_file(path: Path) -> tuple[SourceFile, list[Diagnostic], list[Diagnostic], object]:
    """Parse, type check and ownership check one file. Returns (file, type-checker diagnostics, ownership
    diagnostics, facts)."""
    from tilelang.ownership import check_ownership
    from tilelang.sema import check_program
    from tilelang.syntax.parser import parse

    sources = SourceMap()
    sf = sources.add(str(path), path.read_text(encoding="utf-8"))
    sink = DiagnosticSink()
    module = parse(sf, sink)
    assert not sink.has_errors, [d.message for d in sink.diagnostics]
    ssink = DiagnosticSink()
    program = check_program(module, sources, ssink)
    sema = [d for d in ssink.diagnostics if d.severity.value == "error"]
    osink = DiagnosticSink()
    facts = check_ownership(program, osink)
    return sf, sema, osink.diagnostics, facts


def located(sf: SourceFile, diags: list[Diagnostic]) -> set[tuple[str, int]]:
    out = set()
    for d in diags:
        span = d.primary_span
        out.add((d.code, sf.line_col(span.start)[0] if span else 0))
    return out
