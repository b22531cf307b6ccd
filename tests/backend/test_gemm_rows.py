"""Row coarsening in the Hopper GEMM's split-K variant (`passes/gemm_rows.py`, `TILEC_GEMM_ROWS`; hgemm3,
2026-12-06): the user's 16- or 32-row tiles computed 64 / BM at a time as one m64 warpgroup's rows, the walk
over coarse tiles, the epilogue once on all 64 rows. In llsim against NumPy and, where the split's pieces are
the same (s = 1), bit for bit against the kernel without it (the padded 32-row tile; sm_80's ring for 16
rows); the request the first variant carries ("c:axis:R": the runtime counts coarse tiles); and where it must
not coarsen (an epilogue value of the row tile's own, `num_blocks`, the switch off)."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np
import pytest
from gemm_cases import GemmConfig, linear_case
from llsim import SimDevice
from test_gemm_persistent import _facts, _gemm_kernel

import tilelang
from tilelang import driver
from tilelang.backend import lower_gpu
from tilelang.backend.facts import Short, few_tiles
from tilelang.backend.gpu.printer import print_gpu_kernel


@pytest.mark.parametrize(("cfg", "shape", "ctas", "same"), [
    # 3 row tiles (the second coarse tile's second past the grid), 120 of 128 columns: 2 coarse tiles on 2 CTAs,
    # s = 1
    (GemmConfig(32, 128, 64, out="f32"), (80, 120, 128), 2, True),
    # (heavy, ~7 s: 16 rows, B [N, K]: 4 row tiles as one, on 4 CTAs; the other kernel is sm_80's ring)
    pytest.param(GemmConfig(16, 64, 128, out="f32", trans_b=True), (50, 128, 512), 4, True, marks=pytest.mark.heavy),
    # (heavy, ~7 s: s = 2 pieces of the coarse tiles; the other kernel splits in other pieces: NumPy only)
    pytest.param(GemmConfig(32, 128, 64, out="f32"), (80, 256, 512), 8, False, marks=pytest.mark.heavy),
], ids=["rows32_s1", "rows16_nt", "rows32_pieces"])
def test_coarse_row_tiles_in_the_simulator(cfg: GemmConfig, shape, ctas: int, same: bool, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TILEC_GEMM_SPLITK", "1")
    M, N, K = shape
    k = _gemm_kernel(cfg)
    outs = {}
    for rows in ("1", "0"):
        monkeypatch.setenv("TILEC_GEMM_ROWS", rows)
        a, b, c = cfg.inputs(M, N, K, 17)
        facts = _facts(a=a.shape, b=b.shape, c=c.shape)
        gk = lower_gpu(k, "sm_90a", facts)
        if rows == "1":
            assert gk.fill and "wgmma" in print_gpu_kernel(gk)
        if rows == "0" and not same:
            break
        SimDevice("sm_90a").run(k, (ctas, 1) if gk.persistent else (-(-M // cfg.bm), -(-N // cfg.bn)), [c, a, b], facts)
        cfg.assert_product(a, b, c, 17)
        outs[rows] = c
    if same:
        assert np.array_equal(outs["0"], outs["1"])


def _kernel(src: str, bm: int, bn: int, bk: int):  # type: ignore[no-untyped-def]
    main = (f"\nfn main() {{ let a = zeros::<f16>([8, 8]); let b = zeros::<f16>([8, 8]); let mut o = zeros::<f16>([8, 8]);"
            f" let s = zeros::<f32>([8, 8]); gemm::<{bm}, {bn}, {bk}>(o.partition([{bm}, {bn}]), &a, &b, &s).sync(); }}\n")
    return driver.compile(src + main, "ir").output[0]


ROW_SCALED = """
kernel fn gemm<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<f16, [BM, BN]>, a: &Tensor<f16, [?, ?]>,
                                                           b: &Tensor<f16, [?, ?]>, s: &Tensor<f32, [?, ?]>) {
    let pa = a.partition([BM, BK]);
    let pb = b.partition([BK, BN]);
    let mut acc = zeros::<f32>([BM, BN]);
    for k in 0..pa.num_tiles(1) {
        acc = mma(pa.load([block_id(0), k]), pb.load([k, block_id(1)]), acc);
    }
    let r = s.partition([1, BN]).load([ROW, block_id(1)]);
    c.store((acc * r) as f16);
}
"""


def test_which_gemms_coarsen_their_row_tiles(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The first variant asks for the split-K one counting coarse tiles ("c:0:2", "c:0:4": a 16-row GEMM that
    sm_80's ring runs asks too), the split variant computes 64 rows a coarse tile; a column scale read at the
    row tile's own row (`block_id(0)`) is the row tile's, so no coarse tiles there (the padded 32-row tile;
    16 rows stay on sm_80's ring, no request); nor with `TILEC_GEMM_ROWS=0` or a bad value (an error)."""
    for var in ("TILEC_GEMM_SPLITK", "TILEC_GEMM_ROWS", "TILEC_GEMM_WIDEN"):
        monkeypatch.delenv(var, raising=False)
    facts = _facts(a=(64, 4096), b=(4096, 4096), c=(64, 4096), s=(64, 4096))
    few = {**facts, "c": dataclasses.replace(facts["c"], few_tiles=True)}
    for bm, bn, bk, req in ((32, 128, 64, "c:0:2"), (16, 64, 128, "c:0:4")):
        for row, coarse in (("0", True), ("block_id(0)", False)):
            k = _kernel(ROW_SCALED.replace("ROW", row), bm, bn, bk)
            plain = lower_gpu(k, "sm_90a", facts)
            split = lower_gpu(k, "sm_90a", few)
            text = print_gpu_kernel(split)
            if coarse:
                assert plain.few == req and split.fill and f"f16[64, {bn}]" in text and f"f16[{bm}, " not in text
            elif bm == 32:  # the padded tile, split: the values stay [32, N]
                assert plain.few == "c" and split.fill and f"f16[{bm}, {bn}]" in text
            else:
                assert plain.few == "" and not split.fill
    k = _kernel(ROW_SCALED.replace("ROW", "0"), 32, 128, 64)
    monkeypatch.setenv("TILEC_GEMM_ROWS", "0")
    assert lower_gpu(k, "sm_90a", facts).few == "c" and "f16[32, 128]" in print_gpu_kernel(lower_gpu(k, "sm_90a", few))
    monkeypatch.setenv("TILEC_GEMM_ROWS", "yes")
    with pytest.raises(ValueError, match="TILEC_GEMM_ROWS"):
        lower_gpu(k, "sm_90a", few)


