"""`TILEC_ATTN_XROT=1` (`passes/attention_xrot.py`): the chained walk rotated across the tile boundary. A
tile's key loop stops a block short; the next tile's first iteration runs that block (its S read from the
previous tile's Q slot) and issues its own first S before the block's softmax; a block deferred with no
next tile to hold it (the next runs no key block, or the walk ends) runs alone before the chain's flush.
What the kernel holds where the switch is on and off; in the simulator against NumPy (tiles of 0 to 4 key
blocks in one walk: a deferred block held by the boundary, run alone before an idle tile and after the
walk; two warpgroups; several CTAs; more CTAs than tiles; a perturbed schedule), each path shown to be run
by a mutation that fails; the PTX through ptxas; on the GPU at the benchmark's scale."""

from __future__ import annotations

import dataclasses
import shutil

import pytest
from ptxas_report import assemble
from test_attention_chain import _short
from test_attention_pipeline import _facts, _run_lse_and_check, _std
from test_attention_qdouble import _assert_every_tile_right, _form

from tilelang.backend import emit_llvm_text, emit_ptx, lower_gpu
from tilelang.backend.gpu.passes import attention_xrot
from tilelang.backend.gpu.printer import print_gpu_kernel


def _xrot(monkeypatch, on: str = "1") -> None:  # type: ignore[no-untyped-def]
    _form(monkeypatch, "chain_short", "0")  # (Q's second slot comes with the switch)
    monkeypatch.setenv("TILEC_ATTN_XROT", on)


