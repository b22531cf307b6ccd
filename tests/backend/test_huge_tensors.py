"""Tensors of more than 2^31 elements on the GPU code paths (hrev round 30): a dimension is below 2^31, but a
tile's offset into a tensor of several dimensions (row * row length + column) is not, so every path must form it
in 64 bits: the plain loads and stores (`codegen/memory.address`), sm_80's cp.async rings, Hopper's TMA copies
and wgmma GEMM epilogue, the FMA pipeline of a GEMV (its flat one-token copy too) and the attention pipeline's
3-D K/V. Each case runs in llsim the one block whose tile lies past element 2^31 (`llsim.ONLY_BLOCKS`) over
tensors made by `llsim.huge_array` (an anonymous mmap: only the pages written or read take memory, 4 GiB of
address space each), on small integers (exact in any order), against NumPy's product of the same rows. An
offset wrapped in `i32` reads another row, or (negative) fails llsim's bounds test. Only the sm_90a GEMM runs in
the default suite (~0.5 s); the rest are `heavy`."""

from __future__ import annotations

import llsim
import numpy as np
import pytest
from gemm_cases import GemmConfig
from llsim import SimDevice, huge_array

from tilelang import driver
from tilelang.backend import lower_gpu
from tilelang.backend.facts import TensorFacts
from tilelang.backend.gpu.printer import print_gpu_kernel


