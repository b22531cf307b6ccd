"""Round 16 of the user's mistakes (huser16, 2026-12-06), each with the help applied by the letter and
the fixed program checked against NumPy.

- q01 an LSTM's outputs [T, B, H] in [T, 8, H] tiles (grid [1, 2, 1]) beside its last state [B, H] in
  [8, H] tiles (grid [2, 1]), as nn.LSTM returns them (E0500): the help said "choose tile shapes that
  split every `&mut` tensor into the same grid", which no tile of the state's declared rank can; it now
  gives the state a leading axis of 1 (shape, tile, parameter and store), at `tilec check` and at a
  launch (`diagnostics/grid.grid_mismatch_help`).
- q02 a padded batch's lengths as `torch.tensor([40, 17, 1, 0])`: E0102 "define it (`fn tensor(..)`), or
  import it"; `tensor`, `array`, `asarray`, `as_tensor` and `from_list` now say Tile has no tensor of
  listed values and write these as a `where` over an `arange` (cast to the turbofish's type).
- q04 an LSTM step's gates cut apart as PyTorch does, `gates.chunk(4, 1)` (E0103 listed the methods of
  tiles): `chunk`, `split`, `tensor_split` and `unbind` now write part j as a masked sum over a reshape with
  the tile's own (generic) shape; `t.transpose(0, 1)` (E0105 "call it with 0 arguments") says `transpose()`
  takes no axes, and for a 3-D tile the `permute` that swaps them.
- q05 a KV cache's rows 37 .. 57 written as PyTorch's `k_cache[pos:pos + n] = k`, `kc[37..57].partition(..)`:
  E0313's help bound the copy to a variable, whose results the host cannot put back into `kc` (E0114); the
  help now partitions `kc` itself and passes the first row (o03's `append`).
- `let (s, i) = t.max(1);` (PyTorch's values and indices) was "bind 2 names to a tuple of 2 values": it
  now writes `let s = t.max(1); let i = t.argmax(1);` (`min`: `argmin`), and `t.max(1).values` /
  `.indices` say the call is the values, the indices an `argmax`.
- q03 a butterfly as a generic device function `fn b<const N: i32, const H: i32>(t: Tile<f32, [N]>)`
  reshaping `t` to [2, H]: E0208 with "the new shape must hold the same number of elements"; a
  function's shapes are compared as written (a kernel's are checked per launch), so the help now says
  to write `H * 2` where the signature says `N`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tilelang import driver
from userprog import first_error, run_program, wrong_suite

PART = "where(arange::<i32>(4).reshape([1, 4, 1]) == {j}, gates.reshape([BB, 4, H]), 0.0).sum(1)"
GATES = "\n    ".join(f"let {v} = {PART.format(j=j)};" for j, v in enumerate("ifgo"))
LENS = "where(arange::<i32>(4) == 0, 40, where(arange::<i32>(4) == 1, 17, where(arange::<i32>(4) == 2, 1, 0)))"

# file: (a phrase of the first error's help, the fix: (old, new) replacements)
FIXES: dict[str, tuple[str, list[tuple[str, str]]]] = {
    # the help's shape and tile, then its parameter and store
    "q01_state_grid_without_leading_axis": (
        "`c_last` with a leading axis of 1, [1, 12, 16] in tiles of [1, 8, 16], gives [1, 2, 1]",
        [("zeros::<f32>([bsz, h])", "zeros::<f32>([1, bsz, h])"),
         ("c_last.partition([8, 16])", "c_last.partition([1, 8, 16])"),
         ("c_last: &mut Tensor<f32, [BB, H]>", "c_last: &mut Tensor<f32, [1, BB, H]>"),
         ("c_last.store(c)", "c_last.store(c.reshape([1, BB, H]))")]),
    "q02_tensor_of_listed_values": (f"`{LENS}`", [("tensor::<i32>([40, 17, 1, 0])", LENS)]),
    "q03_generic_fn_reshape": ("in the function's signature write `H * 2` where it says `N`",
                               [("Tile<f32, [N]>", "Tile<f32, [H * 2]>")]),
    # the help's part j, for j = 0 .. 3
    "q04_gates_chunk": (f"`{PART.format(j='j')}`", [("let (i, f, g, o) = gates.chunk(4, 1);", GATES)]),
    # the help's kernel: the whole cache, the first row passed, new rows where they fall
    "q05_partition_rows_of_a_cache": (
        "partition `kc` itself and pass the first row, `37`, to the kernel",
        [("k: &Tensor<f32, [?, D]>) {\n    kc.store(k.load_like(kc) as f16);",
          "k: &Tensor<f32, [?, D]>, off: i32) {\n    let r = block_id(0);\n    let n = k.shape()[0];\n"
          "    if r >= off && r < off + n {\n        kc.store(k.partition([1, D]).load([r - off, 0]) as f16);\n"
          "    } else {\n        kc.store(kc.load());\n    }"),
         ("put(kc[37..57].partition([1, 32]), &k)", "put(kc.partition([1, 32]), &k, 37)")]),
}


def _sig(z: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-z))


def _q01(t: dict[str, np.ndarray], out: str) -> None:
    x, wx, wh, b = (t[k].astype(np.float64) for k in ("x", "wx", "wh", "b"))
    h, c = np.zeros((12, 16)), np.zeros((12, 16))
    for s in range(6):
        a = x[s] @ wx + h @ wh + b
        i, f, g, o = (a[:, j * 16:(j + 1) * 16] for j in range(4))
        c = _sig(f) * c + _sig(i) * np.tanh(g)
        h = _sig(o) * np.tanh(c)
        np.testing.assert_allclose(t["hs"][s], h, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(t["c_last"][0], c, rtol=1e-5, atol=1e-5)
    assert out == "[6, 12, 16] true true\n"


def _q02(t: dict[str, np.ndarray], out: str) -> None:
    np.testing.assert_array_equal(t["lens"], [40, 17, 1, 0])
    np.testing.assert_array_equal(t["out"], np.arange(48)[None, :] < np.array([40, 17, 1, 0])[:, None])
    assert out == "Tensor<f32, [4]> [40.0, 17.0,  1.0,  0.0]\n"


def _q03(t: dict[str, np.ndarray], out: str) -> None:
    x = t["x"].astype(np.float64)
    np.testing.assert_allclose(t["y"], np.concatenate([x[:, :4] + x[:, 4:], x[:, :4] - x[:, 4:]], 1), rtol=1e-6)
    assert out == "[3, 8]\n"


def _q04(t: dict[str, np.ndarray], out: str) -> None:
    x, w, c0 = (t[k].astype(np.float64) for k in ("x", "w", "c0"))
    i, f, g, o = np.split(x @ w, 4, axis=1)
    c = _sig(f) * c0 + _sig(i) * np.tanh(g)
    np.testing.assert_allclose(t["c1"], c, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(t["h1"], _sig(o) * np.tanh(c), rtol=1e-5, atol=1e-6)
    assert out == "[6, 8]\n"


def _q05(t: dict[str, np.ndarray], out: str) -> None:
    want = np.full((64, 32), 0.5, np.float16)
    want[37:57] = t["k"].astype(np.float16)
    np.testing.assert_array_equal(t["kc"], want)
    assert out == "[64, 32]\n"


CHECKS = {"q01_state_grid_without_leading_axis": _q01, "q02_tensor_of_listed_values": _q02,
          "q03_generic_fn_reshape": _q03, "q04_gates_chunk": _q04, "q05_partition_rows_of_a_cache": _q05}


(test_every_mistake_has_a_fix, test_the_help_leads_to_a_working_program,
 test_the_editor_shows_the_same_first_error) = wrong_suite("q*.tile", FIXES, CHECKS)


@pytest.mark.parametrize(("call", "fix"), [
    ("tensor::<f16>([0.5, -1.5, 2.0])", "`where(arange::<i32>(3) == 0, 0.5, where(arange::<i32>(3) == 1, -1.5, 2.0))"
                                        " as f16`"),
    ("array([1, 2])", "`where(arange::<i32>(2) == 0, 1, 2)`"),
    ("asarray([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0])", "or read the values with `load_npy(\"values.npy\")`"),
])
def test_a_tensor_of_listed_values_is_written_with_where(call: str, fix: str, tmp_path: Path) -> None:
    f = tmp_path / "t.tile"
    f.write_text(f"fn main() {{\n    let t = {call};\n    print(t);\n}}\n", encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0102" and d.help[0].startswith("Tile has no tensor of listed values") \
        and d.help[0].endswith(fix), d.help


def test_a_generic_fns_reshape_of_a_product_names_the_generics(tmp_path: Path) -> None:
    f = tmp_path / "g.tile"
    f.write_text("fn f<const A: i32, const B: i32, const C: i32>(t: Tile<f32, [A, B]>) -> Tile<f32, [C]> {\n"
                 "    t.reshape([C])\n}\nkernel fn k(y: &mut Tensor<f32, [8]>, x: &Tensor<f32, [?, ?]>) {\n"
                 "    y.store(f::<2, 4, 8>(x.partition([2, 4]).load([0, 0])));\n}\n"
                 "fn main() {\n    let mut y = zeros::<f32>([8]);\n"
                 "    k(y.partition([8]), &ones::<f32>([2, 4])).sync();\n}\n",
                 encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0208" and list(d.help) == ["a function's shapes are compared as written, for every instance at "
                                            "once: nothing says `A * B` is `C`; write the tile's dimensions in the "
                                            "function's signature with the generics of `C`"], d.help
    # a kernel's own reshape is checked per launch instead: no error where the launch's generics agree
    g = tmp_path / "k.tile"
    g.write_text("kernel fn k<const A: i32, const C: i32>(y: &mut Tensor<f32, [C]>, x: &Tensor<f32, [?]>) {\n"
                 "    y.store(x.partition([A]).load([0]).reshape([C]));\n}\n"
                 "fn main() {\n    let mut y = zeros::<f32>([8]);\n"
                 "    k::<8, 8>(y.partition([8]), &ones::<f32>([8])).sync();\n}\n",
                 encoding="utf-8")
    assert not driver.check(g).diagnostics


def test_the_grid_help_drops_a_leading_axis_of_one_too() -> None:
    from tilelang.diagnostics.grid import grid_mismatch_help

    assert grid_mismatch_help("s", (2, 1), (1, 2, 1), (1, 12, 16), (1, 8, 16)) == (
        "`s`'s grid has 1 leading axis of 1 more than the other's: `s` without it, [12, 16] in tiles of [8, 16], "
        "gives [2, 1]")
    # a leading tile dimension past 1 is not an axis to drop: the general help
    assert grid_mismatch_help("s", (2, 1), (1, 2, 1), (12, 12, 16), (12, 8, 16)).startswith("choose tile shapes")


@pytest.mark.parametrize(("stmt", "fix"), [
    ("let s = t.chunk(3, 1);", "a part is a masked sum over a reshape"),   # unequal parts: the general form
    ("let s = t.unbind(0);", "`where(arange::<i32>(4).reshape([4, 1, 1]) == j, t.reshape([4, 1, 16]), 0.0)"
                             ".sum(0).reshape([16])`"),
    ("let s = t.split(4, -1);", "part j of the 4 (a [4, 4] value)"),
    ("let s = t.transpose(0, 1);", "`t.transpose()` swaps the two axes (it takes none"),
    ("let s = t.reshape([2, 2, 16]).transpose(0, 2);", "`t.reshape([2, 2, 16]).permute([2, 1, 0])` swaps axes 0 "
                                                       "and 2"),
])
def test_pytorch_cuts_and_axes_say_the_tile_spelling(stmt: str, fix: str, tmp_path: Path) -> None:
    f = tmp_path / "c.tile"
    f.write_text("kernel fn k(o: &mut Tensor<f32, [4, 16]>, x: &Tensor<f32, [?, ?]>) {\n"
                 f"    let t = x.partition([4, 16]).load([block_id(0), 0]);\n    {stmt}\n    o.store(t);\n}}\n"
                 "fn main() {\n    let mut o = zeros::<f32>([4, 16]);\n"
                 "    k(o.partition([4, 16]), &ones::<f32>([4, 16])).sync();\n}\n", encoding="utf-8")
    d = first_error(f)
    assert any(fix in h for h in d.help), d.help


@pytest.mark.parametrize(("stmt", "fix"), [
    ("let (s, i) = t.max(1);", "let s = t.max(1); let i = t.argmax(1);"),
    ("let (s, i) = t.min(0);", "let s = t.min(0); let i = t.argmin(0);"),
])
def test_pytorch_values_and_indices_are_max_and_argmax(stmt: str, fix: str, tmp_path: Path) -> None:
    """`let (s, i) = t.max(1);` (PyTorch's values and indices) was "bind 2 names to a tuple of 2 values"; the
    help's two statements check clean and give NumPy's values and indices."""
    axis = 1 if "(1)" in stmt else 0
    keep = ("s", "i") if axis == 1 else ("s.reshape([1, 16]).broadcast([4, 16]).max(1) * 0.0 + s.max(0)",
                                         "i.reshape([1, 16]).broadcast([4, 16]).max(1) * 0 + i.max(0)")
    src = ("kernel fn k(o: &mut Tensor<f32, [4]>, oi: &mut Tensor<i32, [4]>, x: &Tensor<f32, [?, ?]>) {\n"
           f"    let t = x.partition([4, 16]).load([block_id(0), 0]);\n    {stmt}\n"
           f"    o.store({keep[0]});\n    oi.store({keep[1]});\n}}\n"
           "fn main() {\n    let x = randn::<f32>([4, 16], 3);\n    let mut o = zeros::<f32>([4]);\n"
           "    let mut oi = zeros::<i32>([4]);\n    k(o.partition([4]), oi.partition([4]), &x).sync();\n}\n")
    f = tmp_path / "m.tile"
    f.write_text(src, encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0203" and any(f"`{fix}`" in h for h in d.help), d.help
    g = tmp_path / "fixed.tile"
    g.write_text(src.replace(stmt, fix), encoding="utf-8")
    assert not driver.check(g, deny_warnings=True).diagnostics
    t, _ = run_program(g)
    x = t["x"]
    if axis == 1:
        np.testing.assert_array_equal(t["o"], x.max(1))
        np.testing.assert_array_equal(t["oi"], x.argmax(1))
    else:
        np.testing.assert_array_equal(t["o"], np.full(4, x.min(0).max()))
        np.testing.assert_array_equal(t["oi"], np.full(4, x.argmin(0).max()))
