"""The sm_80 GEMM path (`passes/pipeline_sm80.py`, `codegen/sm80.py`): a
cp.async ring of shared buffers, ldmatrix (.trans for the MN-major B) and
mma.sync.m16n8k16 with the accumulator in registers.

Without a GPU: the emitted kernels run in `llsim` against NumPy (edges in
every dimension, K smaller than a tile, one row, one column, B transposed,
bf16, three stages); the simulator lands a cp.async only at the wait_group
that retires its group and raises `Race` on any access to shared memory a
copy is still writing, so a missing wait or a reused stage shows up. The
PTX assembles with ptxas for sm_80 without spills. On the GPU (marked
`gpu`): the path forced with TILEC_ARCH=sm_80 against the interpreter.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from gemm_cases import GemmConfig
from llsim import Race, SimDevice
from ptxas_report import assemble

from tilelang import driver
from tilelang.backend import lower_gpu
from tilelang.backend.facts import TensorFacts
from tilelang.backend.gpu.printer import print_gpu_kernel


def _source(cfg: GemmConfig) -> str:
    return cfg.source() + (
        f"\nfn main() {{ let a = zeros::<{cfg.dtype}>([8, 8]); let b = zeros::<{cfg.dtype}>([8, 8]);"
        f" let mut o = zeros::<{cfg.out}>([8, 8]);"
        f" gemm::<{cfg.bm}, {cfg.bn}, {cfg.bk}>(o.partition([{cfg.bm}, {cfg.bn}]), &a, &b).sync(); }}\n")


def _kernel(cfg: GemmConfig):  # type: ignore[no-untyped-def]
    return driver.compile(_source(cfg), "ir").output[0]


def _facts(*arrays: np.ndarray) -> dict[str, TensorFacts]:
    return {n: TensorFacts(True, tuple(d % 16 == 0 for d in x.shape)) for n, x in zip("cab", arrays, strict=True)}


def _run(cfg: GemmConfig, M: int, N: int, K: int, seed: int, arch: str = "sm_80") -> str:
    a, b, c = cfg.inputs(M, N, K, seed)
    k = _kernel(cfg)
    facts = _facts(c, a, b)
    text = print_gpu_kernel(lower_gpu(k, arch, facts))
    assert "dot.mma.sync.smem" in text and "cp.async.commit" in text, text
    SimDevice(arch).run(k, (-(-M // cfg.bm), -(-N // cfg.bn)), [c, a, b], facts)
    cfg.assert_product(a, b, c, seed)
    return text


SIM_CASES = [
    # (config, (M, N, K), copies: what the GPU IR must show)
    (GemmConfig(32, 32, 32, warps=4, out="f32"), (32, 32, 96), "cp.async @a"),  # 3 k-tiles through 4 stages
    (GemmConfig(32, 32, 32, warps=4, out="f16", stages=3), (40, 20, 64), "cp.async @a|copy.elements @b"),  # edges in M and N
    (GemmConfig(32, 32, 32, warps=4, out="f16", trans_b=True), (40, 33, 16), "cp.async @b"),  # B [N, K], K < BK
    (GemmConfig(32, 32, 16, warps=2, dtype="bf16", out="f32"), (1, 32, 40), "copy.elements @a"),  # one row, K % 16
    (GemmConfig(32, 32, 32, warps=4, out="f32"), (20, 1, 40), "copy.elements @b"),  # one column, nothing aligned
]


@pytest.mark.parametrize(("cfg", "shape", "copies"), SIM_CASES,
                         ids=["nn_4stages", "edges_3stages", "nt_k_small", "bf16_one_row", "one_column"])
def test_sm80_gemm_in_the_simulator(cfg: GemmConfig, shape, copies: str) -> None:  # type: ignore[no-untyped-def]
    text = _run(cfg, *shape, seed=int(np.random.default_rng().integers(1 << 30)))
    assert all(c in text for c in copies.split("|"))


@pytest.mark.parametrize("where", ["before the loop", "inside the mma"])
def test_the_simulator_sees_a_missing_wait(monkeypatch, where: str) -> None:  # type: ignore[no-untyped-def]
    """Waiting for one group fewer, before the loop (stage 0's first
    fragments) or before the mma's last k-step (the next stage's first
    fragments), reads a stage whose copies are in flight."""
    import dataclasses

    import tilelang.backend
    from tilelang.backend.gpu import nodes as g
    from tilelang.backend.gpu.passes.rewrite import map_ops

    real = tilelang.backend.lower_gpu

    def late(*args, **kw):  # type: ignore[no-untyped-def]
        def fn(op: object) -> list[object]:
            if isinstance(op, g.CpAsyncWait) and where == "before the loop" and op.pending:
                return [dataclasses.replace(op, pending=op.pending + 1)]
            if isinstance(op, g.SmemDot) and where == "inside the mma":
                assert op.prefetch >= 0
                return [dataclasses.replace(op, prefetch=op.prefetch + 1)]
            return [op]

        k = real(*args, **kw)
        return dataclasses.replace(k, body=map_ops(k.body, fn))

    monkeypatch.setattr(tilelang.backend, "lower_gpu", late)
    with pytest.raises(Race, match="in flight"):
        _run(GemmConfig(32, 32, 32, warps=4, out="f32", stages=3), 32, 32, 96, seed=1)


def test_pipeline_sm80_ir() -> None:
    """The plan: a constant accumulator starts in the mma layout, prologue of
    stages-1 groups and wait(stages-2) + barrier before the loop, the copies
    of iteration i+stages-1 at the top of the body, then the mma, which waits
    (stages-2) + barrier before its last k-step and prefetches the next
    stage's first fragments; a final wait(0)."""
    k = _kernel(GemmConfig(128, 128, 32, warps=8, stages=3))
    text = print_gpu_kernel(lower_gpu(k, "sm_80", {n: TensorFacts.assumed(2) for n in "abc"}))
    assert "#mma_tile<m16n8, warps=2x4>" in text and "convert_layout" not in text
    head, body = text[:text.index(" for ")], text[text.index(" for "):]
    assert head.count("cp.async.commit") == 2 and head.rindex("cp.async.commit") < head.index("cp.async.wait 1, barrier")
    assert body.index("cp.async @a") < body.index("dot.mma.sync.smem")
    assert "(prefetch: cp.async.wait 1, barrier)" in body and "cp.async.wait 1" not in body.replace("(prefetch: cp", "")
    assert "cp.async.wait 0, barrier" in body[body.index("yield"):]
    assert "f16[3, 128, 32] #smem_tile" in text and "f16[3, 32, 128] #smem_tile" in text


