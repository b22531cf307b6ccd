"""`TILEC_DECODE_PLAN` (`examples/llm/plan.py`'s `PROFILES`): sm_90's decode
plan as promoted on H100s ("default") or without the forms that place the next
launch's blocks early or read its weights before its wait ("noearly": issue 17's
H200 question, heng 2026-12-07). The profile changes those fields and no other,
at every model's shapes and only on sm_90; the CPU interpreter's plan and
sm_80's are the same under both; a value it does not take is refused (E0604);
the engine decodes NumPy's greedy tokens under it; its GEMVs assemble without
spills and read nothing before their wait."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "llm"))

from engine import TileQwen3, load_kernels, plan_for
from model import Qwen3Config, random_weights
from plan import PROFILES, decode_profile
from reference import NumpyQwen3

from tilelang.env_switch import SwitchError

# what "noearly" sets on sm_90 (every other field as "default")
NOEARLY = {"pdl": "late", "ge": (), "gl": (), "me": 0}


@pytest.mark.parametrize("model", ["qwen3-0.6b", "qwen3-4b", "qwen3-8b"])
def test_noearly_changes_the_boundaries_and_nothing_else(model: str, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = Qwen3Config.load(model)
    monkeypatch.delenv("TILEC_DECODE_PLAN", raising=False)
    base = plan_for(cfg, 2048, 132, hopper=True)
    assert decode_profile() == "default" and PROFILES == ("default", "noearly")
    # the default as promoted (H100s, 2026-12-05/06): "+loads", triggers, peels
    assert base.pdl == "late+loads" and base.ge == ("o", "down") and base.gl == ("gate_up",)
    assert {m: base.st[m] for m in ("qkv", "gate_up", "down", "o")} == {"qkv": -1, "gate_up": -1, "down": -1,
                                                                      "o": 1}
    monkeypatch.setenv("TILEC_DECODE_PLAN", "noearly")
    got = plan_for(cfg, 2048, 132, hopper=True)
    want = dataclasses.replace(base, **NOEARLY, st={**base.st, "qkv": 1, "gate_up": 1, "down": 1})
    assert got == want
    assert (got.rs, got.kb, got.ea, got.tw) == (1, 1, 3, base.tw) and got.tw > 0  # the kernels' own forms kept
    # the CPU interpreter's plan and sm_80's: no PDL there, the same under both
    for sms, hopper in ((None, False), (132, False)):
        monkeypatch.setenv("TILEC_DECODE_PLAN", "noearly")
        a = plan_for(cfg, 2048, sms, hopper)
        monkeypatch.setenv("TILEC_DECODE_PLAN", "default")
        assert a == plan_for(cfg, 2048, sms, hopper)


def test_a_profile_it_does_not_take_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TILEC_DECODE_PLAN", "h200")
    with pytest.raises(SwitchError, match=r"TILEC_DECODE_PLAN='h200'.*default or noearly") as e:
        plan_for(Qwen3Config.load("qwen3-4b"), 2048, 132, hopper=True)
    assert e.value.diag.code.startswith("E0604")
    monkeypatch.setenv("TILEC_DECODE_PLAN", "")  # empty: unset
    assert decode_profile() == "default"


@pytest.mark.heavy  # ~4 s; each field alone: test_engine's test_plan_pdl_reaches_the_runtime_and_changes_no_token
def test_the_engine_decodes_numpys_tokens_under_noearly(monkeypatch: pytest.MonkeyPatch) -> None:
    # the tiny untied model with sm_90's plan for 132 SMs under the profile, on
    # the interpreter (PDL and the triggers are the GPU's; the peel and the
    # GEMVs' PE generics are code the interpreter runs): NumPy's greedy tokens
    cfg = Qwen3Config.load("tiny")
    cfg = dataclasses.replace(cfg, tie_word_embeddings=False, vocab_size=80, head_dim=8)
    monkeypatch.setenv("TILEC_DECODE_PLAN", "noearly")
    plan = plan_for(cfg, 32, 132, hopper=True)
    assert plan.pdl == "late" and not plan.ge and not plan.gl and plan.me == 0
    w = random_weights(cfg, seed=3)
    eng = TileQwen3(cfg, w, max_seq=32, plan=plan)
    pes = {(op.kernel.__name__, op.generics["PE"]) for op in eng.ops if "PE" in op.generics}
    assert all(pe == 0 for _, pe in pes), pes  # no launch triggers early
    prompt = [int(t) for t in np.random.default_rng(5).integers(0, cfg.vocab_size, 4)]
    assert eng.generate(prompt, 6, batched=False) == NumpyQwen3(cfg, w, max_seq=32).greedy(prompt, 6)


def test_noearly_gemvs_read_nothing_before_their_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    # at Qwen3-4B's shapes under the profile's PDL ("late"): each GEMV's loads
    # all follow `griddepcontrol.wait`, and ptxas spills nothing at its MB
    from ptxas_report import assemble
    from test_gemv_registers import _facts, _op

    from tilelang.backend import Target, compile_kernel
    from tilelang.backend.target import ptxas_available

    monkeypatch.setenv("TILEC_DECODE_PLAN", "noearly")
    cfg = Qwen3Config.load("qwen3-4b")
    plan = plan_for(cfg, 2048, 132, hopper=True)
    tgt = Target("sm_90a", pdl=True, pdl_trigger="late", pdl_prefetch="")
    k = load_kernels()
    for mat in ("qkv", "gate_up", "down"):
        op = _op(k, mat, cfg, plan)
        op.discard()  # built to be compiled, never run
        args = op._kernel_args(op._hosts)
        ptx = compile_kernel(op._plan.kir, tgt, _facts(op, args, {"w", "g"})).ptx
        pre, post = ptx[ptx.index(".entry"):].split("griddepcontrol.wait;")
        assert "ld.global" not in pre and "ld.global" in post, mat
        if ptxas_available():
            assert assemble(ptx, "sm_90a").max_spill_stores == 0, mat
