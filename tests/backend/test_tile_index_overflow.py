"""Constant tile indices whose element offset (index * tile size) does not
fit `i32` (hostile review, round 16): `tests/run/tile_index_overflow.tile` run
through the NVPTX IR simulator (`llsim`) for sm_80 and sm_90a must print what
the interpreter prints (the tile is wholly outside the tensor: zeros, or the
padding). The offset was folded in `i32` on every engine, so `p.load([4194305])`
of tiles of 1024 read tile 1 (`ir/lower/views.tile_offset`). So did a run-time index from a scalar parameter
or a tensor's data (hrev17: `tile_index_runtime_overflow.tile`; the index is
tested where its bounds do not keep the product inside `i32`)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from llsim import sim_runtime_device

import tilelang.run as run

RUN = Path(__file__).resolve().parents[1] / "run"
WANT = {"tile_index_overflow.tile": ["15726592.0", "0.0"],
        "tile_index_runtime_overflow.tile": ["157265920.0", "0", "114", "497.0", "1.0"]}


@pytest.mark.parametrize("name", sorted(WANT))
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_far_tiles_read_zeros_on_the_simulated_gpu(arch: str, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    PROGRAM = RUN / name
    want = io.StringIO()
    run.execute(str(PROGRAM), "cpu", out=want)
    assert want.getvalue().split() == WANT[name]
    monkeypatch.setattr(run, "make_device", lambda choice, out: sim_runtime_device(arch))
    got = io.StringIO()
    run.execute(str(PROGRAM), "cpu", out=got)
    assert got.getvalue() == want.getvalue()
