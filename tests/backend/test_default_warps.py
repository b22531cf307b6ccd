"""`lift.default_warps` (opt-in, `TILEC_DEFAULT_WARPS=1`; these tests set it): a kernel that names no warps gets more than 4 where its largest tile would give a thread
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

@pytest.fixture(autouse=True)
def _on(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TILEC_DEFAULT_WARPS", "1")


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


def test_off_by_default_every_kernel_keeps_four_warps(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Off (the default since 2026-12-06 09:00): rows of 32,768 at 4 warps, as before; and p17_half_math's
    [64, 1024] f32 kernel, which the switch gave 32 warps and 384 KB of shared memory on the GPU, compiles
    for sm_90a within the GPU's 227 KB."""
    from pathlib import Path

    from tilelang.backend import compile_kernel

    monkeypatch.setenv("TILEC_DEFAULT_WARPS", "0")
    _src, k = _softmax(32768)
    assert lower_gpu(k, "sm_90a").num_warps == 4
    prog = Path(__file__).parent / "programs" / "independent" / "p17_half_math.tile"
    for kern in driver.compile(prog.read_text(), "ir").output:
        gk = lower_gpu(kern, "sm_90a")
        assert gk.num_warps == kern.num_warps
        ck = compile_kernel(kern, "sm_90a")
        assert ck.abi.smem_bytes <= 227 * 1024, (kern.name, ck.abi.smem_bytes)


@pytest.mark.parametrize("warps", [4, 8])
def test_an_autotune_config_of_warps_is_what_runs(warps: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The tuner applies a config by `hinted_fields` (a 4 leaves the kernel as it is): the kernel runs with the
    config's warps, which the switch (on) overrode for a big tile (tests/api/test_ecosystem_gpu's 10 timings)."""
    import dataclasses

    from tilelang.tuner.space import hinted_fields

    monkeypatch.setenv("TILEC_DEFAULT_WARPS", "0")
    _src, k = _softmax(32768)
    tuned = dataclasses.replace(k, **hinted_fields(k, {"num_warps": warps}))
    assert lower_gpu(tuned, "sm_90a").num_warps == warps
