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

import io
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
    # (huser26: the first error is now E0510 at the 4-D `&mut` parameter itself, whatever the launches' shapes)
    "merge the leading axes: `y: &mut Tensor<f32, [BH, W, C]>`, and give it a tensor whose leading axes are "
    "merged the same way where it is made",
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
    assert errs and errs[0].code in ("E0102", "E0103"), [(d.code, d.message) for d in errs]
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


def test_pytorch_methods_of_this_rounds_kernels_get_helps_that_run(tmp_path: Path) -> None:
    """Methods a PyTorch user reaches for in round 24's kernels: `t.logsumexp(0)` of a 1-D tile got
    `log(exp(t - t.max(0).reshape([1])).sum(0)) + t.max(0)`, whose `reshape` of a scalar is E0103; `t.clamp_min(0.0)`
    got "a similar name: `cummin`", `dropout(t, p)` "a similar name: `dot`", `t.nan_to_num(0.0)`,
    `t.index_select(..)` and `t.scatter_add(..)` the list of the tiles' methods. Each help's code, put in place of
    the call, runs and gives NumPy's value; dropout's says there are no random numbers in kernels and how l15
    does it."""
    from userprog import program_tensors

    from tilelang import run

    src = """kernel fn k<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>) {
    let t = x.partition([B]).load([0]);
    z.store(full::<f32>([B], 0.0) + EXPR);
}

fn main() {
    let x = where(arange::<i32>(8) == 3, f32::NAN, arange::<f32>(8) * 1.5 - 4.0);
    let mut z = zeros::<f32>([8]);
    k::<8>(z.partition([8]), &x).sync();
}
"""
    x = np.where(np.arange(8) == 3, np.nan, np.arange(8, dtype=np.float32) * 1.5 - 4.0).astype(np.float32)
    fin = np.where(np.isnan(x), 0.0, x)
    cases = {"t.clamp_min(0.0)": np.maximum(x, 0.0), "t.clamp_max(2.0)": np.minimum(x, 2.0),
             "t.nan_to_num(0.0)": fin, "nan_to_num(t)": fin}
    for call, want in cases.items():
        code = _first_help(src.replace("EXPR", call)).split("`")[1]
        path = tmp_path / "m.tile"
        path.write_text(src.replace("EXPR", code), encoding="utf-8")
        got = program_tensors(run.execute(str(path), "cpu", out=io.StringIO()))["z"]
        np.testing.assert_allclose(got, want, err_msg=f"{call}: {code}", equal_nan=True)
    code = _first_help(src.replace("EXPR", "t.logsumexp(0)")).split("`")[1]
    assert code == "log(exp(t - t.max(0)).sum(0)) + t.max(0)", code
    path = tmp_path / "m.tile"
    path.write_text(src.replace("EXPR", code).replace("f32::NAN", "0.5"), encoding="utf-8")
    got = program_tensors(run.execute(str(path), "cpu", out=io.StringIO()))["z"]
    y = np.where(np.arange(8) == 3, 0.5, np.arange(8) * 1.5 - 4.0)
    np.testing.assert_allclose(got, np.log(np.exp(y).sum()) + 0 * y, rtol=1e-6)
    got = _first_help(src.replace("EXPR", "dropout(t, 0.1)"))
    assert got.startswith("Tile has no random numbers in kernels") and "`where(u >= p, t / (1.0 - p), 0.0)`" in got
    for call in ("t.index_select(0, t)", "t.scatter_add(0, t, t)"):
        assert _first_help(src.replace("EXPR", call)).startswith(("load what you need", "sum what lands")), call


def test_a_where_of_literals_returned_as_another_type_gets_the_branches_type(tmp_path: Path) -> None:
    """l16 as first written: its shift matrices `where(.., 1.0, 0.0)` returned as `Tile<f64, [B, B]>` were E0203
    "cast with `as`" (a tile of `f32` made where it is written, as the reference says); the reference's way, the
    branches' type, is now the help (as it was for such a `where` beside an f64 operand, test_user_wrong22) (a negative branch of an unsigned type keeps the cast), and l16 is that
    program."""
    from userprog import DIR

    from tilelang import driver

    src = (DIR / "l16_jacobi_f64_halo_graph.tile").read_text(encoding="utf-8")
    good = "where(if up { r == c + 1 } else { r + 1 == c }, 1.0f64, 0.0f64)"
    assert good in src
    wrong = src.replace(good, "where(if up { r == c + 1 } else { r + 1 == c }, 1.0, 0.0)")
    errs = [d for d in driver.check(wrong, name="m.tile").diagnostics if d.severity.value == "error"]
    assert [d.code for d in errs] == ["E0203"] and errs[0].help[0] == (
        f"write the branches in `f64`: `{good}` (`where` of untyped literals makes `f32` values where it is "
        "written)"), errs[0].help
    src2 = ("fn one<const B: i32>(at: i32) -> Tile<u8, [B]> {\n    where(arange::<i32>(B) == at, 1, -1)\n}\n"
            "fn main() {}\n")
    errs = [d for d in driver.check(src2, name="m.tile").diagnostics if d.severity.value == "error"]
    assert errs and errs[0].help[0].startswith("cast with `as`"), errs[0].help


