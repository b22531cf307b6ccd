"""A logical grid the GPU cannot launch (more than 65,535 blocks along axis 1
or 2: a [4, 1 << 20] tensor in tiles of [4, 16]) is refused before any GPU
work with an error that names the axis and the limit, located at the launch
(`cuda_arrive.launch_grid`, `launch.at_launch`), not the driver's
CUDA_ERROR_INVALID_VALUE. Kernels that walk their grid (persistent) or pull a
queue along the long axis launch fewer blocks and are not refused. Found by
the hrev review (2026-12-04); the interpreter has no limit."""

from __future__ import annotations

import io
from types import SimpleNamespace

import pytest

import tilelang.run as run
from tilelang.diagnostics.model import TileError
from tilelang.runtime.cpu import CpuDevice
from tilelang.runtime.cuda_arrive import launch_grid

PLAIN = SimpleNamespace(persistent=0, queue=-1)


def test_axes_1_and_2_hold_65535_blocks() -> None:
    assert launch_grid(PLAIN, (3, 65535, 65535), 132) == (3, 65535, 65535)
    assert launch_grid(PLAIN, (1 << 30,), 132) == (1 << 30, 1, 1)
    for grid, axis in (((1, 65536), 1), ((2, 3, 70000), 2)):
        with pytest.raises(TileError) as e:
            launch_grid(PLAIN, grid, 132)
        msg = str(e.value.diagnostics[0].message)
        assert f"along grid axis {axis}" in msg and "65535" in msg, msg
        assert e.value.diagnostics[0].help


def test_persistent_and_queued_grids_launch_fewer_blocks() -> None:
    assert launch_grid(SimpleNamespace(persistent=2, queue=-1), (1, 70000), 132) == (264, 1, 1)
    g = launch_grid(SimpleNamespace(persistent=0, queue=1, queue_per_sm=1), (1, 70000), 132)
    assert g[1] <= 65535


def test_the_refusal_is_located_at_the_launch(monkeypatch: pytest.MonkeyPatch) -> None:
    class Gpuish(CpuDevice):  # the CPU device with the GPU's grid step in front of each launch
        def run(self, prepared, grid, args, stream=None, span=None):  # type: ignore[no-untyped-def]
            launch_grid(PLAIN, grid, 132)
            return super().run(prepared, grid, args, stream, span)

    monkeypatch.setattr(run, "make_device", lambda choice, out: Gpuish(lambda s: out.write(s + "\n")))
    src = """
kernel fn fill<const B: i32>(z: &mut Tensor<i32, [1, B]>) {
    z.store(full::<i32>([1, B], 1));
}
fn main() {
    let mut z = zeros::<i32>([2, 70000]);
    fill(z.partition([1, 2])).sync();
    fill(z.partition([1, 1])).sync();
}
"""
    with pytest.raises(TileError) as e:
        run.execute(src, "cpu", out=io.StringIO(), name="grid.tile")
    d = e.value.diagnostics[0]
    assert "along grid axis 1" in d.message, d.message
    primary = [lb for lb in d.labels if lb.primary]
    assert primary and primary[0].span.start == src.index("fill(z.partition([1, 1])).sync()"), d
