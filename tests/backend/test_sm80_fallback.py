"""On sm_90a, a tensor-core loop the Hopper GEMM pipeline refuses (a tile of M = 16 or 32 with its padding off,
`TILEC_GEMM_PAD=0`; N over 256 with its column parts off, `TILEC_GEMM_PARTS=0`) takes the sm_80 cp.async ring (`pipeline_sm80.fallback_enabled`)
instead of mma.sync with no pipeline (`benchmarks/cliffs.py`'s skinny and 128x512 GEMMs). Run in llsim at sm_90a against NumPy, with edges;
the loops the Hopper pipeline takes are unchanged; `TILEC_SM80_FALLBACK=0` restores the old path."""

from __future__ import annotations

import pytest
from gemm_cases import GemmConfig
from test_sm80 import _facts, _kernel, _run

from tilelang.backend import explain, lower_gpu


# (htier1, the tiers in tests/README.md: the loops here reach the fallback only with `TILEC_GEMM_PAD=0` /
# `TILEC_GEMM_PARTS=0`, settings no user gets by default; the M = 16 case is the default run's, the other two
# heavy: the sm_80 ring itself, edges in M and N and several k-tiles, runs by default in test_sm80's simulations)
@pytest.mark.parametrize(("cfg", "shape"), [
    pytest.param(GemmConfig(32, 64, 32, out="f16"), (40, 70, 96), marks=pytest.mark.heavy),  # M = 32: edges in M and N, 3 k-tiles
    (GemmConfig(16, 64, 64, out="f32", trans_b=True), (20, 64, 128)),  # M = 16, B stored [N, K]
    pytest.param(GemmConfig(64, 512, 32, out="f32", warps=8), (64, 520, 64), marks=pytest.mark.heavy),  # N = 512: wider than one wgmma
])
def test_a_loop_the_hopper_pipeline_refuses_takes_the_sm80_ring_in_the_simulator(cfg: GemmConfig, shape,  # type: ignore[no-untyped-def]
                                                                                   monkeypatch) -> None:
    monkeypatch.setenv("TILEC_GEMM_PARTS", "0")  # N = 512 runs in two parts on the Hopper pipeline by default
    monkeypatch.setenv("TILEC_GEMM_PAD", "0")  # and M = 16 / 32 padded to one m64 warpgroup
    M, N, K = shape
    a, b, c = cfg.inputs(M, N, K, 3)
    gk = lower_gpu(_kernel(cfg), "sm_90a", _facts(c, a, b))
    assert explain.path_of(gk) == "sm80-pipeline"
    assert any("Hopper GEMM pipeline" in n.message for n in gk.notes)  # and the note says why not that one
    _run(cfg, M, N, K, seed=3, arch="sm_90a")


def test_the_hopper_pipeline_keeps_its_loops_and_the_switch_turns_the_fallback_off(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    cfg = GemmConfig(64, 64, 32, out="f32")
    a, b, c = cfg.inputs(64, 64, 64, 1)
    assert explain.path_of(lower_gpu(_kernel(cfg), "sm_90a", _facts(c, a, b))) == "wgmma-pipeline"
    small = GemmConfig(32, 64, 32, out="f32")
    monkeypatch.setenv("TILEC_GEMM_PAD", "0")
    monkeypatch.setenv("TILEC_SM80_FALLBACK", "0")
    assert explain.path_of(lower_gpu(_kernel(small), "sm_90a", _facts(c, a, b))) == "mma.sync"
