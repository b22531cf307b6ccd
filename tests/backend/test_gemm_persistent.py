"""The persistent Hopper GEMM (`passes/gemm_persistent.py`, `TILEC_GEMM_PERSISTENT`; hgemm, 2026-12-06).

One CTA walks tiles: the producer fills the ring for the next tile while the consumers run this tile's
epilogue, the ring's counter running on from tile to tile, each tile giving its last stage back; form 1 its
consumer warpgroups take every tile, form 2 ("pingpong") two consumer roles of one warpgroup take turns, each
staging its stores in its own area behind its own named barrier. Run in llsim against NumPy / the interpreter
on fewer CTAs than tiles (the ring wraps inside a tile and across tiles), with edges in M, N and K, B
transposed, an operand TMA cannot describe (the copy producer), an accumulator that starts from a constant
and an epilogue that loads a bias and a residual. A wrong staging slot, a stage not given back or a ring
counter that does not count the other role's stages fails here (wrong values or `llsim.Deadlock`)."""

from __future__ import annotations

import numpy as np
import pytest
from gemm_cases import GemmConfig
from llsim import SimDevice

import tilelang
from tilelang import driver
from tilelang.backend import lower_gpu
from tilelang.backend.facts import TensorFacts
from tilelang.backend.gpu import nodes as g
from tilelang.backend.gpu.printer import print_gpu_kernel


def _facts(**shapes: tuple[int, ...]) -> dict[str, TensorFacts]:
    return {n: TensorFacts(True, tuple(d % 16 == 0 for d in s)) for n, s in shapes.items()}


def _roles(gk: g.GpuKernel) -> tuple[g.Role, ...]:
    return next(op for op in g.walk(gk.body) if isinstance(op, g.WarpSpecialize)).roles


def _gemm_kernel(cfg: GemmConfig):  # type: ignore[no-untyped-def]
    src = cfg.source() + (
        f"\nfn main() {{ let a = zeros::<{cfg.dtype}>([8, 8]); let b = zeros::<{cfg.dtype}>([8, 8]);"
        f" let mut o = zeros::<{cfg.out}>([8, 8]);"
        f" gemm::<{cfg.bm}, {cfg.bn}, {cfg.bk}>(o.partition([{cfg.bm}, {cfg.bn}]), &a, &b).sync(); }}\n")
    return driver.compile(src, "ir").output[0]


@pytest.mark.parametrize(("form", "cfg", "shape", "ctas"), [
    ("1", GemmConfig(64, 64, 32, out="f32"), (130, 150, 96), 1),  # 9 tiles on one CTA; B by the copy producer
    ("2", GemmConfig(64, 64, 32, out="f32"), (130, 160, 96), 2),  # 9 tiles on two CTAs, turns of two roles
    ("2", GemmConfig(64, 64, 16, out="f16", trans_b=True, stages=2), (100, 70, 40), 1),  # B [N, K]; 2 stages wrap
    ("2", GemmConfig(64, 64, 32, out="f32"), (70, 64, 0), 1),  # K = 0: no iteration, zeros stored, no stage taken
], ids=["coop_one_cta", "pingpong_two_ctas", "pingpong_nt_edges", "pingpong_no_k"])
def test_a_persistent_gemm_in_the_simulator(form: str, cfg: GemmConfig, shape, ctas: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TILEC_GEMM_PERSISTENT", form)
    M, N, K = shape
    k = _gemm_kernel(cfg)
    a, b, c = cfg.inputs(M, N, K, 5)
    facts = _facts(a=a.shape, b=b.shape, c=c.shape)
    gk = lower_gpu(k, "sm_90a", facts)
    roles = _roles(gk)
    assert gk.persistent == 1 and [r.name for r in roles] == ["producer", "consumer", *(["consumer"] if form == "2" else [])]
    assert [r.slot for r in roles[1:]] == ([0, 1] if form == "2" else [0])
    assert f"mbarrier.alloc count {4 if form == '2' else 4 * (gk.num_warps // 4 - 1)}" in print_gpu_kernel(gk)
    assert gk.stage_apart  # the ring is live under the epilogue: its stores are staged after it
    SimDevice("sm_90a").run(k, (ctas, 1), [c, a, b], facts)
    if K == 0:
        assert (c == 0).all()
    else:
        cfg.assert_product(a, b, c, 5)


LINEAR = """
kernel fn linear<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<f32, [BM, BN]>, a: &Tensor<f16, [?, ?]>,
                                                             w: &Tensor<f16, [?, ?]>, bias: &Tensor<f32, [?]>,
                                                             res: &Tensor<f32, [?, ?]>) {
    let pa = a.partition([BM, BK]);
    let pw = w.partition([BN, BK]);
    let mut acc = full::<f32>([BM, BN], 0.5);
    for k in 0..pa.num_tiles(1) {
        acc = mma(pa.load([block_id(0), k]), pw.load([block_id(1), k]).transpose(), acc);
    }
    let b = bias.partition([BN]).load([block_id(1)]).reshape([1, BN]);
    let r = res.partition([BM, BN]).load([block_id(0), block_id(1)]);
    c.store(maximum(acc + b, 0.0) + r);
}
"""


@pytest.mark.parametrize("form", ["1", "2"], ids=["coop", "pingpong"])
def test_the_epilogue_loads_of_each_tile(form: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A bias per column and a residual tile read in each tile's epilogue (each role's own), an accumulator that
    starts at 0.5 (no zero-init shortcut: the last stage given back only where the loop ran): the
    interpreter's result on one CTA walking 2 x 3 tiles with edges in M and N."""
    monkeypatch.setenv("TILEC_GEMM_PERSISTENT", form)
    M, N, K = 70, 150, 48
    rng = np.random.default_rng(11)
    a = rng.standard_normal((M, K)).astype(np.float16)
    w = rng.standard_normal((N, K)).astype(np.float16)
    bias = rng.standard_normal(N).astype(np.float32)
    res = rng.standard_normal((M, N)).astype(np.float32)
    main = ("fn main() { let a = zeros::<f16>([8, 8]); let w = zeros::<f16>([8, 8]); let b = zeros::<f32>([8]);"
            " let r = zeros::<f32>([8, 8]); let mut o = zeros::<f32>([8, 8]);"
            " linear::<64, 64, 16>(o.partition([64, 64]), &a, &w, &b, &r).sync(); }\n")
    k = driver.compile(LINEAR + main, "ir").output[0]
    facts = _facts(a=a.shape, w=w.shape, bias=bias.shape, res=res.shape, c=(M, N))
    gk = lower_gpu(k, "sm_90a", facts)
    assert gk.persistent == 1 and "acc_load" in print_gpu_kernel(gk)
    want = np.full((M, N), np.nan, np.float32)
    tilelang.compile(LINEAR).linear[64, 64, 16](tilelang.partition(want, [64, 64]), a, w, bias, res).sync()
    got = np.full((M, N), np.nan, np.float32)
    SimDevice("sm_90a").run(k, (1, 1), [got, a, w, bias, res], facts)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)


