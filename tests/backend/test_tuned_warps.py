"""An `#[autotune(num_warps = [..])]` configuration counts as a given hint.

The backend chooses a kernel's warps where the source leaves them (the Hopper
GEMM's consumer warpgroups, sm_80's ring, `TILEC_DEFAULT_WARPS`) and keeps
them where a hint gives them; a tuner configuration must be the second kind,
also when its value equals the default (before 2026-12-06 the tuner set the
field alone, so a Hopper GEMM tuned at 8 warps compiled with one consumer
warpgroup, as at 4: the hint was accepted and ignored)."""

from __future__ import annotations

import dataclasses

from tilelang.backend import lower_gpu
from tilelang.backend.target import Target
from tilelang.ir.samples import gemm
from tilelang.tuner.space import hinted_fields


def _warps(kernel, hints):  # type: ignore[no-untyped-def]
    return lower_gpu(dataclasses.replace(kernel, **hinted_fields(kernel, hints)), Target("sm_90a"), None).num_warps


def test_a_configuration_value_equal_to_the_default_is_marked_given() -> None:
    k = gemm(128, 128, 64)
    assert k.num_warps == 4 and "num_warps" not in k.hints
    assert hinted_fields(k, {"num_warps": 4}) == {"hints": ("num_warps",)}
    assert hinted_fields(k, {"num_warps": 8}) == {"num_warps": 8, "hints": ("num_warps",)}
    marked = dataclasses.replace(k, hints=("num_warps",))
    assert hinted_fields(marked, {"num_warps": 4}) == {}  # nothing to change: the same kernel


def test_the_hopper_gemm_takes_the_configurations_consumer_warpgroups() -> None:
    k = gemm(128, 128, 64)
    # 4 warps: one consumer warpgroup + the producer's; 8: two consumers of 64 rows each (+ the producer's)
    assert _warps(k, {"num_warps": 4}) == 8
    assert _warps(k, {"num_warps": 8}) == 12
    # the same as the source hint would give
    hinted = dataclasses.replace(k, num_warps=8, hints=("num_warps",))
    assert lower_gpu(hinted, Target("sm_90a"), None).num_warps == 12
