"""Round 11 through the Python API (huser11, 2026-12-05): round 11's programs
called on NumPy arrays (torch is not installed here).

- f04's host function `compact` (three launches, a result whose length is
  known only at run time) returns a NumPy array equal to `x[x > t]`, and its
  three kernels called one by one give the same.
- f02's softmax forward and backward recorded in a `tilelang.graph()` and
  replayed with new inputs written in place; a second launch that reads
  what a pending one writes is E0305; the f16 log-softmax backward on
  float16 arrays.
- A partition with a tile of the wrong rank (`[64]` for a `[1, BN]` tile,
  E0507) was told "give one tile size per dimension": the help now names
  the parameter's tile and fills its generic sizes with the ones given
  (`tilelang.partition(dx, [1, 64])`), and that call runs.
- A `bool` for an `i8` scalar said "is a `i8`": "is of type `i8`".
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tilelang

P = tilelang.partition
PROGRAMS = Path(__file__).parent / "programs"


@pytest.fixture(scope="module")
def compaction() -> tilelang.Module:
    return tilelang.load(PROGRAMS / "f04_stream_compaction.tile")


@pytest.fixture(scope="module")
def softmax() -> tilelang.Module:
    return tilelang.load(PROGRAMS / "f02_softmax_backward.tile")


def test_a_host_function_of_three_launches_returns_a_run_time_length(compaction: tilelang.Module) -> None:
    x = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    kept = compaction.compact(x, 0.5)
    assert isinstance(kept, np.ndarray) and kept.dtype == np.float32
    np.testing.assert_array_equal(kept, x[x > np.float32(0.5)])
    assert compaction.compact(x, 100.0).shape == (0,)
    # the same three kernels called from Python
    nb = 16
    cnt = np.zeros(nb, np.int32)
    compaction.count_kept[64](P(cnt, [1]), x, 0.5).sync()
    off = np.zeros(nb, np.int32)
    compaction.exclusive_scan[32](P(off, [32]), cnt).sync()
    out = np.zeros(int(cnt.sum()), np.float32)
    seen = np.zeros(nb, np.int32)
    compaction.scatter_kept[64](P(seen, [1]), x, off, 0.5, out).sync()
    np.testing.assert_array_equal(out, kept)


def test_a_forward_and_backward_graph_replays_on_new_inputs(softmax: tilelang.Module) -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((40, 24)).astype(np.float32)
    dy = rng.standard_normal((40, 24)).astype(np.float32)
    y, dx = np.zeros_like(x), np.zeros_like(x)
    with tilelang.graph() as g:
        softmax.col_softmax[64, 8](P(y, [64, 8]), x).sync()
        softmax.col_softmax_bwd[64, 8](P(dx, [64, 8]), y, dy).sync()
    assert not y.any()  # recorded, not run
    for _ in range(2):
        x[:] = rng.standard_normal((40, 24)).astype(np.float32)
        g.replay()
        e = np.exp(x.astype(np.float64) - x.max(0))
        ref = e / e.sum(0)
        np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(dx, ref * (dy - (dy * ref).sum(0)), rtol=1e-4, atol=1e-6)
    h = softmax.col_softmax[64, 8](P(y, [64, 8]), x).launch()
    with pytest.raises(tilelang.TileError) as info:
        softmax.col_softmax_bwd[64, 8](P(dx, [64, 8]), y, dy).launch()
    assert info.value.code == "E0305"
    h.wait()


def test_the_tile_rank_help_fills_the_declared_tile(softmax: tilelang.Module) -> None:
    rng = np.random.default_rng(2)
    x2 = rng.standard_normal((13, 50)).astype(np.float32)
    lp = np.zeros_like(x2)
    softmax.log_softmax[64](P(lp, [1, 64]), x2).sync()
    dy2 = rng.standard_normal((13, 50)).astype(np.float16)
    dx2 = np.zeros((13, 50), np.float16)
    with pytest.raises(tilelang.TileError) as info:
        softmax.log_softmax_bwd[64](P(dx2, [64]), lp, dy2).sync()
    e = info.value
    assert e.code == "E0507" and "`dx`'s tile `[1, BN]`" in str(e) and "`tilelang.partition(dx, [1, 64])`" in str(e)
    softmax.log_softmax_bwd[64](P(dx2, [1, 64]), lp, dy2).sync()  # the help, applied
    g = dy2.astype(np.float64)
    np.testing.assert_allclose(dx2.astype(np.float64), g - np.exp(lp) * g.sum(1, keepdims=True), rtol=3e-3,
                               atol=3e-3)
    # a tile whose sizes do not fill the declared one: the declared tile, no guess
    with pytest.raises(tilelang.TileError) as info:
        softmax.log_softmax_bwd[64](P(dx2, [1, 64, 1]), lp, dy2).sync()
    assert info.value.code == "E0507" and "`[1, BN]` has" in str(info.value) and "partition(dx, [" not in str(
        info.value)


def test_a_bool_for_an_integer_scalar_says_its_type(tmp_path: Path) -> None:
    f = tmp_path / "k.tile"
    f.write_text("kernel fn scale<const B: i32>(z: &mut Tensor<i8, [B]>, x: &Tensor<i8, [?]>, a: i8) {\n"
                 "    z.store(x.load_like(z) * a);\n}\n", encoding="utf-8")
    mod = tilelang.load(f)
    x = np.arange(8, dtype=np.int8)
    z = np.zeros_like(x)
    with pytest.raises(tilelang.TileError) as info:
        mod.scale(P(z, [8]), x, True)
    assert info.value.code == "E0203" and "is of type `i8`, not a `bool`" in str(info.value)
    mod.scale(P(z, [8]), x, np.int8(3)).sync()
    np.testing.assert_array_equal(z, x * 3)
