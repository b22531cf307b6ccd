"""Checker regressions found by QA (helper Q) that a one-file `.tile` UI test
cannot express: diagnostics across modules."""

from __future__ import annotations

from pathlib import Path

from tilelang import driver


def test_items_of_a_module_with_a_syntax_error_are_not_also_missing(tmp_path: Path) -> None:
    # `pub const SCALE` is a syntax error in the used file; `broken::SCALE`
    # used to add "cannot find `SCALE` in `broken`" on top of it.
    (tmp_path / "broken.tile").write_text(
        "pub const SCALE: f32 = 0.5;\n\nfn half(x: f32) -> f32 {\n    x * 0.5\n}\n"
    )
    main = tmp_path / "main.tile"
    main.write_text(
        'use "broken.tile";\n\nfn main() {\n    print(broken::half(broken::SCALE));\n}\n'
    )
    result = driver.check(main)
    assert [d.code for d in result.diagnostics] == ["E0021"]


def test_missing_items_of_a_clean_module_are_still_reported(tmp_path: Path) -> None:
    (tmp_path / "good.tile").write_text("fn half(x: f32) -> f32 {\n    x * 0.5\n}\n")
    main = tmp_path / "main.tile"
    main.write_text('use "good.tile";\n\nfn main() {\n    print(good::SCALE);\n}\n')
    result = driver.check(main)
    assert [d.code for d in result.diagnostics] == ["E0110"]
