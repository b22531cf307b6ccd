"""Every ring copy the engine's decode step makes, marked evict-first in L2
(`TILEC_L2_EVICT=1`, `Target.l2_evict` "1", as a user's `#[hints(evict_first
= 1)]` marks a kernel's), assembles into copies ptxas 13.0 encodes right:
no `LDGSTS` with a cache policy whose shared address has a uniform-register
part (the H200 raised CUDA_ERROR_ILLEGAL_INSTRUCTION for the engine at 4B
with the setting: the LM head's ring, `rms_gemv_argmax`, had 14 of its 16
copies as `[R17+UR0], desc[UR1]`, neither register written; the streamed
GEMVs' the same). The step of Qwen3-4B's H200 plan (132 SMs, sm_90a), and the
forms that add ring kernels: the streamed GEMVs (`Plan.sk`) with the ring
attention's merge (`Plan.fm`), the early ring attention under PDL "+loads"
(`Plan.ea` 7), and ring GEMVs everywhere (ST 4). (0.6B and 8B gave the
same kernels' faults.) No GPU: the engine's
operations are built on zero arrays the CPU never touches (`np.zeros` is
lazily mapped memory), compiled, assembled and disassembled."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from ptxas_report import assemble, hinted_copy_faults, sass
from test_gemv_registers import _facts

import tilelang  # noqa: F401  (the engine's modules import it)
from tilelang.backend import compile_kernel
from tilelang.backend.target import Target, ptxas_available

pytestmark = pytest.mark.skipif(not ptxas_available(), reason="ptxas is not on PATH")

HINT = "cp.async.cg.shared.global.L2::cache_hint"
SMS = 132
# the early attention under "+loads": the tensors the QKV GEMV before it
# writes are read after its wait (the runtime finds the others early)
LATE = {"qkv", "qss"}
MATS = ("qkv", "o", "gate_up", "down", "lm")


def _engine(monkeypatch, model: str, change: dict):  # type: ignore[no-untyped-def]
    """The engine at `model`'s shapes on the CPU backend, with `change` made
    to the H200 plan; weights are unwritten zero arrays (no copies)."""
    import backends
    from engine import TileQwen3
    from model import Qwen3Config
    from plan import plan_for

    def zeros(shape) -> np.ndarray:  # type: ignore[no-untyped-def]
        return np.zeros(tuple(shape), np.float32)

    monkeypatch.setattr(backends._Numpy, "weight", lambda self, a: zeros(np.shape(a)))
    monkeypatch.setattr(backends._Numpy, "concat",
                        lambda self, ps: zeros((sum(np.shape(p)[0] for p in ps), *np.shape(ps[0])[1:])))
    monkeypatch.setattr(backends._Numpy, "stack", lambda self, ps: zeros((len(ps), *np.shape(ps[0]))))
    cfg = Qwen3Config.load(f"qwen3-{model}")
    plan = plan_for(cfg, 2048, SMS, hopper=True)
    if "sk" in change:  # (BN, BK, ST, MB): the grid is the card's SMs x MB
        change = {**change, "sk": {m: (*s, SMS * s[3]) for m, s in change["sk"].items()}}
    w = {n: np.broadcast_to(np.float32(0), s) for n, s in cfg.shapes().items()}
    return TileQwen3(cfg, w, max_seq=1088, plan=dataclasses.replace(plan, **change))


def _hinted_kernels(eng, loads: bool) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """name -> PTX of each distinct kernel of the step's forms that has a
    ring, compiled with every ring copy evict-first (sm_90a, PDL "late")."""
    tgt = Target("sm_90a", pdl=True, pdl_trigger="late", pdl_prefetch="loads" if loads else False,
                 l2_evict="1")
    out: dict[str, str] = {}
    seen: set[tuple[int, str]] = set()
    for form, ops in eng._form_ops.items():
        for i, op in enumerate(ops):
            kir = op._plan.kir
            if "stages" not in kir.hints or kir.num_stages < 2:
                continue  # no ring (`passes/stream_loads.py`)
            facts = _facts(op, early={p.name for p in kir.params} - LATE if loads else ())
            if (id(kir), repr(facts)) in seen:
                continue  # (every layer's op of a kind: the same kernel and facts, the same PTX)
            seen.add((id(kir), repr(facts)))
            ptx = compile_kernel(kir, tgt, facts).ptx
            if "cp.async.cg.shared.global" in ptx and ptx not in out.values():
                out[f"{form} step op {i} `{kir.name}`"] = ptx
    return out


CASES = [
    ("4b", {}, False, {"attn_decode_ring_early", "rms_gemv_argmax"}),
    ("4b", {"sk": {"o": (16, 256, 4, 3), "down": (16, 256, 4, 3)}, "ea": 0, "fm": 4}, False,
     {"gemv_stream", "attn_decode_ring_merge", "rms_gemv_argmax"}),
    ("4b", {"ea": 7, "pdl": "late+loads"}, True, {"attn_decode_ring_early"}),
    ("4b", {"st": dict.fromkeys(MATS, 4), "bk": dict.fromkeys(MATS, 128)}, False,
     {"rms_gemv", "rms_gate_up", "rms_gemv_argmax"}),
]


# `TILEC_L2_EVICT=1` is opt-in: the default plan's step by default; the forms that add ring kernels (each also
# an opt-in plan field) `heavy`: their copies are made and marked by the same code as the default step's (the
# ring GEMV's, the early ring attention's), which `default` checks
@pytest.mark.parametrize(("model", "change", "loads", "kinds"), [
    pytest.param(*c, id=i, marks=() if i == "default" else pytest.mark.heavy)
    for c, i in zip(CASES, ["default", "sk-fm", "ea7-loads", "ring-gemvs"], strict=True)])
def test_every_evict_first_ring_copy_is_encoded_right(monkeypatch, model: str, change: dict, loads: bool,
                                                      kinds: set[str]) -> None:
    eng = _engine(monkeypatch, model, change)
    kernels = _hinted_kernels(eng, loads)
    assert kinds <= {name.split("`")[1] for name in kernels}, sorted(kernels)
    for name, ptx in kernels.items():
        copies = ptx.count("cp.async.cg.shared.global")
        assert ptx.count(HINT) == copies, name  # every ring copy carries the policy
        code = sass(ptx)
        assert code.count("LDGSTS") >= copies // 2, name  # (a peeled loop may repeat some)
        assert hinted_copy_faults(code) == [], name
        assert assemble(ptx).max_spill_stores == 0, name  # the policy and the select cost no spill
