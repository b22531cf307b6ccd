"""The Hopper GEMM pipeline with tiles loaded in its epilogue (`pipeline._epilogue`, `g.AccLoad`,
`codegen/acc_load.py`): a linear layer's bias per column, a scale per row, a residual tile, each loaded
into the accumulator's layout (before, such an epilogue kept the whole GEMM on mma.sync with no
pipeline: `benchmarks/cliffs.py`'s `linear+bias+relu`). Run in llsim at sm_90a against the interpreter,
with edges in M, N and K (the loads past the edge read zeros)."""

from __future__ import annotations

import numpy as np
import pytest
from llsim import SimDevice

import tilelang
from tilelang import driver
from tilelang.backend import explain, lower_gpu
from tilelang.backend.facts import TensorFacts
from tilelang.backend.gpu.printer import print_gpu_kernel

SRC = """
kernel fn linear<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<OUT, [BM, BN]>,
        a: &Tensor<f16, [?, ?]>, w: &Tensor<f16, [?, ?]>, bias: &Tensor<BT, [?]>, scale: &Tensor<f32, [?]>,
        res: &Tensor<f32, [?, ?]>) {
    let pa = a.partition([BM, BK]);
    let pw = w.partition([BN, BK]);
    let mut acc = zeros::<f32>([BM, BN]);
    for k in 0..pa.num_tiles(1) {
        acc = mma(pa.load([block_id(0), k]), pw.load([block_id(1), k]).transpose(), acc);
    }
    EPILOGUE
}
"""
EPILOGUES = {
    "bias_relu": """let b = bias.partition([BN]).load([block_id(1)]).reshape([1, BN]) as f32;
    c.store(maximum(acc + b, 0.0) as OUT);""",
    "row_scale": """let s = scale.partition([BM]).load([block_id(0)]).reshape([BM, 1]);
    c.store((acc * s) as OUT);""",
    "residual": """c.store((acc + res.load_like(c)) as OUT);""",
    "all": """let b = bias.partition([BN]).load([block_id(1)]).reshape([1, BN]) as f32;
    let s = scale.partition([BM]).load([block_id(0)]).reshape([BM, 1]);
    c.store(((acc + b) * s + res.load_like(c)) as OUT);""",
}


def _src(epi: str, out: str, bt: str) -> str:
    return SRC.replace("EPILOGUE", EPILOGUES[epi]).replace("OUT", out).replace("BT", bt)


def _kernel(src: str, out: str = "f32", bt: str = "f32", bm: int = 64):  # type: ignore[no-untyped-def]
    main = ("fn main() { let a = zeros::<f16>([8, 8]); let b = zeros::<BT>([8]); let s = zeros::<f32>([8]);"
            " let r = zeros::<f32>([8, 8]); let mut c = zeros::<OUT>([8, 8]);"
            f" linear::<{bm}, 64, 32>(c.partition([{bm}, 64]), &a, &a, &b, &s, &r).sync(); }}\n")
    return driver.compile(src + main.replace("OUT", out).replace("BT", bt), "ir").output[0]


