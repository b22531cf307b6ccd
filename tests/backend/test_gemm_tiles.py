"""GEMM tiles a user picks other than 128 x 128 x 64 on the Hopper pipeline (hcliff2, 2026-12-06).

The ring's depth: 4 stages, or up to 8 where a stage is small (`pipeline.RING_BYTES` in flight): 128x128x32
ran 0.61x cuBLAS and 64x64x64 0.35x at 4 (H100); a deep ring wraps in llsim.

`#[hints(min_blocks = B)]` on a Hopper GEMM: B CTAs an SM (`HopperPlan.blocks`: entry registers and
`.minnctapersm` for B, the ring in the SM's shared memory over B), fewer where B do not fit, with a note; it
was ignored (every GEMM ran one CTA an SM, call 11). A `stages` hint that does not fit runs what fits, with a
note (it took sm_80's ring: 128x256x64 at stages = 6 ran 0.06x cuBLAS).

A tile of 32 rows on the Hopper pipeline, padded to one m64 warpgroup (A's box reads 64 rows; the rows past M
are never stored): it took sm_80's ring (M = 64 rows: 0.48x -> 0.59x cuBLAS, H100 call 14). Not 16 rows (4x
the products: 0.53x on the ring, 0.34x padded): a note says why. `TILEC_GEMM_PAD=0` off.

A GEMM tile wider than one wgmma (N > 256) on the Hopper pipeline, in column parts (`HopperPlan.parts`):
the CTA runs the K loop once a part of at most 256 columns, the producer filling the ring for the next part
while the consumers store the last one (staged after the ring, `GpuKernel.stage_apart`). Before 2026-12-06
such tiles took sm_80's cp.async ring on sm_90a (128 x 512 x 32: 0.08x cuBLAS on an H100). Run in llsim
against NumPy / the interpreter: edges in M, N and K, B transposed, a bias per column and a residual loaded in
the epilogue (their column offsets move with the part), an accumulator that starts from a constant, and
`TILEC_GEMM_PARTS=0` (the old path)."""

from __future__ import annotations

import numpy as np
import pytest
from gemm_cases import GemmConfig, linear_case
from llsim import SimDevice

from tilelang import driver
from tilelang.backend import lower_gpu
from tilelang.backend.facts import TensorFacts
from tilelang.backend.gpu.printer import print_gpu_kernel


def _facts(**shapes: tuple[int, ...]) -> dict[str, TensorFacts]:
    return {n: TensorFacts(True, tuple(d % 16 == 0 for d in s)) for n, s in shapes.items()}


