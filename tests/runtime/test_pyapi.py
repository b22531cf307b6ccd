"""The Python API: kernels and host functions of a `.tile` file called on
NumPy arrays, with Tile's ownership rules at each call."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

from tilelang.diagnostics.model import TileError
from tilelang.run import CheckFailed
from tilelang.runtime import pyapi as tile

ROOT = Path(__file__).resolve().parents[2]

SRC = """
kernel fn scale<const B: i32>(y: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>, s: f32) {
    y.store(x.load_like(y) * s);
}

fn total(t: &Tensor<f32, [?]>) -> f32 {
    t.sum()
}

fn doubled(t: &Tensor<f32, [?]>) -> Tensor<f32, [?]> {
    t * 2.0
}
"""


@pytest.fixture
def mod(tmp_path):
    p = tmp_path / "m.tile"
    p.write_text(SRC)
    return tile.load(p, out=io.StringIO())


def test_add_example_writes_the_callers_array_in_place():
    m = tile.load(ROOT / "examples" / "add.tile", out=io.StringIO())
    x = np.arange(3000, dtype=np.float32)
    y = np.ones(3000, dtype=np.float32)
    z = np.zeros(3000, dtype=np.float32)
    m.add(tile.partition(z, [1024]), x, y)
    np.testing.assert_array_equal(z, x + 1)


def test_non_contiguous_or_other_dtype_arrays_are_converted_and_copied_back(mod):
    x = np.arange(512, dtype=np.float64)[::2]         # float64, strided
    y = np.zeros(256, dtype=np.float32)[:]            # a view, contiguous
    big = np.zeros((256, 2), dtype=np.float32)
    ycol = big[:, 0]                                   # strided output
    mod.scale(tile.partition(ycol, [64]), x.astype(np.float32), 3.0)
    np.testing.assert_array_equal(big[:, 0], np.arange(0, 512, 2) * 3.0)
    assert np.all(big[:, 1] == 0)
    mod.scale(tile.partition(y, [64]), x.astype(np.float32), 1.0)
    assert y[-1] == 510.0


def test_host_functions_take_and_return_arrays(mod):
    x = np.arange(4, dtype=np.float32)
    assert mod.total(x) == 6.0
    np.testing.assert_array_equal(mod.doubled(x), x * 2)


def test_mut_parameter_needs_a_partition(mod):
    y = np.zeros(64, np.float32)
    with pytest.raises(TileError) as e:
        mod.scale(y, y, 1.0)
    assert e.value.diagnostics[0].code == "E0301"


def test_overlapping_mut_and_shared_arguments_are_rejected(mod):
    y = np.zeros(128, np.float32)
    with pytest.raises(TileError) as e:
        mod.scale(tile.partition(y, [64]), y[:64], 1.0)
    assert e.value.diagnostics[0].code == "E0303"
    assert "`y` and `x`" in e.value.diagnostics[0].message


def test_memory_written_by_an_unwaited_launch_cannot_be_used(mod):
    x = np.ones(128, np.float32)
    y = np.zeros(128, np.float32)
    h = mod.scale.launch(tile.partition(y, [64]), x, 2.0)
    other = np.zeros(128, np.float32)
    with pytest.raises(TileError) as e:
        mod.scale(tile.partition(other, [64]), y, 1.0)
    assert e.value.diagnostics[0].code == "E0305"
    # reading `x` again is fine: the launch only reads it
    mod.scale(tile.partition(other, [64]), x, 1.0)
    h.wait()
    mod.scale(tile.partition(other, [64]), y, 1.0)   # after the wait, fine
    assert other.sum() == 256.0


def test_launch_time_checks_apply(mod):
    y = np.zeros(128, np.float32)
    with pytest.raises(TileError) as e:
        mod.scale(tile.partition(y, [64]), np.ones((2, 64), np.float32), 1.0)
    assert e.value.diagnostics[0].code == "E0503"


def test_a_program_with_errors_does_not_load(tmp_path):
    p = tmp_path / "bad.tile"
    p.write_text("fn main() { let x: i32 = 1.5; }\n")
    with pytest.raises(CheckFailed):
        tile.load(p)


def test_unknown_attribute(mod):
    with pytest.raises(AttributeError, match="no kernel or function `nope`"):
        _ = mod.nope
