"""The Qwen3 engine on the GPU (torch CUDA tensors, one CUDA graph per step)
against the PyTorch reference on the same weights."""

from __future__ import annotations

import sys
from pathlib import Path

# The engine's modules live in examples/llm/.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "llm"))

import dataclasses
from collections.abc import Callable

import numpy as np
import pytest
from engine import TileQwen3, load_kernels
from model import Qwen3Config, random_weights
from reference import NumpyQwen3, TorchQwen3

import tilelang

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():  # pragma: no cover - the gpu marker skips first
    pytest.skip("PyTorch has no CUDA device", allow_module_level=True)

SMALL = Qwen3Config.load("small")
TINY_UNTIED = dataclasses.replace(Qwen3Config.load("tiny"), tie_word_embeddings=False)


def _close(a: np.ndarray, b: np.ndarray) -> None:
    np.testing.assert_allclose(a, b, rtol=0, atol=float(np.abs(b).max()) * 2**-7)


def _teacher_forced(eng: TileQwen3, w: object, seed: int, n: int) -> list[int]:
    """Feed `n` random tokens (`seed`) to `eng` and to `TorchQwen3` on the same
    weights (f32 activations); the logits agree at every step. Returns the tokens."""
    ref = TorchQwen3(SMALL, w, max_seq=128, device="cuda")
    toks = [int(t) for t in np.random.default_rng(seed).integers(0, SMALL.vocab_size, n)]
    for i, t in enumerate(toks):
        got = eng.feed(t)
        want = ref.step(torch.tensor([t], device="cuda"), torch.tensor([i], device="cuda"))
        _close(got, want.cpu().numpy())
    return toks


def _agrees_and_decodes(eng: TileQwen3, w: object, want: list[int]) -> None:
    """After a plan change: 24 teacher-forced steps agree with `TorchQwen3`, and
    40 greedy tokens from [5, 6, 7] are `want`, from the burst graph and the
    one-step graph."""
    eng.reset()
    _teacher_forced(eng, w, seed=7, n=24)
    eng.reset()
    assert eng.generate([5, 6, 7], 40, batched=False) == want
    eng.reset()
    eng.burst = 1
    assert eng.generate([5, 6, 7], 40, batched=False) == want


def test_teacher_forced_logits_match_torch_at_every_step_of_64() -> None:
    w = random_weights(SMALL, seed=0, backend="torch")
    eng = TileQwen3(SMALL, w, max_seq=128, backend="torch")
    assert eng.graph_mode
    _teacher_forced(eng, w, seed=0, n=64)


@pytest.mark.parametrize("tc", [0, 2, 3, 4])
def test_other_attention_forms_match_torch(tc: int) -> None:
    # the decode attention's FMA form (tc = 0), register stream (2),
    # short-context kernel (3, `attn_decode_short`) and shared-memory ring
    # (4, `attn_decode_ring`) in every step, then a
    # plan that switches forms at position 12 (each form's graphs made
    # together): the one-step and burst graphs agree
    w = random_weights(SMALL, seed=1, backend="torch")
    eng = TileQwen3(SMALL, w, max_seq=128, backend="torch")
    eng.replan(dataclasses.replace(eng.plan, tc=tc, fma_until=0))
    toks = _teacher_forced(eng, w, seed=1, n=24)
    assert eng._graph is not None and eng._graph.replays == len(toks)
    eng.replan(dataclasses.replace(eng.plan, tc=2, fma_until=12, short_tc=0 if tc == 2 else tc))
    eng.reset()
    a = eng.generate([5, 6, 7], 24, batched=False)
    eng.reset()
    eng.burst = 1
    assert eng.generate([5, 6, 7], 24, batched=False) == a


def test_ring_attention_decodes_the_streams_tokens() -> None:
    # the ring form (tc = 4, `attn_decode_ring`, the default's long form)
    # against the register stream (tc = 2: the same slabs
    # and arithmetic, its loads from registers instead of the ring): the
    # same greedy tokens over 40 steps
    w = random_weights(SMALL, seed=2, backend="torch")
    eng = TileQwen3(SMALL, w, max_seq=128, backend="torch")
    eng.replan(dataclasses.replace(eng.plan, tc=2, fma_until=0))
    want = eng.generate([5, 6, 7], 40, batched=False)
    eng.replan(dataclasses.replace(eng.plan, tc=4, fma_until=0, ea=0))
    assert any(op.kernel.__name__ == "attn_decode_ring" for op in eng.ops)
    eng.reset()
    assert eng.generate([5, 6, 7], 40, batched=False) == want


def test_ring_gemvs_match_torch() -> None:
    # every GEMV of the step with ST = 4: its weights streamed through a
    # shared-memory ring 3 K steps ahead (`stream_loads`), K tiles of 128 so
    # that each matrix has several steps: teacher-forced logits against
    # `TorchQwen3` at every step, and the same greedy tokens as the plan
    w = random_weights(SMALL, seed=4, backend="torch")
    eng = TileQwen3(SMALL, w, max_seq=128, backend="torch")
    want = eng.generate([5, 6, 7], 24, batched=False)
    mats = ("qkv", "o", "gate_up", "down", "lm")
    eng.replan(dataclasses.replace(eng.plan, st=dict.fromkeys(mats, 4), bk=dict.fromkeys(mats, 128)))
    assert {op.generics["ST"] for op in eng.ops if "ST" in op.generics} == {4}
    _teacher_forced(eng, w, seed=4, n=24)
    eng.reset()
    assert eng.generate([5, 6, 7], 24, batched=False) == want


