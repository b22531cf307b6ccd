"""A batched GEMM written the natural way, a tile of each 3-D tensor reshaped to a matrix in the loop
(huser15, round 15): no pipeline takes it (mma.sync with no ring, on sm_90a and sm_80). The Hopper
pipeline's note said "do the other work before or after the loop", which a batch's reshape cannot, and
sm_80's cp.async ring said nothing. Both now say that they read tiles of 2-D tensors and how a batch
takes them: stacked as one 2-D tensor with the batch in the tile index, which the help's form does, and
which gives the 3-D form's values on the interpreter."""

from __future__ import annotations

import io

import numpy as np
import pytest

import tilelang.run as run
from tilelang import driver
from tilelang.backend import explain, lower_gpu
from tilelang.backend.facts import TensorFacts

KERNEL3 = """
kernel fn bmm<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<f32, [1, BM, BN]>, a: &Tensor<f16, [?, ?, ?]>,
                                                           b: &Tensor<f16, [?, ?, ?]>) {
    let pa = a.partition([1, BM, BK]);
    let pb = b.partition([1, BK, BN]);
    let mut acc = zeros::<f32>([BM, BN]);
    for k in 0..pa.num_tiles(2) {
        let ta = pa.load([block_id(0), block_id(1), k]).reshape([BM, BK]);
        let tb = pb.load([block_id(0), k, block_id(2)]).reshape([BK, BN]);
        acc = mma(ta, tb, acc);
    }
    c.store(acc.reshape([1, BM, BN]));
}
"""
# the help's form: the batch stacked as 2-D tensors, the batch in the tile index (M, K multiples of the tiles)
KERNEL2 = """
kernel fn bmm2<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<f32, [BM, BN]>, a: &Tensor<f16, [?, ?]>,
                                                            b: &Tensor<f16, [?, ?]>, m: i32, k: i32) {
    let pa = a.partition([BM, BK]);
    let pb = b.partition([BK, BN]);
    let batch = block_id(0) / (m / BM);
    let mut acc = zeros::<f32>([BM, BN]);
    for kk in 0..k / BK {
        acc = mma(pa.load([block_id(0), kk]), pb.load([batch * (k / BK) + kk, block_id(1)]), acc);
    }
    c.store(acc);
}
"""
MAIN = """
fn main() {
    let a = randn::<f16>([3, 128, 64], 1);
    let b = randn::<f16>([3, 64, 64], 2);
    let mut c3 = zeros::<f32>([3, 128, 64]);
    bmm::<64, 64, 32>(c3.partition([1, 64, 64]), &a, &b).sync();
    let mut c2 = zeros::<f32>([3 * 128, 64]);
    bmm2::<64, 64, 32>(c2.partition([64, 64]), &a.reshape([3 * 128, 64]), &b.reshape([3 * 64, 64]), 128, 64).sync();
}
"""


def _kernel(name: str, arch: str):  # type: ignore[no-untyped-def]
    k = next(x for x in driver.compile(KERNEL3 + KERNEL2 + MAIN, "ir").output if x.name == name)
    facts = {p.name: TensorFacts(True, (True,) * p.rank) for p in k.params if hasattr(p, "rank")}
    return lower_gpu(k, arch, facts)


@pytest.mark.parametrize(("arch", "path"), [("sm_90a", "the Hopper GEMM pipeline"), ("sm_80", "the cp.async ring")])
def test_the_batched_operand_s_note_says_how_a_batch_takes_the_pipeline(arch: str, path: str) -> None:
    gk = _kernel("bmm", arch)
    assert explain.path_of(gk) == "mma.sync"
    note = next(n for n in gk.notes if n.message.startswith(path))
    assert "a tile of the 3-D tensor `a` reshaped to a matrix" in note.message, note.message
    assert "the batch in the tile index, `p.load([b * (M / BM) + i, k])`" in note.help[0], note.help
    line = (KERNEL3 + KERNEL2 + MAIN)[:note.labels[0].span.start].count("\n") + 1
    assert ".reshape([BM, BK])" in (KERNEL3 + KERNEL2 + MAIN).splitlines()[line - 1]


@pytest.mark.parametrize(("arch", "path"), [("sm_90a", "wgmma-pipeline"), ("sm_80", "sm80-pipeline")])
def test_the_help_s_stacked_form_takes_the_pipeline_and_gives_the_same_values(arch: str, path: str,
                                                                              tmp_path) -> None:  # type: ignore[no-untyped-def]
    gk = _kernel("bmm2", arch)
    assert explain.path_of(gk) == path and not gk.notes
    f = tmp_path / "b.tile"
    f.write_text(KERNEL3 + KERNEL2 + MAIN, encoding="utf-8")
    ex = run.execute(str(f), "cpu", out=io.StringIO())
    t = {k: np.asarray(v.numpy()) for k, v in ex.main_locals.items() if hasattr(v, "numpy")}
    np.testing.assert_array_equal(t["c2"].reshape(3, 128, 64), t["c3"])
    want = np.einsum("bmk,bkn->bmn", t["a"].astype(np.float64), t["b"].astype(np.float64))
    np.testing.assert_allclose(t["c3"], want, rtol=1e-4, atol=1e-4)
