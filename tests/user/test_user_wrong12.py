"""Round 12 of the user's mistakes (huser12, 2026-12-06), each with the help
applied by the letter.

- g01 `dot(at, t)` of f64 tiles (E0206): the help said "cast the inputs to
  `f16`, `bf16` or `f32` first", which throws away what f64 was chosen for.
  Round 12 made the help a multiply-and-sum; round 13 (huser13) made `dot`
  and `mma` take f64 and integer tiles, so the program is no mistake now
  (its product is test_user_programs13's j01) and the file is gone.
- g02 `x.load_like(z) * 0.5` of an i32 tile stored into f32 (E0201): the help
  said "write an integer, or cast the other side with `as f32`": an integer
  for 0.5 changes the value. It now writes the cast (`x.load_like(z) as
  f32`, to the stored type) and offers an integer only for a literal that
  is one, where nothing stored wants a float.
- g03 `doubled::<N, 2 * N>(t)` (E0002 "expected one of `,` or `>`, found
  `*`", help "write one of `,` or `>` here, or remove what does not
  belong"): a computed generic argument goes in braces, as in Rust; the help
  writes it so, `{ 2 * N }`.
- g04 PyTorch's `t.softmax(1)` on a tile (E0103): "there is a method with a
  similar name: `max`". A method named as a standard-library function gets
  that function, its `use` and the call (`softmax(x.load_like(z))`); and
  `tilec doc softmax` (and the REPL's `:help softmax`) said "no entry ...;
  did you mean `max`?": they print where a std item is, its `use`, its first
  line and its comment.
- g05 `block_id(0) as usize` (E0104): "a type with a similar name exists:
  `u64`", which a tile index then refused (E0203, "a tile index is an
  `i32`"): `usize`/`isize` say that Tile's indices and sizes are `i32`.
- g06 `z.store(if t > 0.0 { t } else { 0.0 })`: the help wrote `where(t >
  0.0, yes, no)` and a second error followed ("`if` and `else` have
  incompatible types", "cast one with `as`", which cannot make a float a
  tile); the help writes the branches in (`where(t > 0.0, t, 0.0)`) and the
  second error is gone.
- g07 an input declared `&Tensor<f32, [B]>` (the tile's size, as the output)
  given a tensor of 6 with tiles of 4 (E0214): the help, written for a tile
  wider than the tensor (rows of 768 in tiles of 1024), said "tiles of any
  size work: a tile of 4 fits a dimension of 4 exactly". For a tile smaller
  than the tensor it says the type makes the tensor one tile long and to
  declare the dimension `?` (or give the partition the tensor's size).
- g08 `x.sum()` of a kernel's tensor parameter (E0103): "`sum` is a method
  of tiles or host tensors: call it on one of those"; the help writes the
  tile read (`x.load_like(z).sum(axis)`, `z` the kernel's own `&mut`) and
  says what a whole tensor's sum takes (every block: atomics or
  `last_block`, or the host).
- round 11's two partial helps that `tests/fuzz/help_check.py` reported: w25
  (`z.load() << 2` of an f32 tile: the cast to i32 first, the cast back in
  the help's second half) now gives the whole fix as one piece of code, and
  w27 (`softmax(..)` of an f16 tile stored into f16: `x.load_like(z) as f32`,
  then f32 stored into f16) now gives the call with its result cast back.
  help_check applies a cast help that rewrites a larger expression than a
  label (`((z.load() as i32) << 2) as f32` for `z.load() << 2`) at the
  span that reads as it with its casts taken out.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fuzz import help_check
from tilelang import driver
from userprog import assert_help_leads_to_a_working_program, assert_the_editor_shows_the_first_error, first_error, \
    fixed_program, run_program, tilec_at_root

DIR = Path(__file__).parent / "wrong"

# file: (a phrase of the first error's help, the fix: (old, new) replacements, what the fixed program prints)
FIXES: dict[str, tuple[str, list[tuple[str, str]], str]] = {
    "g02_int_tile_times_a_half": ("cast the other side with `as`: `x.load_like(z) as f32`",
                                  [("x.load_like(z) * 0.5", "x.load_like(z) as f32 * 0.5")],
                                  "Tensor<f32, [6]> [0.0, 0.5, 1.0, 1.5, 2.0, 2.5]\n"),
    "g03_turbofish_expression": ("goes in braces, as in Rust: `{ 2 * N }`",
                                 [("doubled::<N, 2 * N>", "doubled::<N, { 2 * N }>")],
                                 "Tensor<f32, [2, 8]>\n[[0.0, 0.0, 1.0, 1.0, 2.0, 2.0, 3.0, 3.0],\n"
                                 " [4.0, 4.0, 5.0, 5.0, 6.0, 6.0, 7.0, 7.0]]\n"),
    "g04_softmax_as_a_method": ("`use std::nn::softmax;` at the top of the file, then `softmax(x.load_like(z))`",
                                [("kernel fn probs", "use std::nn::softmax;\nkernel fn probs"),
                                 ("x.load_like(z).softmax(1)", "softmax(x.load_like(z))")],
                                "Tensor<f32, [2]> [0.99999994, 0.99999994]\n"),  # f32 rounding of a sum of 4
    "g05_usize_index": ("write `i32`", [("as usize", "as i32")],
                        "Tensor<f32, [8]> [ 0.0,  2.0,  4.0,  6.0,  8.0, 10.0, 12.0, 14.0]\n"),
    "g06_if_else_of_a_tile": ("`where(t > 0.0, t, 0.0)`", [("if t > 0.0 { t } else { 0.0 }", "where(t > 0.0, t, 0.0)")],
                              "Tensor<f32, [8]> [0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 4.0]\n"),
    "g07_input_typed_as_one_tile": ("declare this dimension of the tensor parameter `?`",
                                    [("x: &Tensor<f32, [B]>", "x: &Tensor<f32, [?]>")],
                                    "Tensor<f32, [8]> [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 1.0, 1.0]\n"),  # 0 past x, + 1
    "g08_sum_of_a_tensor_parameter": ("`x.load_like(z).sum(axis)` for the tile at `z`'s position",
                                      [("x.load_like(z) / x.sum()", "x.load_like(z) / x.load_like(z).sum(0)")],
                                      "Tensor<f32, [8]>\n[       0.1,        0.2,        0.3,        0.4,  0.1923077, "
                                      "0.23076923,\n 0.26923078, 0.30769232]\n"),  # each block's share of its sum
}


def test_every_mistake_has_a_fix() -> None:
    assert sorted(p.stem for p in DIR.glob("g*.tile")) == sorted(FIXES)


@pytest.mark.parametrize("name", sorted(FIXES))
def test_the_help_leads_to_a_working_program(name: str, tmp_path: Path) -> None:
    hint, edits, printed = FIXES[name]
    assert_help_leads_to_a_working_program(DIR / f"{name}.tile", hint, edits, tmp_path)
    assert run_program(fixed_program(DIR / f"{name}.tile", edits, tmp_path))[1] == printed


@pytest.mark.parametrize("name", sorted(FIXES))
def test_the_editor_shows_the_same_first_error(name: str) -> None:
    assert_the_editor_shows_the_first_error(DIR / f"{name}.tile")


def _kernel(tmp_path: Path, body: str, params: str, main: str) -> Path:
    f = tmp_path / "k.tile"
    f.write_text(f"kernel fn k<const M: i32>({params}) {{\n{body}\n}}\nfn main() {{\n{main}\n}}\n", encoding="utf-8")
    return f


def test_an_int8_mma_into_an_i8_accumulator_is_told_i32_and_the_help_runs(tmp_path: Path) -> None:
    # i8 x i8 products summed in i8 would wrap at 128: the accumulator of 8-bit integers is i32 (round 13;
    # before it, every integer `mma` was refused with a multiply-and-sum help)
    params = "c: &mut Tensor<i32, [M, 4]>, a: &Tensor<i8, [?, ?]>, b: &Tensor<i8, [?, ?]>"
    body = ("    let ta = a.partition([M, 8]).load([0, 0]);\n    let tb = b.partition([8, 4]).load([0, 0]);\n"
            "    c.store(mma(ta, tb, zeros::<i8>([M, 4])) as i32);")
    main = ("    let a = full::<i8>([2, 8], 100);\n    let b = full::<i8>([8, 4], -100);\n"
            "    let mut c = zeros::<i32>([2, 4]);\n    k(c.partition([2, 4]), &a, &b).sync();\n    print(c.sum());")
    f = _kernel(tmp_path, body, params, main)
    d = first_error(f)
    assert d.code == "E0206" and d.message == "`mma` of `i8` tiles accumulates in `i32`, not `i8`", d.message
    assert d.help == ("make the accumulator `i32`: `zeros::<i32>([M, 4])`",), d.help
    f.write_text(f.read_text(encoding="utf-8").replace("zeros::<i8>", "zeros::<i32>"), encoding="utf-8")
    assert run_program(f)[1] == f"{8 * 8 * 100 * -100}\n"  # 8 elements of 8 products of -10,000
    # a carried accumulator is told where to declare it
    body = ("    let mut acc = zeros::<i16>([M, 4]);\n    for k in 0..2 {\n"
            "        acc = mma(a.partition([M, 8]).load([0, k]), b.partition([8, 4]).load([k, 0]), acc);\n    }\n"
            "    c.store(acc as i32);")
    f = _kernel(tmp_path, body, params, main)
    d = first_error(f)
    assert d.message == "`mma` of `i8` tiles accumulates in `i32`, not `i16`", d.message
    assert d.help == ("make the accumulator `i32` where it starts (`let mut acc = zeros::<i32>([M, 4]);`), and cast "
                      "the result where another type is wanted",), d.help
    f.write_text(f.read_text(encoding="utf-8").replace("zeros::<i16>", "zeros::<i32>"), encoding="utf-8")
    assert run_program(f)[1] == f"{8 * 8 * 100 * -100}\n"  # the second K tile is past the edge: zeros
    f = _kernel(tmp_path, "    let t = a.partition([M, M]).load([0, 0]) > 0;\n    c.store(dot(t, t) as i32);",
                "c: &mut Tensor<i32, [M, M]>, a: &Tensor<i32, [?, ?]>", "")
    d = first_error(f)  # a bool product is no sum
    assert d.message == "`dot` does not support `bool` inputs" and d.help == ("cast both to a number type first: "
                                                                             "`t as i32`",), (d.message, d.help)
    f.write_text(f.read_text(encoding="utf-8").replace("dot(t, t)", "dot(t as i32, t as i32)"), encoding="utf-8")
    assert not [x for x in driver.check(f).diagnostics if x.severity.value == "error"]


def test_an_integral_float_literal_with_an_int_tile_may_be_written_as_an_integer(tmp_path: Path) -> None:
    params = "z: &mut Tensor<i32, [M]>, x: &Tensor<i32, [?]>"
    main = "    let x = arange::<i32>(4);\n    let mut z = zeros::<i32>([4]);\n    k(z.partition([4]), &x).sync();\n" \
        "    print(z);"
    f = _kernel(tmp_path, "    let t = x.load_like(z) * 2.0;\n    z.store(t as i32);", params, main)
    d = first_error(f)
    assert d.code == "E0201" and d.help == (
        "write the integer `2`, or cast the other side with `as`: `x.load_like(z) as f32`",), d.help
    f.write_text(f.read_text(encoding="utf-8").replace("* 2.0", "* 2"), encoding="utf-8")
    assert run_program(f)[1] == "Tensor<i32, [4]> [0, 2, 4, 6]\n"
    # stored into f16, the cast is to f16, and the integer is not offered (an i32 product stored into f16)
    f = _kernel(tmp_path, "    z.store(x.load_like(z) * 2.0);", params.replace("i32, [M]", "f16, [M]"),
                main.replace("zeros::<i32>", "zeros::<f16>"))
    d = first_error(f)
    assert d.help == ("cast the other side with `as`: `x.load_like(z) as f16`",), d.help
    f.write_text(f.read_text(encoding="utf-8").replace("x.load_like(z) * 2.0", "x.load_like(z) as f16 * 2.0"),
                 encoding="utf-8")
    assert run_program(f)[1] == "Tensor<f16, [4]> [0.0, 2.0, 4.0, 6.0]\n"


def test_round_11_s_partial_helps_give_the_whole_fix() -> None:
    w25 = first_error(DIR / "w25_shift_float.tile")
    assert w25.help == ("cast to an integer with `as`, and the result back to store it: "
                        "`((z.load() as i32) << 2) as f32`",)
    w27 = first_error(DIR / "w27_softmax_f16.tile")
    assert w27.help == ("cast with `as`, and the result back (the result is stored into a tile of `f16`): "
                        "`softmax(x.load_like(z) as f32) as f16`",)


def test_help_check_still_reports_a_rewrite_that_leaves_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                                  ) -> None:
    # w27's help with the result cast back to the wrong type: the rewrite is found and applied, and the store
    # of f32 into f16 left on the line is reported
    from tilelang.sema import generics

    real = generics._cast_arg_help
    monkeypatch.setattr(generics, "_cast_arg_help", lambda *a: real(*a).replace(") as f16`", ") as f32`"))
    text = (DIR / "w27_softmax_f16.tile").read_text(encoding="utf-8")
    [found] = help_check.check_text("w27", text, tmp_path)
    assert "applying `softmax(x.load_like(z) as f32) as f32` leaves E0201" in found, found
    # the same from the caller's diagnostics (test_user_wrong11 passes the ones its own check made)
    assert help_check.check_text("w27", text, tmp_path, driver.check(DIR / "w27_softmax_f16.tile").diagnostics) \
        == [found]
    # and an unchanged help is clean
    monkeypatch.setattr(generics, "_cast_arg_help", real)
    assert help_check.check_text("w27", text, tmp_path) == []


def test_the_rewritten_span_is_the_expression_the_help_reads_as() -> None:
    text = (DIR / "w25_shift_float.tile").read_text(encoding="utf-8")
    d = first_error(DIR / "w25_shift_float.tile")
    [(s, e)] = help_check._rewritten(text, d, "((z.load() as i32) << 2) as f32")
    assert text[s:e] == "z.load() << 2"
    assert help_check._rewritten(text, d, "(z.load() >> 2) as f32") == []  # another operator: no such span


_ROW_MAX = """kernel fn rowmax<const BN: i32>(z: &mut Tensor<f32, [1]>, x: &Tensor<f32, [?, ?]>) {
    let t = x.partition([1, BN]).load([block_id(0), 0]);
    z.store(t.max(1));
}
fn main() {
    let x = full::<f32>([3, 50], -2.0);
    let mut z = zeros::<f32>([3]);
    rowmax::<64>(z.partition([1]), &x).sync();
    print(z);
}
"""


def test_a_row_maximum_that_takes_the_padding_zeros_is_warned_about(tmp_path: Path) -> None:
    """A first-day row maximum: rows of 50 in tiles of 64 read with `load` (zeros past the edge) gave the
    maximum 0 of rows of -2.0, silently. `tilec check` warns at the launch (W0006, its shapes constants) and its
    help, applied, gives -2.0."""
    f = tmp_path / "rowmax.tile"
    f.write_text(_ROW_MAX, encoding="utf-8")
    assert run_program(f)[1] == "Tensor<f32, [3]> [0.0, 0.0, 0.0]\n"  # the silent wrong answer
    [d] = driver.check(f).diagnostics
    assert d.code == "W0006" and d.severity.value == "warning"
    assert d.primary_span is not None and _ROW_MAX[d.primary_span.start:d.primary_span.end] == "&x"
    fix = "x.partition([1, BN]).load_padded([block_id(0), 0], f32::NEG_INFINITY)"
    assert d.help[0] == f"read it with a padding that never wins (f32::NEG_INFINITY): `{fix}`", d.help
    f.write_text(_ROW_MAX.replace("x.partition([1, BN]).load([block_id(0), 0])", fix), encoding="utf-8")
    assert not driver.check(f, deny_warnings=True).diagnostics
    assert run_program(f)[1] == "Tensor<f32, [3]> [-2.0, -2.0, -2.0]\n"


@pytest.mark.parametrize(("change", "warned"), [
    (("rowmax::<64>", "rowmax::<50>"), False),  # the tile fits the row
    (("[3, 50]", "[3, 128]"), False),  # two whole tiles a row (a length that is a multiple of the tile)
    (("let t = x.partition", "let t = x.partition"), True),
    (("fn main() {\n    let x = full::<f32>([3, 50], -2.0);", "fn main() {\n    let w = 50;\n    let x = full::<f32>([3, w * 1], -2.0);"), True),
    (("kernel fn", "#[allow(padded_extremum)]\nkernel fn"), False),  # allowed on the kernel
    (("    z.store(t.max(1));", "    let u = t as f64;\n    z.store(u.sum(1) as f32 + 0.0 * (u.min(1) as f32));"),
     True),  # through a cast and a `let`
    (("t.max(1)", "t.sum(1)"), False),  # a sum: the zeros change nothing
])
def test_the_padding_warning_only_where_a_tile_sticks_out(change: tuple[str, str], warned: bool,
                                                           tmp_path: Path) -> None:
    f = tmp_path / "rowmax.tile"
    assert change[0] in _ROW_MAX
    f.write_text(_ROW_MAX.replace(*change), encoding="utf-8")
    codes = [d.code for d in driver.check(f).diagnostics]
    assert codes == (["W0006"] if warned else []), codes


_COL_SUMS = """kernel fn col_sums<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?, ?]>) {
    z.store(x.partition([6, B]).load([0, block_id(1)]).sum(0));
}
fn main() {
    let x = arange::<f32>(6 * 8).reshape([6, 8]);
    let mut z = zeros::<f32>([8]);
    col_sums(z.partition([4]), &x).sync();
    print(z);
}
"""


def test_a_block_id_of_an_axis_the_grid_has_not_is_warned_about(tmp_path: Path) -> None:
    """A first-day wrong grid: column sums into a 1-D output, the column tile taken as `block_id(1)` ("columns
    are axis 1"), which on the 1-D grid the `[B]` tiles make is always 0: both blocks summed the first four
    columns, silently. `tilec check` warns (W0007, of the kernel alone: no launch needed); its help's
    `block_id(0)`, applied, gives NumPy's column sums."""
    f = tmp_path / "cols.tile"
    f.write_text(_COL_SUMS, encoding="utf-8")
    assert run_program(f)[1] == "Tensor<f32, [8]> [120.0, 126.0, 132.0, 138.0, 120.0, 126.0, 132.0, 138.0]\n"
    [d] = driver.check(f).diagnostics
    assert d.code == "W0007" and d.message == "`block_id(1)` is always 0: the grid of `col_sums` is 1-D"
    assert "or use an axis the grid has (`block_id(0)`)" in d.help[0], d.help
    f.write_text(_COL_SUMS.replace("block_id(1)", "block_id(0)"), encoding="utf-8")
    assert not driver.check(f, deny_warnings=True).diagnostics
    want = ", ".join(f"{v:.1f}" for v in np.arange(48, dtype=np.float32).reshape(6, 8).sum(0))
    assert run_program(f)[1] == f"Tensor<f32, [8]> [{want}]\n"


@pytest.mark.parametrize(("right", "hint"), [
    ("-x", "as large as the values compared: more likely a wrong result than rounding"),  # a sign error
    ("x * 1.001", "loosen `rtol`/`atol` if that is within what you expect"),  # rounding-sized
])
def test_assert_close_does_not_suggest_a_tolerance_for_a_wrong_result(right: str, hint: str, tmp_path: Path) -> None:
    """Round 12's DFT inverse with a sign error failed `assert_close` with values 4.2 apart at values near 2, and
    the help said to loosen `rtol`/`atol` "if that is within what you expect"."""
    from tilelang.diagnostics.model import TileError

    f = tmp_path / "close.tile"
    f.write_text(f"fn main() {{\n    let x = arange::<f32>(8) + 1.0;\n    let y = {right};\n"
                 "    assert_close(&x, &y);\n}\n", encoding="utf-8")
    with pytest.raises(TileError) as info:
        run_program(f)
    [d] = info.value.diagnostics
    assert d.code == "E0711" and len(d.help) == 1 and hint in d.help[0], d.help


def test_doc_and_the_repl_s_help_show_a_standard_library_item() -> None:
    from tilelang import cli
    from tilelang.repl import ReplSession

    r = tilec_at_root("doc", "softmax", "--color", "never")
    assert r.returncode == cli.EXIT_OK and "`use std::nn::softmax;`" in r.stdout, r.stdout + r.stderr
    assert "fn softmax<const M: i32, const N: i32>(x: Tile<f32, [M, N]>) -> Tile<f32, [M, N]>" in r.stdout
    assert "Softmax of each row, numerically stable" in r.stdout
    r = tilec_at_root("doc", "PI", "--color", "never")
    assert r.returncode == cli.EXIT_OK and "`use std::math::PI;`" in r.stdout and "const PI" in r.stdout
    r = tilec_at_root("doc", "no_such_item_anywhere")
    assert r.returncode == cli.EXIT_ERRORS and "no entry named `no_such_item_anywhere`" in r.stderr
    out = ReplSession(device="cpu").feed(":help silu")
    assert out.ok and "`use std::nn::silu;`" in out.stdout and "fn silu<" in out.stdout, out.stderr


def test_a_std_function_as_a_method_of_a_host_tensor_is_sent_into_a_kernel(tmp_path: Path) -> None:
    # std::nn's functions take tiles: on a host tensor the help says to call it in a kernel, as E0203's does
    # for `softmax(x)` on the host (z35), not `softmax(x)` (a tile's help)
    f = tmp_path / "h.tile"
    f.write_text("fn main() {\n    let x = randn::<f32>([4, 8], 1);\n    print(x.softmax(1));\n}\n", encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0103" and "`z.store(softmax(x.load_like(z)))` with `x` passed as `&x`" in d.help[0], d.help


@pytest.mark.parametrize(("generics", "braced"), [
    ("<N, 2 * N>", "`{ 2 * N }`"), ("<N, N + 1>", "`{ N + 1 }`"), ("<N, (N - 1) / 2>", "`{ (N - 1) / 2 }`"),
    ("<N, [N]+>", None),  # a fuzz mutant (seed 251): a shape's typo, not an expression to brace (it said `{ [B]+ }`)
])
def test_the_braces_help_writes_the_argument_it_reads(generics: str, braced: str | None, tmp_path: Path) -> None:
    f = tmp_path / "t.tile"
    f.write_text(f"fn main() {{\n    let n = f::{generics}(1);\n}}\n", encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0002", d.code
    assert (braced in d.help[0]) if braced else ("braces" not in d.help[0]), d.help


def test_a_quote_before_a_call_is_stray(tmp_path: Path) -> None:
    # a fuzz mutant (seed 251, case 865): `load(["block_id(0), block_id(1)])` was told to close the string after
    # `block_id(0)`, a string in a tile index; what follows the quote is a call: code, a stray quote
    f = tmp_path / "q.tile"
    f.write_text('fn main() {\n    let x = arange::<f32>(4);\n    print(x.sum(["block_id(0), 1]));\n}\n', encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0008" and d.help[0].startswith("remove this `\"` if it does not belong"), d.help
    # seed 283 case 1550: a quote before a number, `partition(["1, 1])`: code too
    f.write_text('fn main() {\n    let x = zeros::<f32>(["4, 2]);\n    print(x);\n}\n', encoding="utf-8")
    assert first_error(f).help[0].startswith("remove this `\"` if it does not belong")
    f.write_text('fn main() {\n    print("total: {}, 3);\n}\n', encoding="utf-8")  # text: close it
    assert first_error(f).help[0] == 'add the closing `"` where the text ends: `"total: {}", 3);`'


@pytest.mark.parametrize(("line", "hint", "fixed"), [
    # fuzz seed 263 case 518: a mix inside a tile index was cast to `i64`, which the index then refused
    ("    z.store(x.partition([B]).load([block_id(0) + 0i64]));", "`0i64 as i32` (a tile index is an `i32`)",
     "    z.store(x.partition([B]).load([block_id(0) + (0i64 as i32)]));"),
    # case 1240: `&` of an f32 tile and an i64 was told `1i64 as f32`, which `&` then refused
    ("    z.store(x.load_like(z) & 1i64);", "`((x.load_like(z) as i64) & 1i64) as f32`",
     "    z.store(((x.load_like(z) as i64) & 1i64) as f32);"),
])
def test_mix_helps_inside_an_index_or_a_bitwise_operation(line: str, hint: str, fixed: str, tmp_path: Path) -> None:
    src = ("kernel fn k<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>) {\n" + line + "\n}\n"
           "fn main() {\n    let x = arange::<f32>(8);\n    let mut z = zeros::<f32>([8]);\n"
           "    k(z.partition([4]), &x).sync();\n    print(z);\n}\n")
    f = tmp_path / "k.tile"
    f.write_text(src, encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0201" and hint in d.help[0], d.help
    f.write_text(src.replace(line, fixed), encoding="utf-8")
    assert not driver.check(f, deny_warnings=True).diagnostics
    assert run_program(f)[1].startswith("Tensor<f32, [8]> [")
    assert help_check.check_text("k", src, tmp_path) == []  # the help, applied by help_check, checks clean


def test_store_aware_helps_of_where_and_full(tmp_path: Path) -> None:
    """Fuzz seed 277: a mix inside `where` stored into f16 offered `where(..) as f32` first (the store then
    refused it), and `z.store(full::<f32>([B], n))` of an i32 `n` into an i32 `z` was told `n as f32` (then
    f32 stored into i32, a second error): `where`'s mix casts toward the store, `full`'s turbofish is named."""
    f = tmp_path / "k.tile"
    src = ("kernel fn k<const B: i32>(h: &mut Tensor<f16, [B]>, z: &mut Tensor<i32, [B]>) {\n"
           "    let i = arange::<i32>(B);\n"
           "    h.store(where(i == 0, full::<f32>([B], 1.5), full::<f16>([B], 2.5)));\n"
           "    let n = block_id(0) + 7;\n    z.store(full::<f32>([B], n));\n}\n"
           "fn main() {\n    let mut h = zeros::<f16>([4]);\n    let mut z = zeros::<i32>([4]);\n"
           "    k(h.partition([4]), z.partition([4])).sync();\n    print(h, z);\n}\n")
    f.write_text(src, encoding="utf-8")
    errs = [d for d in driver.check(f).diagnostics if d.severity.value == "error"]
    assert [d.code for d in errs] == ["E0201", "E0203"], [(d.code, d.message) for d in errs]
    assert errs[0].help == ("cast with `as`: `full::<f32>([B], 1.5) as f16` (the result is stored into a tile of "
                            "`f16`)",), errs[0].help
    assert errs[1].help[0].startswith("write the value's type in the turbofish") and "`full::<i32>(..)`" in \
        errs[1].help[0], errs[1].help
    f.write_text(src.replace("full::<f32>([B], 1.5)", "(full::<f32>([B], 1.5) as f16)")
                 .replace("full::<f32>([B], n)", "full::<i32>([B], n)"), encoding="utf-8")
    assert run_program(f)[1] == "Tensor<f16, [4]> [1.5, 2.5, 2.5, 2.5] Tensor<i32, [4]> [7, 7, 7, 7]\n"


def test_a_mix_in_a_branch_of_a_returned_if_casts_toward_the_return_type(tmp_path: Path) -> None:
    # fuzz seed 281 case 2438: `n / per_block` (i32 / f32) in the `else` of a function's tail `if` was told
    # `n as f32`, whose f32 the `-> i32` then refused: a branch's value is returned too
    f = tmp_path / "b.tile"
    src = ("fn blocks(n: i32, per_block: f32) -> i32 {\n    if per_block == 0.0 { 0 } else { n / per_block }\n}\n"
           "fn main() {\n    print(blocks(10, 4.0));\n}\n")
    f.write_text(src, encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0201" and d.help == ("cast with `as`: `per_block as i32` (the function returns `i32`)",), d.help
    assert help_check.check_text("b", src, tmp_path) == []
    f.write_text(src.replace("n / per_block", "n / (per_block as i32)"), encoding="utf-8")
    assert run_program(f)[1] == "2\n"


def test_a_mix_under_a_reduction_casts_toward_the_assignment(tmp_path: Path) -> None:
    # fuzz seed 293 case 10: `acc = acc + (w as bf16 * x).sum(1)` (x f32, acc f32) offered `x as bf16` "to
    # compute in bf16" too, whose bf16 sum the f32 `acc` then refused: a sum's (reshape's, ..) store context
    # reaches its receiver
    f = tmp_path / "k.tile"
    src = ("kernel fn k<const B: i32>(z: &mut Tensor<f32, [1]>, w: &Tensor<f32, [?]>, x: &Tensor<f32, [?]>) {\n"
           "    let mut acc: f32 = 0.5;\n"
           "    acc = acc + ((w.partition([B]).load([0]) as bf16) * x.partition([B]).load([0])).sum(0);\n"
           "    z.store(full::<f32>([1], acc));\n}\n"
           "fn main() {\n    let w = ones::<f32>([4]);\n    let x = arange::<f32>(4);\n    let mut z = zeros::<f32>([1]);\n"
           "    k::<4>(z.partition([1]), &w, &x).sync();\n    print(z);\n}\n")
    f.write_text(src, encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0201" and d.help == ("cast with `as`: `w.partition([B]).load([0]) as bf16 as f32`",), d.help
    f.write_text(src.replace("(w.partition([B]).load([0]) as bf16)", "(w.partition([B]).load([0]) as bf16 as f32)"),
                 encoding="utf-8")
    assert run_program(f)[1] == "Tensor<f32, [1]> [6.5]\n"
