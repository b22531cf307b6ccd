"""The language server's queries, in-process (no LSP): hover, definition,
symbols, completion, signature help, and the LSP conversions of positions
and diagnostics."""

from __future__ import annotations

from pathlib import Path

import pytest

from tilelang.diagnostics.model import Diagnostic
from tilelang.lsp import analysis as A
from tilelang.source import Span

REPO = Path(__file__).resolve().parents[2]

SOFTMAX = """\
use std::nn::softmax;

const COLS: i32 = 128;

kernel fn softmax_rows<const BM: i32, const N: i32>(y: &mut Tensor<f32, [BM, N]>,
                                                    x: &Tensor<f32, [?, N]>) {
    let t = x.load_like(y);
    y.store(softmax(t));
}

fn main() {
    let m = 300;
    let x = randn::<f32>([m, COLS], 7) * 3.0;
    let mut y = zeros::<f32>([m, COLS]);
    softmax_rows(y.partition([16, COLS]), &x).sync();
    let e = exp(x - x.max(1).reshape([m, 1]));
    print(e.sum());
}
"""


@pytest.fixture(scope="module")
def an() -> A.Analysis:
    return A.analyze(SOFTMAX, str(REPO / "examples" / "lsp_softmax.tile"))


def at(text: str, needle: str, delta: int = 0, occurrence: int = 1) -> int:
    idx = -1
    for _ in range(occurrence):
        idx = text.index(needle, idx + 1)
    return idx + delta


def test_analysis_of_a_good_program_has_no_errors(an: A.Analysis) -> None:
    assert an.module is not None and an.parsed_cleanly
    assert an.internal_error is None
    assert [d for d in an.diagnostics if d.severity.value == "error"] == []


def test_hover_shows_types_from_the_checker(an: A.Analysis) -> None:
    h = A.hover(an, at(SOFTMAX, "t = x.load"))
    assert h is not None and "let t: Tile<f32, [BM, N]>" in h.markdown
    h = A.hover(an, at(SOFTMAX, "x - x.max"))
    assert h is not None and "Tensor<f32, [300, 128]>" in h.markdown
    # an operator: the type of the whole expression
    h = A.hover(an, at(SOFTMAX, "- x.max"))
    assert h is not None and "Tensor<f32, [300, 128]>" in h.markdown


def test_hover_on_declarations_and_builtins(an: A.Analysis) -> None:
    h = A.hover(an, at(SOFTMAX, "softmax(t)"))
    assert h is not None
    assert "fn softmax<const M: i32, const N: i32>(x: Tile<f32, [M, N]>)" in h.markdown
    h = A.hover(an, at(SOFTMAX, "COLS], 7"))
    assert h is not None and "const COLS: i32" in h.markdown
    h = A.hover(an, at(SOFTMAX, "BM, N]>,"))
    assert h is not None and "const BM: i32" in h.markdown
    h = A.hover(an, at(SOFTMAX, "randn"))
    assert h is not None and "randn::<T>" in h.markdown and "host" in h.markdown
    h = A.hover(an, at(SOFTMAX, "max(1)"))
    assert h is not None and "maximum" in h.markdown
    h = A.hover(an, at(SOFTMAX, "f32, [BM"))
    assert h is not None and "single precision" in h.markdown
    h = A.hover(an, at(SOFTMAX, "softmax_rows(y"))
    assert h is not None and "instantiated with `BM = 16`, `N = 128`" in h.markdown
    h = A.hover(an, at(SOFTMAX, "softmax_rows<", 3))
    assert h is not None and h.markdown.startswith("```tile\nkernel fn softmax_rows<")


def test_hover_outside_code_is_none(an: A.Analysis) -> None:
    assert A.hover(an, 0) is None  # the `use` keyword
    assert A.hover(an, len(SOFTMAX)) is None


