"""2-byte `mma` inputs on the FMA pipeline (`passes/pipeline_fma.py`): an f16 / bf16 product that no tensor-core
instruction takes (a GEMV of a few tokens: N = 4, below mma.sync's 8; K steps of 8) goes through the cp.async rings as
f32's does, each value widened to f32 after its shared-memory read, a [K, 4] operand's rows of 8 bytes
copied whole by one `cp.async.ca` each (hcliff12; call 38 timed the 4-token f16 GEMV at 0.20x torch on the FMA
loop with no pipeline).

The f16 cases run in `llsim` and in the interpreter on small integers (every product and partial sum exact in
f32, whatever the order), so the two agree bit for bit; the output starts at 7, so an element no thread stores
shows. Shapes are odd where the case says so (an edge tile of W's rows, a K tail read as zeros)."""

from __future__ import annotations

import numpy as np
import pytest
from llsim import SimDevice

import tilelang
from tilelang import driver
from tilelang import partition as P
from tilelang.backend import compile_kernel, lower_gpu
from tilelang.backend.facts import TensorFacts
from tilelang.backend.gpu.printer import print_gpu_kernel

SRC = """
kernel fn gemv<const BM: i32, const BK: i32, const NB: i32>(y: &mut Tensor<f32, [BM, NB]>, w: &Tensor<DT, [?, ?]>,
                                                            x: &Tensor<DT, [?, NB]>) {
    let pw = w.partition([BM, BK]);
    let px = x.partition([BK, NB]);
    let mut acc = zeros::<f32>([BM, NB]);
    for k in 0..pw.num_tiles(1) {
        acc = mma(pw.load([block_id(0), k]), px.load([k, 0]), acc);
    }
    y.store(acc);
}
"""


def _facts(kir, shapes: dict[str, tuple[int, ...]] | None = None, **extra) -> dict[str, TensorFacts]:  # type: ignore[no-untyped-def]
    """Aligned tensors; each dim a multiple of 16 where `shapes` says so (unknown shapes: every dim)."""
    return {p.name: TensorFacts(True, tuple(d % 16 == 0 for d in shapes[p.name]) if shapes else (True, True), **extra)
            for p in kir.tensor_params}


