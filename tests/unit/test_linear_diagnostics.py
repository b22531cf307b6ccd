"""Diagnostic paths stay linear in the size of the file (issue 12).

Each of these inputs once cost far more than its size: a 30,000-character
word before a syntax error took 30 s in the syntax-error hint (a quadratic
scan), an integer literal of more than 4,300 digits escaped as a ValueError
from Python's `int()`, and a file of 4,000 functions each naming an unknown
variable took 74 s in the "did you mean" suggestions (each compared the name
with every item). The bounds below are CPU seconds, generous for a loaded
machine and far below what the quadratic versions took.
"""

from __future__ import annotations

import io
import time

import pytest

from tilelang import driver
from tilelang.diagnostics import render
from tilelang.sema import context


def _check(text: str) -> tuple[float, driver.CompileResult]:
    start = time.process_time()
    result = driver.compile(text, "checked", name="big.tile")
    shown = render.render(list(result.diagnostics), result.sources, "human")
    assert "Traceback" not in shown
    return time.process_time() - start, result


def test_a_long_word_before_a_syntax_error_is_reported_in_linear_time() -> None:
    seconds, result = _check("fn main() {\n    let x = " + "a" * 200_000 + " 1 +;\n}\n")
    assert [d.code for d in result.diagnostics] == ["E0001"]
    assert seconds < 10, f"{seconds:.1f} s of CPU for a 200,000-character word"


@pytest.mark.parametrize("digits", [4_301, 20_000])
def test_an_integer_literal_of_thousands_of_digits_is_e0019(digits: int) -> None:
    from tilelang.run import CheckFailed, execute

    literal = "9" * digits
    text = f"fn main() {{\n    let x = {literal};\n    print(x);\n}}\n"
    _, result = _check(text)
    (d,) = result.diagnostics
    assert d.code == "E0019"
    assert (d.primary_span.start, d.primary_span.end) == (text.index(literal),
                                                          text.index(literal) + digits)
    with pytest.raises(CheckFailed) as info:  # `tilec run` reports the same
        execute(text, device="cpu", out=io.StringIO(), name="big.tile")
    assert [x.code for x in info.value.diagnostics] == ["E0019"]


def test_thousands_of_unknown_names_among_thousands_of_items_stay_linear() -> None:
    n = 4_000
    text = "".join(f"fn f{i}() -> i32 {{ y{i} }}\n" for i in range(n)) + "fn main() {}\n"
    seconds, result = _check(text)
    assert [d.code for d in result.diagnostics] == ["E0101"] * n
    assert seconds < 20, f"{seconds:.1f} s of CPU for {n} unknown names"
    # The budget is per check: the next program gets its suggestion.
    _, small = _check("fn main() {\n    let count = 1;\n    print(coutn);\n}\n")
    assert any("`count`" in h for h in small.diagnostics[0].help)


def test_suggestions_stop_when_the_budget_is_spent() -> None:
    names = [f"name{i}" for i in range(10)]
    context.reset_suggestions(25)
    try:
        assert context.suggest("name1x", names) == "name1"   # spends 10
        assert context.suggest("name2x", names) == "name2"   # spends 10
        assert context.suggest("name3x", names) is None      # 10 more than is left
        assert context.suggest("name4x", iter(()))  is None  # nothing left
    finally:
        context.reset_suggestions()
    assert context.suggest("name3x", names) == "name3"
