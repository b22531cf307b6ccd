"""The decode plan's kernels with small tiles held whole by every thread
(`TILEC_REPLICATE_SMALL=1`, the engine's `Plan.rs`): every kernel the GPU
plan launches at Qwen3-4B's shapes (both step forms) assembles with ptxas
13.0 (sm_90a) with no spill and no more barriers than without the option,
the ring attention's epilogue losing its layout exchanges (50 barriers ->
at most 13), the short form's split merge its weights' (9 -> 1), and the
attention also assembles for sm_80. Needs `ptxas`;
no GPU. The numbers per kernel are in benchmarks/RESULTS.md (h17,
2026-12-05)."""

from __future__ import annotations

import dataclasses
import re

import pytest
from engine import TileQwen3, plan_for
from model import Qwen3Config
from ptxas_report import assemble
from test_gemv_registers import _facts, _ptx, _zero_weights

from tilelang.backend import emit_ptx
from tilelang.backend.target import ptxas_available

pytestmark = pytest.mark.skipif(not ptxas_available(), reason="ptxas is not on PATH")


def _bars(ptx: str) -> int:
    return ptx.count("bar.sync") + ptx.count("barrier.sync")


def test_the_4b_plan_with_small_tiles_replicated(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    cfg = Qwen3Config.load("qwen3-4b")
    # (one layer, was 2: the same 11 kernels, their PTX the same text with the option on, checked once 2026-12-08;
    # every kernel is deduplicated by name and generics, and the engine's build of 2 layers was 3.3 of the CPU-s)
    one = dataclasses.replace(cfg, num_hidden_layers=1)
    plan = plan_for(cfg, 2048, 132, hopper=True)
    eng = TileQwen3(one, _zero_weights(one), max_seq=2048, plan=plan)
    ops = {}
    for form in eng._form_ops.values():
        for op in form:
            ops.setdefault((op.kernel.__name__, tuple(op.generics.values())), op)
    bars = {}
    for key, op in ops.items():
        op.discard()  # built to be compiled, never run
        monkeypatch.setenv("TILEC_REPLICATE_SMALL", "0")
        off = _ptx(op)
        monkeypatch.setenv("TILEC_REPLICATE_SMALL", "1")
        on = _ptx(op)
        r = assemble(on, "sm_90a")
        threads = int(re.search(r"\.reqntid (\d+)", on).group(1))  # type: ignore[union-attr]
        assert r.max_spill_stores == 0, (key, r.text)
        assert r.max_registers * threads <= 65536, key
        assert _bars(on) <= _bars(off), (key, _bars(on), _bars(off))
        bars[key] = (_bars(off), _bars(on))
    by_name = {name: b for (name, _), b in bars.items()}
    off, on = by_name["attn_decode_ring_early"]
    assert on <= 13 and off - on >= 30, (off, on)
    assert by_name["kv_append"][1] < by_name["kv_append"][0]
    # the short form's merge (16 shares; PE: `me`, its trigger at entry at 4B):
    # its log-sum-exps loaded whole by every thread
    assert plan.me == 1 and bars[("combine_splits", (16, 128, 1))] == (9, 1)
    # the split attention for sm_80 (the register budget of an A100's SM),
    # with the facts `_ptx` gives
    att = next(op for (name, _), op in ops.items() if name == "attn_decode_ring_early")
    kir = att._plan.kir
    facts = _facts(att)
    ptx80 = emit_ptx(kir, "sm_80", facts)
    assert _bars(ptx80) == on
    assert assemble(ptx80, "sm_80").max_spill_stores == 0
