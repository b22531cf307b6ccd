"""Round 13 of the user's mistakes (huser13, 2026-12-06), each with the help
applied by the letter and the fixed program checked against NumPy.

- h01 `offsets[block_id(0)]` of a kernel's tensor parameter (an
  EmbeddingBag's bounds, E0204): the note said "tiles are whole values" of a
  tensor, and the help "index host tensors and shapes; in a kernel, load
  another tile or use `where`". The help writes the read of one element,
  `offsets.partition([1]).load([block_id(0)]).item()` (a row and an element
  for an N-D tensor), the note says how a kernel reads tensors.
- h02 Rust's `x.rem_euclid(5)` on a tile (E0103, the list of tile methods):
  the help writes it with `%` and `where`, the call's own receiver and
  divisor filled in; `div_euclid` too.
- h03 PyTorch's `scores.masked_fill(mask, f32::NEG_INFINITY)` on host
  tensors (E0103): the help writes `where(mask, f32::NEG_INFINITY, scores)`.
- h04 a sum of a 3-D tensor into one number by atomics from a kernel with no
  `&mut` parameter (E0509): the help offered a 1-D `seen: &mut Tensor<i32,
  [1]>`, whose grid of one axis makes `block_id(1)` and `block_id(2)` 0 (the
  first tile summed alone), and a name the next check calls unused (W0001).
  It offers a parameter of the grid's rank (the highest `block_id` axis the
  kernel reads), named `_grid`, given a partition of a tensor of the grid's
  size.
- h05 an EmbeddingBag's offsets written as a list, `[0, 2, 2, 5]`, passed
  as a tensor (E0203): the help showed a `where` chain making [10, 50, 64];
  it writes the program's own name and values (up to 8). Tile has no
  tensor literal (NumPy's `np.array([..])`, PyTorch's `torch.tensor([..])`):
  a built-in for it is a language decision left to the lead.
- `dot`/`mma` of mixed element types: the help cast to the first operand's
  type (`tb as i8` of a u8 tile wraps 200 to -56); it casts toward a type
  that holds both.
- h06 an int8 GEMM into an `f32` accumulator (as with f16 inputs): the
  help gives the i32 accumulator and the f16 route (8-bit values are exact
  in f16; the tensor cores sum their products in f32); both run.
- `dot`/`mma` of integer and f64 tiles (this round's feature): an `i8` or
  `i16` accumulator for i8 inputs is E0206 with the rule and the accumulator
  written (test_user_wrong12), generic instances are tests/ui/types.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from userprog import first_error, fixed_program, run_program, wrong_suite

DIR = Path(__file__).parent / "wrong"

# file: (a phrase of the first error's help, the fix: (old, new) replacements)
FIXES: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "h01_tensor_param_index": ("`offsets.partition([1]).load([block_id(0)]).item()`",
                               [("offsets[block_id(0)]", "offsets.partition([1]).load([block_id(0)]).item()")]),
    "h02_rem_euclid": ("`where(x.load_like(z) % 5 < 0, x.load_like(z) % 5 + abs(5), x.load_like(z) % 5)`",
                       [("x.load_like(z).rem_euclid(5)",
                         "where(x.load_like(z) % 5 < 0, x.load_like(z) % 5 + abs(5), x.load_like(z) % 5)")]),
    "h03_masked_fill": ("`where(mask, f32::NEG_INFINITY, scores)`",
                        [("scores.masked_fill(mask, f32::NEG_INFINITY)", "where(mask, f32::NEG_INFINITY, scores)")]),
    "h04_scalar_sum_without_grid": ("`_grid: &mut Tensor<i32, [1, 1, 1]>`",
                                    [("kernel fn total(", "kernel fn total(_grid: &mut Tensor<i32, [1, 1, 1]>, "),
                                     ("    total(&out, &x).sync();",
                                      "    let mut _grid = zeros::<i32>([3, 2, 2]);\n"   # cdiv(5, 2), cdiv(7, 4), cdiv(9, 8)
                                      "    total(_grid.partition([1, 1, 1]), &out, &x).sync();")]),
    "h05_offsets_as_a_list": ("`let at = arange::<i32>(4); let offsets = where(at == 0, 0, where(at == 1, 2, "
                              "where(at == 2, 2, 5)));`",
                              [("let offsets = [0, 2, 2, 5];",
                                "let at = arange::<i32>(4); let offsets = where(at == 0, 0, where(at == 1, 2, "
                                "where(at == 2, 2, 5)));")]),
    # the help's second way (the first, an i32 accumulator, is the test below)
    "h06_int8_mma_f32_acc": ("`mma(a.partition([16, 32]).load([0, kk]) as f16, b.partition([32, 16]).load([kk, 0]) "
                             "as f16, acc)`",
                             [("acc = mma(a.partition([16, 32]).load([0, kk]), b.partition([32, 16]).load([kk, 0]), "
                               "acc);", "acc = mma(a.partition([16, 32]).load([0, kk]) as f16, "
                               "b.partition([32, 16]).load([kk, 0]) as f16, acc);")]),
}


def _h01(t: dict[str, np.ndarray], out: str) -> None:
    table, ids, off = t["table"], t["ids"], t["offsets"]
    assert off.tolist() == [0, 2, 2, 7]  # an empty bag
    want = np.stack([table[ids[off[b]:off[b + 1]]].sum(0) for b in range(3)])
    np.testing.assert_array_equal(t["sums"], want)


def _h02(t: dict[str, np.ndarray], out: str) -> None:
    x = t["x"]
    assert (x < 0).any()
    np.testing.assert_array_equal(t["z"], np.mod(x, 5))  # Python's `%` by a positive divisor: rem_euclid


def _h03(t: dict[str, np.ndarray], out: str) -> None:
    s, m = t["scores"], t["mask"]
    np.testing.assert_array_equal(t["masked"], np.where(np.triu(np.ones((3, 4), bool), 1), -np.inf, s))
    assert (m == np.triu(np.ones((3, 4), bool), 1)).all()


def _h04(t: dict[str, np.ndarray], out: str) -> None:
    x = t["x"].astype(np.float64)
    assert x.shape == (5, 7, 9)
    np.testing.assert_allclose(t["out"][0], x.sum(), rtol=1e-6)  # every tile of the 3-D grid, not the first alone


def _h05(t: dict[str, np.ndarray], out: str) -> None:
    table = t["table"]
    np.testing.assert_array_equal(t["offsets"], [0, 2, 2, 5])
    np.testing.assert_array_equal(t["sums"], np.stack([table[0:2].sum(0), np.zeros(4), table[2:5].sum(0)]))


def _h06(t: dict[str, np.ndarray], out: str) -> None:
    want = (t["a"].astype(np.int64) @ t["b"].astype(np.int64)) * 0.5
    np.testing.assert_array_equal(t["c"], want)  # exact: |sums| < 2^24
    assert out == "-22400.0\n"


CHECKS = {"h01_tensor_param_index": _h01, "h02_rem_euclid": _h02, "h03_masked_fill": _h03,
          "h04_scalar_sum_without_grid": _h04, "h05_offsets_as_a_list": _h05, "h06_int8_mma_f32_acc": _h06}


(test_every_mistake_has_a_fix, test_the_help_leads_to_a_working_program,
 test_the_editor_shows_the_same_first_error) = wrong_suite("h*.tile", FIXES, CHECKS)


def test_an_int8_mma_s_i32_accumulator_route_runs(tmp_path: Path) -> None:
    d = first_error(DIR / "h06_int8_mma_f32_acc.tile")
    assert d.help[0].startswith("make the accumulator `i32` where it starts (`let mut acc = zeros::<i32>([16, 16]);`)")
    f = fixed_program(DIR / "h06_int8_mma_f32_acc.tile", [("acc = zeros::<f32>", "acc = zeros::<i32>"),
                                                          ("c.store(acc * 0.5)", "c.store((acc as f32) * 0.5)")],
                      tmp_path)
    assert run_program(f)[1] == "-22400.0\n"


def test_a_row_of_a_2d_tensor_parameter_gets_a_row_and_an_element(tmp_path: Path) -> None:
    f = tmp_path / "k.tile"
    f.write_text("kernel fn k<const B: i32>(z: &mut Tensor<f32, [B]>, w: &Tensor<f32, [?, ?]>) {\n"
                 "    z.store(full::<f32>([B], w[block_id(0)][1]));\n}\nfn main() {\n}\n", encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0204" and d.help == (
        "read a row as a tile: `w.partition([1, N]).load([block_id(0), 0])` (N the row's width), or one element: "
        "`w.partition([1, 1]).load([block_id(0), j]).item()`",), d.help
    f.write_text(f.read_text(encoding="utf-8").replace("w[block_id(0)][1]",
                                                       "w.partition([1, 1]).load([block_id(0), 1]).item()")
                 + "fn run() {\n    let w = arange::<f32>(12).reshape([3, 4]);\n    let mut z = zeros::<f32>([8]);\n"
                 "    k(z.partition([4]), &w).sync();\n    print(z);\n}\n", encoding="utf-8")
    f.write_text(f.read_text(encoding="utf-8").replace("fn main() {\n}\n", "").replace("fn run()", "fn main()"),
                 encoding="utf-8")
    assert run_program(f)[1] == "Tensor<f32, [8]> [1.0, 1.0, 1.0, 1.0, 5.0, 5.0, 5.0, 5.0]\n"


@pytest.mark.parametrize(("b", "x"), [(5, "t"), (-3, "t"), (7, "(t - 9)")])
def test_div_euclid_and_rem_euclid_helps_compute_rust_s(b: int, x: str, tmp_path: Path) -> None:
    f = tmp_path / "e.tile"
    src = ("kernel fn k<const B: i32>(q: &mut Tensor<i32, [B]>, r: &mut Tensor<i32, [B]>, x: &Tensor<i32, [?]>) {\n"
           f"    let t = x.load_like(q);\n    q.store({x}.div_euclid({b}));\n    r.store({x}.rem_euclid({b}));\n}}\n"
           "fn main() {\n    let x = arange::<i32>(16) * 3 - 20;\n    let mut q = zeros::<i32>([16]);\n"
           "    let mut r = zeros::<i32>([16]);\n    k(q.partition([16]), r.partition([16]), &x).sync();\n}\n")
    f.write_text(src, encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0103" and "div_euclid" in d.message
    code = d.help[0].split("`")[1]
    let = d.help[0].split("`")[3]
    assert let.startswith("let rem = ")  # (not `r`: the kernel's output is `r`)
    src = src.replace(f"    q.store({x}.div_euclid({b}));", f"    {let}\n    q.store({code});")
    f.write_text(src, encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0103" and "rem_euclid" in d.message
    src = src.replace(f"{x}.rem_euclid({b})", d.help[0].split("`")[1])
    f.write_text(src, encoding="utf-8")
    t, _ = run_program(f)
    v = np.arange(16) * 3 - 20 - (9 if x != "t" else 0)
    rr = v - abs(b) * np.floor_divide(v, abs(b))  # Rust: 0 <= r < |b|, v == b * q + r
    np.testing.assert_array_equal(t["r"], rr)
    np.testing.assert_array_equal(t["q"], (v - rr) // b)


@pytest.mark.parametrize(("ta", "tb", "fix", "want"), [
    ("i8", "u8", "dot(ta as i16, tb as i16)", "i16"),      # `tb as i8` wrapped 200 to -56
    ("f16", "f32", "dot(ta as f32, tb)", "f32"),            # `tb as f16` rounded the f32 side
    ("u16", "i8", "dot(ta as i32, tb as i32)", "i32"),
])
def test_a_mixed_product_is_cast_toward_a_type_that_holds_both(ta: str, tb: str, fix: str, want: str,
                                                                tmp_path: Path) -> None:
    acc = {"i16": "i32", "f32": "f32", "i32": "i32"}[want]
    f = tmp_path / "m.tile"
    f.write_text(f"kernel fn k(c: &mut Tensor<{acc}, [4, 4]>, a: &Tensor<{ta}, [?, ?]>, b: &Tensor<{tb}, [?, ?]>) {{\n"
                 "    let ta = a.partition([4, 8]).load([0, 0]);\n    let tb = b.partition([8, 4]).load([0, 0]);\n"
                 "    c.store(dot(ta, tb));\n}\n"
                 f"fn main() {{\n    let a = full::<{ta}>([4, 8], {'-3' if ta[0] in 'if' and ta != 'u16' else '60000'});\n"
                 f"    let b = full::<{tb}>([8, 4], {'200' if tb == 'u8' else '-100' if tb == 'i8' else '0.1'});\n"
                 f"    let mut c = zeros::<{acc}>([4, 4]);\n    k(c.partition([4, 4]), &a, &b).sync();\n}}\n",
                 encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0206" and d.help[0].endswith(f"`{fix}`") and f"to `{want}`, which holds every" in d.help[0], d.help
    f.write_text(f.read_text(encoding="utf-8").replace("dot(ta, tb)", fix), encoding="utf-8")
    c = run_program(f)[0]["c"]
    a = -3.0 if ta in ("i8", "f16") else 60000.0
    b = {"u8": 200.0, "i8": -100.0, "f32": np.float32(0.1)}[tb]
    np.testing.assert_allclose(c, np.full((4, 4), 8 * a * float(b)), rtol=1e-6)


def test_common_dtype_holds_both() -> None:
    from tilelang.dtypes import DType as D, common_dtype

    table = {(D.I8, D.U8): D.I16, (D.U16, D.I8): D.I32, (D.I32, D.U32): D.I64, (D.U64, D.I8): None,
             (D.F16, D.BF16): D.F32, (D.I32, D.F32): D.F64, (D.I16, D.F16): D.F32, (D.U8, D.F16): D.F16,
             (D.I64, D.F64): None, (D.F32, D.F64): D.F64, (D.U8, D.U32): D.U32, (D.BOOL, D.I8): None}
    for (a, b), want in table.items():
        assert common_dtype(a, b) is want and common_dtype(b, a) is want, (a, b)
    for a, b in table:  # every value of both converts exactly (ints by their ends, floats by their significands)
        c = common_dtype(a, b)
        if c is None:
            continue
        for t in (a, b):
            if t.is_int and c.is_int:
                assert (c.bits > t.bits and c.is_signed) or (c.is_signed == t.is_signed and c.bits >= t.bits)


@pytest.mark.parametrize(("name", "subs", "want"), [
    ("roll", {"N": "8", "k": "3"}, lambda v: np.roll(v, 3)),
    ("tril", {"N": "4", "M": "2"}, lambda v: np.tril(v.reshape(2, 4)).reshape(8)),
    ("triu", {"N": "4", "M": "2"}, lambda v: np.triu(v.reshape(2, 4)).reshape(8)),
])
def test_roll_tril_triu_helps_compute_numpy_s(name: str, subs: dict[str, str], want, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import re

    from tilelang.intrinsics.math_habits import MATH_HABITS

    # (a sliding window's mask, `tril` of PyTorch, and `roll` were "the methods of tiles are ..." (E0103))
    recv = "t" if name == "roll" else "t.reshape([2, 4])"
    f = tmp_path / "r.tile"
    src = ("kernel fn k<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>) {\n    let t = x.load_like(z);\n"
           f"    z.store(({recv}.{name}()).reshape([B]));\n}}\n"
           "fn main() {\n    let x = arange::<f32>(8) - 2.5;\n    let mut z = zeros::<f32>([8]);\n"
           "    k(z.partition([8]), &x).sync();\n}\n")
    f.write_text(src, encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0103" and "the methods of tiles are" not in d.help[0], d.help
    code = MATH_HABITS[name].format(x="TT").split("`")[1]
    for k, v in subs.items():
        code = re.sub(rf"\b{k}\b", v, code)
    f.write_text(src.replace(f"{recv}.{name}()", code.replace("TT", recv)), encoding="utf-8")
    t, _ = run_program(f)
    np.testing.assert_array_equal(t["z"], want(np.arange(8, dtype=np.float32) - 2.5))


def test_a_tensor_parameter_indexed_by_a_tile_is_told_it_is_a_gather(tmp_path: Path) -> None:
    # the one-element help (`.load([ids]).item()`) would read a tile where an index is a scalar
    f = tmp_path / "g.tile"
    f.write_text("kernel fn k<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<i32, [?]>, t: &Tensor<f32, [?]>) {\n"
                 "    z.store(t[x.load_like(z)]);\n}\nfn main() {\n}\n", encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0204" and d.help[0].startswith("a tile of indices is a gather"), d.help
    assert "`t.partition([1]).load([i]).item()` for each index `i`" in d.help[0]