def test_where_the_boundary_is_rotated(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """On (the benchmark's D = 64 short keys' kernel): Q double-buffered, the deferred block's S reads the
    previous tile's slot, six S issues (the loop's, the first iteration's, the boundary's two, the deferred
    block alone before an idle tile and after the walk); off ("0" or unset): the chained kernel, LLVM
    byte for byte; a setting neither 0 nor 1 is an error."""
    facts = _short(_facts("oqkv", 3), 1024)
    k64 = _std("flash_attention", "f16", 128, 128, 64)
    _xrot(monkeypatch)
    on = print_gpu_kernel(lower_gpu(k64, "sm_90a", facts))
    assert "mbarrier.alloc count 1 : i64[2]" in on and "%defer" in on
    s = [line for line in on.splitlines() if "wgmma %q." in line]
    assert len(s) == 6 and sum("[%q_prev" in line for line in s) == 3, s
    lls = []
    for setting in ("0", None):
        _xrot(monkeypatch, setting or "0")
        if setting is None:
            monkeypatch.delenv("TILEC_ATTN_XROT")  # (unset: `XROT_DEFAULT`)
        gk = lower_gpu(k64, "sm_90a", facts)
        lls.append(emit_llvm_text(gk, gk.facts, "")[0])
    assert lls[0] == lls[1] and "defer" not in lls[0]
    monkeypatch.setenv("TILEC_ATTN_XROT", "maybe")
    with pytest.raises(ValueError, match="TILEC_ATTN_XROT"):
        attention_xrot.enabled()


# (`heavy`, every case: the switch is opt-in and lost 8-17 % on the H100, benchmarks/RESULTS.md "h15w"; the
# first case runs a walk with every path: a deferred block held by the next tile's first iteration, one run
# alone before a tile without key blocks, tiles of 0 to 3 blocks; the mutations below show each path runs in it)
@pytest.mark.parametrize(("mode", "bm", "sq", "sk", "causal", "ctas", "bh"),
                         [pytest.param("1", 64, 256, 192, True, 1, 1, marks=pytest.mark.heavy),
                          # (`TILEC_ATTN_XROT=2`: the same walk, the pending P V waited for before the next S)
                          pytest.param("2", 64, 256, 192, True, 1, 1, marks=pytest.mark.heavy),
                          pytest.param("1", 64, 256, 256, False, 1, 2, marks=pytest.mark.heavy),  # 8 tiles of 4
                          pytest.param("1", 128, 400, 200, False, 1, 1, marks=pytest.mark.heavy),  # two warpgroups
                          pytest.param("1", 64, 300, 130, True, 2, 2, marks=pytest.mark.heavy),
                          pytest.param("1", 64, 100, 120, False, 8, 1, marks=pytest.mark.heavy),  # CTAs idle
                          # (the benchmark's blocks, 128 x 128: tiles of 1 to 4 key blocks, two heads)
                          pytest.param("1", -128, 512, 512, True, 1, 2, marks=pytest.mark.heavy)],
                         ids=["causal_every_path", "late_causal_every_path", "full_walk", "two_warpgroups",
                              "two_ctas_causal", "more_ctas_than_tiles", "benchmark_blocks_causal"])
def test_rotated_boundary_in_the_simulator(mode: str, bm: int, sq: int, sk: int, causal: bool, ctas: int,  # type: ignore[no-untyped-def]
                                           bh: int, monkeypatch) -> None:
    import llsim

    monkeypatch.setattr(llsim, "UNDEF_FLOAT", "nan")
    _xrot(monkeypatch, mode)
    _lse_walk(bm, sq, sk, causal, ctas, bh)


def _lse_walk(bm: int, sq: int, sk: int, causal: bool, ctas: int, bh: int) -> None:
    """`bm` < 0: blocks of -bm x -bm (else bm x 64); D = 64, the short keys' variant."""
    bm, bn = (-bm, -bm) if bm < 0 else (bm, 64)
    k = _std("flash_attention_lse", "f16", bm, bn, 64)
    facts = _short({**_facts("oqkv", 3), **_facts(["lse"], 2)}, 8 * bn)
    assert "%defer" in print_gpu_kernel(lower_gpu(k, "sm_90a", facts))
    _run_lse_and_check(k, facts, (ctas, 1), bh, bh, sq, sk, 64, causal, 13)


@pytest.mark.heavy  # (the simulator's schedule varied: the default case above is the kernel's)
@pytest.mark.parametrize("seed", [3, 8])
def test_rotated_boundary_under_a_perturbed_schedule(seed: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`llsim.PERTURB`: TMA copies land late and out of order, waiters woken late, threads in random order."""
    import llsim

    monkeypatch.setattr(llsim, "UNDEF_FLOAT", "nan")
    monkeypatch.setattr(llsim, "PERTURB", seed)
    _xrot(monkeypatch)
    _lse_walk(64, 256, 192, True, 1, 1)


@pytest.mark.heavy  # (each a mutation of the default case's kernel)
@pytest.mark.parametrize("mutation", ["this_tiles_q", "no_lone_block"])
def test_the_default_case_runs_every_path(mutation: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Mutated, the default simulator case fails: the deferred block's S reading the next tile's Q slot in
    the boundary (its Q released twice: a hang, or a wrong S), a deferred block never run alone before a
    tile without key blocks (a stage never released, or its block missing)."""
    import llsim
    from llsim import Deadlock

    from tilelang.dtypes import DType
    from tilelang.ir import nodes as ir

    monkeypatch.setattr(llsim, "UNDEF_FLOAT", "nan")
    _xrot(monkeypatch)
    if mutation == "this_tiles_q":
        real_b = attention_xrot.boundary
        monkeypatch.setattr(attention_xrot, "boundary", lambda x, *a: real_b(dataclasses.replace(x, qs=x.q_slot), *a))
    else:
        real_f = attention_xrot.finish

        def finish(x, ch, pred, it_l, span, alone=False):  # type: ignore[no-untyped-def]
            if alone:
                return real_f(x, ch, pred, it_l, span, alone)
            no = x.body["fresh"].value(DType.BOOL, ())
            ops, c = real_f(x, ch, no, it_l, span, alone)
            return [ir.Const(no, False), *ops], c

        monkeypatch.setattr(attention_xrot, "finish", finish)
    with pytest.raises((AssertionError, Deadlock)):
        _lse_walk(64, 256, 192, True, 1, 1)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas")
@pytest.mark.parametrize(("mode", "bound"), [pytest.param("1", 256, marks=pytest.mark.heavy),
                                             pytest.param("2", 64, marks=pytest.mark.heavy)])
def test_rotated_boundary_assembles(mode: str, bound: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The benchmark's kernel (bf16, 128 x 128, D = 64, short keys) rotated, through ptxas for sm_90a: no
    serialised wgmma. It spills (ptxas 13.0): "1" 208 B, in the boundary, once a tile, and in the key loop's
    masked branch only, which the full rows at S = 1,024 never take; "2" 52 B, at the CTA's start (reloaded
    once a tile) and after the walk (benchmarks/RESULTS.md, "h15w"). The bounds: more is a regression."""
    _xrot(monkeypatch, mode)
    ptx = emit_ptx(_std("flash_attention", "bf16", 128, 128, 64), "sm_90a", _short(_facts("oqkv", 3), 1024))
    r = assemble(ptx, "sm_90a")
    assert "C7515" not in r.text and "serialized" not in r.text, r.text
    assert r.max_spill_stores <= bound, r.text


@pytest.mark.gpu
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_rotated_boundary_at_the_benchmarks_scale(causal: bool, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The benchmark's launch (f16, D = 64, S = 1,024, 4,096 tiles on every SM) rotated: every tile stored
    and right (`test_attention_qdouble`'s check)."""
    _xrot(monkeypatch)
    _assert_every_tile_right(causal, monkeypatch)
