"""Round 24 of the user's mistakes (huser25, 2026-12-07), each with the help applied by the letter and the fixed
program checked against NumPy (round 24's checks, tests/user/test_user_programs24.py).

- o01 l07's saturating add of u8 pixels in Rust's spelling, `ta.saturating_add(tb)`: the help was one template
  for every type, `minimum(ta as i64 + tb as i64, i32::MAX as i64) as i32`, an `i32` tile where a `u8` one was
  stored (E0201 once applied), and `saturating_sub`'s said `where(a > b, a - b, 0)` of signed values too; both
  (and `saturating_mul`) are now written for the receiver's type: below, every integer type's help, applied,
  gives Rust's saturating value.
- o02 l10's NCHW -> NHWC copy into a 4-D output partitioned [1, 4, 6, 3]: `tilec check` passed it (E0510 when it
  ran; or the lowering's E0701 where another kernel's generics made `tilec check` lower the instances, as l10's
  did), and E0510's help merged the leading axes into tiles of [4, 6, 3] of [20, 6, 3], the third of which holds
  rows of two images. A partition of constant shapes over more than 3 axes is now E0510 at `tilec check`, and the
  help's merged tiles divide the axis they merge into.
- W0012 (below): l19's global maximum written as a tile `atomic_max` into a one-element tensor.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_user_programs24 import CHECKS
from userprog import wrong_suite

# file: (a phrase of the first error's help, the fix: (old, new) replacements)
FIXES: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "o01_saturating_add_of_u8_pixels": (
        "widen, add and clamp: `minimum(ta as i32 + tb as i32, u8::MAX as i32) as u8`",
        [("ta.saturating_add(tb)", "minimum(ta as i32 + tb as i32, u8::MAX as i32) as u8"),
         ("ta.saturating_sub(tb)", "where(ta > tb, ta - tb, 0)")]),
}

FIXES["o02_nhwc_output_of_four_axes"] = (
    "merge the leading axes: `.reshape([20, 6, 3])` and tiles of [2, 6, 3] (in the kernel's parameter too): along "
    "the merged axis a tile's size must divide 10, which 4 does not",
    [("y: &mut Tensor<f32, [1, BH, W, C]>", "y: &mut Tensor<f32, [BH, W, C]>"),
     ("    let t = x.partition([1, C, BH, W]).load([block_id(0), 0, block_id(1), 0]);\n"
      "    y.store(t.permute([0, 2, 3, 1]));",
      "    let per_image = x.shape()[2] / BH;\n"
      "    let t = x.partition([1, C, BH, W]).load([block_id(0) / per_image, 0, block_id(0) % per_image, 0]);\n"
      "    y.store(t.permute([0, 2, 3, 1]).reshape([BH, W, C]));"),
     ("zeros::<f32>([2, 10, 6, 3]);", "zeros::<f32>([2, 10, 6, 3]).reshape([20, 6, 3]);"),
     ("nchw_to_nhwc::<4, 6, 3>(y.partition([1, 4, 6, 3])", "nchw_to_nhwc::<2, 6, 3>(y.partition([2, 6, 3])"),
     ("&x.permute([0, 2, 3, 1]), rtol", "&x.permute([0, 2, 3, 1]).reshape([20, 6, 3]), rtol")])

FIXED = {"o01_saturating_add_of_u8_pixels": CHECKS["l07_u8_blend_sobel"],
         "o02_nhwc_output_of_four_axes": CHECKS["l10_transposed_operands"]}

(test_every_mistake_has_a_fix, test_the_help_leads_to_a_working_program,
 test_the_editor_shows_the_same_first_error) = wrong_suite("o*.tile", FIXES, FIXED)


def _first_help(src: str) -> str:
    from tilelang import driver

    errs = [d for d in driver.check(src, name="m.tile").diagnostics if d.severity.value == "error"]
    assert errs and errs[0].code == "E0103", [(d.code, d.message) for d in errs]
    return errs[0].help[0]


_SAT = """kernel fn k<const B: i32>(z: &mut Tensor<ELT, [B]>, x: &Tensor<ELT, [?]>, y: &Tensor<ELT, [?]>) {
    let a = x.load_like(z);
    let b = y.load_like(z);
    z.store(EXPR);
}
"""


@pytest.mark.parametrize("dt", ["i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64"])
def test_the_saturating_helps_are_written_for_the_values_type(dt: str, tmp_path: Path) -> None:
    """`a.saturating_add(b)`, `saturating_sub` and (below 64 bits, and `u64`) `saturating_mul` of each integer
    type: the help's code, put in place of the call, checks and gives Rust's saturating result on edge values
    (MIN, MAX, 0, +-1 and their neighbours, every pair)."""
    import tilelang

    np_dt = np.dtype({"i8": "int8", "u8": "uint8", "i16": "int16", "u16": "uint16", "i32": "int32",
                      "u32": "uint32", "i64": "int64", "u64": "uint64"}[dt])
    info = np.iinfo(np_dt)
    edge = sorted(v for v in {info.min, info.min + 1, info.min // 2, -3, -1, 0, 1, 2, 3, 7, info.max // 2,
                              info.max // 3, info.max - 1, info.max} if info.min <= v <= info.max)
    a = np.array([p for p in edge for _ in edge], np_dt)
    b = np.array([q for _ in edge for q in edge], np_dt)
    ops = {"saturating_add": lambda p, q: p + q, "saturating_sub": lambda p, q: p - q,
           "saturating_mul": lambda p, q: p * q}
    for name, f in ops.items():
        if name == "saturating_mul" and dt == "i64":
            continue   # (a sentence, not code: no integer is wider)
        src = _SAT.replace("ELT", dt).replace("EXPR", f"a.{name}(b)")
        help_ = _first_help(src + "fn main() {}\n")
        code = help_.split("`")[1]
        assert f" as {dt}" in code or (dt in ("u8", "u16", "u32", "u64") and name == "saturating_sub") \
            or dt in ("i64", "u64"), (name, help_)
        path = tmp_path / f"{name}.tile"
        path.write_text(_SAT.replace("ELT", dt).replace("EXPR", code.replace("{x}", "a")) + "fn main() {}\n",
                        encoding="utf-8")
        mod = tilelang.load(path)
        z = np.zeros_like(a)
        mod.k(tilelang.partition(z, [64]), a, b).sync()
        want = [min(max(f(int(p), int(q)), info.min), info.max) for p, q in zip(a, b, strict=True)]
        np.testing.assert_array_equal(z, np.array(want, np_dt), err_msg=f"{dt} {name}: {code}")


def test_a_float_or_a_scalar_saturating_call_gets_its_own_types_help() -> None:
    """Floats have no saturating arithmetic (Rust has none either): the help says so and clamps to the finite
    range; a scalar of a kernel (a `u16` parameter) gets its type's help, not `i32`'s."""
    src = _SAT.replace("ELT", "f16").replace("EXPR", "a.saturating_sub(b)") + "fn main() {}\n"
    assert _first_help(src) == ("floats have no saturating arithmetic: `a - b` rounds to an infinity past the "
                                "type's range; `minimum(maximum(a - b, f16::MIN), f16::MAX)` stays finite")
    src = ("kernel fn k<const B: i32>(z: &mut Tensor<u16, [B]>, s: u16) {\n"
           "    z.store(full::<u16>([B], s.saturating_add(7u16)));\n}\nfn main() {}\n")
    assert _first_help(src) == "widen, add and clamp: `minimum(s as i32 + 7u16 as i32, u16::MAX as i32) as u16`"
    host = "fn main() {\n    let v = arange::<i8>(5);\n    print(v.saturating_mul(v));\n}\n"
    assert "`minimum(maximum(v as i32 * v as i32, i8::MIN as i32), i8::MAX as i32) as i8`" in _first_help(host)


def test_a_tile_atomic_past_a_one_element_tensor_is_warned(tmp_path: Path) -> None:
    """l19 as first written: the global maximum as `atomic_max(&best, [0], hi)` of each block's [512] tile of
    packed keys into the one-element `best`, the reference's edge rule at work (the tile updates [0..512) and
    511 values a block are dropped): `best` held the largest of the blocks' first keys, silently, `--sanitize`
    too. W0012 now says so (an error under `-D warnings`) with the reduction to write, which gives l19's answer;
    a tile that fits, one whose size only a run-time launch fixes, and a `?` tensor are not warned about."""
    from userprog import DIR, run_program

    from tilelang import driver

    src = (DIR / "l19_global_argmax_packed_atomic.tile").read_text(encoding="utf-8")
    good = ("        atomic_max(&best, [0], hi.max(0));\n", "        atomic_min(&worst, [0], lo.min(0));\n")
    assert all(g in src for g in good)
    prog = tmp_path / "l19.tile"
    prog.write_text(src.replace(good[0], "        atomic_max(&best, [0], hi);\n"), encoding="utf-8")
    warns = [d for d in driver.check(prog).diagnostics if d.code == "W0012"]
    assert len(warns) == 1 and warns[0].message == (
        "`atomic_max` of a [512] tile at [0] of `best`, a tensor of [1]: 511 of its 512 elements fall past the edge "
        "and are dropped, in every launch")
    assert warns[0].help[0] == ("to keep only the tile's largest value, reduce it first: "
                                "`atomic_max(&best, [0], hi.max(0))`")
    assert [d.code for d in driver.check(prog, deny_warnings=True).diagnostics if d.severity.value == "error"] \
        == ["W0012"]
    t, _ = run_program(prog)
    assert t["at"][0] != t["x"].argmax()    # the silent wrong answer: the largest of the blocks' first values
    t, out = run_program("l19_global_argmax_packed_atomic")   # the help, applied: l19
    CHECKS["l19_global_argmax_packed_atomic"](t, out)
    # not warned: a [2, 3] tile into a [2, 8] tensor at [0, 5] is past the edge only where the tensor is `?`, a
    # tile that fits, a tile sized by a generic only a launch with a run-time value fixes
    kern = ("kernel fn k<const B: i32>(seen: &mut Tensor<i32, [1]>, a: &Tensor<f32, [ADIM]>) {\n"
            "    seen.store(ones::<i32>([1]));\n    unsafe {\n        atomic_add(&a, [IDX], full::<f32>([B], 1.0));\n"
            "    }\n}\nfn main() {\n    let mut seen = zeros::<i32>([1]);\n    let a = zeros::<f32>([8]);\n"
            "    k::<BV>(seen.partition([1]), &a).sync();\n}\n")
    for adim, idx, bv, warned in (("8", "5", "4", True), ("?", "5", "4", False), ("8", "4", "4", False),
                                  ("8", "0", "8", False), ("8", "7", "2", True)):
        w = [d for d in driver.check(kern.replace("ADIM", adim).replace("IDX", idx).replace("BV", bv),
                                     name="m.tile").diagnostics if d.code == "W0012"]
        assert bool(w) == warned, (adim, idx, bv, [d.message for d in w])
    w = [d for d in driver.check(kern.replace("ADIM", "8").replace("IDX", "2").replace("BV", "n")
                                 .replace("let mut seen", "let n = zeros::<i32>([1]).sum() + 7;\n    let mut seen"),
                                 name="m.tile").diagnostics if d.code == "W0012"]
    assert not w, [d.message for d in w]