def test_numpy_flatten_by_reshape_minus_one_gets_the_whole_shape(tmp_path: Path) -> None:
    """`t.reshape(-1)` (NumPy's flatten) of l09's [BR, BN] tiles was "write it in brackets: `[-1]`", whose
    `t.reshape([-1])` is then E0212 "write every size": two steps to a working program. The help now writes the
    size, symbolic in a kernel (`B * 4`) and a number on the host, and applied it checks and runs."""
    from userprog import program_tensors

    from tilelang import driver, run

    src = ("kernel fn k<const B: i32>(z: &mut Tensor<f32, [B * 4]>, x: &Tensor<f32, [?, 4]>) {\n"
           "    let t = x.partition([B, 4]).load([block_id(0), 0]);\n    z.store(EXPR);\n}\n"
           "fn main() {\n    let x = arange::<f32>(24).reshape([6, 4]);\n    let h = x.reshape(-1);\n"
           "    let mut z = zeros::<f32>([24]);\n    k::<3>(z.partition([12]), &x).sync();\n}\n")
    errs = [d for d in driver.check(src.replace("EXPR", "t.reshape(-1)"), name="m.tile").diagnostics
            if d.severity.value == "error"]
    assert [d.code for d in errs] == ["E0203", "E0203"], [(d.code, d.message) for d in errs]
    assert errs[0].help[0].endswith("`t.reshape([B * 4])`") and errs[1].help[0].endswith("`x.reshape([24])`")
    fixed = src.replace("EXPR", "t.reshape([B * 4])").replace("x.reshape(-1)", "x.reshape([24])")
    path = tmp_path / "m.tile"
    path.write_text(fixed, encoding="utf-8")
    assert not [d for d in driver.check(path).diagnostics if d.severity.value == "error"]
    t = program_tensors(run.execute(str(path), "cpu", out=io.StringIO()))
    np.testing.assert_array_equal(t["z"], np.arange(24, dtype=np.float32))
    np.testing.assert_array_equal(t["h"], np.arange(24, dtype=np.float32))


def test_transpose_of_three_axes_gets_the_permutations_written_out(tmp_path: Path) -> None:
    """l10's operands as a batch: `t.transpose()` of a [2, 3, 4] tile (or host tensor) was "use `.permute([..])`
    for other ranks"; the help now writes the two permutations meant (PyTorch's last-two swap, NumPy's `.T`),
    and the first, applied, runs and gives NumPy's `swapaxes`."""
    from userprog import program_tensors

    from tilelang import driver, run

    src = ("kernel fn k(z: &mut Tensor<f32, [2, 4, 3]>, x: &Tensor<f32, [2, 3, 4]>) {\n"
           "    z.store(x.partition([2, 3, 4]).load([0, 0, 0]).transpose());\n}\n"
           "fn main() {\n    let x = arange::<f32>(24).reshape([2, 3, 4]);\n    let mut z = zeros::<f32>([2, 4, 3]);\n"
           "    k(z.partition([2, 4, 3]), &x).sync();\n}\n")
    errs = [d for d in driver.check(src, name="m.tile").diagnostics if d.severity.value == "error"]
    assert [d.code for d in errs] == ["E0217"] and "`.permute([0, 2, 1])` swaps the last two" in errs[0].help[0] \
        and "`.permute([2, 1, 0])` reverses them all" in errs[0].help[0], errs[0].help
    path = tmp_path / "m.tile"
    path.write_text(src.replace(".transpose()", ".permute([0, 2, 1])"), encoding="utf-8")
    t = program_tensors(run.execute(str(path), "cpu", out=io.StringIO()))
    np.testing.assert_array_equal(t["z"], np.arange(24, dtype=np.float32).reshape(2, 3, 4).swapaxes(1, 2))


def test_sorting_a_small_row_gets_the_rank_sort_and_it_runs(tmp_path: Path) -> None:
    """l04 as a user first wrote it, `t.sort(1)` of a [1, N] row: the help said only how to take the k largest one
    at a time. `sort`/`argsort` now also give l04's rank sort; its pieces, put together as the help writes them,
    sort rows with ties and -0.0 as NumPy's stable sort does (values and argsort)."""
    from userprog import program_tensors

    from tilelang import driver, run

    src = ("kernel fn k<const N: i32>(z: &mut Tensor<f32, [1, N]>, o: &mut Tensor<i32, [1, N]>, "
           "x: &Tensor<f32, [?, N]>) {\n    let t = x.load_like(z);\n    BODY\n}\n"
           "fn main() {\n    let x = ((arange::<i32>(48) * 7 % 5) as f32 - 2.0).reshape([6, 8]) * -0.5;\n"
           "    let mut z = zeros::<f32>([6, 8]);\n    let mut o = zeros::<i32>([6, 8]);\n"
           "    k(z.partition([1, 8]), o.partition([1, 8]), &x).sync();\n}\n")
    errs = [d for d in driver.check(src.replace("BODY", "z.store(t.sort(1));"), name="m.tile").diagnostics
            if d.severity.value == "error"]
    code = errs[0].help[0].split("`")
    pieces = {c.split(" = ")[0]: c for c in code if c.startswith(("a = ", "b = ", "i = ", "j = "))}
    rank = next(c for c in code if c.startswith("let rank"))
    pick = next(c for c in code if c.startswith("where(rank"))
    assert len(pieces) == 4 and "where(.., i, -1).max(1)" in errs[0].help[0]
    body = ("".join(f"let {pieces[k]};\n    " for k in "abij") + rank + f"\n    z.store({pick});\n"
            f"    o.store({pick.replace(', a, f32::NEG_INFINITY)', ', i, -1)')});")
    path = tmp_path / "m.tile"
    path.write_text(src.replace("BODY", body), encoding="utf-8")
    assert not [d for d in driver.check(path).diagnostics if d.severity.value == "error"], body
    t = program_tensors(run.execute(str(path), "cpu", out=io.StringIO()))
    order = np.argsort(t["x"], axis=1, kind="stable")
    np.testing.assert_array_equal(t["o"], order)
    np.testing.assert_array_equal(t["z"], np.take_along_axis(t["x"], order, 1))
