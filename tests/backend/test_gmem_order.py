"""A block that reads back or writes again its own tile, on the simulated GPU
(the hostile review, 2026-12-04 18:26 session).

The interpreter runs a block's statements in order; on the GPU a store and a
later load of the same elements may be made by different threads (the
layout of an elementwise tile, then of one reduced along axis 0). Nothing
ordered them: `z.store(a); z.load().sum(0)` read stale memory, a store after
a load could overwrite an element before its load, and of two stores the
first could land last. `backend/codegen/hazards.py` (the emitter's `Hazards`)
puts a block barrier between such accesses; llsim's racecheck of the kernel's tensors
(`llsim_hopper._GlobalHazards`) is the oracle: two threads of a block
touching one byte of a tensor with no barrier between them, one storing, is
a `Race`.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from llsim import Race, sim_runtime_device

import tilelang.run as run
from tilelang import driver
from tilelang.backend.codegen import hazards

PROGRAM = Path(__file__).resolve().parents[1] / "run" / "own_tile_reread.tile"


def _tensors(ex: run.Execution) -> dict[str, np.ndarray]:
    return {k: np.asarray(t.numpy()).copy() for k, t in ex.main_locals.items() if hasattr(t, "numpy")}


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_own_tile_rereads_agree_on_the_simulated_gpu(arch: str, monkeypatch: pytest.MonkeyPatch) -> None:
    want = _tensors(run.execute(str(PROGRAM), "cpu", out=io.StringIO()))
    assert {"z1", "o1", "z2", "o2", "z3", "z4", "o4", "o5"} <= set(want)
    monkeypatch.setattr(run, "make_device", lambda choice, out: sim_runtime_device(arch))
    got = _tensors(run.execute(str(PROGRAM), "cpu", out=io.StringIO()))
    for name, w in want.items():
        np.testing.assert_array_equal(got[name], w, err_msg=name)


def test_a_loop_reading_its_previous_iterations_tile(monkeypatch: pytest.MonkeyPatch) -> None:
    # offsets the loop computes (a nested tile's index) meet the previous
    # iteration's: no barrier there was a race (thread 16 loaded a byte of `z`
    # thread 0 stored); a queue's or a walk's tiles are the only ones that
    # cannot meet (tests/llm/test_rows_walk.py: no barrier in the walk of gate/up)
    prog = PROGRAM.parent / "own_tile_prev_tile.tile"
    want = _tensors(run.execute(str(prog), "cpu", out=io.StringIO()))
    monkeypatch.setattr(run, "make_device", lambda choice, out: sim_runtime_device("sm_80"))
    got = _tensors(run.execute(str(prog), "cpu", out=io.StringIO()))
    for name, w in want.items():
        np.testing.assert_array_equal(got[name], w, err_msg=name)


def test_without_the_barriers_the_simulator_sees_the_race(monkeypatch: pytest.MonkeyPatch) -> None:
    # the oracle itself: the same program with no barrier placed races
    monkeypatch.setattr(hazards.Hazards, "needs_barrier", lambda self, tensor, a: False)
    monkeypatch.setattr(run, "make_device", lambda choice, out: sim_runtime_device("sm_80"))
    with pytest.raises(Race, match="of tensor `z`"):
        run.execute(str(PROGRAM), "cpu", out=io.StringIO())


def _ptx(source: str, kernel: str, arch: str = "sm_90a") -> str:
    r = driver.compile(source, "ptx", options=driver.Options(kernel=kernel, arch=arch))
    assert r.ok, r.diagnostics
    return driver.format_output("ptx", r)


def _barriers(source: str, kernel: str, monkeypatch: pytest.MonkeyPatch) -> int:
    """How many `bar.sync` the hazard analysis adds to kernel `kernel`'s PTX
    (the emitter's own barriers, e.g. a layout conversion's, already order
    what lies across them, so they are not doubled)."""
    with_hazards = _ptx(source, kernel).count("bar.sync")
    with monkeypatch.context() as m:
        m.setattr(hazards.Hazards, "needs_barrier", lambda self, tensor, a: False)
        without = _ptx(source, kernel).count("bar.sync")
    return with_hazards - without


def test_kernels_that_store_each_tile_once_get_no_barrier(monkeypatch: pytest.MonkeyPatch) -> None:
    text = PROGRAM.read_text(encoding="utf-8")
    assert _barriers(text, "raw", monkeypatch) == 1
    assert _barriers(text, "war", monkeypatch) == 1
    assert _barriers(text, "nested", monkeypatch) >= 1
    assert _barriers(text, "loop_carried", monkeypatch) == 2  # the load after the last iteration's store, the store after the load
    assert _barriers(text, "waw", monkeypatch) == 0  # both stores in one layout: each thread writes its own elements twice
    add = (Path(__file__).resolve().parents[2] / "examples" / "add.tile").read_text(encoding="utf-8")
    assert _barriers(add, "add", monkeypatch) == 0
    # a store, then a load of the same elements in the same layout: each
    # thread reads back what it stored itself
    same = """
kernel fn k(z: &mut Tensor<f32, [32, 64]>, x: &Tensor<f32, [?, ?]>) {
    z.store(x.load_like(z) * 2.0);
    let b = z.load();
    z.store(b + 1.0);
}
fn main() {
    let x = zeros::<f32>([64, 64]);
    let mut z = zeros::<f32>([64, 64]);
    k(z.partition([32, 64]), &x).sync();
}
"""
    assert _barriers(same, "k", monkeypatch) == 0
    # a 16 x 16 tile over 128 threads (the hint's 4 warps) is replicated: a
    # copy that did not store an element loads it
    small = same.replace("32, 64]", "16, 16]")
    assert _barriers("#[hints(num_warps = 4)]" + small, "k", monkeypatch) >= 1
    # without the hint it runs at 2 warps (`lift.fewer_warps`), 4 elements a thread and no copies
    assert _barriers(small, "k", monkeypatch) == 0
