"""llsim fuses what NVPTX fuses (`llsim.CONTRACT`, `llsim_parse._fusable`):
an `fmul contract` whose one use is an `fadd contract` of its block is one
`fma.rn`, rounded once. A dot product whose products overflow or cancel
(a * a - a * a with a = 1 + 2^-12: the fma gives 2^-24, two roundings 0)
gives the fused value, and the pairs llsim fuses are the PTX's `fma.rn` count."""

from __future__ import annotations

import re

import llsim
import numpy as np
import pytest
from llsim import SimDevice
from llsim_parse import Program

import tilelang
from tilelang.backend import lower_gpu
from tilelang.backend.llvm import emit_llvm_text
from tilelang.backend.target import Target, llvm_to_ptx

P = tilelang.partition

SRC = """
kernel fn dot<const N: i32>(out: &mut Tensor<f32, [1, 1]>, x: &Tensor<f32, [1, N]>, y: &Tensor<f32, [1, N]>) {
    out.store((x.partition([1, N]).load([0, 0]) * y.partition([1, N]).load([0, 0])).sum(1).reshape([1, 1]));
}
"""


def _op(x: np.ndarray, y: np.ndarray):  # type: ignore[no-untyped-def]
    k = tilelang.compile(SRC)
    out = np.zeros((1, 1), np.float32)
    return k.dot[x.shape[1]](P(out, [1, 1]), x, y)


def _simulate(x: np.ndarray, y: np.ndarray) -> float:
    op = _op(x, y)
    copies = [np.array(h) for h in op._hosts]
    SimDevice("sm_80").run(op._plan.kir, (1,), op._kernel_args(copies))
    op.discard()
    return float(copies[0][0, 0])


def _llvm(n: int) -> str:
    op = _op(np.ones((1, n), np.float32), np.ones((1, n), np.float32))
    gk = lower_gpu(op._plan.kir, "sm_80", None)
    op.discard()
    return emit_llvm_text(gk, gk.facts)[0]


def _fused(text: str) -> int:
    prog = Program(text)
    return sum(" ; fused with " in ins.text for b in prog.blocks.values() for ins in b.body)


@pytest.mark.parametrize(("contract", "compiled"), [(True, True), (True, False), (False, True)])
def test_a_dot_product_of_a_cancelling_product_is_one_fma(  # type: ignore[no-untyped-def]
        monkeypatch, contract: bool, compiled: bool) -> None:
    """a = 1 + 2^-12: a * a - a * a. The PTX is `mul.f32` of the second
    product, then `fma.rn.f32` of the first onto it: exactly (1 + 2^-11 +
    2^-24) - round(1 + 2^-11 + 2^-24) = 2^-24 (the other order would give
    -2^-24); two roundings (LLSIM_CONTRACT=0, and the interpreter) give 0."""
    monkeypatch.setattr(llsim, "CONTRACT", contract)
    monkeypatch.setattr(llsim, "COMPILED", compiled)  # the compiled block's source and the closure
    a = np.float32(1 + 2.0**-12)
    got = _simulate(np.array([[a, -a]], np.float32), np.array([[a, a]], np.float32))
    assert got == (2.0**-24 if contract else 0.0), got
    assert (_fused(_llvm(2)) == 1) == contract


MORE = """
use std::nn::softmax;

kernel fn mm<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<f32, [BM, BN]>,
                                                         a: &Tensor<f32, [?, ?]>, b: &Tensor<f32, [?, ?]>) {
    let pa = a.partition([BM, BK]);
    let pb = b.partition([BK, BN]);
    let mut acc = zeros::<f32>([BM, BN]);
    for k in 0..pa.num_tiles(1) {
        acc = mma(pa.load([block_id(0), k]), pb.load([k, block_id(1)]), acc);
    }
    c.store(acc);
}

kernel fn sm<const BM: i32, const N: i32>(y: &mut Tensor<f32, [BM, N]>, x: &Tensor<f32, [?, N]>) {
    y.store(softmax(x.load_like(y)));
}
"""


def _more_llvm(name: str) -> str:
    k = tilelang.compile(MORE)
    if name == "mm":
        a, b = np.ones((32, 32), np.float32), np.ones((32, 32), np.float32)
        c = np.zeros((32, 32), np.float32)
        op = k.mm[16, 16, 8](P(c, [16, 16]), a, b)
    else:
        x, y = np.ones((32, 64), np.float32), np.zeros((32, 64), np.float32)
        op = k.sm[16, 64](P(y, [16, 64]), x)
    gk = lower_gpu(op._plan.kir, "sm_80", None)
    op.discard()
    return emit_llvm_text(gk, gk.facts)[0]