def test_definition_of_locals_items_and_stdlib(an: A.Analysis) -> None:
    span = A.definition(an, at(SOFTMAX, "COLS], 7"))
    assert span == Span(an.file.id, at(SOFTMAX, "COLS:"), at(SOFTMAX, "COLS:") + 4)
    span = A.definition(an, at(SOFTMAX, "t));"))
    assert span is not None and span.start == at(SOFTMAX, "t = x.load")
    span = A.definition(an, at(SOFTMAX, "softmax_rows(y"))
    assert span is not None and span.start == at(SOFTMAX, "softmax_rows<")
    # a stdlib function: a location in stdlib/std/nn.tile
    span = A.definition(an, at(SOFTMAX, "softmax(t)"))
    assert span is not None
    target = an.sources.get(span.file)
    assert Path(target.name).name == "nn.tile"
    assert target.text[span.start : span.end] == "softmax"
    # builtins have no source
    assert A.definition(an, at(SOFTMAX, "randn")) is None


def test_use_paths_hover_and_jump_to_modules_and_items(an: A.Analysis) -> None:
    h = A.hover(an, at(SOFTMAX, "nn::softmax;"))
    assert h is not None and "mod std::nn" in h.markdown
    h = A.hover(an, at(SOFTMAX, "softmax;"))
    assert h is not None and "fn softmax<" in h.markdown
    span = A.definition(an, at(SOFTMAX, "nn::softmax;"))
    assert span is not None and Path(an.sources.get(span.file).name).name == "nn.tile"
    assert span.start == 0
    span = A.definition(an, at(SOFTMAX, "softmax;"))
    assert span is not None and an.sources.get(span.file).text[span.start : span.end] == "softmax"


def test_definition_falls_back_to_syntax_without_a_program() -> None:
    text = "fn main() {\n    let a = 1;\n    let b = a + 1;\n}\n"
    an = A.analyze(text, "t.tile")
    an.program = None  # as if the type checker had not run
    span = A.definition(an, at(text, "a + 1"))
    assert span is not None and span.start == at(text, "a = 1")
    h = A.hover(an, at(text, "a + 1"))
    assert h is not None and "let a" in h.markdown


def test_shadowing_resolves_to_the_innermost_binding() -> None:
    text = "fn main() {\n    let a = 1;\n    let a = a + 1;\n    print(a);\n}\n"
    an = A.analyze(text, "t.tile")
    an.program = None
    assert A.definition(an, at(text, "a + 1")).start == at(text, "a = 1")  # type: ignore[union-attr]
    assert A.definition(an, at(text, "a);")).start == at(text, "a = a")  # type: ignore[union-attr]


def test_document_symbols(an: A.Analysis) -> None:
    syms = A.document_symbols(an)
    assert [(s.name, s.kind) for s in syms] == [
        ("std::nn::softmax", "import"), ("COLS", "const"), ("softmax_rows", "kernel"), ("main", "fn")]
    kernel = syms[2]
    assert [c.name for c in kernel.children] == ["BM", "N", "y", "x", "t"]
    assert an.span_text(kernel.selection) == "softmax_rows"
    assert [c.name for c in syms[3].children] == ["m", "x", "y", "e"]


def test_completion_in_a_kernel_and_on_the_host(an: A.Analysis) -> None:
    in_kernel = {c.label: c for c in A.completions(an, at(SOFTMAX, "    y.store"))}
    assert {"t", "x", "y", "BM", "N", "COLS", "softmax", "block_id", "exp", "let"} <= set(in_kernel)
    assert "randn" not in in_kernel  # host only
    assert in_kernel["block_id"].kind == "function" and "block_id(axis" in in_kernel["block_id"].detail
    on_host = {c.label for c in A.completions(an, at(SOFTMAX, "    print(e"))}
    assert {"m", "x", "y", "e", "softmax_rows", "randn", "assert_close"} <= on_host
    assert "block_id" not in on_host and "t" not in on_host
    # a `let` is not visible before its statement
    before = {c.label for c in A.completions(an, at(SOFTMAX, "    let m"))}
    assert "m" not in before and "e" not in before