@pytest.mark.parametrize(("bn_gu", "bn_down"), [(8, 4), (16, 8)])
def test_many_wave_ring_gemvs_match_torch(bn_gu: int, bn_down: int) -> None:
    # gate/up and down as the LM head streams: small row tiles (many blocks,
    # several waves at MB 3) with the weights through the cp.async ring (ST
    # 4), down at 4 rows a block: teacher-forced
    # logits against `TorchQwen3`, the plan's greedy tokens
    w = random_weights(SMALL, seed=6, backend="torch")
    eng = TileQwen3(SMALL, w, max_seq=128, backend="torch")
    want = eng.generate([5, 6, 7], 24, batched=False)
    p = eng.plan
    eng.replan(dataclasses.replace(
        p,
        bn={**p.bn, "gate_up": bn_gu, "down": bn_down},
        bk={**p.bk, "gate_up": 128, "down": 512},
        st={**p.st, "gate_up": 4, "down": 4},
        mb={**p.mb, "gate_up": 3, "down": 3},
        splitk={**p.splitk, "down": 1},  # SMALL's 256 rows would split K
    ))  # fmt: skip
    assert {(op.generics["BN"], op.generics["ST"]) for op in eng.ops if op.kernel.__name__ == "rms_gate_up"} == {(bn_gu, 4)}
    assert (bn_down, 4) in {(op.generics["BN"], op.generics["ST"]) for op in eng.ops if op.kernel.__name__ == "gemv_add"}
    _teacher_forced(eng, w, seed=6, n=24)
    eng.reset()
    assert eng.generate([5, 6, 7], 24, batched=False) == want


@pytest.mark.parametrize("mats", [("o", "down"), ("o", "gate_up", "down")])
def test_streamed_gemvs_match_torch(mats: tuple[str, ...]) -> None:
    # Plan.sk: O and down (and gate/up, into its cleared scratch, with down
    # forming silu(g) u) as persistent streams over the card's SMs x 3
    # blocks, row sums added atomically: teacher-forced logits against
    # `TorchQwen3`, the default plan's greedy tokens from both graphs
    from plan import stream_plan

    w = random_weights(SMALL, seed=8, backend="torch")
    eng = TileQwen3(SMALL, w, max_seq=128, backend="torch")
    want = eng.generate([5, 6, 7], 40, batched=False)
    eng.replan(stream_plan(eng.plan, mats, torch.cuda.get_device_properties(0).multi_processor_count))
    streams = [op for op in eng.ops if op.kernel.__name__ == "gemv_stream"]
    assert len(streams) == len(mats) * SMALL.num_hidden_layers
    _agrees_and_decodes(eng, w, want)


