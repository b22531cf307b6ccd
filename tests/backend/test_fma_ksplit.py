"""Split-K among warps on the FMA pipeline (`passes/pipeline_fma.py`, `_split` / `split_layout`): where a skinny
accumulator has too few elements to give each warp its own (a GEMV of a few tokens, a 16-row tile), each warp (and,
in a tile shorter than the lanes, each half-warp) holds a copy of the whole tile and sums its share of every stage's
k-steps; `FmaPartsSum` adds the copies in part order after the loop (hgemv; call 39 timed the 4-token f16 GEMV at
0.76x torch on 2 warps of 1 x 4, 692 SASS instructions a warp a 64-wide K step, against 292 here on 4 warps).

The products run in `llsim` and in the interpreter on small integers (every product and partial sum exact in f32,
whatever the order or split), so the two agree bit for bit; the output starts at 7, so an element no thread stores
shows. Shapes are odd where the case says so: an edge tile of rows, a K tail read as zeros."""

from __future__ import annotations

import numpy as np
import pytest
from llsim import SimDevice

import tilelang
from tilelang import partition as P
from tilelang.backend import compile_kernel, lower_gpu
from tilelang.backend.facts import TensorFacts
from tilelang.backend.gpu.layouts import Blocked
from tilelang.backend.gpu.passes.pipeline_fma import split_layout
from tilelang.backend.gpu.printer import print_gpu_kernel

SRC = """
HINT
kernel fn gemv<const BM: i32, const BK: i32, const NB: i32>(y: &mut Tensor<f32, [BM, NB]>, w: &Tensor<DT, [?, ?]>,
                                                            x: &Tensor<DT, [?, NB]>) {
    let pw = w.partition([BM, BK]);
    let px = x.partition([BK, NB]);
    let mut acc = INIT;
    for k in 0..pw.num_tiles(1) {
        acc = mma(pw.load([block_id(0), k]), px.load([k, 0]), acc);
    }
    y.store(acc);
}
"""
_NP = {"f16": np.float16, "bf16": np.float32, "f32": np.float32}  # (llsim gives bf16 tensors bf16 memory)


def _src(dt: str, init: str = "zeros::<f32>([BM, NB])", hint: str = "") -> str:
    return SRC.replace("DT", dt).replace("INIT", init).replace("HINT", hint)


def _facts(kir, shapes: dict[str, tuple[int, ...]]) -> dict[str, TensorFacts]:  # type: ignore[no-untyped-def]
    return {p.name: TensorFacts(True, tuple(d % 16 == 0 for d in shapes[p.name])) for p in kir.tensor_params}