def test_pipeline_sm80_targets() -> None:
    """Every target without wgmma takes the sm_80 path; sm_90a keeps the Hopper one."""
    k = _kernel(GemmConfig(128, 128, 32, warps=8))
    facts = {n: TensorFacts.assumed(2) for n in "abc"}
    for arch in ("sm_80", "sm_86", "sm_89", "sm_90"):
        assert "dot.mma.sync.smem" in print_gpu_kernel(lower_gpu(k, arch, facts)), arch
    text = print_gpu_kernel(lower_gpu(k, "sm_90a", facts))
    assert "dot.mma.sync.smem" not in text and "wgmma" in text
    # stages: unhinted 4; a hint is honoured; a ring that does not fit the
    # target's shared memory (A100 163 KB, Hopper 227 KB) is cut to what fits
    assert "f16[4, 128, 32]" in print_gpu_kernel(lower_gpu(k, "sm_80", facts))
    assert "f16[3, 128, 32]" in print_gpu_kernel(lower_gpu(_kernel(GemmConfig(128, 128, 32, stages=3)), "sm_80", facts))
    big = _kernel(GemmConfig(128, 128, 128, warps=8, stages=4))  # 64 KB a stage
    assert "f16[2, 128, 128]" in print_gpu_kernel(lower_gpu(big, "sm_80", facts))
    assert "f16[3, 128, 128]" in print_gpu_kernel(lower_gpu(big, "sm_90", facts))


def test_sm80_default_warps() -> None:
    """Unhinted, a warp holds a 64x64 block of the accumulator (4 to 8 warps);
    a `num_warps` hint is honoured."""
    facts = {n: TensorFacts.assumed(2) for n in "abc"}
    for cfg, warps, grid in [(GemmConfig(128, 256, 64), 8, "2x4"), (GemmConfig(256, 128, 32), 8, "4x2"),
                             (GemmConfig(128, 128, 32), 4, "2x2"), (GemmConfig(64, 64, 32), 4, "2x2"),
                             (GemmConfig(128, 256, 64, warps=4), 4, "1x4")]:
        gk = lower_gpu(_kernel(cfg), "sm_80", facts)
        assert gk.num_warps == warps and f"warps={grid}>" in print_gpu_kernel(gk), cfg.name


