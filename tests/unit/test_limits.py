"""The nesting limit (`tilelang.limits.MAX_NESTING`, E0023): one limit, the
same located error in every front end, and every stage copes with a tree
exactly at the limit, of each kind of nesting.

Deep input used to be a RecursionError ICE in the AST builder (nested blocks,
unary operators, casts, method chains, `if`s), and a long `1 + 1 + ...` was
an error in `check` but ran in `run`, whose recursion limit was higher.
"""

from __future__ import annotations

import functools
import io
from collections.abc import Callable

import pytest

from tilelang import driver
from tilelang.diagnostics.model import DiagnosticSink
from tilelang.limits import MAX_NESTING
from tilelang.source import SourceMap
from tilelang.syntax.parser import parse

KERNEL_MAIN = """
fn main() {
    let x = ones::<f32>([8]);
    let mut z = zeros::<f32>([8]);
    k(z.partition([4]), &x).sync();
    print(z.sum());
}
"""
KERNEL_HEAD = ("kernel fn k<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>) {\n"
               "    let t = x.load_like(z);\n")

# Programs nested `n` deep in one way; each prints a value that depends on `n`.
KINDS: dict[str, Callable[[int], str]] = {
    "blocks": lambda n: "fn main() {\n let x: i32 = " + "{" * n + "1" + "}" * n + ";\n print(x);\n}\n",
    "unary": lambda n: "fn main() {\n let x: i32 = " + "-" * n + "1;\n print(x);\n}\n",
    "casts": lambda n: "fn main() {\n let x = 1" + " as i64" * n + ";\n print(x);\n}\n",
    "ifs": lambda n: ("fn main() {\n let mut x = 0;\n" + "if x < 500 { x += 1; " * n + "}" * n
                      + "\n print(x);\n}\n"),
    "else_if": lambda n: ("fn main() {\n let x = 3;\n let mut y = 0;\n if x == 0 { y = 1; }"
                          + "".join(f" else if x == {i} {{ y = {i}; }}" for i in range(1, n))
                          + "\n print(y);\n}\n"),
    "chain": lambda n: "fn main() {\n let x = 1" + " + 1" * n + ";\n print(x);\n}\n",
    "methods": lambda n: "fn main() {\n let x = ones::<f32>([4])" + ".clone()" * n + ";\n print(x);\n}\n",
    "calls": lambda n: ("fn f(x: i32) -> i32 { x + 1 }\nfn main() {\n let x = " + "f(" * n + "1"
                        + ")" * n + ";\n print(x);\n}\n"),
    "tuples": lambda n: "fn main() {\n let x = " + "(" * n + "1," + ")," * (n - 1) + ")" + ";\n print(1);\n}\n",
    "kernel_chain": lambda n: KERNEL_HEAD + "    z.store(t" + " + t" * n + ");\n}\n" + KERNEL_MAIN,
    "kernel_ifs": lambda n: (KERNEL_HEAD + "    let mut u = t;\n    let i = block_id(0);\n"
                             + "if i < 5 { u = u + 1.0; " * n + "}" * n + "\n    z.store(u);\n}\n"
                             + KERNEL_MAIN),
    "kernel_methods": lambda n: KERNEL_HEAD + "    z.store(t" + ".abs()" * n + ");\n}\n" + KERNEL_MAIN,
}


def _too_deep(text: str) -> bool:
    sink = DiagnosticSink()
    parse(SourceMap().add("<t>", text), sink)
    return any(d.code == "E0023" for d in sink.diagnostics)


# AST levels per unit of nesting: a block in an expression is the block and
# its tail; an `if` statement is a statement, the `if` and its block.
PER_UNIT = {"blocks": 3, "ifs": 3, "kernel_ifs": 3}


@functools.cache  # several tests ask for a kind's limit: one search a process
def deepest(kind: str) -> int:
    """The largest `n` the parser accepts for this kind (the limit, exactly):
    a few levels above the root are the function's; search just below."""
    top = MAX_NESTING // PER_UNIT.get(kind, 1)
    lo, hi = top - 12, top
    assert not _too_deep(KINDS[kind](lo)) and _too_deep(KINDS[kind](hi + 1))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if _too_deep(KINDS[kind](mid)):
            hi = mid - 1
        else:
            lo = mid
    return lo


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_stage_handles_a_tree_at_the_limit(kind: str) -> None:
    from tilelang.run import execute

    n = deepest(kind)
    text = KINDS[kind](n)
    until = "ptx" if kind.startswith("kernel") else "checked"
    result = driver.compile(text, until)
    assert result.ok, [d.message for d in result.diagnostics]
    if kind.startswith("kernel"):
        from tilelang.ir.printer import print_kernel

        assert print_kernel(result.context.outputs["ir"][0])
        assert ".entry" in result.output[0].text
    else:
        from tilelang.syntax.printer import format_ast

        assert format_ast(result.context.outputs["ast"], result.sources)
    out = io.StringIO()
    execute(text, device="cpu", out=out)
    assert out.getvalue().strip()
    if kind == "chain":
        assert out.getvalue().strip() == str(n + 1)


