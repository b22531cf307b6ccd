"""Three consumer warpgroups (a 192-row query block, FlashAttention-3's D = 64 tiling; hattn9): what the attention
pipeline leaves out beside their 160 registers a thread (the key split's merge and the chained short keys'
variant: `attention_split.roomy`), the PTX ptxas makes of std's kernel at 192 x 128 (no spill in the key loop), and
the kernel run by `llsim` against NumPy: query rows not a multiple of 192 (the last block's rows past the end),
causal with S_q != S_k (rows that see no key), grouped query heads, the log-sum-exp output, f16 and bf16, a
persistent walk of several tiles a CTA, and the causal tail variant's walk. The simulations run 512 threads a CTA
(seconds each): heavy; the default suite keeps the rule's own test."""

from __future__ import annotations

import numpy as np
import pytest
from ptxas_report import assemble
from test_attention_pipeline import _facts, _reference, _run_lse_and_check, _std

from tilelang.backend import emit_ptx, lower_gpu
from tilelang.backend.gpu.passes import attention_split as split
from tilelang.backend.gpu.passes.pipeline import role_registers
from tilelang.backend.gpu.printer import print_gpu_kernel


def test_three_consumer_warpgroups_leave_no_room_for_the_split_or_the_chain() -> None:
    """One or two consumer warpgroups keep 240 registers a thread beside a producer of 24, three keep 160: the
    split's merge and the chained variant are taken beside one or two only."""
    assert [role_registers(c, split.WIDE_PRODUCER_REGS) for c in (1, 2, 3)] == [240, 240, 160]
    assert [split.roomy(c) for c in (1, 2, 3)] == [True, True, False]


def _lse_facts() -> dict:  # type: ignore[type-arg]
    return {**_facts("oqkv", 3), **_facts(["lse"], 2)}


@pytest.mark.heavy
def test_std_attention_at_192_rows_lowers_to_three_consumer_warpgroups_without_the_split() -> None:
    """BM = 192 at D = 64: 12 consumer warps at 160 registers, the producer at 24; no split walk (its pieces'
    records) and no request for the short keys' chained variant, but the causal tail's and once's requests kept."""
    gk = lower_gpu(_std("flash_attention_lse", "f16", 192, 128, 64), "sm_90a", _lse_facts())
    text = print_gpu_kernel(gk)
    assert "role consumer warps 12 regs 160:" in text and "role producer warps 4 regs 24" in text
    assert "split.save" not in text and "split.arrive" not in text and gk.short is None
    assert gk.split is not None and {kind for kind, _ in gk.split.ons} == {"tail", "once"}


@pytest.mark.heavy
@pytest.mark.parametrize("dt", ["f16", "bf16"])
def test_std_attention_at_192_rows_assembles_without_spills_in_its_key_loop(dt: str) -> None:
    """ptxas 13.0 for sm_90a: at most 4 bytes spilled (one register stored once a tile, before its key loop; the
    split's merge beside these registers spilled 948 B), and no wgmma serialised."""
    r = assemble(emit_ptx(_std("flash_attention", dt, 192, 128, 64), "sm_90a", _facts("oqkv", 3)), "sm_90a")
    assert r.max_spill_stores <= 4, r.text
    assert "C7515" not in r and "serialized" not in r, r.text


@pytest.mark.heavy
@pytest.mark.parametrize(("causal", "sq", "sk", "bh", "hkv", "ctas", "kind", "rotate"),
                         [(True, 200, 150, 2, 1, 1, "", "0"), (False, 200, 330, 2, 2, 2, "", "0"),
                          (True, 200, 420, 1, 1, 2, "tail", "0"), (True, 400, 420, 1, 1, 2, "once", "0"),
                          (True, 200, 330, 2, 1, 2, "", "1")],
                         ids=["causal_rows_see_nothing_gqa", "full_two_ctas", "tail_variant", "once_variant",
                              "rotated_causal_gqa"])
def test_std_attention_at_192_rows_in_the_simulator(causal: bool, sq: int, sk: int, bh: int, hkv: int, ctas: int,
                                                    kind: str, rotate: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`flash_attention_lse` at 192 x 128, D = 64, against NumPy (outputs preset to NaN, undefined floats read as
    NaN): each CTA walks its tiles; `kind` the variant the runtime launches for such a walk (`tail`: causal pairs
    of an even number of query blocks, their last rounds as single tiles; `once`: an odd number); `rotate` "1":
    the rotated loop (`TILEC_ATTN_ROTATE=1`, hattn9_device.sh's arm R: S of the next block with P V of this one)."""
    import llsim

    monkeypatch.setattr(llsim, "UNDEF_FLOAT", "nan")
    monkeypatch.setenv("TILEC_ATTN_ROTATE", rotate)
    k = _std("flash_attention_lse", "f16", 192, 128, 64)
    facts = _lse_facts()
    if kind:
        gk = lower_gpu(k, "sm_90a", facts)
        assert gk.split is not None and kind in {x for x, _ in gk.split.ons}
        facts = gk.split.refine(facts, kind)
    _run_lse_and_check(k, facts, (ctas, 1), bh, hkv, sq, sk, 64, causal, sq + sk)


def _bf16(x: np.ndarray) -> np.ndarray:
    """`x` rounded toward zero to bf16's 8 significant bits (what llsim stores of an f32 array for a bf16 tensor)."""
    return (np.asarray(x, np.float32).view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32)


@pytest.mark.heavy
def test_std_attention_at_192_rows_in_bf16_in_the_simulator(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """bf16 (f32 arrays of bf16 values in and out), causal with S_k > S_q, grouped query heads (2 over 1)."""
    import llsim

    monkeypatch.setattr(llsim, "UNDEF_FLOAT", "nan")
    bh, hkv, sq, sk, d = 2, 1, 200, 260, 64
    rng = np.random.default_rng(9)
    q, kk, v = (_bf16(rng.standard_normal(s)) for s in ((bh, sq, d), (hkv, sk, d), (hkv, sk, d)))
    o = np.full((bh, sq, d), np.nan, np.float32)
    dev = llsim.SimDevice("sm_90a")
    dev.run(_std("flash_attention", "bf16", 192, 128, 64), (1, 1), [o, q, kk, v, np.float32(0.125), True],
            _facts("oqkv", 3))
    for b in range(bh):
        ref, _ = _reference(q[b], kk[0], v[0], 0.125, True)
        np.testing.assert_allclose(o[b], ref, atol=2e-2, rtol=2e-2)
