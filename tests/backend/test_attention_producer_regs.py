"""`TILEC_ATTN_PRODUCER_REGS` (`passes/attention.producer_budget`): the attention pipeline's producer warp's
register budget (setmaxnreg), the consumers getting what it gives back (`pipeline.role_registers`). Unset, each
kernel keeps its budget ("auto": 24 where the value rows are `attention_tiles.BOUNDARY_D` (128) wide beside two
consumer warpgroups but in the causal tail variant, 40 beside two otherwise, 24 beside three); "24" is
FlashAttention-3's (the consumers at 240); anything else is refused by name. The PTX through ptxas: no spills at
D = 128."""

from __future__ import annotations

import dataclasses
import re
import shutil

import pytest
from ptxas_report import assemble
from test_attention_pipeline import _facts, _std

from tilelang.backend import emit_ptx, lower_gpu
from tilelang.backend.gpu.passes import attention_tail
from tilelang.backend.gpu.passes.pipeline import role_registers
from tilelang.backend.gpu.printer import print_gpu_kernel

FACTS = _facts("oqkv", 3)


def _roles(monkeypatch, want: str | None, bm: int = 128, d: int = 128) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    """(consumer, producer) registers of std's prefill kernel at `bm` x 128 under `want`."""
    if want is None:
        monkeypatch.delenv("TILEC_ATTN_PRODUCER_REGS", raising=False)
    else:
        monkeypatch.setenv("TILEC_ATTN_PRODUCER_REGS", want)
    text = print_gpu_kernel(lower_gpu(_std("flash_attention", "f16", bm, 128, d), "sm_90a", FACTS))
    c = re.search(r"role consumer warps \d+ regs (\d+)", text)
    p = re.search(r"role producer warps 4 regs (\d+)", text)
    assert c and p, text[:2000]
    return int(c.group(1)), int(p.group(1))


def test_the_producer_budget(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Unset and "auto" alike: at two consumer warpgroups 24 / 240 at D = 128 (`BOUNDARY_D`, the H100's call 24)
    and 40 / 232 at D = 64; 24 / 160 at three (`TILEC_ATTN_PRODUCER3`); "40" at D = 128: 40 / 232 (the budget
    before call 24), "24" at D = 64: 24 / 240; "40" at three: 40 / 152 (the budget before
    `TILEC_ATTN_PRODUCER3`)."""
    assert _roles(monkeypatch, None) == _roles(monkeypatch, "auto") == (240, 24) == (role_registers(2, 24), 24)
    assert _roles(monkeypatch, "40") == (232, 40) == (role_registers(2, 40), 40)
    assert _roles(monkeypatch, None, d=64) == _roles(monkeypatch, "auto", d=64) == (232, 40)
    assert _roles(monkeypatch, "24", d=64) == (240, 24)
    assert _roles(monkeypatch, None, bm=192, d=64) == (160, 24)
    assert _roles(monkeypatch, "40", bm=192, d=64) == (152, 40)


def test_the_causal_tail_variant_keeps_40(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The causal tail variant (`attention_tail`, `TensorFacts.split_walk` "tail") at D = 128 keeps the producer
    at 40 and the walk's divisions (ptxas 13.0 spilled 24 B there with the boundary's switches, and call 24 read
    -0.1..-0.5 % on its rows): under "auto" its kernel is "40"'s with the fast walk and Q's early release off."""
    for var in ("TILEC_ATTN_PRODUCER_REGS", "TILEC_ATTN_FASTDIV", "TILEC_ATTN_QEARLY", "TILEC_ATTN_TAIL"):
        monkeypatch.delenv(var, raising=False)
    k = _std("flash_attention", "f16", 128, 128, 128)
    tail = {**FACTS, "o": dataclasses.replace(FACTS["o"], split_walk=attention_tail.KIND)}
    auto = print_gpu_kernel(lower_gpu(k, "sm_90a", tail))
    assert "%in_tail" in auto  # (the tail variant: its walk deals the last rounds out as single tiles)
    assert "role producer warps 4 regs 40" in auto and "role consumer warps 8 regs 232" in auto
    for var, v in (("TILEC_ATTN_PRODUCER_REGS", "40"), ("TILEC_ATTN_FASTDIV", "0"), ("TILEC_ATTN_QEARLY", "0")):
        monkeypatch.setenv(var, v)
    assert print_gpu_kernel(lower_gpu(k, "sm_90a", tail)) == auto
    monkeypatch.setenv("TILEC_ATTN_PRODUCER_REGS", "24")  # (the switch still reaches it)
    assert "role producer warps 4 regs 24" in print_gpu_kernel(lower_gpu(k, "sm_90a", tail))


@pytest.mark.parametrize("bad", ["32", "16", "x", ""])
def test_a_budget_it_does_not_know_is_refused(monkeypatch, bad: str) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TILEC_ATTN_PRODUCER_REGS", bad)
    with pytest.raises(ValueError, match="TILEC_ATTN_PRODUCER_REGS"):
        lower_gpu(_std("flash_attention", "f16", 128, 128, 128), "sm_90a", FACTS)


@pytest.mark.heavy
@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas")
@pytest.mark.parametrize("dt", ["f16", "bf16"])
def test_the_d128_kernel_at_24_registers_does_not_spill(dt: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """ptxas 13.0, the benchmark's D = 128 kernel (128 x 128) with the producer at 24: setmaxnreg 240 for the
    consumers, 0 B of spills, no serialised wgmma (the producer's code, the TMA issue and the ring's waits,
    fits 24)."""
    monkeypatch.setenv("TILEC_ATTN_PRODUCER_REGS", "24")
    ptx = emit_ptx(_std("flash_attention", dt, 128, 128, 128), "sm_90a", FACTS)
    assert re.search(r"setmaxnreg.inc.sync.aligned.u32\s+240;", ptx)
    assert re.search(r"setmaxnreg.dec.sync.aligned.u32\s+24;", ptx)
    r = assemble(ptx, "sm_90a")
    assert r.max_spill_stores == 0 and "C7515" not in r and "serialized" not in r, r.text
