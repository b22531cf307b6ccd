"""`attention_edge.unswitch`: a user's flash loop that masks the keys past the end on every block
(`where(keys < n, s, -1e30)`) runs the mask only where `off + BN > n` (an `if` on a scalar; the mask's ops
in its `else`), exactly; the pipeline takes the rewritten loop (the overlapped, rotated and split forms).
Run in llsim at sm_90a against NumPy with S not a multiple of the blocks."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from llsim import SimDevice

from tilelang import driver
from tilelang.backend import explain, lower_gpu
from tilelang.backend.facts import TensorFacts
from tilelang.backend.gpu.printer import print_gpu_kernel

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import cliffs_cases  # noqa: E402

SRC = cliffs_cases._elem(cliffs_cases.ATTN, "f16")
MASK = "let s = where(keys < n, s, -1.0e30);"


def _kernel(bm: int, bn: int, d: int, mask: str = MASK):  # type: ignore[no-untyped-def]
    src = SRC.replace(MASK, mask)
    main = (f"fn main() {{ let q = zeros::<f16>([2, 256, {d}]); let mut o = zeros::<f16>([2, 256, {d}]);"
            f" attn::<{bm}, {bn}, {d}>(o.partition([1, {bm}, {d}]), &q, &q, &q, 0.1).sync(); }}\n")
    return next(k for k in driver.compile(src + main, "ir").output if k.name == "attn")


def _facts(s: int) -> dict[str, TensorFacts]:
    return {n: TensorFacts(True, (False, s % 16 == 0, True)) for n in "oqkv"}


@pytest.mark.parametrize("mask", [MASK, "let s = where(n > keys, s, -1.0e30);",
                                  "let s = where(keys <= n - 1, s, -1.0e30);"])
def test_the_edge_mask_runs_under_a_test(mask: str) -> None:
    text = print_gpu_kernel(lower_gpu(_kernel(64, 64, 64, mask), "sm_90a", _facts(150)))
    assert "= if %whole" in text and "warp_specialize" in text


def test_the_switch_and_a_mask_read_elsewhere_keep_the_loop_as_written(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    shared = MASK + "\n        let s = s + where(keys < n, 0.0, 0.0);"  # the compare's keys read twice
    assert "%whole" not in print_gpu_kernel(lower_gpu(_kernel(64, 64, 64, shared), "sm_90a", _facts(150)))
    monkeypatch.setenv("TILEC_ATTN_EDGE", "0")
    text = print_gpu_kernel(lower_gpu(_kernel(64, 64, 64), "sm_90a", _facts(150)))
    assert "%whole" not in text and "warp_specialize" in text


@pytest.mark.parametrize(("bm", "bn", "d", "s", "ctas", "split"), [
    (64, 64, 64, 150, 2, "1"), (64, 64, 64, 150, 3, "0"), (128, 128, 128, 200, 1, "1"), (128, 64, 64, 130, 2, "1")])
def test_a_masked_user_loop_in_the_simulator(bm: int, bn: int, d: int, s: int, ctas: int, split: str,
                                             monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TILEC_ATTN_SPLIT", split)
    k = _kernel(bm, bn, d)
    facts = _facts(s)
    gk = lower_gpu(k, "sm_90a", facts)
    assert explain.path_of(gk) == "attention-pipeline" and "%whole" in print_gpu_kernel(gk)
    rng = np.random.default_rng(bm + bn + d + s)
    bh = 2
    q, kk, v = (rng.standard_normal((bh, s, d)).astype(np.float16) for _ in range(3))
    o = np.full((bh, s, d), np.nan, np.float16)
    scale = np.float32(d ** -0.5)
    SimDevice("sm_90a").run(k, (ctas, 1), [o, q, kk, v, scale], facts)
    for b in range(bh):
        sc = q[b].astype(np.float64) @ kk[b].astype(np.float64).T * float(scale)
        p = np.exp(sc - sc.max(1, keepdims=True))
        ref = (p / p.sum(1, keepdims=True)) @ v[b].astype(np.float64)
        np.testing.assert_allclose(o[b].astype(np.float64), ref, atol=3e-3, rtol=1e-2)