def test_sm80_fallbacks() -> None:
    """What the path does not take keeps the generic mma.sync code: a tile
    the warps cannot split into 16x16 blocks, f32 operands."""
    facts = {n: TensorFacts.assumed(2) for n in "abc"}
    odd = print_gpu_kernel(lower_gpu(_kernel(GemmConfig(16, 16, 16, warps=4)), "sm_80", facts))
    assert "dot.mma.sync.smem" not in odd and "dot.mma.sync" in odd


SM80_CONFIGS = [
    GemmConfig(128, 128, 32, warps=8),
    GemmConfig(128, 256, 32, warps=8, stages=3, trans_b=True),
    GemmConfig(64, 64, 32, dtype="bf16", out="f32"),  # unhinted: 4 warps, 4 stages
]


@pytest.mark.parametrize("cfg", SM80_CONFIGS, ids=lambda c: c.name)
def test_sm80_ptx(cfg: GemmConfig) -> None:

    ptx = driver.compile(_source(cfg), "ptx", options=driver.Options(arch="sm_80")).output[0].text
    # CHECK: 16-byte cp.async with a source size (zero fill), groups, ldmatrix, mma.sync
    assert re.search(r"cp\.async\.cg\.shared\.global(\.L2::\w+)?\s*\[%rd?\d+(\+\d+)?\], \[%rd\d+\], 16, %r\d+;", ptx)
    assert "cp.async.commit_group" in ptx and re.search(r"cp\.async\.wait_group\s+[12];", ptx)
    assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in ptx
    assert ("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16" in ptx) != cfg.trans_b
    assert f"mma.sync.aligned.m16n8k16.row.col.f32.{cfg.dtype}.{cfg.dtype}.f32" in ptx
    r = assemble(ptx, "sm_80")
    assert r.max_spill_stores == 0, r.text


GPU_SHAPES = [
    (256, 512, 256),  # multiples of every tile
    (200, 336, 208),  # edges in M and N, K not a multiple of BK
    (129, 16, 24),  # K smaller than one tile, N smaller than BN
    (1, 272, 64),  # one row
    (77, 1, 35),  # one column, nothing aligned: element copies
]


