"""`lift.default_warps` (on by default; `TILEC_DEFAULT_WARPS=0` turns it off): a kernel that names no warps gets
more than 4 where its largest tile would give a thread more than 64 elements (rows of 32,768 as one [1, 32768]
tile spilled 864 bytes at 4 warps, none at 16: `benchmarks/cliffs.py`); kernels with a hint (also an autotune
configuration's, at any value), an `mma`, `min_blocks`/`max_blocks`, a cluster or a walk keep theirs; where the
raised count's code needs more shared memory than the GPU has, `backend.lower_gpu` halves it (toward the
kernel's own). The row kernels run in llsim at their new warps against the interpreter."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from llsim import SimDevice

import tilelang
from tilelang import driver
from tilelang.backend import lower_gpu

@pytest.fixture(autouse=True)
def _default(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("TILEC_DEFAULT_WARPS", raising=False)  # the default: on


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


def test_switched_off_every_kernel_keeps_four_warps(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TILEC_DEFAULT_WARPS", "0")
    _src, k = _softmax(32768)
    assert lower_gpu(k, "sm_90a").num_warps == 4


P17 = Path(__file__).parent / "programs" / "independent" / "p17_half_math.tile"


def test_raised_warps_that_overflow_shared_memory_are_halved() -> None:
    """p17_half_math's [64, 1024] f32 kernel `w` (a `cumsum` and an `argmax` over axis 0: their scratch grows with
    the warps, 48 KB at 4): the raise to 32 needed 393,216 bytes of shared memory, a launch error on the GPU
    (2026-12-06 call 8); it lowers at 16 now (196,608 bytes) and compiles within the GPU's 227 KB."""
    from tilelang.backend import _target, compile_kernel
    from tilelang.backend.gpu.passes.lift import default_warps
    from tilelang.backend.llvm import CodegenError, emit_llvm_text

    kernels = {k.name: k for k in driver.compile(P17.read_text(), "ir").output}
    w = kernels["w"]
    assert default_warps(w) == 32  # what the raise asks for
    raised = lower_gpu(w, "sm_90a")
    assert (raised.num_warps, kernels["h"].num_warps, lower_gpu(kernels["h"], "sm_90a").num_warps) == (16, 4, 4)
    from tilelang.backend.gpu.passes import lower_to_gpu

    with pytest.raises(CodegenError, match="393216 bytes of shared memory"):  # the count asked for: too much
        compile_kernel(lower_to_gpu(w, "sm_90a", {}), "sm_90a")
    tgt = _target("sm_90a")
    for kern in kernels.values():  # (the ABI as compile_kernel emits it; its PTX of `w`, 1.6 MB of LLVM: 3 CPU-s cold)
        gk = lower_gpu(kern, tgt)
        abi = emit_llvm_text(gk, gk.facts, tgt.pdl_mode, tgt.trace, tgt.tma_prefetch, "", tgt.l2_evict,
                             tgt.ldg_early)[1]
        assert abi.smem_bytes <= 227 * 1024, (kern.name, abi.smem_bytes)
        assert abi.num_threads == 32 * gk.num_warps


@pytest.mark.heavy  # (the default test above checks the same ABI on the LLVM emission; NVPTX: 3 CPU-s cold)
def test_p17s_kernels_compile_to_ptx_within_the_shared_memory() -> None:
    """p17_half_math's kernels through compile_kernel (NVPTX) for sm_90a: the ABI within the GPU's 227 KB."""
    from tilelang.backend import compile_kernel

    for kern in driver.compile(P17.read_text(), "ir").output:
        ck = compile_kernel(kern, "sm_90a")
        assert ".entry" in ck.ptx and ck.abi.smem_bytes <= 227 * 1024, (kern.name, ck.abi.smem_bytes)
        assert ck.abi.num_threads == 32 * lower_gpu(kern, "sm_90a").num_warps


def _p17_at(bm: int, n: int) -> str:
    """p17_half_math's program with its `w` launched on a [bm, n] tile (as p17 itself: one tile)."""
    src = P17.read_text()
    for old, new in (("w::<64, 1024>", f"w::<{bm}, {n}>"), ("[64, 1024]", f"[{bm}, {n}]"),
                     ("[1, 1024]", f"[1, {n}]"), ("[64, 1]", f"[{bm}, 1]")):
        assert old in src, old
        src = src.replace(old, new)
    return src


