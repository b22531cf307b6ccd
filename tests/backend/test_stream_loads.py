"""The `stream_loads` pass (`passes/stream_loads.py`, `codegen/ring.py`): in a
kernel hinted `stages = S`, a loop's loads go through per-thread cp.async
rings in shared memory, S - 1 iterations ahead, with no barrier.

Without a GPU: the GPU IR shows the ring (copies in the prologue and the
body, reads at the top of the body, waits without a barrier) exactly where
the load is eligible, and the emitted kernel runs in `llsim` (which lands a
cp.async only at the wait_group that retires its group and raises `Race` on
any access to a slot a copy is still writing) against the interpreter: edge
tiles, fewer iterations than stages, no iteration at all. A wait one group
too late is caught. The PTX assembles with ptxas (no spills, LDGSTS in the
SASS when nvdisasm is around). On the GPU (marked `gpu`): the same kernels
against the interpreter.
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from ptxas_report import assemble

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "backend"))

from llsim import Race, SimDevice  # noqa: E402

import tilelang  # noqa: E402
from tilelang.backend import emit_ptx, lower_gpu  # noqa: E402
from tilelang.backend.facts import TensorFacts  # noqa: E402
from tilelang.backend.gpu.passes import stream_loads  # noqa: E402
from tilelang.backend.gpu.printer import print_gpu_kernel  # noqa: E402

P = tilelang.partition

SRC = """
// each block sums its rows of x over every column tile: a stream of loads
#[hints(num_warps = 4, stages = STAGES)]
kernel fn rowsum<const BM: i32, const BK: i32>(o: &mut Tensor<f32, [BM, 1]>, x: &Tensor<f16, [?, ?]>) {
    let px = x.partition([BM, BK]);
    let mut acc = zeros::<f32>([BM, BK]);
    for j in 0..px.num_tiles(1) {
        acc = acc + (px.load([block_id(0), j]) as f32);
    }
    o.store(acc.sum(1).reshape([BM, 1]));
}

