"""`TILEC_ATTN_OSTORE` (`passes/attention_epilogue.py`, `codegen/tma_store.py`):
the attention epilogue's O tile written to shared memory by the consumer
warpgroups and stored by TMA. The PTX (ptxas), and the kernels in the
simulator against NumPy: rows past the tensor's edge (the tensor map clips
them), causal with S_q != S_k, one and two warpgroups, a persistent walk
(the buffer reused from tile to tile). llsim checks the protocol: a TMA store
reading bytes whose writer did not fence the async proxy, a write into bytes
an unfinished store still reads, and a thread exiting before its stores'
reads are done are races; the tests below take the fence or the wait away
and expect exactly that."""

from __future__ import annotations

import re
import shutil

import pytest
from ptxas_report import assemble
from test_attention_pipeline import _facts, _run_lse_and_check, _schedule, _std

from tilelang.backend import emit_ptx, lower_gpu
from tilelang.backend.gpu.printer import print_gpu_kernel


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas not installed")
# (all heavy, htier1: `TILEC_ATTN_OSTORE` is opt-in, no setting faster on the H200 (RESULTS.md 2026-12-03, "kept
# off"; hattn3 2026-12-06: even); its one default test is test_the_switch_picks_the_path, the tiers in
# tests/README.md)
@pytest.mark.parametrize(("mode", "dt", "d"), [pytest.param(*c, marks=pytest.mark.heavy) for c in
                                               (("q", "f16", 128), ("buf", "bf16", 64), ("v", "f16", 128),
                                                ("v/warp", "f16", 128), ("buf/warp", "f16", 64))])
