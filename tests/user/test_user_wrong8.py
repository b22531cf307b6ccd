"""Round 8 of the user's mistakes (huser8, 2026-12-05 14:46): 15 error codes
not in e01-e52 that a second-week user hits writing multi-kernel programs
(`tests/user/wrong/e54-e68`), and e53, an internal error found on the way.

- e53 (E0103): `t.max(0).reshape([1])` in a kernel generic over `T`: the
  help for a method on a scalar crashed (`AttributeError`, an ICE: a generic
  element type has no `.value`); it now says `full::<T>([1], t.max(0))`.
- e54 `full::<u8>([4], 256)` (E0222), e55 `print` in a `graph { }` (E0228),
  e56 `arange::<i8>(200)` in a kernel (E0231), e57 a Python f-string's
  `"total = {total}"` (E0232: the help now writes the call out, `print("total
  = {}", total)`, where every placeholder is a name and no argument
  follows), e58 a tensor a live graph captured moved (E0307), e59
  `block_id(1)` inside `if last_block(1)` (E0410: the help said to store
  what differs before the region; for the grouped axis's `block_id` it now
  says the region runs once a group and to loop over the group's tiles,
  `for j in 0..num_blocks(1)`), e60 `last_block` in a loop (E0409), e61
  `atomic_add` on a `&mut` parameter (E0416, whose help, a `&` parameter,
  then led to a kernel with no `&mut` parameter: E0509, which only the
  launch reported; `tilec check` reports it now, with a help that names an
  output to add), e62 a kernel reading the tensor its atomics write
  (E0417), e63 two outputs whose partitions give different grids (E0500),
  e64 a constant launch breaking a `#[requires]` (E0513), e65 a tile of 2
  rows for a `[1, B]` parameter (E0216), e66 a nested partition that does
  not divide the own tile (E0402), e67 `partition([_])` without
  `#[autotune]` (E0229), e68 a recursive device function (E0225), e69 a
  local that hides the kernel it then calls (E0115: "`k` is a local"; the
  help said "a value cannot be called", now that the local hides kernel `k`
  and to rename it), e70 `let lens = [10, 50, 64];` passed as a tensor
  (E0203: the help said `.reshape([..])`; a `[..]` is a shape, and Tile has
  no tensor literal: the help now builds the tensor with `arange` and
  `where`), e71 `t[3]` of a loaded tile (E0204: "index host tensors and
  shapes; in a kernel, load another tile or use `where`"; now the mask and
  sum that picks it, and for a slice `t[1..5]` the ways to read a window).

`test_user_wrong.py` checks each file's code, place, underline and help
line; here the first error's help names the fix, the program with the fix
applied passes `tilec check -D warnings`, and it computes what NumPy does.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tilelang import driver
from userprog import assert_help_leads_to_a_working_program, first_error, fixed_program, run_program

DIR = Path(__file__).parent / "wrong"

# file: (a phrase of the first error's help, the fix: (old, new) replacements)
FIXES: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "e53_generic_scalar_reshape": ("`full::<T>([1], t.max(0))`",
                                   [("t.max(0).reshape([1])", "full::<T>([1], t.max(0))")]),
    "e54_literal_out_of_range": ("use a value in 0..=255", [("[4], 256)", "[4], 255)")]),
    "e55_print_in_graph": ("move it out of the `graph { .. }` block",
                           [("        print(z.sum());\n    };", "    };")]),
    # the help's type for the values, and the tensor that holds them
    "e56_arange_i8": ("e.g. `arange::<i16>(200)`", [("i8", "i16")]),
    "e57_fstring_names": ('`print("total = {}", total)`', [('print("total = {total}")', 'print("total = {}", total)')]),
    "e58_move_captured": ("use `z.clone()`", [("let result = z;", "let result = z.clone();")]),
    "e59_block_id_in_last_block": ("`for j in 0..num_blocks(1) { .. }` indexing with `j`",
                                   [("        out.store(g.load([0, block_id(1)]) * 4.0);",
                                     "        let mut acc = zeros::<f32>([1, 1]);\n"
                                     "        for j in 0..num_blocks(1) {\n"
                                     "            acc = acc + g.load([0, j]);\n"
                                     "        }\n"
                                     "        out.store(acc);")]),
    "e60_last_block_in_loop": ("as the kernel's last statement",
                               [("    for i in 0..1 {\n        if last_block(0) {\n", "    if last_block(0) {\n"),
                                ("        }\n    }\n}", "    }\n}")]),
    # the help of the first error (a `&` parameter), then the second one's (E0509: an output to size the grid)
    "e61_atomic_on_mut": ("pass the tensor as `&` (`hist: &Tensor<..>`",
                          [("(hist: &mut Tensor<i32, [4]>,", "(seen: &mut Tensor<i32, [1]>, hist: &Tensor<i32, [4]>,"),
                           ("    unsafe {", "    seen.store(ones::<i32>([1]));\n    unsafe {"),
                           ("    let mut hist = zeros::<i32>([4]);", "    let hist = zeros::<i32>([4]);\n"
                            "    let mut seen = zeros::<i32>([2]);"),
                           ("count::<8>(hist.partition([4]), &x)", "count::<8>(seen.partition([1]), &hist, &x)")]),
    "e62_read_atomic_target": ("read `hist` in a second launch (or on the host after this one)",
                               [("seen.store(full::<i32>([1], hist.partition([4]).load([0]).sum(0)));",
                                 "seen.store(ones::<i32>([1]));"),
                                ("    print(hist);", "    print(hist, hist.sum());")]),
    # the grids agree once both outputs have x's length
    "e63_grids_disagree": ("split every `&mut` tensor into the same grid",
                           [("let mut hi = zeros::<f32>([8]);", "let mut hi = zeros::<f32>([16]);")]),
    "e64_requires_constant": ("pass arguments that meet the requirement", [("&x, 10)", "&x, 6)")]),
    "e65_partition_rank": ("use tiles of size 1 here", [("z.partition([2, 8])", "z.partition([1, 8])")]),
    "e66_nested_partition": ("`B = 6`, 4 rounded up",
                             [("halves(z.partition([4]))", "halves(z.partition([6]))")]),
    "e67_tuner_blank_without_autotune": ("`#[autotune(B = [64, 128])]` before `kernel fn add`",
                                         [("kernel fn add", "#[autotune(B = [64, 128])]\nkernel fn add")]),
    "e68_recursive_device_fn": ("write the recursion as a `for` or `while` loop",
                                [("    if n <= 0 { 0 } else { n + tri(n - 1) }",
                                  "    let mut s = 0;\n    for i in 1..=n {\n        s += i;\n    }\n    s")]),
    # found writing b04 (round 8): a list for a tensor, and a local that hides the kernel it then calls
    "e69_local_hides_kernel": ("rename the local (`let k2 = ..`)",
                               [("let k = arange", "let k2 = arange"), ("&k)", "&k2)")]),
    # (round 13: the help writes the program's own name and values)
    "e70_list_for_a_tensor": ("`let at = arange::<i32>(3); let lens = where(at == 0, 10, where(at == 1, 50, 64));`",
                              [("let lens = [10, 50, 64];",
                                "let at = arange::<i32>(3);\n    let lens = where(at == 0, 10, where(at == 1, 50, 64));")]),
    "e71_tile_element": ("`where(arange::<i32>(8) == 3, t, 0).sum(0)`",
                         [("t[3]", "where(arange::<i32>(8) == 3, t, 0).sum(0)")]),
}

CODES = {"e53": "E0103", "e54": "E0222", "e55": "E0228", "e56": "E0231", "e57": "E0232", "e58": "E0307",
         "e59": "E0410", "e60": "E0409", "e61": "E0416", "e62": "E0417", "e63": "E0500", "e64": "E0513",
         "e65": "E0216", "e66": "E0402", "e67": "E0229", "e68": "E0225", "e69": "E0115", "e70": "E0203",
         "e71": "E0204"}


def test_every_mistake_has_a_fix_and_sixteen_codes_are_new() -> None:
    assert sorted(p.stem for p in DIR.glob("e*.tile") if "e53" <= p.stem < "e72") == sorted(FIXES)  # e72..: round 9
    assert {n[:3]: first_error(DIR / f"{n}.tile").code for n in FIXES} == CODES
    earlier = {first_error(p).code for p in DIR.glob("e*.tile") if p.stem < "e53"}
    assert len(set(CODES.values()) - earlier) == 16  # e54-e69; e53, e70, e71: codes the e-series had


@pytest.mark.parametrize("name", sorted(FIXES))
def test_the_help_leads_to_a_working_program(name: str, tmp_path: Path) -> None:
    assert_help_leads_to_a_working_program(DIR / f"{name}.tile", *FIXES[name], tmp_path)


def test_the_second_help_of_e61_is_e0509_at_check_time(tmp_path: Path) -> None:
    # the first fix alone (a `&` parameter): a kernel without a `&mut` one, which `tilec check` now reports
    edits = [("(hist: &mut Tensor", "(hist: &Tensor"), ("let mut hist", "let hist"),
             ("count::<8>(hist.partition([4]), &x)", "count::<8>(&hist, &x)")]
    f = fixed_program(DIR / "e61_atomic_on_mut.tile", edits, tmp_path)
    d = [x for x in driver.check(f).diagnostics if x.severity.value == "error"]
    assert [x.code for x in d] == ["E0509"] and any("`_grid.partition([1])`" in h for h in d[0].help)


def _run(name: str, tmp_path: Path) -> tuple[dict[str, np.ndarray], str]:
    return run_program(fixed_program(DIR / f"{name}.tile", FIXES[name][1], tmp_path))


def test_the_fixed_programs_compute_what_numpy_does(tmp_path: Path) -> None:
    assert _run("e53_generic_scalar_reshape", tmp_path)[1] == "Tensor<f32, [1]> [7.0]\n"
    np.testing.assert_array_equal(_run("e54_literal_out_of_range", tmp_path)[0]["mask"], np.full(4, 255, np.uint8))
    assert _run("e55_print_in_graph", tmp_path)[1] == "16.0\n"  # two replays; the recording runs nothing
    t, out = _run("e56_arange_i8", tmp_path)
    np.testing.assert_array_equal(t["z"], np.arange(200, dtype=np.int16))
    assert out == "199\n"
    assert _run("e57_fstring_names", tmp_path)[1] == "total = 10\n"
    assert _run("e58_move_captured", tmp_path)[1] == "8.0\n"  # one replay before the copy
    np.testing.assert_array_equal(_run("e59_block_id_in_last_block", tmp_path)[0]["out"], [[16.0], [16.0]])
    np.testing.assert_array_equal(_run("e60_last_block_in_loop", tmp_path)[0]["out"], [16.0])
    np.testing.assert_array_equal(_run("e61_atomic_on_mut", tmp_path)[0]["hist"], [4, 4, 4, 4])
    assert _run("e62_read_atomic_target", tmp_path)[1] == "Tensor<i32, [4]> [4, 4, 4, 4] 16\n"
    t, _ = _run("e63_grids_disagree", tmp_path)
    x = np.arange(16, dtype=np.float32) - 8
    np.testing.assert_array_equal(t["lo"], np.minimum(x, 0))
    np.testing.assert_array_equal(t["hi"], np.maximum(x, 0))
    assert _run("e64_requires_constant", tmp_path)[1] == "15.0\n"  # 0 + 1 + .. + 5
    np.testing.assert_array_equal(_run("e65_partition_rank", tmp_path)[0]["z"], np.full((4, 8), 2.0))
    # two own tiles of 6 (the second past the end from element 8 on), each two nested tiles of 3
    np.testing.assert_array_equal(_run("e66_nested_partition", tmp_path)[0]["z"], [1, 1, 1, 2, 2, 2, 1, 1])
    assert _run("e67_tuner_blank_without_autotune", tmp_path)[1] == "3000.0\n"
    np.testing.assert_array_equal(_run("e68_recursive_device_fn", tmp_path)[0]["z"],
                                  np.repeat(np.arange(4) * (np.arange(4) + 1) // 2, 2))
    np.testing.assert_array_equal(_run("e69_local_hides_kernel", tmp_path)[0]["z"], [0, 2, 4])
    np.testing.assert_array_equal(_run("e70_list_for_a_tensor", tmp_path)[0]["z"], [11, 51, 65])
    assert _run("e71_tile_element", tmp_path)[1] == "Tensor<f32, [1]> [3.0]\n"
