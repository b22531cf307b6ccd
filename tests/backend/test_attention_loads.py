"""The attention pipeline with a tile loaded in its loop from a tensor the kernel never writes (an additive
bias, `attention_match._body_bad`'s `readable`): the consumers load it in the accumulator's layout, each thread
its own elements (before, such a loop kept the generic path: `benchmarks/cliffs.py`'s `attn_bias`, 0.02x SDPA).
Run in llsim at sm_90a against NumPy: D = 64 (the overlapped loop, the persistent walk split or not) and
D = 128 with 128-wide value rows (the rotated loop), edges in the queries and keys."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from llsim import SimDevice

import tilelang
from tilelang import driver
from tilelang.backend import explain, lower_gpu
from tilelang.backend.facts import TensorFacts

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import cliffs_cases  # noqa: E402

SRC = cliffs_cases._elem(cliffs_cases.ATTN, "f16")


def _kernel(bm: int, bn: int, d: int):  # type: ignore[no-untyped-def]
    main = (f"fn main() {{ let q = zeros::<f16>([2, 256, {d}]); let b = zeros::<f32>([256, 256]);"
            f" let mut o = zeros::<f16>([2, 256, {d}]);"
            f" attn_bias::<{bm}, {bn}, {d}>(o.partition([1, {bm}, {d}]), &q, &q, &q, &b, 0.1).sync(); }}\n")
    return next(k for k in driver.compile(SRC + main, "ir").output if k.name == "attn_bias")


def _facts(bh: int, s: int, d: int) -> dict[str, TensorFacts]:
    f = {n: TensorFacts(True, (bh % 16 == 0, s % 16 == 0, True)) for n in "oqkv"}
    return {**f, "bias": TensorFacts(True, (s % 16 == 0, s % 16 == 0))}


# (192-3-0 heavy, htier1: `TILEC_ATTN_SPLIT=0` is not the default at D = 64; 150-2-1, the default split kernel,
# reads the bias in its whole tiles' walk and in the pieces, queries and keys past the edge)
@pytest.mark.parametrize(("bm", "bn", "d", "s", "ctas", "split"), [
    (64, 64, 64, 150, 2, "1"), pytest.param(64, 64, 64, 192, 3, "0", marks=pytest.mark.heavy),
    pytest.param(128, 128, 128, 200, 1, "1", marks=pytest.mark.heavy),
    pytest.param(128, 64, 64, 256, 2, "1", marks=pytest.mark.heavy)])
def test_a_bias_read_in_the_loop_in_the_simulator(bm: int, bn: int, d: int, s: int, ctas: int, split: str,
                                                  monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TILEC_ATTN_SPLIT", split)
    bh = 2
    k = _kernel(bm, bn, d)
    facts = _facts(bh, s, d)
    gk = lower_gpu(k, "sm_90a", facts)
    assert explain.path_of(gk) == "attention-pipeline" and explain.refusals(gk) == []
    rng = np.random.default_rng(bm + bn + d + s)
    q, kk, v = (rng.standard_normal((bh, s, d)).astype(np.float16) for _ in range(3))
    bias = (rng.standard_normal((s, s)) * 2).astype(np.float32)
    o = np.full((bh, s, d), np.nan, np.float16)
    scale = np.float32(d ** -0.5)
    SimDevice("sm_90a").run(k, (ctas, 1), [o, q, kk, v, bias, scale], facts)
    # the interpreter (the loop masks no key: past the end, K's zeros and the bias's score 0 weigh in, as
    # the program says)
    want = np.zeros((bh, s, d), np.float16)
    tilelang.compile(SRC).attn_bias[bm, bn, d](tilelang.partition(want, [1, bm, d]), q, kk, v, bias, scale).sync()
    np.testing.assert_allclose(o.astype(np.float64), want.astype(np.float64), atol=2e-3, rtol=1e-2)
    if s % bn == 0:  # and, with no edge, the definition
        for b in range(bh):
            sc = q[b].astype(np.float64) @ kk[b].astype(np.float64).T * float(scale) + bias
            p = np.exp(sc - sc.max(1, keepdims=True))
            ref = (p / p.sum(1, keepdims=True)) @ v[b].astype(np.float64)
            np.testing.assert_allclose(o[b].astype(np.float64), ref, atol=3e-3, rtol=1e-2)


@pytest.mark.parametrize(("bm", "bn", "d", "s"), [(64, 64, 64, 150),
                                                  pytest.param(128, 128, 128, 200, marks=pytest.mark.heavy)])
def test_the_short_keys_variant_reads_the_bias_too(bm: int, bn: int, d: int, s: int) -> None:
    """The variant a launch of short keys compiles (`facts.Short`, `attention_chain`: chained tiles)."""
    k = _kernel(bm, bn, d)
    base = _facts(2, s, d)
    short = lower_gpu(k, "sm_90a", base).short
    assert short is not None
    facts = short.refine(base, (2, s, d))
    assert facts is not None and explain.refusals(lower_gpu(k, "sm_90a", facts)) == []
    rng = np.random.default_rng(s)
    q, kk, v = (rng.standard_normal((2, s, d)).astype(np.float16) for _ in range(3))
    bias = rng.standard_normal((s, s)).astype(np.float32)
    o = np.full((2, s, d), np.nan, np.float16)
    SimDevice("sm_90a").run(k, (2, 1), [o, q, kk, v, bias, np.float32(0.125)], facts)
    want = np.zeros((2, s, d), np.float16)
    tilelang.compile(SRC).attn_bias[bm, bn, d](tilelang.partition(want, [1, bm, d]), q, kk, v, bias,
                                               np.float32(0.125)).sync()
    np.testing.assert_allclose(o.astype(np.float64), want.astype(np.float64), atol=2e-3, rtol=1e-2)


def test_the_switch_keeps_the_generic_path(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TILEC_ATTN_LOADS", "0")
    gk = lower_gpu(_kernel(64, 64, 64), "sm_90a", _facts(2, 150, 64))
    assert explain.path_of(gk) == "mma.sync" and any("a load of `bias`" in n.message for n in gk.notes)