def test_queued_gemvs_match_torch() -> None:
    # Plan.qg: the four GEMVs of a layer on tile queues (`std::llm::queue`,
    # `plan.queue_shapes`' 4-row tiles) at MB 1: one block an SM, so QKV's
    # 256 tiles and gate/up's 192 are more than the wave's blocks and blocks
    # pull more (O and down's 64 are fewer: each block one tile):
    # teacher-forced logits against `TorchQwen3`, the default plan's greedy
    # tokens from both graphs
    from plan import queue_plan, queue_shapes

    w = random_weights(SMALL, seed=9, backend="torch")
    eng = TileQwen3(SMALL, w, max_seq=128, backend="torch")
    want = eng.generate([5, 6, 7], 40, batched=False)
    mats = ("qkv", "o", "gate_up", "down")
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    shapes = {m: (bn, bk, st, 1) for m, (bn, bk, st, _) in queue_shapes(SMALL, sms).items()}
    rows = {"qkv": (SMALL.num_attention_heads + 2 * SMALL.num_key_value_heads) * SMALL.head_dim,
            "gate_up": SMALL.intermediate_size}  # fmt: skip
    assert all(rows[m] // shapes[m][0] > sms for m in rows), (shapes, sms)
    eng.replan(queue_plan(eng.plan, mats, shapes))
    names = [op.kernel.__name__ for op in eng.ops]
    assert names.count("gemv_add_queue") == 2 * SMALL.num_hidden_layers
    assert names.count("rms_gemv_queue") == names.count("rms_gate_up_queue") == SMALL.num_hidden_layers
    _agrees_and_decodes(eng, w, want)


def test_next_weights_prefetch_matches_torch() -> None:
    # Plan.pf: every GEMV issues bulk L2 prefetches of the next matrix's first
    # columns once its loads are back (QKV -> all of W_o, O -> gate/up,
    # gate/up -> down, down -> the next layer's QKV): a hint, so the
    # teacher-forced logits match `TorchQwen3` and the greedy tokens are the plan's
    w = random_weights(SMALL, seed=6, backend="torch")
    eng = TileQwen3(SMALL, w, max_seq=128, backend="torch")
    want = eng.generate([5, 6, 7], 24, batched=False)
    pf = {"o": (8, 512), "gate_up": (16, 256, 1), "down": (8, 1024), "qkv": (16, 256, 1)}  # 1: by lines
    eng.replan(dataclasses.replace(eng.plan, pf=pf))
    assert {op.generics["PR"] for op in eng.ops if "PR" in op.generics} == {0, 8, 16}
    _teacher_forced(eng, w, seed=6, n=24)
    eng.reset()
    assert eng.generate([5, 6, 7], 24, batched=False) == want


def _pdl_plan_matches_torch(
    pdl: str, peel: tuple[str, ...], early: bool, check: Callable[[TileQwen3], None] | None = None, **fields: object
) -> None:
    """Replan the small engine with PDL `pdl`, the GEMVs in `peel` at ST -1 (their
    first K step peeled) and the plan `fields`; then `check(eng)`, teacher-forced
    logits against `TorchQwen3`, the greedy tokens of the plan without PDL, and
    (`early`) launches given early loads. sm_90+ only."""
    from tilelang.runtime import cuda_pdl

    if torch.cuda.get_device_capability()[0] < 9:
        pytest.skip("programmatic dependent launch needs sm_90")
    w = random_weights(SMALL, seed=7, backend="torch")
    eng = TileQwen3(SMALL, w, max_seq=128, backend="torch", graph_api="torch")
    old = cuda_pdl.ON
    try:
        eng.replan(dataclasses.replace(eng.plan, pdl=False))
        want = eng.generate([5, 6, 7], 24, batched=False)
        st = {**eng.plan.st, **dict.fromkeys(peel, -1)}
        eng.replan(dataclasses.replace(eng.plan, pdl=pdl, st=st, **fields))
        if check is not None:
            check(eng)
        e = cuda_pdl.EARLY
        _teacher_forced(eng, w, seed=7, n=24)
        eng.reset()
        assert eng.generate([5, 6, 7], 24, batched=False) == want
        if early:
            assert e < cuda_pdl.EARLY
    finally:
        cuda_pdl.set_pdl(old, "late", "")


def test_last_trigger_and_early_loads_match_torch() -> None:
    # PDL "last+loads" (sm_90+): each kernel triggers the next at its main
    # loop's last iteration and the peeled GEMVs (ST -1) read their first
    # weight tile before their wait (plain loads, which ptxas keeps there):
    # the next grid's blocks overlap this one's drain, yet wait for it
    # before touching what it writes
    _pdl_plan_matches_torch("last+loads", ("qkv", "o", "gate_up", "down"), early=True)


@pytest.mark.parametrize("mr", [0, 16])
def test_merge_trigger_at_entry_with_early_o_loads_matches_torch(mr: int) -> None:
    # Plan.me (sm_90+): the split merge alone (`combine_splits`, or
    # `combine_rows` with `mr`) triggers the O GEMV at its entry, and under
    # "late+loads" the O GEMV (ST -1) reads its first weight tile before its
    # wait, while the merge runs; the O GEMV still waits for the merge
    # before reading the attention's output
    def merges_trigger_at_entry(eng: TileQwen3) -> None:
        merges = [op for f in eng._form_ops.values() for op in f
                  if op.kernel.__name__ in ("combine_splits", "combine_rows")]  # fmt: skip
        assert merges and all(op.generics["PE"] == 1 for op in merges)

    _pdl_plan_matches_torch("late+loads", ("o",), early=True, check=merges_trigger_at_entry, me=1, mr=mr)


def test_gemv_entry_triggers_with_early_loads_match_torch() -> None:
    # Plan.ge (sm_90+): O, gate/up and down trigger the next launch at their
    # entry, and under "late+loads" the GEMVs after them (gate/up, down, the
    # next QKV; ST -1) read their first weight tile before their wait; each
    # still waits for the launch before it
    _pdl_plan_matches_torch("late+loads", ("qkv", "gate_up", "down"), early=False, ge=("o", "gate_up", "down"), gl=())


@pytest.mark.parametrize(("ge", "gl"), [(("o",), ("qkv", "gate_up", "down")), ((), ("qkv", "o", "gate_up", "down"))])
def test_gemv_last_iteration_triggers_match_torch(ge: tuple[str, ...], gl: tuple[str, ...]) -> None:
    # Plan.gl (sm_90+): the GEMVs named trigger the next launch at their K
    # loop's last iteration (after their wait), every GEMV peeled so that the
    # one after reads its first weight tile before its own wait
    def last_iteration(eng: TileQwen3) -> None:
        ops = [op for f in eng._form_ops.values() for op in f]
        pes = {op.generics["PE"] for op in ops if op.kernel.__name__ in ("rms_gemv", "rms_gate_up")}
        assert pes == {2}

    _pdl_plan_matches_torch("late+loads", ("qkv", "o", "gate_up", "down"), early=True, check=last_iteration,
                            ge=ge, gl=gl)


def test_noearly_profile_matches_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    # `TILEC_DECODE_PLAN=noearly` (sm_90): the engine's own plan without the
    # early boundary forms (PDL "late", no entry / last-iteration triggers,
    # the GEMVs unpeeled): teacher-forced logits against `TorchQwen3`, and
    # the greedy tokens of the plan without PDL; no launch given early loads
    from tilelang.runtime import cuda_pdl

    if torch.cuda.get_device_capability()[0] < 9:
        pytest.skip("the profile is sm_90's plan's")
    monkeypatch.setenv("TILEC_DECODE_PLAN", "noearly")
    w = random_weights(SMALL, seed=7, backend="torch")
    eng = TileQwen3(SMALL, w, max_seq=128, backend="torch", graph_api="torch")
    p = eng.plan
    assert (p.pdl, p.ge, p.gl, p.me) == ("late", (), (), 0) and min(p.st.values()) >= 1
    old = cuda_pdl.ON
    try:
        eng.replan(dataclasses.replace(p, pdl=False))
        want = eng.generate([5, 6, 7], 24, batched=False)
        eng.replan(p)
        e = cuda_pdl.EARLY
        _teacher_forced(eng, w, seed=7, n=24)
        eng.reset()
        assert eng.generate([5, 6, 7], 24, batched=False) == want
        assert e == cuda_pdl.EARLY  # nothing read before a wait
    finally:
        cuda_pdl.set_pdl(old, "late", "")


def test_short_form_key_tile_matches_torch() -> None:
    # `Plan.sbt`: the short step form's attention with key tiles twice the
    # plan's (64 at sm_90's 32): teacher-forced logits against `TorchQwen3`,
    # and the greedy tokens of the plan, from both graphs
    w = random_weights(SMALL, seed=7, backend="torch")
    eng = TileQwen3(SMALL, w, max_seq=128, backend="torch")
    want = eng.generate([5, 6, 7], 40, batched=False)
    eng.replan(dataclasses.replace(eng.plan, sbt=2 * eng.plan.bt))
    bts = {op.generics["BT"] for op in eng.ops if "BT" in op.generics}
    assert bts == {2 * eng.plan.bt}, bts
    _agrees_and_decodes(eng, w, want)


def test_attention_entry_trigger_matches_torch() -> None:
    # Plan.ge "attn" (sm_90+): the ring attention alone triggers at its entry,
    # so the merge's blocks are scheduled while it runs (the merge still waits
    # for it before reading the partials; the O GEMV after the merge as
    # before), beside the plan's O and down triggers with gate/up and QKV peeled
    def attention_triggers_at_entry(eng: TileQwen3) -> None:
        ops = [op for f in eng._form_ops.values() for op in f]
        attn = [op for op in ops if op.kernel.__name__.startswith("attn_decode_ring")]
        merges = [op for op in ops if op.kernel.__name__ == "combine_splits"]
        assert attn and merges
        assert {op.generics["PE"] for op in attn} == {1} and {op.generics["PE"] for op in merges} == {0}

    _pdl_plan_matches_torch("late+loads", ("qkv", "gate_up"), early=True, check=attention_triggers_at_entry,
                            ge=("o", "down", "attn"))


@pytest.mark.parametrize("om", [(64, 0), (32, 4)])
def test_merge_folded_into_the_o_projection_matches_torch(om: tuple[int, int]) -> None:
    # Plan.om: the split merge, the O GEMV and the residual add in one
    # launch (`merge_gemv_add`, atomics into the residual stream) in both
    # step forms: teacher-forced logits against `TorchQwen3` at every step,
    # and (atomics add in any order) the plan's greedy tokens
    w = random_weights(SMALL, seed=5, backend="torch")
    eng = TileQwen3(SMALL, w, max_seq=128, backend="torch")
    want = eng.generate([5, 6, 7], 24, batched=False)
    eng.replan(dataclasses.replace(eng.plan, om=om))
    assert sum(op.kernel.__name__ == "merge_gemv_add" for op in eng.ops) == SMALL.num_hidden_layers
    _teacher_forced(eng, w, seed=5, n=24)
    eng.reset()
    assert eng.generate([5, 6, 7], 24, batched=False) == want


@pytest.mark.parametrize(("fm", "api"), [(8, "tile"), (4, "torch")])
def test_merge_inside_the_ring_attention_matches_torch(fm: int, api: str) -> None:
    # Plan.fm: the ring attention's last block of each KV head merges the
    # head's splits (`attn_decode_ring_merge`, `if last_block(1)`), no
    # `combine_splits`; both step forms (ns and short_ns splits, the switch at
    # position 12), the one-step and burst graphs of both graph APIs (the
    # group counters of a whole graph in one buffer, reset by each launch):
    # teacher-forced logits against `TorchQwen3`, the plan's greedy tokens
    w = random_weights(SMALL, seed=7, backend="torch")
    eng = TileQwen3(SMALL, w, max_seq=128, backend="torch", graph_api=api)
    eng.replan(dataclasses.replace(eng.plan, tc=4, short_tc=4, fma_until=12))
    want = eng.generate([5, 6, 7], 40, batched=False)
    eng.replan(dataclasses.replace(eng.plan, fm=fm, ea=0))  # fm is `attn_decode_ring_merge`'s
    names = [op.kernel.__name__ for f in eng._form_ops.values() for op in f]
    assert names.count("attn_decode_ring_merge") == 2 * SMALL.num_hidden_layers and "combine_splits" not in names
    _agrees_and_decodes(eng, w, want)


@pytest.mark.parametrize(("fl", "kb", "kp", "api"), [(3, 1, 32, "tile"), (1, 0, 0, "torch"), (2, 1, 0, "torch"),
                                                     (7, 1, 0, "tile"), (11, 1, 0, "tile"), (11, 1, 0, "torch"),
                                                     (10, 0, 0, "torch")])
def test_folded_merge_matches_torch(fl: int, kb: int, kp: int, api: str) -> None:
    # Plan.fl: the split merge folded into the early ring attention in one
    # pass (`attn_decode_ring_fold`, `if last_block(1)`), in the step forms
    # whose bit is set (the switch at position 12), and Plan.kb: the key
    # ranges balanced (8-key tiles over 4 splits, 2 below position 12: past
    # 24 positions the ranges differ from cdiv's); on the GPU plan (PDL, the
    # attention's trigger before the last block's merge), the one-step and
    # burst graphs of both graph APIs: teacher-forced logits against
    # `TorchQwen3`, the greedy tokens of the plan without them (other shares
    # merge in another f32 order: a flipped near tie would show here first);
    # with Plan.kp, the QKV GEMV prefetching the layer's KV rows into L2; fl 7:
    # the folded attention with no PDL trigger (the O GEMV scheduled at its exit);
    # fl + 8: each head's last split waits for the others and merges
    # (`arrive_wait`: the others' release adds, its acquire poll), run many
    # times over (40 tokens x 2 layers x both forms) so a lost arrival would hang
    w = random_weights(SMALL, seed=7, backend="torch")
    eng = TileQwen3(SMALL, w, max_seq=128, backend="torch", graph_api=api)
    eng.replan(dataclasses.replace(eng.plan, tc=4, short_tc=4, fma_until=12, ea=3, bt=8, ns=4, short_ns=2))
    want = eng.generate([5, 6, 7], 40, batched=False)
    eng.replan(dataclasses.replace(eng.plan, fl=fl, kb=kb, kp=kp))
    folds = [op for f in eng._form_ops.values() for op in f if op.kernel.__name__ == "attn_decode_ring_fold"]
    assert len(folds) == (2 if fl & 3 == 3 else 1) * SMALL.num_hidden_layers
    assert {op.generics["EA"] for op in folds} == {3 | 8 * kb}
    assert {op.generics["AW"] for op in folds} == {int(bool(fl & 8))}
    kv = [op for f in eng._form_ops.values() for op in f if op.kernel.__name__ == "rms_gemv_kv"]
    assert len(kv) == (2 * SMALL.num_hidden_layers if kp else 0)
    _agrees_and_decodes(eng, w, want)


@pytest.mark.parametrize(("ea", "api", "pdl"), [(1, "tile", None), (3, "torch", None), (7, "torch", "late+loads"),
                                              (7, "tile", "late+loads")])
def test_early_ring_attention_matches_torch(ea: int, api: str, pdl: str | None) -> None:
    # Plan.ea: `attn_decode_ring_early` (the ring's first copies before the
    # query's norm and rotary; EA 3, the GPU plans' default, the token's rows
    # before the key loop) in both step forms (the switch at position 12),
    # under the card's PDL setting: teacher-forced logits against
    # `TorchQwen3`, the greedy tokens of `attn_decode_ring` (ea 0) from the
    # one-step and burst graphs
    w = random_weights(SMALL, seed=7, backend="torch")
    eng = TileQwen3(SMALL, w, max_seq=128, backend="torch", graph_api=api)
    eng.replan(dataclasses.replace(eng.plan, tc=4, short_tc=4, fma_until=12, ea=0))
    want = eng.generate([5, 6, 7], 40, batched=False)
    if pdl and torch.cuda.get_device_capability()[0] < 9:
        pytest.skip("programmatic dependent launch needs sm_90")
    from tilelang.runtime import cuda_pdl

    early = cuda_pdl.EARLY
    eng.replan(dataclasses.replace(eng.plan, ea=ea, **({"pdl": pdl} if pdl else {})))
    names = [op.kernel.__name__ for f in eng._form_ops.values() for op in f]
    assert names.count("attn_decode_ring_early") == 2 * SMALL.num_hidden_layers
    _agrees_and_decodes(eng, w, want)
    # EA 7 under "+loads" (`ring_split_first`): launches read tensors before
    # their wait; so does sm_90's default plan (PDL "late+loads" since h17t)
    assert (early < cuda_pdl.EARLY) == ("+loads" in str(eng.plan.pdl))


@pytest.mark.parametrize(("ea", "api"), [(3, "torch"), (0, "tile")])
def test_eight_warp_ring_attention_matches_torch(ea: int, api: str) -> None:
    # Plan.aw 8: the short form's ring attention in 8 warps
    # (`attn_decode_ring_w8`; the switch at position 12, the long form's in
    # 4), under the card's PDL setting: teacher-forced logits against
    # `TorchQwen3`, the greedy tokens of the 4-warp ring from the one-step and
    # burst graphs
    w = random_weights(SMALL, seed=7, backend="torch")
    eng = TileQwen3(SMALL, w, max_seq=128, backend="torch", graph_api=api)
    eng.replan(dataclasses.replace(eng.plan, tc=4, short_tc=4, fma_until=12, ea=ea))
    want = eng.generate([5, 6, 7], 40, batched=False)
    eng.replan(dataclasses.replace(eng.plan, aw=8))
    short = [op.kernel.__name__ for op in eng._form_ops["short"]]
    long = [op.kernel.__name__ for op in eng._form_ops["long"]]
    assert short.count("attn_decode_ring_w8") == SMALL.num_hidden_layers and "attn_decode_ring_w8" not in long
    _agrees_and_decodes(eng, w, want)


@pytest.mark.parametrize("api", ["torch", "tile"])
def test_merge_by_rows_matches_torch(api: str) -> None:
    # Plan.mr 16: the split merge as `combine_rows` (one warp a block, the
    # rows through a 16-stage cp.async ring) in both step forms (the switch
    # at position 12), under the card's PDL setting: teacher-forced logits
    # against `TorchQwen3`, the greedy tokens of `combine_splits`
    w = random_weights(SMALL, seed=7, backend="torch")
    eng = TileQwen3(SMALL, w, max_seq=128, backend="torch", graph_api=api)
    eng.replan(dataclasses.replace(eng.plan, tc=4, short_tc=4, fma_until=12))
    want = eng.generate([5, 6, 7], 40, batched=False)
    eng.replan(dataclasses.replace(eng.plan, mr=16))
    names = [op.kernel.__name__ for f in eng._form_ops.values() for op in f]
    assert names.count("combine_rows") == 2 * SMALL.num_hidden_layers and "combine_splits" not in names
    _agrees_and_decodes(eng, w, want)


def _picks_numpys_first_maximum(name: str, bc: int) -> None:
    """The token-choice kernel `name` (tile BC) on block maxima that several
    blocks hold (in one chunk, across chunks, a last chunk cut short): it
    picks NumPy's first maximum, advances the position and records the token."""
    k, P = load_kernels(), tilelang.partition
    for n in (9496, 37, 5000):
        rng = np.random.default_rng(n)
        bmax = rng.standard_normal(n).astype(np.float32)
        bmax[rng.choice(n, 3, replace=False)] = 9.0  # three blocks hold the maximum
        barg = (np.arange(n) * 16 + rng.integers(0, 16, n)).astype(np.int32)
        i32 = {"dtype": torch.int32, "device": "cuda"}
        tok, pos, hist = torch.zeros(1, **i32), torch.full((1,), 3, **i32), torch.zeros(8, **i32)
        getattr(k, name)[bc, 8](P(tok, [1]), P(pos, [1]), P(hist, [8]), torch.from_numpy(bmax).cuda(),
                                torch.from_numpy(barg).cuda()).sync()
        first = int(barg[np.argmax(bmax)])
        assert (int(tok[0]), int(pos[0]), int(hist[4])) == (first, 4, first), (name, n)


@pytest.mark.parametrize("tk", [16, 4096])
def test_folded_token_choice_decodes_the_same_tokens(tk: int) -> None:
    # Plan.tk: `argmax_fold` (the LM head's per-block maxima folded lane by
    # lane over chunks of TK) picks `argmax_step`'s tokens, in the burst and
    # one-step graphs; and on a vocabulary whose maximum several blocks hold
    # (in one chunk, across chunks, a last chunk cut short) NumPy's first one
    w = random_weights(SMALL, seed=7, backend="torch")
    eng = TileQwen3(SMALL, w, max_seq=128, backend="torch", graph_api="torch")
    eng.replan(dataclasses.replace(eng.plan, tw=0))  # `argmax_step` (sm_90's plans: `argmax_wide`)
    want = eng.generate([5, 6, 7], 40, batched=False)
    eng.replan(dataclasses.replace(eng.plan, tk=tk))
    names = [op.kernel.__name__ for f in eng._form_ops.values() for op in f]
    assert "argmax_fold" in names and "argmax_step" not in names
    _agrees_and_decodes(eng, w, want)
    _picks_numpys_first_maximum("argmax_fold", tk)


def test_wide_token_choice_decodes_the_same_tokens() -> None:
    # Plan.tw: `argmax_wide` (one block of 32 warps, all the LM head's block
    # maxima as one tile) picks `argmax_step`'s tokens in the burst and
    # one-step graphs; at 4B's 9,496 blocks (BC 16,384) and on maxima that
    # several blocks hold, NumPy's first one
    w = random_weights(SMALL, seed=7, backend="torch")
    eng = TileQwen3(SMALL, w, max_seq=128, backend="torch", graph_api="torch")
    eng.replan(dataclasses.replace(eng.plan, tw=0))  # `argmax_step` (sm_90's plans: `argmax_wide`)
    want = eng.generate([5, 6, 7], 40, batched=False)
    nb = -(-SMALL.vocab_size // eng.plan.bn["lm"])
    eng.replan(dataclasses.replace(eng.plan, tw=1 << (nb - 1).bit_length()))
    names = [op.kernel.__name__ for f in eng._form_ops.values() for op in f]
    assert "argmax_wide" in names and "argmax_step" not in names
    _agrees_and_decodes(eng, w, want)
    _picks_numpys_first_maximum("argmax_wide", 16384)


def test_greedy_tokens_match_the_references() -> None:
    w = random_weights(TINY_UNTIED, seed=3, backend="torch")
    eng = TileQwen3(TINY_UNTIED, w, max_seq=64, backend="torch")
    got = eng.generate([5, 6, 7], 24, batched=False)
    assert got == NumpyQwen3(TINY_UNTIED, w, max_seq=64).greedy([5, 6, 7], 24)


def test_pdl_decodes_the_same_tokens() -> None:
    # programmatic dependent launch (Plan.pdl, sm_90+): every kernel waits
    # for the previous grid before touching memory, so the tokens are those without it,
    # in the tile graphs and in PyTorch's; the launches carry the attribute
    from tilelang.runtime import cuda_pdl

    if torch.cuda.get_device_capability()[0] < 9:
        pytest.skip("programmatic dependent launch needs sm_90")
    w = random_weights(TINY_UNTIED, seed=3, backend="torch")
    eng = TileQwen3(TINY_UNTIED, w, max_seq=64, backend="torch")
    old = cuda_pdl.ON
    try:
        eng.replan(dataclasses.replace(eng.plan, pdl=False))
        want = eng.generate([5, 6, 7], 24, batched=False)
        got = []
        # the trigger's four places (Target.pdl_trigger), the pre-wait
        # prefetch ("+prefetch", "+bulk") and loads ("+loads": the GEMVs with
        # ST 2, then with ST -1, lead with their first weight tile), in both graph APIs
        lead = {"tile": dict.fromkeys(("qkv", "o", "gate_up", "down", "lm"), 2),
                "torch": {**eng.plan.st, **dict.fromkeys(("qkv", "o", "gate_up", "down"), -1)}}
        # (and Plan.pe: the ring attention and the merge trigger at their
        # entry, the O GEMV's first weight tile read during the attention)
        for api, trigger, pe in (("tile", "late", 0), ("torch", "late", 0), ("torch", "entry", 0),
                                 ("torch", "exit", 0), ("torch", "late+prefetch", 0), ("torch", "late+bulk", 0),
                                 ("tile", "late+loads", 0), ("torch", "late+loads", 0), ("tile", "late", 1),
                                 ("torch", "late+loads", 1), ("torch", "last", 0), ("tile", "last+loads", 0),
                                 ("torch", "last+loads", 0)):
            eng.graph_api = api
            loads = trigger.endswith("+loads")
            eng.replan(dataclasses.replace(eng.plan, pdl=trigger, pe=pe, st=lead[api] if loads else eng.plan.st))
            eng.reset()
            n, e = cuda_pdl.LAUNCHES, cuda_pdl.EARLY
            got.append(eng.generate([5, 6, 7], 24, batched=False))
            assert n < cuda_pdl.LAUNCHES and (e < cuda_pdl.EARLY) == loads
    finally:
        cuda_pdl.set_pdl(old, "late", "")
    assert got == [want] * 13


def test_graphs_captured_by_torch_decode_the_same_tokens() -> None:
    # decode(23) with burst 8: two replays of the 8-step graph, seven of the
    # one-step graph, both captured by torch.cuda.graph (graph_api="torch")
    w = random_weights(TINY_UNTIED, seed=3, backend="torch")
    eng = TileQwen3(TINY_UNTIED, w, max_seq=64, backend="torch", graph_api="torch")
    got = eng.generate([5, 6, 7], 24, batched=False)
    assert eng._burst_graph.replays == 2 and eng._graph.replays == 3 + 7
    assert got == NumpyQwen3(TINY_UNTIED, w, max_seq=64).greedy([5, 6, 7], 24)
    assert eng.position == 3 + 23


def test_batched_prefill_matches_the_reference() -> None:
    w = random_weights(SMALL, seed=2, backend="torch")
    eng = TileQwen3(SMALL, w, max_seq=256, backend="torch")
    prompt = [int(t) for t in np.random.default_rng(2).integers(0, SMALL.vocab_size, 150)]
    eng.reset()
    eng.prefill(prompt)
    ref = NumpyQwen3(SMALL, w, max_seq=256)
    for t in prompt:
        want = ref.step(t)
    got = eng.be.read(eng.logits)
    np.testing.assert_allclose(got, want, rtol=0, atol=float(np.abs(want).max()) * 2**-5)
    assert eng.position == len(prompt)


def test_device_memory_is_constant_over_10000_tokens() -> None:
    w = random_weights(TINY_UNTIED, seed=1, backend="torch")
    eng = TileQwen3(TINY_UNTIED, w, max_seq=10_050, backend="torch")
    eng.reset()
    eng.prompt([1, 2])
    eng.decode(16)  # captured and warm
    torch.cuda.synchronize()
    free0, _ = torch.cuda.mem_get_info()
    alloc0 = torch.cuda.memory_allocated()
    eng.decode(10_000)
    torch.cuda.synchronize()
    free1, _ = torch.cuda.mem_get_info()
    assert torch.cuda.memory_allocated() == alloc0
    assert free1 == free0  # nothing allocated by anyone: PyTorch, Tile or the driver
    assert eng.position == 2 + 16 + 10_000


@pytest.mark.parametrize("api", ["tile", "torch"])
def test_rotated_qkv_rows_match_torch(api: str) -> None:
    # Plan.qr: the q/k norm's weights and the rotary embedding in the QKV
    # GEMV's epilogue (`rms_gemv_rope`, 8 rows a block: 8 blocks a head of
    # 64), the ring attention and the cache append on its rows, in both step
    # forms (the switch at position 12), under the card's PDL setting:
    # teacher-forced logits against `TorchQwen3`; the one-step and burst
    # graphs decode the same tokens, and (a different rounding of the same
    # sums) the plain ring's in their first 16
    w = random_weights(SMALL, seed=7, backend="torch")
    eng = TileQwen3(SMALL, w, max_seq=128, backend="torch", graph_api=api)
    eng.replan(dataclasses.replace(eng.plan, tc=4, short_tc=4, fma_until=12, ea=0))
    plain = eng.generate([5, 6, 7], 40, batched=False)
    eng.replan(dataclasses.replace(eng.plan, qr=1))
    names = [op.kernel.__name__ for f in eng._form_ops.values() for op in f]
    assert names.count("rms_gemv_rope") == names.count("attn_decode_ring_pre") == 2 * SMALL.num_hidden_layers
    eng.reset()
    _teacher_forced(eng, w, seed=7, n=24)
    eng.reset()
    want = eng.generate([5, 6, 7], 40, batched=False)
    assert want[:16] == plain[:16]
    eng.reset()
    eng.burst = 1
    assert eng.generate([5, 6, 7], 40, batched=False) == want


def test_rotated_qkv_rows_greedy_tokens_match_numpy() -> None:
    # Plan.qr at head dim 16 (8-row blocks: two shares of a head's sum of squares)
    w = random_weights(TINY_UNTIED, seed=3, backend="torch")
    eng = TileQwen3(TINY_UNTIED, w, max_seq=64, backend="torch")
    eng.replan(dataclasses.replace(eng.plan, tc=4, short_tc=4, ea=0, qr=1))
    assert eng.plan.bn["qkv"] == 8
    got = eng.generate([5, 6, 7], 24, batched=False)
    assert got == NumpyQwen3(TINY_UNTIED, w, max_seq=64).greedy([5, 6, 7], 24)


def test_hybrid_gemvs_match_torch() -> None:
    # Plan.hy: O and down with a static bulk a row tile and the rows' last
    # columns in pieces pulled by the wave's first blocks to finish
    # (`std::llm::hybrid`, MB 1: O's 160 items and the wave's blocks, down's
    # ST 2 bulk and 2-tile pieces), every item added into x atomically:
    # teacher-forced logits against `TorchQwen3`, the default plan's greedy tokens
    from plan import hybrid_plan

    w = random_weights(SMALL, seed=11, backend="torch")
    eng = TileQwen3(SMALL, w, max_seq=128, backend="torch")
    want = eng.generate([5, 6, 7], 40, batched=False)
    shapes = {"o": (8, 128, 1, 1, 3, 32, 1), "down": (8, 256, 2, 1, 2, 64, 2)}
    eng.replan(hybrid_plan(eng.plan, ("o", "down"), shapes))
    names = [op.kernel.__name__ for op in eng.ops]
    assert names.count("gemv_add_hybrid") == 2 * SMALL.num_hidden_layers
    assert names.count("gemv_add") == 0
    _agrees_and_decodes(eng, w, want)


@pytest.mark.parametrize("dc", [0, 16])
def test_std_merge_matches_torch(dc: int) -> None:
    # Plan.mg: the split merge as `std::attention::decode_combine` (a block a
    # KV head's query rows and DC columns): teacher-forced logits against
    # `TorchQwen3`, the default plan's greedy tokens from both graphs
    w = random_weights(SMALL, seed=12, backend="torch")
    eng = TileQwen3(SMALL, w, max_seq=128, backend="torch")
    want = eng.generate([5, 6, 7], 40, batched=False)
    eng.replan(dataclasses.replace(eng.plan, mg=1, dc=dc))
    assert [op.kernel.__name__ for op in eng.ops].count("decode_combine") == SMALL.num_hidden_layers
    _agrees_and_decodes(eng, w, want)


def test_one_carveout_decodes_the_same_tokens() -> None:
    # Plan.cv: every decode kernel under one preferred carveout (its own
    # copy of the module); with and without PDL, in both graph APIs, the
    # tokens are those without it, and the kernels loaded without it keep theirs
    from tilelang.runtime import occupancy

    w = random_weights(TINY_UNTIED, seed=3, backend="torch")
    eng = TileQwen3(TINY_UNTIED, w, max_seq=64, backend="torch")
    eng.replan(dataclasses.replace(eng.plan, cv=None))
    want = eng.generate([5, 6, 7], 24, batched=False)
    pdls = ("late", False) if torch.cuda.get_device_capability()[0] >= 9 else (False,)
    for api in ("tile", "torch"):
        for pdl in pdls:
            for cv in (100, None):
                eng.graph_api = api
                eng.replan(dataclasses.replace(eng.plan, cv=cv, pdl=pdl))
                eng.reset()
                assert eng.generate([5, 6, 7], 24, batched=False) == want, (api, pdl, cv)
    assert occupancy.CARVEOUT is None
    # each kernel loaded under it is a module of its own beside the one without it
    from tilelang.runtime.cuda import context

    mods = context()._modules
    pairs = [(mods.get(k[: -len("+cv100")]), m) for k, m in mods.items() if k.endswith("+cv100")]
    assert len(pairs) >= 5 and all(a is not None and a is not b and a.handle != b.handle for a, b in pairs)


def test_rows_gemvs_with_x_in_registers_match_torch() -> None:
    # Plan.xr (std::llm::rows, issue 17): O, gate/up and down with the vector
    # in registers across a block's queued row tiles (ROWS_SHAPES), in both
    # graphs: teacher-forced logits against `TorchQwen3` at every step, and
    # the default plan's greedy tokens
    from plan import rows_plan

    w = random_weights(SMALL, seed=6, backend="torch")
    eng = TileQwen3(SMALL, w, max_seq=128, backend="torch")
    want = eng.generate([5, 6, 7], 40, batched=False)
    eng.replan(rows_plan(eng.plan, ("o", "gate_up", "down")))
    names = [op.kernel.__name__ for op in eng.ops]
    assert names.count("gemv_rows_add") == 2 * SMALL.num_hidden_layers
    assert names.count("rms_gate_up_rows") == SMALL.num_hidden_layers
    _agrees_and_decodes(eng, w, want)


def test_rows_gemvs_on_the_static_walk_match_torch() -> None:
    # Plan.xr (R, MB, 1): the same GEMVs with their row tiles dealt by the
    # static walk `for s in tiles(0)` (h17s): no atomic, no counter
    from plan import rows_plan

    w = random_weights(SMALL, seed=7, backend="torch")
    eng = TileQwen3(SMALL, w, max_seq=128, backend="torch")
    want = eng.generate([5, 6, 7], 40, batched=False)
    eng.replan(rows_plan(eng.plan, ("o", "gate_up", "down"), {"o": (8, 1, 2), "gate_up": (8, 2, 1), "down": (2, 1, 2)}))
    names = [op.kernel.__name__ for op in eng.ops]
    assert names.count("gemv_rows_add_walk") == 2 * SMALL.num_hidden_layers
    assert names.count("rms_gate_up_rows_walk") == SMALL.num_hidden_layers
    _agrees_and_decodes(eng, w, want)