def test_completed_calls_bring_their_parentheses_unless_present() -> None:
    text = "fn main() {\n    let x = zer;\n}\n"
    an = A.analyze(text, "t.tile")
    by_label = {c.label: c for c in A.completions(an, at(text, "zer", 3))}
    assert by_label["zeros"].snippet == "zeros::<$1>($0)"
    assert by_label["exp"].snippet == "exp($0)"
    assert by_label["main"].snippet == "main()$0"
    assert by_label["let"].snippet is None
    text = "fn main() {\n    let x = zer::<f32>([4]);\n}\n"
    an = A.analyze(text, "t.tile")
    assert all(c.snippet is None for c in A.completions(an, at(text, "zer", 3)))


def test_method_completion_is_filtered_by_the_receiver_type(an: A.Analysis) -> None:
    text = SOFTMAX.replace("    print(e.sum());", "    e.")
    half = A.analyze(text, "t.tile")
    labels = {c.label for c in A.completions(half, at(text, "    e.", 6), previous=an)}
    assert {"sum", "reshape", "clone", "save_npy"} <= labels
    assert "load_like" not in labels and "store" not in labels  # kernel-parameter methods


def test_use_completion_lists_stdlib_modules_and_items(an: A.Analysis) -> None:
    text = "use std::"
    half = A.analyze(text, "t.tile")
    assert {"nn", "math"} <= {c.label for c in A.completions(half, len(text))}
    text = "use std::nn::so"
    half = A.analyze(text, "t.tile")
    labels = {c.label for c in A.completions(half, len(text))}
    assert {"softmax", "layernorm", "gelu"} <= labels


def test_qualified_path_completion_lists_the_modules_items() -> None:
    text = "fn main() { let n = std::math::cd"
    half = A.analyze(text, "t.tile")
    assert "cdiv" in {c.label for c in A.completions(half, len(text))}
    text = "fn main() { let n = nosuch::x::"
    assert A.completions(A.analyze(text, "t.tile"), len(text)) == []


def test_completion_inside_attributes() -> None:
    text = "#["
    from tilelang.sema.items import KNOWN_ATTRIBUTES

    labels = [c.label for c in A.completions(A.analyze(text, "t.tile"), len(text))]
    assert labels[0] == "hints" and sorted(labels) == sorted(KNOWN_ATTRIBUTES)  # it offered `hints` only
    text = "#[hints(num_warps = 4, "
    labels = [c.label for c in A.completions(A.analyze(text, "t.tile"), len(text))]
    assert "stages" in labels and "num_warps" not in labels


def test_signature_help_for_builtins_kernels_and_methods(an: A.Analysis) -> None:
    text = "fn main() {\n    let x = full::<f32>([4], "
    sh = A.signature_help(A.analyze(text, "t.tile"), len(text))
    assert sh is not None and sh.label.startswith("full::<T>(shape")
    start, end = sh.params[sh.active]
    assert sh.label[start:end] == "value"
    # commas inside an array argument do not count
    text = "fn main() {\n    let x = full::<f32>([4, 5"
    sh = A.signature_help(A.analyze(text, "t.tile"), len(text))
    assert sh is not None and sh.active == 0
    # a user kernel, from the last analysis that parsed
    text = SOFTMAX.replace("    print(e.sum());", "    softmax_rows(y.partition([16, COLS]), ")
    sh = A.signature_help(A.analyze(text, "t.tile"), at(text, "COLS]), ", 8), previous=an)
    assert sh is not None and sh.label.startswith("kernel fn softmax_rows<const BM: i32, const N: i32>(")
    start, end = sh.params[sh.active]
    assert sh.label[start:end] == "x: &Tensor<f32, [?, N]>"
    # a method
    text = "fn main() {\n    x.reshape("
    sh = A.signature_help(A.analyze(text, "t.tile"), len(text))
    assert sh is not None and "reshape" in sh.label
    # not in a call
    assert A.signature_help(an, at(SOFTMAX, "    let m")) is None


