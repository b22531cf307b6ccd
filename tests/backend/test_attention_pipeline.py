"""The Hopper attention pipeline (`backend/gpu/passes/attention.py`): which
loops it takes, the PTX it emits (ptxas for sm_90a), and the kernels run on
the CPU by `llsim` against NumPy: `std::attention` (3-D tensors, grouped
query heads, causal with S_q != S_k, the log-sum-exp output, sequences that
are not multiples of the blocks) and a user's own attention loop written
differently (2-D tensors, natural-log softmax). Kept small: the simulator
runs one Python generator per thread."""

from __future__ import annotations

import dataclasses
import functools
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from llsim import SimDevice
from ptxas_report import assemble

from tilelang import driver
from tilelang.backend import emit_llvm_text, emit_ptx, lower_gpu
from tilelang.backend.facts import TensorFacts
from tilelang.backend.gpu.printer import print_gpu_kernel

USER = (Path(__file__).parent / "programs" / "user_attention.tile").read_text()


@pytest.fixture
def whole_tiles(monkeypatch):  # type: ignore[no-untyped-def]
    """The split-KV last round off (`TILEC_ATTN_SPLIT=0`): for tests that read the whole-tile walk's text. The
    split kernel (the default for D = 64) holds a copy of that walk beside the pieces' walk, so its text has two
    key loops and two epilogues; test_attention_split checks the copy's key loop is this kernel's."""
    monkeypatch.setenv("TILEC_ATTN_SPLIT", "0")


@functools.cache  # (the front end's IR, which no setting changes and no pass mutates: once a process)
def _std(kernel: str, dt: str, bm: int, bn: int, d: int):  # type: ignore[no-untyped-def]
    lse = f"lse.partition([1, {bm}]), " if kernel.endswith("lse") else ""
    src = (f"use std::attention::{kernel};\nfn main() {{ let q = zeros::<{dt}>([2, 64, {d}]);"
           f" let mut o = zeros::<{dt}>([2, 64, {d}]); let mut lse = zeros::<f32>([2, 64]);"
           f" {kernel}::<{dt}, {bm}, {bn}, {d}>(o.partition([1, {bm}, {d}]), {lse}&q, &q, &q, 0.1, true).sync(); }}\n")
    return driver.compile(src, "ir").output[0]


@functools.cache
def _user(bm: int, bn: int, d: int):  # type: ignore[no-untyped-def]
    src = USER.replace("attn::<64, 64, 64>(o.partition([64, 64])", f"attn::<{bm}, {bn}, {d}>(o.partition([{bm}, {d}])")
    return driver.compile(src, "ir").output[0]


def _facts(names: str, rank: int) -> dict[str, TensorFacts]:
    return {n: TensorFacts(True, (False,) * (rank - 1) + (True,)) for n in names}


def _reference(q, k, v, scale, causal):  # type: ignore[no-untyped-def]
    s = q.astype(np.float64) @ k.astype(np.float64).T * scale
    sq, sk = s.shape
    if causal:
        s = np.where(np.arange(sk)[None] <= np.arange(sq)[:, None] + sk - sq, s, -np.inf)
    mx = s.max(1, keepdims=True)
    p = np.exp(s - mx)
    return (p / p.sum(1, keepdims=True)) @ v.astype(np.float64), mx[:, 0] + np.log(p.sum(1))