// the loaded tile leaves its iteration (carried): not streamed
#[hints(num_warps = 4, stages = STAGES)]
kernel fn last_tile<const BM: i32, const BK: i32>(o: &mut Tensor<f16, [BM, BK]>, x: &Tensor<f16, [?, ?]>) {
    let px = x.partition([BM, BK]);
    let mut t = zeros::<f16>([BM, BK]);
    for j in 0..px.num_tiles(1) {
        t = px.load([block_id(0), j]);
    }
    o.store(t);
}
"""


def _module(stages: int | None):  # type: ignore[no-untyped-def]
    src = SRC.replace("STAGES", str(stages)) if stages else SRC.replace(", stages = STAGES", "")
    return tilelang.compile(src)


def _rowsum(stages: int | None, rows: int, cols: int, seed: int = 0):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, cols)).astype(np.float16)
    o = np.zeros((rows, 1), np.float32)
    return _module(stages).rowsum[32, 64](P(o, [32, 1]), x), x


def _gpu_ir(op, cols_div16: bool = True) -> str:  # type: ignore[no-untyped-def]
    kir = op._plan.kir
    facts = {p.name: TensorFacts(True, (True, cols_div16) if p.name == "x" else (True, True))
             for p in kir.tensor_params}
    return print_gpu_kernel(lower_gpu(kir, "sm_90", facts))


def test_the_ring_in_the_gpu_ir() -> None:
    op, _ = _rowsum(3, 64, 256)
    text = _gpu_ir(op)
    pro, loop = text.split(" = for ")
    loop = loop.split("\n  }")[0]
    # two iterations issued before the loop, one a iteration in it, S = 3 stages
    assert pro.count("cp.async.own @x[") == 2 and pro.count("cp.async.commit") == 2
    assert "smem.alloc : f16[3, 2048]" in pro  # 128 threads x 2 chunks of 16 bytes a stage
    assert loop.count("cp.async.own @x[") == 1 and "ring.read" in loop
    assert "cp.async.wait 1\n" in loop and "barrier" not in loop and "load @x" not in loop
    assert "cp.async.wait 0\n" in text.split("\n  }")[-1] or text.rstrip().count("cp.async.wait 0") == 1
    # unhinted, unaligned (columns not a multiple of 16) or carried: a plain load
    assert "ring" not in _gpu_ir(_rowsum(None, 64, 256)[0])
    assert "ring" not in _gpu_ir(op, cols_div16=False) and "load @x" in _gpu_ir(op, cols_div16=False)
    t = np.zeros((32, 64), np.float16)
    carried = _module(3).last_tile[32, 64](P(t, [32, 64]), np.zeros((32, 256), np.float16))
    assert "ring" not in _gpu_ir(carried)
    # the rings fit the shared memory: a hint past it is lowered, not refused
    big = _gpu_ir(_rowsum(200, 64, 256)[0])
    stages = int(big.split("smem.alloc : f16[")[1].split(",")[0])
    assert 2 <= stages < 200 and stages * 2048 * 2 <= stream_loads.HOPPER_SMEM


def _simulate_then_interpret(op, grid):  # type: ignore[no-untyped-def]
    copies = [np.array(h) for h in op._hosts]
    SimDevice("sm_90").run(op._plan.kir, grid, op._kernel_args(copies))
    op.sync()
    return copies[0], op._hosts[0]


@pytest.mark.parametrize(("stages", "cols"), [(3, 208), (4, 64), (2, 256), (4, 0), (8, 130)])
def test_ring_in_the_simulator(stages: int, cols: int) -> None:
    # 208: the last column tile half past the edge (zero-filled chunks); 64: one
    # iteration for three stages in flight; 0: no iteration; 130: not a multiple
    # of 16, so a plain load (the pass declines)
    op, x = _rowsum(stages, 64, cols, seed=cols)
    sim, want = _simulate_then_interpret(op, (2,))
    np.testing.assert_allclose(sim, want, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(want[:, 0], x.astype(np.float32).sum(1), rtol=1e-2, atol=1e-2)


def test_a_late_wait_is_a_race(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # one group too many left pending: iteration i reads its slots before they land
    real = stream_loads._rewrite

    def late(k, b, loop, S):  # type: ignore[no-untyped-def]
        import dataclasses

        from tilelang.backend.gpu import nodes as g
        from tilelang.ir import nodes as ir

        pre, rest = real(k, b, loop, S)
        fixed = []
        for op in rest:
            if isinstance(op, ir.For):
                ops = tuple(dataclasses.replace(x, pending=x.pending + 1) if isinstance(x, g.CpAsyncWait) else x
                            for x in op.body.ops)
                op = dataclasses.replace(op, body=ir.Region(op.body.args, ops))
            fixed.append(op)
        return pre, fixed

    monkeypatch.setattr(stream_loads, "_rewrite", late)
    op, _ = _rowsum(3, 64, 256)
    with pytest.raises(Race):
        _simulate_then_interpret(op, (2,))


def test_ring_ptx_assembles() -> None:
    if shutil.which("ptxas") is None:
        pytest.skip("no ptxas")
    op, _ = _rowsum(4, 64, 256)
    kir = op._plan.kir
    facts = {p.name: TensorFacts(True, (True, True)) for p in kir.tensor_params}
    ptx = emit_ptx(kir, "sm_90", facts)
    # 2 chunks a thread, copied in the 3 iterations before the loop and once in it;
    # each copy twice: the whole tile inside the tensor (16 bytes a chunk, no
    # per-chunk bounds test) and the edge tile (zero-fill past the edge)
    assert ptx.count("cp.async.cg.shared.global") == 16
    assert len(re.findall(r"cp\.async\.cg\.shared\.global \[[^]]+\], \[[^]]+\], 16, 16;", ptx)) == 8
    assert "bar.sync" not in re.split(r"cp\.async\.wait_group\s+2;", ptx)[1]
    r = assemble(ptx, "sm_90")
    assert r.max_spill_stores == 0, r.text


@pytest.mark.gpu
@pytest.mark.parametrize(("stages", "cols"), [(4, 208), (3, 4096), (2, 64)])
def test_ring_on_the_gpu(stages: int, cols: int) -> None:
    import tilelang.testing as tt

    rng = np.random.default_rng(cols)
    x = rng.standard_normal((96, cols)).astype(np.float16)
    o = np.zeros((96, 1), np.float32)
    tt.compare(_module(stages).rowsum[32, 64], P(o, [32, 1]), x, devices=("cpu", "gpu"), rtol=1e-4, atol=1e-3)


GEMV = """
// a GEMV's loop: the weight tile streams, the vector is loaded whole by
// every warp (replicated): only the weight may take a ring
#[hints(num_warps = 8, stages = ST, min_blocks = MB)]
kernel fn gemv<const BN: i32, const BK: i32, const ST: i32, const MB: i32>(
        y: &mut Tensor<f32, [BN]>, w: &Tensor<bf16, [?, ?]>, x: &Tensor<f32, [?]>) {
    let pw = w.partition([BN, BK]);
    let px = x.partition([BK]);
    let mut acc = zeros::<f32>([BN]);
    for k in 0..pw.num_tiles(1) {
        acc = acc + ((pw.load([block_id(0), k]) as f32) * px.load([k]).reshape([1, BK])).sum(1);
    }
    y.store(acc);
}
"""


def _gemv_ir(st: int, mb: int, bk: int = 512) -> str:
    y = np.zeros(16, np.float32)
    op = tilelang.compile(GEMV).gemv[8, bk, st, mb](P(y, [8]), np.zeros((16, 4096), np.float32),
                                                   np.zeros(4096, np.float32))
    op.discard()  # compiled, never run
    return _gpu_ir(op)


def test_a_gemv_streams_its_weights_not_its_vector() -> None:
    # `stages` from a const generic: 4 stages of the [8, 512] bf16 weight
    # tile (256 threads x 2 chunks of 16 bytes = 8 KB); the vector `x` stays
    # a register load (a ring would hold one copy of it a warp)
    text = _gemv_ir(4, 0)
    assert "smem.alloc : bf16[4, 4096]" in text and "cp.async.own @w[" in text
    assert "cp.async.own @x[" not in text and "load @x" in text
    # 0 from the generic: as if unhinted
    assert "ring" not in _gemv_ir(0, 0)
    # `min_blocks` blocks share the SM's shared memory: with 4 of them a
    # block keeps 228 KB / 4 - 1 KB, less 16 KB of scratch: 5 stages of
    # 8 KB, not the 20 asked (one block alone: 25)
    assert "smem.alloc : bf16[5, 4096]" in _gemv_ir(20, 4)
    assert "smem.alloc : bf16[20, 4096]" in _gemv_ir(20, 1)


GEMV4 = """
// a GEMV of 4 tokens as a user writes it: `mma` of an N = 4 tile, scalar FMAs (no pipeline takes it)
kernel fn gemv4<const BM: i32, const BK: i32>(y: &mut Tensor<f32, [BM, 4]>, w: &Tensor<f16, [?, ?]>,
                                              x: &Tensor<f16, [?, 4]>) {
    let pw = w.partition([BM, BK]);
    let px = x.partition([BK, 4]);
    let mut acc = zeros::<f32>([BM, 4]);
    for k in 0..pw.num_tiles(1) {
        acc = mma(pw.load([block_id(0), k]), px.load([k, 0]), acc);
    }
    y.store(acc);
}
"""

TAPS = """
// a loop of a constant trip count (a few taps): left to the code generator, never streamed unhinted
kernel fn taps<const BM: i32, const BK: i32>(o: &mut Tensor<f32, [BM, BK]>, x: &Tensor<f16, [?, ?]>) {
    let px = x.partition([BM, BK]);
    let mut acc = zeros::<f32>([BM, BK]);
    for j in 0..4 {
        acc = acc + (px.load([block_id(0), j]) as f32);
    }
    o.store(acc);
}
"""


@pytest.mark.parametrize("cols", [208, 64])
def test_an_unhinted_loop_streams_under_the_auto_switch(cols: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`TILEC_STREAM_AUTO=1` (hcliff11; the override of hstream's rule, `test_stream_rule.py`): a kernel with no
    hint at all streams its loops of a run-time trip count through rings of `AUTO_STAGES` (the hinted kernel's rings, the same ops), right in llsim
    (208 columns: the last tile half past the edge; 64: one iteration for two in flight); a loop of a constant trip
    count keeps its loads, and so does a kernel with hints (`num_warps`; a `stages` of 0 or below); a loop of a
    product of scalar FMAs (a 4-token GEMV's `mma`) streams its weights (not its vector, which every warp reads);
    unset, the first variant keeps its loads (`test_the_ring_in_the_gpu_ir`) and the launch decides."""
    monkeypatch.setenv("TILEC_STREAM_AUTO", "1")
    hinted = _rowsum(None, 64, cols)[0]
    assert "ring" not in _gpu_ir(hinted)  # `num_warps = 4`: a hinted kernel's loads stand
    hinted.discard()  # compiled, never run
    plain = tilelang.compile("\n".join(ln for ln in SRC.splitlines() if not ln.startswith("#[hints")))
    o, x = np.zeros((64, 1), np.float32), np.random.default_rng(cols).standard_normal((64, cols)).astype(np.float16)
    op = plain.rowsum[32, 64](P(o, [32, 1]), x)
    text = _gpu_ir(op)
    assert f"smem.alloc : f16[{stream_loads.AUTO_STAGES}, 2048]" in text and "load @x" not in text
    sim, want = _simulate_then_interpret(op, (2,))
    np.testing.assert_allclose(sim, want, rtol=1e-5, atol=1e-4)
    t = np.zeros((32, 64), np.float32)
    fixed = tilelang.compile(TAPS).taps[32, 64](P(t, [32, 64]), np.zeros((32, 256), np.float16))
    assert "ring" not in _gpu_ir(fixed) and "load @x" in _gpu_ir(fixed)
    fixed.discard()  # compiled, never run
    assert "ring" not in _gemv_ir(0, 0)  # a `stages` hint of 0 from a generic (std::llm's ST -1): none, as asked
    if cols != 208:
        return
    # a product of scalar FMAs in the loop (`mma` of N = 4): the FMA pipeline's rings take it (hcliff12: f16 inputs
    # widened after their shared-memory reads); without that pipeline, its weights streamed, the vector in registers
    rng = np.random.default_rng(cols)
    w, xv = rng.standard_normal((32, cols)).astype(np.float16), rng.standard_normal((cols, 4)).astype(np.float16)
    y = np.zeros((32, 4), np.float32)
    gv = tilelang.compile(GEMV4).gemv4[32, 64](P(y, [32, 4]), w, xv)
    assert "dot.fma.smem" in _gpu_ir(gv)
    monkeypatch.setenv("TILEC_FMA_PIPELINE", "0")
    text = _gpu_ir(gv)
    assert "cp.async.own @w[" in text and "cp.async.own @x[" not in text and "load @x" in text
    sim, want = _simulate_then_interpret(gv, (1,))
    np.testing.assert_allclose(sim, want, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(want, w.astype(np.float32) @ xv.astype(np.float32), rtol=1e-3, atol=1e-2)
    monkeypatch.setenv("TILEC_STREAM_AUTO", "yes")
    with pytest.raises(ValueError, match="TILEC_STREAM_AUTO"):
        stream_loads.auto()


@pytest.mark.gpu
@pytest.mark.parametrize("fma_pipeline", ["1", "0"])
def test_the_auto_switch_on_the_gpu(fma_pipeline: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`TILEC_STREAM_AUTO=1` on the card: the 4-token GEMV against the interpreter, past a partial last tile: through
    the FMA pipeline's rings (hcliff12's f16 inputs), and with `TILEC_FMA_PIPELINE=0` its weights streamed."""
    import tilelang.testing as tt

    monkeypatch.setenv("TILEC_STREAM_AUTO", "1")
    monkeypatch.setenv("TILEC_FMA_PIPELINE", fma_pipeline)
    rng = np.random.default_rng(4)
    w, xv = rng.standard_normal((96, 1040)).astype(np.float16), rng.standard_normal((1040, 4)).astype(np.float16)
    y = np.zeros((96, 4), np.float32)
    tt.compare(tilelang.compile(GEMV4 + f"// auto, pipeline {fma_pipeline}\n").gemv4[32, 64], P(y, [32, 4]), w, xv, devices=("cpu", "gpu"),
               rtol=1e-4, atol=1e-3)