def test_tma_stores_of_o_assemble_without_spills(tmp_path, mode: str, dt: str, d: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    mode, _, by = mode.partition("/")
    monkeypatch.setenv("TILEC_ATTN_OSTORE", mode)
    monkeypatch.setenv("TILEC_ATTN_OSTORE_BY", by or "warpgroup")
    ptx = emit_ptx(_std("flash_attention", dt, 128, 128, d), "sm_90a", _facts("oqkv", 3))
    assert ptx.count("cp.async.bulk.tensor.3d.global.shared::cta") == d // 64  # one a slab, issued by each unit
    assert re.search(r"cp\.async\.bulk\.wait_group\.read\s+0;", ptx) and "fence.proxy.async.shared::cta" in ptx
    assert "st.global" not in ptx  # O does not take the register path too
    r = assemble(ptx, "sm_90a")
    assert r.max_spill_stores == 0, r.text


@pytest.mark.parametrize(("setting", "stores"), [(None, 0), ("0", 0), ("q", 2), ("buf", 2), ("v", 2), ("yes", -1)])
def test_the_switch_picks_the_path(setting: str | None, stores: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    if setting is None:
        monkeypatch.delenv("TILEC_ATTN_OSTORE", raising=False)
    else:
        monkeypatch.setenv("TILEC_ATTN_OSTORE", setting)
    if stores < 0:  # a value it does not take: E0604 (hfix6; "yes" was read as "0", silently)
        from tilelang.backend.env_switch import SwitchError

        with pytest.raises(SwitchError, match="TILEC_ATTN_OSTORE='yes'"):
            lower_gpu(_std("flash_attention", "f16", 128, 128, 64), "sm_90a", _facts("oqkv", 3))
        return
    text = print_gpu_kernel(lower_gpu(_std("flash_attention", "f16", 128, 128, 64), "sm_90a", _facts("oqkv", 3)))
    assert text.count("tma.store ") == (1 if stores else 0)
    assert ("store @o" in text) == (stores == 0)


@pytest.mark.heavy  # (htier1: `TILEC_ATTN_OSTORE`'s one default test is test_the_switch_picks_the_path)
def test_buf_takes_ring_stages_where_shared_memory_allows(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """"buf" keeps a ring of at least 3 stages (the overlapped schedules deadlock on 2): BN = 64, D = 128 and
    BN = 128, D = 64 keep their 4 beside O's 32 / 16 KB; at BN = 128, D = 128 (Q 32 KB + 3 stages of 64 KB)
    there is no room for 3: the register stores."""
    monkeypatch.setenv("TILEC_ATTN_OSTORE", "buf")
    for bn, d, stages, used in ((64, 128, 4, True), (128, 64, 4, True), (128, 128, 3, False)):
        gk = lower_gpu(_std("flash_attention", "f16", 128, bn, d), "sm_90a", _facts("oqkv", 3))
        assert gk.num_stages == stages and ("obuf" in print_gpu_kernel(gk)) == used


# `TILEC_ATTN_OSTORE` is off by default (no setting was faster on the H200), so the default run keeps one
# simulation of each mode: q_rotate_walk_edge_rows ("q": BM = 64, the rotated loop, a walk, rows past the edge),
# buf_by_warp_walk ("buf", "/warp") and v_two_warpgroups_walk ("v", by warpgroup), the last two a BM = 128 walk
# of tiles of 0, 2 and 3 key blocks. The `heavy` ones repeat a mode at another block or store unit; each names
# the default cases that cover its parts.
# htier1 (the tiers, tests/README.md): all heavy now, the switch's one default test being
# test_the_switch_picks_the_path (each mode's path and the refusal of a bad value); the simulator's refusals of a
# missing fence and of a buffer reused early ("q") stay default.
HEAVY = pytest.mark.heavy
SIM = [pytest.param("q", "overlap+rotate", 64, 150, 200, True, 2, marks=HEAVY),
       # (heavy: "q" at BM = 128; two warpgroups' stores: v_two_warpgroups_walk, "q": q_rotate_walk_edge_rows)
       pytest.param("q", "overlap", 128, 200, 70, False, 0, marks=HEAVY),
       # (heavy: "buf" by warpgroup; "buf": buf_by_warp_walk, by warpgroup at this shape: v_two_warpgroups_walk)
       pytest.param("buf", "overlap+rotate", 128, 300, 130, True, 2, marks=HEAVY),
       pytest.param("buf/warp", "overlap", 128, 300, 130, True, 2, marks=HEAVY),
       pytest.param("v", "overlap+rotate", 128, 300, 130, True, 2, marks=HEAVY),
       # (heavy: "v/warp"; "v": v_two_warpgroups_walk, "/warp": buf_by_warp_walk, the same shape)
       pytest.param("v/warp", "overlap", 128, 300, 130, True, 2, marks=HEAVY),
       # (heavy: "v" at BM = 64, a walk of 6 tiles on one CTA; "v" with a tile of no key block (its O stored
       # through Q) in a walk: v_two_warpgroups_walk)
       pytest.param("v", "overlap", 64, 150, 40, True, 1, marks=HEAVY)]


@pytest.mark.parametrize(("mode", "schedule", "bm", "sq", "sk", "causal", "ctas"), SIM,
                         ids=["q_rotate_walk_edge_rows", "q_two_warpgroups", "buf_two_warpgroups_walk",
                              "buf_by_warp_walk", "v_two_warpgroups_walk", "v_by_warp_walk", "v_rows_see_nothing"])
def test_o_through_shared_memory_in_the_simulator(mode: str, schedule: str, bm: int, sq: int, sk: int, causal: bool,  # type: ignore[no-untyped-def]
                                                  ctas: int, monkeypatch) -> None:
    """"v" releases the last block's stage in the next tile (a carried flag):
    a walk of several tiles a CTA, tiles of 0 to 4 key blocks (the zero-block
    ones store through Q). "/warp": each warp stores its own 16 rows."""
    _schedule(monkeypatch, schedule)
    mode, _, by = mode.partition("/")
    monkeypatch.setenv("TILEC_ATTN_OSTORE", mode)
    monkeypatch.setenv("TILEC_ATTN_OSTORE_BY", by or "warpgroup")
    d, bn = 64, 64
    bh = 1 if ctas and bm == 128 else 2  # (BM = 128 walks: one head's 3 tiles, of 0, 2 and 3 key blocks, on 2 CTAs)
    k = _std("flash_attention_lse", "f16", bm, bn, d)
    facts = {**_facts("oqkv", 3), **_facts(["lse"], 2)}
    grid = (ctas, 1) if ctas else (bh, -(-sq // bm))
    _run_lse_and_check(k, facts, grid, bh, bh, sq, sk, d, causal, 11)


def test_the_simulator_refuses_a_tma_store_without_the_fence(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from llsim import Race

    from tilelang.backend.codegen import tma_store

    _schedule(monkeypatch, "overlap+rotate")
    monkeypatch.setenv("TILEC_ATTN_OSTORE", "q")
    monkeypatch.setattr(tma_store, "fence", lambda em: None)
    k = _std("flash_attention_lse", "f16", 64, 64, 64)
    with pytest.raises(Race, match=r"no fence\.proxy\.async"):
        _run_lse_and_check(k, {**_facts("oqkv", 3), **_facts(["lse"], 2)}, (2, 1), 2, 2, 150, 200, 64, True, 11)


# ("buf", "v", "v/warp" heavy, htier1: the same refusal and message as "q", of an opt-in switch's modes)
@pytest.mark.parametrize("mode", ["q", *(pytest.param(m, marks=pytest.mark.heavy) for m in ("buf", "v", "v/warp"))])
def test_the_simulator_refuses_a_buffer_reused_before_the_stores_read(mode: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Without `cp.async.bulk.wait_group.read` the next tile's Q copy ("q"),
    the next tile's O ("buf") or K/V copy ("v") writes the bytes a store
    still reads, or the thread exits with its store unfinished: a Race."""
    from llsim import Race

    from tilelang.backend.codegen import tma_store

    _schedule(monkeypatch, "overlap+rotate")
    mode, _, by = mode.partition("/")
    monkeypatch.setenv("TILEC_ATTN_OSTORE", mode)
    monkeypatch.setenv("TILEC_ATTN_OSTORE_BY", by or "warpgroup")
    monkeypatch.setattr(tma_store, "wait_read", lambda em: None)
    k = _std("flash_attention_lse", "f16", 64, 64, 64)
    with pytest.raises(Race, match="TMA store"):
        _run_lse_and_check(k, {**_facts("oqkv", 3), **_facts(["lse"], 2)}, (1, 1), 2, 2, 150, 200, 64, True, 11)
