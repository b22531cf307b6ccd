"""The short and JSON renderers, colour handling, and robustness of the human one."""

from __future__ import annotations

import io
import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tilelang.diagnostics import render
from tilelang.diagnostics.model import Diagnostic
from tilelang.source import DUMMY_SPAN, SourceMap, Span

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def sample() -> tuple[SourceMap, list[Diagnostic]]:
    sm = SourceMap()
    sf = sm.add("dir/a.tile", "fn main() {\n    let b = &mut z;\n}\n")
    at = sf.text.index("&mut z")
    d = (
        Diagnostic.error("E0302", "cannot borrow `z` as mutable")
        .primary(Span(sf.id, at, at + 6), "second borrow")
        .secondary(Span(sf.id, 0, 2), "in here")
        .note("a note")
        .with_help("a help")
    )
    w = Diagnostic.warning("W0001", "something odd").primary(Span(sf.id, 3, 7))
    return sm, [d, w]


def test_short_is_one_line_per_diagnostic() -> None:
    sm, diags = sample()
    assert render.render_short(diags, sm) == (
        "dir/a.tile:2:13: error[E0302]: cannot borrow `z` as mutable\n"
        "dir/a.tile:1:4: warning[W0001]: something odd\n"
    )


def test_short_without_location() -> None:
    d = Diagnostic.error("E0102", "`main` function not found")
    assert render.render_short([d], SourceMap()) == "error[E0102]: `main` function not found\n"


def test_json_one_object_per_line_with_every_field() -> None:
    sm, diags = sample()
    lines = render.render_json(diags, sm).splitlines()
    assert len(lines) == 2
    obj = json.loads(lines[0])
    assert obj["code"] == "E0302"
    assert obj["severity"] == "error"
    assert obj["message"] == "cannot borrow `z` as mutable"
    assert obj["notes"] == ["a note"] and obj["help"] == ["a help"]
    primary, secondary = obj["labels"]
    assert primary == {
        "file": "dir/a.tile",
        "line": 2,
        "col": 13,
        "end_line": 2,
        "end_col": 19,
        "message": "second borrow",
        "primary": True,
    }
    assert secondary["primary"] is False and (secondary["line"], secondary["col"]) == (1, 1)
    assert json.loads(lines[1])["severity"] == "warning"


def test_colour_output_is_plain_output_plus_escapes() -> None:
    sm, diags = sample()
    plain = render.render_human(diags, sm, color=False)
    coloured = render.render_human(diags, sm, color=True)
    assert "\x1b[" in coloured
    assert ANSI.sub("", coloured) == plain


def test_use_color_choices(monkeypatch: pytest.MonkeyPatch) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    assert render.use_color("always", io.StringIO()) is True
    assert render.use_color("never", Tty()) is False
    assert render.use_color("auto", io.StringIO()) is False
    assert render.use_color("auto", Tty()) is True
    monkeypatch.setenv("NO_COLOR", "1")
    assert render.use_color("auto", Tty()) is False
    assert render.use_color("always", io.StringIO()) is True  # an explicit flag wins


def test_report_uses_configured_format() -> None:
    sm, diags = sample()
    before = render.settings()
    try:
        for fmt, check in (
            ("short", lambda s: s.startswith("dir/a.tile:2:13: error[E0302]")),
            ("json", lambda s: json.loads(s.splitlines()[0])["code"] == "E0302"),
            ("human", lambda s: "error: aborting due to 1 previous error; 1 warning emitted" in s),
        ):
            render.configure(format=fmt, color="never")
            buf = io.StringIO()
            render.report(diags, sm, file=buf)
            assert check(buf.getvalue()), buf.getvalue()
    finally:
        render.configure(format=before.format, color=before.color)


def test_configure_rejects_unknown_values() -> None:
    with pytest.raises(ValueError):
        render.configure(format="xml")
    with pytest.raises(ValueError):
        render.configure(color="sometimes")


def test_dummy_and_out_of_range_spans_do_not_crash() -> None:
    sm = SourceMap()
    sf = sm.add("x.tile", "ab\n")
    d = (
        Diagnostic.error("E0001", "odd spans")
        .primary(DUMMY_SPAN, "nowhere")
        .secondary(Span(sf.id, 50, 90), "past the end")
        .secondary(Span(7, 0, 1), "unknown file")
    )
    out = render.render_human([d], sm)
    assert out.startswith("error[E0001]: odd spans\n")
    assert "past the end" in out
    assert "nowhere" not in out  # a label that cannot be placed is dropped


def test_crlf_line_endings_are_not_shown() -> None:
    sm = SourceMap()
    sf = sm.add("w.tile", "fn main() {\r\n    x;\r\n}\r\n")
    at = sf.text.index("x")
    out = render.render_human(
        [Diagnostic.error("E0101", "m").primary(Span(sf.id, at, at + 1), "here")], sm
    )
    assert "\r" not in out
    assert "2 |     x;\n" in out


def test_overlapping_labels_primary_wins() -> None:
    sm = SourceMap()
    sf = sm.add("o.tile", "let abcdef = 1;\n")
    d = (
        Diagnostic.error("E0201", "m")
        .secondary(Span(sf.id, 4, 10), "outer")
        .primary(Span(sf.id, 6, 8), "inner")
    )
    out = render.render_human([d], sm, footer=False)
    assert "|     --^^--" in out


@given(
    text=st.text(alphabet="ab \t\n{}é字", max_size=40),
    spans=st.lists(st.tuples(st.integers(-3, 50), st.integers(-3, 50), st.booleans()), max_size=4),
)
def test_human_renderer_never_raises(text: str, spans: list[tuple[int, int, bool]]) -> None:
    sm = SourceMap()
    sf = sm.add("p.tile", text)
    d = Diagnostic.error("E0001", "m")
    for a, b, primary in spans:
        span = Span(sf.id, min(a, b), max(a, b))
        d = d.primary(span, "p") if primary else d.secondary(span, "s")
    out = render.render_human([d], sm)
    assert out.startswith("error[E0001]: m\n")
    assert render.render_short([d], sm).endswith("\n")
    for line in render.render_json([d], sm).splitlines():
        json.loads(line)


def test_many_labels_on_one_long_line_read_its_columns_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # hrev round 8: each label summed the widths of its line's prefix again
    # (and re-expanded and re-cut the line): 900 errors on one generated line
    # of 7,000 characters took 30 s to render; the columns are computed once
    render._columns.cache_clear()
    render._expand.cache_clear()
    sm = SourceMap()
    line = "    let b = " + " + ".join(f"x{i}" for i in range(300)) + ";"
    sf = sm.add("long.tile", "fn main() {\n" + line + "\n}\n")
    at = [sf.text.index(f"x{i} ") if i < 299 else sf.text.index("x299;") for i in range(300)]
    diags = [Diagnostic.error("E0101", f"cannot find value `x{i}`").primary(Span(sf.id, a, a + 1 + len(str(i))),
                                                                          "not found")
             for i, a in enumerate(at)]
    calls = 0
    width = render._char_width

    def counted(ch: str) -> int:
        nonlocal calls
        calls += 1
        return width(ch)

    monkeypatch.setattr(render, "_char_width", counted)
    out = render.render_human(diags, sm, color=False)
    assert out.count("error[E0101]") == 300 and "x299" in out
    assert calls < 10 * len(sf.text)  # was 300 times the line, and more
