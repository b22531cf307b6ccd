"""The Hopper GEMM path (TMA, mbarrier ring, warp roles, wgmma, the staging
epilogue) run on the CPU by `llsim`, against NumPy: the TMA path, transposed
B, bf16, edges in every dimension, K smaller than a tile, and the
register-copy producer (tensors TMA cannot describe; more odd shapes,
checked exactly against the interpreter, in `test_odd_gemm.py`). The simulator's wgmma reads shared memory through the descriptor
encoding the H200 validated for the TMA path (`llsim._operand`), so these
tests check everything around it: the ring's barrier protocol (a deadlock
raises), the producers' shared layouts, the accumulator layout and the
epilogue. Kept small: one Python generator per thread."""

from __future__ import annotations

import numpy as np
import pytest
from gemm_cases import GemmConfig
from llsim import SimDevice

from tilelang import driver
from tilelang.backend.facts import TensorFacts


def _kernel(cfg: GemmConfig):  # type: ignore[no-untyped-def]
    src = cfg.source() + (
        f"\nfn main() {{ let a = zeros::<{cfg.dtype}>([8, 8]); let b = zeros::<{cfg.dtype}>([8, 8]);"
        f" let mut o = zeros::<{cfg.out}>([8, 8]);"
        f" gemm::<{cfg.bm}, {cfg.bn}, {cfg.bk}>(o.partition([{cfg.bm}, {cfg.bn}]), &a, &b).sync(); }}\n")
    return driver.compile(src, "ir").output[0]


def _facts(shape_a, shape_b, shape_c):  # type: ignore[no-untyped-def]
    def f(shape):  # type: ignore[no-untyped-def]
        return TensorFacts(True, tuple(d % 16 == 0 for d in shape))

    return {"a": f(shape_a), "b": f(shape_b), "c": f(shape_c)}


def _run(cfg: GemmConfig, M: int, N: int, K: int, seed: int, copy: bool = False, monkeypatch=None):  # type: ignore[no-untyped-def]
    a, b, c = cfg.inputs(M, N, K, seed)
    k = _kernel(cfg)
    facts = _facts(a.shape, b.shape, c.shape)
    if copy:
        facts["a"] = TensorFacts(True, (True, False))
    if copy == "both":
        facts["b"] = TensorFacts(False, (False, False))
    from tilelang.backend import lower_gpu
    from tilelang.backend.gpu.printer import print_gpu_kernel

    text = print_gpu_kernel(lower_gpu(k, "sm_90a", facts))
    assert "warp_specialize" in text and "wgmma" in text
    if copy:
        assert "copy_to_shared @a" in text
    if copy == "both":
        assert "copy_to_shared @b" in text and "tma.load" not in text
    grid = (-(-M // cfg.bm), -(-N // cfg.bn))
    SimDevice("sm_90a").run(k, grid, [c, a, b], facts)
    cfg.assert_product(a, b, c, seed)


@pytest.mark.parametrize(("cfg", "shape"), [
    (GemmConfig(64, 64, 32, out="f32"), (64, 64, 64)),  # 64-byte swizzled A, MN-major B
    (GemmConfig(64, 64, 32, out="f32"), (48, 80, 96)),  # edges in M and N, 3 k-tiles through 4 stages
    (GemmConfig(64, 64, 64, out="f16", trans_b=True), (64, 48, 16)),  # B stored [N, K], K < BK
    (GemmConfig(64, 64, 64, dtype="bf16", out="f32"), (64, 64, 128)),
    (GemmConfig(64, 128, 16, out="f32"), (64, 128, 48)),  # B in two 64-column slabs (LBO), 32-byte swizzled A
    (GemmConfig(128, 64, 32, warps=8, out="f16"), (100, 64, 64)),  # two consumer warpgroups, f16 staging
    (GemmConfig(64, 96, 32, trans_b=True, out="f32"), (64, 90, 64)),  # a tile dim that is not a power of two
], ids=["f16_nn_64x64x32", "edges", "nt_k_small", "bf16", "two_slabs", "two_groups", "n96"])
def test_hopper_gemm_in_the_simulator(cfg: GemmConfig, shape) -> None:  # type: ignore[no-untyped-def]
    M, N, K = shape
    _run(cfg, M, N, K, seed=int(np.random.default_rng().integers(1 << 30)))


def test_copy_producer_in_the_simulator() -> None:
    """A copied through registers (its rows not a multiple of 16 bytes in the
    facts), B by TMA: both land in the layout wgmma reads, and the full
    barrier counts the TMA arrival and one per producer warp."""
    _run(GemmConfig(64, 64, 32, out="f32"), 40, 64, 70, seed=3, copy=True)


def test_copy_producer_alone_in_the_simulator() -> None:
    """Both operands copied through registers (an 8191^3-like launch), B
    transposed, two consumer warpgroups: only the producer warps arrive."""
    _run(GemmConfig(128, 64, 64, trans_b=True, warps=8, out="f16"), 130, 70, 33, seed=4, copy="both")


def test_a_warpgroup_s_rows_move_the_descriptor_s_32_bit_address() -> None:
    """Two consumer warpgroups: the second's A descriptor starts at its first row. That offset goes into the
    descriptor's 32-bit address field (`HopperOps.warpgroup_rows`, `_desc`'s `extra`), never a 64-bit add to the
    whole descriptor: `add i64 desc, zext off` is the form ptxas 13.0 miscompiled in the column split's B
    descriptors (the layout's high word built as 0: `tests/ptxas_report.hgmma_desc_faults`, hwg)."""
    import re

    from tilelang.backend import emit_llvm_text, lower_gpu

    cfg = GemmConfig(128, 64, 32, warps=8, out="f16")
    gk = lower_gpu(_kernel(cfg), "sm_90a", _facts((128, 64), (64, 64), (128, 64)))
    text = emit_llvm_text(gk, gk.facts)[0]
    # a descriptor: the address or-ed with its layout fields (bits 32 and up: SBO, the swizzle)
    descs = set(re.findall(r"(%[\w.]+) = or i64 %[\w.]+, (\d{10,})", text))
    assert descs and all(int(c) >> 32 for _, c in descs)
    names = {n for n, _ in descs}
    # (a k-step's constant, `add i64 desc, 128`, is the wgmma's own advance along K: not a run-time value)
    adds = [m.group(0) for m in re.finditer(r"= add i64 (%[\w.]+), %[\w.]+", text) if m.group(1) in names]
    assert not adds, adds
    assert re.search(r"lshr i32 %[\w.]+, 7", text)  # (the warpgroup: the role's thread / 128)
