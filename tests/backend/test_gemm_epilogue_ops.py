"""GEMM epilogues that compute on a small tile before broadcasting it (`passes/gemm_epilogue.py`, round 18,
hgemm4): a bias scaled or cast and shifted before its broadcast, a column or row mask from an `arange`, a scale
from a column's index, a row scale times a column scale. Each sent the whole GEMM to sm_80's ring before
("what follows the loop is not an epilogue"); now the small tile's expression is computed again on [M, N] in
the accumulator's layout (`g.AccLoad`, `g.AccIndex`). Run in llsim at sm_90a against the interpreter in every
form the epilogue is rewritten by: one tile a CTA, column parts (an `arange`'s column offset moves), the wide
variant (each user tile its own columns), split-K, pingpong, coarse 32-row tiles (a row `arange` keeps them
apart: its index is the user tile's row); a scalar read from a tile after the loop (`.item()`); an `if` on a
scalar (its sides computed and picked: `_flatten`)."""

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
from tilelang.backend.gpu import nodes as g
from tilelang.backend.gpu.printer import print_gpu_kernel

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import hgemm4_device  # noqa: E402

# the kernel benchmarks/hgemm4_device.py times on the GPU, its output type OUT and bias type BT left open
SRC = hgemm4_device.SRC
EPILOGUES = {  # name: (the epilogue, the bias's type)
    "scaled_bias": ("""let b = (bias.partition([BN]).load([block_id(1)]) * s).reshape([1, BN]);
    c.store(maximum(acc + b, 0.0) as OUT);""", "f32"),
    "cast_bias_op": ("""let b = (bias.partition([BN]).load([block_id(1)]) as f32) * 2.0 - 1.0;
    c.store((acc + b.reshape([1, BN])) as OUT);""", "f16"),
    "bias_1d": ("""c.store((acc + bias.partition([BN]).load([block_id(1)]) * s) as OUT);""", "f32"),
    "col_mask": ("""let col = arange::<i32>(BN) + block_id(1) * BN;
    c.store(where((col < n).reshape([1, BN]), acc, -1.0) as OUT);""", "f32"),
    "row_mask": ("""let row = arange::<i32>(BM).reshape([BM, 1]) + block_id(0) * BM;
    c.store(where(row < n, acc * s, 0.5) as OUT);""", "f32"),
    "tile_rows": ("""let row = arange::<i32>(BM).reshape([BM, 1]);
    c.store(where(row < 20, acc, 0.5) as OUT);""", "f32"),
    "col_index": ("""let col = (arange::<i32>(BN) + block_id(1) * BN) as f32;
    let f = (col * 0.25 + 1.0).reshape([1, BN]);
    c.store((acc * f + where(col.reshape([1, BN]) < 40.0, 1.0, 0.0)) as OUT);""", "f32"),
    "item": ("""let t = scale.partition([1]).load([1]).item() * s;
    c.store((acc * t + (scale.partition([BM]).load([block_id(0)]) * t).reshape([BM, 1])) as OUT);""", "f32"),
    "branch": ("""let o = if block_id(0) == 0 { acc * 2.0 } else { acc - 1.0 };
    if block_id(1) % 2 == 0 {
        c.store(maximum(o + bias.partition([BN]).load([block_id(1)]).reshape([1, BN]), 0.0) as OUT);
    } else {
        c.store((o * s) as OUT);
    }""", "f32"),
    # split-K gave each piece its K range by substituting the loop's bounds everywhere: the epilogue's `0` here is
    # the IR's one constant 0, the loop's start too, and became the piece's start (wrong values on main c5e32a66)
    "first_row_tile": ("""let z = block_id(0) == 0; c.store(where(z, acc * 2.0, acc - 1.0) as OUT);""", "f32"),
    "row_times_col": ("""let rs = scale.partition([BM]).load([block_id(0)]) * s;
    let cs = exp(bias.partition([BN]).load([block_id(1)]) as f32);
    c.store((acc * rs.reshape([BM, 1]) * cs.reshape([1, BN])) as OUT);""", "f16"),
}
# form: (environment, CTAs of the launch: None one a tile, the shape M, N, K, the tile BM, BN, BK)
FORMS = {
    "plain": ({}, None, (100, 72, 80), (64, 64, 32)),
    "parts": ({}, None, (40, 500, 16), (64, 512, 16)),  # two column parts of 256, one tile
    "wide": ({"TILEC_GEMM_WIDEN": "1", "TILEC_GEMM_PERSISTENT": "0"}, 1, (70, 150, 48), (64, 64, 16)),
    "split": ({"TILEC_GEMM_SPLITK": "1", "TILEC_GEMM_PERSISTENT": "0"}, 12, (70, 150, 128), (64, 64, 16)),
    "pingpong": ({"TILEC_GEMM_PERSISTENT": "2"}, 2, (100, 150, 48), (64, 64, 16)),
    "rows": ({"TILEC_GEMM_SPLITK": "1", "TILEC_GEMM_PERSISTENT": "0"}, 12, (90, 150, 128), (32, 64, 16)),
}
FAST = {("scaled_bias", "plain"), ("cast_bias_op", "plain"), ("col_mask", "plain"), ("row_mask", "plain"),
        ("col_index", "plain"), ("row_times_col", "plain"), ("col_index", "parts"), ("col_mask", "wide"),
        ("col_index", "split"), ("tile_rows", "rows"), ("item", "plain"), ("branch", "plain"),
        ("branch", "wide"), ("first_row_tile", "split")}  # (the others heavy: ~1-5 s each)