# p17's own w (64 x 1024, raised to 32 warps, halved to 16: 12.9 CPU-s, the module's 84 %) is `heavy`: the default
# case runs the same halving on a tile half its size (16 x 2048: raised to 16, its scan scratch of 16 x 2048 x 12
# bytes past the 227 KB, halved to 8), the same kernel body (cumsum and argmax over axis 0 combined across the
# warps through the scratch, a sum over rows) at other generics; p17's own 16 warps lower and fit the shared
# memory in test_raised_warps_that_overflow_shared_memory_are_halved above.
@pytest.mark.parametrize(("bm", "n", "raised", "warps"), [
    (16, 2048, 16, 8),
    pytest.param(64, 1024, 32, 16, marks=pytest.mark.heavy),
], ids=["halved_16x2048", "p17s_64x1024"])
def test_p17s_halved_kernel_in_the_simulator(bm: int, n: int, raised: int, warps: int) -> None:
    """p17's `w` at its halved warps in llsim against the interpreter (cumsum, argmax and sum over rows), for
    sm_90a and sm_80: one simulation for each distinct LLVM module and launch shape the two lower to (today one:
    the simulator reads nothing else, `llsim._launch_key`; as parameters the two ran 8 s each on two workers)."""
    from tilelang.backend.gpu.passes.lift import default_warps

    src = _p17_at(bm, n)
    w = next(k for k in driver.compile(src, "ir").output if k.name == "w")
    assert default_warps(w) == raised  # what the raise asks for: its scratch does not fit, so it is halved
    x = np.random.default_rng(5).standard_normal((bm, n)).astype(np.float32)
    outs = [np.zeros((1, n), np.float32), np.zeros((1, n), np.int32), np.zeros((bm, 1), np.float32)]
    m = tilelang.compile(src)
    m.w[bm, n](*(tilelang.partition(o, list(o.shape)) for o in outs), x).sync()  # the interpreter
    from tilelang.backend.facts import TensorFacts

    # the facts `SimDevice.run` gives a launch (it compiled and parsed the kernel without them, then again with)
    facts = {p.name: TensorFacts(True, tuple(d % 16 == 0 for d in a.shape)) for p, a in zip(w.params, [*outs, x],
                                                                                                 strict=True)}
    simulated = set()
    for arch in ("sm_90a", "sm_80"):
        prog, abi, gk = SimDevice(arch).compile(w, facts)
        assert gk.num_warps == warps, arch
        launch = (prog.source, abi.num_threads, abi.smem_bytes)
        if launch in simulated:
            continue
        simulated.add(launch)
        got = [np.full_like(o, -7) for o in outs]
        SimDevice(arch).run(w, (1,), [*got, x], facts)
        np.testing.assert_allclose(got[0], outs[0], rtol=1e-5, atol=1e-4, err_msg=arch)
        np.testing.assert_array_equal(got[1], outs[1], err_msg=arch)
        np.testing.assert_allclose(got[2], outs[2], rtol=1e-5, atol=1e-4, err_msg=arch)


@pytest.mark.parametrize("warps", [4, 8])
def test_an_autotune_config_of_warps_is_what_runs(warps: int) -> None:
    """The tuner applies a config by `hinted_fields`, which marks its `num_warps` given also at the default's 4:
    the kernel runs with the config's warps, which the raise (then opt-in) overrode for a big tile (GPU suite
    2026-12-06 call 8: tests/api/test_ecosystem_gpu's tuner timed 10 configurations where 8 ran)."""
    import dataclasses

    from tilelang.tuner.space import hinted_fields

    _src, k = _softmax(32768)
    assert lower_gpu(k, "sm_90a").num_warps == 16  # no config: raised
    tuned = dataclasses.replace(k, **hinted_fields(k, {"num_warps": warps}))
    assert lower_gpu(tuned, "sm_90a").num_warps == warps


ROWSUM = """
#[autotune(BR = [16, 8192], BC = [64], num_warps = [4, 8], key = [x])]
kernel fn rowsum<const BR: i32, const BC: i32>(out: &mut Tensor<f32, [BR]>, x: &Tensor<f32, [?, ?]>) {
    let px = x.partition([BR, BC]);
    let mut acc = zeros::<f32>([BR]);
    for j in 0..px.num_tiles(1) {
        acc = acc + px.load([block_id(0), j]).sum(1);
    }
    out.store(acc);
}
"""


@pytest.mark.parametrize("warps", [4, 8])
def test_an_autotune_config_too_big_for_its_warps_is_still_refused(warps: int) -> None:
    """tests/api/test_ecosystem_gpu's tuned rowsum on the CPU: BR = 8192, BC = 64 puts 2,048-4,096 elements in a
    thread at the configuration's 4 or 8 warps (E0603, a skipped candidate); the raise must not run it at 32."""
    import dataclasses

    from tilelang.backend import compile_kernel
    from tilelang.backend.llvm import CodegenError
    from tilelang.tuner.space import hinted_fields

    main = "fn main() { let x = zeros::<f32>([8192, 64]); let mut o = zeros::<f32>([8192]); rowsum::<8192, 64>(o.partition([8192]), &x).sync(); }"
    (k,) = driver.compile(ROWSUM + main, "ir").output
    assert lower_gpu(k, "sm_90a").num_warps == 32  # as no configuration gives warps: raised
    tuned = dataclasses.replace(k, **hinted_fields(k, {"BR": 8192, "BC": 64, "num_warps": warps}))
    assert lower_gpu(tuned, "sm_90a").num_warps == warps
    with pytest.raises(CodegenError, match="in each of the block's"):
        compile_kernel(tuned, "sm_90a")
