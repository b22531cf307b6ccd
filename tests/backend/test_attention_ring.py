"""The attention pipeline's K/V ring: its depth (`TILEC_ATTN_STAGES`,
`attention_match.ring_stages`) and the key loop's spin on its next stage
pinned after the softmax (`TILEC_ATTN_PINWAIT`, `g.BarrierWait.after`,
`hopper._after`). Both are opt-in: on the H200 both lost (RESULTS.md,
2026-12-04 session 18:26). Where each applies, what the GPU IR and LLVM
say, the simulator against NumPy with the ring's phases turning over, and
the PTX through ptxas."""

from __future__ import annotations

import re

import numpy as np
import pytest
from ptxas_report import assemble
from test_attention_chain import _short
from test_attention_pipeline import _facts, _run_lse_and_check, _std

from tilelang.backend import emit_llvm_text, emit_ptx, lower_gpu
from tilelang.backend.gpu.printer import print_gpu_kernel

PIN_ASM = ("mad.lo.u32 t, $1, $1, $1; and.b32 t, t, 1; setp.ne.u32 q, t, 0; vote.sync.any.pred q, q, -1; "
           "selp.u32 t, 1, 0, q; or.b32 $0, $2, t;")
FORMS = {"overlap": {"TILEC_ATTN_ROTATE": "0", "TILEC_ATTN_CHAIN": "0"},
         "rotate": {"TILEC_ATTN_ROTATE": "1", "TILEC_ATTN_CHAIN": "0"}}


def _form(monkeypatch, form: str | None) -> None:  # type: ignore[no-untyped-def]
    for var in ("TILEC_ATTN_CHAIN", "TILEC_ATTN_ROTATE", "TILEC_ATTN_PINGPONG", "TILEC_ATTN_PEEL",
                "TILEC_ATTN_SCHEDULE", "TILEC_ATTN_PINWAIT", "TILEC_ATTN_STAGES"):
        monkeypatch.delenv(var, raising=False)
    for var, value in (FORMS[form] if form else {}).items():
        monkeypatch.setenv(var, value)


def _pins(text: str) -> list[str]:
    """The GPU IR line defining each value a wait is pinned after."""
    defs = {m.group(1): line.strip() for line in text.splitlines() if (m := re.match(r"\s*(%[\w.]+) = ", line))}
    return [defs[x] for x in re.findall(r"mbarrier\.wait .* after (%[\w.]+)", text)]


def test_the_parity_pin_is_the_identity() -> None:
    """b (b + 1) is even for every 32-bit b, so ph | ((b * b + b) & 1) is ph: the values the wait is pinned
    after cannot change which phase it waits for (edges and random bit patterns, wrapping mod 2^32)."""
    rng = np.random.default_rng(3)
    bs = [0, 1, 2, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x3F800000, 0x7FC00000,
          *(int(x) for x in rng.integers(0, 1 << 32, 2000, dtype=np.uint64))]
    for b in bs:
        for ph in (0, 1):
            assert ph | (((b * b + b) & 0xFFFFFFFF) & 1) == ph


# The tiers (tests/README.md, htier1): both switches lost on the H200 (RESULTS.md 2026-12-04 18:26); the default
# run keeps one test of each: `TILEC_ATTN_PINWAIT`'s is overlap_d64 below, `TILEC_ATTN_STAGES`'s
# test_the_rings_stages_follow_the_switch_within_what_fits (no compile past the GPU IR; its unset cases are the
# default's). The rest are `heavy`.
@pytest.mark.parametrize(("form", "d", "short"), [("overlap", 64, False),
                                                  pytest.param("rotate", 128, False, marks=pytest.mark.heavy),
                                                  pytest.param(None, 64, True, marks=pytest.mark.heavy)],
                         ids=["overlap_d64", "rotate_d128", "chained_short_d64"])
def test_the_spin_on_the_next_stage_waits_after_the_row_sum(form: str | None, d: int, short: bool,  # type: ignore[no-untyped-def]
                                                           monkeypatch) -> None:
    """On: the key loop's spin on its next stage (each copy of the loop: the split kernel's two walks, the
    chained first iteration) reads the body's last row vector, the new row sum (an add of f32 [128, 1], not the
    early vote's constant ones), and the LLVM carries the pin's asm; the other waits (Q, the first stage, the
    producer's) are not pinned. Off (the default): no pin, no asm."""
    _form(monkeypatch, form)
    facts = _facts("oqkv", 3)
    if short:
        facts = _short(facts, 1024)
    k = _std("flash_attention", "f16", 128, 128, d)
    off = print_gpu_kernel(lower_gpu(k, "sm_90a", facts))
    assert " after %" not in off
    monkeypatch.setenv("TILEC_ATTN_PINWAIT", "1")
    gk = lower_gpu(k, "sm_90a", facts)
    on = print_gpu_kernel(gk)
    pins = _pins(on)
    assert pins and all(re.search(r"= add %\S+, %\S+ : f32\[128, 1\]", p) for p in pins), pins
    waits = [line for line in on.splitlines() if "mbarrier.wait" in line]
    assert len(waits) > len(pins)  # Q's, the first stage's and the producer's waits stay as they were
    ll, _ = emit_llvm_text(gk, gk.facts, "")
    assert ll.count(PIN_ASM) == len(pins)


