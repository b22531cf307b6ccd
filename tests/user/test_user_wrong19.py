"""Round 19 of the user's mistakes (huser19, 2026-12-06), each with the help applied by the letter and the
fixed program checked against NumPy (round 19's checks of the program it was meant to be).

- b01 a chunked linear attention counting its chunks from the input's length, `for c in 0..(len + C - 1) / C`,
  stored through the output's nested tiles (E0407): the label said "this index may depend on tensor data",
  though it depends on a shape; it now says that `c` counts up to a run-time size, and the help loops over
  the partition's own tiles (the tiles past the data read zeros and their stores are dropped).
- b02 Rust's closure in a kernel, `let quantise = |t: Tile<f32, [256, 1]>| ..;` (E0003): "expected expression,
  found `|`" with the help "write a value here: a literal, a name, a call, or `(..)`"; it now says that Tile
  has no closures and writes the top-level function to call.
- b03 4-bit weights unpacked from a `[BR, G / 2]` u8 tile into `[BR, (G / 2) * 2]` and stored into a
  `[BR, G]` tile (E0218; and E0202 against a `[1, G]` tile): the help was "reshape or broadcast the tile to
  the destination's shape", which the checker refuses the same way (the element counts differ for an odd
  `G`); it now says that they agree only for an even `G` and makes the half a const generic, `H`, with
  `2 * H` where `G` was.
- b04 CUDA's `atomicOr` to set a Bloom filter's flags, `atomic_or(&flags, [0], set)` (E0102): the help was "a
  function with a similar name exists: `atomic_min`", which would clear them; it now lists Tile's atomics and
  sets a flag per bit with `atomic_max` (CUDA's `atomicAnd`/`Xor`/`Sub`/`Inc`/`Exch`/`CAS` get their spellings
  or why not).
- x15 with one `)` too many on a line inside a `for` block (E0005 "mismatched closing delimiter"; a test here,
  not a wrong/ file: round 10's test keeps E0005 to its own files): the help said "close the `{` with `}`
  first"; it now counts the line's parentheses and says to remove the extra `)`.
- round 14's i04, `dist.argmin()` of a scalar, was told "there is a method with a similar name: `asin`" once
  `asin` became a scalar method: a method of other receivers is told so before any similar name.
"""

from __future__ import annotations

from pathlib import Path

from test_user_programs19 import CHECKS
from userprog import wrong_suite

QUANTISE = """fn quantise(t: Tile<f32, [256, 1]>) -> Tile<u32, [256]> {
    (minimum(maximum(t * 1024.0, 0.0), 1023.0) as u32).reshape([256])
}

kernel fn encode3"""

# file: (a phrase of the first error's help, the fix: (old, new) replacements)
FIXES: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "b01_chunks_counted_from_the_input_length": (
        "`for c in 0..po.num_tiles(1)`", [("for c in 0..(len + C - 1) / C", "for c in 0..po.num_tiles(1)")]),
    "b02_closure_in_a_kernel": (
        "Tile has no closures; write a function at the top level of the file",
        [("    let quantise = |t: Tile<f32, [256, 1]>| (minimum(maximum(t * 1024.0, 0.0), 1023.0) as u32)"
          ".reshape([256]);\n", ""), ("kernel fn encode3", QUANTISE)]),
    "b03_half_width_generic_not_exact": (
        "make the quotient a const generic of its own, `const H: i32` for `G / 2`, and write `2 * H` where `G` was",
        [("const G: i32>", "const H: i32>"), ("G / 2", "H"), ("[BR, G]", "[BR, 2 * H]"), ("[G]", "[2 * H]"),
         ("[1, G]", "[1, 2 * H]"), ("::<16, 32>", "::<16, 16>")]),
    "b04_atomic_or_for_flags": (
        "set it with `atomic_max(&flags, [i], 1)`", [("atomic_or(&flags, [0], set)", "atomic_max(&flags, [0], set)")]),
}

FIXED = {"b01_chunks_counted_from_the_input_length": CHECKS["x03_chunked_linear_attention"],
         "b02_closure_in_a_kernel": CHECKS["x05_morton_codes"],
         "b03_half_width_generic_not_exact": CHECKS["x09_int4_group_quant_pack"],
         "b04_atomic_or_for_flags": CHECKS["x15_bloom_filter_flags"]}

