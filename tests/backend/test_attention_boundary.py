"""The tile boundary's three switches under "auto" (`attention_tiles.BOUNDARY_D`, the H100's call 24): where the
value rows are 128 wide the long keys' kernel has the walk's fast divisions (`TILEC_ATTN_FASTDIV`), Q released in
the rotated loop's last iteration (`TILEC_ATTN_QEARLY`) and the producer at 24 registers
(`TILEC_ATTN_PRODUCER_REGS`); at D = 64 it has none of them; the causal tail variant has none at either width
(test_attention_producer_regs). The D = 128 kernel so built walks every tile right in the simulator."""

from __future__ import annotations

import pytest
from test_attention_pipeline import _facts, _run_lse_and_check, _std

from tilelang.backend import lower_gpu
from tilelang.backend.gpu.passes import attention_tiles
from tilelang.backend.llvm import emit_llvm_text

SWITCHES = ("TILEC_ATTN_FASTDIV", "TILEC_ATTN_QEARLY", "TILEC_ATTN_PRODUCER_REGS")
FACTS = {**_facts("oqkv", 3), **_facts(["lse"], 2)}


def _llvm(d: int) -> str:
    gk = lower_gpu(_std("flash_attention_lse", "f16", 128, 128, d), "sm_90a", FACTS)
    return emit_llvm_text(gk, gk.facts, "")[0]


@pytest.mark.parametrize(("d", "on"), [(128, ("1", "1", "24")), (64, ("0", "0", "40"))])
def test_auto_is_the_switches_on_at_d128_and_off_at_d64(d: int, on: tuple[str, ...], monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The long keys' kernel under "auto" (unset) is byte for byte the one with the three switches given
    explicitly: on at D = 128, off at D = 64; and the other setting gives another kernel (each switch reaches
    it; but Q's early release at D = 64, whose long keys' loop is not rotated: nothing to release it in)."""
    assert attention_tiles.BOUNDARY_D == (128,)
    for var in SWITCHES:
        monkeypatch.delenv(var, raising=False)
    auto = _llvm(d)
    for var, v in zip(SWITCHES, on, strict=True):
        monkeypatch.setenv(var, v)
    assert _llvm(d) == auto
    for var, v, other in zip(SWITCHES, on, ("0", "0", "40") if d == 128 else ("1", "1", "24"), strict=True):
        monkeypatch.setenv(var, other)
        assert (_llvm(d) != auto) == (d == 128 or var != "TILEC_ATTN_QEARLY"), var
        monkeypatch.setenv(var, v)


# ~7 s each (a 128-row block is 384 simulated threads): the default case is the causal walk of pairs on 2 CTAs
# (3 query blocks a head: the middle one paired with itself, a partial key block, tiles of 1 to 3 key blocks, so
# Q's release in the last iteration and a loop that does not run); heavy: single tiles over 3 CTAs at BN = 64
# (the same switches; the fast walk's single-tile position and a ragged last query block)
@pytest.mark.parametrize(("bn", "ctas", "bh", "sq", "sk", "causal"),
                         [(128, 2, 2, 300, 300, True),
                          pytest.param(64, 3, 2, 384, 200, False, marks=pytest.mark.heavy)],
                         ids=["causal_pairs", "bn64_full"])
def test_the_d128_default_walks_every_tile_in_the_simulator(bn: int, ctas: int, bh: int, sq: int, sk: int,  # type: ignore[no-untyped-def]
                                                           causal: bool, monkeypatch) -> None:
    for var in (*SWITCHES, "TILEC_ATTN_SCHEDULE", "TILEC_ATTN_ROTATE", "TILEC_ATTN_PINGPONG", "TILEC_ATTN_WALK"):
        monkeypatch.delenv(var, raising=False)
    k = _std("flash_attention_lse", "f16", 128, bn, 128)
    gk = lower_gpu(k, "sm_90a", FACTS)
    assert gk.persistent == 1
    _run_lse_and_check(k, FACTS, (ctas, 1), bh, bh, sq, sk, 128, causal, 17)
