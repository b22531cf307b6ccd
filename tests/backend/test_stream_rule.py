"""The rule of `TILEC_STREAM_AUTO` (unset: "auto"; `backend/stream_rule.py`): an unhinted kernel's loop of a
run-time trip count streams its loads where, at the launch's grid, the bytes in flight across the card without a
ring are below the bandwidth-delay product (H100: 3.02 TB/s x 0.742 us = 2.24 MB), with a ring deep enough to
reach it that does not cut the blocks an SM holds below what doubles the bytes in flight.

Without a GPU: the decisions on call 39's measured rows (`col_sum` under four tilings on an H100) and on
hcliff11's natural kernels (which ask nothing: no loop, or a loop of a constant trip count); the depth and
occupancy arithmetic on synthetic loops; the runtime's choice of the variant (`CudaDevice._choose` on a stub);
and the streamed variant in llsim against the interpreter (partial last tile, fewer tiles than stages).
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "backend"))

from llsim import SimDevice, choose_variant  # noqa: E402

import tilelang  # noqa: E402
from tilelang.backend import emit_llvm_text, lower_gpu  # noqa: E402
from tilelang.backend import stream_rule as rule  # noqa: E402
from tilelang.backend.explain import describe  # noqa: E402
from tilelang.backend.facts import TensorFacts  # noqa: E402
from tilelang.backend.gpu.printer import print_gpu_kernel  # noqa: E402

P = tilelang.partition
KiB = 1024


@pytest.fixture(scope="module")
def natural():  # type: ignore[no-untyped-def]
    return tilelang.compile((ROOT / "benchmarks" / "hcliff11.tile").read_text())


def _facts(kir) -> dict[str, TensorFacts]:  # type: ignore[no-untyped-def]
    return {p.name: TensorFacts(True, (True,) * len(p.dims)) for p in kir.tensor_params}


def _first(op):  # type: ignore[no-untyped-def]
    """The first variant (no grid: what `tilec emit` and ptx_sha compile) and its ABI, the op discarded."""
    kir = op._plan.kir
    op.discard()  # compiled, never run
    gk = lower_gpu(kir, "sm_90a", _facts(kir))
    return kir, gk, emit_llvm_text(gk, gk.facts)[1]


def _col_sum(natural, bm: int, bn: int, n: int = 8192):  # type: ignore[no-untyped-def]
    return _first(natural.col_sum[bm, bn](P(np.zeros(n, np.float32), [bn]), np.zeros((64, n), np.float32)))


# call 39 (H100): default -> TILEC_STREAM_AUTO=1 (3 stages) against torch; what the rule does on each row
ROWS = [(32, 128, 64, 16 * KiB, (4,)),   # 1 MiB in flight: 0.51 -> 0.88x; streamed, 4 stages (3 MiB)
        (32, 32, 256, 4 * KiB, (4,)),    # 1 MiB: 0.50 -> 0.84x; streamed, 4 stages
        (128, 128, 64, 64 * KiB, None),  # 4 MiB: 0.87 -> 1.03x: a gain the rule leaves (above the BDP)
        (128, 32, 256, 16 * KiB, None)]  # 4 MiB: 0.99 -> 0.90x: the loss the rule avoids


@pytest.mark.parametrize(("bm", "bn", "ctas", "step", "want"), ROWS)
def test_the_rule_on_call_39s_rows(natural, bm: int, bn: int, ctas: int, step: int, want) -> None:  # type: ignore[no-untyped-def]
    kir, gk, abi = _col_sum(natural, bm, bn)
    assert "ring" not in print_gpu_kernel(gk)  # the first variant: the loop as written, asking
    budget = 227 * KiB - max(16 * KiB, bm * bn * 4)  # Hopper's, less the scratch the sum over rows stages
    assert gk.stream == abi.stream == rule.StreamAsk("s", (rule.StreamLoop(step, step, budget // step),))
    facts = _facts(kir)
    for blocks in (-1, 16, 8):  # the estimate (llsim), or a driver's count: one wave either way
        more = rule.refine(abi, facts, (8192 // bn,), 132, lambda b=blocks: b)
        assert (more and more[1]["s"].stream) == want and 8192 // bn == ctas
    if want is None:
        return
    more = rule.refine(abi, facts, (8192 // bn,), 132, lambda: -1)
    assert more is not None and more[0] == ("stream", want)
    variant = lower_gpu(kir, "sm_90a", more[1])
    text = print_gpu_kernel(variant)
    assert f"smem.alloc : f32[{want[0]}, {step // 4}]" in text
    assert describe(variant).endswith("; loads 3 tiles ahead (the launch has few bytes in flight: `TILEC_STREAM_AUTO`)")
    assert "tiles ahead" not in describe(gk)
    assert "cp.async.wait 2\n" in text and "load @x" not in text  # 3 tiles ahead, no register load left
    # a grid that fills the card with the same tiles (4 waves' worth of CTAs): already fed, not streamed
    assert rule.refine(abi, facts, (132 * 16 * 4,), 132, lambda: 16) is None


def test_the_natural_kernels_ask_nothing(natural, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """hcliff11's natural kernels (call 38/39 rows): softmax, transpose and cumsum have no loop, dwconv's taps a
    constant trip count, the 4-token GEMV's loop is the FMA pipeline's (and, without it, a product of scalar
    FMAs, which the rule leaves: issue-bound), under every tiling call 39 timed: none asks, so the rule changes
    none of them."""
    x = np.zeros((64, 256), np.float32)
    ops = [natural.softmax_rows[256](P(np.zeros((64, 256), np.float32), [1, 256]), x),
           natural.transpose[32, 64](P(np.zeros((256, 64), np.float32), [64, 32]), x),
           natural.row_cumsum[1, 256](P(np.zeros((64, 256), np.float32), [1, 256]), x),
           natural.dwconv[4, 256](P(np.zeros((64, 256), np.float16), [1, 256]), x.astype(np.float16),
                                  np.zeros((4, 256), np.float32))]

    def gemv(bm: int = 64, bk: int = 64, nb: int = 4):  # type: ignore[no-untyped-def]
        return natural.gemv[bm, bk, nb](P(np.zeros((128, nb), np.float16), [bm, nb]),
                                        np.zeros((128, 1024), np.float16), np.zeros((1024, nb), np.float16))

    tilings = [(64, 64, 4), (16, 64, 4), (16, 256, 4), (64, 256, 4), (64, 64, 8)]  # hcliff12's GEMV rows
    for op in [*ops, *(gemv(*t) for t in tilings)]:
        assert _first(op)[1].stream is None
    monkeypatch.setenv("TILEC_FMA_PIPELINE", "0")
    for t in tilings:
        assert _first(gemv(*t))[1].stream is None
    kir, gk, _ = _first(gemv())
    assert "ring" not in print_gpu_kernel(gk)
    monkeypatch.setenv("TILEC_STREAM_AUTO", "1")  # the override still streams it (call 39's `autoold`)
    assert "cp.async.own @w[" in print_gpu_kernel(lower_gpu(kir, "sm_90a", _facts(kir)))


def test_the_switch_overrides_the_rule(natural, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TILEC_STREAM_AUTO", "0")
    assert _col_sum(natural, 32, 128)[1].stream is None
    monkeypatch.setenv("TILEC_STREAM_AUTO", "1")  # every launch, 3 stages, nothing asked
    _, gk, abi = _col_sum(natural, 128, 32)
    assert gk.stream is None and abi.stream is None and "smem.alloc : f32[3, 4096]" in print_gpu_kernel(gk)
    monkeypatch.setenv("TILEC_STREAM_AUTO", "auto")
    assert _col_sum(natural, 32, 128)[1].stream is not None
    monkeypatch.setenv("TILEC_STREAM_AUTO", "yes")
    with pytest.raises(ValueError, match="TILEC_STREAM_AUTO"):
        _col_sum(natural, 32, 128)
    monkeypatch.delenv("TILEC_STREAM_AUTO")
    kir, gk, _ = _col_sum(natural, 32, 128)
    assert gk.stream is not None and lower_gpu(kir, "sm_80", _facts(kir)).stream is None  # no BDP off sm_90


def test_depth_and_occupancy() -> None:
    """The ring's depth: the fewest stages (3 at least) whose bytes in flight reach the BDP, at most
    `MAX_STAGES`, within the SM's shared memory; not taken where the rings cut the blocks an SM holds so far
    that the bytes in flight do not double."""
    one = rule.StreamAsk("o", (rule.StreamLoop(16 * KiB, 16 * KiB),))
    assert rule.decide(one, 1, 132, 16, 0, 128) == (rule.MAX_STAGES,)  # one CTA: as deep as it goes
    assert rule.decide(one, 64, 132, 16, 0, 128) == (4,)  # 3 x 1 MiB >= 2.24 MB > 2 x 1 MiB
    assert rule.decide(one, 64, 132, 16, 170 * KiB, 128) == (3,)  # 4 stages do not fit beside 170 KB
    assert rule.decide(one, 64, 132, 16, 190 * KiB, 128) == (0,)  # 3 do not: no ring
    assert rule.decide(rule.StreamAsk("o", (rule.StreamLoop(16 * KiB, 16 * KiB, 3),)), 64, 132, 16, 0, 128) == (3,)
    assert rule.decide(rule.StreamAsk("o", (rule.StreamLoop(16 * KiB, 16 * KiB, 2),)), 64, 132, 16, 0, 128) == (0,)
    assert rule.decide(one, 137, 132, 16, 0, 128) == (0,)  # 137 x 16 KB = 2.24 MB: at the BDP
    # 2 blocks an SM of 4 KB a step beside 105 KB of the kernel's own (1.08 MB in flight on 264 CTAs): any ring
    # leaves 1 block an SM, so 3 stages keep 1.08 MB; 6 (5 tiles ahead on 132 CTAs, 2.7 MB) reach the BDP
    cut = rule.StreamAsk("o", (rule.StreamLoop(4 * KiB, 4 * KiB),))
    assert rule.decide(cut, 264, 132, 2, 105 * KiB, 128) == (6,)
    assert rule.decide(cut, 264, 132, 2, 0, 128) == (4,)  # (without the kernel's own: 2 blocks, 3 tiles ahead)
    # the estimate (no driver): threads and shared memory; a load outside the ring counts in flight, not in it
    assert rule.blocks_estimate(128, 0) == 16 and rule.blocks_estimate(1024, 0) == 2
    assert rule.blocks_estimate(128, 100 * KiB) == 2
    mixed = rule.StreamAsk("o", (rule.StreamLoop(20 * KiB, 16 * KiB), rule.StreamLoop(16 * KiB, 16 * KiB)))
    assert rule.decide(mixed, 64, 132, 16, 0, 128) == (3, 4)  # 64 x (2 x 16 + 4) KB = 2.36 MB; then beside it
    assert rule.decide(rule.StreamAsk("o", (rule.StreamLoop(4 * KiB, 0),)), 1, 132, 16, 0, 128) == (0,)
    assert rule.BDP == 2_240_840  # 3.02 TB/s x 0.742 us


def test_the_runtime_launches_the_streamed_variant(natural) -> None:  # type: ignore[no-untyped-def]
    """`CudaDevice._choose`: the first variant asks, the driver's occupancy says 16 blocks an SM, and a launch
    of 64 CTAs runs the variant with the decision in its facts; 4 waves of CTAs run the first. Where the
    streamed variant's own blocks an SM (its registers) fall so far that the bytes in flight do not reach what
    it was chosen for (`stream_rule.holds`), the launch keeps the first variant."""
    from tilelang.runtime.cuda import CudaDevice

    asked: list[object] = []
    per_sm = {"fn1": 16, "fn2": 16}

    def device(kir):  # type: ignore[no-untyped-def]
        def variant(pk, key, facts, span):  # type: ignore[no-untyped-def]
            asked.append(key)
            gk = lower_gpu(kir, "sm_90a", facts)
            return emit_llvm_text(gk, gk.facts)[1], SimpleNamespace(handle=f"fn{len(key)}")

        dev = CudaDevice.__new__(CudaDevice)
        driver = SimpleNamespace(cuOccupancyMaxActiveBlocksPerMultiprocessor=lambda h, t, s: (0, per_sm[h]))
        dev.ctx = SimpleNamespace(info=SimpleNamespace(sm_count=132), d=driver)
        dev._variant = variant  # type: ignore[method-assign]
        return dev

    kir = _col_sum(natural, 32, 128)[0]
    dev, facts = device(kir), _facts(kir)
    abi, fn, _ = dev._choose(SimpleNamespace(ir=kir), ("base",), facts, [], None, (64,))
    assert asked == [("base",), ("base", ("stream", (4,)))] and fn.handle == "fn2" and abi.stream is None
    asked.clear()
    abi, fn, _ = dev._choose(SimpleNamespace(ir=kir), ("base",), facts, [], None, (132 * 16 * 4,))
    assert asked == [("base",)] and fn.handle == "fn1" and abi.stream is not None
    # 528 CTAs of 4 KB a step (4 an SM: 2.16 MB in flight): 3 stages, 4.3 MB, where the streamed variant holds 4
    # an SM; at 2 an SM (its registers) 2.16 MB, neither the BDP nor twice: the first variant
    kir = _col_sum(natural, 32, 32)[0]
    for held, runs in ((4, "fn2"), (2, "fn1")):
        per_sm["fn2"] = held
        asked.clear()
        dev = device(kir)
        abi, fn, _ = dev._choose(SimpleNamespace(ir=kir), ("base",), facts, [], None, (528,))
        assert asked == [("base",), ("base", ("stream", (3,)))] and fn.handle == runs


# (40: fewer tiles than stages, a path test_stream_loads' hinted rings cover by default: heavy)
@pytest.mark.parametrize("rows", [200, pytest.param(40, marks=pytest.mark.heavy)])
def test_the_streamed_variant_in_llsim(natural, rows: int) -> None:
    """The variant a launch of 2 CTAs runs (8 stages: 7 tiles ahead) in llsim against the interpreter: 200 rows
    (7 row tiles, the last 8 rows of 32: its chunks past the edge zero-filled) and 40 (2 tiles for 7 ahead)."""
    x = np.random.default_rng(rows).standard_normal((rows, 256)).astype(np.float32)
    s = np.zeros(256, np.float32)
    op = natural.col_sum[32, 128](P(s, [128]), x)
    kir = op._plan.kir
    sim = SimDevice("sm_90a")
    copies = [np.array(h) for h in op._hosts]
    args = op._kernel_args(copies)
    facts, grid = choose_variant(sim, kir, (2,), args, 132)
    assert facts["s"].stream == (rule.MAX_STAGES,) and grid[0] == 2
    assert "smem.alloc : f32[8, 4096]" in print_gpu_kernel(lower_gpu(kir, "sm_90a", facts))
    sim.run(kir, (2,), args, facts)
    op.sync()
    np.testing.assert_allclose(copies[0], op._hosts[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(op._hosts[0], x.sum(0), rtol=1e-4, atol=1e-4)


@pytest.mark.gpu
@pytest.mark.parametrize(("rows", "cols", "bn"), [(1000, 512, 128), (8192, 4096, 32)])
def test_the_rule_on_the_gpu(natural, rows: int, cols: int, bn: int) -> None:  # type: ignore[no-untyped-def]
    """On the card, as a launch decides: 4 CTAs (streamed, 8 stages; the last row tile partial) and 128 CTAs of
    4 KB a step (512 KB in flight: streamed, 6 stages), each against the interpreter."""
    import tilelang.testing as tt

    x = np.random.default_rng(rows).standard_normal((rows, cols)).astype(np.float32)
    s = np.zeros(cols, np.float32)
    tt.compare(natural.col_sum[32, bn], P(s, [bn]), x, devices=("cpu", "gpu"), rtol=1e-4, atol=1e-3)


NESTED = """
kernel fn nested<const BM: i32, const BN: i32>(s: &mut Tensor<f32, [BN]>, x: &Tensor<f32, [?, ?]>,
                                               y: &Tensor<f32, [?, ?]>) {
    let p = x.partition([BM, BN]);
    let q = y.partition([BM, BN]);
    let mut acc = zeros::<f32>([BN]);
    for r in 0..q.num_tiles(0) {
        acc = acc + q.load([r, block_id(0)]).sum(0);
        for i in 0..p.num_tiles(0) {
            acc = acc + p.load([i, block_id(0)]).sum(0);
        }
    }
    for i in 0..p.num_tiles(0) {
        acc = acc + p.load([i, block_id(0)]).max(0);
    }
    s.store(acc);
}
"""


def test_nested_loops_meet_their_decisions_in_order() -> None:
    """The first variant asks for its loops inner first (the inner loop, the outer one, the loop after them);
    in the variant the inner loop's ring makes the outer loop one the pass leaves, and the loop after it still
    takes the third decision (not the outer's), right in llsim."""
    rng = np.random.default_rng(5)
    x, y = rng.standard_normal((96, 256)).astype(np.float32), rng.standard_normal((64, 256)).astype(np.float32)
    s = np.zeros(256, np.float32)
    op = tilelang.compile(NESTED).nested[32, 128](P(s, [128]), x, y)
    kir = op._plan.kir
    facts = _facts(kir)
    first = lower_gpu(kir, "sm_90a", facts)
    assert first.stream is not None and len(first.stream.loops) == 3 and "ring" not in print_gpu_kernel(first)
    facts = {**facts, "s": TensorFacts(True, (True,), stream=(3, 5, 4))}
    text = print_gpu_kernel(lower_gpu(kir, "sm_90a", facts))
    assert "f32[3, 4096]" in text and "f32[4, 4096]" in text and "f32[5, 4096]" not in text
    copies = [np.array(h) for h in op._hosts]
    SimDevice("sm_90a").run(kir, (2,), op._kernel_args(copies), facts)
    op.sync()
    np.testing.assert_allclose(copies[0], op._hosts[0], rtol=1e-5, atol=1e-4)


def test_the_stub_devices_launches() -> None:
    """The real `CudaDevice` on the stub driver (`runtime/cuda_stub.py`: 132 SMs, the occupancy calculator
    says 1 block an SM): a column sum of 64 CTAs of 16 KB a step launches the variant with 4 stages (64 KB of
    shared memory a launch asks for), one of 64 CTAs of 64 KB the first variant (no shared memory); a later
    launch of the same shapes reuses the choice."""
    from tilelang.runtime import cuda_stub
    from tilelang.runtime.cuda_stub import DevArray

    dev = cuda_stub.stub_device("sm_90a", 132)
    with cuda_stub.installed(dev):
        mod = tilelang.compile((ROOT / "benchmarks" / "hcliff11.tile").read_text())
        for bm, smem in ((32, 64 * KiB), (128, 0)):
            for _ in range(2):
                s, x = DevArray.zeros((8192,), np.float32), DevArray.zeros((bm, 8192), np.float32)
                mod.col_sum[bm, 128](P(s, [128]), x).sync()
                launch = dev.ctx.d.launches[-1]  # (function, grid x, y, z, threads, shared memory, ..)
                assert launch[1] == 64 and launch[5] == smem, (bm, launch)