def _run(dt: str, bm: int, bk: int, nb: int, M: int, K: int, **src: str) -> str:
    """The kernel's GPU IR at sm_90a, after checking llsim against the interpreter and NumPy's exact product."""
    rng = np.random.default_rng(M * 7 + K + nb)
    w = rng.integers(-4, 5, (M, K)).astype(_NP[dt])
    x = rng.integers(-4, 5, (K, nb)).astype(_NP[dt])
    y = np.full((M, nb), 7, np.float32)
    op = tilelang.compile(_src(dt, **src)).gemv[bm, bk, nb](P(y, [bm, nb]), w, x)
    kir = op._plan.kir
    facts = _facts(kir, {"y": y.shape, "w": w.shape, "x": x.shape})
    text = print_gpu_kernel(lower_gpu(kir, "sm_90a", facts))
    sim = [np.array(h) for h in op._hosts]
    SimDevice("sm_90a").run(kir, (-(-M // bm),), op._kernel_args(sim), facts)
    op.sync()  # the interpreter
    np.testing.assert_array_equal(sim[0], op._hosts[0])
    start = 1.0 if "full" in src.get("init", "") else 0.0
    np.testing.assert_array_equal(sim[0], w.astype(np.float32) @ x.astype(np.float32) + start)
    return text


@pytest.mark.parametrize(("dt", "bm", "bk", "M", "K", "warps", "parts"), [
    ("bf16", 32, 16, 24, 24, 4, 4),  # 4 warps of 1 x 4, each 4 k-steps of a stage; an edge tile, a K tail
    ("f16", 16, 32, 20, 72, 4, 8),  # a 16-row tile: the lanes' halves split too (2 x 4 warps), K tail
    ("f32", 16, 32, 20, 40, 4, 8),  # no layout splits 16 rows among warps (f32 keeps `default_warps` elsewhere)
], ids=["bf16_edges", "f16_rows16", "f32_rows16"])
def test_skinny_products_split_k_among_warps_and_agree(dt: str, bm: int, bk: int, M: int, K: int, warps: int,
                                                       parts: int) -> None:
    text = _run(dt, bm, bk, 4, M, K)
    assert f"warps {warps} " in text and f"in {parts} parts" in text and "fma.parts.sum" in text, text
    assert ("(b widened once into" in text) == (dt != "f32"), text  # (x's 2-byte values: `pipeline_fma._wide`)


def test_widening_once_a_cta_is_switchable_and_agrees(monkeypatch: pytest.MonkeyPatch) -> None:
    """`TILEC_FMA_WIDEN=0`: x's 2-byte values widened by each thread after its shared-memory reads (hcliff12's
    form), beside the split; the default widens each stage once a CTA into an f32 buffer, a barrier after."""
    monkeypatch.setenv("TILEC_FMA_WIDEN", "0")
    text = _run("f16", 32, 16, 4, 24, 40)
    assert "in 4 parts" in text and "widened" not in text, text


@pytest.mark.parametrize("nb", [pytest.param(n, marks=pytest.mark.heavy) if n != 3 else n for n in (1, 2, 3, 5, 6, 7)])
def test_every_few_token_count_agrees(nb: int) -> None:
    """N = 1 .. 7 tokens (4 and 8: `test_fma_half`), f16 with a K tail and an edge tile of rows, whichever path
    takes them (1: the pipeline, x's column copied as one run; 2: 4-byte rows; 3, 5, 6, 7: the FMA loop, their
    rows not copies cp.async makes)."""
    _run("f16", 32, 16, 33, 40, nb)


@pytest.mark.parametrize(("dt", "nb", "M", "K"), [("f16", 1, 40, 36), ("bf16", 2, 24, 24)], ids=["f16_one", "bf16_two"])
def test_one_and_two_tokens_take_the_pipeline(dt: str, nb: int, M: int, K: int) -> None:
    """One token: x's [K, 1] column (its elements consecutive) copied as one run of 16-byte chunks, the last cut at
    the tensor's end (`CpAsyncTile.flat`: K = 36, the last chunk half past it reads zeros there); two: x's 4-byte rows by
    `cp.async.ca` of 4 bytes. Both split K in 4 parts and widen x once a CTA."""
    text = _run(dt, 32, 16, nb, M, K)
    assert "in 4 parts" in text and "widened once" in text and ("cp.async.flat @x" in text) == (nb == 1), text


def test_a_nonzero_start_or_a_switch_keeps_the_warps_own_outputs(monkeypatch: pytest.MonkeyPatch) -> None:
    """An accumulator starting from a constant other than zero does not split (each copy would add it), nor does
    `TILEC_FMA_KSPLIT=0` (call 39's plan: 2 warps of 1 x 4, x widened once a CTA unless `TILEC_FMA_WIDEN=0`);
    the first still agrees with the interpreter."""
    text = _run("f16", 64, 16, 4, 64, 48, init="full::<f32>([BM, NB], 1.0)")
    assert "dot.fma.smem" in text and "parts" not in text and "warps 2 " in text, text
    monkeypatch.setenv("TILEC_FMA_KSPLIT", "0")
    op = tilelang.compile(_src("f16")).gemv[64, 16, 4](P(np.zeros((64, 4), np.float32), [64, 4]),
                                                         np.zeros((64, 48), np.float16), np.zeros((48, 4), np.float16))
    op.discard()
    text = print_gpu_kernel(lower_gpu(op._plan.kir, "sm_90a", _facts(op._plan.kir, {"y": (64, 4), "w": (64, 48),
                                                                                    "x": (48, 4)})))
    assert "dot.fma.smem" in text and "parts" not in text and "warps 2 " in text, text


def test_a_warp_hint_that_outnumbers_the_rows_splits_k() -> None:
    """`num_warps = 8` on a [64, 4] f32 accumulator (no layout gives 8 warps their own rows: the FMA loop with no
    pipeline before): 8 copies, each an eighth of a stage's k-steps."""
    text = _run("f32", 64, 32, 4, 64, 40, hint="#[hints(num_warps = 8)]")
    assert "warps 8 " in text and "in 8 parts" in text, text


def test_split_layouts() -> None:
    """One warp's lanes cover the tile (rows repeated, or replicated past a short tile), the warps replicas along
    N; the register block at most `ACC_REGS`; None where a dim is not a power of two or nothing fits."""
    assert split_layout(64, 4, 4, (1, 4)) == (Blocked((1, 4), (32, 1), (1, 4), (1, 0)), 4)  # rows l, l + 32
    assert split_layout(16, 4, 4, (1, 4)) == (Blocked((1, 4), (32, 1), (1, 4), (1, 0)), 8)  # lanes 16.. replicas
    assert split_layout(64, 8, 4, (1, 4)) == (Blocked((1, 4), (16, 2), (1, 4), (1, 0)), 4)  # 4 x 4 a thread
    assert split_layout(64, 4, 1, (1, 4)) is None  # (one copy: nothing to split)
    assert split_layout(48, 4, 4, (1, 4)) is None
    assert split_layout(4096, 4, 4, (1, 4)) is None  # 128 x 4 registers a thread


@pytest.mark.heavy  # (`test_fma_half`'s ptxas test assembles call 38's tile, split, for both targets)
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_ptxas_assembles_split_kernels_without_spills(arch: str, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The device script's split kernels (hcliff12's tiles: [64, 256] and [16, 64] of W, 4 tokens) in f16 and bf16."""
    from ptxas_report import assemble

    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    for dt in ("f16", "bf16"):
        for bm, bk, nb in ((64, 256, 4), (16, 64, 4), (64, 64, 1), (64, 64, 2)):
            op = tilelang.compile(_src(dt)).gemv[bm, bk, nb](
                P(np.zeros((64, nb), np.float32), [bm, nb]), np.zeros((64, 256), _NP[dt]), np.zeros((256, nb), _NP[dt]))
            op.discard()  # compiled, never run
            kir = op._plan.kir
            ptx = compile_kernel(kir, arch, _facts(kir, {"y": (64, nb), "w": (64, 256), "x": (256, nb)})).ptx
            assert f"cp.async.{'cg' if nb == 1 else 'ca'}.shared.global" in ptx and "bar.sync" in ptx, ptx
            r = assemble(ptx, arch)
            assert r.max_spill_stores == 0, r.text


@pytest.mark.gpu
@pytest.mark.parametrize(("bm", "bk", "nb", "M", "K"), [
    (64, 64, 4, 200, 1000), (16, 64, 4, 40, 520), (64, 256, 4, 64, 600), (64, 64, 1, 130, 1004), (64, 64, 2, 70, 520),
], ids=["4_parts", "rows16_8_parts", "bk256", "one_token_flat", "two_tokens"])
def test_split_k_on_the_gpu(bm: int, bk: int, nb: int, M: int, K: int) -> None:
    """The few-token f16 GEMV split among warps on the card (default switches) against the interpreter: an edge
    tile of rows and a K tail (one token: the column's last chunk cut mid-way); small integers, so the sums are
    exact on both."""
    import tilelang.testing as tt

    rng = np.random.default_rng(M + bk)
    w = rng.integers(-4, 5, (M, K)).astype(np.float16)
    x = rng.integers(-4, 5, (K, nb)).astype(np.float16)
    y = np.zeros((M, nb), np.float32)
    tt.compare(tilelang.compile(_src("f16")).gemv[bm, bk, nb], P(y, [bm, nb]), w, x, devices=("cpu", "gpu"),
               rtol=0.0, atol=0.0)


def test_a_wide_k_step_keeps_two_stages_ahead(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 256-wide K step of a 2-byte GEMV (35 KB a stage, past the 64 KB ring's 2 stages) gets 3 stages
    (`pipeline_fma.HALF_STAGES`: two in flight while a step computes); `TILEC_FMA_HALF_STAGES=2`: call 39's 2."""
    op = tilelang.compile(_src("f16")).gemv[64, 256, 4](P(np.zeros((64, 4), np.float32), [64, 4]),
                                                        np.zeros((64, 512), np.float16), np.zeros((512, 4), np.float16))
    op.discard()
    kir = op._plan.kir
    facts = _facts(kir, {"y": (64, 4), "w": (64, 512), "x": (512, 4)})

    def header() -> str:
        return print_gpu_kernel(lower_gpu(kir, "sm_90a", facts)).splitlines()[0]

    assert "warps 4 stages 3 " in header()
    monkeypatch.setenv("TILEC_FMA_HALF_STAGES", "2")
    assert "warps 4 stages 2 " in header()


def test_the_narrow_switch_keeps_one_token_on_the_fma_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """`TILEC_FMA_NARROW=0`: 1 and 2 tokens keep the FMA loop with no pipeline (call 39's plan), for an A/B."""
    monkeypatch.setenv("TILEC_FMA_NARROW", "0")
    for nb in (1, 2):
        op = tilelang.compile(_src("f16")).gemv[64, 16, nb](P(np.zeros((64, nb), np.float32), [64, nb]),
                                                             np.zeros((64, 48), np.float16),
                                                             np.zeros((48, nb), np.float16))
        op.discard()
        text = print_gpu_kernel(lower_gpu(op._plan.kir, "sm_90a", _facts(op._plan.kir, {
            "y": (64, nb), "w": (64, 48), "x": (48, nb)})))
        assert "dot.fma " in text and "dot.fma.smem" not in text, text


EPILOGUE = """
kernel fn gemv<const BM: i32, const BK: i32, const NB: i32>(y: &mut Tensor<f32, [BM, NB]>, s: &mut Tensor<f32, [BM]>,
                                                            w: &Tensor<f16, [?, ?]>, x: &Tensor<f16, [?, NB]>) {
    let pw = w.partition([BM, BK]);
    let px = x.partition([BK, NB]);
    let mut acc = zeros::<f32>([BM, NB]);
    for k in 0..pw.num_tiles(1) {
        acc = mma(pw.load([block_id(0), k]), px.load([k, 0]), acc);
    }
    let t = acc * 2.0 + 1.0;
    y.store(t);
    s.store(t.sum(1));
}
"""


def test_an_epilogue_reads_the_summed_copies() -> None:
    """What follows a split loop reads `FmaPartsSum`'s result in the copies' layout (every copy the same sums):
    arithmetic, a store, a row sum and its store agree with the interpreter (an edge tile of rows, a K tail)."""
    M, K = 70, 40
    rng = np.random.default_rng(5)
    w = rng.integers(-4, 5, (M, K)).astype(np.float16)
    x = rng.integers(-4, 5, (K, 4)).astype(np.float16)
    y, s = np.full((M, 4), 7, np.float32), np.full((M,), 7, np.float32)
    op = tilelang.compile(EPILOGUE).gemv[64, 16, 4](P(y, [64, 4]), P(s, [64]), w, x)
    kir = op._plan.kir
    facts = _facts(kir, {"y": y.shape, "s": s.shape, "w": w.shape, "x": x.shape})
    assert "fma.parts.sum" in print_gpu_kernel(lower_gpu(kir, "sm_90a", facts))
    sim = [np.array(h) for h in op._hosts]
    SimDevice("sm_90a").run(kir, (2,), op._kernel_args(sim), facts)
    op.sync()  # the interpreter
    want = (w.astype(np.float32) @ x.astype(np.float32)) * 2 + 1
    for got, ours, ref in zip(sim[:2], op._hosts[:2], (want, want.sum(1)), strict=True):
        np.testing.assert_array_equal(got, ours)
        np.testing.assert_array_equal(got, ref)


TOKENS_MAJOR = """
kernel fn gemv<const BM: i32, const BK: i32, const NB: i32>(y: &mut Tensor<f32, [BM, NB]>,
                                                            w: &Tensor<DT, [?, ?]>, x: &Tensor<DT, [NB, ?]>) {
    let pw = w.partition([BM, BK]);
    let px = x.partition([NB, BK]);
    let mut acc = zeros::<f32>([BM, NB]);
    for k in 0..pw.num_tiles(1) {
        acc = mma(pw.load([block_id(0), k]), px.load([0, k]).transpose(), acc);
    }
    y.store(acc);
}
"""


@pytest.mark.parametrize(("dt", "nb"), [("f16", 4), pytest.param("bf16", 2, marks=pytest.mark.heavy)])
def test_tokens_major_activations_split_too(dt: str, nb: int) -> None:
    """x as [tokens, K] (an LLM's activations), used transposed: B is K-contiguous, read along k by the lanes of
    its token (lanes 8 x 4 at 4 tokens, 8 rows a thread), not widened once; the split and its sum agree."""
    M, K = 70, 40
    rng = np.random.default_rng(nb)
    w = rng.integers(-4, 5, (M, K)).astype(_NP[dt])
    x = rng.integers(-4, 5, (nb, K)).astype(_NP[dt])
    y = np.full((M, nb), 7, np.float32)
    op = tilelang.compile(TOKENS_MAJOR.replace("DT", dt)).gemv[64, 16, nb](P(y, [64, nb]), w, x)
    kir = op._plan.kir
    facts = _facts(kir, {"y": y.shape, "w": w.shape, "x": x.shape})
    text = print_gpu_kernel(lower_gpu(kir, "sm_90a", facts))
    assert "(b n-k)" in text and "in 4 parts" in text and "widened" not in text, text
    sim = [np.array(h) for h in op._hosts]
    SimDevice("sm_90a").run(kir, (2,), op._kernel_args(sim), facts)
    op.sync()  # the interpreter
    np.testing.assert_array_equal(sim[0], op._hosts[0])
    np.testing.assert_array_equal(sim[0], w.astype(np.float32) @ x.astype(np.float32).T)


def test_a_kernel_of_more_warps_splits_into_as_many_parts() -> None:
    """A GEMV loop beside an f32 GEMM that wants 8 warps (`place_rings`: one warp count a kernel) is planned
    again at 8: 8 copies, an eighth of each stage's k-steps each, so its layout has the kernel's warps."""
    src = """
kernel fn two(y: &mut Tensor<f32, [64, 4]>, z: &mut Tensor<f32, [128, 128]>, w: &Tensor<f16, [?, ?]>,
              x: &Tensor<f16, [?, 4]>, a: &Tensor<f32, [?, ?]>, b: &Tensor<f32, [?, ?]>) {
    let pw = w.partition([64, 64]);
    let px = x.partition([64, 4]);
    let mut acc = zeros::<f32>([64, 4]);
    for k in 0..pw.num_tiles(1) {
        acc = mma(pw.load([block_id(0), k]), px.load([k, 0]), acc);
    }
    y.store(acc);
    let pa = a.partition([128, 16]);
    let pb = b.partition([16, 128]);
    let mut c = zeros::<f32>([128, 128]);
    for k in 0..pa.num_tiles(1) {
        c = mma(pa.load([block_id(0), k]), pb.load([k, 0]), c);
    }
    z.store(c);
}
"""
    op = tilelang.compile(src).two(P(np.zeros((128, 4), np.float32), [64, 4]),
                                   P(np.zeros((256, 128), np.float32), [128, 128]), np.zeros((128, 128), np.float16),
                                   np.zeros((128, 4), np.float16), np.zeros((256, 64), np.float32),
                                   np.zeros((64, 128), np.float32))
    op.discard()
    kir = op._plan.kir
    text = print_gpu_kernel(lower_gpu(kir, "sm_90a", {p.name: TensorFacts(True, (True, True))
                                                      for p in kir.tensor_params}))
    assert " warps 8 " in text.splitlines()[0] and "k 64 in 8 parts" in text and "wpc=[1, 8]" in text, text


@pytest.mark.parametrize(("dt", "M", "K"), [("f16", 40, 40), pytest.param("bf16", 64, 48, marks=pytest.mark.heavy)])
def test_eight_tokens_no_ring_takes_leave_mma_sync_for_the_split(dt: str, M: int, K: int) -> None:
    """8 tokens with K steps of 16 are an `mma.sync` product, but no ring takes N = 8 (sm_80's wants N % 16): the
    FMA pipeline splits it as it does 4 tokens (x's 16-byte rows copied whole), and agrees (call 41, H200: the
    mma.sync loop with no pipeline ran 0.29x torch)."""
    text = _run(dt, 32, 16, 8, M, K)
    assert "in 4 parts" in text and "widened once" in text and "mma.sync" not in text, text