def test_the_fused_pairs_are_the_ptx_fmas() -> None:
    """The fused pairs plus the IR's own `llvm.fma` calls are the PTX's
    `fma.rn.f32`s: dot products of 2, 8 and 32 (chains of 8, then a tree of
    plain adds), an f32 `mma` (the FMA loop) and a softmax (its `exp`). The
    engine's kernels gave the same equality when this was written, all of
    them with `ir_opt=0` (the IR as llsim reads it), all but one with the
    -O3 IR passes (CHANGELOG, hsim)."""
    texts = {f"dot{n}": _llvm(n) for n in (2, 8, 32)} | {n: _more_llvm(n) for n in ("mm", "sm")}
    for name, text in texts.items():
        ptx = llvm_to_ptx(text, Target("sm_80"))
        calls = len(re.findall(r"call float @llvm\.fma\.f32", text))
        assert _fused(text) + calls == len(re.findall(r"\bfma\.rn\.f32\b", ptx)), (name, _fused(text), calls)
    # the dot products fuse; the FMA loop is `llvm.fma` calls already; the softmax's
    # `fmul contract`s feed no contractible add, and its PTX has no fma
    assert _fused(texts["dot32"]) == 3 and "fmul contract" in texts["sm"] and _fused(texts["sm"]) == 0


FSUB = """define ptx_kernel void @k(float %x, float %y, float %c, double %dx, double %dc, float %x2, float %x4, float %x5) #0 {
e0:
  %m = fmul contract float %x, %y
  %s = fsub contract float %m, %c
  %m2 = fmul fast float %x2, %y
  %s2 = fsub contract float %c, %m2
  %m3 = fmul contract double %dx, %dx
  %s3 = fadd contract double %dc, %m3
  %m4 = fmul contract float %x4, %y
  %s4 = fsub float %m4, %c
  %m5 = fmul contract float %x5, %y
  %s5 = fsub contract float %m5, %c
  %t5 = fsub contract float %c, %m5
  ret void
}
"""


def test_fsub_f64_and_a_product_of_two_uses() -> None:
    """x * y - c is fma(x, y, -c), c - x * y fma(-x, y, c), f64 through
    `_fma_f64`, by the closure and by the compiled source alike; a product
    of two contractible uses is fused into each (NVPTX's aggressive fusion);
    an add without `contract` stays two roundings. The PTX has an `fma.rn`
    for each fused add and a `mul` for the unfused one."""
    prog = Program(FSUB)
    ins = {i.dst: i for b in prog.blocks.values() for i in b.body}
    a = np.float32(1 + 2.0**-12)
    d = 1 + 2.0**-30
    r = {"%x": a, "%x2": a, "%x4": a, "%x5": a, "%y": a, "%c": np.float32(1 + 2.0**-11), "%dx": np.float64(d), "%dc": np.float64(-(1 + 2.0**-29))}
    want = {"%s": 2.0**-24, "%s2": -2.0**-24, "%s3": 2.0**-60, "%s5": 2.0**-24, "%t5": -2.0**-24}
    for dst, w in want.items():
        assert " ; fused with " in ins[dst].text
        assert ins[dst].fn(r) == w, dst
        assert eval(ins[dst].src, dict(prog.ns), {"r": r}) == w, dst  # (the simulator's own source)
    assert " ; fused with " not in ins["%s4"].text and ins["%s4"].fn(r | {"%m4": ins["%m4"].fn(r)}) == 0.0
    # the same adds stored, through the NVPTX back end: one fma a fused add (f32 and f64), one mul for %s4
    stores = [("float", "%s"), ("float", "%s2"), ("double", "%s3"), ("float", "%s4"), ("float", "%s5"),
              ("float", "%t5")]
    body = "".join(f"  %p{j} = getelementptr i8, ptr addrspace(1) %o, i64 {8 * j}\n"
                   f"  store {t} {v}, ptr addrspace(1) %p{j}\n" for j, (t, v) in enumerate(stores))
    ll = ('target triple = "nvptx64-nvidia-cuda"\n'
          + FSUB.replace("@k(", "@k(ptr addrspace(1) %o, ").replace("  ret void", body + "  ret void")
          + 'attributes #0 = { "nvvm.reqntid"="32" }\n')
    ptx = llvm_to_ptx(ll, Target("sm_80"), ir_opt=0)  # the DAG combiner on this IR (no CSE of the equal products)
    assert len(re.findall(r"\bfma\.rn\.f32\b", ptx)) == 4 and len(re.findall(r"\bfma\.rn\.f64\b", ptx)) == 1, ptx
    assert len(re.findall(r"\bmul\.rn\.f32\b|\bmul\.f32\b", ptx)) == 1, ptx
