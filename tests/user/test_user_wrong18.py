"""Round 18 of the user's mistakes (huser18, 2026-12-06), each with the help applied by the letter and the
fixed program checked against NumPy (round 18's checks of the program it was meant to be).

- u01 a device function written for the launch's size, `fn hash(k: Tile<u32, [512]>, ..) -> Tile<i32, [512]>`,
  called with the kernel's `[B]` tiles (E0203): the help was "pass a `Tile<u32, [512]>` here (`.reshape`
  ..), or change the parameter `k`'s type"; it now writes the function's header generic over that size
  (`fn hash<const B: i32>(k: Tile<u32, [B]>, a: u32) -> Tile<i32, [B]>`).
- u02 an integral image's row pass whose own tile is a band of 16 x 150 walked in nested tiles of 64
  (E0402 "must divide"): the help was "launch with an own tile that the nested tile shape divides"; it now
  gives the own dimension rounded up, `W = 192`, and says that the tile may stick out past the edge.
- u03 the column pass loops `for i in 0..px.num_tiles(0)` (the input's tiles) and stores `po.store(.., [i,
  0])` (E0407): the label said "`x` is a parameter of `col_scan`: its range is not known here" and the help
  "a loop variable of `for j in 0..po.num_tiles(0)`" (whatever the variable's name); it now says that `i`
  counts `px`'s tiles, not `po`'s, and writes the loop with `i`.
- u04 the band declared `out: &mut Tensor<i32, [BR, ?]>` (E0221): the help was the general `kernel fn
  k<const B: i32>(z: &mut Tensor<f32, [B]>)`; it now writes the kernel's header with the `?` a new
  generic, `W`, which the launch's partition gives.
- u05 PyTorch's `(next != labels).any().item()` written `(next != labels).max().item()` on the host (E0103): a
  host reduction is the scalar itself; the help made a one-element tensor of it (`full::<bool>([1], ..)`) to
  call `.item()` on; it now says to use it without the `.item()`.
- u06 torch.matmul's batch, `dot(x, p)` of [BB, 4, 4] tiles (E0206): the help was "reshape it to 2-D, e.g.
  `t.reshape([1, N])`", which is no batched product; it now writes the batch as a broadcast product summed
  over K (in f32 for f16/bf16 tiles, as `dot` sums).
- u07 the identity built PyTorch's way on the host, `result[i][i] = 1.0` in a loop (E0114): the help was
  `result = where(mask, v, result);` with the mask left to write (round 17 wrote it for tiles only); a host
  tensor of constant shape gets it written too, and a row (`z[0] = ones::<f32>([8])`: fewer indices than
  axes, the value broadcast over the rest). PyTorch's `copy_`, `fill_`, `zero_` and `.dtype()` on a tensor
  got the list of methods: each now gets its Tile spelling.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from test_user_programs18 import CHECKS
from userprog import DIR, run_program, run_time_fix, wrong_suite

import tilelang.run as run
from tilelang.diagnostics.model import TileError

HASH = "fn hash<const B: i32>(k: Tile<u32, [B]>, a: u32) -> Tile<i32, [B]>"
EYE = ("result = where((arange::<i32>(48).reshape([48, 1]) == i) && (arange::<i32>(48).reshape([1, 48]) == i), "
       "1.0, result);")
ROW_SCAN = "kernel fn row_scan<const BR: i32, const BC: i32, const W: i32>(out: &mut Tensor<i32, [BR, W]>"

# file: (a phrase of the first error's help, the fix: (old, new) replacements)
FIXES: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "u01_device_fn_of_a_fixed_width": (f"`{HASH}`", [("fn hash(k: Tile<u32, [512]>, a: u32) -> Tile<i32, [512]>", HASH)]),
    "u02_band_not_a_multiple_of_the_nested_tile": (
        "`W = 192`, 150 rounded up", [("row_scan::<16, 64, 150>(rows.partition([16, w])",
                                       "row_scan::<16, 64, 192>(rows.partition([16, 192])")]),
    "u03_nested_store_counted_by_the_input": ("`for i in 0..po.num_tiles(0)`",
                                              [("for i in 0..px.num_tiles(0)", "for i in 0..po.num_tiles(0)")]),
    "u05_item_of_a_host_reduction": ("without `.item()`", [("(next != labels).max().item()", "(next != labels).max()")]),
    "u06_dot_of_a_batch_of_matrices": (
        "a broadcast product summed over K: `(x.reshape([BB, 4, 4, 1]) * p.reshape([BB, 1, 4, 4])).sum(2)`",
        [("dot(x, p)", "(x.reshape([BB, 4, 4, 1]) * p.reshape([BB, 1, 4, 4])).sum(2)"),
         ("dot(p, p)", "(p.reshape([BB, 4, 4, 1]) * p.reshape([BB, 1, 4, 4])).sum(2)")]),
    "u07_identity_by_element_assignment": (
        f"`{EYE}`", [("        result[i][i] = 1.0;", f"        {EYE}")]),
    "u04_own_band_of_runtime_width": (
        f"`{ROW_SCAN}`", [("kernel fn row_scan<const BR: i32, const BC: i32>(out: &mut Tensor<i32, [BR, ?]>",
                           ROW_SCAN)]),
}

FIXED = {"u01_device_fn_of_a_fixed_width": CHECKS["t11_count_min_sketch"],
         "u02_band_not_a_multiple_of_the_nested_tile": CHECKS["t12_integral_image_queries"],
         "u03_nested_store_counted_by_the_input": CHECKS["t12_integral_image_queries"],
         "u04_own_band_of_runtime_width": CHECKS["t12_integral_image_queries"],
         "u05_item_of_a_host_reduction": CHECKS["t14_connected_components"],
         "u06_dot_of_a_batch_of_matrices": CHECKS["t15_batched_expm"],
         "u07_identity_by_element_assignment": CHECKS["t06_markov_matrix_power"]}

(test_every_mistake_has_a_fix, test_the_help_leads_to_a_working_program,
 test_the_editor_shows_the_same_first_error) = wrong_suite("u*.tile", FIXES, FIXED)


def test_the_nested_index_label_names_the_loop_s_partition() -> None:
    from userprog import first_error

    d = first_error(DIR.parent / "wrong" / "u03_nested_store_counted_by_the_input.tile")
    assert d.code == "E0407"
    assert any("`i` counts the tiles of `px`, not of `po`" in lb.message for lb in d.labels), d.labels


def test_arithmetic_the_compiler_knows_overflows_without_blaming_generics(tmp_path: Path) -> None:
    """v01 (tests/user/wrong_run): `(shard * 1000000000) as i64` of a `let mut shard = 3; shard += 1;` in a
    kernel is `i32` arithmetic whose value the lowering knows (4e9): E0227 said "a kernel's const generic is
    untyped where it is read" and "call the kernel with smaller const generics", though no generic is read
    there. It now says the operands' values are known and writes the widened operation, which runs."""
    path = DIR.parent / "wrong_run" / "v01_product_past_i32_known_at_compile.tile"
    edits = [("(shard * 1000000000) as i64", "(shard as i64) * 1000000000")]
    fixed = run_time_fix(path, "E0227", "`(shard as i64) * 1000000000`", edits, tmp_path)
    with pytest.raises(TileError) as info:
        run.execute(str(path), "cpu", out=io.StringIO())
    d = info.value.diagnostics[0]
    assert "const generic" not in " ".join([d.message, *d.notes, *d.help]), d
    tensors, out = run_program(fixed)
    np.testing.assert_array_equal(tensors["z"], 4_000_000_000 + np.arange(10))
    assert out == "4000000000 4000000009\n"