def _run_lse_and_check(k, facts, grid, bh: int, hkv: int, sq: int, sk: int, d: int,  # type: ignore[no-untyped-def]
                       causal: bool, seed: int, q_scale: float = 1.0) -> SimDevice:
    """`flash_attention_lse` kernel `k` in the simulator on fresh inputs (bh
    query heads over hkv key/value heads, q times `q_scale`, outputs preset
    to NaN) against `_reference`: rows that see no key give zeros and lse
    -inf. Returns the simulator (its split records, for one)."""
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((bh, sq, d))
    q = (q * q_scale if q_scale != 1.0 else q).astype(np.float16)
    kk, v = (rng.standard_normal((hkv, sk, d)).astype(np.float16) for _ in range(2))
    o = np.full((bh, sq, d), np.nan, np.float16)
    lse = np.full((bh, sq), np.nan, np.float32)
    dev = SimDevice("sm_90a")
    dev.run(k, grid, [o, lse, q, kk, v, np.float32(0.125), causal], facts)
    for b in range(bh):
        ref, lref = _reference(q[b], kk[b * hkv // bh], v[b * hkv // bh], 0.125, causal)
        seen = np.isfinite(lref)
        np.testing.assert_allclose(o[b][seen].astype(np.float64), ref[seen], atol=3e-3, rtol=1e-2)
        np.testing.assert_allclose(lse[b][seen], lref[seen], atol=1e-3, rtol=1e-4)
        assert (o[b][~seen] == 0).all() and (lse[b][~seen] == -np.inf).all()
    return dev


def test_the_pipeline_takes_std_attention_and_a_user_loop() -> None:
    for k, facts in ((_std("flash_attention", "f16", 128, 64, 128), _facts("oqkv", 3)),
                     (_std("flash_attention_lse", "bf16", 128, 128, 64), {**_facts("oqkv", 3), **_facts(["lse"], 2)}),
                     (_user(128, 64, 64), _facts("oqkv", 2))):
        text = print_gpu_kernel(lower_gpu(k, "sm_90a", facts))
        assert "role consumer warps 8" in text and "role producer warps 4" in text
        assert text.count("tma.load") >= 3 and "wgmma.rs" in text and "(a k-major, b k-major)" in text
        # the softmax runs in the accumulator layout: no conversion, no shared-memory trip
        assert "convert_layout" not in text and "#blocked" not in text.split("warp_specialize")[1]
    # std::attention's grid is (heads, query blocks): the query blocks of a head start together
    text = print_gpu_kernel(lower_gpu(_std("flash_attention", "f16", 128, 64, 128), "sm_90a", _facts("oqkv", 3)))
    head = text.split("warp_specialize")[0]
    assert "%launch_x" in head and "num_blocks 1" in head  # block ids from the launch position, y fastest
    # not on sm_80, nor for an unaligned tensor (TMA cannot read it)
    k = _user(128, 64, 64)
    assert "wgmma" not in print_gpu_kernel(lower_gpu(k, "sm_80", _facts("oqkv", 2)))
    odd = {**_facts("oqkv", 2), "k": TensorFacts(False, (False, True))}
    assert "wgmma.rs" not in print_gpu_kernel(lower_gpu(k, "sm_90a", odd))


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not installed")
# Spill bytes allowed: none but in two schedules that are not the default at
# their shape, where std's one-compare mask of 2026-12-03 left ptxas 13.0 one
# or a few scalars short outside the key loop (nvdisasm: STL/LDL in the
# tile's prologue, or around the peeled block; none in the loop): 128 x 128,
# D = 128 overlapped (the default there is rotated) and the opt-in peel.
# Heavy (htier1, the tiers in tests/README.md): the schedules no launch gets by default, each switch keeping one
# default test: the peel (`TILEC_ATTN_PEEL`, lost: RESULTS.md 2026-12-03)
# test_the_last_iteration_is_peeled_where_the_registers_allow, the turns (`TILEC_ATTN_PINGPONG`, -2..+1 %: RESULTS.md
# hattn3 2026-12-06) test_a_user_attention_loop_in_the_simulator[overlap+turns+once-128-120], the overlapped loop
# at D = 128 and the rotated one at D = 64 (`TILEC_ATTN_ROTATE` forced against "auto") the default kernels'
# f16-128-128-64-overlap / bf16-128-64-64-overlap and f16-128-128-128-overlap+rotate here.
# The serial schedule forced at 128 x 128 too (heavy, htier1): it is the default only where the ring has under 3
# stages (test_a_ring_of_two_stages_takes_the_serial_schedule, test_attention_one_stage).
@pytest.mark.parametrize(("dt", "bm", "bn", "d", "schedule", "spill"), [pytest.param("f16", 128, 128, 128, "serial", 0, marks=pytest.mark.heavy),
                                                                        ("bf16", 128, 64, 64, "overlap", 0),
                                                                        pytest.param("bf16", 128, 128, 64, "overlap+peel", 16, marks=pytest.mark.heavy),
                                                                        pytest.param("f16", 128, 64, 128, "overlap+peel", 0, marks=pytest.mark.heavy),
                                                                        # turns, one tile a block (the old pingpong-unsafe)
                                                                        pytest.param("f16", 128, 128, 128, "overlap+turns+once", 0, marks=pytest.mark.heavy),
                                                                        pytest.param("f16", 128, 128, 128, "overlap", 8, marks=pytest.mark.heavy),
                                                                        # P carried packed (f32 P: 84 B of spills)
                                                                        ("f16", 128, 128, 128, "overlap+rotate", 0),
                                                                        pytest.param("bf16", 128, 128, 64, "overlap+rotate", 0, marks=pytest.mark.heavy),
                                                                        ("f16", 128, 128, 64, "overlap", 0),
                                                                        # opt-in turns: the 16-byte epilogue stores (default at
                                                                        # D = 128) raise its 8 B of spills to 12, the tile
                                                                        # boundary's defaults at D = 128 (`BOUNDARY_D`: the
                                                                        # producer at 24, the fast walk) to 24
                                                                        pytest.param("f16", 128, 128, 128, "overlap+turns", 24, marks=pytest.mark.heavy),
                                                                        pytest.param("bf16", 128, 128, 64, "overlap+turns", 0, marks=pytest.mark.heavy)])
def test_attention_ptx_assembles_for_sm_90a_without_spills(tmp_path, dt, bm, bn, d, schedule, spill,  # type: ignore[no-untyped-def]
                                                            monkeypatch) -> None:
    _schedule(monkeypatch, schedule)
    ptx = emit_ptx(_std("flash_attention", dt, bm, bn, d), "sm_90a", _facts("oqkv", 3))
    r = assemble(ptx, "sm_90a")
    assert r.max_spill_stores <= spill, r.text
    # ptxas serialises every wgmma when it sees a register of one in flight written (C7515)
    assert "C7515" not in r and "serialized" not in r, r.text


@pytest.mark.usefixtures("whole_tiles")
def test_the_last_iteration_is_peeled_where_the_registers_allow(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The overlapped loop runs every key block but the last, which follows it
    with its P V alone (no S of a next block), where S, O and P fit the
    consumers' registers twice over; 128 x 128 blocks at D = 128 keep one
    copy of the body and a repeated S on the last iteration. Opt-in
    (`TILEC_ATTN_PEEL=1`) until timed on the GPU; the rotated loop (the
    default at D = 128) is never peeled, so it is switched off here."""
    monkeypatch.setenv("TILEC_ATTN_PEEL", "1")
    monkeypatch.setenv("TILEC_ATTN_ROTATE", "0")
    def products(dt: str, bm: int, bn: int, d: int) -> tuple[int, int, str]:
        text = print_gpu_kernel(lower_gpu(_std("flash_attention", dt, bm, bn, d), "sm_90a", _facts("oqkv", 3)))
        body = text.split("warp_specialize")[1]
        return body.count("wgmma.rs"), body.count("= wgmma %"), body

    for dt, bm, bn, d in (("bf16", 128, 128, 64), ("f16", 128, 64, 128), ("f16", 64, 64, 64)):
        rs, s, body = products(dt, bm, bn, d)
        assert (rs, s) == (2, 2), (dt, bm, bn, d, rs, s)  # P V in the loop and after it; S before and in it
        assert "%upper" in body  # the loop stops one block early
    rs, s, body = products("f16", 128, 128, 128)
    assert (rs, s) == (1, 2) and "%upper" not in body and "where %more" in body


# ("1" heavy, htier1: the peel's one default test is test_the_last_iteration_is_peeled_where_the_registers_allow;
# unset and "0" hold the default)
@pytest.mark.parametrize("setting", [None, "0", pytest.param("1", marks=pytest.mark.heavy)])
@pytest.mark.usefixtures("whole_tiles")
def test_the_peel_follows_its_switch(setting: str | None, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from tilelang.backend.gpu.passes.attention_loop import PEEL_DEFAULT

    if setting is None:
        monkeypatch.delenv("TILEC_ATTN_PEEL", raising=False)
    else:
        monkeypatch.setenv("TILEC_ATTN_PEEL", setting)
    text = print_gpu_kernel(lower_gpu(_std("flash_attention", "bf16", 128, 128, 64), "sm_90a", _facts("oqkv", 3)))
    on = (setting or PEEL_DEFAULT) == "1"
    assert text.split("warp_specialize")[1].count("wgmma.rs") == (2 if on else 1)


@pytest.mark.parametrize("rotate", ["0", "1"])
def test_the_rotated_loop_issues_s_with_the_previous_blocks_p_v(rotate: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`TILEC_ATTN_ROTATE=1`: no S before the loop (the first iteration issues
    it with a P V of zeros), the last block's P V after the loop; otherwise
    S before the loop and in it, one P V (in the loop)."""
    monkeypatch.setenv("TILEC_ATTN_PEEL", "0")
    monkeypatch.setenv("TILEC_ATTN_ROTATE", rotate)
    text = print_gpu_kernel(lower_gpu(_std("flash_attention", "f16", 128, 128, 128), "sm_90a", _facts("oqkv", 3)))
    body = text.split("role consumer")[1].split("role producer")[0]
    s_products, pv_products = body.count("= wgmma %"), body.count("wgmma.rs")
    assert (s_products, pv_products) == ((1, 2) if rotate == "1" else (2, 1)), (s_products, pv_products)


@pytest.mark.parametrize("pack", ["0", "1"])
def test_the_rotated_loop_carries_p_packed(pack: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The rotated loop carries P across its back edge as wgmma's A fragment,
    16-bit pairs in i32 registers ([128, 64] i32: half the registers of the
    f32 [128, 128]), packed at the end of the body; both P V products read it
    as it is. `TILEC_ATTN_ROTATE_PACK=0` carries f32 P, packed at each P V."""
    monkeypatch.setenv("TILEC_ATTN_PEEL", "0")
    monkeypatch.setenv("TILEC_ATTN_ROTATE", "1")
    monkeypatch.setenv("TILEC_ATTN_ROTATE_PACK", pack)
    k = lower_gpu(_std("flash_attention", "bf16", 128, 128, 128), "sm_90a", _facts("oqkv", 3))
    text = print_gpu_kernel(k)
    body = text.split("role consumer")[1].split("role producer")[0]
    assert body.count("pack_pairs") == (1 if pack == "1" else 0)
    from tilelang.backend.gpu import nodes as g

    rs = [op for op in g.walk(k.body) if isinstance(op, g.WgmmaRegA)]
    assert len(rs) == 2
    want = ((128, 64), "i32") if pack == "1" else ((128, 128), "f32")
    assert all((op.a.shape, str(op.a.dtype)) == want and str(op.dtype) == "bf16" for op in rs), \
        [(op.a.shape, op.a.dtype) for op in rs]
    if pack == "1":
        (pk,) = [op for op in g.walk(k.body) if isinstance(op, g.PackPairs)]
        assert pk.x.shape == (128, 128) and str(pk.x.dtype) == "f32" and str(pk.dtype) == "bf16"
        # the PTX: one cvt.rn.bf16x2.f32 a pair, in the body only (f32 P is
        # packed at each of the two P V products: 64); the epilogue's row
        # stores (`accview.store_rows`) pack their pairs with it too: off here
        monkeypatch.setenv("TILEC_ATTN_ROWSTORE", "0")
        ptx = emit_ptx(_std("flash_attention", "bf16", 128, 128, 128), "sm_90a", _facts("oqkv", 3))
        assert ptx.count("cvt.rn.bf16x2.f32") == 32, ptx.count("cvt.rn.bf16x2.f32")


@pytest.mark.parametrize("top", ["0", "1"])
def test_the_rotated_loop_carries_its_stages(top: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Nothing but descriptors between the rotated body's end and its next
    issue: the loop carries this block's stage and the previous block's (the
    next stage's spin inside the body has seen this one full), and the first
    block's stage is waited for before the loop. `TILEC_ATTN_ROTATE_TOPWAIT=1`
    waits again at the top of each iteration, the stages computed there."""
    monkeypatch.setenv("TILEC_ATTN_PEEL", "0")
    monkeypatch.setenv("TILEC_ATTN_ROTATE", "1")
    monkeypatch.setenv("TILEC_ATTN_ROTATE_TOPWAIT", top)
    text = print_gpu_kernel(lower_gpu(_std("flash_attention", "f16", 128, 128, 128), "sm_90a", _facts("oqkv", 3)))
    consumer = text.split("role consumer")[1].split("role producer")[0]
    before, loop = consumer.split("= for %j")
    loop = loop.split("wgmma.rs")[0] + "wgmma.rs" + loop.split("wgmma.rs")[1]  # the loop's body: to its P V
    waits = loop.count("mbarrier.wait %full")
    if top == "1":
        assert waits == 2 and before.count("mbarrier.wait %full") == 0, (waits, before)
    else:
        assert waits == 1 and before.count("mbarrier.wait %full") == 1, (waits, before)
        assert "%stage" in loop.split("\n")[0] and loop.split("\n")[0].count("%stage") >= 2  # carried


@pytest.mark.parametrize(("bn", "d", "setting"), [(128, 128, None), (128, 64, None), (64, 256, None),
                                                  (128, 128, "0"), (128, 64, "1"), (64, 256, "1")])
@pytest.mark.usefixtures("whole_tiles")
def test_the_loop_is_rotated_by_default_where_rows_are_128_wide(bn: int, d: int, setting: str | None,  # type: ignore[no-untyped-def]
                                                                monkeypatch) -> None:
    """`TILEC_ATTN_ROTATE` unset ("auto"): the rotated loop at D = 128 (no S
    before the loop, the last P V after it), the overlapped one at D = 64
    (where it was faster on the H200 for S >= 4096) and D = 256 (not timed);
    "0" / "1" force it, where the ring has 3 stages or more: at BN = 64,
    D = 256 it has 2 (Q 64 KB, a stage 64 KB), and any overlapped schedule
    takes the serial one there (it would deadlock)."""
    from tilelang.backend.gpu.passes.attention_rotated import ROTATE_DEFAULT

    assert ROTATE_DEFAULT == "auto"
    monkeypatch.setenv("TILEC_ATTN_PEEL", "0")
    if setting is None:
        monkeypatch.delenv("TILEC_ATTN_ROTATE", raising=False)
    else:
        monkeypatch.setenv("TILEC_ATTN_ROTATE", setting)
    text = print_gpu_kernel(lower_gpu(_std("flash_attention", "bf16", 128, bn, d), "sm_90a", _facts("oqkv", 3)))
    body = text.split("role consumer")[1].split("role producer")[0]
    rotated = (body.count("= wgmma %"), body.count("wgmma.rs")) == (1, 2)
    assert rotated == (d != 256 and (setting == "1" or (setting is None and d == 128))), (d, setting, body.count("wgmma.rs"))


def test_wgmma_descriptors_move_by_stage_in_32_bits() -> None:
    """A ring stage moves stage 0's descriptor (loop-invariant) by a 32-bit
    multiply-add: no 64-bit address arithmetic per product, where ptxas
    spent ~90 instructions an iteration at 128 x 128, D = 128."""
    from tilelang.backend import emit_llvm

    # (the walk's fast divisions, on by default at D = 128, are a 64-bit multiply-high once a tile: not this)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TILEC_ATTN_FASTDIV", "0")
        ll = emit_llvm(_std("flash_attention", "f16", 128, 128, 128), "sm_90a", _facts("oqkv", 3))
    assert "to i64" not in "".join(ln for ln in ll.splitlines() if "ptrtoint ptr addrspace(3)" in ln)
    assert ll.count("and i32") and "lshr i64" not in ll, [ln for ln in ll.splitlines() if "lshr i64" in ln][:3]


def _schedule(monkeypatch, schedule: str) -> None:  # type: ignore[no-untyped-def]
    """`TILEC_ATTN_SCHEDULE`; "overlap+peel" also peels the last key block off
    the loop (`TILEC_ATTN_PEEL=1`), "overlap+rotate" rotates it (S of block j
    with P V of block j - 1: `TILEC_ATTN_ROTATE=1`), the others do neither
    (whatever the defaults); a further "+turns" makes the two warpgroups take
    turns at each issue (`TILEC_ATTN_PINGPONG=1`), and "+once" after it runs
    one tile a block (`TILEC_ATTN_PERSISTENT=0`)."""
    once = schedule.endswith("+once")
    schedule = schedule.removesuffix("+once")
    monkeypatch.setenv("TILEC_ATTN_PERSISTENT", "0" if once else "1")
    turns = schedule.endswith("+turns")
    schedule = schedule.removesuffix("+turns")
    monkeypatch.setenv("TILEC_ATTN_PINGPONG", "1" if turns else "0")
    monkeypatch.setenv("TILEC_ATTN_PEEL", "1" if schedule.endswith("+peel") else "0")
    monkeypatch.setenv("TILEC_ATTN_ROTATE", "1" if schedule.endswith("+rotate") else "0")
    monkeypatch.setenv("TILEC_ATTN_SCHEDULE", schedule.removesuffix("+peel").removesuffix("+rotate"))


# BM = 64: one consumer warpgroup, so the turns would not apply; they run one tile a block in the user-loop test
# below (BM = 128)
# (heavy: "causal" and "peel-causal", whose kernels the causal_rows_see_nothing cases run, causal too; htier1:
# "peel-causal_rows_see_nothing" too, the peel's default test being
# test_the_last_iteration_is_peeled_where_the_registers_allow, the tiers in tests/README.md)
# (htier1, the tiers in tests/README.md: "serial-full" heavy, the serial schedule being the default only where the
# ring has under 3 stages: test_attention_one_stage's simulations; "rotate-full" heavy, `TILEC_ATTN_ROTATE=1` at
# D = 64 being opt-in: rotate-causal_rows_see_nothing is its default test, the rotated loop D = 128's default
# (test_attention_boundary, test_attention_chain's d128_unchained_q_early) and the short variant's)
CASES = [pytest.param("serial", False, 100, 120, marks=pytest.mark.heavy), ("overlap", False, 100, 120),
         pytest.param("overlap", True, 100, 120, marks=pytest.mark.heavy),
         ("overlap", True, 150, 40), pytest.param("overlap+peel", True, 100, 120, marks=pytest.mark.heavy),
         pytest.param("overlap+peel", True, 150, 40, marks=pytest.mark.heavy),
         pytest.param("overlap+rotate", False, 100, 120, marks=pytest.mark.heavy), ("overlap+rotate", True, 150, 40)]


@pytest.mark.parametrize(("schedule", "causal", "sq", "sk"), CASES,
                         ids=["serial-full", "full", "causal", "causal_rows_see_nothing", "peel-causal",
                              "peel-causal_rows_see_nothing", "rotate-full", "rotate-causal_rows_see_nothing"])
def test_std_attention_in_the_simulator(causal: bool, sq: int, sk: int, schedule: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """... with undefined floats read as NaN: the accumulator of a row block
    whose key loop never runs is never written, and the epilogue must not
    let it through (passes/attention_zeros.py drops the zeros' select only
    where `where(m > MASKED, ...)` discards it)."""
    import llsim

    monkeypatch.setattr(llsim, "UNDEF_FLOAT", "nan")
    _schedule(monkeypatch, schedule)
    bh, hkv, d, bm, bn = 2, 1, 64, 64, 64
    k = _std("flash_attention_lse", "f16", bm, bn, d)
    facts = {**_facts("oqkv", 3), **_facts(["lse"], 2)}
    _run_lse_and_check(k, facts, (bh, -(-sq // bm)), bh, hkv, sq, sk, d, causal, int(causal))


# (peel_two_ctas_causal heavy, htier1: `TILEC_ATTN_PEEL` is opt-in, its default test
# test_the_last_iteration_is_peeled_where_the_registers_allow; the walk itself: the other cases)
@pytest.mark.parametrize(("schedule", "ctas", "walk", "bh", "causal"),
                         # (htier1: one_cta_causal and rotate_two_ctas_causal heavy too: the serial schedule and the
                         # rotated loop at D = 64 are not the default here (serial-full's and rotate-full's note in
                         # CASES above); a persistent walk of each: test_attention_one_stage's [1-True] (serial),
                         # test_attention_chain's more_ctas_than_tiles and test_attention_qdouble's chain walks (rotated))
                         [("overlap", 2, "pairs", 2, False), pytest.param("serial", 1, "auto", 1, True, marks=pytest.mark.heavy),
                          pytest.param("overlap+peel", 2, "auto", 2, True, marks=pytest.mark.heavy),
                          pytest.param("overlap+rotate", 2, "auto", 2, True, marks=pytest.mark.heavy)],
                         ids=["two_ctas_pairs", "one_cta_causal", "peel_two_ctas_causal", "rotate_two_ctas_causal"])
def test_a_persistent_grid_walks_every_tile_in_the_simulator(schedule: str, ctas: int, walk: str, bh: int,
                                                             causal: bool, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Fewer CTAs than tiles: each CTA walks several (the K/V ring's counter,
    the Q buffer's release and its barrier's phase run on from tile to tile;
    odd rounds go backwards), single tiles or pairs of a head's heaviest and
    lightest (3 query blocks: the middle one runs twice), causal (tiles of 1
    to 3 key blocks: pairs, chosen at run time) or not; with the last key
    block peeled off, Q is released before it."""
    _schedule(monkeypatch, schedule)
    monkeypatch.setenv("TILEC_ATTN_WALK", walk)
    d, bm, bn, sq, sk = 64, 64, 64, 150, 150
    k = _std("flash_attention_lse", "f16", bm, bn, d)
    facts = {**_facts("oqkv", 3), **_facts(["lse"], 2)}
    assert lower_gpu(k, "sm_90a", facts).persistent == 1
    assert sk >= sq  # every row sees a key: the check below compares all of them
    _run_lse_and_check(k, facts, (ctas, 1), bh, bh, sq, sk, d, causal, 5)


@pytest.mark.parametrize(("schedule", "ctas", "bh", "sq", "sk", "bm"),
                         # (heavy: rotate_two_ctas, whose kernel rotate_rows_see_nothing runs, a causal walk too)
                         # (htier1: overlap_two_ctas and rotate_two_warpgroups heavy: "1" for both switches at D = 64
                         # is opt-in (their "auto" takes them at D = 128: test_attention_boundary's causal_pairs, two
                         # warpgroups; K/V first in the overlapped loop by default: every D = 64 walk here);
                         # rotate_rows_see_nothing is their default test, the tiers in tests/README.md)
                         [pytest.param("overlap+rotate", 2, 2, 150, 200, 64, marks=pytest.mark.heavy),
                          ("overlap+rotate", 1, 2, 150, 40, 64),
                          pytest.param("overlap", 2, 1, 150, 200, 64, marks=pytest.mark.heavy),
                          pytest.param("overlap+rotate", 2, 1, 300, 130, 128, marks=pytest.mark.heavy)],
                         ids=["rotate_two_ctas", "rotate_rows_see_nothing", "overlap_two_ctas", "rotate_two_warpgroups"])
@pytest.mark.usefixtures("whole_tiles")
def test_the_tile_boundary_switches_in_the_simulator(schedule: str, ctas: int, bh: int, sq: int, sk: int, bm: int,  # type: ignore[no-untyped-def]
                                                     monkeypatch) -> None:
    """`TILEC_ATTN_QEARLY=1` (the rotated loop's last iteration releases Q
    once its S is done; a tile whose loop never runs releases it after) and
    `TILEC_ATTN_KVFIRST=1` (the producer copies a tile's first K/V block
    before its Q; a tile without key blocks copies Q alone): a persistent
    walk, causal, tiles of 0 to 4 key blocks, one release of Q too many or
    too few hangs the simulator or leaves an arrival behind; BM = 128: two
    consumer warpgroups, each releasing Q after its own last S."""
    _schedule(monkeypatch, schedule)
    monkeypatch.setenv("TILEC_ATTN_QEARLY", "1")
    monkeypatch.setenv("TILEC_ATTN_KVFIRST", "1")
    d, bn = 64, 64
    k = _std("flash_attention_lse", "f16", bm, bn, d)
    facts = {**_facts("oqkv", 3), **_facts(["lse"], 2)}
    text = print_gpu_kernel(lower_gpu(k, "sm_90a", facts))
    consumer, producer = text.split("role producer")
    # the rotated loop arrives on qempty in its body and after it (when it did not run); the producer's loop copies Q
    assert consumer.count("mbarrier.arrive %qempty") == (2 if schedule.endswith("rotate") else 1)
    assert producer.index("tma.load @k") < producer.index("tma.load @q") and producer.count("tma.load @q") == 2  # one slab (D = 64), twice
    _run_lse_and_check(k, facts, (ctas, 1), bh, bh, sq, sk, d, True, 7)


# (heavy: "rotate": its LLVM is rotate_two_ctas_causal's (the skip is on by default for the accumulator: "1"
# changes nothing here), a causal walk on 2 CTAs too, and in no warp does its vote skip at this shape;
# overlap_two_warpgroups takes the branch both ways)
@pytest.mark.parametrize(("schedule", "bm", "sq"), [pytest.param("overlap+rotate", 64, 150, marks=pytest.mark.heavy),
                                                    ("overlap", 128, 300)],
                         ids=["rotate", "overlap_two_warpgroups"])
def test_the_o_rescale_skipped_where_a_warps_factors_are_one_in_the_simulator(schedule: str, bm: int, sq: int,  # type: ignore[no-untyped-def]
                                                                              monkeypatch) -> None:
    """`TILEC_SKIP_UNIT_SCALE=1`: the O rescale `acc * alpha` (alpha a row
    vector over the accumulator) is one vote and a branch around the
    multiplies, taken where every alpha of the warp is exactly 1 (no row's
    max moved): both ways occur in a causal walk of random scores."""
    _schedule(monkeypatch, schedule)
    monkeypatch.setenv("TILEC_SKIP_UNIT_SCALE", "1")
    d, bn, sk = 64, 64, 200
    k = _std("flash_attention_lse", "f16", bm, bn, d)
    facts = {**_facts("oqkv", 3), **_facts(["lse"], 2)}
    assert "llvm.nvvm.vote.all.sync" in emit_llvm_text(lower_gpu(k, "sm_90a", facts), facts)[0]
    _run_lse_and_check(k, facts, (2, 1), 1, 1, sq, sk, d, True, 13)


# (heavy: two CTAs run the kernel one_cta runs, the turns across a walk of 3 tiles; each CTA starts its own;
# htier1: one_cta too, `TILEC_ATTN_PINGPONG`'s default test being test_a_user_attention_loop_in_the_simulator
# [overlap+turns+once-128-120], the tiers in tests/README.md)
@pytest.mark.parametrize("ctas", [pytest.param(2, marks=pytest.mark.heavy), pytest.param(1, marks=pytest.mark.heavy)],
                         ids=["two_ctas", "one_cta"])
def test_the_warpgroups_take_turns_across_a_persistent_walk_in_the_simulator(ctas: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`TILEC_ATTN_PINGPONG=1`: the two consumer warpgroups take turns at
    each issue (named barriers 2 and 3), warpgroup 0 first once a CTA, the
    turns running on from tile to tile (tiles of 1 to 4 key blocks, a
    partial last one, causal): a turn passed one time too few hangs the
    simulator, one too many is left on its barrier at the end (both
    `llsim.Deadlock`); a product issued out of its turn computes the same,
    so the rest is the walk's results and the turns in the IR."""
    _schedule(monkeypatch, "overlap+rotate+turns")  # turns take the overlapped loop, rotation or not
    # one CTA walks one head's 3 tiles, two CTAs walk two heads' 6 (the simulator runs CTAs one by one)
    d, bm, bn, sq, sk, bh = 64, 128, 64, 300, 200, ctas
    k = _std("flash_attention_lse", "f16", bm, bn, d)
    facts = {**_facts("oqkv", 3), **_facts(["lse"], 2)}
    gk = lower_gpu(k, "sm_90a", facts)
    text = print_gpu_kernel(gk)
    assert gk.persistent == 1 and text.count("warpgroup_turn.start") == 1 and "pack_pairs" not in text
    assert text.count("warpgroup_turn.wait") == text.count("warpgroup_turn.pass") == text.count("turn.end") == 1
    _run_lse_and_check(k, facts, (ctas, 1), bh, bh, sq, sk, d, True, 11)


def test_the_runtime_launches_a_persistent_kernel_on_at_most_one_cta_an_sm() -> None:
    from types import SimpleNamespace

    from tilelang.runtime.cuda import launch_grid

    walks, plain = SimpleNamespace(persistent=1), SimpleNamespace(persistent=0)
    assert launch_grid(walks, (32, 33), 132) == (132, 1, 1)
    assert launch_grid(walks, (4, 3, 2), 132) == (24, 1, 1)
    assert launch_grid(plain, (32, 33), 132) == (32, 33, 1)
    monkey = pytest.MonkeyPatch()
    monkey.setenv("TILEC_PERSISTENT_SMS", "3")
    try:
        assert launch_grid(walks, (32, 33), 132) == (3, 1, 1) and launch_grid(plain, (2, 2), 132) == (2, 2, 1)
    finally:
        monkey.undo()
    k = lower_gpu(_user(128, 64, 64), "sm_90a", _facts("oqkv", 2))
    assert k.persistent == 1 and emit_ptx  # the user's own loop walks its grid too
    monkey = pytest.MonkeyPatch()
    monkey.setenv("TILEC_ATTN_PERSISTENT", "0")
    try:
        assert lower_gpu(_user(128, 64, 64), "sm_90a", _facts("oqkv", 2)).persistent == 0
    finally:
        monkey.undo()


# ("serial" heavy, htier1: the serial schedule forced where the overlapped one is the default; a user's loop on the
# serial schedule by default: test_attention_one_stage's test_a_stages_hint_of_one_runs_a_user_loop_in_the_simulator)
@pytest.mark.parametrize(("schedule", "bm", "s"), [pytest.param("serial", 64, 100, marks=pytest.mark.heavy),
                                                   ("overlap+turns+once", 128, 120)])
def test_a_user_attention_loop_in_the_simulator(schedule: str, bm: int, s: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """"overlap+turns+once": two consumer warpgroups taking turns, one tile a block (the kernel
    `TILEC_ATTN_SCHEDULE=pingpong-unsafe` built, byte for byte, before the name went): every turn consumed by
    the block's end (an arrival left on a named barrier is an `llsim.Deadlock`)."""
    _schedule(monkeypatch, schedule)
    d = 64
    k = _user(bm, 64, d)
    if "turns" in schedule:  # two consumer warpgroups taking turns
        gk = lower_gpu(k, "sm_90a", _facts("oqkv", 2))
        text = print_gpu_kernel(gk)
        assert gk.persistent == 0 and "warpgroup_turn.wait" in text and text.count("turn.end") == 1
    rng = np.random.default_rng(7)
    q, kk, v = (rng.standard_normal((s, d)).astype(np.float16) for _ in range(3))
    o = np.full((s, d), np.nan, np.float16)
    SimDevice("sm_90a").run(k, (-(-s // bm), 1), [o, q, kk, v, np.float32(0.125)], _facts("oqkv", 2))
    ref, _ = _reference(q, kk, v, 0.125, False)
    np.testing.assert_allclose(o.astype(np.float64), ref, atol=3e-3, rtol=1e-2)


@pytest.mark.parametrize("schedule", ["pingpong", "fastest", "pingpong-unsafe"])
def test_a_refused_schedule_is_a_located_error(schedule: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`pingpong` computed wrong results on the H200 (benchmarks/RESULTS.md,
    2026-12-02) and an unknown name means nothing: both are E0604 at the
    loop, not a silent choice of another schedule; `pingpong-unsafe` is gone,
    its help the two switches that build its kernel."""
    from tilelang.backend import CodegenError

    monkeypatch.setenv("TILEC_ATTN_SCHEDULE", schedule)
    with pytest.raises(CodegenError) as e:
        lower_gpu(_user(128, 64, 64), "sm_90a", _facts("oqkv", 2))
    assert e.value.diag.code == "E0604" and f"`{schedule}`" in e.value.diag.message
    assert e.value.diag.primary_span is not None
    assert ("TILEC_ATTN_PINGPONG=1 TILEC_ATTN_PERSISTENT=0" in str(e.value.diag.help)) == (schedule == "pingpong-unsafe")
    monkeypatch.setenv("TILEC_ATTN_SCHEDULE", "overlap")
    assert "wgmma.rs" in print_gpu_kernel(lower_gpu(_user(128, 64, 64), "sm_90a", _facts("oqkv", 2)))


def _run_user_in_sim(bm: int, bn: int, s: int) -> None:
    d = 64
    k = _user(bm, bn, d)
    rng = np.random.default_rng(11)
    q, kk, v = (rng.standard_normal((s, d)).astype(np.float16) for _ in range(3))
    o = np.full((s, d), np.nan, np.float16)
    SimDevice("sm_90a").run(k, (-(-s // bm), 1), [o, q, kk, v, np.float32(0.125)], _facts("oqkv", 2))
    ref, _ = _reference(q, kk, v, 0.125, False)
    np.testing.assert_allclose(o.astype(np.float64), ref, atol=3e-3, rtol=1e-2)


def test_a_ring_of_two_stages_takes_the_serial_schedule() -> None:
    """`#[hints(stages = 2)]`: the overlapped schedules hold a block's stage
    while they wait for the next block's, so with two stages the producer
    could never fill it (llsim: a deadlock, rotated or not, persistent or
    not); the serial schedule runs instead, right."""
    src = USER.replace("kernel fn attn", "#[hints(stages = 2)]\nkernel fn attn", 1)
    k = driver.compile(src, "ir").output[0]
    gk = lower_gpu(k, "sm_90a", _facts("oqkv", 2))
    assert gk.num_stages == 2
    rng = np.random.default_rng(5)
    s, d = 130, 64  # 3 key blocks through the ring of 2
    q, kk, v = (rng.standard_normal((s, d)).astype(np.float16) for _ in range(3))
    o = np.full((s, d), np.nan, np.float16)
    SimDevice("sm_90a").run(k, (-(-s // 64), 1), [o, q, kk, v, np.float32(0.125)], _facts("oqkv", 2))
    np.testing.assert_allclose(o.astype(np.float64), _reference(q, kk, v, 0.125, False)[0], atol=3e-3, rtol=1e-2)


def test_the_simulator_refuses_an_accumulator_read_before_its_wait(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """llsim keeps a wgmma's registers in flight until a `wgmma.wait_group`
    retires its group (the tensor cores write them asynchronously): the
    serial schedule with the wait after P V left out (the next iteration
    rescales an accumulator still being written) is a Race there, not a
    right answer."""
    from llsim import Race

    from tilelang.backend.gpu import nodes as g
    from tilelang.backend.gpu.passes import attention_loop as attention_pass
    from tilelang.backend.gpu.passes.rewrite import substitute_region
    from tilelang.ir import nodes as ir

    real = attention_pass.serial

    def without_the_pv_wait(*a, **kw):  # type: ignore[no-untyped-def]
        loop, pre, post = real(*a, **kw)
        ops = list(loop.body.ops)
        i = next(i for i, op in enumerate(ops) if isinstance(op, g.WgmmaRegA))
        w = ops[i + 1]
        assert isinstance(w, g.WgmmaWait)
        body = substitute_region(ir.Region(loop.body.args, (*ops[:i + 1], *ops[i + 2:])), {w.results[0].id: w.values[0]})
        return dataclasses.replace(loop, body=body), pre, post

    monkeypatch.setenv("TILEC_ATTN_SCHEDULE", "serial")  # as emitted, right: test_a_user_attention_loop_in_the_simulator
    monkeypatch.setattr(attention_pass, "serial", without_the_pv_wait)
    with pytest.raises(Race, match="in-flight wgmma"):
        _run_user_in_sim(64, 64, 100)


def test_the_simulator_refuses_a_stage_released_before_its_wait(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A K/V stage released (empty barrier) before the wait that retires the
    products reading it: llsim runs the producer as soon as the release
    completes the barrier's phase, and its TMA copy into the stage while the
    P V product still reads it is a Race."""
    from llsim import Race

    from tilelang.backend.gpu import nodes as g
    from tilelang.backend.gpu.passes import attention_loop as attention_pass
    from tilelang.ir import nodes as ir

    real = attention_pass.overlapped

    def release_first(*a, **kw):  # type: ignore[no-untyped-def]
        loop, pre, post = real(*a, **kw)
        ops = list(loop.body.ops)
        w = next(i for i, op in enumerate(ops) if isinstance(op, g.WgmmaWait) and op.pending == 0)
        r = next(i for i, op in enumerate(ops) if i > w and isinstance(op, g.BarrierArrive))
        ops.insert(r, ops.pop(w))  # the wait after the release
        return dataclasses.replace(loop, body=ir.Region(loop.body.args, tuple(ops))), pre, post

    monkeypatch.setenv("TILEC_ATTN_SCHEDULE", "overlap")
    _run_user_in_sim(64, 64, 300)  # as emitted: right (5 key blocks through a ring of 4 stages)
    monkeypatch.setattr(attention_pass, "overlapped", release_first)
    with pytest.raises(Race, match="in-flight wgmma"):
        _run_user_in_sim(64, 64, 300)


def test_a_loop_that_moves_data_between_threads_keeps_the_generic_path() -> None:
    """Row maxima added along the columns (a transpose of a row vector) cannot
    stay in the accumulator layout: a shared-memory trip would need a barrier
    of the whole CTA, which the producer never reaches. The pass declines."""
    src = USER.replace("let s = where(keys < n, s, -1.0e30);",
                       "let s = where(keys < n, s, -1.0e30) + max(s, 1).reshape([1, BN]);")
    assert src != USER
    k = driver.compile(src, "ir").output[0]
    text = print_gpu_kernel(lower_gpu(k, "sm_90a", _facts("oqkv", 2)))
    assert "wgmma.rs" not in text and "warp_specialize" not in text


CHAIN = """
kernel fn chain<const BM: i32, const BN: i32, const D: i32>(o: &mut Tensor<f32, [BM, D]>,
        x: &Tensor<f16, [?, D]>, w: &Tensor<f16, [?, D]>, u: &Tensor<f16, [?, D]>) {
    let xt = x.load_like(o);
    let pw = w.partition([BN, D]);
    let pu = u.partition([BN, D]);
    let mut acc = zeros::<f32>([BM, D]);
    for j in 0..(w.shape()[0] + BN - 1) / BN {
        let h = mma(xt, pw.load([j, 0]).transpose(), zeros::<f32>([BM, BN]));
        acc = mma(maximum(h, 0.0) as f16, pu.load([j, 0]), acc + 1.0);
    }
    o.store(acc);
}
fn main() { let x = zeros::<f16>([64, 64]); let mut o = zeros::<f32>([64, 64]);
    chain::<64, 64, 64>(o.partition([64, 64]), &x, &x, &x).sync(); }
"""


def test_a_chain_of_two_products_that_is_not_attention() -> None:
    """The pipeline is about the loop's shape, not softmax: relu(x w^T) u with
    `acc + 1.0` as the second accumulator (not a multiple of the carried
    value, so the first product must read it: no `use_acc` shortcut)."""
    k = driver.compile(CHAIN, "ir").output[0]
    facts = _facts("oxwu", 2)
    text = print_gpu_kernel(lower_gpu(k, "sm_90a", facts))
    assert "wgmma.rs" in text and "use_acc" not in text.split("wgmma.rs")[1].split("\n")[0]
    rng = np.random.default_rng(3)
    m, n, d = 64, 100, 64
    x, w, u = ((rng.standard_normal(shape) * 0.1).astype(np.float16) for shape in ((m, d), (n, d), (n, d)))
    o = np.full((m, d), np.nan, np.float32)
    SimDevice("sm_90a").run(k, (1, 1), [o, x, w, u], facts)
    ref = np.zeros((m, d))
    for j in range(2):  # key blocks of 64, the last one zero-padded
        wj, uj = np.zeros((64, d)), np.zeros((64, d))
        wj[:min(64, n - 64 * j)], uj[:min(64, n - 64 * j)] = w[64 * j:64 * j + 64], u[64 * j:64 * j + 64]
        h = np.maximum(x.astype(np.float64) @ wj.T, 0).astype(np.float16).astype(np.float64)
        ref = h @ uj + (ref + 1.0)
    np.testing.assert_allclose(o, ref, atol=1e-4, rtol=1e-4)


@pytest.mark.gpu
@pytest.mark.parametrize(("bm", "bn", "d", "s"), [(128, 64, 64, 1000), (128, 128, 128, 777), (64, 64, 128, 300)])
def test_a_user_attention_loop_on_the_gpu(bm: int, bn: int, d: int, s: int) -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no CUDA device")
    import tilelang

    mod = tilelang.compile(USER)
    g = torch.Generator(device="cuda").manual_seed(s)
    q, k, v = (torch.randn(s, d, device="cuda", dtype=torch.float16, generator=g) for _ in range(3))
    o = torch.full_like(q, float("nan"))
    mod.attn[bm, bn, d](tilelang.partition(o, [bm, d]), q, k, v, d**-0.5).sync()
    want = torch.nn.functional.scaled_dot_product_attention(q.float()[None], k.float()[None], v.float()[None])[0]
    err = float((o.float() - want).abs().max() / want.abs().max())
    assert err < 1e-2, err


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
