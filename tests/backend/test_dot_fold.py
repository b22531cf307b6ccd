"""`mma_select.fold_dot_adds`: a loop accumulation spelled `acc = acc + dot(a, b)` becomes `acc = mma(a, b, acc)`,
the form the Hopper GEMM pipeline (and sm_80's register accumulator) takes; before, it ran on mma.sync with no
pipeline (`benchmarks/cliffs.py`'s `gemm_dot`). Checked in llsim (sm_90a and sm_80) against the interpreter, which
runs the program as written; and where the fold must not happen (an accumulator starting at -0.0, another use of
the accumulator or of the product). hattn (2026-12-06): `acc * y + dot(a, b)` folds too (the online softmax's
`acc * alpha + dot(p, v)`), exact because the interpreter's product is never -0."""

from __future__ import annotations

import numpy as np
import pytest
from llsim import SimDevice

import tilelang
from tilelang import driver
from tilelang.backend import lower_gpu
from tilelang.backend.facts import TensorFacts
from tilelang.backend.gpu.printer import print_gpu_kernel

SRC = """
kernel fn gemm<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<f32, [BM, BN]>,
                                                           a: &Tensor<f16, [?, ?]>, b: &Tensor<f16, [?, ?]>) {
    let pa = a.partition([BM, BK]);
    let pb = b.partition([BK, BN]);
    let mut acc = full::<f32>([BM, BN], INIT);
    for k in 0..pa.num_tiles(1) {
        acc = SUM;
    }
    c.store(acc);
}
"""
DOT = "acc + dot(pa.load([block_id(0), k]), pb.load([k, block_id(1)]))"


def _kernel(init: str = "0.0", body: str = DOT):  # type: ignore[no-untyped-def]
    src = SRC.replace("INIT", init).replace("SUM", body)
    main = ("fn main() { let a = zeros::<f16>([8, 8]); let b = zeros::<f16>([8, 8]); let mut c = zeros::<f32>([8, 8]);"
            " gemm::<64, 64, 32>(c.partition([64, 64]), &a, &b).sync(); }\n")
    return src, driver.compile(src + main, "ir").output[0]


