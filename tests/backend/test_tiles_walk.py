"""`for s in tiles(axis)`: the static tile walk (`share_queue.py`, the checker
`ownership/queue.py`, the lowering's `_lower_queue(static=True)`,
`ir.Kernel.walk`). The kernels of `test_queue.py` and of
`programs/independent/q21_queue.tile` with `tiles` for `queue` (their checks
are the queue's: every tile written once, whatever the number of walking
blocks): on the CPU, the interpreter against NumPy at 1..100 walking blocks a
row and the NVPTX IR simulator (`tests/backend/llsim.py`) for sm_80 and
sm_90a; the PTX assembled by ptxas (no atomic, no counter parameter, fewer
barriers than the queue's, no spills); the launch grid (one wave, as a
queue's). On the GPU (marked `gpu`): eager launches and a graph replayed."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "backend"))

from llsim import SimDevice  # noqa: E402
from ptxas_report import assemble  # noqa: E402
from test_queue import SRC as QUEUE_SRC  # noqa: E402
from test_queue import (  # noqa: E402
    _weighted,
    check_any_number_of_blocks,
    check_every_tile_once,
    check_gpu_eager_and_a_graph_replayed,
    check_llsim_two_outputs,
    check_llsim_weighted,
    check_tilec_run_on_the_cpu,
)

import tilelang  # noqa: E402
from tilelang.backend import emit_ptx  # noqa: E402
from tilelang.backend.facts import TensorFacts  # noqa: E402
from tilelang.backend.gpu.passes import lower_to_gpu  # noqa: E402
from tilelang.backend.llvm import emit_llvm_text  # noqa: E402
from tilelang.interp import run_kernel  # noqa: E402
from tilelang.ir.printer import print_kernel  # noqa: E402
from tilelang.runtime.cuda_arrive import launch_grid  # noqa: E402

SRC = QUEUE_SRC.replace("queue(", "tiles(") + """
// an atomic through `unsafe` inside the walk (a histogram of the tiles' first
// elements' signs, a shared `&` tensor): the `&mut` tiles are still the walk's
kernel fn signs<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>, hist: &Tensor<i32, [2]>) {
    for s in tiles(0) {
        let t = x.load_like(z);
        z.store(t * 2.0);
        let neg = x.partition([1]).load([s * B]).sum(0) < 0.0;
        unsafe {
            atomic_add(hist, [where(neg, 1, 0)], 1);
        }
    }
}
"""
MOD = tilelang.compile(SRC)
QMOD = tilelang.compile(QUEUE_SRC)
P = tilelang.partition
Q21 = (Path(__file__).parent / "programs" / "independent" / "q26_tiles_walk.tile").read_text(encoding="utf-8")
WALKS = tilelang.compile(Q21.split("fn main()")[0])


def test_the_kernel_says_its_walk() -> None:
    _, _, op = _weighted(3, 40, 4, mod=MOD)
    op.sync()  # type: ignore[attr-defined]
    kir = op._plan.kir  # type: ignore[attr-defined]
    assert kir.walk == 1
    assert " walk 1 {" in print_kernel(kir)


@pytest.mark.parametrize(("rows", "cols", "bk"), [(3, 40, 4), (1, 7, 8), (2, 1, 4), (5, 64, 16)])
def test_the_interpreter_writes_every_tile_once(rows: int, cols: int, bk: int) -> None:
    check_every_tile_once(MOD, rows, cols, bk)


@pytest.mark.parametrize("blocks", [1, 2, 3, 5, 100])
def test_any_number_of_walking_blocks_gives_the_same_tiles(blocks: int) -> None:
    check_any_number_of_blocks(MOD, blocks)


@pytest.mark.parametrize("blocks", [1, 3, 20])
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_llsim_runs_the_gpu_code(arch: str, blocks: int) -> None:
    check_llsim_weighted(MOD, arch, blocks)


def test_two_outputs_and_a_partial_edge_tile_in_llsim() -> None:
    check_llsim_two_outputs(MOD)


def test_an_atomic_inside_the_walk() -> None:
    x = np.random.default_rng(3).standard_normal(72).astype(np.float32)
    z = np.zeros(72, np.float32)
    hist = np.zeros(2, np.int32)
    op = MOD.signs[8](P(z, [8]), x, hist)
    op.sync()
    firsts = x[::8]
    want = np.array([(firsts >= 0).sum(), (firsts < 0).sum()], np.int32)
    np.testing.assert_array_equal(z, x * 2)
    np.testing.assert_array_equal(hist, want)
    kir = op._plan.kir  # type: ignore[attr-defined]
    for blocks in (1, 4):
        z[...] = 0
        hist[...] = 0
        SimDevice("sm_90a").run(kir, (9,), [z, x, hist], queue_blocks=blocks)
        np.testing.assert_array_equal(z, x * 2)
        np.testing.assert_array_equal(hist, want)


def _q21_cases():  # type: ignore[no-untyped-def]
    x = np.arange(66, dtype=np.float32).reshape(3, 22) / 8
    a = np.full((3, 22), np.nan, np.float32)
    yield "weigh", WALKS.weigh, (P(a, [1, 4]), x), [a, x]
    x2 = np.arange(50, dtype=np.float32).reshape(10, 5)
    a2 = np.full((10, 5), np.nan, np.float32)
    b2 = np.full((12, 3), -9, np.int32)
    yield "down", WALKS.down, (P(a2, [3, 2]), P(b2, [3, 1]), x2), [a2, b2, x2]
    x3 = np.arange(108, dtype=np.float32).reshape(4, 27) - 50
    y3 = np.ones((4, 27), np.float32)
    yield "add", WALKS.add[4], (P(y3, [1, 4]), x3), [y3, x3]


@pytest.mark.parametrize("case", [0, 1, 2])
def test_q21_kernels_agree_at_any_walking_block_count(case: int) -> None:
    name, k, call, arrs = list(_q21_cases())[case]
    op = k(*call)
    op.sync()  # type: ignore[attr-defined]
    want = [a.copy() for a in arrs]
    plan = op._plan  # type: ignore[attr-defined]
    for blocks in (1, 2, 5):
        got = list(_q21_cases())[case][3]
        run_kernel(plan.kir, plan.bound.grid, got, queue_blocks=blocks)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5, err_msg=f"{name}: interpreter, {blocks} blocks")
    for arch, blocks in (("sm_80", 3), ("sm_90a", 1), ("sm_90a", 2)):
        got = list(_q21_cases())[case][3]
        SimDevice(arch).run(plan.kir, plan.bound.grid, got, queue_blocks=blocks)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5, err_msg=f"{name}: llsim {arch}, {blocks} blocks")


def _kir(mod):  # type: ignore[no-untyped-def]
    _, _, op = _weighted(3, 40, 4, mod=mod)
    op.sync()  # type: ignore[attr-defined]
    return op._plan.kir  # type: ignore[attr-defined]


FACTS = {"part": TensorFacts(True, (False, False)), "x": TensorFacts(True, (False, True))}


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_no_atomic_no_counter_and_fewer_barriers_than_the_queue(arch: str) -> None:
    walk, queue = emit_ptx(_kir(MOD), arch, FACTS), emit_ptx(_kir(QMOD), arch, FACTS)
    assert "atom." in queue and "atom." not in walk
    assert "membar" not in walk and "fence" not in walk
    # the queue's pull: its ticket through shared memory between barriers
    assert walk.count("bar.sync") + walk.count("barrier.sync") < queue.count("bar.sync") + queue.count("barrier.sync")
    assert walk.count(".param .u64") == queue.count(".param .u64") - 1  # no counter buffer
    assert assemble(walk, arch).max_spill_stores == 0


def test_the_abi_launches_one_wave_along_the_walk() -> None:
    kir = _kir(MOD)
    _, abi = emit_llvm_text(lower_to_gpu(kir, "sm_90a", FACTS), FACTS)
    assert abi.queue == 1
    assert not any(sl.what.startswith(("queue:", "arrive:")) for sl in abi.slots)
    class Abi:
        persistent = 0
        queue = abi.queue
        queue_per_sm = 2
    assert launch_grid(Abi(), (8, 128), 132) == (8, 33, 1)


def test_tilec_run_on_the_cpu_with_the_sanitizer(tmp_path: Path) -> None:
    check_tilec_run_on_the_cpu(SRC, tmp_path / "w.tile")


@pytest.mark.gpu
def test_gpu_eager_and_a_graph_replayed() -> None:
    check_gpu_eager_and_a_graph_replayed(SRC)
