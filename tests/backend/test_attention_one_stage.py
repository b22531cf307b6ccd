"""The attention pipeline with a K/V ring of one stage (`attention_match.match`): where two stages of K and V do
not fit in shared memory beside Q (std::attention at 128 x 256, D = 128: 2 x 64 KiB a stage, Q 32 KiB), the loop
takes the pipeline with one stage and the serial schedule instead of the generic path (0.02x SDPA on an H100,
2026-12-06). The producer then fills the stage only after the consumers release it: no overlap of copies and
products, but wgmma from shared memory and the softmax in registers. Checked in llsim against NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from llsim import SimDevice
from test_attention_pipeline import USER, _facts, _reference, _run_lse_and_check, _std

from tilelang import driver
from tilelang.backend import lower_gpu
from tilelang.backend.gpu.printer import print_gpu_kernel


def test_std_attention_at_128x256_d128_takes_the_pipeline_with_one_stage() -> None:
    k = _std("flash_attention", "f16", 128, 256, 128)
    gk = lower_gpu(k, "sm_90a", _facts("oqkv", 3))
    text = print_gpu_kernel(gk)
    assert gk.num_stages == 1 and "wgmma.rs" in text and "warp_specialize" in text
    # more where they fit (D = 64: 2 x 32 KiB a stage; the tuned 128 x 128)
    for bn, d in ((256, 64), (128, 128)):
        assert lower_gpu(_std("flash_attention", "f16", 128, bn, d), "sm_90a", _facts("oqkv", 3)).num_stages >= 3


@pytest.mark.parametrize(("ctas", "causal"), [(2, False), (1, True)])
def test_a_ring_of_one_stage_walks_every_tile_in_the_simulator(ctas: int, causal: bool, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """std::attention (the lse form) with `TILEC_ATTN_STAGES=1` at 64 x 64: each CTA walks several tiles of 3 key
    blocks through the one stage (its barriers' phases run on from block to block and tile to tile)."""
    monkeypatch.setenv("TILEC_ATTN_STAGES", "1")
    k = _std("flash_attention_lse", "f16", 64, 64, 64)
    facts = {**_facts("oqkv", 3), **_facts(["lse"], 2)}
    gk = lower_gpu(k, "sm_90a", facts)
    assert gk.num_stages == 1 and gk.persistent == 1
    _run_lse_and_check(k, facts, (ctas, 1), 2, 2, 150, 150, 64, causal, 13)


def test_a_stages_hint_of_one_runs_a_user_loop_in_the_simulator() -> None:
    src = USER.replace("kernel fn attn", "#[hints(stages = 1)]\nkernel fn attn", 1)
    k = driver.compile(src, "ir").output[0]
    gk = lower_gpu(k, "sm_90a", _facts("oqkv", 2))
    assert gk.num_stages == 1 and "wgmma.rs" in print_gpu_kernel(gk)
    rng = np.random.default_rng(6)
    s, d = 130, 64  # 3 key blocks through the one stage
    q, kk, v = (rng.standard_normal((s, d)).astype(np.float16) for _ in range(3))
    o = np.full((s, d), np.nan, np.float16)
    SimDevice("sm_90a").run(k, (-(-s // 64), 1), [o, q, kk, v, np.float32(0.125)], _facts("oqkv", 2))
    np.testing.assert_allclose(o.astype(np.float64), _reference(q, kk, v, 0.125, False)[0], atol=3e-3, rtol=1e-2)


def test_std_attention_at_128x256_d128_in_the_simulator() -> None:
    """The case itself: 2 key blocks of 256 (the last partial) through the one stage, two query tiles, one CTA."""
    k = _std("flash_attention_lse", "f16", 128, 256, 128)
    facts = {**_facts("oqkv", 3), **_facts(["lse"], 2)}
    assert lower_gpu(k, "sm_90a", facts).num_stages == 1
    _run_lse_and_check(k, facts, (1, 1), 1, 1, 200, 300, 128, False, 17)