@pytest.mark.parametrize(
    "text",
    ["", "fn", "kernel", "}}}", "fn main() { let x = ", "\"open string", "/* open comment",
     "fn main() { exp(x.", "use std::", "#[hints(", "kernel fn k<const B: i32>(z: &mut Tensor<",
     "fn main() {\n\tlet é = 1;\n}\n", "\x00\x01"],
)
def test_queries_never_raise(text: str) -> None:
    an = A.analyze(text, "t.tile")
    for offset in range(len(text) + 1):
        A.hover(an, offset)
        A.definition(an, offset)
        A.completions(an, offset)
        A.signature_help(an, offset)
    A.document_symbols(an)


def test_references_with_and_without_the_checker(an: A.Analysis) -> None:
    def starts(spans: list[Span]) -> list[int]:
        return [s.start for s in spans if s.file == an.file.id]

    cols = at(SOFTMAX, "COLS:")
    refs = A.references(an, at(SOFTMAX, "COLS], 7"))
    assert refs[0] == Span(an.file.id, cols, cols + 4)  # the declaration first
    assert starts(refs) == [cols, at(SOFTMAX, "COLS], 7"), at(SOFTMAX, "COLS]);"),
                            at(SOFTMAX, "COLS]), &x")]
    assert starts(A.references(an, at(SOFTMAX, "COLS], 7"), include_declaration=False)) == starts(refs)[1:]
    # the host `x` is not the kernel parameter `x`
    host_x = [at(SOFTMAX, "x = randn"), at(SOFTMAX, "x).sync"), at(SOFTMAX, "x - x.max"),
              at(SOFTMAX, "x.max")]
    assert starts(A.references(an, at(SOFTMAX, "x - x.max"))) == host_x
    assert A.references(an, at(SOFTMAX, "randn")) == []  # a builtin
    syntactic = A.analyze(SOFTMAX, "t.tile")
    syntactic.program = None
    assert starts(A.references(syntactic, at(SOFTMAX, "x - x.max"))) == host_x


def test_rename(an: A.Analysis) -> None:
    spans = A.rename_spans(an, at(SOFTMAX, "t = x.load"), "tile")
    assert isinstance(spans, list) and [an.span_text(s) for s in spans] == ["t", "t"]
    assert A.rename_spans(an, at(SOFTMAX, "t = x.load"), "fn") == "`fn` is not a valid name"
    # declared in the stdlib: refuse rather than edit one file of two
    assert isinstance(A.rename_spans(an, at(SOFTMAX, "softmax(t)"), "sm"), str)


def test_inlay_hints_show_inferred_types_and_const_generics(an: A.Analysis) -> None:
    hints = {(SOFTMAX[: h.offset].rsplit(None, 1)[-1], h.label) for h in A.inlay_hints(an)}
    assert ("t", ": Tile<f32, [BM, N]>") in hints
    assert ("x", ": Tensor<f32, [300, 128]>") in hints
    assert ("softmax_rows", "<BM = 16, N = 128>") in hints
    assert not [h for h in hints if h[1] in (": {integer}", ": {float}")]
    # only hints inside the requested range
    start = at(SOFTMAX, "fn main")
    assert all(h.offset >= start for h in A.inlay_hints(an, start, len(SOFTMAX)))
    assert A.inlay_hints(an, start, len(SOFTMAX)) != A.inlay_hints(an)


def test_semantic_tokens_classify_names(an: A.Analysis) -> None:
    tokens = {(an.span_text(t.span), t.span.start): (t.type, t.modifiers) for t in A.semantic_tokens(an)}

    def tok(needle: str, delta: int = 0) -> tuple[str, tuple[str, ...]]:
        start = at(SOFTMAX, needle, delta)
        (entry,) = [v for (text, s), v in tokens.items() if s == start]
        return entry

    assert tok("std::nn") == ("namespace", ())
    assert tok("softmax;") == ("function", ())
    assert tok("COLS:") == ("variable", ("declaration", "readonly"))
    assert tok("softmax_rows<") == ("function", ("declaration",))
    assert tok("BM: i32") == ("typeParameter", ("declaration", "readonly"))
    assert tok("y: &mut") == ("parameter", ("declaration", "mutable"))
    assert tok("x: &Tensor") == ("parameter", ("declaration",))
    assert tok("y.store") == ("parameter", ("mutable",))
    assert tok("store") == ("method", ("defaultLibrary",))
    assert tok("f32, [BM")[0] == "type"
    assert tok("mut y", 4) == ("variable", ("declaration", "mutable"))
    assert tok("randn") == ("function", ("defaultLibrary",))
    assert tok("BM, N]>,") == ("typeParameter", ("readonly",))
    starts = [t.span.start for t in A.semantic_tokens(an)]
    assert starts == sorted(starts)


