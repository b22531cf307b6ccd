"""The FMA pipeline (`passes/pipeline_fma.py`, `codegen/fma_dot.py`): f32, f64
and integer `mma` loops through a cp.async ring and register-blocked FMAs.

Each case runs in `llsim` (sm_90a or sm_80) and in the interpreter on small
integers, so every product and partial sum is exact whatever the order of
summation and the two must agree bit for bit: a wrong element, a wrong edge
(loads past a tensor's edge read zeros), a stage read before its copy landed
or a register block placed at the wrong rows shows as a difference. The
output starts at 7 (no product of these inputs makes 7 everywhere), so an
element no thread stores shows too. Shapes are odd in every dimension where
the case says so (edge tiles, a K tail, rows that are not whole 16-byte
chunks: element copies). ptxas: no spills at the tiles users write.
"""

from __future__ import annotations

import numpy as np
import pytest
from llsim import SimDevice
from ptxas_report import assemble

import tilelang
from tilelang import driver
from tilelang.backend import compile_kernel, lower_gpu
from tilelang.backend.facts import TensorFacts
from tilelang.backend.gpu.printer import print_gpu_kernel

LOADS = {
    "nn": ("a.partition([BM, BK]).load([block_id(0), k])", "b.partition([BK, BN]).load([k, block_id(1)])",
           "a.partition([BM, BK]).num_tiles(1)"),
    "nt": ("a.partition([BM, BK]).load([block_id(0), k])", "b.partition([BN, BK]).load([block_id(1), k]).transpose()",
           "a.partition([BM, BK]).num_tiles(1)"),
    "tn": ("a.partition([BK, BM]).load([k, block_id(0)]).transpose()", "b.partition([BK, BN]).load([k, block_id(1)])",
           "b.partition([BK, BN]).num_tiles(0)"),
    "tt": ("a.partition([BK, BM]).load([k, block_id(0)]).transpose()",
           "b.partition([BN, BK]).load([block_id(1), k]).transpose()", "b.partition([BN, BK]).num_tiles(1)"),
}
ACC = {"f32": "f32", "f64": "f64", "i32": "i32", "i64": "i64", "u32": "u32"}
NP = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64, "u32": np.uint32}


def _source(lay: str, dt: str, hints: str = "", init: str = "", epilogue: str = "acc") -> str:
    al, bl, kt = LOADS[lay]
    h = f"#[hints({hints})]\n" if hints else ""
    start = init or f"zeros::<{ACC[dt]}>([BM, BN])"
    return f"""
{h}kernel fn g<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<{ACC[dt]}, [BM, BN]>,
        a: &Tensor<{dt}, [?, ?]>, b: &Tensor<{dt}, [?, ?]>) {{
    let mut acc = {start};
    for k in 0..{kt} {{
        acc = mma({al}, {bl}, acc);
    }}
    c.store({epilogue});
}}
"""


def _kernel(src: str, dt: str, tile: tuple[int, int, int] = (32, 32, 8)):  # type: ignore[no-untyped-def]
    bm, bn, bk = tile
    main = (f"\nfn main() {{ let a = zeros::<{dt}>([8, 8]); let b = zeros::<{dt}>([8, 8]);"
            f" let mut o = zeros::<{ACC[dt]}>([8, 8]); g::<{bm}, {bn}, {bk}>(o.partition([{bm}, {bn}]), &a, &b).sync(); }}\n")
    result = driver.compile(src + main, "ir")
    assert result.ok, result.diagnostics
    return next(k for k in result.output if k.name == "g")


