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


# (150-3-0 heavy, htier1: `TILEC_ATTN_SPLIT=0` is not the default at D = 64; 150-2-1, the default split kernel,
# runs the unswitched mask in its whole tiles' walk and in the pieces, the same shape's edge block)
@pytest.mark.parametrize(("bm", "bn", "d", "s", "ctas", "split"), [
    (64, 64, 64, 150, 2, "1"), pytest.param(64, 64, 64, 150, 3, "0", marks=pytest.mark.heavy),
    pytest.param(128, 128, 128, 200, 1, "1", marks=pytest.mark.heavy),
    pytest.param(128, 64, 64, 130, 2, "1", marks=pytest.mark.heavy)])
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


# hattn (2026-12-06): masks of index comparisons in general (`attention_edge._general`): a causal mask
# `keys <= rows` and a sliding window `keys <= rows && keys > rows - W`, index tiles built from `arange`s and
# broadcast scalars by `+` and `-`, run only on a block where some element is masked.
def _user(kern: str, bm: int, bn: int, d: int, more: str = ""):  # type: ignore[no-untyped-def]
    main = (f"fn main() {{ let q = zeros::<f16>([2, 256, {d}]); let mut o = zeros::<f16>([2, 256, {d}]);"
            f" {kern}::<{bm}, {bn}, {d}{more}>(o.partition([1, {bm}, {d}]), &q, &q, &q, 0.1).sync(); }}\n")
    return next(k for k in driver.compile(SRC + main, "ir").output if k.name == kern)


@pytest.mark.parametrize(("kern", "more"), [("attn_causal", ""), ("attn_window", ", 100")])
def test_causal_and_window_masks_run_under_a_test(kern: str, more: str) -> None:
    text = print_gpu_kernel(lower_gpu(_user(kern, 64, 64, 64, more), "sm_90a", _facts(150)))
    assert "= if %whole" in text and "warp_specialize" in text
    if kern == "attn_window":  # both comparisons tested
        assert len([x for x in text.splitlines() if "%whole" in x and "= and " in x]) >= 1


def test_a_mask_that_is_not_of_sums_keeps_its_where() -> None:
    src_mask = "let s = where(keys <= rows, s, -1.0e30);"
    assert src_mask in SRC
    odd = SRC.replace(src_mask, "let s = where(keys * 2 <= rows, s, -1.0e30);")
    main = ("fn main() { let q = zeros::<f16>([2, 256, 64]); let mut o = zeros::<f16>([2, 256, 64]);"
            " attn_causal::<64, 64, 64>(o.partition([1, 64, 64]), &q, &q, &q, 0.1).sync(); }\n")
    k = next(x for x in driver.compile(odd + main, "ir").output if x.name == "attn_causal")
    text = print_gpu_kernel(lower_gpu(k, "sm_90a", _facts(150)))
    assert "%whole" not in text and "warp_specialize" in text


@pytest.mark.parametrize(("kern", "bm", "bn", "d", "s", "ctas", "more"), [
    ("attn_causal", 64, 64, 64, 150, 2, ""),
    pytest.param("attn_causal", 128, 128, 128, 300, 1, "", marks=pytest.mark.heavy),
    ("attn_window", 64, 64, 64, 200, 2, ", 100")])
def test_causal_and_window_loops_in_the_simulator(kern: str, bm: int, bn: int, d: int, s: int, ctas: int,
                                                  more: str) -> None:
    import tilelang

    k = _user(kern, bm, bn, d, more)
    facts = _facts(s)
    gk = lower_gpu(k, "sm_90a", facts)
    assert explain.path_of(gk) == "attention-pipeline" and "%whole" in print_gpu_kernel(gk)
    rng = np.random.default_rng(bm + d + s)
    bh = 2
    q, kk, v = (rng.standard_normal((bh, s, d)).astype(np.float16) for _ in range(3))
    o = np.full((bh, s, d), np.nan, np.float16)
    scale = np.float32(d ** -0.5)
    SimDevice("sm_90a").run(k, (ctas, 1), [o, q, kk, v, scale], facts)
    want = np.zeros((bh, s, d), np.float16)
    gen = [bm, bn, d] + ([int(more.strip(", "))] if more else [])
    getattr(tilelang.compile(SRC), kern)[tuple(gen)](tilelang.partition(want, [1, bm, d]), q, kk, v, scale).sync()
    np.testing.assert_allclose(o.astype(np.float64), want.astype(np.float64), atol=2e-3, rtol=1e-2)
    if kern == "attn_causal":  # and the definition
        i = np.arange(s)
        for b in range(bh):
            sc = q[b].astype(np.float64) @ kk[b].astype(np.float64).T * float(scale)
            sc = np.where(i[None] <= i[:, None], sc, -np.inf)
            p = np.exp(sc - sc.max(1, keepdims=True))
            ref = (p / p.sum(1, keepdims=True)) @ v[b].astype(np.float64)
            np.testing.assert_allclose(o[b].astype(np.float64), ref, atol=3e-3, rtol=1e-2)


def test_a_mask_whose_index_sum_wraps_keeps_its_i32_values() -> None:
    """hrev20: the test of a mask of index sums (`_all_true`) is computed in i64, the tiles in i32, which wrap:
    with `keys <= rows + ahead` and `rows + ahead` past 2^31 - 1 (rows 65.. at `ahead` = 2^31 - 65) every key
    of those rows is masked in i32 (the interpreter: rows of the values' mean), and the i64 test said none
    was: llsim ran them unmasked. The test now also asks that every element is an i32."""
    import tilelang

    at = SRC.index("kernel fn attn_causal<")
    end = SRC.index("\nkernel fn ", at + 1) if "\nkernel fn " in SRC[at + 1:] else len(SRC)
    causal = SRC[at:end].replace("scale: f32) {", "scale: f32, ahead: i32) {", 1).replace(
        "let s = where(keys <= rows, s, -1.0e30);", "let s = where(keys <= rows + ahead, s, -1.0e30);", 1)
    src = SRC[:at] + causal + SRC[end:]
    assert "rows + ahead" in src and "ahead: i32" in src
    main = ("fn main() { let q = zeros::<f16>([2, 256, 64]); let mut o = zeros::<f16>([2, 256, 64]);"
            " attn_causal::<64, 64, 64>(o.partition([1, 64, 64]), &q, &q, &q, 0.1, 7).sync(); }\n")
    k = next(x for x in driver.compile(src + main, "ir").output if x.name == "attn_causal")
    facts = _facts(150)
    gk = lower_gpu(k, "sm_90a", facts)
    assert explain.path_of(gk) == "attention-pipeline" and "%whole" in print_gpu_kernel(gk)
    rng = np.random.default_rng(20)
    q, kk, v = (rng.standard_normal((2, 150, 64)).astype(np.float16) for _ in range(3))
    ahead = np.int32((1 << 31) - 65)
    o = np.full((2, 150, 64), np.nan, np.float16)
    SimDevice("sm_90a").run(k, (2, 1), [o, q, kk, v, np.float32(0.125), ahead], facts)
    want = np.zeros((2, 150, 64), np.float16)
    tilelang.compile(src).attn_causal[64, 64, 64](tilelang.partition(want, [1, 64, 64]), q, kk, v,
                                                  np.float32(0.125), ahead).sync()
    np.testing.assert_allclose(o.astype(np.float64), want.astype(np.float64), atol=2e-3, rtol=1e-2)