def _facts(*shapes):  # type: ignore[no-untyped-def]
    return {n: TensorFacts(True, tuple(d % 16 == 0 for d in s)) for n, s in zip("cab", shapes, strict=True)}


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
@pytest.mark.parametrize("init", ["0.0", "1.5"])
def test_acc_plus_dot_runs_as_an_accumulating_mma(arch: str, init: str) -> None:
    src, k = _kernel(init)
    M, N, K = 80, 64, 96  # an edge in M, 3 k-tiles
    facts = _facts((M, N), (M, K), (K, N))
    text = print_gpu_kernel(lower_gpu(k, arch, facts))
    assert not [x for x in text.splitlines() if "= add" in x and "f32[64, 64]" in x]  # no tile add left
    if arch == "sm_90a":  # the Hopper pipeline
        assert "warp_specialize" in text and "= wgmma %smem_a" in text
    else:  # the sm_80 ring, the accumulator in registers
        assert "cp.async.commit" in text and "#mma_tile" in text
    rng = np.random.default_rng(4)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    want = np.zeros((M, N), np.float32)
    tilelang.compile(src).gemm[64, 64, 32](tilelang.partition(want, [64, 64]), a, b).sync()  # the interpreter
    c = np.full((M, N), np.nan, np.float32)
    SimDevice(arch).run(k, (-(-M // 64), 1), [c, a, b], facts)
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-4)
    ref = a.astype(np.float64) @ b.astype(np.float64) + float(init)
    np.testing.assert_allclose(want, ref, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize(("init", "body"), [
    ("-0.0", DOT),  # acc + (+0) is not acc for acc = -0: the two spellings could differ in a zero's sign
    ("0.0", "acc + dot(pa.load([block_id(0), k]), pb.load([k, block_id(1)])) + acc"),  # acc read twice
    ("0.0", "acc * acc + dot(pa.load([block_id(0), k]), pb.load([k, block_id(1)]))"),  # acc read twice
])
def test_no_fold_where_it_could_change_a_value(init: str, body: str) -> None:
    _src, k = _kernel(init, body)
    text = print_gpu_kernel(lower_gpu(k, "sm_90a", _facts((64, 64), (64, 64), (64, 64))))
    assert "warp_specialize" not in text and [x for x in text.splitlines() if "= add" in x and "f32[64, 64]" in x]


SCALED = "acc * 0.5 + dot(pa.load([block_id(0), k]), pb.load([k, block_id(1)]))"


def test_np_matmul_sums_from_plus_zero() -> None:
    """What makes `acc * y + dot(a, b)` -> `mma(a, b, acc * y)` exact although `acc * y` may be -0: the
    interpreter's product M (`interp.numeric.mma`: `np.matmul` + the accumulator) is never -0, so `M + 0` is M."""
    for n in (1, 16, 64):
        z = np.full((n, n), -0.0, np.float32)
        assert not np.signbit(np.matmul(z, np.ones((n, n), np.float32))).any()
        assert not np.signbit(np.matmul(np.ones((n, n), np.float32), z)).any()


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_a_rescaled_acc_plus_dot_runs_as_an_accumulating_mma(arch: str) -> None:
    """`acc = acc * 0.5 + dot(a, b)` (the online softmax's `acc * alpha + dot(p, v)`) becomes
    `mma(a, b, acc * 0.5)`: no tile add left (the GEMM pipelines take `mma(a, b, acc)` only: this loop keeps
    its path); llsim against the interpreter."""
    src, k = _kernel("1.5", SCALED)
    M, N, K = 80, 64, 96
    facts = _facts((M, N), (M, K), (K, N))
    text = print_gpu_kernel(lower_gpu(k, arch, facts))
    assert not [x for x in text.splitlines() if "= add" in x and "f32[64, 64]" in x]
    assert [x for x in text.splitlines() if "= mul" in x and "f32[64, 64]" in x]
    rng = np.random.default_rng(5)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    want = np.zeros((M, N), np.float32)
    tilelang.compile(src).gemm[64, 64, 32](tilelang.partition(want, [64, 64]), a, b).sync()
    c = np.full((M, N), np.nan, np.float32)
    SimDevice(arch).run(k, (-(-M // 64), 1), [c, a, b], facts)
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize(("bm", "bn", "d", "s"), [(64, 64, 64, 150), (128, 128, 128, 200)])
def test_the_attention_spelling_acc_times_alpha_plus_dot_takes_the_overlapped_loop(bm: int, bn: int, d: int,
                                                                                   s: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """cliffs.py's `attn_dot` (`acc = acc * alpha + dot(p as f16, v)`): folded, the attention pipeline runs its
    overlapped (D = 64) or rotated (D = 128) loop, S of the next block issued with P V of this one; unfolded it
    ran a product of zeros and an add a block in the serial schedule (0.70x SDPA on the H100)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import cliffs_cases

    from tilelang.backend import explain

    monkeypatch.setenv("TILEC_ATTN_SPLIT", "0")  # (the split's merge adds accumulators: one key loop here)
    src = cliffs_cases._elem(cliffs_cases.ATTN, "f16")
    main = (f"fn main() {{ let q = zeros::<f16>([2, 256, {d}]); let mut o = zeros::<f16>([2, 256, {d}]);"
            f" attn_dot::<{bm}, {bn}, {d}>(o.partition([1, {bm}, {d}]), &q, &q, &q, 0.1).sync(); }}\n")
    k = next(x for x in driver.compile(src + main, "ir").output if x.name == "attn_dot")
    facts = {n: TensorFacts(True, (False, s % 16 == 0, True)) for n in "oqkv"}
    gk = lower_gpu(k, "sm_90a", facts)
    text = print_gpu_kernel(gk)
    assert explain.path_of(gk) == "attention-pipeline" and "// issued with the next" in text
    assert not [x for x in text.splitlines() if "= add" in x and f"f32[{bm}, {d}]" in x]
    rng = np.random.default_rng(s)
    q, kk, v = (rng.standard_normal((2, s, d)).astype(np.float16) for _ in range(3))
    o = np.full((2, s, d), np.nan, np.float16)
    SimDevice("sm_90a").run(k, (2, 1), [o, q, kk, v, np.float32(d ** -0.5)], facts)
    want = np.zeros((2, s, d), np.float16)
    tilelang.compile(src).attn_dot[bm, bn, d](tilelang.partition(want, [1, bm, d]), q, kk, v,
                                              np.float32(d ** -0.5)).sync()
    np.testing.assert_allclose(o.astype(np.float64), want.astype(np.float64), atol=2e-3, rtol=1e-2)