def _lowered(cfg: GemmConfig, M: int, N: int, K: int) -> g.GpuKernel:
    return lower_gpu(_gemm_kernel(cfg), "sm_90a", _facts(a=(M, K), b=(K, N), c=(M, N)))


def test_which_gemms_walk_and_in_which_form(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Off unless asked (`TILEC_GEMM_PERSISTENT` unset: one tile a CTA); pingpong where the accumulator fits one
    warpgroup and two staging areas leave the ring its stages (128x128x64: 4 stages + 2 x 34 KB), else the
    cooperative form (128x128x128: 3 stages of 64 KB leave room for one area), else none (128x256x64: two
    warpgroups, and one area would cost a stage); a bad value is an error naming the switch."""
    monkeypatch.delenv("TILEC_GEMM_PERSISTENT", raising=False)
    assert _lowered(GemmConfig(128, 128, 64), 4096, 4096, 4096).persistent == 0
    monkeypatch.setenv("TILEC_GEMM_PERSISTENT", "2")
    pp = _lowered(GemmConfig(128, 128, 64), 4096, 4096, 4096)
    assert pp.persistent == 1 and pp.num_warps == 12 and len(_roles(pp)) == 3 and pp.num_stages == 4
    wide = _lowered(GemmConfig(128, 128, 128), 4096, 4096, 4096)
    assert wide.persistent == 1 and len(_roles(wide)) == 2 and wide.num_stages == 3
    assert _lowered(GemmConfig(128, 256, 64), 4096, 4096, 4096).persistent == 0
    monkeypatch.setenv("TILEC_GEMM_PERSISTENT", "yes")
    with pytest.raises(ValueError, match="TILEC_GEMM_PERSISTENT"):
        _lowered(GemmConfig(128, 128, 64), 4096, 4096, 4096)


@pytest.mark.parametrize(("shape", "ctas"), [
    ((64, 64, 256), 4),  # one tile in 4 pieces of 4 iterations
    ((100, 60, 200), 8),  # 2 tiles (edges in M, N), 13 iterations in 3 pieces (4, 4, 5): the last sums 3 records
    ((100, 130, 48), 5),  # fewer CTAs than tiles: no split, a walk of whole tiles
], ids=["one_tile_4_pieces", "two_tiles_3_pieces", "no_split"])
def test_split_k_in_the_simulator(shape, ctas: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`TILEC_GEMM_SPLITK=1` (`passes/gemm_split.py`): with fewer tiles than CTAs each tile's K loop runs in s
    pieces, each saving its f32 accumulator, the last to arrive summing the records in piece order and storing;
    the runtime fills the card (`fill`). A record read from the wrong slot, or a piece not summed, fails here."""
    monkeypatch.setenv("TILEC_GEMM_SPLITK", "1")
    M, N, K = shape
    cfg = GemmConfig(64, 64, 16, out="f32")
    k = _gemm_kernel(cfg)
    a, b, c = cfg.inputs(M, N, K, 7)
    facts = _facts(a=a.shape, b=b.shape, c=c.shape)
    gk = lower_gpu(k, "sm_90a", facts)
    text = print_gpu_kernel(gk)
    assert gk.persistent == 1 and gk.fill and "split.save" in text and "split.arrive" in text
    SimDevice("sm_90a").run(k, (ctas, 1), [c, a, b], facts)
    cfg.assert_product(a, b, c, 7)


def test_a_split_k_gemm_fills_the_card() -> None:
    from types import SimpleNamespace

    from tilelang.runtime.cuda import launch_grid

    assert launch_grid(SimpleNamespace(persistent=1, fill=True), (1, 32), 132) == (132, 1, 1)
    assert launch_grid(SimpleNamespace(persistent=1, fill=False), (1, 32), 132) == (32, 1, 1)