EPILOGUES = """
kernel fn gemm<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<f32, [BM, BN]>, a: &Tensor<f16, [?, ?]>,
                                                           b: &Tensor<f16, [?, ?]>, d: &Tensor<f32, [?, ?]>) {
    let pa = a.partition([BM, BK]);
    let pb = b.partition([BK, BN]);
    let mut acc = zeros::<f32>([BM, BN]);
    for k in 0..pa.num_tiles(1) {
        acc = mma(pa.load([block_id(0), k]), pb.load([k, block_id(1)]), acc);
    }
    EPILOGUE
}
"""


@pytest.mark.parametrize(("epilogue", "coarse"), [
    # the column position read as a value (an internal error: the split walk mapped the positions of the ops
    # before the loop and of the roles' ops apart, and the coarse rewrite had the epilogue read the former's)
    ("c.store(acc + (block_id(1) as f32));", True),
    # a store to another tensor than the grid's: a coarse tile's row tile past the grid would write its rows (d
    # has 128 rows, the grid 3 row tiles of 32): not coarse
    ("c.store(acc); unsafe { store_unchecked(&d, [block_id(0) * BM, block_id(1) * BN], acc + 1.0); }", False),
], ids=["column_as_value", "another_tensor"])
def test_coarse_row_tiles_under_hrev18s_epilogues(epilogue: str, coarse: bool, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """hrev18's review (board 16:15-16:16): the interpreter's result (and d's rows) in llsim, the split variant."""
    monkeypatch.setenv("TILEC_GEMM_SPLITK", "1")
    src = EPILOGUES.replace("EPILOGUE", epilogue)
    main = ("\nfn main() { let a = zeros::<f16>([8, 8]); let b = zeros::<f16>([8, 8]); let mut o = zeros::<f32>([8, 8]);"
            " let d = zeros::<f32>([8, 8]); gemm::<32, 128, 64>(o.partition([32, 128]), &a, &b, &d).sync(); }\n")
    k = driver.compile(src + main, "ir").output[0]
    M, N, K = 80, 120, 128
    rng = np.random.default_rng(3)
    a = rng.integers(-3, 4, (M, K)).astype(np.float16)
    b = rng.integers(-3, 4, (K, N)).astype(np.float16)
    facts = _facts(a=a.shape, b=b.shape, c=(M, N), d=(128, N))
    gk = lower_gpu(k, "sm_90a", facts)
    assert gk.fill
    assert ("f32[32, 128]" not in print_gpu_kernel(gk)) == coarse
    want, wd = np.full((M, N), np.nan, np.float32), np.zeros((128, N), np.float32)
    tilelang.compile(src).gemm[32, 128, 64](tilelang.partition(want, [32, 128]), a, b, wd).sync()
    got, gd = np.full((M, N), np.nan, np.float32), np.zeros((128, N), np.float32)
    SimDevice("sm_90a").run(k, (4, 1), [got, a, b, gd], facts)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(gd, wd)


def test_the_runtime_counts_coarse_tiles() -> None:
    """`facts.few_tiles`: a request "c:0:4" counts 4 row tiles as one (16 x 64 tiles at M = 64: 256 tiles, 64
    coarse: the split-K variant on 132 SMs); a plain "c" the grid's tiles."""
    from tilelang.runtime.cuda import CudaDevice

    assert few_tiles("c", (4, 64)) == ("c", 256) and few_tiles("c:0:4", (4, 64)) == ("c", 64)
    assert few_tiles("c:0:2", (3, 2)) == ("c", 4) and few_tiles("", (3, 2)) == ("", 6)
    facts = _facts(a=(64, 4096), b=(4096, 4096), c=(64, 4096))
    dev = CudaDevice.__new__(CudaDevice)
    dev.ctx = SimpleNamespace(info=SimpleNamespace(sm_count=132, max_smem_optin=227 * 1024))
    dev._variant = lambda pk, key, fs, span: (SimpleNamespace(short=None, split=None, few=pk.few), key)  # type: ignore[method-assign]
    for few, want in (("c:0:4", ("base", ("few", "c"))), ("c", ("base",))):
        assert dev._choose(SimpleNamespace(ir=None, few=few), ("base",), facts, [], None, (4, 64))[1] == want


@pytest.mark.parametrize("split", [pytest.param("0", marks=pytest.mark.heavy), "1"],  # (heavy: ~3 s, the same rows)
                         ids=["one_tile_a_cta", "split_k"])
def test_a_tile_taller_than_the_tensor_computes_its_rows(split: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A 128-row tile over an output of 50 rows (a skinny layer with the user's square tile): the first variant
    asks (`GpuKernel.short` = `facts.Short("c", 0, 64)`), and the variant for a launch whose output has at most
    64 rows (`TensorFacts.rows_at_most`, the runtime's) computes 64 rows (A's box, one m64 block, the epilogue's
    values and its residual's load [64, N]), as one tile a CTA and split along K: the linear layer (0.5 start,
    bias, residual) bit for bit the 128-row kernel's (llsim, both), and the interpreter's."""
    monkeypatch.setenv("TILEC_GEMM_SPLITK", split)
    case = linear_case(50, 136, 256, (128, 128, 64), seed=23)
    k, facts = case.kernel, case.facts
    short = {**facts, "c": dataclasses.replace(facts["c"], rows_at_most=64)}
    outs = {}
    for rows, fs in (("1", short), ("0", facts)):
        monkeypatch.setenv("TILEC_GEMM_ROWS", rows)
        gk = lower_gpu(k, "sm_90a", fs)
        text = print_gpu_kernel(gk)
        if rows == "1":
            assert "f32[64, 128]" in text and "f32[128, 128]" not in text
            assert lower_gpu(k, "sm_90a", facts).short == Short("c", 0, 64)
        else:
            assert "f32[128, 128]" in text
        outs[rows] = case.simulated((4, 1) if gk.persistent else (1, 2), fs)
    np.testing.assert_allclose(outs["1"], case.interpreted(), rtol=1e-4, atol=1e-3)
    assert np.array_equal(outs["0"], outs["1"])


@pytest.mark.heavy  # (~2 s; the shrunk rows' default case is the linear layer's above)
@pytest.mark.parametrize("nt", [False, True], ids=["nn", "nt"])
def test_a_tile_taller_than_the_tensor_in_the_wide_variant(nt: bool) -> None:
    """The variant for an output of at most 64 rows that is also wide (many column tiles: `wide_tiles`): 64 x 256
    wide tiles (5 column tiles of 128 as 3 wide ones, the last one's second past the grid), NumPy's product."""
    cfg = GemmConfig(128, 128, 64, out="f32", trans_b=nt)
    k = _gemm_kernel(cfg)
    a, b, c = cfg.inputs(50, 640, 128, 3)
    facts = _facts(a=a.shape, b=b.shape, c=c.shape)
    facts["c"] = dataclasses.replace(facts["c"], rows_at_most=64, wide_tiles=True)
    text = print_gpu_kernel(lower_gpu(k, "sm_90a", facts))
    assert "acc_columns" in text and "f32[64, 256]" in text and "f32[128, " not in text
    SimDevice("sm_90a").run(k, (1, 1), [c, a, b], facts)
    cfg.assert_product(a, b, c, 3)
