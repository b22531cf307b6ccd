"""The engine with every ring copy evict-first in L2 (`TILEC_L2_EVICT=1`, what
a user's `#[hints(evict_first = 1)]` does to a kernel) decodes the tokens it
decodes without the setting, in each plan that brings other ring kernels
at these shapes: the early ring attention with the LM head's ring (the H200
plan), the plain ring attention, the streamed GEMVs, the ring attention with
its merge, and the early ring attention under PDL "+loads" (the GEMVs' rings
at 4B shapes: test_evict_first_sass.py).
On the H200 the setting raised CUDA_ERROR_ILLEGAL_INSTRUCTION (ptxas 13.0's
LDGSTS encoding, `codegen/ring.py`; the machine code is checked on the CPU
in test_evict_first_sass.py). Each run's kernels are compiled afresh under
the setting (the runtime's variants key on it) and those with a ring carry
the policy."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "llm"))

import pytest
from engine import TileQwen3
from model import Qwen3Config, random_weights

import tilelang.backend

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():  # pragma: no cover - the gpu marker skips first
    pytest.skip("PyTorch has no CUDA device", allow_module_level=True)

SMALL = Qwen3Config.load("small")
HINT = "cp.async.cg.shared.global.L2::cache_hint"


def _variants(plan, sms: int) -> list[tuple[str, object, set[str]]]:  # type: ignore[no-untyped-def]
    """(name, plan, the kernels that must stream with the policy) of each run."""
    from plan import stream_plan

    ring = dataclasses.replace(plan, tc=4, short_tc=4, fma_until=12, ea=3)
    out = [
        ("early ring", ring, {"attn_decode_ring_early", "rms_gemv_argmax"}),
        ("ring", dataclasses.replace(ring, ea=0), {"attn_decode_ring"}),
        ("streamed", stream_plan(ring, ("o", "gate_up", "down"), sms), {"gemv_stream"}),
        ("merge", dataclasses.replace(ring, fm=4, ea=0), {"attn_decode_ring_merge"}),
    ]
    if torch.cuda.get_device_capability()[0] >= 9:  # PDL
        peel = {**plan.st, **dict.fromkeys(("qkv", "o", "gate_up", "down"), -1)}
        out.append(("early +loads", dataclasses.replace(ring, ea=7, pdl="late+loads", st=peel),
                    {"attn_decode_ring_early"}))
    return out


def test_evict_first_rings_decode_the_same_tokens(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    if torch.cuda.get_device_capability()[0] < 8:
        pytest.skip("L2 cache policies need sm_80")
    real = tilelang.backend.compile_kernel
    hinted: set[str] = set()

    def spy(kir, *args, **kwargs):  # type: ignore[no-untyped-def]
        ck = real(kir, *args, **kwargs)
        if HINT in ck.ptx:
            hinted.add(kir.name)
        return ck

    monkeypatch.setattr(tilelang.backend, "compile_kernel", spy)
    w = random_weights(SMALL, seed=11, backend="torch")
    eng = TileQwen3(SMALL, w, max_seq=128, backend="torch")
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for name, plan, kinds in _variants(eng.plan, sms):
        toks = {}
        for setting in ("0", "1"):
            monkeypatch.setenv("TILEC_L2_EVICT", setting)
            hinted.clear()
            eng.replan(plan)
            toks[setting] = eng.generate([5, 6, 7], 24, batched=False)
            assert not hinted if setting == "0" else kinds <= hinted, (name, setting, sorted(hinted))
        assert toks["1"] == toks["0"], name
