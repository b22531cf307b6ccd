"""Round 13 through the Python API (huser13, 2026-12-06; torch is not
installed here): this round's integer and f64 products called on NumPy
arrays (an int8 GEMM over a K loop, an f64 A^T A), j05's EmbeddingBag and
j03's grouped GEMM on the arrays a NumPy user has (int64 ids, float16
activations), a generic kernel's `dot` whose instance NumPy's float16
arrays make (E0206 from the call, naming the instance), and the first-day
mistakes: a uint8 image given to an `i8` parameter (the help said
`astype(numpy.int8)`, which wraps 200 to -56; it says the values do not fit
and to declare `u8`, which `dot` takes), int64 ids for an `i32` parameter
(converted; their values fit).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tilelang

P = tilelang.partition
PROGRAMS = Path(__file__).parent / "programs"
rng = np.random.default_rng(13)


@pytest.fixture(scope="module")
def products() -> tilelang.Module:
    return tilelang.load(PROGRAMS / "j01_int_f64_products.tile")


def test_an_int8_gemm_and_an_f64_gram_on_numpy_arrays(products: tilelang.Module) -> None:
    a = rng.integers(-128, 128, (40, 24), dtype=np.int8)
    b = rng.integers(-128, 128, (24, 16), dtype=np.int8)
    c = np.zeros((40, 16), np.int32)
    products.gemm_i8[16, 8, 8](P(c, [16, 8]), a, b).sync()  # K = 24: three tiles of 8
    np.testing.assert_array_equal(c, a.astype(np.int64) @ b.astype(np.int64))
    f = rng.standard_normal((8, 4)) * 1e4
    g = np.zeros((4, 4))
    products.gram_f64(P(g, [4, 4]), f).sync()
    np.testing.assert_allclose(g, f.T @ f, rtol=1e-14)


def test_a_uint8_image_for_an_i8_parameter_is_told_its_values_do_not_fit(products: tilelang.Module) -> None:
    a = rng.integers(0, 256, (24, 40), dtype=np.uint8)
    b = rng.integers(-128, 128, (40, 16), dtype=np.int8)
    c = np.zeros((24, 16), np.int32)
    with pytest.raises(tilelang.CallError) as e:
        products.gemm_i8[16, 8, 8](P(c, [16, 8]), a, b).sync()
    assert e.value.code == "E0502" and "astype" not in str(e.value)
    assert f"its values (0..={a.max()}) do not fit `i8`, which holds -128..=127" in str(e.value)
    # the help's fix: declare the parameter `u8` (u8 x i8 is mixed: both u8 here, `dot` of u8 sums in i32)
    src = (PROGRAMS / "j01_int_f64_products.tile").read_text(encoding="utf-8")
    fixed = tilelang.compile(src.replace("a: &Tensor<i8, [?, ?]>, b: &Tensor<i8, [?, ?]>",
                                         "a: &Tensor<u8, [?, ?]>, b: &Tensor<u8, [?, ?]>", 1).split("fn main")[0])
    bu = rng.integers(0, 256, (40, 16), dtype=np.uint8)
    fixed.gemm_i8[16, 8, 8](P(c, [16, 8]), a, bu).sync()
    np.testing.assert_array_equal(c, a.astype(np.int64) @ bu.astype(np.int64))
    # values that fit keep the usual help (a conversion that changes nothing)
    with pytest.raises(tilelang.CallError) as e:
        products.gemm_i8[16, 8, 8](P(c, [16, 8]), (a // 2).astype(np.uint8), b).sync()
    assert "convert it first: `a.astype(numpy.int8)`" in str(e.value)


def test_embedding_bag_and_grouped_gemm_on_a_numpy_user_s_arrays() -> None:
    bag = tilelang.load(PROGRAMS / "j05_embedding_bag.tile")
    table = rng.standard_normal((20, 16)).astype(np.float32)
    ids = np.array([3, 3, 7, 1, 0, 19, 5])  # int64, as NumPy makes them
    offsets = np.array([0, 2, 2, 7])
    w = rng.random(7).astype(np.float32)
    s, mn, mx = (np.zeros((3, 16), np.float32) for _ in range(3))
    with pytest.raises(tilelang.CallError) as e:
        bag.bag(P(s, [1, 16]), P(mn, [1, 16]), P(mx, [1, 16]), table, ids, offsets, w).sync()
    assert e.value.code == "E0502" and "`ids.astype(numpy.int32)`" in str(e.value)
    ids32, off32 = ids.astype(np.int32), offsets.astype(np.int32)
    bag.bag(P(s, [1, 16]), P(mn, [1, 16]), P(mx, [1, 16]), table, ids32, off32, w).sync()
    for b in range(3):
        rows, ww = table[ids[offsets[b]:offsets[b + 1]]], w[offsets[b]:offsets[b + 1]]
        np.testing.assert_allclose(s[b], (rows * ww[:, None]).sum(0) if len(rows) else 0, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(mn[b], rows.mean(0) if len(rows) else 0, rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(mx[b], rows.max(0) if len(rows) else 0)
    moe = tilelang.load(PROGRAMS / "j03_grouped_gemm_moe.tile")
    eid = np.repeat(np.array([0, 1, 3], np.int32), [4, 12, 3])  # expert 2 gets none, a tile of 16 holds 0 and 1
    x = rng.standard_normal((19, 32)).astype(np.float16)
    wt = rng.standard_normal((4 * 32, 24)).astype(np.float16)
    y = np.zeros((19, 24), np.float32)
    moe.moe[16, 8, 32](P(y, [16, 8]), x, wt, eid).sync()
    want = np.stack([x[r].astype(np.float64) @ wt.reshape(4, 32, 24)[eid[r]].astype(np.float64) for r in range(19)])
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4)


def test_a_generic_dot_whose_float16_instance_accumulates_in_f32_is_refused_at_the_call() -> None:
    src = (Path(__file__).parents[1] / "ui" / "types" / "generic_dot_instance.tile").read_text(encoding="utf-8")
    mod = tilelang.compile(src.split("fn main")[0])
    g = np.zeros((4, 4), np.float64)
    mod.gram(P(g, [4, 4]), np.full((8, 4), 0.5)).sync()  # f64: its own accumulator
    assert (g == 2.0).all()
    g16 = np.zeros((4, 4), np.float16)
    with pytest.raises(tilelang.TileError) as e:
        mod.gram(P(g16, [4, 4]), np.ones((8, 4), np.float16)).sync()
    assert e.value.code == "E0206" and "`dot` of `f16` tiles gives `f32` tiles, not `T`" in str(e.value)
    assert "`T` is `f16` in this instance" in str(e.value)


def test_a_kernel_without_a_mut_parameter_called_from_python_gets_the_grid_rank_help() -> None:
    # the launch's own E0509 (the checker's for Tile launches): the same words, the grid's rank from `block_id(2)`
    src = (Path(__file__).parent / "wrong" / "h04_scalar_sum_without_grid.tile").read_text(encoding="utf-8")
    mod = tilelang.compile(src.split("fn main")[0])
    out, x = np.zeros(1, np.float32), np.ones((5, 7, 9), np.float32)
    with pytest.raises(tilelang.TileError) as e:
        mod.total(out, x).sync()
    assert e.value.code == "E0509" and "`_grid: &mut Tensor<i32, [1, 1, 1]>`" in str(e.value)
    fixed = tilelang.compile(src.split("fn main")[0].replace("kernel fn total(",
                                                             "kernel fn total(_grid: &mut Tensor<i32, [1, 1, 1]>, "))
    grid = np.zeros((3, 2, 2), np.int32)  # cdiv(5, 2), cdiv(7, 4), cdiv(9, 8)
    fixed.total(P(grid, [1, 1, 1]), out, x).sync()
    assert out[0] == 5 * 7 * 9
