"""A causal mask's rows made before the attention loop (`let rows = arange::<i32>(BM).reshape([BM, 1]) + i * BM;`,
the natural place: they do not change with the key block) where BM == BN: the IR shares that `arange` with the
keys' `arange::<i32>(BN)` in the loop, one value read as a column before the loop and as a row in it, which no
layout of the consumers' registers gives both. The Hopper attention pipeline declined the loop in silence (the
generic mma.sync path, at 64 x 64 and 128 x 128; with the rows made in the loop, or BN != BM, it took it). The
pass now makes such an `arange` again in the loop (`attention_layout.unshare_loop_aranges`, kept only where the
pipeline then takes the loop) and a loop it still declines for a value that would move between threads says so
(round 17, huser17's a12: ALiBi + soft-capped causal attention)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from llsim import SimDevice

import tilelang
from tilelang import driver
from tilelang.backend import explain, lower_gpu
from tilelang.backend.facts import TensorFacts

SRC = """
kernel fn causal<const BM: i32, const BN: i32, const D: i32>(o: &mut Tensor<f32, [1, BM, D]>,
        q: &Tensor<f16, [?, ?, D]>, k: &Tensor<f16, [?, ?, D]>, v: &Tensor<f16, [?, ?, D]>,
        slopes: &Tensor<f32, [?]>, scale: f32) {
    let h = block_id(0);
    let i = block_id(1);
    let slope = slopes.partition([1]).load([h]).item();
    let qt = q.load_like(o).reshape([BM, D]);
    let pk = k.partition([1, BN, D]);
    let pv = v.partition([1, BN, D]);
    let rows = arange::<i32>(BM).reshape([BM, 1]) + i * BM;
    let mut m = full::<f32>([BM, 1], f32::NEG_INFINITY);
    let mut l = zeros::<f32>([BM, 1]);
    let mut acc = zeros::<f32>([BM, D]);
    for j in 0..((i + 1) * BM + BN - 1) / BN {
        let s = mma(qt, pk.load([h, j, 0]).reshape([BN, D]).transpose(), zeros::<f32>([BM, BN])) * scale;
        let keys = arange::<i32>(BN).reshape([1, BN]) + j * BN;
        let s = where(keys <= rows, s + ((keys - rows) as f32) * slope, f32::NEG_INFINITY);
        let mn = maximum(m, s.max(1).reshape([BM, 1]));
        let p = exp(s - mn);
        let alpha = exp(m - mn);
        l = l * alpha + p.sum(1).reshape([BM, 1]);
        acc = mma(p as f16, pv.load([h, j, 0]).reshape([BN, D]), acc * alpha);
        m = mn;
    }
    o.store((acc / l).reshape([1, BM, D]));
}
"""
FACTS = {**{n: TensorFacts(True, (False, True, True)) for n in "oqkv"}, "slopes": TensorFacts(True, (True,))}


def _kernel(bm: int, bn: int, d: int = 64, h: int = 2, s: int = 256):  # type: ignore[no-untyped-def]
    main = (f"fn main() {{ let q = zeros::<f16>([{h}, {s}, {d}]); let mut o = zeros::<f32>([{h}, {s}, {d}]);"
            f" causal::<{bm}, {bn}, {d}>(o.partition([1, {bm}, {d}]), &q, &q, &q, &zeros::<f32>([{h}]), 0.1).sync(); }}\n")
    return next(x for x in driver.compile(SRC + main, "ir").output if x.name == "causal")


@pytest.mark.parametrize(("bm", "bn"), [(64, 64), (128, 128), (128, 64)])
def test_rows_made_before_the_loop_take_the_pipeline(bm: int, bn: int) -> None:
    gk = lower_gpu(_kernel(bm, bn), "sm_90a", FACTS)
    assert explain.path_of(gk) == "attention-pipeline" and explain.refusals(gk) == [], \
        [n.message for n in gk.notes]


def test_without_the_second_arange_the_refusal_is_a_note(monkeypatch: pytest.MonkeyPatch) -> None:
    from tilelang.backend.gpu.passes import attention_layout

    monkeypatch.setattr(attention_layout, "unshare_loop_aranges", lambda k: None)
    gk = lower_gpu(_kernel(64, 64), "sm_90a", FACTS)
    assert explain.path_of(gk) == "mma.sync"  # (`stream_mma`'s rings are opt-in: TILEC_MMA_RING=1)
    (note,) = explain.refusals(gk)
    assert "would move values between the consumers' threads" in note.message, note.message


def test_a_kernel_without_a_shared_arange_is_left_alone() -> None:
    from tilelang.backend.gpu.passes.attention_layout import unshare_loop_aranges
    from tilelang.backend.gpu.passes.lift import lift
    from tilelang.backend.gpu.passes.context import PassContext

    k = lift(_kernel(128, 64), PassContext("sm_90a", FACTS))   # BN != BM: two aranges, the loop's its own
    assert unshare_loop_aranges(k) is None


def test_alibi_causal_attention_in_the_simulator() -> None:
    """BM = BN = 64, S = 100 (a partial last block), one head: llsim at sm_90a against the interpreter."""
    h, s, d = 1, 100, 64
    k = _kernel(64, 64, d, h, s)
    rng = np.random.default_rng(17)
    q, kk, v = (rng.standard_normal((h, s, d)).astype(np.float16) for _ in range(3))
    slopes = np.array([0.25], np.float32)
    o = np.full((h, s, d), np.nan, np.float32)
    SimDevice("sm_90a").run(k, (h, 2, 1), [o, q, kk, v, slopes, np.float32(0.125)], FACTS)
    want = np.full((h, s, d), 7.0, np.float32)
    tilelang.compile(SRC).causal[64, 64, d](tilelang.partition(want, [1, 64, d]), q, kk, v, slopes,
                                            np.float32(0.125)).sync()
    np.testing.assert_allclose(o, want, rtol=2e-3, atol=2e-3)


QMASK = """
kernel fn qmasked<const BM: i32, const BN: i32, const D: i32>(o: &mut Tensor<f32, [1, BM, D]>,
        q: &Tensor<f16, [?, ?, D]>, k: &Tensor<f16, [?, ?, D]>, v: &Tensor<f16, [?, ?, D]>,
        qmask: &Tensor<f32, [?, ?]>) {
    let h = block_id(0);
    let i = block_id(1);
    let qt = q.load_like(o).reshape([BM, D]);
    let pk = k.partition([1, BN, D]);
    let pv = v.partition([1, BN, D]);
    let qm = qmask.partition([1, BM]).load([h, i]).reshape([BM, 1]);
    let mut m = full::<f32>([BM, 1], -1.0e30);
    let mut l = zeros::<f32>([BM, 1]);
    let mut acc = zeros::<f32>([BM, D]);
    for j in 0..pk.num_tiles(1) {
        let s = mma(qt, pk.load([h, j, 0]).reshape([BN, D]).transpose(), zeros::<f32>([BM, BN]));
        let s = where(qm > 0.5, s, -1.0e30);
        let mn = maximum(m, s.max(1).reshape([BM, 1]));
        let p = exp(s - mn);
        let alpha = exp(m - mn);
        l = l * alpha + p.sum(1).reshape([BM, 1]);
        acc = mma(p as f16, pv.load([h, j, 0]).reshape([BN, D]), acc * alpha);
        m = mn;
    }
    o.store((acc / l).reshape([1, BM, D]));
}
fn main() {
    let q = zeros::<f16>([2, 256, 64]);
    let mut o = zeros::<f32>([2, 256, 64]);
    qmasked::<128, 128, 64>(o.partition([1, 128, 64]), &q, &q, &q, &zeros::<f32>([2, 256])).sync();
}
"""


def test_a_row_tile_loaded_before_the_loop_is_told_to_load_it_in_the_loop() -> None:
    """A query mask loaded once before the loop (a [BM, 1] tile) was refused with no help; the help's place,
    the load in the loop, is taken."""
    facts = {**{n: TensorFacts(True, (False, True, True)) for n in "oqkv"}, "qmask": TensorFacts(True, (False, True))}

    def lowered(src: str):  # type: ignore[no-untyped-def]
        return lower_gpu(next(x for x in driver.compile(src, "ir").output if x.name == "qmasked"), "sm_90a", facts)

    gk = lowered(QMASK)
    (note,) = explain.refusals(gk)
    assert "a load of `qmask` before the loop" in note.message and "load the tile in the loop" in note.help[0]
    load = "    let qm = qmask.partition([1, BM]).load([h, i]).reshape([BM, 1]);\n"
    moved = QMASK.replace(load, "").replace("        let s = where(qm", load.replace("    ", "        ", 1)
                                            + "        let s = where(qm")
    assert explain.path_of(lowered(moved)) == "attention-pipeline"


@pytest.mark.parametrize("hint", [False, True])
def test_soft_capping_s_tanh_is_advised_unless_fast_math(hint: bool) -> None:
    """a12's soft-capped ALiBi loop (`tanh(s / cap) * cap`) ran 0.50x SDPA + bias on an H100 (call 22): the
    accurate f32 tanh on every score; the advice names `fast_math`, and is gone under it."""
    src = (Path(__file__).parents[1] / "user" / "programs" / "a12_alibi_softcap_attention.tile").read_text(
        encoding="utf-8")
    if hint:
        src = src.replace("kernel fn alibi_attn", "#[hints(fast_math = true)]\nkernel fn alibi_attn", 1)
    k = next(x for x in driver.compile(src, "ir").output if x.name == "alibi_attn")
    gk = lower_gpu(k, "sm_90a", {**{n: TensorFacts(True, (False, True, True)) for n in "oqkv"},
                                 "slopes": TensorFacts(True, (True,))})
    assert explain.path_of(gk) == "attention-pipeline"
    notes = [n for n in gk.notes if "`tanh` of the scores" in n.message]
    assert (notes == []) == hint, [n.message for n in gk.notes]
    assert hint or "`#[hints(fast_math = true)]` makes it one `tanh.approx`" in notes[0].help[0]