def _gemm(cfg: GemmConfig, M: int, N: int, K: int, seed: int, parts: int) -> None:
    src = cfg.source() + (
        f"\nfn main() {{ let a = zeros::<{cfg.dtype}>([8, 8]); let b = zeros::<{cfg.dtype}>([8, 8]);"
        f" let mut o = zeros::<{cfg.out}>([8, 8]);"
        f" gemm::<{cfg.bm}, {cfg.bn}, {cfg.bk}>(o.partition([{cfg.bm}, {cfg.bn}]), &a, &b).sync(); }}\n")
    k = driver.compile(src, "ir").output[0]
    a, b, c = cfg.inputs(M, N, K, seed)
    facts = _facts(a=a.shape, b=b.shape, c=c.shape)
    gk = lower_gpu(k, "sm_90a", facts)
    text = print_gpu_kernel(gk)
    assert "warp_specialize" in text and text.count("wgmma ") + text.count("wgmma(") >= parts, text
    assert sum(1 for line in text.splitlines() if line.strip().startswith("scf.for") or " for " in line) >= 1
    assert len(gk.stage_apart) == parts - 1
    SimDevice("sm_90a").run(k, (-(-M // cfg.bm), -(-N // cfg.bn)), [c, a, b], facts)
    cfg.assert_product(a, b, c, seed)


# N's edge in the second part, 3 k-tiles; B's rows (900 bytes) not a multiple of 16: copied by the producer
NN_512_EDGES = (64, 450, 96)


@pytest.mark.parametrize(("cfg", "shape", "parts"), [
    (GemmConfig(64, 512, 32, out="f32"), NN_512_EDGES, 2),
    (GemmConfig(64, 512, 16, out="f16", trans_b=True), (40, 512, 48), 2),  # B stored [N, K]; M's edge
    (GemmConfig(64, 384, 32, out="f32"), (64, 384, 32), 2),  # parts of 192 (3 slabs), one k-tile
    # 2 stages for 3 k-tiles a part: the ring wraps within a part and across the parts (each part's last stage
    # given back at its end, or the producer of the next waits forever)
    (GemmConfig(64, 512, 32, out="f32", stages=2), (64, 512, 96), 2),
], ids=["nn_512_edges", "nt_512", "nn_384", "ring_wraps"])
def test_a_wide_tile_in_parts_in_the_simulator(cfg: GemmConfig, shape, parts: int) -> None:  # type: ignore[no-untyped-def]
    M, N, K = shape
    _gemm(cfg, M, N, K, seed=int(np.random.default_rng().integers(1 << 30)), parts=parts)


def test_the_epilogue_loads_move_with_the_part() -> None:
    """A bias per column and a residual tile ([M, N]) read in each part at its columns, an accumulator that
    starts at 0.5 (no zero-init shortcut): the interpreter's result, with N's edge inside the second part."""
    case = linear_case(70, 400, 48, (64, 512, 16), seed=11)
    gk = lower_gpu(case.kernel, "sm_90a", case.facts)
    assert "acc_load" in print_gpu_kernel(gk) and len(gk.stage_apart) == 1
    np.testing.assert_allclose(case.simulated((2, 1)), case.interpreted(), rtol=1e-4, atol=1e-3)


def test_switched_off_a_wide_tile_takes_sm80s_ring(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from tilelang.backend import explain

    cfg = GemmConfig(128, 512, 32)
    src = cfg.source() + ("\nfn main() { let a = zeros::<f16>([8, 8]); let b = zeros::<f16>([8, 8]);"
                          " let mut o = zeros::<f16>([8, 8]); gemm::<128, 512, 32>(o.partition([128, 512]), &a, &b).sync(); }\n")
    k = driver.compile(src, "ir").output[0]
    facts = _facts(a=(4096, 4096), b=(4096, 4096), c=(4096, 4096))
    on = lower_gpu(k, "sm_90a", facts)
    assert explain.path_of(on) == "wgmma-pipeline" and on.num_warps == 12 and len(on.stage_apart) == 1
    monkeypatch.setenv("TILEC_GEMM_PARTS", "0")
    assert explain.path_of(lower_gpu(k, "sm_90a", facts)) == "sm80-pipeline"


def _lowered(bm: int, bn: int, bk: int, stages: int | None = None, blocks: int = 0):  # type: ignore[no-untyped-def]
    cfg = GemmConfig(bm, bn, bk, stages=stages)
    src = _with_blocks(cfg.source(), blocks) + (f"\nfn main() {{ let a = zeros::<f16>([8, 8]); let b = zeros::<f16>([8, 8]);"
                          f" let mut o = zeros::<f16>([8, 8]); gemm::<{bm}, {bn}, {bk}>(o.partition([{bm}, {bn}]), &a, &b).sync(); }}\n")
    k = driver.compile(src, "ir").output[0]
    return lower_gpu(k, "sm_90a", _facts(a=(4096, 4096), b=(4096, 4096), c=(4096, 4096)))


@pytest.mark.parametrize(("tile", "stages"), [
    ((128, 128, 64), 4), ((128, 256, 64), 4), ((256, 128, 64), 4),  # as before: 32-48 KB a stage
    ((128, 128, 128), 3),  # 64 KB a stage: what fits
    ((128, 128, 32), 8), ((64, 64, 64), 8), ((64, 128, 64), 5),  # small stages: 128 KB in flight
    ((64, 64, 32), 8),  # 8 KB a stage: at most 8
    ((128, 512, 32), 5),  # two parts: 24 KB a stage, and 67.6 KB of staging for the first part's store
])
def test_the_rings_depth_follows_the_stages_size(tile: tuple[int, int, int], stages: int) -> None:
    gk = _lowered(*tile)
    assert gk.num_stages == stages
    assert gk.smem_bytes <= 227 * 1024


def test_a_stages_hint_is_kept() -> None:
    assert _lowered(128, 128, 32, stages=3).num_stages == 3


def test_a_stages_hint_that_does_not_fit_runs_what_fits() -> None:
    from tilelang.backend import explain

    gk = _lowered(128, 256, 64, stages=6)  # 6 x 48 KB
    assert explain.path_of(gk) == "wgmma-pipeline" and gk.num_stages == 4
    assert any("asks for 6 stages" in n.message and "runs 4" in n.message for n in gk.notes), gk.notes


def _with_blocks(src: str, blocks: int) -> str:
    if not blocks:
        return src
    if src.startswith("#[hints("):
        return src.replace("#[hints(", f"#[hints(min_blocks = {blocks}, ", 1)
    return f"#[hints(min_blocks = {blocks})]\n" + src


def _ws(gk):  # type: ignore[no-untyped-def]
    from tilelang.backend.gpu import nodes as g

    return next(op for op in g.walk(gk.body) if isinstance(op, g.WarpSpecialize))


@pytest.mark.parametrize(("tile", "blocks", "got", "stages", "consumer_regs"), [
    ((128, 128, 64), 0, 1, 4, 240),  # unhinted: the SM to itself
    ((128, 128, 64), 2, 2, 3, 216),  # entry 128 registers a thread; 3 x 32 KB stages each
    ((64, 64, 64), 4, 4, 3, 88),
    ((128, 128, 32), 2, 2, 7, 216),
    ((128, 256, 64), 2, 1, 4, 232),  # two consumer warpgroups of 128 accumulator registers: one CTA only
])
def test_min_blocks_budgets_the_registers_and_the_ring(tile, blocks: int, got: int, stages: int,  # type: ignore[no-untyped-def]
                                                      consumer_regs: int) -> None:
    from tilelang.backend.llvm import emit_llvm_text

    gk = _lowered(*tile, blocks=blocks)
    ws = _ws(gk)
    assert (ws.blocks, gk.num_stages, ws.roles[1].regs) == (got, stages, consumer_regs)
    assert gk.smem_bytes * got + 1024 * got <= 228 * 1024
    assert f'"nvvm.minctasm"="{got}"' in emit_llvm_text(gk, gk.facts)[0]
    assert any(f"min_blocks = {blocks}" in n.message for n in gk.notes) == (0 < got < blocks)


def test_four_ctas_an_sm_in_the_simulator() -> None:
    """64x64x64 with `min_blocks = 4`: 3 stages, 7 k-tiles (the ring wraps twice), edges in M and N."""
    cfg = GemmConfig(64, 64, 64, out="f32")
    src = _with_blocks(cfg.source(), 4) + ("\nfn main() { let a = zeros::<f16>([8, 8]); let b = zeros::<f16>([8, 8]);"
                                           " let mut o = zeros::<f32>([8, 8]); gemm::<64, 64, 64>(o.partition([64, 64]), &a, &b).sync(); }\n")
    k = driver.compile(src, "ir").output[0]
    M, N, K = 100, 112, 7 * 64 - 16  # B by TMA (a copy producer needs more registers: 2 CTAs)
    a, b, c = cfg.inputs(M, N, K, 5)
    facts = _facts(a=a.shape, b=b.shape, c=c.shape)
    gk = lower_gpu(k, "sm_90a", facts)
    assert (_ws(gk).blocks, gk.num_stages) == (4, 3)
    SimDevice("sm_90a").run(k, (2, 2), [c, a, b], facts)
    cfg.assert_product(a, b, c, 5)


def test_a_deep_ring_wraps_in_the_simulator() -> None:
    """64x64x32 at its 8 stages, 11 k-tiles: the ring wraps (the mbarrier phases of a pass over 8 stages)."""
    cfg = GemmConfig(64, 64, 32, out="f32")
    assert _lowered(64, 64, 32).num_stages == 8
    _gemm(cfg, 64, 128, 11 * 32 - 8, seed=int(np.random.default_rng().integers(1 << 30)), parts=1)


def _copy_producer(simulate: bool) -> None:
    cfg = GemmConfig(64, 512, 32, out="f32")
    src = cfg.source() + ("\nfn main() { let a = zeros::<f16>([8, 8]); let b = zeros::<f16>([8, 8]);"
                          " let mut o = zeros::<f32>([8, 8]); gemm::<64, 512, 32>(o.partition([64, 512]), &a, &b).sync(); }\n")
    k = driver.compile(src, "ir").output[0]
    M, N, K = 64, 510, 64
    a, b, c = cfg.inputs(M, N, K, 9)
    facts = _facts(a=a.shape, b=b.shape, c=c.shape)
    assert not facts["b"].dims_div16[1]
    gk = lower_gpu(k, "sm_90a", facts)
    text = print_gpu_kernel(gk)
    assert "copy_to_shared @b" in text and len(gk.stage_apart) == 1, text
    # the default simulation of this kernel: nn_512_edges' tile and facts are these
    m, n, kk = NN_512_EDGES
    assert _facts(a=(m, kk), b=(kk, n), c=(m, n)) == facts
    if simulate:
        SimDevice("sm_90a").run(k, (1, 1), [c, a, b], facts)
        cfg.assert_product(a, b, c, 9)


def test_parts_with_the_copy_producer() -> None:
    """N = 512 in two parts with B copied through the producer's registers (its rows not a multiple of 16 bytes:
    no TMA): the copy of a part starts at its columns. `test_a_wide_tile_in_parts_in_the_simulator[nn_512_edges]`
    simulates this kernel (the same tile and facts, so the same LLVM module) by default."""
    _copy_producer(simulate=False)


@pytest.mark.heavy
def test_parts_with_the_copy_producer_in_the_simulator() -> None:
    """The kernel above in llsim at N = 510, 2 k-tiles (heavy: every block-to-block branch its simulation takes,
    nn_512_edges' takes too, measured 2026-12-07; 2.3 s alone)."""
    _copy_producer(simulate=True)


def test_the_default_ctas_an_sm_switch(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`TILEC_GEMM_BLOCKS=2` (a measurement switch): GEMMs that name no `min_blocks` run 2 CTAs an SM where 2 fit,
    1 elsewhere, with no note (the note is for a hint the kernel wrote)."""
    monkeypatch.setenv("TILEC_GEMM_BLOCKS", "2")
    small, wide = _lowered(128, 128, 64), _lowered(128, 256, 64)
    assert (_ws(small).blocks, small.num_stages) == (2, 3)
    assert (_ws(wide).blocks, wide.num_stages, wide.notes) == (1, 4, ())
    monkeypatch.delenv("TILEC_GEMM_BLOCKS")
    assert _ws(_lowered(128, 128, 64)).blocks == 1


@pytest.mark.parametrize(("cfg", "shape"), [
    (GemmConfig(32, 64, 32, out="f16"), (40, 70, 96)),  # M = 32: edges in M and N, 3 k-tiles
    (GemmConfig(32, 64, 64, out="f32", trans_b=True), (20, 64, 128)),  # B stored [N, K], one partial tile
    (GemmConfig(32, 128, 64, out="f32"), (96, 128, 64)),  # three 32-row tiles: each stores its own rows only
    (GemmConfig(32, 512, 32, out="f32"), (64, 512, 64)),  # padded and in two column parts
], ids=["m32_edges", "m32_nt", "m32_neighbours", "m32_parts"])
def test_a_tile_of_few_rows_padded_in_the_simulator(cfg: GemmConfig, shape) -> None:  # type: ignore[no-untyped-def]
    from tilelang.backend import explain

    M, N, K = shape
    src = cfg.source() + (f"\nfn main() {{ let a = zeros::<f16>([8, 8]); let b = zeros::<f16>([8, 8]);"
                          f" let mut o = zeros::<{cfg.out}>([8, 8]); gemm::<{cfg.bm}, {cfg.bn}, {cfg.bk}>(o.partition([{cfg.bm}, {cfg.bn}]), &a, &b).sync(); }}\n")
    k = driver.compile(src, "ir").output[0]
    a, b, c = cfg.inputs(M, N, K, 4)
    facts = _facts(a=a.shape, b=b.shape, c=c.shape)
    gk = lower_gpu(k, "sm_90a", facts)
    assert explain.path_of(gk) == "wgmma-pipeline" and gk.num_warps == 8
    SimDevice("sm_90a").run(k, (-(-M // cfg.bm), -(-N // cfg.bn)), [c, a, b], facts)
    cfg.assert_product(a, b, c, 4)


def test_a_padded_tile_with_a_row_load_keeps_the_old_path() -> None:
    """A per-row epilogue load of a 32-row tile would read the padded rows from other tiles: refused, with a note."""
    from tilelang.backend import explain

    src = """
kernel fn g<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<f32, [BM, BN]>, a: &Tensor<f16, [?, ?]>,
                                                        b: &Tensor<f16, [?, ?]>, s: &Tensor<f32, [?]>) {
    let pa = a.partition([BM, BK]);
    let pb = b.partition([BK, BN]);
    let mut acc = zeros::<f32>([BM, BN]);
    for k in 0..pa.num_tiles(1) {
        acc = mma(pa.load([block_id(0), k]), pb.load([k, block_id(1)]), acc);
    }
    c.store(acc * s.partition([BM]).load([block_id(0)]).reshape([BM, 1]));
}
fn main() { let a = zeros::<f16>([8, 8]); let b = zeros::<f16>([8, 8]); let s = zeros::<f32>([8]);
            let mut o = zeros::<f32>([8, 8]); g::<32, 64, 64>(o.partition([32, 64]), &a, &b, &s).sync(); }
"""
    k = driver.compile(src, "ir").output[0]
    gk = lower_gpu(k, "sm_90a", _facts(a=(64, 64), b=(64, 64), s=(64,), c=(64, 64)))
    assert explain.path_of(gk) == "sm80-pipeline"
    assert any("per row of a 32-row tile" in n.message for n in gk.notes), gk.notes


def test_a_padded_tile_stores_its_own_rows_only() -> None:
    """Blocks in reverse order, an epilogue that adds the block's row index: a 32-row tile that stored its 64
    padded rows would overwrite the next tile's rows (computed right, but with the other block's index)."""
    src = """
kernel fn g<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<f32, [BM, BN]>, a: &Tensor<f16, [?, ?]>,
                                                        b: &Tensor<f16, [?, ?]>) {
    let pa = a.partition([BM, BK]);
    let pb = b.partition([BK, BN]);
    let mut acc = zeros::<f32>([BM, BN]);
    for k in 0..pa.num_tiles(1) {
        acc = mma(pa.load([block_id(0), k]), pb.load([k, block_id(1)]), acc);
    }
    c.store(acc + (block_id(0) as f32) * 100.0);
}
fn main() { let a = zeros::<f16>([8, 8]); let b = zeros::<f16>([8, 8]);
            let mut o = zeros::<f32>([8, 8]); g::<32, 64, 64>(o.partition([32, 64]), &a, &b).sync(); }
"""
    k = driver.compile(src, "ir").output[0]
    rng = np.random.default_rng(8)
    a = rng.standard_normal((96, 64)).astype(np.float16)
    b = rng.standard_normal((64, 64)).astype(np.float16)
    c = np.full((96, 64), np.nan, np.float32)
    facts = _facts(a=a.shape, b=b.shape, c=c.shape)
    SimDevice("sm_90a").run(k, (3, 1), [c, a, b], facts, order="reverse")
    want = a.astype(np.float64) @ b.astype(np.float64) + np.repeat(np.arange(3) * 100.0, 32)[:, None]
    np.testing.assert_allclose(c, want, rtol=1e-3, atol=1e-2)


def test_a_16_row_tile_stays_on_sm80s_ring_and_says_why() -> None:
    from tilelang.backend import explain

    gk = _lowered(16, 64, 128)
    assert explain.path_of(gk) == "sm80-pipeline"
    assert any("M = 16" in n.message and "4 times" in n.message for n in gk.notes), gk.notes
