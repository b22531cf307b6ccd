"""The checker's warnings reach a Python user: `tilelang.load` / `tilelang.compile`
issue each as a `tilelang.TileWarning` whose text is the diagnostic as `tilec check`
renders it, pointed at the caller's line; `tilec check` and the REPL show the same."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

import tilelang

SOURCE = """\
fn main() {
    let x = 3;
    print(1);
}
"""


def _caught(fn):  # type: ignore[no-untyped-def]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mod = fn()
    return mod, [w for w in caught if issubclass(w.category, tilelang.TileWarning)]


def test_load_warns_with_the_rendered_diagnostic(tmp_path: Path) -> None:
    path = tmp_path / "w.tile"
    path.write_text(SOURCE)
    mod, caught = _caught(lambda: tilelang.load(path))
    assert len(caught) == 1
    w = caught[0]
    text = str(w.message)
    assert text.startswith("warning[W0001]: unused variable: `x`")
    assert f"{path}:2:9" in text and "let x = 3;" in text and "help:" in text
    assert w.message.diagnostic.code == "W0001"  # type: ignore[union-attr]
    assert w.filename == __file__  # the caller's line, not tilelang's
    assert issubclass(tilelang.TileWarning, UserWarning)
    assert mod.main() is None  # the module still works


def test_compile_warns_each_time_even_from_the_memo() -> None:
    for _ in range(2):  # the second load is a hit of the checked-program memo
        _, caught = _caught(lambda: tilelang.compile(SOURCE))
        assert [str(w.message).splitlines()[0] for w in caught] == ["warning[W0001]: unused variable: `x`"]


def test_clean_program_and_allowed_lint_do_not_warn() -> None:
    _, caught = _caught(lambda: tilelang.compile("fn main() {\n    let _x = 3;\n    print(1);\n}\n"))
    assert caught == []


def test_warnings_as_errors_stop_the_load() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", tilelang.TileWarning)
        with pytest.raises(tilelang.TileWarning, match="W0001"):
            tilelang.compile(SOURCE)


# ---------------------------------------------------------------- the same warnings in `tilec check` and the REPL
def test_tilec_check_prints_the_text_the_api_warns(tmp_path: Path) -> None:
    from tileplugin import run_tilec

    path = tmp_path / "w.tile"
    path.write_text(SOURCE)
    _, caught = _caught(lambda: tilelang.load(path))
    r = run_tilec("check", "--color", "never", str(path))
    assert r.returncode == 0 and str(caught[0].message) in r.stderr


def test_repl_shows_an_entrys_warnings_once() -> None:
    from tilelang.repl import ReplSession

    s = ReplSession(device="cpu")
    out = s.feed("fn f() -> i32 {\n    let q = 1;\n    return 2;\n}")
    assert out.ok and out.stderr.startswith("warning[W0001]: unused variable: `q`")
    assert "<repl-1>:2:9" in out.stderr and "help:" in out.stderr
    out = s.feed("print(f());")  # the item's warning was said: not again
    assert out.ok and out.stdout == "2\n" and out.stderr == ""
    out = s.feed("unsafe { print(3); }")
    assert out.stdout == "3\n" and out.stderr.startswith("warning[W0004]: unnecessary `unsafe` block")


def test_repl_keeps_quiet_about_variables_a_later_entry_may_read() -> None:
    from tilelang.repl import ReplSession

    s = ReplSession(device="cpu")
    for entry in ("let y = 3;", "let a = ones::<f32>([4]);",
                  "kernel fn inc<const B: i32>(z: &mut Tensor<f32, [B]>) { z.store(z.load() + 1.0); }",
                  "let mut z = zeros::<f32>([4]);", "let op = inc(z.partition([4]));"):
        out = s.feed(entry)
        assert out.ok and out.stderr == "", (entry, out.stderr)
    out = s.feed("{ let w = 1; }")  # a block's variable no later entry can read
    assert out.ok and "W0001" in out.stderr


def test_repl_load_shows_the_files_warnings(tmp_path: Path) -> None:
    from tilelang.repl import ReplSession

    path = tmp_path / "lib.tile"
    path.write_text("fn g() -> i32 {\n    let q = 1;\n    return 2;\n}\n")
    out = ReplSession(device="cpu").feed(f":load {path}")
    assert out.ok and out.stdout.startswith("loaded 1 item")
    assert f"{path}:2:9" in out.stderr and "W0001" in out.stderr
