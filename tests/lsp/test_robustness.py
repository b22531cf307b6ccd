"""The language server's analysis never raises, whatever the text: mutated
examples (what a user has half typed) and a crashing compiler stage."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tilelang import driver
from tilelang.lsp import analysis as A

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = [p.read_text(encoding="utf-8") for p in sorted((REPO / "examples").glob("*.tile"))]
PIECES = ["{", "}", "(", ")", "[", "]", "<", ">", ";", ",", ".", "::", "&mut ", "&", "let ",
          "fn ", "kernel ", "x", "B", "1.5f16", "\"", "/*", "*/", "//", "\n", " ", "?", "#[",
          "load_like(", "zeros::<f32>(", "for i in 0..", "é", "😀"]


@st.composite
def edited_example(draw: st.DrawFn) -> tuple[str, list[int]]:
    text = draw(st.sampled_from(EXAMPLES))
    for _ in range(draw(st.integers(1, 4))):
        start = draw(st.integers(0, len(text)))
        end = draw(st.integers(start, min(len(text), start + 40)))
        insert = "".join(draw(st.lists(st.sampled_from(PIECES), max_size=4)))
        text = text[:start] + insert + text[end:]
    offsets = draw(st.lists(st.integers(0, len(text)), min_size=1, max_size=8))
    return text, offsets


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edited_example())
def test_queries_on_edited_examples_never_raise(case: tuple[str, list[int]]) -> None:
    text, offsets = case
    an = A.analyze(text, str(REPO / "examples" / "edited.tile"))
    assert an.internal_error is None, an.internal_error
    for offset in offsets:
        A.hover(an, offset)
        A.definition(an, offset)
        A.references(an, offset)
        A.completions(an, offset)
        A.signature_help(an, offset)
    A.document_symbols(an)
    A.inlay_hints(an)
    A.semantic_tokens(an)


def test_a_crashing_stage_becomes_a_warning_and_keeps_the_syntax_view(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(module: object, ctx: object) -> object:
        raise RuntimeError("the checker fell over")

    stage = driver.STAGES["checked"]
    monkeypatch.setitem(driver.STAGES, "checked", driver.Stage("checked", boom, stage.input, stage.doc))
    text = "fn main() {\n    let a = 1;\n    print(a);\n}\n"
    an = A.analyze(text, "t.tile")
    assert an.internal_error is not None and "the checker fell over" in an.internal_error
    assert an.module is not None  # the parse still happened
    assert A.definition(an, text.index("a);")) is not None  # syntactic fallback

    from tilelang.lsp import server

    diags = server._diagnostics(an, "file:///t.tile")
    assert [d.severity for d in diags] == [server.lsp.DiagnosticSeverity.Warning]
    assert "internal compiler error" in diags[0].message and "please report" in diags[0].message
