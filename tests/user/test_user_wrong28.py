"""Round 25 of the user's mistakes (huser26, 2026-12-07), each with the help applied by the letter and the fixed
program checked (against NumPy where it computes; round 25's checks, tests/user/test_user_programs25.py).

- s01 a 4-D `&mut` partition of a batch known only when it runs (test_user_wrong9's run-time r02 until now): the
  checker passed it, the launch refused it (E0510), and the same kernel in a program with a generic kernel beside
  it was the lowering's E0701 at `tilec check` instead. A `&mut` parameter of more than 3 dimensions is now E0510
  at its declaration, whatever the launches' shapes, with the parameter's type rewritten.
- Below: `twice;` (a function named as a statement) at the REPL printed nothing; it is E0203 with the call, as in
  a file, where `twice` (no `;`) still shows what `twice` is.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from userprog import run_program, wrong_suite

from tilelang import driver

# file: (a phrase of the first error's help, the fix: (old, new) replacements)
FIXES: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "s01_four_dim_partition_run_time_batch": (
        "merge the leading axes: `z: &mut Tensor<f32, [1, 2, 2]>`, and give it a tensor whose leading axes are "
        "merged the same way where it is made (`[N, C, H, W]` as `zeros::<f32>([N * C, H, W])`",
        [("[1, 1, 2, 2]>", "[1, 2, 2]>"), ("zeros::<f32>([n, 3, 4, 4]);", "zeros::<f32>([n * 3, 4, 4]);"),
         ("z.partition([1, 1, 2, 2])", "z.partition([1, 2, 2])"),
         ("print(z.sum());", "print(z.reshape([n, 3, 4, 4]).sum());")]),
}


def _s01(t: dict, out: str) -> None:
    assert out == "96.0\n" and t["z"].shape == (6, 4, 4) and (t["z"] == 1).all()


FIXED = {"s01_four_dim_partition_run_time_batch": _s01}

(test_every_mistake_has_a_fix, test_the_help_leads_to_a_working_program,
 test_the_editor_shows_the_same_first_error) = wrong_suite("s*.tile", FIXES, FIXED)


_DEEP = """kernel fn bump<const B: i32>(z: &mut Tensor<f32, [1, 1, B, B]>, x: &Tensor<f32, [?, ?, ?, ?]>) {
    z.store(x.partition([1, 1, B, B]).load([block_id(0), block_id(1), 0, 0]) + 1.0);
}
fn main() {
    let n = zeros::<i32>([1]).sum() + N;
    let x = ones::<f32>([n, 3, 4, 4]);
    let mut z = zeros::<f32>([n, 3, 4, 4]);
    bump(z.partition([1, 1, 4, 4]), &x).sync();
    print(z.sum());
}
"""
_GENERIC = """kernel fn other<T>(z: &mut Tensor<T, [4]>, x: &Tensor<T, [?]>) {
    z.store(x.load_like(z));
}
"""


@pytest.mark.parametrize("shape", ["run-time", "constant"])
@pytest.mark.parametrize("beside", ["alone", "beside a generic kernel"])
def test_a_four_dim_own_tile_is_one_error_at_the_parameter(shape: str, beside: str, tmp_path: Path) -> None:
    """The same rank-4 `&mut` kernel was E0510 at the run (run-time batch), E0510 at the launch (constant shapes)
    or the lowering's E0701 at `tilec check` (a generic kernel beside it): now one E0510 at the parameter in all
    four programs, from `tilec check`, `tilec run`, the Python API's load and the language server alike."""
    import tilelang
    from tilelang.lsp import analysis

    src = _DEEP.replace("zeros::<i32>([1]).sum() + N", "2" if shape == "constant" else "zeros::<i32>([1]).sum() + 2")
    src += _GENERIC if beside != "alone" else ""
    prog = tmp_path / "deep.tile"
    prog.write_text(src, encoding="utf-8")
    errs = [d for d in driver.check(prog).diagnostics if d.severity.value == "error"]
    assert [d.code for d in errs] == ["E0510"], [(d.code, d.message) for d in errs]
    d = errs[0]
    assert d.message == "`&mut` parameter `z` has 4 dimensions but a grid has at most 3"
    assert src[d.primary_span.start:d.primary_span.end] == "&mut Tensor<f32, [1, 1, B, B]>"
    assert "`z: &mut Tensor<f32, [1, B, B]>`" in d.help[0]
    with pytest.raises(tilelang.TileError) as info:
        tilelang.compile(src)
    assert info.value.code == "E0510"
    an = analysis.analyze(src, str(prog))
    assert an.internal_error is None and [x.code for x in an.diagnostics if x.severity.value == "error"] == ["E0510"]
    # the help, applied: the output made 3-D, the kernel's tile [1, B, B] read from the 4-D input by index
    fixed = (src.replace("[1, 1, B, B]>, x", "[1, B, B]>, x")
             .replace("load([block_id(0), block_id(1), 0, 0])", "load([block_id(0) / 3, block_id(0) % 3, 0, 0])"
                      ".reshape([1, B, B])")
             .replace("zeros::<f32>([n, 3, 4, 4]);", "zeros::<f32>([n * 3, 4, 4]);")
             .replace("z.partition([1, 1, 4, 4])", "z.partition([1, 4, 4])"))
    prog.write_text(fixed, encoding="utf-8")
    assert run_program(prog)[1] == "192.0\n"


def test_a_function_named_as_a_statement_at_the_prompt_says_what_to_do() -> None:
    """`twice;` at the REPL printed nothing (the name was let through to be shown, and a statement shows
    nothing); it is now E0203 with the call, as `tilec check` says of it in a file, and `twice` (the entry's
    value) still shows the function."""
    from tilelang.repl import ReplSession

    session = ReplSession(device="cpu")
    assert session.feed("fn twice(x: i32) -> i32 { x * 2 }").ok
    r = session.feed("twice;")
    assert not r.ok and "error[E0203]: function `twice` used as a value" in r.stderr
    assert "help: call it: `twice(x)`" in r.stderr and r.stdout == ""
    assert session.feed("  twice").stdout == "fn(i32) -> i32 = the function `twice` (call it: `twice(..)`; " \
                                             "`:help twice` shows it)\n"
    r = session.feed("let a = 1;\ntwice;\nlet b = 2;")
    assert not r.ok and "<repl-" in r.stderr and "twice;" in r.stderr
    assert session.feed("print(twice(21));").stdout == "42\n"
    assert session.feed(":type twice").stdout == "twice: fn(i32) -> i32\n"
    src = "fn twice(x: i32) -> i32 {\n    x * 2\n}\nfn main() {\n    twice;\n}\n"
    errs = [d for d in driver.check(src, name="m.tile").diagnostics if d.severity.value == "error"]
    assert [(d.code, d.help[0]) for d in errs] == [("E0203", "call it: `twice(x)`")]

