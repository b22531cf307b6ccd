"""A GEMM's epilogue tile loaded before the K loop (a bias, the natural place for a user who loads what a block
needs first): the Hopper GEMM pipeline refused it ("what follows the loop is not an epilogue") and the kernel ran
on sm_80's cp.async ring; the same load after the loop was taken. `gemm_sink.sunk` moves such ops after the loop
(loads of tensors the kernel never writes, value-only ops on them, none read in the loop), adopted only where the
pipeline then takes the loop (round 17, huser17). llsim at sm_90a against the interpreter."""

from __future__ import annotations

import numpy as np
import pytest
from llsim import SimDevice

import tilelang
from tilelang import driver
from tilelang.backend import explain, lower_gpu
from tilelang.backend.facts import TensorFacts

SRC = """
kernel fn mm<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<f32, [BM, BN]>, a: &Tensor<f16, [?, ?]>,
        b: &Tensor<f16, [?, ?]>, bias: &Tensor<f32, [?]>, scale: &Tensor<f32, [?]>) {
    let i = block_id(0);
    let j = block_id(1);
    let pa = a.partition([BM, BK]);
    let pb = b.partition([BK, BN]);
    let bb = bias.partition([BN]).load([j]).reshape([1, BN]);
    let s = scale.partition([BM]).load([i]).reshape([BM, 1]);
    let mut acc = zeros::<f32>([BM, BN]);
    for kk in 0..pa.num_tiles(1) {
        acc = mma(pa.load([i, kk]), pb.load([kk, j]), acc);
    }
    c.store(maximum(acc * s + bb, 0.0));
}
"""
FACTS = {"c": TensorFacts(True, (False, True)), "a": TensorFacts(True, (False, True)),
         "b": TensorFacts(True, (False, True)), "bias": TensorFacts(True, (True,)), "scale": TensorFacts(True, (True,))}


def _kernel(src: str = SRC, m: int = 128, n: int = 128, kd: int = 128):  # type: ignore[no-untyped-def]
    main = (f"fn main() {{ let a = zeros::<f16>([{m}, {kd}]); let b = zeros::<f16>([{kd}, {n}]);"
            f" let mut c = zeros::<f32>([{m}, {n}]);"
            f" mm::<64, 64, 64>(c.partition([64, 64]), &a, &b, &zeros::<f32>([{n}]), &zeros::<f32>([{m}])).sync(); }}\n")
    return next(x for x in driver.compile(src + main, "ir").output if x.name == "mm")


def test_epilogue_tiles_loaded_before_the_loop_take_the_pipeline() -> None:
    gk = lower_gpu(_kernel(), "sm_90a", FACTS)
    assert explain.path_of(gk) == "wgmma-pipeline" and explain.refusals(gk) == [], [n.message for n in gk.notes]


def test_a_tile_read_in_the_loop_stays_before_it() -> None:
    """A tile loaded before the loop and read in it too (a scale of A's tiles) is not moved: the kernel keeps its
    refusal as before."""
    from tilelang.backend.gpu.passes.gemm_sink import sunk
    from tilelang.backend.gpu.passes.lift import lift
    from tilelang.backend.gpu.passes.context import PassContext

    src = SRC.replace("acc = mma(pa.load([i, kk]), pb.load([kk, j]), acc);",
                      "acc = mma(pa.load([i, kk]), pb.load([kk, j]), acc) * s;")
    k = lift(_kernel(src), PassContext("sm_90a", FACTS))
    got = sunk(k)
    assert got is not None   # the bias moves (read after the loop only), `s` does not
    loop_at = next(i for i, op in enumerate(got.body.ops) if type(op).__name__ == "For")
    before = {getattr(op, "tensor", None) for op in got.body.ops[:loop_at]}
    after = {getattr(op, "tensor", None) for op in got.body.ops[loop_at + 1:]}
    assert "scale" in before and "bias" in after and "bias" not in before


@pytest.mark.parametrize("m", [128, 100])   # a partial last row tile too
def test_the_sunk_kernel_in_the_simulator(m: int) -> None:
    n, kd = 128, 128
    k = _kernel(m=m, n=n, kd=kd)
    rng = np.random.default_rng(m)
    a = rng.standard_normal((m, kd)).astype(np.float16)
    b = rng.standard_normal((kd, n)).astype(np.float16)
    bias = rng.standard_normal(n).astype(np.float32)
    scale = rng.random(m).astype(np.float32)
    c = np.full((m, n), np.nan, np.float32)
    facts = dict(FACTS, c=TensorFacts(True, (m % 64 == 0, True)), a=TensorFacts(True, (m % 64 == 0, True)))
    SimDevice("sm_90a").run(k, (-(-m // 64), n // 64, 1), [c, a, b, bias, scale], facts)
    want = np.full((m, n), 7.0, np.float32)
    tilelang.compile(SRC).mm[64, 64, 64](tilelang.partition(want, [64, 64]), a, b, bias, scale).sync()
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(want, np.maximum((a.astype(np.float64) @ b) * scale[:, None] + bias, 0),
                               rtol=1e-4, atol=1e-3)
