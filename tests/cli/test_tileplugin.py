"""The `.tile` test plugin itself: annotation parsing, matching, and a real
pytest session over a scratch `tests/ui` folder (in a subprocess, so the
plugin's module state is not shared with this session)."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest
import tileplugin
from tileplugin import Emitted, Expectation, SpecError, compare, parse_spec

# `runpytest_inprocess` drops the modules its run first imported: where that run imported Lark (the parser
# imports it on a syntax error only), the parser's cached Lark raises the dropped copy's exceptions later,
# which a fresh import's `UnexpectedInput` did not catch (an internal error in a later test of the same
# worker, test_registry's E0001 example: hfix imported Lark here for it). The parser tells Lark's objects by
# their class names now (hfix2, `lalr.is_lark`; tests/unit/test_parser_lark_copies.py), so this file no
# longer keeps Lark imported, and a worker that runs it before test_registry exercises that case.

pytest_plugins = ["pytester"]


def test_parse_spec_annotations_and_attachments() -> None:
    spec = parse_spec(
        textwrap.dedent(
            """\
            //@ check-fail
            fn main() {
                let b = &mut z;   // error[E0302]: cannot borrow
                                  // note: affine
                                  // help: borrow disjoint
                                  // label@2: first borrow
                let c = 1;
                //~^ error[E0201]: mismatched
                //~^^^ warning[W0001]
                let d = 2;
                // note: an ordinary comment, not attached
            }
            """
        )
    )
    assert spec.mode == "check-fail"
    first, second, third = spec.expectations
    assert (first.kind, first.code, first.line, first.message) == (
        "error",
        "E0302",
        3,
        "cannot borrow",
    )
    assert first.notes == ["affine"] and first.helps == ["borrow disjoint"]
    assert first.labels == [(2, "first borrow")]
    assert (second.code, second.line, second.message) == ("E0201", 7, "mismatched")
    assert (third.kind, third.line, third.message) == ("warning", 6, "")
    assert second.notes == [] and third.notes == []


def test_parse_spec_default_modes_and_expect_lines(tmp_path: Path) -> None:
    assert parse_spec("fn main() {}\n").mode == "check-pass"
    assert parse_spec("x // error[E0001]: y\n").mode == "check-fail"
    spec = parse_spec("fn main() {\n    print(1); // expect: 1\n    // expect:   two  \n}\n")
    assert spec.stdout == ["1", "  two"]
    run_file = tileplugin.TESTS_DIR / "run" / "x.tile"
    assert parse_spec("fn main() {}\n", run_file).mode == "run-pass"


def test_parse_spec_rejects_typos() -> None:
    with pytest.raises(SpecError, match="unknown directive"):
        parse_spec("//@ chek-pass\n")
    with pytest.raises(SpecError, match="two modes"):
        parse_spec("//@ check-pass\n//@ run-pass\n")
    with pytest.raises(SpecError, match="above the first line"):
        parse_spec("//~^ error[E0001]: x\n")


def emitted(code: str, line: int, message: str, **kw) -> Emitted:  # type: ignore[no-untyped-def]
    return Emitted(
        "error",
        code,
        "t.tile",
        line,
        1,
        message,
        kw.get("notes", []),
        kw.get("helps", []),
        kw.get("labels", []),
    )


def test_compare_reports_unexpected_missing_and_incomplete() -> None:
    exps = [
        Expectation("error", "E0302", 3, "cannot borrow", notes=["affine"]),
        Expectation("error", "E0201", 7, "mismatched"),
    ]
    got = [
        emitted("E0302", 3, "cannot borrow `z` twice", notes=["something else"]),
        emitted("E0101", 9, "cannot find `q`"),
    ]
    problems = "\n".join(compare(exps, got, "t.tile"))
    assert "unexpected (emitted but not annotated):" in problems
    assert "E0101" in problems and "cannot find `q`" in problems
    assert "missing (annotated but not emitted):" in problems and "E0201" in problems
    assert "no note containing 'affine'" in problems


def test_compare_all_matched_is_empty() -> None:
    exps = [Expectation("error", "E0302", 3, "borrow", labels=[(2, "first")])]
    got = [
        emitted("E0302", 3, "cannot borrow", labels=[(3, "second", True), (2, "first here", False)])
    ]
    assert compare(exps, got, "t.tile") == []
    # The line is the primary label's line: one line off is a mismatch.
    assert compare([Expectation("error", "E0302", 4, "")], got, "t.tile") != []
    # A label expectation must match a *secondary* label.
    bad = [Expectation("error", "E0302", 3, "", labels=[(None, "second")])]
    assert compare(bad, got, "t.tile") != []


SCRATCH_CONFTEST = """
import tileplugin
from pathlib import Path
tileplugin.TESTS_DIR = Path(__file__).resolve().parent / "tests"
"""

GOOD = """\
fn main() {
    let x = 1
    let y = 2;   //~^ error[E0001]: expected
}
"""

WRONG_LINE = """\
fn main() {
    let x = 1    // error[E0002]: nope
    let y = 2;
}
"""


RUN_PASS = """\
fn main() {
    let x = 40 + 2;
    print(x);          // expect: 42
}
"""

RUN_PASS_WRONG_OUTPUT = """\
fn main() {
    print(7);          // expect: 8
}
"""

RUN_FAIL = """\
//@ run-fail
fn main() {
    let x = 42;
    print(x);                          // expect: 42
    assert(x == 41, "x is wrong");     // error[E0710]: x is wrong
}
"""


@pytest.mark.slow
def test_plugin_end_to_end(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    here = Path(tileplugin.__file__).resolve().parent
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(here), str(here.parent)]))
    pytester.makeconftest(SCRATCH_CONFTEST)
    ui = pytester.path / "tests" / "ui"
    ui.mkdir(parents=True)
    (ui / "good.tile").write_text(GOOD)
    (ui / "wrong_line.tile").write_text(WRONG_LINE)
    (ui / "malformed.tile").write_text("//@ chek-fail\n")
    (ui / "golden.tile").write_text(GOOD)
    (ui / "golden.stderr").write_text("stale\n")
    run = pytester.path / "tests" / "run"
    run.mkdir(parents=True)
    (run / "prints.tile").write_text(RUN_PASS)
    (run / "wrong_output.tile").write_text(RUN_PASS_WRONG_OUTPUT)
    (run / "fails.tile").write_text(RUN_FAIL)
    elsewhere = pytester.path / "examples"
    elsewhere.mkdir()
    (elsewhere / "not_collected.tile").write_text("garbage(\n")

    result = pytester.runpytest_subprocess("-p", "tileplugin", "-q", "-rA", "tests")
    out = result.stdout.str()
    # each run test also runs under the sanitizer (`::run-pass+sanitize`)
    result.assert_outcomes(passed=5, failed=5)
    assert "PASSED tests/run/prints.tile::run-pass" in out
    assert "PASSED tests/run/prints.tile::run-pass+sanitize" in out
    assert "PASSED tests/run/fails.tile::run-fail" in out
    assert "PASSED tests/run/fails.tile::run-fail+sanitize" in out
    assert "stdout differs from the `// expect:` lines" in out
    assert "unexpected (emitted but not annotated):" in out
    assert "missing (annotated but not emitted):" in out
    assert "malformed test file" in out and "unknown directive" in out
    assert "golden.stderr differs" in out
    assert "not_collected" not in out

    # in this process (the run above is the end-to-end one): the scratch conftest points this process's
    # `tileplugin.TESTS_DIR` at the scratch tree, which the monkeypatch puts back afterwards
    monkeypatch.setattr(tileplugin, "TESTS_DIR", tileplugin.TESTS_DIR)
    blessed = pytester.runpytest_inprocess("-p", "tileplugin", "-q", "tests/ui/golden.tile", "--bless")
    blessed.assert_outcomes(passed=1)
    golden = (ui / "golden.stderr").read_text()
    assert golden.startswith("error[E0001]: ")
    assert " --> $DIR/golden.tile:2:" in golden
    assert "error: aborting due to 1 previous error" in golden


def test_cuda_probe_never_raises_and_can_be_forced_off(monkeypatch: pytest.MonkeyPatch) -> None:
    from gpu_probe import cuda_device_count

    cuda_device_count.cache_clear()
    try:
        assert cuda_device_count() >= 0
        cuda_device_count.cache_clear()
        monkeypatch.setenv("TILE_NO_GPU", "1")
        assert cuda_device_count() == 0
    finally:
        cuda_device_count.cache_clear()


@pytest.mark.gpu
def test_gpu_marker_runs_only_with_a_device() -> None:
    from gpu_probe import cuda_device_count

    assert cuda_device_count() > 0  # reached only when a CUDA device was found