@pytest.mark.parametrize(("bm", "bk", "nb", "M", "K", "warps", "parts"), [
    (64, 16, 4, 100, 40, 4, 4),  # 8-byte rows of x, 4 warps splitting K (`pipeline_fma._split`); an edge tile of
    # rows, a K tail (2.5 tiles)
    (32, 8, 8, 40, 32, 2, 1),  # 16-byte rows, K steps of 8 (no tensor-core shape: K % 16; too few to split in 4)
    pytest.param(32, 16, 4, 45, 40, 4, 4, marks=pytest.mark.heavy),  # 4 warps of 1 x 4, each a quarter of K
    pytest.param(64, 64, 4, 64, 192, 4, 4, marks=pytest.mark.heavy),  # call 38's tile
], ids=["nb4_edges", "nb8_k8", "nb4_one_warp", "call38_tile"])
def test_a_few_token_f16_gemv_pipelines_and_agrees(bm: int, bk: int, nb: int, M: int, K: int, warps: int,
                                                   parts: int) -> None:
    rng = np.random.default_rng(M + K)
    w = rng.integers(-4, 5, (M, K)).astype(np.float16)
    x = rng.integers(-4, 5, (K, nb)).astype(np.float16)
    y = np.full((M, nb), 7, np.float32)
    op = tilelang.compile(SRC.replace("DT", "f16")).gemv[bm, bk, nb](P(y, [bm, nb]), w, x)
    kir = op._plan.kir
    facts = _facts(kir, {"y": y.shape, "w": w.shape, "x": x.shape})  # (K = 40: W's rows by element copies)
    text = print_gpu_kernel(lower_gpu(kir, "sm_90a", facts))
    assert "dot.fma.smem" in text and "cp.async" in text, text
    assert f"warps {warps} " in text and (f"in {parts} parts" in text) == (parts > 1), text
    sim = [np.array(h) for h in op._hosts]
    SimDevice("sm_90a").run(kir, (-(-M // bm),), op._kernel_args(sim), facts)
    op.sync()  # the interpreter
    np.testing.assert_array_equal(sim[0], op._hosts[0])
    np.testing.assert_array_equal(sim[0], w.astype(np.float32) @ x.astype(np.float32))
    ptx = compile_kernel(kir, "sm_90a", facts).ptx
    if nb == 4:  # x's 8-byte rows: one cp.async.ca of 8 bytes each (cg copies 16 only)
        assert "cp.async.ca.shared.global" in ptx and ", 8, " in ptx, ptx


def test_bf16_pipelines_only_in_bf16_memory() -> None:
    """bf16 inputs take the rings where the tensors hold bf16 bits (llsim gives them such memory: the same values
    as the interpreter's, bit for bit); not where their memory holds f32 values (a NumPy array's on the GPU,
    `TensorFacts.bf16_f32`): the copies would move 4-byte values into 2-byte slots."""
    rng = np.random.default_rng(3)
    w = rng.integers(-4, 5, (70, 40)).astype(np.float32)
    x = rng.integers(-4, 5, (40, 4)).astype(np.float32)
    y = np.full((70, 4), 7, np.float32)
    op = tilelang.compile(SRC.replace("DT", "bf16")).gemv[64, 16, 4](P(y, [64, 4]), w, x)
    kir = op._plan.kir
    assert "dot.fma.smem" in print_gpu_kernel(lower_gpu(kir, "sm_90a", _facts(kir)))
    f32_memory = print_gpu_kernel(lower_gpu(kir, "sm_90a", _facts(kir, bf16_f32=True)))
    assert "dot.fma " in f32_memory and "dot.fma.smem" not in f32_memory
    sim = [np.array(h) for h in op._hosts]
    SimDevice("sm_90a").run(kir, (2,), op._kernel_args(sim), _facts(kir))
    op.sync()  # the interpreter
    np.testing.assert_array_equal(sim[0], op._hosts[0])
    np.testing.assert_array_equal(sim[0], w @ x)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_ptxas_assembles_both_types_without_spills(arch: str, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Call 38's tile ([64, 64] of W, 4 tokens) in f16 and bf16 (bf16 memory: `cvt` of bfloat, sm_80's too)."""
    from ptxas_report import assemble

    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    for dt, np_dt in (("f16", np.float16), ("bf16", np.float32)):
        op = tilelang.compile(SRC.replace("DT", dt)).gemv[64, 64, 4](
            P(np.zeros((64, 4), np.float32), [64, 4]), np.zeros((64, 64), np_dt), np.zeros((64, 4), np_dt))
        op.discard()  # compiled, never run
        ptx = compile_kernel(op._plan.kir, arch, _facts(op._plan.kir)).ptx
        assert "cp.async.ca.shared.global" in ptx and "cp.async.cg.shared.global" in ptx, ptx
        r = assemble(ptx, arch)
        assert r.max_spill_stores == 0, r.text


def test_a_one_column_gemv_copies_its_column_as_one_run() -> None:
    """A GEMV of one f16 column ([K, 1]: an element a copy would be 2 bytes) copies the column as one run of
    16-byte chunks (`pipeline_fma._flat`, hgemv) where a K step is whole chunks; a step of 4 rows keeps the FMA
    loop."""
    for bk, piped in ((16, True), (4, False)):
        main = ("\nfn main() { let w = zeros::<f16>([64, 64]); let x = zeros::<f16>([64, 1]);"
                f" let mut y = zeros::<f32>([64, 1]); gemv::<32, {bk}, 1>(y.partition([32, 1]), &w, &x).sync(); }}\n")
        result = driver.compile(SRC.replace("DT", "f16") + main, "ir")
        assert result.ok, result.diagnostics
        kir = next(k for k in result.output if k.name == "gemv")
        text = print_gpu_kernel(lower_gpu(kir, "sm_90a", _facts(kir)))
        assert ("dot.fma.smem" in text and "cp.async.flat" in text) == piped, text
        assert ("dot.fma " in text) == (not piped), text


@pytest.mark.gpu
@pytest.mark.parametrize(("bm", "bk", "M", "K"), [(64, 64, 200, 1000), (32, 16, 96, 520)],
                         ids=["rows64_4_parts", "rows32_4_parts"])
def test_the_half_pipeline_on_the_gpu(bm: int, bk: int, M: int, K: int) -> None:
    """The 4-token f16 GEMV on the card (default switches: the FMA pipeline) against the interpreter, an edge tile
    of rows and a K tail; small integers, so the sums are exact on both."""
    import tilelang.testing as tt

    rng = np.random.default_rng(M)
    w = rng.integers(-4, 5, (M, K)).astype(np.float16)
    x = rng.integers(-4, 5, (K, 4)).astype(np.float16)
    y = np.zeros((M, 4), np.float32)
    tt.compare(tilelang.compile(SRC.replace("DT", "f16")).gemv[bm, bk, 4], P(y, [bm, 4]), w, x, devices=("cpu", "gpu"),
               rtol=0.0, atol=0.0)