def _source(epi: str, out: str) -> str:
    body, bt = EPILOGUES[epi]
    return SRC.replace("EPILOGUE", body).replace("OUT", out).replace("BT", bt)


def _kernel(src: str, tile: tuple[int, int, int], bt: str, out: str):  # type: ignore[no-untyped-def]
    bm, bn, bk = tile
    main = (f"fn main() {{ let a = zeros::<f16>([8, 8]); let b = zeros::<{bt}>([8]); let s = zeros::<f32>([8]);"
            f" let mut c = zeros::<{out}>([8, 8]);"
            f" mm::<{bm}, {bn}, {bk}>(c.partition([{bm}, {bn}]), &a, &a, &b, &s, 0.5, 7).sync(); }}\n")
    return driver.compile(src + main, "ir").output[0]


def _facts(**shapes: tuple[int, ...]) -> dict[str, TensorFacts]:
    return {n: TensorFacts(True, tuple(d % 16 == 0 for d in s)) for n, s in shapes.items()}


CASES = [pytest.param(e, f, marks=() if (e, f) in FAST else pytest.mark.heavy) for f in FORMS for e in EPILOGUES
         if not (f == "rows" and e in ("row_times_col", "item"))]  # (a load per row: a 32-row tile stays off)


@pytest.mark.parametrize(("epi", "form"), CASES)
def test_the_epilogue_on_the_pipeline_in_the_simulator(epi: str, form: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    env, ctas, (M, N, K), tile = FORMS[form]
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    out = "f16" if epi in ("cast_bias_op", "row_mask") else "f32"
    bt = EPILOGUES[epi][1]
    src = _source(epi, out)
    k = _kernel(src, tile, bt, out)
    facts = _facts(c=(M, N), a=(M, K), w=(N, K), bias=(N,), scale=(M,))
    gk = lower_gpu(k, "sm_90a", facts)
    assert explain.path_of(gk) == "wgmma-pipeline" and explain.refusals(gk) == [], [x.message for x in gk.notes]
    text = print_gpu_kernel(gk)
    assert ("acc_index" in text) == ("arange" in EPILOGUES[epi][0])
    if form == "rows":  # a row's index is its user tile's: coarse tiles only where no `arange` reads the rows
        assert ("f32[32, 64]" not in text) == (epi not in ("row_mask", "tile_rows", "branch", "first_row_tile"))
    if form == "parts" and "arange::<i32>(BN)" in EPILOGUES[epi][0]:
        assert "acc_index dim 1 + 256" in text  # the second part's columns
    rng = np.random.default_rng(len(epi) + 10 * len(form))
    np_bt = np.float16 if bt == "f16" else np.float32
    a = rng.standard_normal((M, K)).astype(np.float16)
    w = rng.standard_normal((N, K)).astype(np.float16)
    bias = (rng.standard_normal(N) * 0.5).astype(np_bt)
    scale = (rng.random(M) + 0.5).astype(np.float32)
    odt = np.float16 if out == "f16" else np.float32
    n = 40 if epi in ("col_mask", "row_mask") else 7
    bm, bn, bk = tile
    want = np.full((M, N), np.nan, odt)
    mod = tilelang.compile(src)
    mod.mm[bm, bn, bk](tilelang.partition(want, [bm, bn]), a, w, bias, scale, 0.5, n).sync()  # the interpreter
    got = np.full((M, N), np.nan, odt)
    grid = (ctas, 1) if ctas else (-(-M // bm), -(-N // bn))
    SimDevice("sm_90a").run(k, grid, [got, a, w, bias, scale, np.float32(0.5), np.int32(n)], facts)
    tol = 2e-3 if out == "f16" else 1e-4
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol)


def test_a_small_tile_read_twice_is_computed_for_each_broadcast() -> None:
    """`col` feeds two broadcasts (a scale and a mask): each its own [M, N] values, no value shared between
    them that the layout would have to move."""
    _, tile = FORMS["plain"][2], FORMS["plain"][3]
    gk = lower_gpu(_kernel(_source("col_index", "f32"), tile, "f32", "f32"), "sm_90a",
                   _facts(c=(128, 128), a=(128, 64), w=(128, 64), bias=(128,), scale=(128,)))
    idx = [op for op in g.walk(gk.body) if isinstance(op, g.AccIndex)]
    assert len(idx) == 2 and {op.dim for op in idx} == {1}


def test_an_if_that_stores_on_one_side_stays_off_the_pipeline() -> None:
    src = SRC.replace("EPILOGUE", "c.store(acc); if n > 0 { c.store(acc * 2.0); }")
    gk = lower_gpu(_kernel(src.replace("OUT", "f32").replace("BT", "f32"), (64, 64, 32), "f32", "f32"), "sm_90a", None)
    assert explain.path_of(gk) != "wgmma-pipeline"
    note = next(x for x in gk.notes if "`if` here" in x.message)
    assert any("where(cond, x, y)" in h for h in note.help), note


def test_a_small_tile_the_epilogue_reduces_stays_off_the_pipeline() -> None:
    """A small tile reduced to a scalar (not element-wise on its way to [M, N]): refused as before, with the
    note."""
    src = SRC.replace("EPILOGUE", "c.store(acc + bias.partition([BN]).load([block_id(1)]).sum());")
    gk = lower_gpu(_kernel(src.replace("OUT", "f32").replace("BT", "f32"), (64, 64, 32), "f32", "f32"), "sm_90a", None)
    assert explain.path_of(gk) != "wgmma-pipeline"
    assert any("not an epilogue" in x.message for x in gk.notes)
