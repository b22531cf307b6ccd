"""The Hopper attention pipeline with a `last_block` epilogue (`TILEC_ATTN_LAST_BLOCK=1`, hattn7, issue 15):
the consumers run `if last_block(axis) { .. }` after each tile's stores, each tile once (single tiles), in
their accumulator layout. The kernel: attention_variants' `decode_fused_tc`, the tensor-core decode split
with its merge folded in, in llsim against the interpreter and NumPy (the simulator also checks every group
counter is 0 again at the launch's end)."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import numpy as np
import pytest
from ptxas_report import assemble
from test_decode_tc_pipeline import _inputs  # q, k, v (f16) with the cache past `clen` NaN and Inf
from test_decode_wg_pipeline import _sdpa_case

import tilelang
from tilelang.backend import emit_ptx, lower_gpu
from tilelang.backend.facts import TensorFacts
from tilelang.backend.gpu import nodes as g
from tilelang.backend.gpu.printer import print_gpu_kernel
from tilelang.backend.llvm import emit_llvm_text
from tilelang.dtypes import DType
from tilelang.ir.lower import lower_kernel
from tilelang.runtime.launch import ArgFact

ROOT = Path(__file__).resolve().parents[2]
G = 4


@functools.cache
def _variants():  # type: ignore[no-untyped-def]
    return tilelang.load(str(ROOT / "benchmarks" / "attention_variants.tile"))


def _params(bhkv: int, smax: int, splits: int, d: int, dt: str = "f16") -> list:
    t, f32 = DType.parse(dt), DType.F32
    return [("o_part", f32, (bhkv, G, splits * d), (1, 64, d)), ("lse_part", f32, (bhkv, G, splits), (1, 64, 1)),
            ("o", t, (bhkv, G, d), (1, 64, d)), ("q", t, (bhkv, G, d), None), ("k", t, (bhkv, smax, d), None),
            ("v", t, (bhkv, smax, d), None)]


def _kernel(bhkv: int, smax: int, splits: int, bn: int, d: int, dt: str = "f16"):  # type: ignore[no-untyped-def]
    params = _params(bhkv, smax, splits, d, dt)
    kir = lower_kernel(_variants()._program, "decode_fused_tc", {"T": DType.parse(dt), "BN": bn, "D": d},
                       {n: ArgFact(t, s, tl) for n, t, s, tl in params})
    return kir, {n: TensorFacts(True, tuple(x % 16 == 0 for x in s), False) for n, _, s, _ in params}


def _reference(q, k, v, clen: int) -> np.ndarray:  # type: ignore[no-untyped-def]
    qf, kf, vf = (x.astype(np.float64) for x in (q, k[:, :clen], v[:, :clen]))
    s = np.einsum("hgd,hkd->hgk", qf, kf) * 0.125
    p = np.exp(s - s.max(-1, keepdims=True))
    return np.einsum("hgk,hkd->hgd", p / p.sum(-1, keepdims=True), vf)  # type: ignore[no-any-return]


def _llsim_against_interpreter(bhkv: int, splits: int, d: int, clen: int, seed: int, smax: int, sim, interp) -> None:  # type: ignore[no-untyped-def]
    """`sim(args)` (llsim) and `interp(o_part, lse, o)` (the interpreter) each from NaN-filled outputs, `args` the
    kernel's (o_part, lse, o, q, k, v, cache_len, scale): the outputs agree and match NumPy's."""
    q, k, v = _inputs(bhkv, smax, d, clen, seed)
    outs = []
    for engine in ("llsim", "interpreter"):
        o_part = np.full((bhkv, G, splits * d), np.nan, np.float32)
        lse = np.full((bhkv, G, splits), np.nan, np.float32)
        o = np.full((bhkv, G, d), np.nan, np.float16)
        if engine == "llsim":
            sim([o_part, lse, o, q, k, v, np.int32(clen), np.float32(0.125)])
        else:
            interp(o_part, lse, o, q, k, v)
        outs.append(o.astype(np.float64))
    np.testing.assert_allclose(outs[0], outs[1], atol=2e-3, rtol=1e-2)
    np.testing.assert_allclose(outs[0], _reference(q, k, v, clen), atol=3e-3, rtol=1e-2)


def _matches_sdpa(kern, o_tile: list[int], batch: int, smax: int, clen: int, splits: int) -> None:  # type: ignore[no-untyped-def]
    """`kern` (a `decode_fused_tc*` instance, bf16, D = 128) on the GPU against SDPA, with NaN and Inf past
    `cache_len`, twice (the counters zero again after a launch); `o_tile`: its `o` partition's tile."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    d, rows = 128, batch * 8
    q, k, v, want = _sdpa_case(torch, batch, smax, clen)
    for t in (k, v):
        t[:, :, clen:] = float("nan")
        t[:, :, clen + 1::3] = float("inf")
    for _ in range(2):
        o = torch.full_like(q, float("nan"))
        o_part = torch.full((rows, G, splits * d), float("nan"), device="cuda")
        lse = torch.full((rows, G, splits), float("nan"), device="cuda")
        kern(tilelang.partition(o_part, [1, 64, d]), tilelang.partition(lse, [1, 64, 1]),
             tilelang.partition(o.view(rows, G, d), o_tile), q.view(rows, G, d), k.view(rows, smax, d),
             v.view(rows, smax, d), clen, d**-0.5).sync()
        assert torch.isfinite(o).all()
        err = float((o.float() - want).abs().max() / want.abs().max())
        assert err < 1e-2, err