@pytest.mark.gpu
@pytest.mark.parametrize("cfg", SM80_CONFIGS, ids=lambda c: c.name)
def test_sm80_gemm_gpu_matches_interpreter(cfg: GemmConfig, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The sm_80 path forced on whatever GPU runs the tests (TILEC_ARCH=sm_80)."""
    torch = pytest.importorskip("torch")
    import tilelang
    from tilelang.api.engines import _device

    # The process's device is made (if it was not yet) BEFORE TILEC_ARCH is set,
    # so that the arch monkeypatch restores is its own (sm_90a on a Hopper card):
    # made under the variable, it kept sm_80 after this test and every later
    # test of the process ran on the sm_80 path (PDL launches failed).
    dev = _device("cuda:0")
    native = dev.arch
    monkeypatch.setenv("TILEC_ARCH", "sm_80")  # devices made from now on
    monkeypatch.setattr(dev, "arch", "sm_80")
    mod = tilelang.compile(cfg.source())
    tdt = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}
    np_out = {"f16": np.float16, "bf16": np.float32, "f32": np.float32}[cfg.out]
    rng = np.random.default_rng()
    for M, N, K in GPU_SHAPES:
        seed = int(rng.integers(1 << 30))
        a, b, _ = cfg.inputs(M, N, K, seed)
        c_cpu = np.full((M, N), np.nan, dtype=np_out)
        mod.gemm[cfg.bm, cfg.bn, cfg.bk](tilelang.partition(c_cpu, [cfg.bm, cfg.bn]), a, b).sync()
        ta = torch.tensor(a.astype(np.float32), device="cuda").to(tdt[cfg.dtype])
        tb = torch.tensor(b.astype(np.float32), device="cuda").to(tdt[cfg.dtype])
        tc = torch.full((M, N), float("nan"), device="cuda", dtype=tdt[cfg.out])
        mod.gemm[cfg.bm, cfg.bn, cfg.bk](tilelang.partition(tc, [cfg.bm, cfg.bn]), ta, tb).sync()
        got = tc.float().cpu().numpy().astype(np.float64)
        assert not np.isnan(got).any(), f"{cfg.name} {M}x{N}x{K}: unwritten elements"
        tol = {"f32": 1e-3, "f16": 2e-2, "bf16": 5e-2}[cfg.out]
        np.testing.assert_allclose(got, c_cpu.astype(np.float64), rtol=tol, atol=tol * max(1.0, np.sqrt(K) / 4),
                                   err_msg=f"{cfg.name} at {M}x{N}x{K} (seed {seed})")
    monkeypatch.undo()
    assert _device("cuda:0").arch == native  # the device is the process's own again


EPILOGUES = """
kernel fn add<const BM: i32, const BN: i32, const BK: i32>(y: &mut Tensor<f32, [BM, BN]>,
                                                          x: &Tensor<f16, [?, ?]>, w: &Tensor<f16, [?, ?]>) {
    let px = x.partition([BM, BK]);
    let pw = w.partition([BN, BK]);
    let mut acc = y.load();
    for k in 0..px.num_tiles(1) {
        acc = mma(px.load([block_id(0), k]), pw.load([block_id(1), k]).transpose(), acc);
    }
    y.store(acc * 2.0 + 1.0);
}
kernel fn rowsum<const BM: i32, const BN: i32, const BK: i32>(s: &mut Tensor<f32, [BM]>,
                                                             x: &Tensor<f16, [?, ?]>, w: &Tensor<f16, [?, ?]>) {
    let px = x.partition([BM, BK]);
    let pw = w.partition([BK, BN]);
    let mut acc = zeros::<f32>([BM, BN]);
    for k in 0..px.num_tiles(1) {
        acc = mma(px.load([block_id(0), k]), pw.load([k, 0]), acc);
    }
    s.store(acc.sum(1));
}
fn main() {
    let x = zeros::<f16>([8, 8]); let w = zeros::<f16>([8, 8]);
    let mut y = zeros::<f32>([8, 8]); let mut s = zeros::<f32>([8]);
    add::<32, 32, 32>(y.partition([32, 32]), &x, &w).sync();
    rowsum::<32, 32, 32>(s.partition([32]), &x, &w).sync();
}
"""


def test_sm80_epilogues_in_the_simulator() -> None:
    """The accumulator starting from a load (a conversion into the mma layout,
    scratch memory left beside the ring), an element-wise epilogue, and a row
    reduction of the accumulator: all read it in its own layout."""
    ks = {k.name: k for k in driver.compile(EPILOGUES, "ir").output}
    seed = int(np.random.default_rng().integers(1 << 30))  # fresh inputs each run, the seed in a failure
    rng = np.random.default_rng(seed)
    M, N, K = 20, 30, 48
    x = rng.standard_normal((M, K)).astype(np.float16)
    w = rng.standard_normal((N, K)).astype(np.float16)
    y0 = rng.standard_normal((M, N)).astype(np.float32)
    y = y0.copy()
    facts = _facts(y, x, w)
    facts = {"y": facts["c"], "x": facts["a"], "w": facts["b"]}
    assert "dot.mma.sync.smem" in print_gpu_kernel(lower_gpu(ks["add"], "sm_80", facts))
    SimDevice("sm_80").run(ks["add"], (1, 1), [y, x, w], facts)
    want = (y0 + x.astype(np.float64) @ w.astype(np.float64).T) * 2 + 1
    np.testing.assert_allclose(y, want, rtol=1e-3, atol=1e-2, err_msg=f"seed {seed}")
    w2 = rng.standard_normal((K, 32)).astype(np.float16)
    s = np.full((M,), np.nan, np.float32)
    facts = {"s": TensorFacts(True, (False,)), "x": facts["x"], "w": TensorFacts(True, (True, True))}
    assert "dot.mma.sync.smem" in print_gpu_kernel(lower_gpu(ks["rowsum"], "sm_80", facts))
    SimDevice("sm_80").run(ks["rowsum"], (1,), [s, x, w2], facts)
    np.testing.assert_allclose(s, (x.astype(np.float64) @ w2.astype(np.float64)).sum(1), rtol=1e-3, atol=1e-2,
                               err_msg=f"seed {seed}")
