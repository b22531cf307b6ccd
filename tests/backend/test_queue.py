"""`for s in queue(axis)`: the tile queue (`share_queue.py`, `ownership/queue.py`,
the lowering's `QueuePull`/`QueueTake`, `codegen/arrive.py`). On the CPU: the
interpreter against NumPy (one or several pulling blocks a row, the sanitizer
on), the code generator's output run by the NVPTX IR simulator
(`tests/backend/llsim.py`: every tile written once, the counters back at 0),
the PTX assembled by ptxas for sm_90a and sm_80 (one relaxed atomic a pull, no
fence), the launch grid's rule. On the GPU (marked `gpu`): eager launches and a
graph replayed many times (the counters zeroed by the rows' last pulls)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "backend"))

from llsim import SimDevice  # noqa: E402
from ptxas_report import assemble  # noqa: E402

import tilelang  # noqa: E402
from tilelang.backend import emit_ptx  # noqa: E402
from tilelang.backend.facts import TensorFacts  # noqa: E402
from tilelang.interp import run_kernel  # noqa: E402
from tilelang.runtime.cuda_arrive import groups, launch_grid, queue_grid  # noqa: E402

SRC = """
// each tile: a sum of BK columns of x times its tile index plus one; tile s of
// a row skips its work when s % 3 == 1 (`continue`), writing -1 instead
#[hints(num_warps = 4)]
kernel fn weighted<const BK: i32>(part: &mut Tensor<f32, [1, 1]>, x: &Tensor<f32, [?, ?]>) {
    let px = x.partition([1, BK]);
    let row = block_id(0);
    for s in queue(1) {
        if s % 3 == 1 {
            part.store(full::<f32>([1, 1], -1.0));
            continue;
        }
        let t = px.load([row, s]).sum(1).reshape([1, 1]);
        part.store(t * ((s + 1) as f32));
    }
}