@pytest.mark.parametrize(("line", "hint"), [
    ("z[0] = ones::<f32>([8]);", "`z = where(arange::<i32>(16).reshape([16, 1]) == 0, ones::<f32>([8]), z);`"),
    # (huser26: the argument and the element type written in, and an in-place form beside)
    ("z.copy_(&x);", "`z = x.clone();`"),
    ("z.fill_(2.0);", "`z = full::<f32>(z.shape(), 2.0);`"),
])
def test_pytorch_s_in_place_habits_on_a_host_tensor_get_their_spelling(line: str, hint: str, tmp_path: Path) -> None:
    from tilelang import driver

    f = tmp_path / "h.tile"
    f.write_text("fn main() {\n    let x = ones::<f32>([16, 8]);\n    let mut z = zeros::<f32>([16, 8]);\n"
                 f"    {line}\n    print(z.sum(), x.sum());\n}}\n", encoding="utf-8")
    (d,) = [x for x in driver.check(f).diagnostics if x.severity.value == "error"]
    assert any(hint in h for h in d.help), d.help


def test_an_element_offset_as_a_page_s_tile_index_is_warned(tmp_path: Path) -> None:
    """t03's paged decode written with CUDA's element offset, `pk.load([kvh, page * P, 0])` for the page's [16, 64]
    tile: it checked clean and read tile `page * 16`, past the pool (zeros: a silently wrong attention). W0009
    now says the index is scaled by the tile's own size; its help applied is t03, which passes its check."""
    from tilelang import driver

    src = (DIR / "t03_paged_decode_attention.tile").read_text(encoding="utf-8")
    wrong = tmp_path / "paged.tile"
    wrong.write_text(src.replace("pk.load([kvh, page, 0])", "pk.load([kvh, page * P, 0])"), encoding="utf-8")
    (d,) = driver.check(wrong).diagnostics
    assert d.code == "W0009" and any("`page`" in h for h in d.help), (d.code, d.help)
    fixed = tmp_path / "fixed" / "paged.tile"
    fixed.parent.mkdir()
    fixed.write_text(wrong.read_text(encoding="utf-8").replace("page * P, 0", "page, 0"), encoding="utf-8")
    assert not driver.check(fixed, deny_warnings=True).diagnostics
    tensors, out = run_program(fixed)
    CHECKS["t03_paged_decode_attention"](tensors, out)