@pytest.fixture
def one_block(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """`set_block((x, y, z))`: only that block of a launch runs."""
    monkeypatch.setenv("LLSIM_MEMO", "0")
    return lambda b: monkeypatch.setattr(llsim, "ONLY_BLOCKS", {b})


def _facts(**shapes: tuple[int, ...]) -> dict[str, TensorFacts]:
    return {n: TensorFacts(True, tuple(d % 16 == 0 for d in s)) for n, s in shapes.items()}


GEMV = """
kernel fn gemv<const BM: i32, const BK: i32, const NB: i32>(y: &mut Tensor<f32, [BM, NB]>, w: &Tensor<f16, [?, ?]>,
                                                            x: &Tensor<f16, [?, NB]>) {
    let pw = w.partition([BM, BK]);
    let px = x.partition([BK, NB]);
    let mut acc = zeros::<f32>([BM, NB]);
    for k in 0..pw.num_tiles(1) {
        acc = mma(pw.load([block_id(0), k]), px.load([k, 0]), acc);
    }
    y.store(acc);
}
fn main() { let w = zeros::<f16>([8, 8]); let x = zeros::<f16>([8, TOKENS]); let mut y = zeros::<f32>([8, TOKENS]);
  gemv::<64, 64, TOKENS>(y.partition([64, TOKENS]), &w, &x).sync(); }
"""


@pytest.mark.heavy
@pytest.mark.parametrize("tokens", [1, 4])
def test_a_gemv_of_a_matrix_past_2_31_elements(tokens: int, one_block) -> None:  # type: ignore[no-untyped-def]
    """The FMA pipeline (split-K among warps, x widened once; one token's [K, 1] column copied flat) over the
    last 64 rows of w [2^23 + 64, 256]: rows past element 2^31."""
    kernel = driver.compile(GEMV.replace("TOKENS", str(tokens)), "ir").output[0]
    K, bm = 256, 64
    M = (1 << 31) // K + bm
    w = huge_array((M, K), np.float16)
    rng = np.random.default_rng(tokens)
    w[M - bm:] = rng.integers(-3, 4, (bm, K))
    x = rng.integers(-3, 4, (K, tokens)).astype(np.float16)
    y = huge_array((M, tokens), np.float32)
    y[M - bm:] = np.nan
    facts = _facts(w=w.shape, x=x.shape, y=y.shape)
    assert "fma.parts.sum" in print_gpu_kernel(lower_gpu(kernel, "sm_90a", facts))  # (the GEMV's path)
    gx = -(-M // bm)
    one_block((gx - 1, 0, 0))
    SimDevice("sm_90a").run(kernel, (gx,), [y, w, x], facts)
    np.testing.assert_array_equal(y[M - bm:], w[M - bm:].astype(np.float32) @ x.astype(np.float32))


@pytest.mark.parametrize(("arch", "trans_b"), [pytest.param("sm_80", False, marks=pytest.mark.heavy), ("sm_90a", False),
                                               pytest.param("sm_90a", True, marks=pytest.mark.heavy)])
def test_a_gemm_whose_tiles_lie_past_2_31_elements(arch: str, trans_b: bool, one_block) -> None:  # type: ignore[no-untyped-def]
    """C = A @ B in 64 x 64 x 32 tiles, the last row block of A [2^25 + 64, 64] and C [2^25 + 64, 64] (cp.async
    rings and `mma.sync` on sm_80; TMA, wgmma and its epilogue's stores on sm_90a)."""
    bm = bn = 64
    cfg = GemmConfig(bm, bn, 32, "f16", "f32", trans_b=trans_b)
    main = ("fn main() { let a = zeros::<f16>([8, 8]); let b = zeros::<f16>([8, 8]); let mut c = zeros::<f32>([8, 8]);"
            " gemm::<64, 64, 32>(c.partition([64, 64]), &a, &b).sync(); }\n")
    kernel = driver.compile(cfg.source() + main, "ir").output[0]
    M, N, K = (1 << 25) + bm, bn, 64
    rng = np.random.default_rng(7)
    a, c = huge_array((M, K), np.float16), huge_array((M, N), np.float32)
    a[M - bm:] = rng.integers(-3, 4, (bm, K))
    c[M - bm:] = np.nan
    b = rng.integers(-3, 4, (N, K) if trans_b else (K, N)).astype(np.float16)
    one_block((M // bm - 1, 0, 0))
    SimDevice(arch).run(kernel, (M // bm, 1), [c, a, b], _facts(a=a.shape, b=b.shape, c=c.shape))
    bb = b.astype(np.float32).T if trans_b else b.astype(np.float32)
    np.testing.assert_array_equal(c[M - bm:], a[M - bm:].astype(np.float32) @ bb)


@pytest.mark.heavy
def test_attention_over_heads_past_2_31_elements(one_block, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """`std::attention::flash_attention` (the Hopper pipeline, TMA over 3-D q, k, v) on the last of 2^18 + 2
    heads of 128 x 64: its planes start past element 2^31. Small integers for q and k, so the scores are exact."""
    monkeypatch.setenv("TILEC_ATTN_SPLIT", "0")  # (the split kernel's records are a launch's grid's worth)
    src = ("use std::attention::flash_attention;\nfn main() { let q = zeros::<f16>([2, 64, 64]);"
           " let mut o = zeros::<f16>([2, 64, 64]);"
           " flash_attention::<f16, 128, 64, 64>(o.partition([1, 128, 64]), &q, &q, &q, 0.1, false).sync(); }\n")
    kernel = driver.compile(src, "ir").output[0]
    S, D = 128, 64
    BH = (1 << 31) // (S * D) + 2
    q, k, v, o = (huge_array((BH, S, D), np.float16) for _ in range(4))
    rng = np.random.default_rng(3)
    for t in (q, k, v):
        t[-1] = rng.integers(-2, 3, (S, D))
    o[-1] = np.nan
    one_block((BH - 1, 0, 0))
    SimDevice("sm_90a").run(kernel, (BH, 1), [o, q, k, v, np.float32(0.125), False],
                            {n: TensorFacts(True, (False, False, True)) for n in "oqkv"})
    s = q[-1].astype(np.float64) @ k[-1].astype(np.float64).T * 0.125
    p = np.exp(s - s.max(1, keepdims=True))
    ref = (p / p.sum(1, keepdims=True)) @ v[-1].astype(np.float64)
    np.testing.assert_allclose(o[-1].astype(np.float64), ref, atol=3e-3, rtol=1e-2)