def test_the_pipeline_takes_the_region_only_when_switched(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    kir, facts = _kernel(8, 8192, 16, 64, 128, "bf16")
    monkeypatch.delenv("TILEC_ATTN_LAST_BLOCK", raising=False)
    off = lower_gpu(kir, "sm_90a", facts)
    assert not off.persistent and any("`lastblock` after the loop" in n.message for n in off.notes)
    monkeypatch.setenv("TILEC_ATTN_LAST_BLOCK", "1")
    on = lower_gpu(kir, "sm_90a", facts)
    text = print_gpu_kernel(on)
    assert on.persistent == 1 and "role consumer warps 4" in text and text.count("last_block 2") == 1
    assert on.split is None  # (no split form asked for: a region's walk is never cut)
    # the flag the arrival hands to the consumers lives in their scratch, which the role-scratch check
    # (`EmitterCore._claim_scratch`, run as the LLVM is emitted) keeps apart from the producer's
    ll = emit_llvm_text(on, on.facts, "")[0]
    assert "atom.acq_rel.gpu.global.add.u32" in ll
    assert [int(x) for x in re.findall(r"store i8 .*@smem, i32 (\d+)\)", ll)] and all(
        int(x) >= on.smem_bytes for x in re.findall(r"store i8 .*@smem, i32 (\d+)\)", ll))


# (KV heads, cache positions, cache_len, shares, BN, D, CTAs): the tiles are KV heads x shares, walked by the CTAs.
# All heavy since htier1 (the tiers, tests/README.md): `TILEC_ATTN_LAST_BLOCK` is opt-in ("1" and "join": no plan
# sets it); its default tests are
# test_the_pipeline_takes_the_region_only_when_switched ("1"), test_join_needs_a_power_of_two_of_warps ("join"'s
# refusal) and test_join_runs_the_region_after_the_roles ("1"'s note where it cannot hold the region, "join"'s roles)
CASES = [
    # one CTA walks every tile; 3 shares (a walk of pairs ran the middle one twice: its counter was left at 1)
    pytest.param(1, 256, 150, 3, 64, 64, 1, marks=pytest.mark.heavy),
    pytest.param(2, 256, 150, 3, 64, 64, 4, marks=pytest.mark.heavy),  # 6 tiles on 4 CTAs: 2 of 4 busy in the last round
    pytest.param(2, 256, 150, 3, 64, 64, 5, marks=pytest.mark.heavy),  # 1 of 5 busy in the last round
    pytest.param(2, 256, 150, 3, 64, 64, 3, marks=pytest.mark.heavy),  # every CTA busy in each round
    pytest.param(1, 128, 37, 2, 64, 64, 2, marks=pytest.mark.heavy),  # a share with no key (its log-sum-exp MASKED, its partial zeros)
    pytest.param(3, 200, 200, 2, 64, 128, 4, marks=pytest.mark.heavy),  # D = 128; the cache's end inside a block
]


@pytest.mark.parametrize(("bhkv", "smax", "clen", "splits", "bn", "d", "ctas"), CASES)
def test_decode_fused_tc_in_the_simulator(bhkv: int, smax: int, clen: int, splits: int, bn: int, d: int,
                                          ctas: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import llsim

    monkeypatch.setenv("TILEC_ATTN_LAST_BLOCK", "1")
    monkeypatch.setattr(llsim, "UNDEF_FLOAT", "nan")
    kir, facts = _kernel(bhkv, smax, splits, bn, d)
    assert lower_gpu(kir, "sm_90a", facts).persistent == 1
    _llsim_against_interpreter(
        bhkv, splits, d, clen, 7, smax, lambda args: llsim.SimDevice("sm_90a").run(kir, (ctas, 1), args, facts),
        lambda o_part, lse, o, q, k, v: _variants().decode_fused_tc["f16", bn, d](
            tilelang.partition(o_part, [1, 64, d]), tilelang.partition(lse, [1, 64, 1]),
            tilelang.partition(o, [1, 64, d]), q, k, v, clen, 0.125).sync())


@pytest.mark.heavy
@pytest.mark.parametrize(("d", "spills"), [(64, 0), (128, 24)])
def test_decode_fused_tc_assembles(d: int, spills: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """ptxas 13, sm_90a, the B=1 8k plan (8 KV heads x 16 shares, bf16): D = 64 no spills; D = 128 24 B,
    five walk values stored once before the roles split and reloaded at each tile's start (the merge's
    [64, 128] partial and sum beside them; not in the key loop)."""
    monkeypatch.setenv("TILEC_ATTN_LAST_BLOCK", "1")
    kir, facts = _kernel(8, 8192, 16, 64, d, "bf16")
    r = assemble(emit_ptx(kir, "sm_90a", facts), "sm_90a")
    assert r.max_spill_stores <= spills, r.text


# (batch, cache positions, cache_len, shares, BN): 32 / 8 heads, D = 128, bf16; B=1 8k's plan, a cache_len inside a
# key block, odd shares, more tiles than SMs (8 x 8 x 33 = 2,112: every CTA walks several, the last round partial)
GPU_CASES = [(1, 8192, 8192, 16, 64), (1, 8192, 8000, 16, 64), (2, 1024, 1000, 3, 64), (8, 512, 300, 33, 64)]


@pytest.mark.gpu
@pytest.mark.parametrize(("batch", "smax", "clen", "splits", "bn"), GPU_CASES)
def test_decode_fused_tc_matches_sdpa(batch: int, smax: int, clen: int, splits: int, bn: int,
                                      monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """On the GPU, NaN and Inf past `cache_len`; twice (the counters zero again after a launch)."""
    monkeypatch.setenv("TILEC_ATTN_LAST_BLOCK", "1")
    _matches_sdpa(_variants().decode_fused_tc["bf16", bn, 128], [1, 64, 128], batch, smax, clen, splits)


# -- "join": the region after the warp roles, every thread of the CTA, generic layouts (decode_fused_tcj)

def _kernel_j(bhkv: int, smax: int, splits: int, bn: int, d: int, dt: str = "f16"):  # type: ignore[no-untyped-def]
    params = _params(bhkv, smax, splits, d, dt)
    params[2] = ("o", DType.parse(dt), (bhkv, G, d), (1, G, d))
    ns = 1 << max(0, splits - 1).bit_length()
    gen = {"T": DType.parse(dt), "G": G, "BN": bn, "D": d, "NS": ns, "NC": min(8, ns)}
    kir = lower_kernel(_variants()._program, "decode_fused_tcj", gen, {n: ArgFact(t, s, tl) for n, t, s, tl in params})
    return kir, {n: TensorFacts(True, tuple(x % 16 == 0 for x in s), False) for n, _, s, _ in params}, gen


def test_join_runs_the_region_after_the_roles(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    kir, facts, _ = _kernel_j(8, 8192, 16, 64, 128, "bf16")
    monkeypatch.setenv("TILEC_ATTN_LAST_BLOCK", "1")  # the consumers' layout cannot hold its [G, NC, D] steps
    gk = lower_gpu(kir, "sm_90a", facts)
    assert not gk.persistent and any("in the `last_block` region" in n.message for n in gk.notes)
    monkeypatch.setenv("TILEC_ATTN_LAST_BLOCK", "join")
    gk = lower_gpu(kir, "sm_90a", facts)
    assert gk.persistent == 0 and gk.num_warps == 8 and "role consumer warps 4" in print_gpu_kernel(gk)
    ptx = emit_ptx(kir, "sm_90a", facts)
    regs = [m.start() for m in re.finditer(r"setmaxnreg\.(inc|dec)", ptx)]
    # the consumers' inc, the producer's dec, then every warp's inc once the roles end; the arrival after it
    assert len(regs) == 3 and "setmaxnreg.inc" in ptx[regs[2]:regs[2] + 16] and ptx.index("atom.acq_rel") > regs[2]


JOIN_CASES = [
    # 3 shares (NS 4, NC 4: one step, one share past the last MASKED)
    pytest.param(2, 256, 150, 3, 64, 64, "row-major", marks=pytest.mark.heavy),
    # 16 shares, 2 steps of 8; another block merges (the blocks reversed) (heavy, htier1: the tiers at CASES)
    pytest.param(1, 1024, 1000, 16, 64, 64, "reverse", marks=pytest.mark.heavy),
    pytest.param(3, 200, 200, 2, 64, 128, "row-major", marks=pytest.mark.heavy),  # D = 128
    pytest.param(1, 128, 37, 2, 64, 64, "reverse", marks=pytest.mark.heavy),  # a share with no key
    # 5 key blocks over 3 shares (2, 2, 1), the cache's end inside the last
    pytest.param(2, 512, 300, 3, 64, 64, "reverse", marks=pytest.mark.heavy),
]


@pytest.mark.parametrize(("bhkv", "smax", "clen", "splits", "bn", "d", "order"), JOIN_CASES)
def test_decode_fused_tcj_joined_in_the_simulator(bhkv: int, smax: int, clen: int, splits: int, bn: int, d: int,
                                                  order: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import llsim

    monkeypatch.setenv("TILEC_ATTN_LAST_BLOCK", "join")
    monkeypatch.setattr(llsim, "UNDEF_FLOAT", "nan")
    kir, facts, gen = _kernel_j(bhkv, smax, splits, bn, d)
    _llsim_against_interpreter(
        bhkv, splits, d, clen, 9, smax,
        lambda args: llsim.SimDevice("sm_90a").run(kir, (bhkv, 1, splits), args, facts, order=order),
        lambda o_part, lse, o, q, k, v: _variants().decode_fused_tcj["f16", G, bn, d, gen["NS"], gen["NC"]](
            tilelang.partition(o_part, [1, 64, d]), tilelang.partition(lse, [1, 64, 1]),
            tilelang.partition(o, [1, G, d]), q, k, v, clen, 0.125).sync())


@pytest.mark.heavy
def test_decode_fused_tcj_assembles_without_spills(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """ptxas 13, sm_90a, the B=1 8k plan (bf16, D = 128, 16 shares): 0 B (with the rejoin's `setmaxnreg.inc` in a
    branch on the producer's warps, ptxas compiled the region for the producer's 40 registers: 372 B)."""
    monkeypatch.setenv("TILEC_ATTN_LAST_BLOCK", "join")
    kir, facts, _ = _kernel_j(8, 8192, 16, 64, 128, "bf16")
    r = assemble(emit_ptx(kir, "sm_90a", facts), "sm_90a")
    assert r.max_spill_stores == 0, r.text


@pytest.mark.gpu
@pytest.mark.parametrize(("batch", "smax", "clen", "splits", "bn"), GPU_CASES)
def test_decode_fused_tcj_matches_sdpa(batch: int, smax: int, clen: int, splits: int, bn: int,
                                       monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TILEC_ATTN_LAST_BLOCK", "join")
    ns = 1 << max(0, splits - 1).bit_length()
    _matches_sdpa(_variants().decode_fused_tcj["bf16", G, bn, 128, ns, min(8, ns)], [1, G, 128], batch, smax, clen,
                  splits)


# a user's attention (tests/backend/programs/user_attention.tile's loop) whose last block of the grid writes the
# column maxima of the first query block's output: a region the consumers' layout cannot run (a reduction along
# the rows), so only "join" takes the kernel into the pipeline
REGION_SRC = """
kernel fn attn_lb<const BM: i32, const BN: i32, const D: i32>(o: &mut Tensor<f16, [BM, D]>, top: &mut Tensor<f32, [1, D]>,
        q: &Tensor<f16, [?, D]>, k: &Tensor<f16, [?, D]>, v: &Tensor<f16, [?, D]>, scale: f32) {
    let qt = q.load_like(o);
    let pk = k.partition([BN, D]);
    let pv = v.partition([BN, D]);
    let mut m = full::<f32>([BM, 1], -1.0e30);
    let mut l = zeros::<f32>([BM, 1]);
    let mut acc = zeros::<f32>([BM, D]);
    let n = k.shape()[0];
    for j in 0..(n + BN - 1) / BN {
        let s = mma(qt, pk.load([j, 0]).transpose(), zeros::<f32>([BM, BN])) * scale;
        let keys = arange::<i32>(BN).reshape([1, BN]) + j * BN;
        let s = where(keys < n, s, -1.0e30);
        let mn = maximum(m, max(s, 1).reshape([BM, 1]));
        let p = exp(s - mn);
        let alpha = exp(m - mn);
        l = l * alpha + sum(p, 1).reshape([BM, 1]);
        acc = mma(p as f16, pv.load([j, 0]), acc * alpha);
        m = mn;
    }
    o.store((acc / l) as f16);
    if last_block(0) {
        let t = o.group().partition([BM, D]).load([0, 0]);
        top.store((t as f32).max(0).reshape([1, D]));
    }
}
"""


def _region_kernel(s: int, bm: int):  # type: ignore[no-untyped-def]
    mod = tilelang.compile(REGION_SRC)
    f16, f32 = DType.F16, DType.F32
    params = [("o", f16, (s, 64), (bm, 64)), ("top", f32, (1, 64), (1, 64)), ("q", f16, (s, 64), None),
              ("k", f16, (s, 64), None), ("v", f16, (s, 64), None)]
    kir = lower_kernel(mod._program, "attn_lb", {"BM": bm, "BN": 64, "D": 64},
                       {n: ArgFact(t, sh, tl) for n, t, sh, tl in params})
    return mod, kir, {n: TensorFacts(True, tuple(x % 16 == 0 for x in sh), False) for n, _, sh, _ in params}


def test_join_needs_a_power_of_two_of_warps(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """BM = 128: two consumer warpgroups and the producer's, 12 warps, whose generic layouts' thread coordinates
    (masks) would give two warps one place: the region stays in the consumers, which cannot run a reduction
    along the rows, and the kernel keeps the generic path, saying why."""
    monkeypatch.setenv("TILEC_ATTN_LAST_BLOCK", "join")
    _, kir, facts = _region_kernel(300, 128)
    gk = lower_gpu(kir, "sm_90a", facts)
    assert not any(isinstance(op, g.WarpSpecialize) for op in gk.body.ops)
    assert any("12 warps are not a power of two" in n.message for n in gk.notes), [n.message for n in gk.notes]


@pytest.mark.heavy
def test_a_region_joined_after_three_consumer_warpgroups(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """BM = 192 (16 warps): at the join the consumers `dec` from 160 to 128 registers and the producer `inc`s from
    24 (each warpgroup its own, after a CTA barrier); llsim against the interpreter; ptxas 0 B of spills."""
    import llsim

    monkeypatch.setenv("TILEC_ATTN_LAST_BLOCK", "join")
    mod, kir, facts = _region_kernel(400, 192)
    ptx = emit_ptx(kir, "sm_90a", facts)
    assert re.findall(r"setmaxnreg\.(\w+)\.sync\.aligned\.u32\s+(\d+)", ptx)[-2:] == [("dec", "128"), ("inc", "128")]
    assert assemble(ptx, "sm_90a").max_spill_stores == 0
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((400, 64)).astype(np.float16) for _ in range(3))
    outs = []
    for engine in ("llsim", "interpreter"):
        o = np.full((400, 64), np.nan, np.float16)
        top = np.full((1, 64), np.nan, np.float32)
        if engine == "llsim":
            llsim.SimDevice("sm_90a").run(kir, (3,), [o, top, q, k, v, np.float32(0.125)], facts)
        else:
            mod.attn_lb[192, 64, 64](tilelang.partition(o, [192, 64]), tilelang.partition(top, [1, 64]), q, k, v,
                                     0.125).sync()
        outs.append((o.astype(np.float64), top.astype(np.float64)))
    np.testing.assert_allclose(outs[0][0], outs[1][0], atol=2e-3, rtol=1e-2)
    np.testing.assert_allclose(outs[0][1], outs[1][1], atol=2e-3, rtol=1e-2)
