"""A key length read from a tensor before the attention loop (`lens.partition([1]).load([b]).item()`: cross-attention
over a padded batch, huser16's o05) no longer sends the loop to the generic path: `attention_match.scalar_reads`
lets a load of one element of a tensor the kernel never writes, reduced to a scalar, run before the roles part
(the trip count and the mask's bound). And the masked-row guard `where(mn == -inf, 0.0, mn)` keeps the softmax's
exps known <= 0 (`nonpositive_exp_args`: the plain exp). llsim at sm_90a against the interpreter (lengths past,
inside and at 0, not multiples of the block); what stays refused."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from llsim import SimDevice

import tilelang
from tilelang import driver
from tilelang.backend import explain, lower_gpu
from tilelang.backend.codegen.arith import nonpositive_exp_args
from tilelang.backend.facts import TensorFacts
from tilelang.backend.gpu import nodes as g
from tilelang.ir import nodes as ir

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import huser16_paths  # noqa: E402

# the kernel `benchmarks/huser16_paths.py` times on the GPU (o05_cross_attention_padding.tile's spelling, f16 out),
# its length `LEN` a read of `lens` (READ) or another form
SRC, READ = huser16_paths.CROSS, huser16_paths.LENS


def _kernel(bm: int, bn: int, d: int, length: str = READ, b: int = 3, sq: int = 128):  # type: ignore[no-untyped-def]
    main = (f"fn main() {{ let q = zeros::<f16>([{b}, {sq}, {d}]); let mut o = zeros::<f16>([{b}, {sq}, {d}]);"
            f" let lens = zeros::<i32>([{b}]);"
            f" cross::<{bm}, {bn}, {d}>(o.partition([1, {bm}, {d}]), &q, &q, &q, &lens, 0.1).sync(); }}\n")
    src = SRC.replace("LEN", length)
    return src, next(x for x in driver.compile(src + main, "ir").output if x.name == "cross")


FACTS = {**{n: TensorFacts(True, (False, True, True)) for n in "oqkv"}, "lens": TensorFacts(True, (True,))}


def test_a_length_read_before_the_loop_takes_the_pipeline(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    gk = lower_gpu(_kernel(64, 64, 64)[1], "sm_90a", FACTS)
    assert explain.path_of(gk) == "attention-pipeline" and explain.refusals(gk) == []
    exps = [op for op in g.walk(gk.body) if isinstance(op, ir.Elementwise) and op.op is ir.ElemOp.EXP]
    got = nonpositive_exp_args(gk.body)
    assert len(exps) == 2 and all(op.operands[0].id in got for op in exps)  # (through the masked-row guard)
    monkeypatch.setenv("TILEC_ATTN_SCALAR_READS", "0")
    gk = lower_gpu(_kernel(64, 64, 64)[1], "sm_90a", FACTS)
    assert explain.path_of(gk) != "attention-pipeline"
    assert any("a load of `lens` before the loop" in n.message for n in gk.notes)


@pytest.mark.parametrize(("length", "why"), [
    ("lens.partition([2]).load([b]).sum()", "a load of `lens` before the loop"),  # two elements: a tile
    ("(lens.partition([1]).load([b]) * 2).item() / 2", "a load of `lens` before the loop")])  # (a tile op on it)
def test_other_reads_before_the_loop_stay_refused(length: str, why: str) -> None:
    gk = lower_gpu(_kernel(64, 64, 64, length)[1], "sm_90a", FACTS)
    assert explain.path_of(gk) != "attention-pipeline" and any(why in n.message for n in gk.notes)


def test_only_reads_of_tensors_the_kernel_never_writes_count() -> None:
    from tilelang.backend.gpu.passes.attention_match import scalar_reads

    k = _kernel(64, 64, 64)[1]
    before = list(k.body.ops[:next(i for i, op in enumerate(k.body.ops) if isinstance(op, ir.For))])
    got = scalar_reads(before, set())
    assert {type(op).__name__ for op in before if id(op) in got} == {"Load", "Reduce"}
    assert scalar_reads(before, {"lens"}) == set()  # (a tensor the kernel writes: it may change under the loop)


@pytest.mark.parametrize(("bm", "bn", "d"), [(64, 64, 64), pytest.param(128, 64, 64, marks=pytest.mark.heavy)])
def test_cross_attention_with_lengths_in_the_simulator(bm: int, bn: int, d: int) -> None:
    src, k = _kernel(bm, bn, d)
    b, sq, sk = 3, 2 * bm, 200
    rng = np.random.default_rng(bm + d)
    q = rng.standard_normal((b, sq, d)).astype(np.float16)
    kk, v = (rng.standard_normal((b, sk, d)).astype(np.float16) for _ in range(2))
    lens = np.array([200, 77, 0], np.int32)  # all keys, a length inside a block, none (rows of zeros)
    o = np.full((b, sq, d), np.nan, np.float16)
    scale = np.float32(d ** -0.5)
    SimDevice("sm_90a").run(k, (b, sq // bm, 1), [o, q, kk, v, lens, scale], FACTS)
    want = np.full((b, sq, d), 7.0, np.float16)
    tilelang.compile(src).cross[bm, bn, d](tilelang.partition(want, [1, bm, d]), q, kk, v, lens, scale).sync()
    assert not np.isnan(o).any() and np.all(o[2] == 0.0)
    np.testing.assert_allclose(o.astype(np.float32), want.astype(np.float32), rtol=2e-3, atol=2e-4)
