"""Round 30 of the user's mistakes (huser31, 2026-12-07): a sparse / irregular-data engineer's first tries at a
COO scatter-add and a gather, as CUDA and Triton write them. Each racing or ill-formed program is refused with a
help that now leads to the safe form; the help applied by the letter gives NumPy's answer.

- k04 `store_unchecked(&y, [r], y.partition([1]).load([r]) + v)`, CUDA's `y[row] += v` without the atomic (two
  nonzeros of a row race): E0417's help said "read `y` in a second launch", which is no scatter-add; it now
  writes out `atomic_add(&y, [r], v)`.
- k05 `py.store(v, [r])` through nested tiles of the own tile at a row read from data (Triton's
  `tl.store(y_ptr + row, v)`): E0407's help offered only a clamp into the block's own tile, which ran and wrote
  every product into the block's own row; it now says a position read from data is a scatter (the atomic on a
  `&` parameter, or one block a row) and keeps the clamp for positions inside the own tile.
- k06 `x.partition([1]).load([i])` with `i` a tile of indices (Triton's `tl.load(x_ptr + idx)`): E0203's help
  said to reduce the indices to one number (`.max(0)`), which checks and reads one element for all of them; it
  now says Tile has no element gather and gives the three forms (an element an index, a row a block, a one-hot).
- k07 `atomic_add(&y, [r], p)` with `r` a tile of rows (Triton's `tl.atomic_add(y_ptr + rows, v)`) into a `?`
  length: E0203's help offered only a one-hot against every position, which a run-time length rules out; it now
  writes out the other form too, one atomic an element.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from userprog import first_error, wrong_suite

Tensors = dict[str, np.ndarray]

_ROWS = (np.arange(10) * 7) % 3
_COLS = (np.arange(10) * 3 + 1) % 5
_VALS = (np.arange(10, dtype=np.float32) * np.float32(0.5) - np.float32(2.0))
_X = np.arange(5, dtype=np.float32) + 1


def _spmv() -> np.ndarray:
    y = np.zeros(3)
    np.add.at(y, _ROWS, _VALS.astype(np.float64) * _X[_COLS])
    return y


FIXES: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "k04_coo_scatter_add_read_modify_write": (
        "atomic_add(&y, [r], v)", [("store_unchecked(&y, [r], y.partition([1]).load([r]) + v)",
                                    "atomic_add(&y, [r], v)")]),
    "k05_coo_scatter_through_own_nested_tiles": (
        "take `y` as a `&` parameter and update it in `unsafe` code, `atomic_add(&y, [r], v)`",
        [("kernel fn coo_spmv(y: &mut Tensor<f32, [1]>,", "kernel fn coo_spmv(seen: &mut Tensor<i32, [1]>,"),
         ("x: &Tensor<f32, [?]>) {", "x: &Tensor<f32, [?]>, y: &Tensor<f32, [?]>) {"),
         ("    let py = y.partition([1]);\n    py.store(v, [r]);",
          "    seen.store(ones::<i32>([1]));\n    unsafe {\n        atomic_add(&y, [r], v);\n    }"),
         ("let mut y = zeros::<f32>([10]);", "let y = zeros::<f32>([3]);\n    let mut seen = zeros::<i32>([10]);"),
         ("coo_spmv(y.partition([1]), &rows, &cols, &vals, &x)", "coo_spmv(seen.partition([1]), &rows, &cols, "
                                                                "&vals, &x, &y)")]),
    "k07_scatter_add_with_a_tile_of_rows": (
        "for a long tensor, one atomic an element",
        [("        atomic_add(&y, [r], p);",
          "        for j in 0..B { let at = arange::<i32>(B) == j; atomic_add(&y, [where(at, r, 0).sum(0)], "
          "where(at, p, 0.0).sum(0)); }")]),
    "k06_gather_by_a_tile_of_indices": (
        "Tile has no gather of elements by a tile of indices",
        [("x.partition([1]).load([i])", "where(i.reshape([B, 1]) == arange::<i32>(8).reshape([1, 8]), "
                                        "x.partition([8]).load([0]).reshape([1, 8]), 0.0).sum(1)")]),
}


def _k04(t: Tensors, out: str) -> None:
    np.testing.assert_allclose(t["y"], _spmv(), rtol=1e-6)
    assert (np.bincount(_ROWS) > 1).all()   # every row has nonzeros from several blocks


def _k05(t: Tensors, out: str) -> None:
    np.testing.assert_allclose(t["y"], _spmv(), rtol=1e-6)
    assert (t["seen"] == 1).all()


def _k06(t: Tensors, out: str) -> None:
    idx = (np.arange(12) * 5 + 2) % 8
    np.testing.assert_array_equal(t["z"], (np.arange(8, dtype=np.float32) * np.float32(1.5))[idx])


def _k07(t: Tensors, out: str) -> None:
    rows, cols = (np.arange(12) * 7) % 5, (np.arange(12) * 3 + 1) % 6
    vals, x = np.arange(12) * 0.25 - 1.0, np.arange(6) + 1.0
    want = np.zeros(5)
    np.add.at(want, rows, vals * x[cols])
    np.testing.assert_allclose(t["y"], want, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(t["seen"], rows)


CHECKS = {"k04_coo_scatter_add_read_modify_write": _k04, "k07_scatter_add_with_a_tile_of_rows": _k07,
          "k05_coo_scatter_through_own_nested_tiles": _k05,
          "k06_gather_by_a_tile_of_indices": _k06}

(test_every_mistake_has_a_fix, test_the_help_leads_to_a_working_program,
 test_the_editor_shows_the_same_first_error) = wrong_suite("k0[4-9]_*.tile", FIXES, CHECKS)

WRONG = Path(__file__).parent / "wrong"


def test_the_first_errors_code_and_span() -> None:
    """Each mistake's first error: its code and the text its span underlines (the read, the data row, the
    tiles of indices)."""
    want = {"k04_coo_scatter_add_read_modify_write": ("E0417", "y.partition([1]).load([r])"),
            "k05_coo_scatter_through_own_nested_tiles": ("E0407", "r"),
            "k06_gather_by_a_tile_of_indices": ("E0203", "i"),
            "k07_scatter_add_with_a_tile_of_rows": ("E0203", "r")}
    for name, (code, text) in want.items():
        path = WRONG / f"{name}.tile"
        d = first_error(path)
        src = path.read_text(encoding="utf-8")
        assert d.code == code and d.primary_span is not None, (name, d.code)
        got = src[d.primary_span.start:d.primary_span.end]
        assert got == text, (name, got)


# ---- the scatter-add's variations a CUDA port tries (each refused before it runs; none was accepted)

_HEAD = ("kernel fn coo(seen: &mut Tensor<i32, [1]>, rows: &Tensor<i32, [?]>, vals: &Tensor<f32, [?]>, "
         "y: &Tensor<f32, [?]>) {\n    let k = block_id(0);\n    let r = rows.partition([1]).load([k]).item();\n"
         "    let v = vals.partition([1]).load([k]);\n    seen.store(ones::<i32>([1]));\n")
_MAIN = ("fn main() {\n    let rows = arange::<i32>(8) % 3;\n    let vals = ones::<f32>([8]);\n"
         "    let y = zeros::<f32>([3]);\n    let mut seen = zeros::<i32>([8]);\n"
         "    coo(seen.partition([1]), &rows, &vals, &y).sync();\n    print(y);\n}\n")

_VARIATIONS = {
    # the read before the store, in a `let` (the help names the atomic too)
    "read_in_a_let": (_HEAD + "    let old = y.partition([1]).load([r]);\n"
                      "    unsafe { store_unchecked(&y, [r], old + v); }\n}\n" + _MAIN, "E0417",
                      "atomic_add(&y, [..], v)"),
    # the read through a device function
    "read_in_a_device_fn": ("fn peek(t: &Tensor<f32, [?]>, i: i32) -> Tile<f32, [1]> {\n"
                            "    t.partition([1]).load([i])\n}\n" + _HEAD +
                            "    unsafe { store_unchecked(&y, [r], peek(y, r) + v); }\n}\n" + _MAIN, "E0417", ""),
    # the atomic in a device function, the read in the kernel
    "atomic_in_a_device_fn": ("fn bump(t: &Tensor<f32, [?]>, i: i32, v: Tile<f32, [1]>) {\n"
                              "    unsafe { atomic_add(&t, [i], v); }\n}\n" + _HEAD +
                              "    bump(y, r, v + y.partition([1]).load([0]));\n}\n" + _MAIN, "E0417", ""),
    # an add and a max on rows a constant apart (other blocks' `r + 1` is this block's `r`)
    "two_kinds_a_row_apart": (_HEAD + "    unsafe {\n        atomic_add(&y, [r], v);\n"
                              "        atomic_max(&y, [r + 1], v);\n    }\n}\n" + _MAIN, "E0418", ""),
    # the same tensor as the updated `&` and as a read one
    "aliased_read": (_HEAD.replace("y: &Tensor<f32, [?]>) {", "y: &Tensor<f32, [?]>, yr: &Tensor<f32, [?]>) {")
                     + "    unsafe { store_unchecked(&y, [r], yr.partition([1]).load([r]) + v); }\n}\n"
                     + _MAIN.replace("&vals, &y)", "&vals, &y, &y)"), "E0303", ""),
    # the total read back in the last block of a group while other groups still add
    "read_in_last_block": ("kernel fn coo(part: &mut Tensor<i32, [1, 1]>, out: &mut Tensor<f32, [1, 1]>, "
                           "y: &Tensor<f32, [?]>) {\n    part.store(ones::<i32>([1, 1]));\n"
                           "    unsafe { atomic_add(&y, [0], 1.0); }\n    if last_block(1) {\n"
                           "        out.store(y.partition([1]).load([0]).reshape([1, 1]));\n    }\n}\n"
                           "fn main() {\n    let mut part = zeros::<i32>([2, 4]);\n"
                           "    let mut out = zeros::<f32>([2, 1]);\n    let y = zeros::<f32>([1]);\n"
                           "    coo(part.partition([1, 1]), out.partition([1, 1]), &y).sync();\n    print(out);\n}\n",
                           "E0410", ""),
    # Triton's `tl.atomic_add(y_ptr + rows, vals)`: a tile of rows in one atomic
    "tile_of_rows_in_an_atomic": ("kernel fn coo<const B: i32>(seen: &mut Tensor<i32, [B]>, rows: &Tensor<i32, [?]>, "
                                  "vals: &Tensor<f32, [?]>, y: &Tensor<f32, [?]>) {\n"
                                  "    let r = rows.load_like(seen);\n    seen.store(r);\n"
                                  "    unsafe { atomic_add(&y, [r], vals.load_like(seen)); }\n}\n"
                                  + _MAIN.replace("partition([1])", "partition([4])"), "E0203", "one-hot"),
}


@pytest.mark.parametrize("name", sorted(_VARIATIONS))
def test_the_scatter_adds_variations_are_refused(name: str, tmp_path: Path) -> None:
    src, code, hint = _VARIATIONS[name]
    f = tmp_path / f"{name}.tile"
    f.write_text(src, encoding="utf-8")
    d = first_error(f)
    assert d.code == code, (name, d.code, d.message)
    assert not hint or any(hint in h for h in d.help), (name, d.help)


@pytest.mark.parametrize(("call", "says"), [
    ("index_add(y, r, v)", "atomic_add(&y, [row], v)"), ("y.index_add_(0, r, v)", "atomic_add(&y, [row], v)"),
    ("scatter_reduce(y, r, v)", "one atomic an element"), ("segment_coo(v, r)", "one atomic an element"),
    ("segment_sum(x, off)", "one block a segment"), ("segment_csr(x, off)", "one block a segment"),
    ("masked_select(x, m)", "stream compaction"), ("embedding_bag(x, r)", "one block a bag")])
def test_pytorch_s_sparse_functions_are_told_their_tile_form(call: str, says: str, tmp_path: Path) -> None:
    """PyTorch's and torch_scatter's scatters and segment reductions were "define it (`fn index_add(..)`)":
    each now says its Tile form (the atomic an element or the row owner, the masked segment walk, the
    compaction, the bag loop)."""
    f = tmp_path / "h.tile"
    f.write_text("kernel fn k<const B: i32>(z: &mut Tensor<f32, [B]>, xx: &Tensor<f32, [?]>, ii: &Tensor<i32, [?]>) "
                 "{\n    let x = xx.load_like(z);\n    let r = ii.load_like(z);\n    let y = x;\n    let v = x;\n"
                 f"    let off = r;\n    let m = x > 0.0;\n    let q = {call};\n    z.store(x);\n}}\n"
                 "fn main() {\n}\n",
                 encoding="utf-8")
    d = first_error(f)
    assert d.code in ("E0102", "E0103") and any(says in h for h in d.help), (d.code, d.help)
    assert not any("define it" in h for h in d.help)
