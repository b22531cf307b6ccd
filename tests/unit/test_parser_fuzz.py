"""Fuzzing the parser: any input gives a Module and syntax diagnostics, never an exception.

Inputs are real programs (the examples) with random edits, and random
sequences of Tile tokens. Each diagnostic must be a registered syntax code
with a primary label inside the text, in people's words.
"""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tilelang.diagnostics.codes import REGISTRY
from tilelang.diagnostics.model import DiagnosticSink
from tilelang.source import SourceMap
from tilelang.syntax import ast
from tilelang.syntax.parser import is_incomplete, parse, parse_expr, parse_repl

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = [p.read_text() for p in sorted((ROOT / "examples").glob("*.tile"))] or [
    "fn main() { let x = 1; }\n"]

TOKENS = ["fn", "kernel", "let", "mut", "if", "else", "for", "in", "while", "return", "break",
          "const", "use", "unsafe", "graph", "as", "true", "x", "y", "f32", "Tensor", "1",
          "2.0f16", "0xFF", "1u7", '"s"', '"\\q"', "(", ")", "[", "]", "{", "}", "<", ">", ",",
          ";", ":", "::", ".", "..", "=", "==", "+", "-", "*", "/", "&", "&&", "|", "!", "?",
          "#", "->", "@", "'", "/*", "*/", "//", "\n", " ", "_", "..="]

_SETTINGS = settings(max_examples=100, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow])


def _check(text: str) -> None:
    sm = SourceMap()
    src = sm.add("fuzz.tile", text)
    sink = DiagnosticSink()
    module = parse(src, sink)
    assert isinstance(module, ast.Module)
    for d in sink.diagnostics:
        assert d.code in REGISTRY and d.code.startswith("E00"), d.code
        span = d.primary_span
        assert span is not None and 0 <= span.start <= span.end <= len(text), d
        words = " ".join([d.message, *(lbl.message for lbl in d.labels), *d.help])
        # the parser's own token reprs and anonymous terminals, unless the
        # input itself wrote that word (an identifier `__ANON` is quoted back)
        assert all(w not in words or w in text for w in ("Token(", "__ANON")), words
        # a grammar terminal's name in a message, unless the input itself wrote that word
        m = re.search(r"\b(SEMICOLON|LPAR|RPAR|LBRACE|RBRACE|NAME|NUMBER)\b", words)
        assert m is None or m.group(0) in text, words
    sink = DiagnosticSink()
    parse_repl(sm.add("<repl>", text), sink)
    parse_expr(sm.add("<expr>", text), sink)
    is_incomplete(text)


@_SETTINGS
@given(st.sampled_from(PROGRAMS), st.data())
def test_edited_programs_never_crash(program: str, data: st.DataObject) -> None:
    text = program
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(text)))
        j = data.draw(st.integers(i, min(len(text), i + 20)))
        insert = data.draw(st.lists(st.sampled_from(TOKENS), max_size=3))
        text = text[:i] + " ".join(insert) + text[j:]
    _check(text)


@_SETTINGS
@given(st.lists(st.sampled_from(TOKENS), max_size=40))
def test_token_soup_never_crashes(tokens: list[str]) -> None:
    _check(" ".join(tokens))


@_SETTINGS
@given(st.text(max_size=60))
def test_arbitrary_text_never_crashes(text: str) -> None:
    _check(text)


def test_every_prefix_of_a_program_never_crashes() -> None:
    program = PROGRAMS[0]
    for end in range(0, len(program), 7):
        _check(program[:end])
