"""hcliff13: a short counted loop of register arithmetic is unrolled whole (`codegen/unroll.py`): tests/user l15's
Philox4x32-10 rounds (`for _r in 0..10`, u32 x u32 -> u64 products, xors, the key schedule) carry no loop to the
PTX, give the same bits as the loop (llsim, both arms, against the interpreter), and loops that touch memory, run
a trip count known only at run time, or are long stay loops."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from llsim import SimDevice

import tilelang
from tilelang.backend import emit_ptx
from tilelang.backend.codegen import unroll
from tilelang.backend.facts import TensorFacts
from tilelang.dtypes import DType
from tilelang.interp import run_kernel
from tilelang.ir.lower import lower_kernel
from tilelang.runtime.launch import ArgFact

L15 = Path(__file__).resolve().parents[1] / "user" / "programs" / "l15_philox_dropout.tile"
N, B = 256, 128


def _dropout() -> object:
    m = tilelang.load(L15)
    facts = {"y": ArgFact(DType.F32, (N,), (B,)), "keep": ArgFact(DType.BOOL, (N,), (B,)),
             "bits": ArgFact(DType.U32, (N,), (B,)), "x": ArgFact(DType.F32, (N,), None)}
    return lower_kernel(m._program, "dropout", {"B": B}, facts)


def _args() -> list[object]:
    x = np.random.default_rng(15).standard_normal(N).astype(np.float32)
    return [np.zeros(N, np.float32), np.zeros(N, bool), np.zeros(N, np.uint32), x,
            np.float32(0.25), np.uint64(0x0123456789ABCDEF), np.uint32(7)]


def _facts() -> dict[str, TensorFacts]:
    return {n: TensorFacts.of_launch(256, (N,)) for n in ("y", "keep", "bits", "x")}


@pytest.mark.parametrize("setting", ["auto", "0"])
def test_philox_rounds_give_the_loops_bits(setting: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The l15 dropout (bits, mask, scaled values) on llsim with the rounds unrolled and with the loop kept
    (`TILEC_UNROLL=0`): the interpreter's bits in both."""
    monkeypatch.setenv("TILEC_UNROLL", setting)
    k = _dropout()
    want, got = _args(), _args()
    run_kernel(k, (N // B,), want)
    SimDevice("sm_90a").run(k, (N // B,), got, _facts())
    for w, g in zip(want[:3], got[:3], strict=True):
        np.testing.assert_array_equal(g, w)
    assert 0.5 < float(np.mean(got[1])) < 0.95  # (a mask that keeps about 3 in 4)


def test_the_rounds_leave_no_loop_in_the_ptx(monkeypatch: pytest.MonkeyPatch) -> None:
    """`TILEC_UNROLL=0` keeps one round's products in a loop; unrolled, the PTX holds the ten rounds' (less
    the first round's product of a zero counter word, folded away)."""
    muls = {}
    for setting in ("auto", "0"):
        monkeypatch.setenv("TILEC_UNROLL", setting)
        ptx = emit_ptx(_dropout(), "sm_90a", _facts())
        muls[setting] = ptx.count("mul.wide.u32") + ptx.count("mul.hi.u32")
    assert 0 < muls["0"] <= 16 and muls["auto"] >= 7 * muls["0"], muls


SRC = """
kernel fn loops<const B: i32>(y: &mut Tensor<u32, [B]>, x: &Tensor<u32, [?]>, n: i32) {
    let mut h = x.load_like(y);
    for r in 0..4 {
        h = (h ^ (h >> 15u32)) * 0x2C1B3C6Du32 + (r as u32);
    }
    for _r in 0..n {
        h = h * 3u32;
    }
    for r in 0..3 {
        h = h + x.partition([B]).load([r]);
    }
    for _r in 0..17 {
        h = h ^ (h << 1u32);
    }
    y.store(h);
}
fn main() { let x = zeros::<u32>([64]); let mut y = zeros::<u32>([64]); loops(y.partition([32]), &x, 2).sync(); }
"""


def test_only_short_loops_of_register_arithmetic_unroll() -> None:
    """Of four loops, the one of 4 trips unrolls; a run-time trip count, a load in the body and 17 trips keep
    theirs (one `llvm.loop` node in the LLVM text)."""
    from tilelang.backend import _target, emit_llvm_text, lower_gpu

    m = tilelang.compile(SRC)
    k = lower_kernel(m._program, "loops", {"B": 32}, {"y": ArgFact(DType.U32, (64,), (32,)),
                                                        "x": ArgFact(DType.U32, (64,), None)})
    tgt = _target("sm_80")
    gk = lower_gpu(k, tgt, None)
    ll, _ = emit_llvm_text(gk, gk.facts, tgt.pdl_mode, tgt.trace, tgt.tma_prefetch, "", tgt.l2_evict, tgt.ldg_early)
    assert ll.count("!llvm.loop !") == 1 and ll.count('"llvm.loop.unroll.full"') == 1
    assert unroll.TRIPS < 17
    x = np.arange(64, dtype=np.uint32) * np.uint32(2654435761)
    want, got = [np.zeros(64, np.uint32), x, np.int32(2)], [np.zeros(64, np.uint32), x, np.int32(2)]
    run_kernel(k, (2,), want)
    SimDevice("sm_80").run(k, (2,), got)
    np.testing.assert_array_equal(got[0], want[0])
