"""GEMM on the GPU against the interpreter, on fresh random inputs.

Every tile configuration and dtype the backend has a path for (the Hopper
TMA + wgmma pipeline where the tensors allow it, the same pipeline with the
register-copy producer where they do not),
at shapes that are multiples of the tile, that are not (in each dimension),
with K smaller than one tile, and with one row or one column. The output is
poisoned with NaN first, so an element no block writes fails. Kernels are
called through the Python API on PyTorch CUDA tensors (GPU) and NumPy arrays
(the interpreter). Marked `gpu`.

Also, without a GPU: the Hopper kernels assemble with ptxas for sm_90a, with
no spills, and contain what the path promises (TMA copies, wgmma, setmaxnreg).
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from gemm_cases import GemmConfig
from ptxas_report import assemble

CONFIGS = [
    GemmConfig(128, 256, 64, warps=8, stages=4),  # the big Hopper tile
    GemmConfig(128, 256, 64, trans_b=True, warps=8, stages=4),  # a linear layer, B stored [N, K]
    GemmConfig(128, 128, 64, dtype="bf16", out="bf16", warps=8),
    GemmConfig(128, 128, 64, dtype="bf16", out="f32", trans_b=True),
    GemmConfig(64, 64, 32, out="f32"),  # examples/gemm.tile's tile, unhinted
    GemmConfig(64, 128, 16),  # 32-byte swizzle
    GemmConfig(256, 128, 64, warps=8),
]

SHAPES = [
    (256, 512, 256),  # multiples of every tile
    (200, 336, 208),  # edges in M and N, K not a multiple of BK (TMA path: dims % 16 == 0)
    (129, 16, 48),  # K smaller than one tile, N smaller than BN
    (1, 272, 64),  # one row
    (77, 1, 35),  # one column, nothing aligned (the register-copy producer)
    (70, 130, 9),  # odd everything (the register-copy producer)
    (301, 263, 197),  # odd everything, several k-tiles and blocks (an 8191^3-like launch)
]


def _module(cfg: GemmConfig):  # type: ignore[no-untyped-def]
    import tilelang

    return tilelang.compile(cfg.source())


def _np_dtype(name: str):  # type: ignore[no-untyped-def]
    return {"f16": np.float16, "bf16": np.float32, "f32": np.float32}[name]


def _round_bf16(x: np.ndarray) -> np.ndarray:
    from tilelang.interp.numeric import round_bf16

    return np.asarray(round_bf16(x.astype(np.float32)), dtype=np.float32)


@pytest.mark.gpu
@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: c.name)
def test_gemm_gpu_matches_interpreter(cfg: GemmConfig) -> None:
    torch = pytest.importorskip("torch")
    import tilelang

    mod = _module(cfg)
    tdt = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}
    seed = int(np.random.default_rng().integers(1 << 30))  # fresh inputs each run, the seed in a failure
    rng = np.random.default_rng(seed)
    for M, N, K in SHAPES:
        a = rng.standard_normal((M, K)).astype(np.float32)
        b = rng.standard_normal((N, K) if cfg.trans_b else (K, N)).astype(np.float32)
        if cfg.dtype == "bf16":
            a, b = _round_bf16(a), _round_bf16(b)
        else:
            a, b = a.astype(np.float16), b.astype(np.float16)
        # the interpreter
        c_cpu = np.full((M, N), np.nan, dtype=_np_dtype(cfg.out))
        mod.gemm[cfg.bm, cfg.bn, cfg.bk](tilelang.partition(c_cpu, [cfg.bm, cfg.bn]), a, b).sync()
        # the GPU, on torch tensors in place
        ta = torch.tensor(a.astype(np.float32), device="cuda").to(tdt[cfg.dtype])
        tb = torch.tensor(b.astype(np.float32), device="cuda").to(tdt[cfg.dtype])
        tc = torch.full((M, N), float("nan"), device="cuda", dtype=tdt[cfg.out])
        mod.gemm[cfg.bm, cfg.bn, cfg.bk](tilelang.partition(tc, [cfg.bm, cfg.bn]), ta, tb).sync()
        got = tc.float().cpu().numpy().astype(np.float64)
        want = c_cpu.astype(np.float64)
        assert not np.isnan(got).any(), f"{cfg.name} {M}x{N}x{K}: unwritten elements (seed {seed})"
        tol = {"f32": 1e-3, "f16": 2e-2, "bf16": 5e-2}[cfg.out]
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(1.0, np.sqrt(K) / 4),
                                   err_msg=f"{cfg.name} at {M}x{N}x{K} (seed {seed})")


def _ptx(cfg: GemmConfig) -> tuple[str, str]:
    from tilelang import driver

    src = cfg.source() + (
        f"\nfn main() {{ let a = zeros::<{cfg.dtype}>([8, 8]); let b = zeros::<{cfg.dtype}>([8, 8]);"
        f" let mut o = zeros::<{cfg.out}>([8, 8]);"
        f" gemm::<{cfg.bm}, {cfg.bn}, {cfg.bk}>(o.partition([{cfg.bm}, {cfg.bn}]), &a, &b).sync(); }}\n")
    gpu = driver.compile(src, "gpu", options=driver.Options(arch="sm_90a"))
    ptx = driver.compile(src, "ptx", options=driver.Options(arch="sm_90a"))
    assert gpu.ok and ptx.ok
    return driver.format_output("gpu", gpu), ptx.output[0].text


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: c.name)
def test_hopper_gemm_ptx(cfg: GemmConfig) -> None:

    gpu, ptx = _ptx(cfg)
    # CHECK: the loop became the warp-specialised TMA + wgmma pipeline
    assert "warp_specialize" in gpu and "tma.load" in gpu and "wgmma" in gpu
    assert "cp.async.bulk.tensor.2d" in ptx
    assert re.search(r"wgmma\.mma_async\.sync\.aligned\.m64n\d+k16\.f32\." + cfg.dtype, ptx)
    assert "setmaxnreg.inc" in ptx and "setmaxnreg.dec" in ptx
    assert ("1, 1, 0, 0;" if cfg.trans_b else "1, 1, 0, 1;") in ptx  # B's major-ness, not a transpose
    r = assemble(ptx, "sm_90a")
    assert r.max_spill_stores == 0, r.text
    assert "ignored" not in r, r.text  # setmaxnreg honoured (no C7508)


def test_role_registers_never_exceed_what_the_producer_frees() -> None:
    from tilelang.backend.gpu.passes.pipeline import role_registers

    for C in (1, 2, 3, 4):
        for P in (40, 72, 96):
            threads = 128 * (C + 1)
            entry = min(248, 65536 // threads // 8 * 8)
            R = role_registers(C, P)
            assert R % 8 == 0 and R <= 240
            assert C * 128 * max(0, R - entry) <= 128 * (entry - P)
    assert role_registers(2, 40) == 232  # the configuration measured on the H200


def test_an_empty_operand_gets_no_tma_map() -> None:
    """An empty tensor's launch facts open no TMA or vector path (hrev round 7): they said 16-byte
    aligned with every dim a multiple of 16 (0 is), so a GEMM whose `a` is [64, 0] took the TMA
    producer (its PTX had `cp.async.bulk.tensor`; every TMA and vector path needs `aligned16`),
    and `tensor_map` made the 0 a 1: each row's first element was read from memory the tensor
    does not have (the pool block's stale bytes, other tensors' beyond it), where the
    interpreter reads zeros. The map itself now refuses a zero dimension.
    `benchmarks/hrev_empty_tma.tile` shows it on a GPU."""
    from tilelang.backend.facts import TensorFacts
    from tilelang.diagnostics.model import ICE
    from tilelang.runtime.cuda_module import tensor_map

    assert TensorFacts.of_launch(256, (64, 64)) == TensorFacts(True, (True, True))
    assert TensorFacts.of_launch(256, (64, 0)) == TensorFacts(False, (False, False))
    assert TensorFacts.of_launch(256, (0, 64), bf16_f32=True) == TensorFacts(False, (False, False), True)
    assert TensorFacts.of_launch(0, (0,)) == TensorFacts(False, (False,))
    with pytest.raises(ICE):
        tensor_map(None, 256, (64, 0), "f16", (64, 64), 128)


def test_unaligned_tensors_copy_through_registers() -> None:
    """A launch whose tensors TMA cannot describe (rows not a multiple of 16
    bytes) compiles a variant whose producer copies through registers into the
    same swizzled ring; the consumers are unchanged (wgmma)."""
    from tilelang import driver
    from tilelang.backend import compile_kernel
    from tilelang.backend.facts import TensorFacts

    cfg = CONFIGS[0]
    src = cfg.source() + (
        "\nfn main() { let a = zeros::<f16>([8, 8]); let b = zeros::<f16>([8, 8]);"
        " let mut o = zeros::<f16>([8, 8]);"
        f" gemm::<{cfg.bm}, {cfg.bn}, {cfg.bk}>(o.partition([{cfg.bm}, {cfg.bn}]), &a, &b).sync(); }}\n")
    k = driver.compile(src, "ir").output[0]
    facts = {p.name: TensorFacts(True, (True, False)) for p in k.tensor_params}
    ptx = compile_kernel(k, "sm_90a", facts).ptx
    assert "wgmma.mma_async" in ptx and "cp.async.bulk.tensor" not in ptx
    assert "fence.proxy.async.shared::cta" in ptx and "st.shared.b32" in ptx  # column pairs
    # one operand aligned, the other not: TMA for one, registers for the other
    facts["a"] = TensorFacts(True, (True, True))
    gpu = driver.format_output("gpu", driver.compile(src, "gpu", options=driver.Options(arch="sm_90a")))
    del gpu
    from tilelang.backend import lower_gpu
    from tilelang.backend.gpu.printer import print_gpu_kernel

    text = print_gpu_kernel(lower_gpu(k, "sm_90a", facts))
    assert "tma.load @a.tma0" in text and "copy_to_shared @b" in text
    assert "mbarrier.alloc count 5" in text  # the TMA arrival + one per producer warp


def test_unaligned_tensors_keep_the_mma_sync_path_when_asked(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """TILEC_COPY_PRODUCER=0 opts out of the register-copy producer."""
    monkeypatch.setenv("TILEC_COPY_PRODUCER", "0")
    from tilelang import driver
    from tilelang.backend import compile_kernel
    from tilelang.backend.facts import TensorFacts

    cfg = CONFIGS[0]
    src = cfg.source() + (
        "\nfn main() { let a = zeros::<f16>([8, 8]); let b = zeros::<f16>([8, 8]);"
        " let mut o = zeros::<f16>([8, 8]);"
        f" gemm::<{cfg.bm}, {cfg.bn}, {cfg.bk}>(o.partition([{cfg.bm}, {cfg.bn}]), &a, &b).sync(); }}\n")
    k = driver.compile(src, "ir").output[0]
    facts = {p.name: TensorFacts(True, (True, False)) for p in k.tensor_params}
    ptx = compile_kernel(k, "sm_90a", facts).ptx
    assert "wgmma" not in ptx and "mma.sync.aligned.m16n8k16" in ptx