@pytest.mark.parametrize(("epi", "out", "bt", "bm", "hint"), [
    ("bias_relu", "f16", "f32", 64, ""), ("bias_relu", "f32", "f16", 64, ""), ("row_scale", "f32", "f32", 64, ""),
    ("residual", "f16", "f32", 64, ""), ("all", "f32", "f16", 64, ""),
    ("all", "f32", "f32", 128, ""),  # one warpgroup of 128 rows: two m64 blocks a thread
    ("all", "f16", "f32", 128, "#[hints(num_warps = 8)]\n"),  # two consumer warpgroups of 64 rows
])
def test_an_epilogue_that_loads_runs_on_the_pipeline_in_the_simulator(epi: str, out: str, bt: str, bm: int,
                                                                       hint: str) -> None:
    src = hint + _src(epi, out, bt).lstrip()
    k = _kernel(src, out, bt, bm)
    M, N, K = 100, 72, 80  # edges in every dim; N past the bias and the residual's columns
    shapes = {"c": (M, N), "a": (M, K), "w": (N, K), "bias": (N,), "scale": (M,), "res": (M, N)}
    facts = {n: TensorFacts(True, tuple(d % 16 == 0 for d in s)) for n, s in shapes.items()}
    gk = lower_gpu(k, "sm_90a", facts)
    assert explain.path_of(gk) == "wgmma-pipeline" and gk.notes == ()
    assert "acc_load @" in print_gpu_kernel(gk)
    rng = np.random.default_rng(11)
    a = rng.standard_normal((M, K)).astype(np.float16)
    w = rng.standard_normal((N, K)).astype(np.float16)
    bias = rng.standard_normal(N).astype(np.float32)
    if bt == "f16":
        bias = bias.astype(np.float16)
    scale = rng.random(M).astype(np.float32) + 0.5
    res = rng.standard_normal((M, N)).astype(np.float32)
    odt = np.float16 if out == "f16" else np.float32
    want = np.zeros((M, N), odt)
    mod = tilelang.compile(src)
    mod.linear[bm, 64, 32](tilelang.partition(want, [bm, 64]), a, w, bias, scale, res).sync()  # the interpreter
    got = np.full((M, N), np.nan, odt)
    SimDevice("sm_90a").run(k, (-(-M // bm), -(-N // 64)), [got, a, w, bias, scale, res], facts)
    tol = 2e-3 if out == "f16" else 1e-4
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol)


def test_a_load_after_a_store_of_its_tensor_keeps_the_generic_path() -> None:
    src = _src("residual", "f32", "f32").replace("c.store((acc + res.load_like(c)) as f32);",
                                                 "c.store(acc);\n    c.store(acc + c.load());")
    gk = lower_gpu(_kernel(src), "sm_90a", None)
    assert explain.path_of(gk) != "wgmma-pipeline"
    assert any("not an epilogue" in n.message for n in gk.notes)


def test_c_is_alpha_ab_plus_beta_c_in_the_simulator() -> None:
    """The output's own tile loaded before it is stored (BLAS's beta * C)."""
    src = _src("residual", "f32", "f32").replace("c.store((acc + res.load_like(c)) as f32);",
                                                 "c.store(acc * 0.5 + c.load() * 2.0);")
    k = _kernel(src)
    M, N, K = 100, 72, 80
    shapes = {"c": (M, N), "a": (M, K), "w": (N, K), "bias": (N,), "scale": (M,), "res": (M, N)}
    facts = {n: TensorFacts(True, tuple(d % 16 == 0 for d in s)) for n, s in shapes.items()}
    assert explain.path_of(lower_gpu(k, "sm_90a", facts)) == "wgmma-pipeline"
    rng = np.random.default_rng(12)
    a = rng.standard_normal((M, K)).astype(np.float16)
    w = rng.standard_normal((N, K)).astype(np.float16)
    c0 = rng.standard_normal((M, N)).astype(np.float32)
    rest = [np.zeros(N, np.float32), np.zeros(M, np.float32), np.zeros((M, N), np.float32)]
    want = c0.copy()
    tilelang.compile(src).linear[64, 64, 32](tilelang.partition(want, [64, 64]), a, w, *rest).sync()
    got = c0.copy()
    SimDevice("sm_90a").run(k, (2, 2), [got, a, w, *rest], facts)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(want, (a.astype(np.float64) @ w.astype(np.float64).T) * 0.5 + c0 * 2.0,
                               rtol=1e-4, atol=1e-3)


def test_a_bool_mask_and_an_int_column_cast_to_f32_in_the_simulator() -> None:
    """Other element types: a bool [M, N] tile and an i32 column offset cast to f32 (the cast done after the
    load, on [M, N]: it commutes with the broadcast)."""
    src = """
kernel fn g<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<f32, [BM, BN]>,
        a: &Tensor<f16, [?, ?]>, b: &Tensor<f16, [?, ?]>, keep: &Tensor<bool, [?, ?]>, off: &Tensor<i32, [?]>) {
    let pa = a.partition([BM, BK]);
    let pb = b.partition([BK, BN]);
    let mut acc = zeros::<f32>([BM, BN]);
    for k in 0..pa.num_tiles(1) {
        acc = mma(pa.load([block_id(0), k]), pb.load([k, block_id(1)]), acc);
    }
    let o = off.partition([BN]).load([block_id(1)]).reshape([1, BN]);
    c.store(where(keep.load_like(c), acc + (o as f32), -1.0));
}
"""
    main = ("fn main() { let a = zeros::<f16>([8, 8]); let k = zeros::<bool>([8, 8]); let o = zeros::<i32>([8]);"
            " let mut c = zeros::<f32>([8, 8]); g::<64, 64, 32>(c.partition([64, 64]), &a, &a, &k, &o).sync(); }\n")
    k = driver.compile(src + main, "ir").output[0]
    M, N, K = 70, 80, 64
    shapes = {"c": (M, N), "a": (M, K), "b": (K, N), "keep": (M, N), "off": (N,)}
    facts = {n: TensorFacts(True, tuple(d % 16 == 0 for d in s)) for n, s in shapes.items()}
    assert explain.path_of(lower_gpu(k, "sm_90a", facts)) == "wgmma-pipeline"
    rng = np.random.default_rng(1)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    keep = rng.random((M, N)) > 0.3
    off = rng.integers(-5, 5, N).astype(np.int32)
    want = np.zeros((M, N), np.float32)
    tilelang.compile(src).g[64, 64, 32](tilelang.partition(want, [64, 64]), a, b, keep, off).sync()
    got = np.full((M, N), np.nan, np.float32)
    SimDevice("sm_90a").run(k, (2, 2), [got, a, b, keep, off], facts)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


PAIRS = """
kernel fn up<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<f16, [BM, BN]>,
        a: &Tensor<f16, [?, ?]>, b: &Tensor<f16, [?, ?]>, bias: &Tensor<f16, [?]>, res: &Tensor<f16, [?, ?]>) {
    let pa = a.partition([BM, BK]);
    let pb = b.partition([BK, BN]);
    let mut acc = zeros::<f32>([BM, BN]);
    for k in 0..pa.num_tiles(1) {
        acc = mma(pa.load([block_id(0), k]), pb.load([k, block_id(1)]), acc);
    }
    let h = acc + (bias.partition([BN]).load([block_id(1)]).reshape([1, BN]) as f32);
    c.store((res.load_like(c) as f32 + h * 0.5) as f16);
}
fn main() { let a = zeros::<f16>([8, 8]); let b = zeros::<f16>([8]); let mut c = zeros::<f16>([8, 8]);
            up::<64, 64, 32>(c.partition([64, 64]), &a, &a, &b, &a).sync(); }
"""


@pytest.mark.parametrize(("n", "pairs"), [(80, "1"), (80, "0"), (72, "1")])
def test_a_threads_two_f16_columns_are_one_load(n: int, pairs: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """hcliff13: an f16 residual and an f16 bias read in pairs of adjacent columns (one 4-byte load each) where
    the facts make every pair wholly inside or outside the tensor and aligned (N = 80: the second tile's pairs
    past column 80 read zeros); an element a load at N = 72 (a pair could straddle the edge) and with
    `TILEC_ACC_PAIRS=0`. The interpreter's values in each (llsim, sm_90a)."""
    from tilelang.backend import emit_ptx

    monkeypatch.setenv("TILEC_ACC_PAIRS", pairs)
    k = driver.compile(PAIRS, "ir").output[0]
    M, K = 100, 64
    shapes = {"c": (M, n), "a": (M, K), "b": (K, n), "bias": (n,), "res": (M, n)}
    facts = {nm: TensorFacts(True, tuple(d % 16 == 0 for d in s)) for nm, s in shapes.items()}
    assert explain.path_of(lower_gpu(k, "sm_90a", facts)) == "wgmma-pipeline"
    ptx = emit_ptx(k, "sm_90a", facts)
    paired = n == 80 and pairs == "1"
    assert ("ld.global.b16" in ptx) != paired  # (paired: every 2-byte load a 4-byte one)
    rng = np.random.default_rng(13)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = (rng.standard_normal((K, n)) * 0.2).astype(np.float16)
    bias = rng.standard_normal(n).astype(np.float16)
    res = rng.standard_normal((M, n)).astype(np.float16)
    want = np.zeros((M, n), np.float16)
    tilelang.compile(PAIRS).up[64, 64, 32](tilelang.partition(want, [64, 64]), a, b, bias, res).sync()
    got = np.full((M, n), np.nan, np.float16)
    SimDevice("sm_90a").run(k, (2, 2), [got, a, b, bias, res], facts)
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=2e-3, atol=2e-3)
