"""The run-time tile index guard (hrev17, `ir/lower/views.tile_offset`,
`ir/lower/ranges.py`): a tile index whose `index * tile` may leave `i32` is
tested (a tile past it reads zeros / the padding on every engine, as a
constant index's does: `tests/run/tile_index_runtime_overflow.tile`); one
whose bounds keep the product inside `i32` is multiplied as it is, so the
grid's and the `for` loops' indices (every GEMM and attention loop) cost
nothing. Checked on the lowered IR: the count of guards (`where` ops on a
scalar index) and the interpreter's answers on the boundary."""

from __future__ import annotations

import numpy as np
import pytest

from tilelang.interp import run_kernel
from tilelang.ir import nodes as ir
from tilelang.ir.lower import lower_kernel
from tilelang.ir.lower.ranges import DIM_MAX, Grid
from tilelang.ir.printer import print_kernel

from test_ir_lower import program


def _guards(k: ir.Kernel) -> int:
    return print_kernel(k).count(" where ")


GEMM = """
kernel fn gemm<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<f32, [BM, BN]>,
        a: &Tensor<f16, [?, ?]>, b: &Tensor<f16, [?, ?]>) {
    let pa = a.partition([BM, BK]);
    let pb = b.partition([BK, BN]);
    let mut acc = zeros::<f32>([BM, BN]);
    for k in 0..pa.num_tiles(1) {
        acc = mma(pa.load([block_id(0), k]), pb.load([k, block_id(1)]), acc);
    }
    c.store(acc);
}
"""


def test_grid_and_loop_indices_take_no_guard() -> None:
    k = lower_kernel(program(GEMM), "gemm", {"BM": 128, "BN": 128, "BK": 64})
    assert _guards(k) == 0, print_kernel(k)


MINMAX = """
fn lesser(a: i32, b: i32) -> i32 { if a < b { a } else { b } }
fn greater(a: i32, b: i32) -> i32 { if a > b { a } else { b } }
kernel fn k(z: &mut Tensor<f32, [64]>, x: &Tensor<f32, [?]>, n: i32) {
    let p = x.partition([64]);
    let last = greater(lesser(n, p.num_tiles(0) - 1), 0);   // min and max: a tile's index
    let half = block_id(0) / 2 + (n % 4) + (n & 7);  // bounded by the grid and the masks
    z.store(p.load([last]) + p.load([half]) + p.load([n]));   // only `n` is tested
}
"""


def test_min_by_if_div_rem_and_bounded_and_a_parameter_guarded() -> None:
    k = lower_kernel(program(MINMAX), "k", {})
    assert _guards(k) == 1, print_kernel(k)


@pytest.mark.parametrize(("i", "want_tile"), [
    (0, 0), (1, 1), (33554431, None), (33554432, None), (67108865, None), (-1, None), (-67108863, None),
    (-2147483648, None), (2147483647, None)])
def test_guarded_index_reads_its_tile_or_nothing(i: int, want_tile: int | None) -> None:
    src = """
kernel fn k(z: &mut Tensor<i32, [64]>, x: &Tensor<i32, [?]>, i: i32) {
    z.store(x.partition([64]).load_padded([i], -1));
}
"""
    k = lower_kernel(program(src), "k", {})
    x = np.arange(256, dtype=np.int32)
    z = np.zeros(64, dtype=np.int32)
    run_kernel(k, (1,), {"z": z, "x": x, "i": np.int32(i)})
    want = np.full(64, -1, np.int32) if want_tile is None else x[64 * want_tile:64 * want_tile + 64]
    assert (z == want).all(), (i, z[:4])


def test_grid_bounds_from_the_own_tiles() -> None:
    g = Grid.of([((128, 64), None), ((1, 256), None)])
    assert g.blocks == [-(-DIM_MAX // 128), -(-DIM_MAX // 256), 1]
    # a `last_block` group's axis is not bounded by that tile; no tile on an axis: one block
    assert Grid.of([((4, 8), 1)]).blocks == [-(-DIM_MAX // 4), DIM_MAX, 1]


def test_the_sanitizer_names_the_tile_index_a_program_named() -> None:
    """`tilec run --sanitize`'s E0734 (a load wholly outside) at a tested index names the index and why its
    tile is outside, not the offset the test put in its place (it said "element offset [-2147483648]")."""
    import io
    from pathlib import Path

    from tilelang.run import execute

    path = Path(__file__).resolve().parents[1] / "run" / "tile_index_runtime_overflow.tile"
    got = execute(str(path), "cpu", out=io.StringIO(), sanitize=True)
    labels = [lb.message for d in got.warnings for lb in d.labels if lb.primary]
    assert labels == ["block (0) loads tile index 4194305 along axis 0 (4194305 * 1024 does not fit `i32`), "
                      "past the edge of `x`",
                      "block (0) loads tile index 1073741824 along axis 0 (1073741824 * 4 does not fit `i32`), "
                      "past the edge of `x`"], labels
