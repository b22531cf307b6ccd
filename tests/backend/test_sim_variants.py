"""`llsim.sim_runtime_device(arch, sms=..)` runs each launch of a whole program as the CUDA runtime would on a card
of that many multiprocessors: the variant `CudaDevice._choose` picks (short rows, split-K for few tiles, wide tiles
for many, a split form) on its CUDA grid (`llsim.choose_variant`). hrev19: whole programs in llsim ran only a
kernel's first variant, so the split-K variant's wrong epilogue values (hgemm4's 19:11 fix: an epilogue reading
the constant 0 read the piece's start) were out of every whole-program differential's reach."""

from __future__ import annotations

import io

import numpy as np
from llsim import SimDevice, choose_variant, sim_runtime_device

import tilelang.run as run
from tilelang import driver

SRC = """
kernel fn mm<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<f32, [BM, BN]>, a: &Tensor<f16, [?, ?]>,
        b: &Tensor<f16, [?, ?]>, bias: &Tensor<f32, [?]>) {
    let pa = a.partition([BM, BK]);
    let pb = b.partition([BK, BN]);
    let mut acc = zeros::<f32>([BM, BN]);
    for kk in 0..pa.num_tiles(1) {
        acc = mma(pa.load([block_id(0), kk]), pb.load([kk, block_id(1)]), acc);
    }
    c.store(maximum(acc + bias.partition([BN]).load([block_id(1)]).reshape([1, BN]), 0.0));
}
fn main() {
    let a = (randn::<f32>([70, 256], 1) * 3.0) as i32 as f16;
    let b = (randn::<f32>([256, 100], 2) * 3.0) as i32 as f16;
    let bias = (randn::<f32>([100], 3) * 3.0) as i32 as f32;
    let mut c = zeros::<f32>([70, 100]);
    mm::<64, 64, 64>(c.partition([64, 64]), &a, &b, &bias).sync();
    print(c.sum());
}
"""


def test_a_few_tile_gemm_runs_its_split_k_variant() -> None:
    k = driver.compile(SRC, "ir").output[0]
    rng = np.random.default_rng(0)
    args = [np.zeros((70, 100), np.float32), rng.standard_normal((70, 256)).astype(np.float16),
            rng.standard_normal((256, 100)).astype(np.float16), np.zeros(100, np.float32)]
    sim = SimDevice("sm_90a")
    facts, grid = choose_variant(sim, k, (2, 2), args, 8)   # 4 tiles on 8 SMs: few
    assert facts["c"].few_tiles and sim.compile(k, facts)[1].fill and grid == (8, 1, 1)
    facts, grid = choose_variant(sim, k, (2, 2), args, 4)   # 4 tiles on 4 SMs: not few, the first variant
    assert not facts["c"].few_tiles and grid == (2, 2, 1)


def test_the_whole_program_gives_the_interpreters_tensors(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    def tensors(device: object) -> tuple[np.ndarray, str]:
        out = io.StringIO()
        if device is not None:
            monkeypatch.setattr(run, "make_device", lambda choice, o: device)
        ex = run.execute(SRC, "cpu", out=out, name="v.tile")
        return np.asarray(ex.main_locals["c"].numpy()).copy(), out.getvalue()

    want, printed = tensors(None)
    got, printed_sim = tensors(sim_runtime_device("sm_90a", sms=8))
    np.testing.assert_array_equal(got, want)
    assert printed_sim == printed