def _apply(text: str, fix: A.QuickFix) -> str:
    for span, new in sorted(fix.edits, key=lambda e: -e[0].start):
        text = text[: span.start] + new + text[span.end :]
    return text


@pytest.mark.parametrize(
    ("text", "code", "title"),
    [
        ("fn main() {\n    let y = 1.0\n}\n", "E0001", "insert `;`"),
        ("fn main() {\n    let count = 1;\n    print(cuont);\n}\n", "E0101", "replace with `count`"),
        ("fn main() {\n    let t = zeroes::<f32>([4]);\n    print(t);\n}\n", "E0102", "replace with `zeros`"),
        ("fn main() {\n    let x = 1;\n    x = 2;\n    print(x);\n}\n", "E0108", "make `x` mutable"),
        ("kernel fn k(z: &mut Tensor<f32, [4]>) { z.store(zeros::<f32>([4])); }\n"
         "fn main() {\n    let z = zeros::<f32>([16]);\n    k(z.partition([4])).sync();\n}\n",
         "E0304", "make `z` mutable"),
    ],
)
def test_quick_fixes_repair_the_program(text: str, code: str, title: str) -> None:
    an = A.analyze(text, "t.tile")
    (diag,) = [d for d in an.diagnostics if d.severity.value == "error"]
    if diag.code != code:
        pytest.skip(f"the checker reports {diag.code} here now, not {code}")
    (fix,) = A.quick_fixes(an, diag)
    assert fix.title == title
    fixed = A.analyze(_apply(text, fix), "t.tile")
    assert [d for d in fixed.diagnostics if d.severity.value == "error"] == []


def test_a_misaligned_reduction_s_quick_fix_keeps_the_axis() -> None:
    # W0008 (huser14): `t - t.max(1)` of a square tile; the fix reshapes the reduction where it is
    text = ("kernel fn k<const B: i32>(y: &mut Tensor<f32, [B, B]>, x: &Tensor<f32, [?, ?]>) {\n"
            "    let t = x.load_like(y);\n    y.store(t - t.max(1));\n}\n"
            "fn main() {\n    let mut y = zeros::<f32>([4, 4]);\n    k(y.partition([4, 4]), &ones::<f32>([4, 4])).sync();\n}\n")
    an = A.analyze(text, "t.tile")
    (diag,) = [d for d in an.diagnostics if d.code == "W0008"]
    (fix,) = A.quick_fixes(an, diag)
    assert fix.title == "keep the reduced axis"
    fixed = _apply(text, fix)
    assert "t - t.max(1).reshape([B, 1])" in fixed
    assert A.analyze(fixed, "t.tile").diagnostics == []


def test_workspace_items_cover_the_document_and_loaded_modules(an: A.Analysis) -> None:
    items = {(name, kind) for name, kind, _ in A.workspace_items(an, "")}
    assert {("softmax_rows", "kernel"), ("main", "fn"), ("COLS", "const"),
            ("softmax", "fn"), ("layernorm", "fn")} <= items
    names = [name for name, _, _ in A.workspace_items(an, "lnorm")]
    assert "layernorm" in names and "softmax_rows" not in names


def test_document_links_resolve_use_files(tmp_path: Path) -> None:
    (tmp_path / "helper.tile").write_text("fn twice(x: f32) -> f32 { x * 2.0 }\n", encoding="utf-8")
    text = 'use "helper.tile";\nuse "missing.tile";\nfn main() {}\n'
    an = A.analyze(text, str(tmp_path / "main.tile"))
    links = A.document_links(an)
    assert [(an.span_text(span), path.name) for span, path in links] == [('"helper.tile"', "helper.tile")]


