"""Round 9 of the user's mistakes (huser9, 2026-12-05 17:27): twelve error
codes no earlier file of tests/user/wrong reports first (`wrong/e72-e83`),
each a mistake a user makes writing the round's programs, with the help
applied by the letter.

- e72 `0.0 <= t < 1.0` (E0011: the help wrote the split with `...` for the
  third operand; it now writes it out, `0.0 <= t && t < 1.0`), e73 a tile
  named `in` (E0014), e74 `};` before an `else` (E0015), e75 a Windows path
  `"C:\\data"` in a string (E0018: the help listed the escapes; it now also
  says a backslash itself is `\\\\`, `\\\\d` for this one), e76 `fill::<_>(..)`
  for "infer it" (E0022: the help spoke of the autotuner's `partition([_,
  64])`; for a turbofish it now says to leave the turbofish out or give the
  value), e77 `atol = -5.0` for 1e-5 (E0233), e78 two launch handles kept in
  a tuple (E0310: the help said to return the tensor, which does not apply
  in the function that launched; for a tuple or array it now says one
  variable a handle, each waited for), e79 a host function returning a
  `&Tensor` (E0311), e80 `let out = z;` of a `&mut` parameter (E0404), e81
  `mean.load_like(y)` reading back a `[R, 1]` output in the shape of a
  `[R, C]` one (E0408: the help said to partition both with one tile shape,
  which two outputs of different shapes cannot; it now says `mean.load()`
  first, whose `[R, 1]` broadcasts), e82 `atomic_add` of a (sum, count) pair
  at 0 next to `atomic_max` at 1 of one tensor (E0418), e83 a kernel that
  writes only through atomics launched without a partition (E0509).

`test_user_wrong.py` checks each file's code, place, underline and help
line; here the first error's help names the fix, the program with the fix
applied passes `tilec check -D warnings`, and it computes what NumPy does.

`wrong_run/r01-r05`: mistakes only a run finds (the checker passes them),
five codes no wrong table had, each refused with a help that leads to a
working program: E0501 a run-time width against a kernel's static one,
E0510 a 4-D partition of a run-time batch (refused by `tilec check` since huser26, at the
parameter: wrong/s01, test_user_wrong28.py), E0714 host lengths 9 and 10, E0722
an `arange::<i8>` of a run-time 200, E0721 `x[n]` (the help now says one
past the end and the last index). Below them, helps that named what Tile
has not (E0202 lengths, `concat`, `repeat`, `sort`, a generic tile's
element, a host chained comparison).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tilelang import driver
from userprog import (assert_help_leads_to_a_working_program, assert_the_editor_shows_the_first_error, first_error,
                      fixed_program, run_program, run_time_fix)

DIR = Path(__file__).parent / "wrong"

# file: (a phrase of the first error's help, the fix: (old, new) replacements)
FIXES: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "e72_chained_comparison": ("`0.0 <= t && t < 1.0`", [("0.0 <= t < 1.0", "0.0 <= t && t < 1.0")]),
    "e73_reserved_word_name": ("e.g. `in_`", [("let in =", "let in_ ="), ("in * 3.0", "in_ * 3.0")]),
    "e74_else_without_if": ("remove the `;`", [("    };\n    else", "    }\n    else")]),
    "e75_unknown_escape": ("(`\\\\d`)", [("C:\\data", "C:\\\\data")]),
    "e76_underscore_value": ("leave the turbofish out, `fill(..)`", [("fill::<_>(", "fill(")]),
    "e77_negative_tolerance": ("`atol = 1e-4`", [("atol = -5.0", "atol = 1e-4")]),
    "e78_handles_in_a_tuple": ("keep each handle in a variable of its own",
                               [("let pending = (twice(a.partition([4]), &x).launch(), "
                                 "twice(b.partition([2]), &x).launch());",
                                 "let h1 = twice(a.partition([4]), &x).launch();\n"
                                 "    let h2 = twice(b.partition([2]), &x).launch();"),
                                ("pending.0.wait();\n    pending.1.wait();", "h1.wait();\n    h2.wait();")]),
    "e79_host_returns_ref": ("return an owned tensor (`x.clone()`)",
                             [("-> &Tensor<f32, [?]>", "-> Tensor<f32, [?]>"),
                              ("{ a } else { b }", "{ a.clone() } else { b.clone() }")]),
    "e80_mut_param_alias": ("use `z.load()` / `z.store(..)` directly",
                            [("    let out = z;\n    out.store(maximum(x.load_like(out), 0.0));",
                              "    z.store(maximum(x.load_like(z), 0.0));")]),
    "e81_read_other_output": ("read `mean`'s own tile with `mean.load()`", [("mean.load_like(y)", "mean.load()")]),
    "e82_two_atomic_kinds": ("keep the kinds on elements the checker can tell apart",
                             [("atomic_max(&acc, [1]", "atomic_max(&acc, [2]")]),
    # (round 13: the help's parameter is `_grid`, only for the grid, which nothing needs to store into)
    "e83_kernel_without_output": ("`_grid: &mut Tensor<i32, [1]>`",
                                  [("kernel fn count(", "kernel fn count(_grid: &mut Tensor<i32, [1]>, "),
                                   ("    count(&x, &hist).sync();",
                                    "    let mut _grid = zeros::<i32>([1]);\n"
                                    "    count(_grid.partition([1]), &x, &hist).sync();")]),
}

CODES = {"e72": "E0011", "e73": "E0014", "e74": "E0015", "e75": "E0018", "e76": "E0022", "e77": "E0233",
         "e78": "E0310", "e79": "E0311", "e80": "E0404", "e81": "E0408", "e82": "E0418", "e83": "E0509"}


def test_every_mistake_has_a_fix_and_its_code_is_new() -> None:
    assert sorted(p.stem for p in DIR.glob("e*.tile") if "e72" <= p.stem[:3] <= "e83") == sorted(FIXES)
    assert {n[:3]: first_error(DIR / f"{n}.tile").code for n in FIXES} == CODES
    # (the files of rounds before this one: round 13's h* and round 23's f* may meet the same codes again; f01 is
    # E0011's `d >= 0 & d <= 9`; hrev27's m02 is E0418's neighbouring slots)
    earlier = {first_error(p).code for p in DIR.glob("*.tile") if p.stem[:3] not in CODES and p.stem[0] not in "hfm"}
    assert not set(CODES.values()) & earlier


@pytest.mark.parametrize("name", sorted(FIXES))
def test_the_help_leads_to_a_working_program(name: str, tmp_path: Path) -> None:
    assert_help_leads_to_a_working_program(DIR / f"{name}.tile", *FIXES[name], tmp_path)


@pytest.mark.parametrize("name", sorted(FIXES))
def test_the_editor_shows_the_same_first_error(name: str) -> None:
    assert_the_editor_shows_the_first_error(DIR / f"{name}.tile")


def _run(name: str, tmp_path: Path) -> tuple[dict[str, np.ndarray], str]:
    return run_program(fixed_program(DIR / f"{name}.tile", FIXES[name][1], tmp_path))


def test_the_fixed_programs_compute_what_numpy_does(tmp_path: Path) -> None:
    t, out = _run("e72_chained_comparison", tmp_path)
    np.testing.assert_array_equal(t["z"], ((np.arange(8) * 0.25 >= 0) & (np.arange(8) * 0.25 < 1)).astype(np.int32))
    assert out == "4\n"
    assert _run("e73_reserved_word_name", tmp_path)[1] == "84.0\n"  # 3 * (0 + .. + 7)
    assert _run("e74_else_without_if", tmp_path)[1] == "1\n"
    assert _run("e75_unknown_escape", tmp_path)[1] == "results in C:\\data: 6.0\n"
    np.testing.assert_array_equal(_run("e76_underscore_value", tmp_path)[0]["z"], np.full(8, 2.0))
    assert _run("e77_negative_tolerance", tmp_path)[1] == "6.0\n"
    t, out = _run("e78_handles_in_a_tuple", tmp_path)
    np.testing.assert_array_equal(t["a"], np.arange(8) * 2.0)
    np.testing.assert_array_equal(t["b"], np.arange(8) * 2.0)
    assert out == "112.0\n"
    assert _run("e79_host_returns_ref", tmp_path)[1] == "6.0\n"  # 0+1+2+3 > 4 ones
    np.testing.assert_array_equal(_run("e80_mut_param_alias", tmp_path)[0]["z"], np.maximum(np.arange(8) - 4.0, 0))
    t, _ = _run("e81_read_other_output", tmp_path)
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    np.testing.assert_array_equal(t["mean"], x.mean(1, keepdims=True))
    np.testing.assert_array_equal(t["y"], x - x.mean(1, keepdims=True))
    t, out = _run("e82_two_atomic_kinds", tmp_path)
    np.testing.assert_array_equal(t["acc"], [np.arange(16).sum(), 16, 15])  # the sum, 4 blocks of 4, the max
    assert out == "Tensor<i32, [3]> [120,  16,  15]\n"
    np.testing.assert_array_equal(_run("e83_kernel_without_output", tmp_path)[0]["hist"], [4, 4, 4, 4])


def test_lengths_that_differ_where_neither_is_1_get_no_reshape_advice(tmp_path: Path) -> None:
    # `x + y` of host tensors of lengths 10 and 11: the help said "use `.reshape([..])` to add a dimension of
    # size 1, or `.broadcast([..])`", neither of which can make them agree
    f = tmp_path / "lengths.tile"
    f.write_text("fn main() {\n    let x = arange::<f32>(10);\n    let y = arange::<f32>(11);\n"
                 "    print((x + y).sum());\n}\n", encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0202" and list(d.help) == ["axis 0 is 10 on one side and 11 on the other, and neither is 1: "
                                            "nothing broadcasts them; make the two lengths agree"]


# NumPy's and PyTorch's joins, repeats and sorts, which Tile has not: the help said to define `concat`, and
# named `reshape` for `repeat` and `sqrt` for `sort` (similar spellings); now what Tile does instead
_HABITS = {
    "z.store(concat(t, t));": ("E0102", "Tile has no concatenation: in a kernel, store each part into its own "
                                        "nested tile of the output"),
    "z.store(t.repeat(1));": ("E0103", "`t.reshape([1, n]).broadcast([k, n])` repeats all of `t` k times"),
    "z.store(t.sort(0));": ("E0103", "Tile has no sort: the k largest of `t` come one at a time from `argmax`"),
    "z.store(topk(t, 2));": ("E0102", "Tile has no sort"),
}


@pytest.mark.parametrize("line", sorted(_HABITS))
def test_what_tile_has_instead_of_a_join_a_repeat_or_a_sort(line: str, tmp_path: Path) -> None:
    f = tmp_path / "habit.tile"
    f.write_text("kernel fn k(z: &mut Tensor<f32, [4]>, x: &Tensor<f32, [?]>) {\n"
                 f"    let t = x.partition([4]).load([0]);\n    {line}\n}}\n", encoding="utf-8")
    d = first_error(f)
    code, help_start = _HABITS[line]
    assert d.code == code and d.help and d.help[0].startswith(help_start), (d.code, d.help)


def test_an_element_of_a_generic_tile_gets_the_mask_and_sum_too(tmp_path: Path) -> None:
    # `t[0]` of a `Tile<f32, [B]>`: the mask-and-sum help (wrong/e71) was written only for a constant size
    src = ("kernel fn k<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>) {\n"
           "    let t = x.partition([B]).load([block_id(0)]);\n    z.store(t - t[0]);\n}\n"
           "fn main() {\n    let x = arange::<f32>(8) + 1.0;\n    let mut z = zeros::<f32>([8]);\n"
           "    k(z.partition([4]), &x).sync();\n}\n")
    f = tmp_path / "first.tile"
    f.write_text(src, encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0204" and list(d.help) == [
        "pick one element with a mask and a sum: `where(arange::<i32>(B) == 0, t, 0).sum(0)`"]
    f.write_text(src.replace("t[0]", "where(arange::<i32>(B) == 0, t, 0).sum(0)"), encoding="utf-8")
    t, _ = run_program(f)
    np.testing.assert_array_equal(t["z"], [0, 1, 2, 3, 0, 1, 2, 3])  # each block's first element subtracted


def test_a_chained_comparison_of_host_tensors_gets_the_element_wise_split(tmp_path: Path) -> None:
    # `&&` takes tiles and scalars; of host tensors it is E0204 ("combine them with `&`"): E0011's help
    # writes both forms
    src = "fn main() {\n    let x = arange::<f32>(8) * 0.25;\n    print(where(0.0 <= x < 1.0, 1, 0).sum());\n}\n"
    f = tmp_path / "host.tile"
    f.write_text(src, encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0011" and "`(0.0 <= x) & (x < 1.0)`" in d.help[0]
    f.write_text(src.replace("0.0 <= x < 1.0", "(0.0 <= x) & (x < 1.0)"), encoding="utf-8")
    assert run_program(f)[1] == "4\n"


# ---- mistakes found only when the program runs (`wrong_run/`): the first line names the code; the error's
# help names the fix, and the program with it applied runs and prints what NumPy says
RUN_DIR = Path(__file__).parent / "wrong_run"

# file: (a phrase of the error's help, the fix, what the fixed program prints)
RUN_FIXES: dict[str, tuple[str, list[tuple[str, str]], str]] = {
    # E0501: the kernel's static width against a run-time one
    "r01_width_not_the_declared": ("declare the dimension `?`", [("&Tensor<f32, [?, 64]>", "&Tensor<f32, [?, ?]>")],
                                   "384.0\n"),  # 4 x 48 ones doubled; columns 48..63 past x's edge read 0
    # (r02, E0510 of a 4-D partition of a run-time batch: `tilec check` refuses it since huser26, at the
    # 4-D `&mut` parameter; it is wrong/s01, test_user_wrong28.py)
    # E0714: lengths 9 and 10 of host tensors, known when it runs
    "r03_host_lengths": ("the shapes must be equal", [("- x;", "- x[0..n - 1];")], "81.0\n"),  # 9^2 - 0^2
    # E0722: an i8 `arange` of a run-time length
    "r04_arange_i8_run_time": ("use an element type that holds every value", [("arange::<i8>", "arange::<i16>")],
                               "[200] 199\n"),
    # E0721: the help said "indices run from 0 to the axis's length - 1"; one past the end now gets the last index
    "r05_one_past_the_end": ("the last element is at index 9, `t[t.shape()[0] - 1]`", [("x[n]", "x[n - 1]")],
                             "18.0\n"),
}
RUN_CODES = {"r01": "E0501", "r03": "E0714", "r04": "E0722", "r05": "E0721"}


def test_every_run_time_mistake_has_a_fix() -> None:
    mine = [p for p in RUN_DIR.glob("*.tile") if p.stem[:3] in RUN_CODES]  # (later rounds' files: their own tables)
    assert sorted(p.stem for p in mine) == sorted(RUN_FIXES)
    for p in mine:
        assert p.read_text(encoding="utf-8").startswith(f"// a user's mistake at run time: {RUN_CODES[p.stem[:3]]}\n")


@pytest.mark.parametrize("name", sorted(RUN_FIXES))
def test_a_run_time_mistake_is_refused_with_a_help_that_leads_to_a_working_program(name: str, tmp_path: Path) -> None:
    hint, edits, printed = RUN_FIXES[name]
    fixed = run_time_fix(RUN_DIR / f"{name}.tile", RUN_CODES[name[:3]], hint, edits, tmp_path)
    assert run_program(fixed)[1] == printed
