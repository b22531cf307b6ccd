"""`TILEC_ATTN_STAGGER` (`passes/attention_stagger.py`): the chained walk's two
consumer warpgroups a first iteration apart (warpgroup 0 syncs on a named
barrier in the CTA's first tile until warpgroup 1 arrives there), Q
double-buffered. Off: every kernel as before; on: only the D = 64 short keys'
variant changes; in the simulator against NumPy (a CTA walking three tiles,
so Q's two buffers are each used and one reused)."""

from __future__ import annotations

import dataclasses
import re

import pytest
from test_attention_pipeline import _facts, _run_lse_and_check, _std

from tilelang.backend import emit_llvm_text, lower_gpu
from tilelang.backend.gpu.passes import attention_stagger
from tilelang.backend.gpu.printer import print_gpu_kernel

ENV = ("TILEC_ATTN_STAGGER", "TILEC_ATTN_CHAIN", "TILEC_ATTN_QDOUBLE", "TILEC_ATTN_STAMPS", "TILEC_ATTN_SHORT_D")


def _short(facts, rows: int):  # type: ignore[no-untyped-def]
    return {**facts, "k": dataclasses.replace(facts["k"], rows_at_most=rows)}


def _llvm(k, facts) -> str:  # type: ignore[no-untyped-def]
    gk = lower_gpu(k, "sm_90a", facts)
    return emit_llvm_text(gk, gk.facts, "")[0]


def test_only_the_chained_short_variant_changes(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    for var in ENV:
        monkeypatch.delenv(var, raising=False)
    k64 = _std("flash_attention", "f16", 128, 128, 64)
    facts = _facts("oqkv", 3)
    cases = [(k64, facts), (k64, _short(facts, 1024))]  # (D = 128's variant is not chained: `wanted`)
    off = [_llvm(k, f) for k, f in cases]
    monkeypatch.setenv("TILEC_ATTN_STAGGER", "0")
    assert _llvm(*cases[1]) == off[1]
    monkeypatch.setenv("TILEC_ATTN_STAGGER", "1")
    on = [_llvm(k, f) for k, f in cases]
    assert on[0] == off[0] and on[1] != off[1]  # the long keys' kernel as before
    # warpgroup 0 syncs once, warpgroup 1 arrives once, on the stagger's barrier (256 threads: both warpgroups)
    b = attention_stagger.STAGGER_BARRIER
    sync, arrive = (rf"@llvm\.nvvm\.barrier\.cta\.{x}\.aligned\.count\(i32 {b}, i32 256\)" for x in ("sync", "arrive"))
    assert len(re.findall(sync, on[1])) == 1 and len(re.findall(arrive, on[1])) == 1
    assert not re.search(sync, off[1]) and not re.search(arrive, off[1])
    text = print_gpu_kernel(lower_gpu(k64, "sm_90a", _short(facts, 1024)))
    consumer = text.split("role producer")[0]
    assert consumer.index("warpgroup_turn.end 9") < consumer.index("mbarrier.wait") and "%chained" in consumer
    assert consumer.count("warpgroup_turn.") == 2
    # "2": warpgroup 1 arrives in the key loop's first iteration (or after the loop where it runs none)
    monkeypatch.setenv("TILEC_ATTN_STAGGER", "2")
    two = print_gpu_kernel(lower_gpu(k64, "sm_90a", _short(facts, 1024))).split("role producer")[0]
    assert two.count("warpgroup_turn.start 9") == 2 and two.index("warpgroup_turn.start 9") > two.index("= for %j")
    assert consumer.index("warpgroup_turn.start 9") < consumer.index("= for %j")  # "1": before the key loop
    monkeypatch.setenv("TILEC_ATTN_STAGGER", "yes")
    with pytest.raises(ValueError, match="TILEC_ATTN_STAGGER='yes'"):
        lower_gpu(k64, "sm_90a", _short(facts, 1024))


@pytest.mark.heavy  # (opt-in: the default kernels never run this barrier)
@pytest.mark.parametrize(("mode", "sk"), [("1", 70), ("2", 70), ("2", 60)], ids=["first_iteration", "in_the_loop",
                                                                                 "one_block_tiles"])
def test_staggered_tiles_in_the_simulator(mode: str, sk: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """One CTA walks three tiles of two warpgroups (128 rows; the last one cut): warpgroup 0 waits in the
    first for warpgroup 1's first iteration, the tiles' Q alternate between two buffers; the outputs and
    log-sum-exps are NumPy's (a missing arrival would hang the walk: the simulator reports it)."""
    import llsim

    for var in ENV:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("TILEC_ATTN_STAGGER", mode)
    monkeypatch.setattr(llsim, "UNDEF_FLOAT", "nan")
    k = _std("flash_attention_lse", "f16", 128, 64, 64)
    facts = _short({**_facts("oqkv", 3), **_facts(["lse"], 2)}, 8 * 64)
    text = print_gpu_kernel(lower_gpu(k, "sm_90a", facts))
    assert "%chained" in text and "warpgroup_turn.start 9" in text
    _run_lse_and_check(k, facts, (1, 1), 1, 1, 300, sk, 64, False, 7)  # (sk 60: one key block, the loop runs none)


GPU_CASES = [("f16", 1000, 3, False, 3), ("bf16", 1024, 2, True, 2), ("f16", 300, 5, True, 4), ("bf16", 200, 1, False, 4)]


@pytest.mark.gpu
@pytest.mark.parametrize("case", GPU_CASES, ids=lambda c: "-".join(map(str, c)))
def test_staggered_tiles_on_the_gpu(case, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """std's `flash_attention_lse` at D = 64 over short keys (the chained variant) with `TILEC_ATTN_STAGGER=1`
    on a few CTAs (several tiles a CTA; a CTA with one tile; edge tiles; causal) against a float32 reference."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no CUDA device")
    import tilelang

    dtype, s, bh, causal, ctas = case
    d = 64
    for var in ENV:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("TILEC_ATTN_STAGGER", "1")
    monkeypatch.setenv("TILEC_PERSISTENT_SMS", str(ctas))
    attn = tilelang.compile("use std::attention::*;\n")
    dt = {"f16": torch.float16, "bf16": torch.bfloat16}[dtype]
    g = torch.Generator(device="cuda").manual_seed(s + bh)
    q, k, v = (torch.randn(bh, s, d, device="cuda", dtype=dt, generator=g) for _ in range(3))
    sc = torch.einsum("bqd,bkd->bqk", q.float(), k.float()) * d**-0.5
    if causal:
        keep = torch.arange(s, device="cuda")[None, :] <= torch.arange(s, device="cuda")[:, None]
        sc = sc.masked_fill(~keep, float("-inf"))
    want_lse = torch.logsumexp(sc, dim=-1)
    want = torch.softmax(sc, dim=-1) @ v.float()
    o = torch.full_like(q, float("nan"))
    lse = torch.full((bh, s), float("nan"), device="cuda")
    attn.flash_attention_lse[dtype, 128, 128, d](tilelang.partition(o, [1, 128, d]), tilelang.partition(lse, [1, 128]),
                                                  q, k, v, d**-0.5, causal).sync()
    assert float((o.float() - want).abs().max() / want.abs().max()) < 1e-2
    torch.testing.assert_close(lse, want_lse, rtol=1e-4, atol=1e-3)
