"""Round 25 of the user's mistakes (huser26, 2026-12-07), each with the help applied by the letter and the fixed
program checked (against NumPy where it computes; round 25's checks, tests/user/test_user_programs25.py).

- s01 a 4-D `&mut` partition of a batch known only when it runs (test_user_wrong9's run-time r02 until now): the
  checker passed it, the launch refused it (E0510), and the same kernel in a program with a generic kernel beside
  it was the lowering's E0701 at `tilec check` instead. A `&mut` parameter of more than 3 dimensions is now E0510
  at its declaration, whatever the launches' shapes, with the parameter's type rewritten.
- s02 (n09 as first written) a generic device function splitting `[BT, H, D]` into halves: see
  test_user_programs25.py's n09 and `test_the_half_split_helps_lead_one_to_the_other`.
- s03 (n07 as first written) a step's output row [1, 64] in [1, 16] tiles beside state tiles [16, ..]: E0500's
  transposed-layout help, applied by the letter, runs (a check that the help leads somewhere; no fix needed).
- Below: `twice;` (a function named as a statement) at the REPL printed nothing; it is E0203 with the call, as in
  a file, where `twice` (no `;`) still shows what `twice` is. And helps found wanting while writing round 25:
  `a.lerp(b, w)` told `lerp(a)`; `linear_fwd;` told to call it with its `&` arguments bare; `xs.load_like(y)` of
  an input with more axes told only "partition the input"; an in-place update written out of place (`&q` beside
  `q.partition(..)`) told only to pass a copy.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_user_programs25 import CHECKS
from userprog import apply_fixes, run_program, wrong_suite

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

# n09's norm + rope as first written: the function with the quotient `Q` (the E0208 help), then the kernel with it
# (the E0215 help the function's call then gets, `test_the_half_split_helps_lead_one_to_the_other`)
_S02_FN = [("fn norm_rope<const BT: i32, const H: i32, const D: i32>(x: Tile<f32, [BT, H, D]>, w: Tile<f32, [1, 1, D]>,\n"
            "                                                        pos: Tile<i32, [BT, 1, 1]>) -> Tile<f32, [BT, H, D]> {",
            "fn norm_rope<const BT: i32, const H: i32, const Q: i32>(x: Tile<f32, [BT, H, 2 * Q]>,\n"
            "                                                        w: Tile<f32, [1, 1, 2 * Q]>,\n"
            "                                                        pos: Tile<i32, [BT, 1, 1]>) -> Tile<f32, [BT, H, 2 * Q]> {"),
           ("/ (D as f32);", "/ ((2 * Q) as f32);"), ("D / 2", "Q"), ("-2.0 / (D as f32)", "-2.0 / ((2 * Q) as f32)"),
           ("reshape([BT, H, D])\n}", "reshape([BT, H, 2 * Q])\n}")]
_S02_KERNEL = [("kernel fn qk_norm_rope<const BT: i32, const H: i32, const D: i32>(x: &mut Tensor<f32, [BT, H, D]>,\n"
                "                                                                  w: &Tensor<f32, [D]>,",
                "kernel fn qk_norm_rope<const BT: i32, const H: i32, const Q: i32>(x: &mut Tensor<f32, [BT, H, 2 * Q]>,\n"
                "                                                                  w: &Tensor<f32, [2 * Q]>,"),
               ("w.partition([D]).load([0]).reshape([1, 1, D])", "w.partition([2 * Q]).load([0]).reshape([1, 1, 2 * Q])")]
FIXES["s02_half_split_in_a_generic_function"] = (
    "`BT * H * (D / 2) * 2` equals `BT * D * H` only where `D` is a multiple of 2, which the checker does not "
    "assume: make the quotient a const generic of its own, `const Q: i32` for `D / 2`, and write `2 * Q` where `D` "
    "was", _S02_FN + _S02_KERNEL)

FIXES["s03_step_output_row_against_column_grid"] = (
    "`y`'s grid is the other's transposed: `y` laid out transposed, [64, 1] in tiles of [16, 1], gives [4, 1] "
    "(store the tile's `.transpose()` into a parameter of tile shape [16, 1])",
    [("y: &mut Tensor<f32, [1, BD]>,", "y: &mut Tensor<f32, [BD, 1]>,"),
     ("    y.store(out.reshape([1, BD]));", "    y.store(out.reshape([1, BD]).transpose());"),
     ("        let mut y = zeros::<f32>([1, b * dm]);", "        let mut y = zeros::<f32>([b * dm, 1]);"),
     ("y.partition([1, 16]),", "y.partition([16, 1]),")])


def _s01(t: dict, out: str) -> None:
    assert out == "96.0\n" and t["z"].shape == (6, 4, 4) and (t["z"] == 1).all()


FIXED = {"s01_four_dim_partition_run_time_batch": _s01,
         "s02_half_split_in_a_generic_function": CHECKS["n09_qk_norm_rope_in_place"],
         "s03_step_output_row_against_column_grid": CHECKS["n07_mamba_decode_step"]}

(test_every_mistake_has_a_fix, test_the_help_leads_to_a_working_program,
 test_the_editor_shows_the_same_first_error) = wrong_suite("s0[1-3]_*.tile", FIXES, FIXED)


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



def test_the_half_split_helps_lead_one_to_the_other(tmp_path: Path) -> None:
    """s02 (n09 as first written): E0208's help, applied to the function alone, leaves its call E0215, whose help
    said "give it explicitly: `norm_rope::<..>(..)`" (and `{ D / 2 }` there was a mismatch of `(D / 2) * 2`
    against `D`): it now names the caller's quotient, and once the kernel has it the call infers `Q` from the
    kernel's own `[BT, H, 2 * Q]` tile (it was E0215 too: a dimension linear in a device function's generic was
    solved only against a constant)."""
    path = Path(__file__).parent / "wrong" / "s02_half_split_in_a_generic_function.tile"
    half = tmp_path / "half.tile"
    half.write_text(apply_fixes(path, _S02_FN), encoding="utf-8")
    errs = [d for d in driver.check(half).diagnostics if d.severity.value == "error"]
    assert [d.code for d in errs] == ["E0215"], [(d.code, d.message) for d in errs]
    assert errs[0].help == ("`x`'s dimension `2 * Q` is `D` here, which is 2 times a whole number only where `D` is "
                            "a multiple of 2, which the checker does not assume: give the caller a const generic of "
                            "its own for `D / 2`, `const Q: i32`, and write `2 * Q` where it says `D`",)
    whole = tmp_path / "whole.tile"
    whole.write_text(apply_fixes(path, _S02_FN + _S02_KERNEL), encoding="utf-8")
    assert not driver.check(whole, deny_warnings=True).diagnostics
    # a constant argument gives the generic too, and one that is not a multiple is still refused
    src = ("fn halves<const Q: i32>(x: Tile<f32, [2 * Q]>) -> Tile<f32, [Q]> {\n"
           "    where(arange::<i32>(2).reshape([2, 1]) == 0, x.reshape([2, Q]), 0.0).sum(0)\n}\n"
           "kernel fn k(z: &mut Tensor<f32, [W]>, x: &Tensor<f32, [?]>) {\n"
           "    z.store(halves(x.partition([2 * W]).load([0])));\n}\n"
           "fn main() {\n    let x = arange::<f32>(12);\n    let mut z = zeros::<f32>([W]);\n"
           "    k(z.partition([W]), &x).sync();\n    print(z);\n}\n")
    prog = tmp_path / "c.tile"
    prog.write_text("const W: i32 = 6;\n" + src, encoding="utf-8")
    assert run_program(prog)[1] == "Tensor<f32, [6]> [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]\n"
    bad = src.replace("x.partition([2 * W]).load([0])", "x.partition([7]).load([0])").replace("[W]", "[3]")
    errs = [d for d in driver.check(bad, name="m.tile").diagnostics if d.severity.value == "error"]
    assert [(d.code, d.help[0]) for d in errs] == [
        ("E0215", "`x`'s dimension `2 * Q` is 7 here, which no whole `Q` makes: give it a tile of a multiple of 2 "
                  "(6 or 8)")]
    # the same solve at a launch in a generic host function: tiles of `2 * C` give the kernel's `[2 * HD]` its
    # `HD` = `C` (it was E0215, "give it explicitly: `halves::<HD>(..)` with a value for `HD`")
    host = ("kernel fn halves<const HD: i32>(z: &mut Tensor<f32, [2 * HD]>, x: &Tensor<f32, [?]>) {\n"
            "    z.store(x.load_like(z) * 2.0);\n}\n"
            "fn go<const C: i32>(z: &mut Tensor<f32, [?]>, x: &Tensor<f32, [?]>) {\n"
            "    halves(z.partition([2 * C]), x).sync();\n}\n"
            "fn main() {\n    let x = arange::<f32>(12);\n    let mut z = zeros::<f32>([12]);\n"
            "    go::<3>(&mut z, &x);\n    print(z.sum());\n}\n")
    prog.write_text(host, encoding="utf-8")
    assert run_program(prog)[1] == "132.0\n"


def test_a_std_function_written_as_a_method_keeps_its_arguments(tmp_path: Path) -> None:
    """PyTorch's `a.lerp(b, w)` in a kernel: the help said "`use std::math::lerp;` .., then `lerp(a)`", which takes
    three arguments (E0209 once applied); the method's arguments now follow the receiver where std's function
    takes them all, and the help, applied, runs. `x.softmax(1)` (std's `softmax` takes the tile alone) keeps
    `softmax(x)`."""
    src = ("kernel fn k(z: &mut Tensor<f32, [4, 8]>, x: &Tensor<f32, [?, ?]>) {\n    let a = x.load_like(z);\n"
           "    z.store(EXPR);\n}\nfn main() {\n    let x = arange::<f32>(32).reshape([4, 8]);\n"
           "    let mut z = zeros::<f32>([4, 8]);\n    k(z.partition([4, 8]), &x).sync();\n    print(z.sum());\n}\n")

    def first_help(expr: str) -> str:
        errs = [d for d in driver.check(src.replace("EXPR", expr), name="m.tile").diagnostics
                if d.severity.value == "error"]
        assert [d.code for d in errs] == ["E0103"], [(d.code, d.message) for d in errs]
        return errs[0].help[0]

    h = first_help("a.lerp(a * 3.0, 0.25)")
    assert h.endswith("then `lerp(a, a * 3.0, 0.25)` (`tilec doc lerp` shows it)"), h
    prog = tmp_path / "lerp.tile"
    prog.write_text("use std::math::lerp;\n" + src.replace("EXPR", "lerp(a, a * 3.0, 0.25)"), encoding="utf-8")
    assert run_program(prog)[1] == "744.0\n"   # 496 * 1.5
    assert first_help("a.softmax(1)").endswith("then `softmax(a)` (`tilec doc softmax` shows it)")


def test_a_function_named_without_its_call_gets_a_call_with_references(tmp_path: Path) -> None:
    """`linear_fwd;` (n14's kernel, `:load`ed at the REPL) was told "call it: `linear_fwd(logits.partition([..]),
    x, w, b)`": its `&` arguments bare, E0203 once applied. The help writes `&x` and, for a host function's
    `&mut` parameter, `&mut y`; applied, the program checks."""
    src = ("fn scale(x: &Tensor<f32, [?]>, y: &mut Tensor<f32, [?]>, a: f32) {\n    print(x.sum() * a, y.sum());\n}\n"
           "kernel fn k(z: &mut Tensor<f32, [4]>, x: &Tensor<f32, [?]>) {\n    z.store(x.load_like(z));\n}\n"
           "fn main() {\n    let x = ones::<f32>([4]);\n    let mut y = zeros::<f32>([4]);\n    let mut z = zeros::<f32>([4]);\n"
           "    let a = 2.0;\n    STMT;\n}\n")
    for stmt, want, fixed in (("scale", "call it: `scale(&x, &mut y, a)`", "scale(&x, &mut y, a)"),
                              ("k", "call it: `k(z.partition([..]), &x)`", "k(z.partition([4]), &x).sync()")):
        errs = [d for d in driver.check(src.replace("STMT", stmt), name="m.tile").diagnostics
                if d.severity.value == "error"]
        assert [(d.code, d.help[0]) for d in errs] == [("E0203", want)]
        prog = tmp_path / f"{stmt}.tile"
        prog.write_text(src.replace("STMT", fixed), encoding="utf-8")
        assert run_program(prog)[1] == ("8.0 0.0\n" if stmt == "scale" else "")


def test_load_like_of_an_input_with_more_axes_gets_the_partition(tmp_path: Path) -> None:
    """n07 as first drafted: a decode step's input row `xs.load_like(y)` of a [T, B * D] tensor for a [BD] own
    tile was told "partition the input with `x.partition([..])`" (neither the input's name nor the tile); the help
    now writes the partition and load with the extra leading axis's index left to name, and, filled in, runs."""
    src = ("kernel fn k<const BD: i32>(y: &mut Tensor<f32, [BD]>, xs: &Tensor<f32, [?, ?]>, t: i32) {\n"
           "    y.store(LOAD);\n}\n"
           "fn main() {\n    let xs = arange::<f32>(256).reshape([4, 64]);\n    let mut y = zeros::<f32>([64]);\n"
           "    k(y.partition([16]), &xs, 2).sync();\n    print(y.sum());\n}\n")
    errs = [d for d in driver.check(src.replace("LOAD", "xs.load_like(y)"), name="m.tile").diagnostics
            if d.severity.value == "error"]
    assert [d.code for d in errs] == ["E0217"]
    assert errs[0].help[0].endswith("`xs.partition([1, BD]).load([i, block_id(0)]).reshape([BD])`"), errs[0].help
    prog = tmp_path / "row.tile"
    prog.write_text(src.replace("LOAD", "xs.partition([1, BD]).load([t, block_id(0)]).reshape([BD])"), encoding="utf-8")
    assert run_program(prog)[1] == f"{float(sum(range(128, 192)))}\n"


def test_an_in_place_update_written_out_of_place_is_told_to_read_the_own_tile(tmp_path: Path) -> None:
    """n09's RoPE as first written from Triton's habits: `rope(q.partition(..), &q, ..)`, the kernel reading its
    input only at the output's tile (`x.load_like(y)`): E0303's help was "pass a copy instead: `&q.clone()`", an
    extra copy a step; it now says first that reading `y.load()` and dropping `x` updates `q` in place (in Tile and
    from Python), and that kernel, so rewritten, runs in place. A kernel that reads its input elsewhere (a shifted
    tile) keeps the copy help alone."""
    import numpy as np

    import tilelang

    kern = ("kernel fn scale_rows<const BR: i32, const D: i32>(y: &mut Tensor<f32, [BR, D]>, x: &Tensor<f32, [?, D]>,"
            " s: f32) {\n    y.store(READ * s);\n}\n")
    main = ("fn main() {\n    let mut q = ones::<f32>([16, 32]);\n    scale_rows(q.partition([4, 32]), &q, 2.0).sync();\n"
            "    print(q.sum());\n}\n")
    errs = [d for d in driver.check(kern.replace("READ", "x.load_like(y)") + main, name="m.tile").diagnostics
            if d.severity.value == "error"]
    assert [d.code for d in errs] == ["E0303"]
    assert errs[0].help == ("`scale_rows` reads `x` only at the own tile of `y` (`x.load_like(y)`): to update `q` in "
                            "place, read `y.load()` there instead and drop the parameter `x`",
                            "pass a copy instead: `&q.clone()`, or use separate tensors")
    fixed = (kern.replace("READ", "y.load()").replace(", x: &Tensor<f32, [?, D]>,", ",")
             + main.replace(", &q, 2.0)", ", 2.0)"))
    prog = tmp_path / "inplace.tile"
    prog.write_text(fixed, encoding="utf-8")
    assert run_program(prog)[1] == "1024.0\n"
    shifted = kern.replace("READ", "x.partition([BR, D]).load([block_id(0) + 1, 0])")
    errs = [d for d in driver.check(shifted + main, name="m.tile").diagnostics if d.severity.value == "error"]
    assert [d.code for d in errs] == ["E0303"] and errs[0].help == ("pass a copy instead: `&q.clone()`, or use "
                                                                     "separate tensors",)
    mod = tilelang.compile(kern.replace("READ", "x.load_like(y)"))
    q = np.ones((16, 32), np.float32)
    with pytest.raises(tilelang.BorrowError) as info:
        mod.scale_rows(tilelang.partition(q, [4, 32]), q, 2.0).sync()
    assert info.value.code == "E0303" and info.value.help.startswith(
        "`scale_rows` reads `x` only at the own tile of `y` (`x.load_like(y)`): to update the array in place, read "
        "`y.load()` there instead and drop the parameter `x`")


@pytest.mark.parametrize(("call", "fix", "want"), [
    ("a.clamp(min = 0.0)", "maximum(a, 0.0)", [0.0, 1.0, 0.5, 7.0]),
    ("a.clamp(max = 6.0)", "minimum(a, 6.0)", [-2.0, 1.0, 0.5, 6.0]),
    ("a.clamp(min = -1.0, max = 1.0)", "minimum(maximum(a, -1.0), 1.0)", [-1.0, 1.0, 0.5, 1.0])])
def test_a_one_sided_clamp_gets_a_one_sided_help(call: str, fix: str, want: list[float], tmp_path: Path) -> None:
    """PyTorch's `x.clamp(min=0.0)` (a ReLU-like bound) was told `minimum(maximum(x, lo), hi)`, `lo` and `hi` left
    to fill: a keyword bound now gives its side's call, which, applied, computes PyTorch's clamp."""
    src = ("kernel fn k(z: &mut Tensor<f32, [4]>, x: &Tensor<f32, [?]>) {\n    let a = x.load_like(z);\n"
           "    z.store(EXPR);\n}\nfn main() {\n    let x = arange::<f32>(4) * 3.0 - 2.0 + where(arange::<i32>(4) == 2, "
           "-3.5, 0.0);\n    let mut z = zeros::<f32>([4]);\n    k(z.partition([4]), &x).sync();\n    print(z);\n}\n")
    errs = [d for d in driver.check(src.replace("EXPR", call), name="m.tile").diagnostics
            if d.severity.value == "error"]
    assert [d.code for d in errs] == ["E0103"] and errs[0].help[0].startswith(f"`{fix}`"), errs[0].help
    prog = tmp_path / "c.tile"
    prog.write_text(src.replace("EXPR", fix), encoding="utf-8")
    assert run_program(prog)[0]["z"].tolist() == want   # x = [-2, 1, 0.5, 7]


@pytest.mark.parametrize(("call", "in_place", "printed"), [
    ("loss.zero_();", "loss *= 0.0;", "1.0\n1.0\n1.0\n"),
    ("loss.fill_(0.5);", "loss *= 0.0; loss += 0.5;", "1.0\n1.5\n1.5\n"),
    ("loss.copy_(&x);", "loss *= 0.0; loss += &x;", "1.0\n2.0\n2.0\n")])
def test_pytorch_in_place_setters_are_told_the_in_place_form(call: str, in_place: str, printed: str,
                                                              tmp_path: Path) -> None:
    """n20's loss, zeroed between a graph's replays as PyTorch does (`loss.zero_()`): the help was only "assign a
    new tensor: `loss = zeros::<T>(loss.shape());`" (`T` left to fill; "tensors are not changed in place" for
    `copy_`), which on a tensor a graph captured is E0307. It now names the element type and the argument, and
    gives the in-place form E0307 itself points to (compound assignment), which, applied, runs."""
    src = ("kernel fn k(z: &mut Tensor<f32, [1]>, x: &Tensor<f32, [1]>) {\n    z.store(x.load_like(z) + z.load());\n}\n"
           "fn main() {\n    let x = ones::<f32>([1]);\n    let mut loss = zeros::<f32>([1]);\n"
           "    let g = graph {\n        k(loss.partition([1]), &x);\n    };\n    for _i in 0..3 {\n        g.replay();\n"
           "        print(loss.item());\n        STMT\n    }\n}\n")
    errs = [d for d in driver.check(src.replace("STMT", call), name="m.tile").diagnostics
            if d.severity.value == "error"]
    assert [d.code for d in errs] == ["E0103"]
    h = errs[0].help[0]
    assert f"change it in place: `{in_place}`" in h and "<T>" not in h and "`v`" not in h, h
    prog = tmp_path / "z.tile"
    prog.write_text(src.replace("STMT", in_place), encoding="utf-8")
    assert run_program(prog)[1] == printed
    rebound = h.split("`")[1]   # the first form, a rebinding: E0307 on a captured tensor, as its help says
    errs = [d for d in driver.check(src.replace("STMT", rebound), name="m.tile").diagnostics
            if d.severity.value == "error"]
    assert [d.code for d in errs] == ["E0307"] and "compound assignment" in errs[0].help[0]


def test_the_w4a16_loop_is_told_why_the_products_pipeline_refuses_it(tmp_path: Path) -> None:
    """n06's K loop adds its two halves' products into one accumulator (`acc = mma(x0, lo, acc); acc = mma(x1, hi,
    acc)`): `--explain` gave only the attention pipeline's refusal, as if it were an attention loop; the products
    pipeline now says why it refuses it (its products share one accumulator). Here on a small loop of that form."""
    from userprog import tilec

    prog = tmp_path / "halves.tile"
    prog.write_text(
        "kernel fn k(y: &mut Tensor<f32, [16, 16]>, x: &Tensor<f16, [?, ?]>, w: &Tensor<f16, [?, ?]>) {\n"
        "    let px = x.partition([16, 16]);\n    let pw = w.partition([16, 16]);\n"
        "    let mut acc = zeros::<f32>([16, 16]);\n    for g in 0..pw.num_tiles(0) / 2 {\n"
        "        acc = mma(px.load([0, 2 * g]), pw.load([2 * g, 0]), acc);\n"
        "        acc = mma(px.load([0, 2 * g + 1]), pw.load([2 * g + 1, 0]), acc);\n    }\n    y.store(acc);\n}\n"
        "fn main() {\n    let x = ones::<f16>([16, 64]);\n    let w = ones::<f16>([64, 16]);\n"
        "    let mut y = zeros::<f32>([16, 16]);\n    k(y.partition([16, 16]), &x, &w).sync();\n    print(y.sum());\n}\n",
        encoding="utf-8")
    assert run_program(prog)[1] == "16384.0\n"
    r = tilec("emit", str(prog), "--stage", "gpu", "--arch", "sm_90a", "--explain")
    assert r.returncode == 0, r.stderr
    assert "note: the products pipeline does not take this loop: its products add into one accumulator one after " \
           "the other" in r.stderr, r.stderr


def test_a_dequantised_b_is_told_before_the_shared_accumulator(tmp_path: Path) -> None:
    """n06 itself: its B is dequantised in the loop (`(w as f16 - z) * s`), which no pipeline takes whatever the
    accumulators; `--explain` said only "give each product an accumulator of its own", and with two it then
    refused the B (hcliff14, 2026-12-07). The B's refusal now comes first."""
    from userprog import tilec

    prog = tmp_path / "dq.tile"
    prog.write_text(
        "kernel fn k(y: &mut Tensor<f32, [16, 16]>, x: &Tensor<f16, [?, ?]>, w: &Tensor<u8, [?, ?]>) {\n"
        "    let px = x.partition([16, 16]);\n    let pw = w.partition([16, 16]);\n"
        "    let mut acc = zeros::<f32>([16, 16]);\n    for g in 0..pw.num_tiles(0) {\n"
        "        let q = pw.load([g, 0]);\n"
        "        acc = mma(px.load([0, 2 * g]), (q & 15) as f16, acc);\n"
        "        acc = mma(px.load([0, 2 * g + 1]), (q >> 4) as f16, acc);\n    }\n    y.store(acc);\n}\n"
        "fn main() {\n    let x = ones::<f16>([16, 64]);\n    let w = ones::<u8>([32, 16]);\n"
        "    let mut y = zeros::<f32>([16, 16]);\n    k(y.partition([16, 16]), &x, &w).sync();\n    print(y.sum());\n}\n",
        encoding="utf-8")
    r = tilec("emit", str(prog), "--stage", "gpu", "--arch", "sm_90a", "--explain")
    assert r.returncode == 0, r.stderr
    assert "note: the products pipeline does not take this loop: a product's B is not a tile loaded from memory" \
        in r.stderr, r.stderr
    assert "one accumulator one after the other" not in r.stderr, r.stderr