# ---------------------------------------------------------------- LSP conversion

from tilelang.lsp import server  # noqa: E402  (after the pure-analysis tests)


def test_positions_are_utf16_code_units() -> None:
    from tilelang.source import SourceMap

    text = 'fn main() {\n    print("😀", x);\n}\n'
    sf = SourceMap().add("t.tile", text)
    x = text.index("x);")
    pos = server._position(sf, x)
    # the emoji is one code point but two UTF-16 units
    assert (pos.line, pos.character) == (1, text.split("\n")[1].index("x") + 1)
    assert server._offset(sf, pos) == x


def test_diagnostic_conversion_keeps_code_labels_notes_and_help() -> None:
    text = "fn main() {\n    let x = 1\n    let y = 2;\n}\n"
    an = A.analyze(text, "t.tile")
    end_of_1 = at(text, "1\n") + 1
    diag = (
        Diagnostic.error("E0001", "expected `;`, found `let`")
        .primary(Span(an.file.id, end_of_1, end_of_1), "expected `;` here")
        .secondary(Span(an.file.id, at(text, "let y"), at(text, "let y") + 3), "unexpected token")
        .note("statements end with `;`")
        .with_help("add `;` here")
    )
    d = server.to_lsp_diagnostic(an, diag, "file:///t.tile")
    assert d.code == "E0001" and d.source == "tilec"
    # a zero-width span at the end of a line widens to the last character
    assert (d.range.start.line, d.range.start.character, d.range.end.character) == (1, 12, 13)
    assert d.message.splitlines() == ["expected `;`, found `let`", "note: statements end with `;`",
                                      "help: add `;` here"]
    assert d.related_information is not None
    assert [r.message for r in d.related_information] == ["expected `;` here", "unexpected token"]
    assert d.related_information[1].location.range.start.line == 2


@pytest.mark.parametrize("path", sorted((REPO / "examples").glob("*.tile")), ids=lambda p: p.name)
def test_every_example_checks_and_answers_queries_everywhere(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    an = A.analyze(text, str(path))
    assert an.internal_error is None
    assert A.document_symbols(an)
    for offset in range(0, len(text) + 1, 5):
        A.hover(an, offset)
        A.definition(an, offset)
        A.references(an, offset)
        A.signature_help(an, offset)
    for offset in range(0, len(text) + 1, 97):
        assert A.completions(an, offset)


def test_semantic_tokens_encoding_is_relative_utf16() -> None:
    text = 'fn main() {\n    print("😀"); let a = 1; print(a);\n}\n'
    an = A.analyze(text, "t.tile")
    data = server.encode_semantic_tokens(an)
    assert len(data) % 5 == 0
    # decode back to absolute (line, UTF-16 column, length, type)
    decoded = []
    line = col = 0
    for i in range(0, len(data), 5):
        dl, ds, length, ty, _mods = data[i : i + 5]
        line += dl
        col = ds if dl else col + ds
        decoded.append((line, col, length, A.TOKEN_TYPES[ty]))
    utf16 = text.split("\n")[1].replace("😀", "xx")  # the emoji is two UTF-16 units
    assert (0, 3, 4, "function") in decoded  # main
    assert (1, utf16.index("a ="), 1, "variable") in decoded
    assert (1, utf16.index("a);"), 1, "variable") in decoded


def test_hover_shows_a_float_constant_as_print_writes_it() -> None:
    # a `const C: f32 = 0.1;` holds f32's 0.1 (hrev round 12: constants round to their type); the hover
    # writes it in the type's shortest digits, not as the Python float 0.10000000149011612
    text = "const C: f32 = 0.1;\nconst H: f16 = 0.1;\nfn main() { print(C, H); }\n"
    an = A.analyze(text, "consts.tile")
    for name in "CH":
        info = A.hover(an, text.index(name + ("," if name == "C" else ")")))
        assert info is not None and f"const {name}: " in info.markdown and "= 0.1\n" in info.markdown, info
