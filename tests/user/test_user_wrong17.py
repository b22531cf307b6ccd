"""Round 17 of the user's mistakes (huser17, 2026-12-06), each with the help applied by the letter and the
fixed program checked against NumPy.

- l01 a max pool's window column 2j - 1 written as PyTorch's `odd.roll(1, 0)` (E0103): the help was the [N]
  row's form with `N` and `k` left to fill in, `(arange + k) % N == arange` (a negative shift's `% N` is
  negative in Tile, so `roll(-1)` lost an element), cast to `f32` whatever the tile's type, and "or read the
  tile again at a shifted index" (a tile index counts whole tiles). It is now written for the value's own
  shape, axis and element type (a 2-D value's axis 0 as the product on the left; the flattened value
  without an axis), tests the index difference modulo N, gives the matrix of the shift that brings in
  zeros, and says that an infinity makes the product's row NaN: the fix also pads with f32::MIN.
- l02 RMSNorm's `(x * x).mean(1, true)` (PyTorch's keepdim by position): the help was the generic "divide
  the sum: `t.sum() / n`"; it writes the sum along the axis, the reshape that keeps it and the axis's size.
  `t.sum(1, true)` (and max, min, argmax, ..) was "takes 0 to 1 arguments": it now writes the reshape.
- l03 softmax cross-entropy with `t.logsumexp(1)` (E0103 listed the methods of tiles): the help writes
  the maximum-shifted form for the tile's shape.
- l04 Triton's tutorial kernel ported line by line, `x.load(offs, mask)` for `tl.load(x_ptr + offs, mask=mask)`:
  "takes 0 to 1 arguments" with "call it with 0 to 1 arguments" (and `x.load(offs)` "for indexed tiles,
  partition it"); the help now says that Tile reads a tile by its index, `x.partition([B]).load([i])` where
  `offs = i * B + arange(B)`, with no mask past the end (`load_padded` for Triton's `other`).
- `z.roll(1)` of a host tensor (in the REPL) got the tile's `dot` form, which the host does not have: it gets a
  masked sum over a broadcast (`max` for `bool`), 1-D or 2-D along an axis.
- `for i in (0..n).rev()` / `(0..n).step_by(2)` (Rust's iterator adaptors): a general help about tile indices;
  it now writes the loop over the steps with `i` from the range's own bounds (`let i = (n - 1) - r;`).
- `t[2] = 7.0` / `t[n] += 1.5` of a tile (E0114): `let t2 = where(mask, v, t);` with the mask to write; it
  now writes the element's mask from the tile's dimensions and the statement's indices, and its value.
- `t.flip(1)` of a 2-D tile: the help reshaped the tile to one row of its own dimension (the 1-D form,
  `t.reshape([1, N])` of a [4, 16] tile); it now reverses along the axis asked (`fliplr`/`flipud` too).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from userprog import first_error, run_program, wrong_suite

ROLL = ("dot(odd.reshape([1, WO]), ((arange::<i32>(WO).reshape([1, WO]) - arange::<i32>(WO).reshape([WO, 1]) - 1) % WO "
        "== 0) as f32).reshape([WO])")
LSE = "log(exp(t - t.max(1).reshape([BR, 1])).sum(1)) + t.max(1)"

# file: (a phrase of the first error's help, the fix: (old, new) replacements)
FIXES: dict[str, tuple[str, list[tuple[str, str]]]] = {
    # the help's product, and its note: a finite padding (0 x -inf is NaN)
    "l01_roll_for_a_window_shift": (f"`{ROLL}`", [("odd.roll(1, 0)", ROLL), ("f32::NEG_INFINITY", "f32::MIN")]),
    "l02_mean_keepdim_by_position": ("`(t * t).sum(1).reshape([BR, 1]) / (D as f32)`",
                                     [("(t * t).mean(1, true)", "(t * t).sum(1).reshape([BR, 1]) / (D as f32)")]),
    "l03_logsumexp_cross_entropy": (f"`{LSE}`", [("t.logsumexp(1)", LSE)]),
    # the help's tile read for both loads; the offsets and mask go with them
    "l04_triton_offsets_load": ("read `x.partition([B]).load([i])`",
                                [("x.load(offs, mask)", "x.partition([B]).load([pid])"),
                                 ("y.load(offs, mask)", "y.partition([B]).load([pid])"),
                                 ("    let offs = pid * B + arange::<i32>(B);\n    let mask = offs < n;\n", ""),
                                 (", n: i32) {", ") {"), ("&y, n)", "&y)")]),
}


def _l01(t: dict[str, np.ndarray], out: str) -> None:
    x = t["x"]
    p, h, w = x.shape
    for c in range(p):
        for i in range(9):
            for j in range(11):
                win = [(x[c, r, s], r * w + s) for r in range(2 * i - 1, 2 * i + 2) for s in range(2 * j - 1, 2 * j + 2)
                       if 0 <= r < h and 0 <= s < w]
                best = max(v for v, _ in win)
                assert t["y"][c, i, j] == best and t["idx"][c, i, j] == next(a for v, a in win if v == best)
    assert out == f"[2, 9, 11] {t['idx'].max()}\n"


def _l02(t: dict[str, np.ndarray], out: str) -> None:
    x, w = t["x"].astype(np.float64), t["w"].astype(np.float64)
    np.testing.assert_allclose(t["y"], x / np.sqrt((x * x).mean(1, keepdims=True) + 1e-6) * w, rtol=1e-5, atol=1e-6)
    assert out == "[10, 48]\n"


def _l03(t: dict[str, np.ndarray], out: str) -> None:
    x, y = t["x"].astype(np.float64), t["labels"]
    lse = np.log(np.exp(x - x.max(1, keepdims=True)).sum(1)) + x.max(1)
    keep = y != -100
    assert keep.sum() == 8 and y[keep].min() >= 0
    rows = np.arange(10)
    np.testing.assert_allclose(t["loss"], np.where(keep, lse - x[rows, np.where(keep, y, 0)], 0), rtol=1e-5, atol=1e-6)
    g = np.exp(x - lse[:, None])
    g[rows[keep], y[keep]] -= 1
    np.testing.assert_allclose(t["grad"], np.where(keep[:, None], g, 0), rtol=1e-5, atol=1e-6)
    assert out == "[10] [10, 100]\n"


def _l04(t: dict[str, np.ndarray], out: str) -> None:
    x, y = t["x"].astype(np.float64), t["y"].astype(np.float64)
    np.testing.assert_allclose(t["o"], x / (1 + np.exp(-x)) + y, rtol=1e-5, atol=1e-6)
    assert out == "[1000]\n"


CHECKS = {"l01_roll_for_a_window_shift": _l01, "l02_mean_keepdim_by_position": _l02,
          "l03_logsumexp_cross_entropy": _l03, "l04_triton_offsets_load": _l04}


(test_every_mistake_has_a_fix, test_the_help_leads_to_a_working_program,
 test_the_editor_shows_the_same_first_error) = wrong_suite("l*.tile", FIXES, CHECKS)


KERNEL = ("kernel fn k(o: &mut Tensor<{ty}, [4, 16]>, x: &Tensor<{ty}, [?, ?]>) {{\n"
          "    let t = x.partition([4, 16]).load([block_id(0), 0]);\n    o.store({expr});\n}}\n"
          "fn main() {{\n    let x = (arange::<f32>(64) - 20.5).reshape([4, 16]) as {ty};\n"
          "    let mut o = zeros::<{ty}>([4, 16]);\n    k(o.partition([4, 16]), &x).sync();\n}}\n")


def _help_code(expr: str, ty: str, tmp_path: Path) -> tuple[str, Path]:
    """The code of the first error's help (its longest quoted code) for `o.store(EXPR)` of a [4, 16] tile `t`
    of type `ty`, and the file."""
    f = tmp_path / "h.tile"
    f.write_text(KERNEL.format(ty=ty, expr=expr), encoding="utf-8")
    d = first_error(f)
    assert d.code in ("E0103", "E0105"), (d.code, d.message)
    return max(d.help[0].split("`")[1::2], key=len), f


@pytest.mark.parametrize(("expr", "call", "want"), [
    ("t.roll(1, 1)", "", lambda v: np.roll(v, 1, 1)),
    ("t.roll(-3, 1)", "", lambda v: np.roll(v, -3, 1)),
    ("t.roll(1, 0)", "", lambda v: np.roll(v, 1, 0)),
    ("t.roll(-1, 0)", "", lambda v: np.roll(v, -1, 0)),
    ("t.roll(18, -1)", "", lambda v: np.roll(v, 18, 1)),
    ("t.roll(5)", "", lambda v: np.roll(v, 5)),   # no axis: the flattened tile
    ("t.reshape([2, 2, 16]).roll(-2, 2).reshape([4, 16])", "t.reshape([2, 2, 16]).roll(-2, 2)",
     lambda v: np.roll(v, -2, 1)),
    ("t.reshape([2, 2, 16]).roll(1, 0).reshape([4, 16])", "t.reshape([2, 2, 16]).roll(1, 0)",
     lambda v: np.roll(v.reshape(2, 2, 16), 1, 0).reshape(4, 16)),
    ("t.flip(1)", "", lambda v: v[:, ::-1]),
    ("t.flip(0)", "", lambda v: v[::-1]),
    ("t.flipud()", "", lambda v: v[::-1]),
    ("t.logsumexp(1).reshape([4, 1]).broadcast([4, 16])", "t.logsumexp(1)",
     lambda v: np.broadcast_to(np.log(np.exp(v).sum(1, keepdims=True)), (4, 16))),
    ("t.sum(1, true).broadcast([4, 16])", "t.sum(1, true)", lambda v: np.broadcast_to(v.sum(1, keepdims=True), (4, 16))),
    ("t.max(0, true).broadcast([4, 16])", "t.max(0, true)", lambda v: np.broadcast_to(v.max(0, keepdims=True), (4, 16))),
])
@pytest.mark.parametrize("ty", ["f32", "f16"])
def test_moves_within_a_tile_get_the_tile_s_own_product(expr: str, call: str, want, ty: str,  # type: ignore[no-untyped-def]
                                                        tmp_path: Path) -> None:
    """The help of each PyTorch spelling, written in place of the call (`call`, or the whole `expr`), gives
    NumPy's values, for f32 and f16 tiles (the matrix takes the tile's element type: `dot` of f16 and f32 is
    E0201)."""
    code, f = _help_code(expr, ty, tmp_path)
    f.write_text(KERNEL.format(ty=ty, expr=expr.replace(call or expr, f"({code})", 1)), encoding="utf-8")
    t, _ = run_program(f)
    v = t["x"].astype(np.float64)
    tol = 1e-6 if ty == "f32" else 2e-3
    np.testing.assert_allclose(t["o"].astype(np.float64), want(v), rtol=tol, atol=tol * 30)


def test_a_negative_shift_by_the_old_help_lost_an_element(tmp_path: Path) -> None:
    """The old 1-D form, `(i + k) % N == j`, with k = -1: element 0's `% N` is -1, which no column matches,
    so the rolled row has a 0 where NumPy's has the first element: the difference form keeps it."""
    old = ("dot(t.reshape([64]).reshape([1, 64]), ((arange::<i32>(64).reshape([64, 1]) - 1) % 64 == "
           "arange::<i32>(64).reshape([1, 64])) as f32).reshape([4, 16])")
    f = tmp_path / "old.tile"
    f.write_text(KERNEL.format(ty="f32", expr=old), encoding="utf-8")
    t, _ = run_program(f)
    assert t["o"].ravel()[-1] == 0.0 and np.roll(t["x"].ravel(), -1)[-1] == -20.5
    code, _ = _help_code("t.reshape([64]).roll(-1).reshape([4, 16])", "f32", tmp_path)
    f.write_text(KERNEL.format(ty="f32", expr=f"({code}).reshape([4, 16])"), encoding="utf-8")
    t, _ = run_program(f)
    np.testing.assert_array_equal(t["o"].ravel(), np.roll(t["x"].ravel(), -1))