# (heavy: `TILEC_ATTN_PINWAIT` is off by default and lost; its default test is
# test_the_spin_on_the_next_stage_waits_after_the_row_sum[overlap_d64], the tiers above; "rotate" heavy since htier1)
@pytest.mark.parametrize("form", [pytest.param("overlap", marks=pytest.mark.heavy), pytest.param("rotate", marks=pytest.mark.heavy)])
def test_pinned_waits_in_the_simulator(form: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Two CTAs walking tiles of 5 key blocks through a ring of 4 stages (its phases flip several times in a
    CTA): with the waits pinned the results match NumPy (a wrong parity would deadlock or race)."""
    _form(monkeypatch, form)
    monkeypatch.setenv("TILEC_ATTN_PINWAIT", "1")
    k = _std("flash_attention_lse", "f16", 64, 64, 64)
    facts = {**_facts("oqkv", 3), **_facts(["lse"], 2)}
    assert " after %" in print_gpu_kernel(lower_gpu(k, "sm_90a", facts))
    _run_lse_and_check(k, facts, (2, 1), 1, 1, 150, 300, 64, True, 13)


@pytest.mark.heavy  # (the tiers above: `TILEC_ATTN_PINWAIT`'s default test is the spin's overlap_d64)
def test_pinned_ptx_assembles_without_spills(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    _form(monkeypatch, None)
    monkeypatch.setenv("TILEC_ATTN_PINWAIT", "1")
    for d in (64, 128):
        r = assemble(emit_ptx(_std("flash_attention", "f16", 128, 128, d), "sm_90a", _facts("oqkv", 3)), "sm_90a")
        assert r.max_spill_stores == 0, r.text
        assert not re.search(r"C75\d\d", r.text), r.text


@pytest.mark.parametrize(("setting", "d", "stages"), [(None, 64, 4), ("6", 64, 6), ("fit", 64, 6), ("5", 64, 5),
                                                      ("fit", 128, 3), ("6", 128, 3), (None, 128, 3)])
def test_the_rings_stages_follow_the_switch_within_what_fits(setting: str | None, d: int, stages: int,  # type: ignore[no-untyped-def]
                                                             monkeypatch) -> None:
    """128 x 128 blocks: at D = 64 a stage of K and V is 32 KB and 6 fit beside Q (16 KB); at D = 128 64 KB,
    3 fit. Unset: 4 (what every prefill row was timed with), at most what fits."""
    _form(monkeypatch, None)
    if setting is not None:
        monkeypatch.setenv("TILEC_ATTN_STAGES", setting)
    text = print_gpu_kernel(lower_gpu(_std("flash_attention", "f16", 128, 128, d), "sm_90a", _facts("oqkv", 3)))
    assert re.search(rf"%full\S* = mbarrier\.alloc count \d+ : i64\[{stages}\]", text), text[:2000]
    assert re.search(rf"%empty\S* = mbarrier\.alloc count \d+ : i64\[{stages}\]", text)


@pytest.mark.heavy  # (the tiers above: `TILEC_ATTN_STAGES`'s default test is ..follow_the_switch_within_what_fits)
def test_a_deeper_ring_in_the_simulator(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Six stages (64 x 64 blocks at D = 64: 13 would fit), two CTAs walking tiles of 5 key blocks: the ring's
    counter runs on across tiles and wraps; the results match NumPy."""
    _form(monkeypatch, "rotate")
    monkeypatch.setenv("TILEC_ATTN_STAGES", "6")
    k = _std("flash_attention_lse", "f16", 64, 64, 64)
    facts = {**_facts("oqkv", 3), **_facts(["lse"], 2)}
    assert "i64[6]" in print_gpu_kernel(lower_gpu(k, "sm_90a", facts))
    _run_lse_and_check(k, facts, (2, 1), 1, 1, 150, 300, 64, True, 17)