def _inputs(lay: str, dt: str, M: int, N: int, K: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    lo = 0 if dt.startswith("u") else -4
    a = rng.integers(lo, 5, (K, M) if lay in ("tn", "tt") else (M, K)).astype(NP[dt])
    b = rng.integers(lo, 5, (N, K) if lay in ("nt", "tt") else (K, N)).astype(NP[dt])
    return a, b


def _check(lay: str, dt: str, tile: tuple[int, int, int], shape: tuple[int, int, int], arch: str = "sm_90a",
           hints: str = "", init: str = "", epilogue: str = "acc") -> str:
    M, N, K = shape
    bm, bn, bk = tile
    src = _source(lay, dt, hints, init, epilogue)
    a, b = _inputs(lay, dt, M, N, K, sum(shape))
    k = _kernel(src, dt, tile)
    got = np.full((M, N), 7, NP[ACC[dt]])
    facts = {n: TensorFacts(True, tuple(d % 16 == 0 for d in x.shape)) for n, x in (("c", got), ("a", a), ("b", b))}
    text = print_gpu_kernel(lower_gpu(k, arch, facts))
    SimDevice(arch).run(k, (-(-M // bm), -(-N // bn)), [got, a, b], facts)
    want = np.full((M, N), 7, NP[ACC[dt]])
    tilelang.compile(src).g[bm, bn, bk](tilelang.partition(want, [bm, bn]), a, b).sync()
    np.testing.assert_array_equal(got, want)
    return text


@pytest.mark.parametrize(
    ("lay", "dt", "tile", "shape", "arch"),
    [
        ("nn", "f32", (32, 32, 8), (45, 37, 29), "sm_90a"),  # edges everywhere, element copies (29 % 4)
        ("nt", "f32", (32, 64, 8), (64, 80, 32), "sm_90a"),  # both operands read along k
        ("tn", "f32", (32, 32, 8), (40, 32, 24), "sm_80"),  # A read along M
        ("nn", "i32", (32, 32, 16), (37, 45, 48), "sm_90a"),  # integers: a multiply and an add, wrapping
    ],
    ids=["nn_f32_edges", "nt_f32", "tn_f32_sm80", "nn_i32"],
)
def test_the_pipeline_agrees_with_the_interpreter(lay: str, dt: str, tile, shape, arch: str) -> None:  # type: ignore[no-untyped-def]
    text = _check(lay, dt, tile, shape, arch)
    assert "dot.fma.smem" in text and "cp.async" in text, text


@pytest.mark.heavy
@pytest.mark.parametrize(
    ("lay", "dt", "tile", "shape", "arch"),
    [
        ("nn", "f64", (32, 32, 8), (40, 50, 30), "sm_90a"),  # 8-byte elements: 2 a vector
        ("tn", "f64", (32, 32, 8), (40, 50, 32), "sm_90a"),
        ("nt", "i64", (32, 32, 8), (33, 40, 24), "sm_80"),
        ("nn", "u32", (32, 32, 16), (37, 45, 48), "sm_90a"),
        ("nn", "f32", (64, 64, 16), (100, 90, 70), "sm_80"),  # 2 warps, 8x8 a thread
        ("nt", "f32", (64, 64, 16), (100, 90, 70), "sm_90a"),
        ("tn", "f32", (64, 64, 16), (100, 90, 72), "sm_90a"),
        ("nn", "f32", (32, 32, 4), (37, 29, 41), "sm_90a"),  # K rows of one chunk: no padding
        ("tt", "f32", (32, 64, 8), (50, 70, 36), "sm_90a"),  # both operands transposed
        ("nn", "f32", (48, 96, 8), (100, 100, 20), "sm_90a"),  # tiles that are not powers of two
        ("nn", "f32", (64, 16, 16), (100, 40, 50), "sm_90a"),  # 16 columns: 8 x 4 lanes a warp
    ],
    ids=["nn_f64", "tn_f64", "nt_i64_sm80", "nn_u32", "nn_64_sm80", "nt_64", "tn_64", "nn_k4", "tt", "nn_48x96",
         "nn_64x16"],
)
def test_more_types_and_tiles(lay: str, dt: str, tile, shape, arch: str) -> None:  # type: ignore[no-untyped-def]
    text = _check(lay, dt, tile, shape, arch)
    assert "dot.fma.smem" in text, text


@pytest.mark.parametrize(("lay", "dt", "tile", "shape"), [
    ("nn", "f32", (32, 32, 8), (45, 37, 29)),
    pytest.param("nt", "f64", (32, 32, 8), (40, 50, 32), marks=pytest.mark.heavy),
    pytest.param("tn", "i32", (32, 64, 4), (33, 70, 24), marks=pytest.mark.heavy),
], ids=["nn_f32", "nt_f64", "tn_i32_one_group"])
def test_the_prefetching_schedule(lay: str, dt: str, tile, shape, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`TILEC_FMA_PREFETCH=1`: the wait and barrier before each stage's last group, the next stage's first
    values carried across the loop (llsim raises on a read of a chunk still in flight or a copy into one)."""
    monkeypatch.setenv("TILEC_FMA_PREFETCH", "1")
    text = _check(lay, dt, tile, shape)
    assert "prefetch" in text, text


def test_a_loaded_start_and_an_epilogue() -> None:
    """The accumulator starts from a tile loaded before the loop (converted into the loop's
    layout) and the epilogue reads it in the loop's layout; 4 warps hinted (a 4x4 block a thread)."""
    text = _check("nn", "f32", (32, 32, 8), (40, 48, 24), hints="num_warps = 4",
                  init="c.load()", epilogue="maximum(acc * 2.0 - 3.0, 0.0)")
    assert "dot.fma.smem" in text and "warps 4" in text, text


def test_the_switch_keeps_the_loop_without_a_pipeline(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TILEC_FMA_PIPELINE", "0")
    k = _kernel(_source("nn", "f32"), "f32")
    text = print_gpu_kernel(lower_gpu(k, "sm_90a", None))
    assert "dot.fma " in text and "dot.fma.smem" not in text, text


def test_an_eight_bit_product_keeps_the_fma_loop() -> None:
    """i8 inputs (an i32 accumulator) are not among the pipeline's types: the FMA loop as before."""
    src = _source("nn", "i32").replace("a: &Tensor<i32", "a: &Tensor<i8").replace("b: &Tensor<i32", "b: &Tensor<i8")
    main = ("\nfn main() { let a = zeros::<i8>([8, 8]); let b = zeros::<i8>([8, 8]);"
            " let mut o = zeros::<i32>([8, 8]); g::<32, 32, 8>(o.partition([32, 32]), &a, &b).sync(); }\n")
    result = driver.compile(src + main, "ir")
    assert result.ok, result.diagnostics
    text = print_gpu_kernel(lower_gpu(next(k for k in result.output if k.name == "g"), "sm_90a", None))
    assert "dot.fma " in text and "dot.fma.smem" not in text, text


@pytest.mark.parametrize(("lay", "tile"), [("nn", (64, 64, 16)), ("nn", (128, 128, 16)), ("nt", (128, 128, 16)),
                                           ("tn", (128, 128, 32))],
                         ids=["nn_64", "nn_128", "nt_128", "tn_128x32"])
def test_ptxas_no_spills(lay: str, tile, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    k = _kernel(_source(lay, "f32"), "f32", tile)
    facts = {p.name: TensorFacts(True, (True, True)) for p in k.tensor_params}
    ptx = compile_kernel(k, "sm_90a", facts).ptx
    assert "ld.shared.v4" in ptx and "cp.async.cg.shared.global" in ptx
    r = assemble(ptx, "sm_90a")
    assert r.max_spill_stores == 0, r.text


BMM = """
kernel fn g<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<f32, [1, BM, BN]>, a: &Tensor<f32, [?, ?, ?]>,
                                                        bt: &Tensor<f32, [?, ?, ?]>) {
    let pa = a.partition([1, BM, BK]);
    let pb = bt.partition([1, BN, BK]);
    let mut acc = zeros::<f32>([BM, BN]);
    for k in 0..pa.num_tiles(2) {
        let tb = pb.load([block_id(0), block_id(2), k]).reshape([BN, BK]);
        acc = mma(pa.load([block_id(0), block_id(1), k]).reshape([BM, BK]), tb.transpose(), acc);
    }
    c.store(acc.reshape([1, BM, BN]));
}
fn main() {
    let a = zeros::<f32>([2, 8, 8]);
    let b = zeros::<f32>([2, 8, 8]);
    let mut c = zeros::<f32>([2, 8, 8]);
    g::<32, 32, 8>(c.partition([1, 32, 32]), &a, &b).sync();
}
"""


def test_batched_operands_take_the_pipeline() -> None:
    """A batched GEMM written the natural way (a tile of each 3-D tensor reshaped to a matrix in the loop, B
    stored [N, K]): the FMA pipeline copies the batch's tiles; edges in M, N and K and a batch past the
    inputs' end (c has 2 matrices, a and b 1: the second reads zeros) agree with the interpreter exactly."""
    k = next(x for x in driver.compile(BMM, "ir").output if x.name == "g")
    rng = np.random.default_rng(5)
    a = rng.integers(-4, 5, (1, 40, 20)).astype(np.float32)
    bt = rng.integers(-4, 5, (1, 30, 20)).astype(np.float32)
    got = np.full((2, 40, 30), 7, np.float32)
    facts = {n: TensorFacts(True, tuple(d % 16 == 0 for d in x.shape)) for n, x in (("c", got), ("a", a), ("bt", bt))}
    assert "dot.fma.smem" in print_gpu_kernel(lower_gpu(k, "sm_90a", facts))
    SimDevice("sm_90a").run(k, (2, 2, 1), [got, a, bt], facts)
    want = np.full((2, 40, 30), 7, np.float32)
    tilelang.compile(BMM).g[32, 32, 8](tilelang.partition(want, [1, 32, 32]), a, bt).sync()
    assert (want[1] == 0).all()
    np.testing.assert_array_equal(got, want)