def _location(diags, sources) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    (d,) = [d for d in diags if d.code == "E0023"]
    sf = sources.get(d.primary_span.file)
    return sf.line_col(d.primary_span.start)


@pytest.mark.parametrize("kind", ["chain", "blocks", "methods", "kernel_ifs"])
def test_one_past_the_limit_is_the_same_located_error_everywhere(kind: str) -> None:
    import tilelang
    from tilelang.lsp.analysis import analyze
    from tilelang.repl import ReplSession
    from tilelang.run import CheckFailed, execute

    text = KINDS[kind](deepest(kind) + 1)
    checked = driver.compile(text, "checked", name="deep.tile")
    assert [d.code for d in checked.diagnostics] == ["E0023"]
    where = _location(checked.diagnostics, checked.sources)

    with pytest.raises(CheckFailed) as ran:
        execute(text, device="cpu", out=io.StringIO(), name="deep.tile")
    assert _location(ran.value.diagnostics, ran.value.sources) == where

    an = analyze(text, "deep.tile")
    assert an.internal_error is None
    assert _location(an.diagnostics, an.sources) == where

    with pytest.raises(tilelang.CompileError) as api:
        tilelang.compile(text, name="deep.tile")
    assert "error[E0023]" in str(api.value) and f"deep.tile:{where[0]}:{where[1]}" in str(api.value)

    if not kind.startswith("kernel"):  # the REPL takes statements, not a `fn main`
        body = text[text.index("{") + 1:text.rindex("}")]
        session = ReplSession()
        out = session.feed(body if kind != "calls" else text)
        assert not out.ok and "error[E0023]" in out.stderr and "Traceback" not in out.stderr


def test_the_error_points_at_the_level_past_the_limit() -> None:
    text = "fn main() {\n    let x = " + "-" * (2 * MAX_NESTING) + "1;\n}\n"
    result = driver.compile(text, "checked")
    (d,) = result.diagnostics
    assert d.code == "E0023" and "nested too deeply" in d.message
    span = d.primary_span
    # main's block, the `let`: the unary operators start at level 3.
    assert span.start == text.index("-") + MAX_NESTING - 2
    assert any("let" in h for h in d.help)


def test_other_items_still_check_when_one_is_too_deep() -> None:
    text = ("fn deep() -> i32 {\n    " + "-" * (2 * MAX_NESTING) + "1\n}\n"
            "fn main() {\n    let x: i32 = true;\n}\n")
    sink = DiagnosticSink()
    module = parse(SourceMap().add("<t>", text), sink)
    assert [d.code for d in sink.diagnostics] == ["E0023"]
    assert [i.name.name for i in module.items] == ["main"]


def test_long_line_is_shown_in_a_window_around_the_label() -> None:
    from tilelang.diagnostics import render

    text = "fn main() {\n    let x = 1" + " + 1" * (3 * MAX_NESTING) + ";\n}\n"
    result = driver.compile(text, "checked", name="long.tile")
    shown = render.render(result.diagnostics, result.sources, "human")
    assert max(len(line) for line in shown.splitlines()) < 400
    assert "..." in shown and "past the limit" in shown


@pytest.mark.parametrize("op", ["+", "*", "&&"])
def test_a_long_flat_chain_says_how_many_operators_fit(op: str) -> None:
    # hrev (2026-12-04): a flat 20,000-term sum was "expression or block
    # nested too deeply", at an operator in the middle of a line, with no word
    # of how long a chain may be; now the message counts the chain's
    # operators and the note says how many fit there, in the user's terms
    term = "true" if op == "&&" else "1"
    n = deepest("chain")  # the most `+` operators a `let` in `main` can chain
    for ops, ok in ((n, True), (n + 1, False), (19_999, False)):
        text = f"fn main() {{\n    let x = {term}" + f" {op} {term}" * ops + ";\n    print(x);\n}\n"
        result = driver.compile(text, "checked")
        assert result.ok is ok
        if ok:
            continue
        (d,) = result.diagnostics
        assert d.code == "E0023"
        assert d.message == f"a chain of {ops} operators is nested too deeply"
        assert any(f"at most {n} operators" in note for note in d.notes), d.notes
        assert any("`let`" in h for h in d.help)
