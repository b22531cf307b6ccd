"""Golden tests of the human renderer on small synthetic sources.

Each case builds a source and diagnostics by hand (no parser needed) and
compares `render_human(..., color=False)` with `tests/golden/<case>.stderr`.
Rewrite the goldens with `python -m pytest tests/unit/test_render_golden.py --bless`
and review the diff.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tilelang.diagnostics.model import Diagnostic
from tilelang.diagnostics.render import render_human
from tilelang.source import SourceFile, SourceMap, Span

GOLDEN = Path(__file__).resolve().parent.parent / "golden"


def find(sf: SourceFile, needle: str, nth: int = 0, length: int | None = None) -> Span:
    """The span of the `nth` occurrence of `needle` in the file (its first
    `length` characters when given)."""
    at = -1
    for _ in range(nth + 1):
        at = sf.text.index(needle, at + 1)
    return Span(sf.id, at, at + (len(needle) if length is None else length))


def case_single_label(sm: SourceMap) -> list[Diagnostic]:
    sf = sm.add("single.tile", "fn main() {\n    let x = y + 1;\n}\n")
    return [
        Diagnostic.error("E0101", "cannot find value `y` in this scope").primary(
            find(sf, "y"), "not found in this scope"
        )
    ]


def case_two_labels_one_line(sm: SourceMap) -> list[Diagnostic]:
    sf = sm.add("twoline.tile", "fn main() {\n    add(z.partition([4]), &z);\n}\n")
    return [
        Diagnostic.error(
            "E0303", "cannot borrow `z` as shared because it is also borrowed as mutable"
        )
        .primary(find(sf, "&z"), "shared borrow here")
        .secondary(find(sf, "z.partition([4])"), "mutable borrow here")
    ]


def case_three_labels_one_line(sm: SourceMap) -> list[Diagnostic]:
    sf = sm.add("three.tile", "fn main() {\n    f(a, b, c);\n}\n")
    return [
        Diagnostic.error("E0201", "mismatched types")
        .secondary(find(sf, "a,", length=1), "this is `f32`")
        .primary(find(sf, "b,", length=1), "expected `f32`, found `f16`")
        .secondary(find(sf, "c)", length=1), "this is `f32` too")
    ]


def case_labels_far_apart(sm: SourceMap) -> list[Diagnostic]:
    body = "".join(f"    let v{i} = {i};\n" for i in range(10))
    sf = sm.add(
        "far.tile",
        "fn main() {\n    let mut z = zeros::<f32>([8]);\n" + body + "    z.store(1);\n}\n",
    )
    return [
        Diagnostic.error("E0304", "cannot use `z` while a launch that borrows it is running")
        .primary(find(sf, "z.store(1)"), "used here")
        .secondary(find(sf, "let mut z"), "declared here")
        .note("the launch borrows `z` until `.wait()`")
    ]


def case_adjacent_gap(sm: SourceMap) -> list[Diagnostic]:
    sf = sm.add("gap.tile", "fn f() {\n    let a = 1;\n    let b = 2;\n    a = b;\n}\n")
    return [
        Diagnostic.error("E0105", "cannot assign twice to immutable variable `a`")
        .primary(find(sf, "a = b"), "cannot assign twice")
        .secondary(find(sf, "a = 1", length=1), "first assignment")
        .with_help("consider making this binding mutable: `mut a`")
    ]


def case_multiline_span(sm: SourceMap) -> list[Diagnostic]:
    text = "kernel fn k(z: &mut Tensor<f32, [4]>) {\n    let t = z.load();\n    z.store(t);\n}\n"
    sf = sm.add("multi.tile", text)
    start = text.index("{")
    return [
        Diagnostic.error("E0402", "kernel body never stores its output").primary(
            Span(sf.id, start, len(text) - 1), "this body"
        )
    ]


def case_multiline_from_margin(sm: SourceMap) -> list[Diagnostic]:
    text = "fn helper() -> i32 {\n    let a = 1;\n    a\n}\n\nfn main() {\n    helper();\n}\n"
    sf = sm.add("margin.tile", text)
    end = text.index("}") + 1
    return [
        Diagnostic.warning("W0001", "function `helper` returns a value that is never used")
        .secondary(Span(sf.id, 0, end), "defined here")
        .primary(find(sf, "helper();"), "value ignored")
    ]


def case_long_multiline(sm: SourceMap) -> list[Diagnostic]:
    lines = ["fn main() {"] + [f"    let v{i} = {i};" for i in range(12)] + ["}"]
    text = "\n".join(lines) + "\n"
    sf = sm.add("long.tile", text)
    return [
        Diagnostic.error("E0001", "block is too long").primary(
            Span(sf.id, 0, len(text) - 1), "here"
        )
    ]


def case_zero_width_eof(sm: SourceMap) -> list[Diagnostic]:
    text = "fn main() {\n    let x = 1;\n"
    sf = sm.add("eof.tile", text)
    return [
        Diagnostic.error("E0003", "unclosed delimiter `{`")
        .primary(Span(sf.id, len(text), len(text)), "expected `}` here")
        .secondary(find(sf, "{"), "unclosed delimiter")
    ]


def case_zero_width_eof_no_newline(sm: SourceMap) -> list[Diagnostic]:
    text = "fn main() {\n    let x = 1"
    sf = sm.add("eof2.tile", text)
    return [
        Diagnostic.error("E0001", "expected `;`, found end of file").primary(
            Span(sf.id, len(text), len(text)), "expected `;` here"
        )
    ]


def case_tabs(sm: SourceMap) -> list[Diagnostic]:
    sf = sm.add("tabs.tile", "fn main() {\n\tlet x =\t1 + true;\n}\n")
    return [
        Diagnostic.error("E0202", "cannot add `bool` to `i32`")
        .primary(find(sf, "true"), "no implementation for `i32 + bool`")
        .secondary(find(sf, "1"), "this is `i32`")
    ]


def case_notes_and_help(sm: SourceMap) -> list[Diagnostic]:
    sf = sm.add("notes.tile", "fn main() {\n    let b = a;\n    print(a);\n}\n")
    return [
        Diagnostic.error("E0301", "use of moved value `a`")
        .primary(find(sf, "a)", length=1), "value used here after move")
        .secondary(find(sf, "a;", length=1), "value moved here")
        .note("tensors are affine: `let b = a;` moves `a`")
        .note("a second note\nthat spans two lines")
        .with_help("copy it instead: `let b = a.clone();`")
    ]


def case_no_labels(sm: SourceMap) -> list[Diagnostic]:
    return [
        Diagnostic.error("E0102", "`main` function not found").note("a program needs `fn main()`")
    ]


def case_other_file(sm: SourceMap) -> list[Diagnostic]:
    lib = sm.add("lib.tile", "fn helper(x: i32) -> i32 {\n    x\n}\n")
    main = sm.add("main.tile", 'use "lib.tile";\n\nfn main() {\n    helper(1, 2);\n}\n')
    return [
        Diagnostic.error("E0103", "this function takes 1 argument but 2 were supplied")
        .primary(find(main, "helper(1, 2)"), "two arguments")
        .secondary(find(lib, "helper"), "defined here")
    ]


def case_wide_gutter(sm: SourceMap) -> list[Diagnostic]:
    text = "".join(f"// line {i}\n" for i in range(1, 99)) + "fn main() {\n    x;\n}\n"
    sf = sm.add("wide.tile", text)
    return [
        Diagnostic.error("E0101", "cannot find value `x` in this scope")
        .primary(find(sf, "x;"), "not found")
        .secondary(find(sf, "fn main"), "in this function")
    ]


def case_several_errors(sm: SourceMap) -> list[Diagnostic]:
    sf = sm.add("several.tile", "fn main() {\n    a;\n    b;\n}\n")
    return [
        Diagnostic.error("E0101", "cannot find value `a` in this scope").primary(
            find(sf, "a;", length=1), "not found"
        ),
        Diagnostic.warning("W0002", "unused expression").primary(find(sf, "b;"), ""),
        Diagnostic.error("E0201", "mismatched types").primary(find(sf, "b;", length=1), "here"),
    ]


def case_labels_inside_primary(sm: SourceMap) -> list[Diagnostic]:
    # Secondary labels nested in the primary span keep their own marks, and
    # the last one's message hangs below instead of trailing the primary's
    # carets (where it read as the message of `rtol = 1e-3`).
    sf = sm.add("nested.tile", "fn main() {\n    assert_close(&z, &flat, rtol = 1e-3);\n}\n")
    return [
        Diagnostic.error("E0711", "tensors are not close")
        .primary(find(sf, "assert_close(&z, &flat, rtol = 1e-3)"), "11 elements differ")
        .secondary(find(sf, "&z"), "left")
        .secondary(find(sf, "&flat"), "right")
    ]


CASES: dict[str, Callable[[SourceMap], list[Diagnostic]]] = {
    name[len("case_") :]: fn for name, fn in sorted(globals().items()) if name.startswith("case_")
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_human_golden(name: str, golden) -> None:  # type: ignore[no-untyped-def]
    sm = SourceMap()
    diags = CASES[name](sm)
    golden(GOLDEN / f"{name}.stderr", render_human(diags, sm, color=False))


def test_every_golden_has_a_case() -> None:
    stale = sorted(p.stem for p in GOLDEN.glob("*.stderr") if p.stem not in CASES)
    assert not stale, f"goldens without a case (delete them): {stale}"