// two `&mut` outputs tiled [1, 4] and [1, 4, 2] along a queue on axis 1
kernel fn two_outputs(a: &mut Tensor<f32, [1, 4]>, b: &mut Tensor<i32, [1, 4, 2]>, x: &Tensor<f32, [?, ?]>) {
    for s in queue(1) {
        let t = x.load_like(a);
        a.store(t + 1.0);
        b.store(full::<i32>([1, 4, 2], s) + block_id(0) * 100);
    }
}
"""

MOD = tilelang.compile(SRC)
P = tilelang.partition


def _weighted_ref(x: np.ndarray, bk: int) -> np.ndarray:
    rows, cols = x.shape
    n = -(-cols // bk)
    out = np.zeros((rows, n), np.float64)
    for s in range(n):
        out[:, s] = -1.0 if s % 3 == 1 else x[:, s * bk:(s + 1) * bk].astype(np.float64).sum(1) * (s + 1)
    return out


def _weighted(rows: int, cols: int, bk: int, seed: int = 0, mod=MOD) -> tuple[np.ndarray, np.ndarray, object]:  # type: ignore[no-untyped-def]
    x = np.random.default_rng(seed).standard_normal((rows, cols)).astype(np.float32)
    part = np.full((rows, -(-cols // bk)), np.nan, np.float32)
    op = mod.weighted[bk](P(part, [1, 1]), x)
    return x, part, op


# The checks of `weighted` and `two_outputs` that test_tiles_walk.py runs on its
# module too (`tiles` for `queue`): every tile once, whatever the blocks a row.
def check_every_tile_once(mod, rows: int, cols: int, bk: int) -> None:  # type: ignore[no-untyped-def]
    """The interpreter against NumPy."""
    x, part, op = _weighted(rows, cols, bk, mod=mod)
    op.sync()  # type: ignore[attr-defined]
    np.testing.assert_allclose(part, _weighted_ref(x, bk), rtol=1e-5, atol=1e-5)


def check_any_number_of_blocks(mod, blocks: int) -> None:  # type: ignore[no-untyped-def]
    """The interpreter with `blocks` blocks a row, in either order."""
    x, part, op = _weighted(3, 40, 4, seed=blocks, mod=mod)
    op.sync()  # type: ignore[attr-defined]
    kir = op._plan.kir  # type: ignore[attr-defined]
    for order in ("row-major", "reverse"):
        part[...] = np.nan
        run_kernel(kir, (3, 10), [part, x], queue_blocks=blocks, order=order)
        np.testing.assert_allclose(part, _weighted_ref(x, 4), rtol=1e-5, atol=1e-5)


def check_llsim_weighted(mod, arch: str, blocks: int) -> None:  # type: ignore[no-untyped-def]
    """The GPU code in llsim (which raises if a row's counter is not back at 0 when the launch ends)."""
    x, part, op = _weighted(3, 40, 4, seed=7, mod=mod)
    op.sync()  # type: ignore[attr-defined]
    kir = op._plan.kir  # type: ignore[attr-defined]
    part[...] = np.nan
    SimDevice(arch).run(kir, (3, 10), [part, x], queue_blocks=blocks)
    np.testing.assert_allclose(part, _weighted_ref(x, 4), rtol=1e-5, atol=1e-5)


def check_llsim_two_outputs(mod) -> None:  # type: ignore[no-untyped-def]
    """Two `&mut` outputs and a partial edge tile, on the interpreter and in llsim."""
    x = np.arange(2 * 18, dtype=np.float32).reshape(2, 18)
    a = np.zeros((2, 18), np.float32)
    b = np.zeros((2, 18, 2), np.int32)
    op = mod.two_outputs(P(a, [1, 4]), P(b, [1, 4, 2]), x)
    op.sync()
    want = (np.arange(18) // 4)[None, :, None] + 100 * np.arange(2)[:, None, None]
    np.testing.assert_array_equal(a, x + 1)
    np.testing.assert_array_equal(b, np.broadcast_to(want, b.shape))
    kir = op._plan.kir  # type: ignore[attr-defined]
    a[...] = 0
    b[...] = 0
    SimDevice("sm_90a").run(kir, (2, 5), [a, b, x], queue_blocks=2)
    np.testing.assert_array_equal(a, x + 1)
    np.testing.assert_array_equal(b, np.broadcast_to(want, b.shape))


@pytest.mark.parametrize(("rows", "cols", "bk"), [(3, 40, 4), (1, 7, 8), (2, 1, 4), (5, 64, 16)])
def test_the_interpreter_writes_every_tile_once(rows: int, cols: int, bk: int) -> None:
    check_every_tile_once(MOD, rows, cols, bk)


@pytest.mark.parametrize("blocks", [1, 2, 5, 100])
def test_any_number_of_pulling_blocks_gives_the_same_tiles(blocks: int) -> None:
    check_any_number_of_blocks(MOD, blocks)


def test_two_outputs_and_a_partial_edge_tile() -> None:
    x = np.arange(3 * 18, dtype=np.float32).reshape(3, 18)
    a = np.zeros((3, 18), np.float32)
    b = np.zeros((3, 18, 2), np.int32)
    MOD.two_outputs(P(a, [1, 4]), P(b, [1, 4, 2]), x).sync()
    np.testing.assert_array_equal(a, x + 1)
    want = (np.arange(18) // 4)[None, :, None] + 100 * np.arange(3)[:, None, None]
    np.testing.assert_array_equal(b, np.broadcast_to(want, b.shape))


@pytest.mark.parametrize("blocks", [1, 3, 20])
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_llsim_runs_the_gpu_code(arch: str, blocks: int) -> None:
    check_llsim_weighted(MOD, arch, blocks)


def test_llsim_two_outputs() -> None:
    check_llsim_two_outputs(MOD)


def _ptx(arch: str) -> str:
    _, _, op = _weighted(3, 40, 4)
    op.sync()  # type: ignore[attr-defined]
    kir = op._plan.kir  # type: ignore[attr-defined]
    facts = {"part": TensorFacts(True, (False, False)), "x": TensorFacts(True, (False, True))}
    return emit_ptx(kir, arch, facts)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_a_pull_is_one_relaxed_atomic_and_no_fence(arch: str, tmp_path: Path) -> None:
    ptx = _ptx(arch)
    assert ptx.count("atom.relaxed.gpu.global.add.u32") == 1  # the loop's (a block's first tile is its own)
    assert "membar" not in ptx and "fence" not in ptx and "acq_rel" not in ptx
    assert ptx.count("st.relaxed.gpu.global.u32") == 1  # the row's last pull resets the counter
    assert assemble(ptx, arch).max_spill_stores == 0


def test_the_launch_fills_the_card_once_along_the_queue() -> None:
    class Abi:
        persistent = 0
        queue = 1
        queue_per_sm = 2

    assert launch_grid(Abi(), (8, 128), 132) == (8, 33, 1)  # 264 blocks: 2 an SM
    assert launch_grid(Abi(), (8, 20), 132) == (8, 20, 1)  # never more than the tiles
    assert launch_grid(Abi(), (300, 4), 132) == (300, 1, 1)  # at least one a row
    assert queue_grid((4, 3, 64), 2, 1, 132) == (4, 3, 11)
    # a walk's next tile `s + W` stays in i32 (hrev round 8: at 2^31 - 1 tiles
    # of a row the last tile's step wrapped below 0 and the loop went on)
    assert queue_grid((2**31 - 1, 1, 1), 0, 8, 132) == (1, 1, 1)
    assert queue_grid((2**31 - 100, 1, 1), 0, 8, 132) == (100, 1, 1)
    assert queue_grid((2**31 - 2000, 1, 1), 0, 8, 132) == (1056, 1, 1)
    from types import SimpleNamespace

    from tilelang.interp.machine import queue_grid as interp_queue_grid
    walk = SimpleNamespace(walk=0)
    assert interp_queue_grid(walk, (2**31 - 1, 3)) == (1, 3)  # type: ignore[arg-type]
    assert interp_queue_grid(walk, (2**31 - 2, 3)) == (2, 3)  # type: ignore[arg-type]
    assert groups("queue:1", (8, 128, 1)) == 8


def check_tilec_run_on_the_cpu(src: str, prog: Path) -> None:
    """`tilec run --device cpu` (the sanitizer on) of `src`'s `weighted` over a [2, 24] input of ones."""
    prog.write_text(src + """
fn main() {
    let x = ones::<f32>([2, 24]);
    let mut part = zeros::<f32>([2, 6]);
    weighted::<4>(part.partition([1, 1]), &x).sync();
    print(part.sum());
}
""")
    r = subprocess.run([sys.executable, "-m", "tilelang", "run", str(prog), "--device", "cpu"],
                       capture_output=True, text=True, env={"PYTHONPATH": str(ROOT), "TILE_SANITIZE": "1",
                                                            "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "108.0"


def test_tilec_run_on_the_cpu(tmp_path: Path) -> None:
    check_tilec_run_on_the_cpu(SRC, tmp_path / "q.tile")


def _gpu():  # type: ignore[no-untyped-def]
    try:
        import torch
    except ImportError:
        pytest.skip("PyTorch is not installed")
    if not torch.cuda.is_available():
        pytest.skip("no GPU")
    return torch


def check_gpu_eager_and_a_graph_replayed(src: str) -> None:
    """`src`'s `weighted` on the GPU: three eager launches, then a CUDA graph replayed 50 times."""
    torch = _gpu()
    gpu = tilelang.compile(src, device="gpu")
    rows, cols, bk = 8, 4096, 4
    x = torch.randn(rows, cols, device="cuda")
    part = torch.full((rows, cols // bk), float("nan"), device="cuda")
    want = torch.from_numpy(_weighted_ref(x.cpu().numpy(), bk).astype(np.float32))
    for _ in range(3):
        part.fill_(float("nan"))
        gpu.weighted[bk](P(part, [1, 1]), x).sync()
        torch.testing.assert_close(part.cpu(), want, rtol=1e-4, atol=1e-4)
    stream = torch.cuda.Stream()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.stream(stream):
        gpu.weighted[bk](P(part, [1, 1]), x).sync()  # compiled before the capture
        with torch.cuda.graph(g, stream=stream):
            gpu.weighted[bk](P(part, [1, 1]), x).launch()
    for _ in range(50):
        part.fill_(float("nan"))
        g.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(part.cpu(), want, rtol=1e-4, atol=1e-4)


@pytest.mark.gpu
def test_gpu_eager_and_a_graph_replayed() -> None:
    check_gpu_eager_and_a_graph_replayed(SRC)
