"""Round 15 of the user's mistakes (huser15, 2026-12-06), each with the help
applied by the letter and the fixed program checked against NumPy.

- n01 a histogram as NumPy's `np.add.at(h, bins, 1)`: `atomic_add(&h,
  [bins], 1)` with a tile of bins (E0203). The help said to reduce the
  index to one number (`.max(0)`, `.sum(0)`): a block then adds one count
  in one bin (4 counts of 256). An atomic at a tile of indices (more than one element)
  now says that an atomic does not scatter, and writes the one-hot sums
  updated at offset 0 (`examples/histogram.tile`'s form) for a 1-D tensor
  of constant length.
- n02 the same for `atomic_max` of a tile of values at a tile of group ids
  (a segment maximum): `where(hot, v, f32::MIN).max(0)`.
- n03 a row total of `u8` pixels stored into `i32`: the help cast the sum,
  `t.sum(1) as i32`, which is taken in `u8` and wraps (each row's total
  modulo 256). A sum or product of a narrower type stored into (or met
  by) a wider one casts the elements first, under every sum of a chain:
  `(t as i32).sum(1)`, `(t as i32).cumsum(1).sum(1)`.
- n04 `dot(K, v)` of a matrix and a 1-D tile (NumPy's `K @ v`): the help
  said `t.reshape([1, N])` for either operand; for the right one it now
  writes the column and the matrix-vector product,
  `dot(kt, v.reshape([NW, 1])).reshape([BI])`.
- n05 `y.store(h, [t, 0])`, a row of a recurrence stored by index: the help
  was `y.partition([..]).store(tile, [i, ..])`; it now names the tile's
  shape, `y.partition([1, BD]).store(h, [t, 0])` (and the note names `y`,
  not `z`).
- n06 `b.load_like(out).reshape([M, 1])` with `out` a [1, N] tile and b's
  rows M long (Q^T b of a least-squares batch): E0208 at the launch, whose
  help proposed `.reshape([4, 1])`, keeping 4 of b's 5 values. A reshape of
  a `load_like` tile now says that `load_like` reads the other tile's shape
  and reads `b` through a partition in that orientation, reshaped as
  written (`b.partition([1, M]).load([block_id(0), block_id(1)])
  .reshape([M, 1])`); also where the shapes are constants.
- n07 two `&mut` partitions whose 2-D grids are each other's transposes (a
  scan's [L, D] output and its final [D, N] state, E0500): the help said
  "choose tile shapes that split every `&mut` tensor into the same grid",
  which no tile of the state's declared shape can; it now says the state
  laid out transposed gives the grid (at `tilec check` and at a launch).
- `atomic_add(&u, [0], (v * 1e15) as u64.sum(0))`: a method after a cast in
  an argument was "write one of `,`, `)` or an operator here"; it now puts
  the cast in parentheses as a statement's did (`_cast_then_method`), also
  for a bracketed operand, which the statement's help had not found.
- Rust's methods of an `f32` on a scalar in a kernel: `s.max(0.0)` was told
  to make a tile of `s` (whose `max` then wants an axis), `s.min(1.0)` "a
  similar name: `sin`", `s.log10()` "`log`", `s.ln()` a list of methods, and
  `f32::max(s, 5.0)` (E0109) "bring a file's items into scope". Each now
  says Tile's spelling with the call's own values (`maximum(s, 0.0)`,
  `log(s) * 0.4342945`, `fma(s, 3.0, 1.0)`, ..; `intrinsics/math_habits.
  RUST_SCALAR_METHODS`), and `tilec doc ln` says it too.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tilelang import driver
from userprog import first_error, fixed_program, run_program, wrong_suite

DIR = Path(__file__).parent / "wrong"

HIST = "atomic_add(&h, [0], ((bins.reshape([B, 1]) == arange::<i32>(16).reshape([1, 16])) as i32).sum(0))"
SEG = ("atomic_max(&top, [0], where(g.reshape([B, 1]) == arange::<i32>(8).reshape([1, 8]), s.reshape([B, 1]), "
       "f32::MIN).max(0))")
MV = "dot(kt, v.partition([NW]).load([0]).reshape([NW, 1])).reshape([BI])"
LIKE = "b.partition([1, M]).load([block_id(0), block_id(1)]).reshape([M, 1])"

# file: (a phrase of the first error's help, the fix: (old, new) replacements)
FIXES: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "n01_scatter_add_with_a_tile_index": (f"`{HIST}`", [("atomic_add(&h, [bins], 1)", HIST)]),
    "n02_segment_max_with_a_tile_index": (f"`{SEG}`", [("atomic_max(&top, [g], s)", SEG)]),
    "n03_narrow_sum_cast_after": ("`(t as i32).sum(1)`", [("out.store(t.sum(1))", "out.store((t as i32).sum(1))")]),
    "n04_dot_with_a_vector": (f"`{MV}`", [("dot(kt, v.partition([NW]).load([0]))", MV)]),
    "n05_store_a_row_by_index": ("`y.partition([1, BD]).store(h, [t, 0])`",
                                 [("y.store(h, [t, 0])", "y.partition([1, BD]).store(h, [t, 0])")]),
    "n06_load_like_another_length": (f"`{LIKE}`", [("b.load_like(out).reshape([M, 1])", LIKE)]),
    # the help's layout, then its store and parameter
    "n07_grids_transposed": ("laid out transposed, [4, 32] in tiles of [4, 16], gives [1, 2]",
                             [("zeros::<f32>([32, 4])", "zeros::<f32>([4, 32])"),
                              ("h_last.partition([16, 4])", "h_last.partition([4, 16])"),
                              ("h_last.store(h)", "h_last.store(h.transpose())"),
                              ("h_last: &mut Tensor<f32, [BD, N]>", "h_last: &mut Tensor<f32, [N, BD]>")]),
}


def _n01(t: dict[str, np.ndarray], out: str) -> None:
    bins = np.clip((t["x"] * np.float32(4) + np.float32(8)).astype(np.int32), 0, 15)
    np.testing.assert_array_equal(t["seen"], bins)
    np.testing.assert_array_equal(t["h"], np.bincount(bins, minlength=16))
    assert (t["h"] > 0).sum() > 8 and out == "256\n"


def _n02(t: dict[str, np.ndarray], out: str) -> None:
    v, ids = t["v"], t["ids"]
    np.testing.assert_array_equal(t["top"], [v[ids == g].max() for g in range(8)])
    assert out == "[8]\n"


def _n03(t: dict[str, np.ndarray], out: str) -> None:
    img = t["img"].astype(np.int64)
    assert img.max() > 250
    np.testing.assert_array_equal(t["out"], img.sum(1))
    assert (img.sum(1) > 255).all()  # every row's total is past u8
    assert out == "[5]\n"


def _n04(t: dict[str, np.ndarray], out: str) -> None:
    k, v = t["kmat"].astype(np.float64), t["v"].astype(np.float64)
    np.testing.assert_allclose(t["u"], 0.1 / (k @ v), rtol=1e-5)
    assert out == "[10]\n"


def _n05(t: dict[str, np.ndarray], out: str) -> None:
    x = t["x"].astype(np.float64)
    h, want = np.zeros(40), []
    for s in range(12):
        h = 0.5 * h + x[s]
        want.append(h)
    np.testing.assert_allclose(t["y"], np.array(want), rtol=1e-5, atol=1e-6)
    assert out == "[12, 40]\n"


def _n06(t: dict[str, np.ndarray], out: str) -> None:
    np.testing.assert_allclose(t["out"], np.einsum("kmn,km->kn", t["q"], t["b"]), rtol=1e-12, atol=1e-12)
    assert out == "[6, 4]\n"


def _n07(t: dict[str, np.ndarray], out: str) -> None:
    x = t["x"]
    np.testing.assert_array_equal(t["y"], x * 2)
    np.testing.assert_array_equal(t["h_last"], np.repeat(x[0][None, :], 4, axis=0))   # h[d, n] = x[0, d]
    assert out == "[8, 32] [4, 32]\n"


CHECKS = {"n01_scatter_add_with_a_tile_index": _n01, "n02_segment_max_with_a_tile_index": _n02,
          "n03_narrow_sum_cast_after": _n03, "n04_dot_with_a_vector": _n04, "n05_store_a_row_by_index": _n05,
          "n06_load_like_another_length": _n06, "n07_grids_transposed": _n07}


(test_every_mistake_has_a_fix, test_the_help_leads_to_a_working_program,
 test_the_editor_shows_the_same_first_error) = wrong_suite("n*.tile", FIXES, CHECKS)


def test_the_old_helps_gave_wrong_values(tmp_path: Path) -> None:
    # n01 with the index reduced as the old help said: one count a block, in the block's largest bin
    f = fixed_program(DIR / "n01_scatter_add_with_a_tile_index.tile", [("[bins]", "[bins.max(0)]")], tmp_path)
    h = run_program(f)[0]["h"]
    assert h.sum() == 4 and (h > 0).sum() <= 4
    # n03 with the sum cast after: the u8 sums wrapped
    f = fixed_program(DIR / "n03_narrow_sum_cast_after.tile", [("out.store(t.sum(1))", "out.store(t.sum(1) as i32)")],
                      tmp_path)
    t = run_program(f)[0]
    np.testing.assert_array_equal(t["out"], t["img"].astype(np.int64).sum(1) % 256)


@pytest.mark.parametrize(("expr", "fix"), [
    ("acc = acc + t.sum(1);", "`(t as i32).sum(1)`"),          # met by a wider operand, not stored
    ("acc = acc + sum(t, 1);", "`sum(t as i32, 1)`"),          # the function form
    ("acc = acc + t.cumsum(1).sum(1);", "`(t as i32).cumsum(1).sum(1)`"),  # under every sum of the chain
    ("acc = acc + sum(t.cumsum(1), 1);", "`sum((t as i32).cumsum(1), 1)`"),
    ("acc = acc + t.max(1);", "cast with `as`: `t.max(1) as i32`"),   # a maximum cannot wrap: cast after
])
def test_a_narrow_sum_meeting_a_wider_operand_casts_first(expr: str, fix: str, tmp_path: Path) -> None:
    f = tmp_path / "w.tile"
    f.write_text("kernel fn k(o: &mut Tensor<i32, [4]>, a: &Tensor<u8, [?, ?]>) {\n"
                 "    let t = a.partition([4, 8]).load([0, 0]);\n    let mut acc = zeros::<i32>([4]);\n"
                 f"    {expr}\n    o.store(acc);\n}}\n"
                 "fn main() {\n    let a = full::<u8>([4, 8], 200);\n    let mut o = zeros::<i32>([4]);\n"
                 "    k(o.partition([4]), &a).sync();\n}\n", encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0201" and d.help[0].endswith(fix), d.help


def test_a_vector_on_the_left_of_dot_is_a_row(tmp_path: Path) -> None:
    f = tmp_path / "v.tile"
    f.write_text("kernel fn k(o: &mut Tensor<f32, [1, 4]>, a: &Tensor<f32, [?]>, b: &Tensor<f32, [?, ?]>) {\n"
                 "    o.store(dot(a.partition([8]).load([0]), b.partition([8, 4]).load([0, 0])));\n}\n"
                 "fn main() {\n    let mut o = zeros::<f32>([1, 4]);\n"
                 "    k(o.partition([1, 4]), &ones::<f32>([8]), &ones::<f32>([8, 4])).sync();\n}\n", encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0206" and d.help[0].startswith("a vector on the left is a row: "
                                                      "`a.partition([8]).load([0]).reshape([1, 8])`"), d.help


def test_a_scatter_into_a_tensor_of_run_time_length_says_how_without_a_formula(tmp_path: Path) -> None:
    f = tmp_path / "s.tile"
    src = (DIR / "n01_scatter_add_with_a_tile_index.tile").read_text(encoding="utf-8")
    f.write_text(src.replace("h: &Tensor<i32, [16]>", "h: &Tensor<i32, [?]>"), encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0203" and "one-hot tile, `examples/histogram.tile`" in d.help[0], d.help


def test_a_constant_load_like_reshape_gets_the_partition_too(tmp_path: Path) -> None:
    f = tmp_path / "c.tile"
    f.write_text((DIR / "n06_load_like_another_length.tile").read_text(encoding="utf-8")
                 .replace("<const M: i32, const N: i32>", "").replace("[?, M, N]", "[?, 5, 4]")
                 .replace("[1, M, N]", "[1, 5, 4]").replace("[?, M]", "[?, 5]").replace("[M, N]", "[5, 4]").replace("[1, N]", "[1, 4]")
                 .replace("[M, 1]", "[5, 1]").replace("qtb::<5, 4>", "qtb"), encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0208" and d.help == (
        "`b.load_like(out)` reads a tile of `out`'s shape, [1, 4]; a tile of `b` with another length is read "
        "through a partition: `b.partition([1, 5]).load([block_id(0), block_id(1)]).reshape([5, 1])`",), d.help


@pytest.mark.parametrize(("broken", "fix", "line"), [
    # an argument's cast then a method (the help was "write one of `,`, `)` or an operator here")
    ("(t * 2.0) as i32.sum(0)", "((t * 2.0) as i32).sum(0)", "print({});"),
    ("t.exp() as f64 .max(0)", "(t.exp() as f64).max(0)", "print({}, 1);"),
    # a statement's, of a bracketed operand (`_cast_then_method` took names and calls only)
    ("(t * 2.0) as f64 .max(0)", "((t * 2.0) as f64).max(0)", "let u = {};\n    print(u);"),
])
def test_a_method_after_a_cast_is_put_in_parentheses(broken: str, fix: str, line: str, tmp_path: Path) -> None:
    f = tmp_path / "c.tile"
    src = "fn main() {\n    let t = arange::<f32>(4);\n    " + line + "\n}\n"
    f.write_text(src.replace("{}", broken), encoding="utf-8")
    d = first_error(f)
    assert d.code in ("E0001", "E0002") and d.help == (
        f"a method binds tighter than `as`: put the cast in parentheses, `{fix}`",), (d.code, d.help)
    f.write_text(src.replace("{}", fix), encoding="utf-8")   # the help applied
    assert not driver.check(f, deny_warnings=True).diagnostics


SCALAR = """kernel fn k(z: &mut Tensor<f32, [1]>, x: &Tensor<f32, [?]>) {
    let s = x.partition([4]).load([0]).sum(0);
    let r = EXPR;
    z.store(full::<f32>([1], r));
}
fn main() {
    let x = arange::<f32>(4) * 0.5 - 0.25;
    let mut z = zeros::<f32>([1]);
    k(z.partition([1]), &x).sync();
    print(z.item());
}
"""


@pytest.mark.parametrize(("expr", "fix", "want"), [
    # Rust's methods of an f32 on a scalar: the helps were "make a tile of it with `full::<f32>([1], s)`"
    # (`max`), "a similar name: `sin`" (`min`), "a similar name: `log`" (`log10`), a list of methods (`ln`)
    ("s.max(0.0)", "maximum(s, 0.0)", 2.0),               # s = -0.25 + 0.25 + 0.75 + 1.25 = 2.0
    ("s.min(1.5)", "minimum(s, 1.5)", 1.5),
    ("s.clamp(0.0, 1.0)", "minimum(maximum(s, 0.0), 1.0)", 1.0),
    ("s.ln()", "log(s)", float(np.log(np.float32(2.0)))),
    ("s.log10()", "log(s) * 0.4342945", float(np.float32(np.log(np.float32(2.0))) * np.float32(0.4342945))),
    ("s.mul_add(3.0, 1.0)", "fma(s, 3.0, 1.0)", 7.0),
    ("s.powi(3)", "s.pow(3)", 8.0),
    ("s.recip()", "1.0 / s", 0.5),
    ("f32::max(s, 5.0)", "maximum(s, 5.0)", 5.0),          # E0109 "bring a file's items into scope"
])
def test_rust_s_scalar_methods_get_tile_s_spelling(expr: str, fix: str, want: float, tmp_path: Path) -> None:
    f = tmp_path / "s.tile"
    f.write_text(SCALAR.replace("EXPR", expr), encoding="utf-8")
    d = first_error(f)
    helps = " ".join(d.help)
    assert (f"`{fix}`" in helps) if "::" not in expr else ("`maximum(..)`" in helps), (d.code, d.help)
    f.write_text(SCALAR.replace("EXPR", fix), encoding="utf-8")
    assert not driver.check(f, deny_warnings=True).diagnostics
    tensors, printed = run_program(f)
    np.testing.assert_allclose(float(printed), want, rtol=1e-6)


def test_rust_s_euclidean_remainder_on_an_integer_scalar(tmp_path: Path) -> None:
    # the tiles' help (round 13) for a scalar too: it was the list of scalar methods
    src = ("kernel fn k(z: &mut Tensor<i32, [1]>, x: &Tensor<i32, [?]>) {\n"
           "    let s = x.partition([4]).load([0]).sum(0);\n    let r = EXPR;\n"
           "    z.store(full::<i32>([1], r));\n}\n"
           "fn main() {\n    let x = arange::<i32>(4) - 5;\n    let mut z = zeros::<i32>([1]);\n"
           "    k(z.partition([1]), &x).sync();\n    print(z.item());\n}\n")
    f = tmp_path / "r.tile"
    f.write_text(src.replace("EXPR", "s.rem_euclid(3)"), encoding="utf-8")
    fix = "where(s % 3 < 0, s % 3 + abs(3), s % 3)"
    assert f"`{fix}`" in first_error(f).help[0]
    f.write_text(src.replace("EXPR", fix), encoding="utf-8")
    assert run_program(f)[1] == f"{-14 % 3}\n"   # Python's % of a positive divisor is Rust's rem_euclid
