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

import dataclasses
from types import SimpleNamespace

import numpy as np
import pytest
from gemm_cases import GemmConfig, linear_case
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
    # (heavy: 9 tiles on one CTA, B by the copy producer; the coop walk runs in the epilogue and wide cases too)
    pytest.param("1", GemmConfig(64, 64, 32, out="f32"), (130, 150, 96), 1, marks=pytest.mark.heavy),
    # (heavy: 9 tiles on two CTAs, turns of two roles; pingpong_nt_edges and the epilogue case take turns too)
    pytest.param("2", GemmConfig(64, 64, 32, out="f32"), (130, 160, 96), 2, marks=pytest.mark.heavy),
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


@pytest.mark.parametrize("form", ["1", "2", "split", "wide"], ids=["coop", "pingpong", "split_k", "wide"])
def test_the_epilogue_loads_of_each_tile(form: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A bias per column and a residual tile read in each tile's epilogue (each role's own), an accumulator that
    starts at 0.5 (no zero-init shortcut: the last stage given back only where the loop ran): the
    interpreter's result on one CTA walking 2 x 3 tiles with edges in M and N. Split-K (12 CTAs, 6 tiles: 2
    pieces of 4 iterations): only a tile's first piece starts at 0.5 (each piece from 0.5 added it twice). Wide
    (the default's variant for many tiles: 3 column tiles as one of 4, pingpong roles): each tile's bias and
    residual at its own columns."""
    split = form == "split"
    monkeypatch.setenv("TILEC_GEMM_PERSISTENT", "0" if split or form == "wide" else form)
    monkeypatch.setenv("TILEC_GEMM_SPLITK", "1" if split else "0")
    monkeypatch.setenv("TILEC_GEMM_WIDEN", "1" if form == "wide" else "0")
    case = linear_case(70, 150, 128 if split else 48, (64, 64, 16), seed=11)
    gk = lower_gpu(case.kernel, "sm_90a", case.facts)
    assert gk.persistent == 1 and "acc_load" in print_gpu_kernel(gk)
    got = case.simulated((12 if split else 1, 1))
    np.testing.assert_allclose(got, case.interpreted(), rtol=1e-4, atol=1e-3)


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


@pytest.mark.parametrize(("form", "cfg", "shape", "ctas", "parts"), [
    ("1", GemmConfig(64, 64, 16, out="f32"), (130, 320, 48), 1, 4),  # 5 column tiles: the second wide tile's 4th live
    ("2", GemmConfig(64, 64, 16, out="f16", trans_b=True), (130, 272, 48), 2, 4),  # pingpong roles, B [N, K]
    ("1", GemmConfig(128, 128, 16, out="f16"), (200, 400, 48), 1, 2),  # two warpgroups of 64 x 256
], ids=["four_wide_edges", "pingpong_four_wide_nt", "two_wide_128"])
def test_wide_tiles_in_the_simulator(form: str, cfg: GemmConfig, shape, ctas: int, parts: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`TILEC_GEMM_WIDEN=1` (`passes/gemm_widen.py`): the CTA computes `parts` of the user's tiles side by side
    (one wider B stage and accumulator), then the user's epilogue once for each on its columns
    (`acc_columns`) at its own block position; a tile past the grid's last column is not stored. The values are
    the user tile's (the same sums in the same order): NumPy's product, every element written once."""
    monkeypatch.setenv("TILEC_GEMM_PERSISTENT", form)
    monkeypatch.setenv("TILEC_GEMM_WIDEN", "1")
    M, N, K = shape
    k = _gemm_kernel(cfg)
    a, b, c = cfg.inputs(M, N, K, 9)
    facts = _facts(a=a.shape, b=b.shape, c=c.shape)
    gk = lower_gpu(k, "sm_90a", facts)
    text = print_gpu_kernel(gk)
    assert gk.persistent == 1 and text.count("acc_columns") == parts * (2 if form == "2" else 1)
    SimDevice("sm_90a").run(k, (ctas, 1), [c, a, b], facts)
    cfg.assert_product(a, b, c, 9)


@pytest.mark.parametrize(("cfg", "shape", "ctas", "subs", "plain_subs"), [
    (GemmConfig(128, 128, 128), (72, 320, 208), 1, 2, 1),  # 2 x 128 wide, two warpgroups; K's last step 16 of 128
    # (heavy, ~3 s: pingpong roles of 64 x 256 (four tiles), B [N, K], two CTAs)
    pytest.param(GemmConfig(64, 64, 128, out="f32", trans_b=True), (130, 272, 208), 2, 2, 1, marks=pytest.mark.heavy),
    # (heavy, ~10 s: a 128 KB stage, which the ring cannot hold twice: 4 stages of 64 in both kernels)
    pytest.param(GemmConfig(128, 128, 256, trans_b=True), (130, 272, 400), 1, 4, 4, marks=pytest.mark.heavy),
], ids=["two_wide_128x128x128", "pingpong_four_wide_x128_nt", "x256_nt_both"])
def test_a_wide_tiles_k_step_in_stages_of_64(cfg: GemmConfig, shape, ctas: int, subs: int, plain_subs: int,  # type: ignore[no-untyped-def]
                                             monkeypatch) -> None:
    """A K step deeper than a wide stage holds (128x128x128 wide: 96 KB a stage, 2 stages and no room for the
    stores' staging, so it was not widened) is copied and multiplied as K / 64 stages of the ring
    (`gemm_widen.k_parts`, `HopperPlan.ksub`): `subs` wgmma groups a K step, the ring of 4 stages of the x64 wide
    tile; so is any K step whose stage the ring cannot hold twice (128x128x256: was sm_80's ring, 2.3 KB of
    spills). The wgmma k16 steps are the same and in the same order, so the result is the unwidened kernel's
    bit for bit (llsim, both), with edges in M, N (the last wide tile's second tile past the grid) and K."""
    M, N, K = shape
    k = _gemm_kernel(cfg)
    a, b, _ = cfg.inputs(M, N, K, 21)
    facts = _facts(a=a.shape, b=b.shape, c=(M, N))
    out = {}
    for widen in ("0", "1"):
        monkeypatch.setenv("TILEC_GEMM_WIDEN", widen)
        gk = lower_gpu(k, "sm_90a", facts)
        text = print_gpu_kernel(gk)
        consumer = print_gpu_kernel(dataclasses.replace(gk, body=_roles(gk)[1].body))
        if widen == "1":
            assert gk.persistent == 1 and gk.num_stages >= 4 and "acc_columns" in text
            assert consumer.count("wgmma ") == subs
        else:
            assert not gk.persistent and "acc_columns" not in text and consumer.count("wgmma ") == plain_subs
        c = np.full((M, N), np.nan, np.float32 if cfg.out == "f32" else np.float16)
        SimDevice("sm_90a").run(k, (ctas, 1) if gk.persistent else (-(-M // cfg.bm), -(-N // cfg.bn)), [c, a, b], facts)
        out[widen] = c
    cfg.assert_product(a, b, out["1"], 21)
    assert np.array_equal(out["0"], out["1"])


@pytest.mark.heavy  # (~2-4 s; two_wide_128x128x128 covers the sub-steps by default)
def test_a_linear_layers_k_step_in_stages_of_64(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The wide tile's K step of 128 in two stages (`HopperPlan.ksub`) under an accumulator that starts at 0.5
    (no zero-init shortcut: the first sub-step reads the constant, the second the first's sum) and an epilogue
    that loads a bias per column and a residual tile per user tile: the interpreter's result in llsim, one CTA
    walking 2 wide tiles (3 column tiles of 128, the last wide tile's second past the grid), K = 176 (the last
    step's second stage all past K: TMA's zeros)."""
    monkeypatch.setenv("TILEC_GEMM_WIDEN", "1")
    case = linear_case(70, 300, 176, (64, 128, 128), seed=5)
    gk = lower_gpu(case.kernel, "sm_90a", case.facts)
    consumer = print_gpu_kernel(dataclasses.replace(gk, body=_roles(gk)[1].body))
    assert gk.persistent == 1 and "acc_columns" in consumer and consumer.count("wgmma ") == 2
    np.testing.assert_allclose(case.simulated((1, 1)), case.interpreted(), rtol=1e-4, atol=1e-3)


@pytest.mark.heavy  # (~3 s; the sub-steps' copies and groups are the default cases')
def test_column_parts_with_a_k_step_in_stages_of_64() -> None:
    """128x512x128: two column parts of 256 whose 96 KB stage and the parts' staging left one stage (sm_80's
    ring took it); each part's K step in 2 stages of 64 (`HopperPlan.ksub`, `parts`): 2 parts x 2 wgmma groups,
    NumPy's product with edges in M, N and K."""
    cfg = GemmConfig(128, 512, 128)
    M, N, K = 130, 528, 208
    k = _gemm_kernel(cfg)
    a, b, c = cfg.inputs(M, N, K, 3)
    facts = _facts(a=a.shape, b=b.shape, c=c.shape)
    gk = lower_gpu(k, "sm_90a", facts)
    assert print_gpu_kernel(dataclasses.replace(gk, body=_roles(gk)[1].body)).count("wgmma ") == 4
    SimDevice("sm_90a").run(k, (2, 2), [c, a, b], facts)
    cfg.assert_product(a, b, c, 3)


def test_wide_tiles_only_where_they_are_the_users_tiles(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """No wide tile where A's tiles depend on the column axis too (here A's row offset reads block_id(1): the
    tiles side by side would need other A tiles; B's offsets may be any function, each tile's computed on its
    own position), where an operand is not copied by TMA, or where the user named the stages."""
    monkeypatch.setenv("TILEC_GEMM_WIDEN", "1")
    twisted = GemmConfig(64, 64, 16).source().replace("pa.load([block_id(0), k])", "pa.load([block_id(0) + block_id(1), k])")
    main = ("\nfn main() { let a = zeros::<f16>([8, 8]); let b = zeros::<f16>([8, 8]); let mut o = zeros::<f16>([8, 8]);"
            " gemm::<64, 64, 16>(o.partition([64, 64]), &a, &b).sync(); }\n")
    assert "block_id(0) + block_id(1)" in twisted
    k = driver.compile(twisted + main, "ir").output[0]
    text = print_gpu_kernel(lower_gpu(k, "sm_90a", _facts(a=(256, 64), b=(64, 512), c=(256, 512))))
    assert "acc_columns" not in text
    assert "acc_columns" in print_gpu_kernel(_lowered(GemmConfig(64, 64, 16), 256, 512, 64))
    assert "acc_columns" not in print_gpu_kernel(_lowered(GemmConfig(64, 64, 16), 256, 500, 64))  # B's rows: 1000 bytes
    assert "acc_columns" not in print_gpu_kernel(_lowered(GemmConfig(64, 64, 16, stages=4), 256, 512, 64))
    # a kernel that reads `num_blocks`: the walk's would count wide tiles (it was widened: acc + 2 read acc + 8)
    counted = GemmConfig(64, 64, 16).source().replace("c.store(acc as f16);", "c.store((acc + (num_blocks(1) as f32)) as f16);")
    assert "num_blocks(1)" in counted
    k = driver.compile(counted + main, "ir").output[0]
    assert "acc_columns" not in print_gpu_kernel(lower_gpu(k, "sm_90a", _facts(a=(256, 64), b=(64, 512), c=(256, 512))))


def test_split_k_by_default_where_a_launch_has_few_tiles(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`TILEC_GEMM_SPLITK` unset ("auto"): the kernel a launch compiles first is today's (one tile a CTA) with a
    request (`GpuKernel.few` -> `KernelABI.few`: the runtime, where the launch's grid has at most half as many
    tiles as SMs, compiles the variant with `TensorFacts.few_tiles`), and that variant is the split walk
    filling the card. No request where the user named the stages (a tuned kernel) or with "0"."""
    monkeypatch.delenv("TILEC_GEMM_SPLITK", raising=False)
    k = _gemm_kernel(GemmConfig(64, 128, 64))
    facts = _facts(a=(64, 4096), b=(4096, 4096), c=(64, 4096))
    plain = lower_gpu(k, "sm_90a", facts)
    assert plain.persistent == 0 and not plain.fill and plain.few == "c"
    few = {**facts, "c": dataclasses.replace(facts["c"], few_tiles=True)}
    split = lower_gpu(k, "sm_90a", few)
    assert split.persistent == 1 and split.fill and "split.save" in print_gpu_kernel(split)
    assert ("few",) == few["c"].key()[-1:] and "few" not in facts["c"].key()
    assert lower_gpu(_gemm_kernel(GemmConfig(64, 128, 64, stages=4)), "sm_90a", facts).few == ""
    monkeypatch.setenv("TILEC_GEMM_SPLITK", "0")
    assert lower_gpu(k, "sm_90a", facts).few == ""
    assert lower_gpu(k, "sm_90a", few).persistent == 0


def test_the_runtime_picks_the_split_k_variant_where_a_launch_has_few_tiles() -> None:
    """`CudaDevice._choose` with `_variant` stubbed: a kernel asking (`few`) gets the variant with
    `TensorFacts.few_tiles` on that tensor (its key: the base's and ("few", name)) where the launch's grid has at
    most half as many tiles as SMs (66 of 132), else the base variant; a kernel not asking never."""
    from tilelang.runtime.cuda import CudaDevice

    facts = _facts(a=(64, 4096), b=(4096, 4096), c=(64, 4096))
    dev = CudaDevice.__new__(CudaDevice)
    dev.ctx = SimpleNamespace(info=SimpleNamespace(sm_count=132, max_smem_optin=227 * 1024))
    seen: list[tuple[tuple[object, ...], bool]] = []

    def variant(pk, key, fs, span):  # type: ignore[no-untyped-def]
        seen.append((key, fs["c"].few_tiles))
        return SimpleNamespace(short=None, split=None, few=pk.few), f"fn{len(key)}"

    dev._variant = variant  # type: ignore[method-assign]
    for few, grid, want in (("c", (1, 66), True), ("c", (1, 67), False), ("c", (2, 32), True), ("", (1, 8), False)):
        seen.clear()
        _, fn, _ = dev._choose(SimpleNamespace(ir=None, few=few), ("base",), facts, [], None, grid)
        assert (fn == "fn2") == want and seen[-1] == ((("base", ("few", "c")) if want else ("base",)), want)


INIT = """
kernel fn g<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<f32, [BM, BN]>, a: &Tensor<f16, [?, ?]>,
                                                        b: &Tensor<f16, [?, ?]>, c0: &Tensor<f32, [?, ?]>, s: f32) {
    let pa = a.partition([BM, BK]);
    let pb = b.partition([BK, BN]);
    let mut acc = INIT;
    for k in 0..pa.num_tiles(1) {
        acc = mma(pa.load([block_id(0), k]), pb.load([k, block_id(1)]), acc);
    }
    c.store(acc);
}
"""
INITS = {
    "zeros": "zeros::<f32>([BM, BN])",
    "full": "full::<f32>([BM, BN], 0.5)",
    "negative_zero": "full::<f32>([BM, BN], -0.0)",
    "scalar_param": "full::<f32>([BM, BN], s)",
    "arange": "arange::<f32>(BN).reshape([1, BN]).broadcast([BM, BN])",
    "loaded": "c0.partition([BM, BN]).load([block_id(0), block_id(1)])",
}


@pytest.mark.parametrize("init", [x if x in ("zeros", "full", "negative_zero") else pytest.param(x, marks=pytest.mark.heavy)
                                  for x in INITS])  # (heavy: the forms the Hopper pipeline refuses, never split)
def test_split_k_over_every_start_of_the_accumulator(init: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Split-K forced (`TILEC_GEMM_SPLITK=1`; 2 tiles in 3 pieces on 8 CTAs) over every way the accumulator may
    start: a constant (zeros, 0.5, -0.0: the split form, only a tile's first piece starting from it), a scalar
    parameter, an arange, a loaded tile (not a constant: the Hopper pipeline refuses those loops, sm_80's ring or
    mma.sync runs them, unsplit): the interpreter's result in llsim (the board's 13:29 repro: 0.5 added once a
    piece)."""
    monkeypatch.setenv("TILEC_GEMM_SPLITK", "1")
    M, N, K = 100, 60, 200
    src = INIT.replace("INIT", INITS[init]) + (
        "\nfn main() { let a = zeros::<f16>([8, 8]); let b = zeros::<f16>([8, 8]); let c0 = zeros::<f32>([8, 8]);"
        " let mut o = zeros::<f32>([8, 8]); g::<64, 64, 16>(o.partition([64, 64]), &a, &b, &c0, 0.25).sync(); }\n")
    k = driver.compile(src, "ir").output[0]
    rng = np.random.default_rng(13)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c0 = rng.standard_normal((M, N)).astype(np.float32)
    facts = _facts(a=a.shape, b=b.shape, c0=c0.shape, c=(M, N))
    gk = lower_gpu(k, "sm_90a", facts)
    assert gk.fill == (init in ("zeros", "full", "negative_zero"))
    want = np.full((M, N), np.nan, np.float32)
    tilelang.compile(INIT.replace("INIT", INITS[init])).g[64, 64, 16](tilelang.partition(want, [64, 64]), a, b, c0,
                                                                       np.float32(0.25)).sync()
    got = np.full((M, N), np.nan, np.float32)
    SimDevice("sm_90a").run(k, (8, 1) if gk.fill else (2, 1), [got, a, b, c0, np.float32(0.25)], facts)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)


def test_wide_tiles_by_default_where_a_launch_has_many_tiles(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`TILEC_GEMM_WIDEN` unset ("auto"): today's kernel with a request (`GpuKernel.wide` = (tensor, f)); the
    variant compiled with `TensorFacts.wide_tiles` is the wide walk (128 x 128 as two tiles side by side on two
    warpgroups, 64 x 64 as four on pingpong roles). `_choose` (stubbed) takes it where the launch's grid has at
    least 2 f tiles an SM (two waves of wide tiles), and the split-K variant where it has at most SMs / 2."""
    from tilelang.runtime.cuda import CudaDevice

    for var in ("TILEC_GEMM_WIDEN", "TILEC_GEMM_PERSISTENT", "TILEC_GEMM_SPLITK"):
        monkeypatch.delenv(var, raising=False)
    facts = _facts(a=(4096, 4096), b=(4096, 4096), c=(4096, 4096))
    wide = {**facts, "c": dataclasses.replace(facts["c"], wide_tiles=True)}
    for tile, f, warps in (((128, 128, 64), 2, 12), ((64, 64, 64), 4, 12)):
        k = _gemm_kernel(GemmConfig(*tile))
        plain = lower_gpu(k, "sm_90a", facts)
        assert plain.persistent == 0 and plain.wide == ("c", f) and "acc_columns" not in print_gpu_kernel(plain)
        got = lower_gpu(k, "sm_90a", wide)
        assert got.persistent == 1 and got.num_warps == warps and print_gpu_kernel(got).count("acc_columns") >= f
    assert lower_gpu(_gemm_kernel(GemmConfig(128, 128, 64, stages=4)), "sm_90a", facts).wide is None
    dev = CudaDevice.__new__(CudaDevice)
    dev.ctx = SimpleNamespace(info=SimpleNamespace(sm_count=132, max_smem_optin=227 * 1024))

    def variant(pk, key, fs, span):  # type: ignore[no-untyped-def]
        return SimpleNamespace(short=None, split=None, few="c", wide=("c", 2)), key

    dev._variant = variant  # type: ignore[method-assign]
    for grid, want in (((32, 32), ("base", ("wide", "c"))), ((16, 33), ("base", ("wide", "c"))), ((16, 32), ("base",)),
                       ((8, 8), ("base", ("few", "c")))):
        assert dev._choose(SimpleNamespace(ir=None), ("base",), facts, [], None, grid)[1] == want
