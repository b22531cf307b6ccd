"""`lift.default_warps`: a kernel that names no warps gets more than 4 where its largest tile would give a thread
more than 64 elements (rows of 32,768 as one [1, 32768] tile spilled 864 bytes at 4 warps, none at 16:
`benchmarks/cliffs.py`); kernels with a hint, an `mma`, `min_blocks`/`max_blocks`, a cluster or a walk keep theirs.
The row kernels run in llsim at their new warps against the interpreter."""

from __future__ import annotations

import numpy as np
import pytest
from llsim import SimDevice

import tilelang
from tilelang import driver
from tilelang.backend import lower_gpu

SOFTMAX = """
HINT
kernel fn softmax_rows<const N: i32>(y: &mut Tensor<f32, [1, N]>, x: &Tensor<f32, [?, N]>) {
    let t = x.load_like(y);
    let e = exp(t - t.max(1).reshape([1, 1]));
    y.store(e / e.sum(1).reshape([1, 1]));
}
"""
LAYERNORM = """
kernel fn layernorm<const BM: i32, const N: i32>(y: &mut Tensor<f32, [BM, N]>, x: &Tensor<f32, [?, N]>,
                                                 w: &Tensor<f32, [N]>, eps: f32) {
    let t = x.load_like(y);
    let mean = t.sum(1).reshape([BM, 1]) / (N as f32);
    let d = t - mean;
    let var = (d * d).sum(1).reshape([BM, 1]) / (N as f32);
    y.store(d * rsqrt(var + eps) * w.partition([N]).load([0]).reshape([1, N]));
}
"""


def _softmax(n: int, hint: str = ""):  # type: ignore[no-untyped-def]
    src = SOFTMAX.replace("HINT", hint)
    main = f"fn main() {{ let x = zeros::<f32>([2, {n}]); let mut y = zeros::<f32>([2, {n}]); softmax_rows(y.partition([1, {n}]), &x).sync(); }}\n"
    return src, driver.compile(src + main, "ir").output[0]


@pytest.mark.parametrize(("n", "hint", "warps"), [(4096, "", 4), (8192, "", 4), (16384, "", 8), (32768, "", 16),
                                                   (1 << 16, "", 32), (1 << 17, "", 32),
                                                   (32768, "#[hints(num_warps = 4)]", 4),
                                                   (32768, "#[hints(min_blocks = 2)]", 4)])
def test_the_warps_follow_the_largest_tile(n: int, hint: str, warps: int) -> None:
    _src, k = _softmax(n, hint)
    assert lower_gpu(k, "sm_90a").num_warps == warps


def test_a_kernel_with_an_mma_keeps_its_warps() -> None:
    src = """
kernel fn g<const B: i32>(c: &mut Tensor<f32, [B, B]>, a: &Tensor<f16, [?, ?]>) {
    c.store(mma(a.partition([B, B]).load([0, 0]), a.partition([B, B]).load([0, 0]), zeros::<f32>([B, B])));
}
fn main() { let a = zeros::<f16>([128, 128]); let mut c = zeros::<f32>([128, 128]); g(c.partition([128, 128]), &a).sync(); }
"""
    assert lower_gpu(driver.compile(src, "ir").output[0], "sm_80").num_warps == 4


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_softmax_rows_at_eight_warps_in_the_simulator(arch: str) -> None:
    n = 16384
    src, k = _softmax(n)
    gk = lower_gpu(k, arch)
    assert gk.num_warps == 8
    x = (np.random.default_rng(3).standard_normal((2, n)) * 4).astype(np.float32)
    want = np.zeros_like(x)
    tilelang.compile(src).softmax_rows(tilelang.partition(want, [1, n]), x).sync()  # the interpreter
    got = np.full_like(x, np.nan)
    SimDevice(arch).run(k, (2,), [got, x])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-9)


def test_layernorm_rows_at_eight_warps_in_the_simulator() -> None:
    bm, n, m = 4, 4096, 6  # the last block partial
    main = (f"fn main() {{ let x = zeros::<f32>([{m}, {n}]); let w = zeros::<f32>([{n}]);"
            f" let mut y = zeros::<f32>([{m}, {n}]); layernorm(y.partition([{bm}, {n}]), &x, &w, 1e-5).sync(); }}\n")
    k = driver.compile(LAYERNORM + main, "ir").output[0]
    assert lower_gpu(k, "sm_90a").num_warps == 8
    rng = np.random.default_rng(4)
    x = (rng.standard_normal((m, n)) * 2 + 0.5).astype(np.float32)
    w = (rng.random(n) + 0.5).astype(np.float32)
    want = np.zeros_like(x)
    tilelang.compile(LAYERNORM).layernorm(tilelang.partition(want, [bm, n]), x, w, np.float32(1e-5)).sync()
    got = np.full_like(x, np.nan)
    SimDevice("sm_90a").run(k, (2,), [got, x, w, np.float32(1e-5)])
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)
