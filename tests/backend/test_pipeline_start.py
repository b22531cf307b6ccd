"""A pipeline kernel's start before its warp roles split (hattn7, issue 15's
decode B=1 8k): the barrier arrays' initialisations under one fence and one
CTA barrier (`TILEC_MBAR_ONE_INIT`, `smem_alloc.one_init`) and the walk's
fast divisors made by the consumers after the split, the producer dividing
plainly (`TILEC_ATTN_DIVS_IN_ROLE`, `attention_tiles.in_role`). Both on by
default since the H100 timed them (2026-12-07, call 32); "0" is each one's
way back to the form before."""

from __future__ import annotations

import re

import numpy as np
import pytest
from ptxas_report import assemble
from test_attention_pipeline import _facts, _run_lse_and_check, _schedule, _std
from test_decode_tc_pipeline import G, _inputs, _kernel_ir
from test_decode_wg_pipeline import _check, _reference

from tilelang.backend import emit_ptx, lower_gpu
from tilelang.backend.gpu.printer import print_gpu_kernel

BOTH = {"TILEC_MBAR_ONE_INIT": "1", "TILEC_ATTN_DIVS_IN_ROLE": "1"}


def _before_split(ptx: str) -> list[str]:
    """The instructions every thread runs before the first `setmaxnreg` (the roles' split)."""
    body = ptx[ptx.index("{", ptx.index(".entry")):]
    ins = [x.strip() for x in body.splitlines() if x.strip().endswith(";") and not x.strip().startswith(".")]
    return ins[:next(i for i, x in enumerate(ins) if x.startswith("setmaxnreg"))]


def _decode_ptx(monkeypatch, env: dict[str, str]) -> str:  # type: ignore[no-untyped-def]
    for k in BOTH:
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    kir, facts = _kernel_ir(8, 8192, 16, 64, 128)  # (the B=1 8k plan's shape: D = 128, fast divisions by "auto")
    return emit_ptx(kir, "sm_90a", facts)


def test_one_fence_and_barrier_for_the_barrier_arrays(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    default = _decode_ptx(monkeypatch, {})
    off = _before_split(_decode_ptx(monkeypatch, {"TILEC_MBAR_ONE_INIT": "0"}))
    on = _before_split(_decode_ptx(monkeypatch, {"TILEC_MBAR_ONE_INIT": "1"}))
    assert _before_split(default) == on  # (on by default)
    count = [(sum(x.startswith("bar.sync") for x in p), sum(x.startswith("fence.proxy.async") for x in p),
              sum(x.startswith("mbarrier.init") for x in p)) for p in (off, on)]
    assert count == [(4, 4, 10), (1, 1, 10)], count  # (full 4, empty 4, Q's 1, Q's release 1: the same 10 inits)
    kir, facts = _kernel_ir(8, 8192, 16, 64, 128)
    text = print_gpu_kernel(lower_gpu(kir, "sm_90a", facts))
    assert text.count("mbarrier.alloc") == 4 and text.count(" unfenced") == 3


def test_the_divisors_are_made_after_the_split(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    default = _decode_ptx(monkeypatch, {})
    off = _decode_ptx(monkeypatch, {"TILEC_ATTN_DIVS_IN_ROLE": "0"})
    on = _decode_ptx(monkeypatch, {"TILEC_ATTN_DIVS_IN_ROLE": "1"})
    assert default == on  # (on by default; the barrier arrays' switch on in all three)
    # the multiplier's 64-bit division and bit length (31 compares) before the split, then not
    assert any(x.startswith("div.u64") for x in _before_split(off))
    assert not any(x.startswith("div.u64") for x in _before_split(on))
    assert len([x for x in _before_split(on) if x.startswith("setp.gt.s32")]) < 31 <= \
        len([x for x in _before_split(off) if x.startswith("setp.gt.s32")])
    assert "div.u64" in on  # (the consumers' set-up)
    assert len(_before_split(on)) < len(_before_split(off)) - 100


@pytest.mark.parametrize("ctas", [pytest.param(1, marks=pytest.mark.heavy), pytest.param(3, marks=pytest.mark.heavy), 4])
def test_the_decode_split_with_both_in_the_simulator(ctas: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """D = 128 (the fast divisions on by "auto"): 2 KV heads x 3 shares on 1 CTA (every tile one CTA's),
    3 (two rounds) and 4 (the last round's CTAs partly busy); a cache_len inside a key block, NaN and Inf
    past it."""
    import llsim

    monkeypatch.setattr(llsim, "UNDEF_FLOAT", "nan")
    for k, v in BOTH.items():
        monkeypatch.setenv(k, v)
    bhkv, smax, clen, splits, bn, d = 2, 256, 150, 3, 64, 128
    kir, facts = _kernel_ir(bhkv, smax, splits, bn, d)
    assert lower_gpu(kir, "sm_90a", facts).persistent == 1
    q, k, v = _inputs(bhkv, smax, d, clen, 5)
    o = np.full((bhkv * splits, G, d), np.nan, np.float32)
    lse = np.full((bhkv * splits, G), np.nan, np.float32)
    llsim.SimDevice("sm_90a").run(kir, (ctas, 1), [o, lse, q, k, v, np.int32(clen), np.float32(0.125),
                                                   np.int32(splits)], facts)
    _check(o, lse, *_reference(q, k, v, clen, splits, bn, 0.125))


def test_a_walk_of_five_items_a_head_with_both_in_the_simulator(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Prefill at D = 128 (D = 64's kernel has the split's second walk: its divisors stay before the split),
    3 CTAs over 2 heads of 5 query blocks (the divisor 5: the producer's plain divisions and the consumers'
    multipliers must name the same tiles, or rows go unwritten or wrong). 70 keys (was 130): two key blocks, the
    second partial (a loop and a masked last block, as before); what the divisions name is the item (head and
    query block), whatever its keys (5.1 -> 4.3 CPU-s)."""
    _schedule(monkeypatch, "overlap+rotate")
    monkeypatch.setenv("TILEC_ATTN_FASTDIV", "1")
    for k, v in BOTH.items():
        monkeypatch.setenv(k, v)
    k = _std("flash_attention_lse", "f16", 64, 64, 128)
    facts = {**_facts("oqkv", 3), **_facts(["lse"], 2)}
    ptx = emit_ptx(k, "sm_90a", facts)
    assert not any(x.startswith("div.u64") for x in _before_split(ptx)) and "div.u64" in ptx
    _run_lse_and_check(k, facts, (3, 1), 2, 2, 300, 70, 128, False, 11)


@pytest.mark.heavy
@pytest.mark.parametrize("kernel", ["decode", "prefill"])
def test_both_assemble_without_spills(kernel: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The defaults (both on), the prefill's kernel too (`attention_tiles.DIVS_IN_ROLE_DEFAULT`)."""
    for k in BOTH:
        monkeypatch.delenv(k, raising=False)
    if kernel == "decode":
        kir, facts = _kernel_ir(8, 8192, 16, 64, 128)
        ptx = emit_ptx(kir, "sm_90a", facts)
    else:
        ptx = emit_ptx(_std("flash_attention", "bf16", 128, 128, 128), "sm_90a", _facts("oqkv", 3))
    assert not re.search(r"div\.u64", "\n".join(_before_split(ptx)))
    r = assemble(ptx, "sm_90a")
    assert r.max_spill_stores == 0, r.text