def test_the_shift_that_brings_in_zeros_is_the_help_s_second_matrix(tmp_path: Path) -> None:
    d_expr = "t.roll(2, 1)"
    f = tmp_path / "z.tile"
    f.write_text(KERNEL.format(ty="f32", expr=d_expr), encoding="utf-8")
    h = first_error(f).help[0]
    zero = h.split("`")[3]
    assert zero.endswith("== 2) as f32"), h
    f.write_text(KERNEL.format(ty="f32", expr=f"dot(t, {zero})"), encoding="utf-8")
    t, _ = run_program(f)
    want = np.zeros((4, 16))
    want[:, 2:] = t["x"][:, :-2]
    np.testing.assert_array_equal(t["o"], want)


@pytest.mark.parametrize(("setup", "expr", "want"), [
    ("let z = arange::<f32>(8) - 2.5;", "z.roll(3)", lambda: np.roll(np.arange(8) - 2.5, 3)),
    ("let z = arange::<f32>(8) - 2.5;", "z.roll(-2, 0)", lambda: np.roll(np.arange(8) - 2.5, -2)),
    ("let z = arange::<i32>(6).reshape([2, 3]);", "z.roll(-1, 1)", lambda: np.roll(np.arange(6).reshape(2, 3), -1, 1)),
    ("let z = arange::<i32>(6).reshape([2, 3]);", "z.roll(1, 0)", lambda: np.roll(np.arange(6).reshape(2, 3), 1, 0)),
    ("let z = arange::<i32>(5) > 2;", "z.roll(1)", lambda: np.roll(np.arange(5) > 2, 1)),
])
def test_a_host_tensor_s_roll_is_a_masked_sum(setup: str, expr: str, want, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A host tensor has no `dot` (the tile's help, given to `z.roll(1)` in the REPL, named it): its roll is a
    masked sum (`max` for `bool`) over a broadcast, which runs on the host."""
    f = tmp_path / "h.tile"
    f.write_text(f"fn main() {{\n    {setup}\n    let r = {expr};\n    print(r.shape());\n}}\n", encoding="utf-8")
    d = first_error(f)
    code = max(d.help[0].split("`")[1::2], key=len)
    assert "dot(" not in code and "masked" in d.help[0], d.help
    f.write_text(f.read_text(encoding="utf-8").replace(expr, code), encoding="utf-8")
    t, _ = run_program(f)
    np.testing.assert_array_equal(t["r"], want())


@pytest.mark.parametrize(("loop", "want"), [
    ("(0..n).rev()", lambda n: list(range(n))[::-1]),
    ("(1..=n).rev()", lambda n: list(range(1, n + 1))[::-1]),
    ("(0..n).step_by(2)", lambda n: list(range(0, n, 2))),
    ("(3..n + 4).step_by(3)", lambda n: list(range(3, n + 4, 3))),
])
def test_rust_s_range_adaptors_are_written_with_the_range_s_bounds(loop: str, want, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`for i in (0..n).rev()` / `.step_by(2)` (E0103) had a general help about tile indices; it now writes the
    loop over the steps with `i` computed from the range's own bounds, which visits NumPy's values in order (the
    kernel folds them as `t * 3 + i`, which tells the orders apart)."""
    src = ("kernel fn k(o: &mut Tensor<f32, [1]>, n: i32) {\n    let mut t = zeros::<f32>([1]);\n"
           f"    for i in {loop} {{\n        t = t * 3.0 + (i as f32);\n    }}\n    o.store(t);\n}}\n"
           "fn main() {\n    let mut o = zeros::<f32>([1]);\n    k(o.partition([1]), 7).sync();\n}\n")
    f = tmp_path / "r.tile"
    f.write_text(src, encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0103", d.message
    header = d.help[0].split("`")[1].split(" .. }")[0]   # `for r in 0..n { let i = (n - 1) - r;`
    f.write_text(src.replace(f"for i in {loop} {{", header), encoding="utf-8")
    t, _ = run_program(f)
    acc = 0.0
    for i in want(7):
        acc = acc * 3 + i
    assert t["o"][0] == np.float32(acc), (header, t["o"], acc)


@pytest.mark.parametrize(("stmt", "want"), [
    ("t[2] = 7.0;", lambda v: np.where(np.arange(8) == 2, 7.0, v)),
    ("t[n] += 1.5;", lambda v: np.where(np.arange(8) == 3, v + 1.5, v)),
])
def test_a_tile_element_assignment_is_written_as_a_where_of_its_index(stmt: str, want, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`t[2] = 7.0` of a tile (E0114) was told `let t2 = where(mask, v, t);`, the mask left to write: the help
    writes the element's mask from the tile's dimension and the statement's index, and the value."""
    src = ("kernel fn k(o: &mut Tensor<f32, [8]>, x: &Tensor<f32, [?]>, n: i32) {\n    let mut t = x.load_like(o);\n"
           f"    {stmt}\n    o.store(t);\n}}\n"
           "fn main() {\n    let x = arange::<f32>(8);\n    let mut o = zeros::<f32>([8]);\n"
           "    k(o.partition([8]), &x, 3).sync();\n}\n")
    f = tmp_path / "e.tile"
    f.write_text(src, encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0114", d.message
    fix = max(d.help[0].split("`")[1::2], key=len)
    f.write_text(src.replace(stmt, fix), encoding="utf-8")
    t, _ = run_program(f)
    np.testing.assert_array_equal(t["o"], want(np.arange(8, dtype=np.float32)))


def test_a_2d_tile_element_gets_both_axes_masks(tmp_path: Path) -> None:
    src = ("kernel fn k(o: &mut Tensor<f32, [4, 8]>, x: &Tensor<f32, [?, ?]>) {\n"
           "    let mut t = x.partition([4, 8]).load([0, 0]);\n    t[1][2] = 7.0;\n    o.store(t);\n}\n"
           "fn main() {\n    let mut o = zeros::<f32>([4, 8]);\n    k(o.partition([4, 8]), &ones::<f32>([4, 8])).sync();\n}\n")
    f = tmp_path / "e.tile"
    f.write_text(src, encoding="utf-8")
    fix = max(first_error(f).help[0].split("`")[1::2], key=len)
    f.write_text(src.replace("t[1][2] = 7.0;", fix), encoding="utf-8")
    t, _ = run_program(f)
    want = np.ones((4, 8), np.float32)
    want[1, 2] = 7.0
    np.testing.assert_array_equal(t["o"], want)