(test_every_mistake_has_a_fix, test_the_help_leads_to_a_working_program,
 test_the_editor_shows_the_same_first_error) = wrong_suite("b*.tile", FIXES, FIXED)


def test_a_broadcast_of_shapes_equal_only_for_an_even_generic_gets_the_same_help() -> None:
    """b03's second error, `q * xg` of [BR, (G / 2) * 2] and [1, G] (E0202), gets the quotient's generic too
    (the 1 against BR is a broadcast, no gap); shapes that differ otherwise keep the general help."""
    from tilelang import driver
    from tilelang.sema.types import Dim, divisibility_gap

    path = Path(__file__).parent / "wrong" / "b03_half_width_generic_not_exact.tile"
    errs = [d for d in driver.check(path).diagnostics if d.severity.value == "error"]
    assert [d.code for d in errs] == ["E0218", "E0202"]
    assert all(any("`const H: i32` for `G / 2`" in h for h in d.help) for d in errs), [d.help for d in errs]
    g = Dim.var("G")
    assert divisibility_gap([g.floordiv(2) * 2], [g]) == (g.floordiv(2) * 2, g, 2)
    assert divisibility_gap([g.floordiv(4) * 4 + 1], [g + 1]) is not None
    assert divisibility_gap([g.floordiv(2) * 3], [g]) is None   # 3 (G / 2) is no exact form of G
    assert divisibility_gap([Dim.const(1), g.floordiv(2) * 2], [Dim.var("B"), g]) is None
    assert divisibility_gap([Dim.const(1), g.floordiv(2) * 2], [Dim.var("B"), g], broadcast=True) is not None


def test_a_loop_counted_by_a_shape_is_told_apart_from_one_counted_by_data(tmp_path: Path) -> None:
    """b01's label names the run-time size the loop counts to; a count read from a tensor's data is still
    "tensor data" (its help: the same loop over the partition's own tiles, or a clamp)."""
    from tilelang import driver
    from userprog import first_error

    d = first_error(Path(__file__).parent / "wrong" / "b01_chunks_counted_from_the_input_length.tile")
    assert d.code == "E0407"
    assert any("`c` counts up to `(len + C - 1) / C`, a run-time size" in lb.message for lb in d.labels), d.labels
    f = tmp_path / "data.tile"
    f.write_text("kernel fn k<const B: i32>(z: &mut Tensor<f32, [B]>, n: &Tensor<i32, [1]>) {\n"
                 "    let q = z.partition([4]);\n"
                 "    for c in 0..n.partition([1]).load([0]).item() {\n"
                 "        q.store(zeros::<f32>([4]), [c]);\n    }\n}\n", encoding="utf-8")
    (e,) = [x for x in driver.check(f).diagnostics if x.severity.value == "error"]
    assert e.code == "E0407" and any("tensor data" in lb.message for lb in e.labels), e.labels


def test_one_parenthesis_too_many_inside_a_block_is_told_to_go(tmp_path: Path) -> None:
    """x15's flag update typed with one `)` too many inside its `for` block: E0005's help said to close the
    block's `{` first; it counts the line's parentheses now, and removing the `)` gives a working program
    (the maximum over the keys taken after the `maximum` instead of before: the same flags)."""
    from userprog import first_error, run_program

    src = (Path(__file__).parent / "programs" / "x15_bloom_filter_flags.tile").read_text(encoding="utf-8")
    good = "        set = maximum(set, (((h == bins) & valid) as i32).max(0));"
    assert good in src
    wrong = tmp_path / "wrong" / "bloom.tile"
    wrong.parent.mkdir()
    wrong.write_text(src.replace(good, "        set = maximum(set, ((h == bins) & valid) as i32).max(0));"),
                     encoding="utf-8")
    d = first_error(wrong)
    assert d.code == "E0005" and d.help == ("this line closes 5 `(` but opens 4: remove the extra `)`, or add the "
                                            "`(` it closes",), d.help
    fixed = tmp_path / "bloom.tile"
    fixed.write_text(wrong.read_text(encoding="utf-8").replace("as i32).max(0));", "as i32).max(0);"),
                     encoding="utf-8")
    CHECKS["x15_bloom_filter_flags"](*run_program(fixed))
