"""Split-K for the FMA pipeline's f32 GEMMs with few tiles (`passes/fma_split.py`; hgemm4, round 18): a CTA an SM
walking pieces of the tiles' K loops, each piece's accumulator saved to a record, the last arrival summing them
in piece order and running the epilogue (the Hopper pipeline's form 3 on the cp.async ring). llsim against the
interpreter, small integers as f32 (exact whatever the order of the sums)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from llsim import SimDevice
from test_fma_pipeline import ACC, NP, _inputs, _kernel, _source

import tilelang
from tilelang.backend import lower_gpu
from tilelang.backend.facts import TensorFacts
from tilelang.backend.gpu.printer import print_gpu_kernel


def _run(lay: str, tile: tuple[int, int, int], shape: tuple[int, int, int], ctas: int, init: str = "",
         epilogue: str = "acc", dt: str = "f32") -> str:
    M, N, K = shape
    src = _source(lay, dt, init=init, epilogue=epilogue)
    k = _kernel(src, dt, tile)
    a, b = _inputs(lay, dt, M, N, K, sum(shape))
    got = np.full((M, N), 7, NP[ACC[dt]])
    facts = {n: TensorFacts(True, tuple(d % 16 == 0 for d in x.shape)) for n, x in (("c", got), ("a", a), ("b", b))}
    text = print_gpu_kernel(lower_gpu(k, "sm_90a", facts))
    SimDevice("sm_90a").run(k, (ctas, 1), [got, a, b], facts)
    want = np.full((M, N), 7, NP[ACC[dt]])
    tilelang.compile(src).g[tile](tilelang.partition(want, list(tile[:2])), a, b).sync()
    np.testing.assert_array_equal(got, want)
    return text


@pytest.mark.parametrize(("lay", "tile", "shape", "ctas", "init", "epilogue"), [
    # 4 tiles, 15 iterations: 3 pieces a tile on 12 CTAs; the constant start counted once (the first piece's)
    ("nn", (32, 32, 8), (45, 37, 120), 12, "full::<f32>([BM, BN], 3.0)", "maximum(acc * 2.0 - 3.0, 0.0)"),
    ("nt", (32, 32, 8), (45, 37, 120), 5, "", "acc"),  # 1 piece a tile (5 / 4): no records, the plain walk
    pytest.param("tn", (32, 64, 8), (40, 70, 200), 16, "", "acc", marks=pytest.mark.heavy),  # 8 pieces
    pytest.param("nn", (32, 32, 8), (45, 37, 120), 1, "", "acc", marks=pytest.mark.heavy),  # 1 CTA walks all
], ids=["nn_3_pieces_const_start", "nt_one_piece", "tn_8_pieces", "nn_one_cta"])
def test_split_k_agrees_with_the_interpreter(lay: str, tile, shape, ctas: int, init: str, epilogue: str,  # type: ignore[no-untyped-def]
                                             monkeypatch) -> None:
    monkeypatch.setenv("TILEC_GEMM_SPLITK", "1")
    text = _run(lay, tile, shape, ctas, init, epilogue)
    assert "dot.fma.smem" in text and "split.save" in text and "split.arrive" in text, text


def test_the_epilogue_reads_the_tiles_position(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`block_id(0) == 0` in the epilogue: the walk's position, and a constant the loop's bounds do not move."""
    monkeypatch.setenv("TILEC_GEMM_SPLITK", "1")
    _run("nn", (32, 32, 8), (45, 37, 120), 12, "", "where(block_id(0) == 0, acc * 2.0, acc - 1.0)")


@pytest.mark.heavy  # (the opt-in `TILEC_FMA_TRANSPOSE` under split-K: test_fma_transpose's nn_f32_edges runs the
# transposed ring, test_split_k_agrees_with_the_interpreter the pieces)
def test_the_transposed_rings_split_too(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TILEC_GEMM_SPLITK", "1")
    monkeypatch.setenv("TILEC_FMA_TRANSPOSE", "1")
    text = _run("nn", (32, 32, 8), (45, 37, 120), 12)
    assert "cp.async.transposed" in text and "split.save" in text, text


def test_which_kernels_ask_and_which_split(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Under "auto" (the default) an f32 FMA GEMM asks for the split variant (`few` = its output tensor), the
    variant for few tiles (`few_tiles`) walks pieces on a CTA an SM; f64 (its records are f32) and a `stages`
    hint do not ask; "0" never."""
    monkeypatch.delenv("TILEC_GEMM_SPLITK", raising=False)
    facts = {n: TensorFacts(True, (True, True)) for n in ("c", "a", "b")}
    k = _kernel(_source("nn", "f32"), "f32", (32, 32, 8))
    plain = lower_gpu(k, "sm_90a", facts)
    assert plain.few == "c" and not plain.fill
    few = lower_gpu(k, "sm_90a", {**facts, "c": dataclasses.replace(facts["c"], few_tiles=True)})
    assert few.fill and few.persistent == 8 and few.few == ""  # (8 CTAs an SM of 1 warp: `ctas_per_sm`)
    assert lower_gpu(_kernel(_source("nn", "f64"), "f64", (32, 32, 8)), "sm_90a", facts).few == ""
    hinted = _kernel(_source("nn", "f32", hints="stages = 3"), "f32", (32, 32, 8))
    assert lower_gpu(hinted, "sm_90a", facts).few == ""
    monkeypatch.setenv("TILEC_GEMM_SPLITK", "0")
    assert lower_gpu(k, "sm_90a", facts).few == ""


def test_ctas_an_sm() -> None:
    """64 x 64 x 16 (2 warps, a 36 KB ring): 6 an SM by shared memory; 128 x 128 x 16 (8 warps): 1, or 2 at 128
    registers (the transposed rings' `.maxnreg 128`)."""
    from tilelang.backend.gpu.passes.fma_split import ctas_per_sm

    assert ctas_per_sm(4 * (64 * 20 + 16 * 64) * 4, 2, 255) == 6
    assert ctas_per_sm(4 * (128 * 20 + 16 * 128) * 4, 8, 255) == 1
    assert ctas_per_sm(4 * (16 * 128 * 2) * 4, 8, 128) == 2


@pytest.mark.heavy  # (~3 s)
def test_a_batched_gemm_splits_over_its_3d_grid(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """test_fma_pipeline's batched GEMM (a tile of each 3-D tensor reshaped to a matrix): the walk's items over
    (batch, row, column) tiles and pieces, on 12, 3 and 1 CTAs."""
    from test_fma_pipeline import BMM

    from tilelang import driver

    monkeypatch.setenv("TILEC_GEMM_SPLITK", "1")
    k = next(x for x in driver.compile(BMM, "ir").output if x.name == "g")
    rng = np.random.default_rng(5)
    a = rng.integers(-4, 5, (2, 40, 120)).astype(np.float32)
    bt = rng.integers(-4, 5, (2, 30, 120)).astype(np.float32)
    facts = {n: TensorFacts(True, tuple(d % 16 == 0 for d in x.shape))
             for n, x in (("c", np.zeros((2, 40, 30))), ("a", a), ("bt", bt))}
    assert "split.save" in print_gpu_kernel(lower_gpu(k, "sm_90a", facts))
    want = np.full((2, 40, 30), 7, np.float32)
    tilelang.compile(BMM).g[32, 32, 8](tilelang.partition(want, [1, 32, 32]), a, bt).sync()
    for ctas in (12, 3, 1):
        got = np.full((2, 40, 30), 7, np.float32)
        SimDevice("sm_90a").run(k, (ctas, 1, 1), [got, a, bt], facts)
        np.testing.assert_array_equal(got, want)


GEMV = """
kernel fn gemv<const BM: i32, const BK: i32>(y: &mut Tensor<T, [BM, 1]>, a: &Tensor<T, [?, ?]>, x: &Tensor<T, [?, ?]>) {
    let pa = a.partition([BM, BK]);
    let px = x.partition([BK, 1]);
    let mut acc = zeros::<T>([BM, 1]);
    for k in 0..pa.num_tiles(1) {
        acc = mma(pa.load([block_id(0), k]), px.load([k, 1]), acc);
    }
    y.store(acc);
}
"""


@pytest.mark.parametrize(("dt", "split", "ctas"), [("f32", "0", 0), ("f32", "1", 12), ("i32", "0", 0)],
                         ids=["f32", "f32_split", "i32"])
def test_a_gemv_takes_the_pipeline(dt: str, split: str, ctas: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A GEMV as `mma` of A's tile by a [BK, 1] column (here column 1 of a [K, 3] tensor: strided): the FMA
    pipeline copies the column into one ring row an element a copy and reads it along k (it took the FMA loop
    with no pipeline: the column's rows are not 16-byte chunks); split-K for few tiles too."""
    from tilelang import driver

    monkeypatch.setenv("TILEC_GEMM_SPLITK", split)
    src = GEMV.replace("<T,", f"<{dt},").replace("::<T>", f"::<{dt}>")
    main = (f"fn main() {{ let a = zeros::<{dt}>([8, 8]); let x = zeros::<{dt}>([8, 3]);"
            f" let mut y = zeros::<{dt}>([8, 1]); gemv::<32, 16>(y.partition([32, 1]), &a, &x).sync(); }}\n")
    k = driver.compile(src + main, "ir").output[0]
    M, K = 70, 150
    rng = np.random.default_rng(9)
    a = rng.integers(-4, 5, (M, K)).astype(NP[dt])
    x = rng.integers(-4, 5, (K, 3)).astype(NP[dt])
    got = np.full((M, 1), 7, NP[dt])
    facts = {n: TensorFacts(True, tuple(d % 16 == 0 for d in v.shape)) for n, v in (("y", got), ("a", a), ("x", x))}
    text = print_gpu_kernel(lower_gpu(k, "sm_90a", facts))
    assert "dot.fma.smem" in text and ("split.save" in text) == (split == "1"), text
    SimDevice("sm_90a").run(k, (ctas, 1) if ctas else (-(-M // 32), 1), [got, a, x], facts)
    want = np.full((M, 1), 7, NP[dt])
    tilelang.compile(src).gemv[32, 16](tilelang.partition(want, [32, 1]), a, x).sync()
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(want[:, 0], a.astype(np.int64) @ x[:, 1].astype(np.int64))
