"""The Qwen3 engine (`examples/llm/`) on the CPU interpreter against the NumPy
reference, the checkpoint loader, the sampler, and (with PyTorch) the torch
reference. GPU runs are in `test_engine_gpu.py`."""

from __future__ import annotations

import sys
from pathlib import Path

# The engine's modules live in examples/llm/.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "llm"))

import dataclasses
import json

import numpy as np
import pytest
from engine import TileQwen3, load_kernels, plan_for
from model import (
    PRESETS,
    Qwen3Config,
    load_safetensors,
    random_weights,
    round_bf16,
    save_safetensors,
)
from reference import NumpyQwen3, draw, nucleus_reference, sample_reference, uniform

import tilelang

TINY = Qwen3Config.load("tiny")
# Untied, so greedy decoding does not just repeat its input (with random tied
# weights the token's own embedding dominates its logits).
UNTIED = dataclasses.replace(TINY, tie_word_embeddings=False, vocab_size=80, head_dim=8)


def _tokens(n: int, vocab: int, seed: int = 1) -> list[int]:
    return [int(t) for t in np.random.default_rng(seed).integers(0, vocab, n)]


def _close(a: np.ndarray, b: np.ndarray) -> None:
    # bf16 tolerance relative to the logits' scale: the engine's attention
    # takes q and the softmax weights in bf16 (the cache's type), the
    # reference keeps them in f32.
    scale = float(np.abs(b).max())
    np.testing.assert_allclose(a, b, rtol=0, atol=scale * 2**-8)


@pytest.fixture(scope="module")
def tiny() -> tuple[dict, TileQwen3]:
    w = random_weights(TINY, seed=0)
    return w, TileQwen3(TINY, w, max_seq=64)


def test_teacher_forced_logits_agree_at_every_step_of_64(tiny) -> None:
    w, eng = tiny
    eng.reset()
    ref = NumpyQwen3(TINY, w, max_seq=64)
    worst = 0.0
    for i, t in enumerate(_tokens(64, TINY.vocab_size)[:63]):
        a, b = eng.feed(t), ref.step(t)
        _close(a, b)
        worst = max(worst, float(np.abs(a - b).max() / np.abs(b).max()))
        assert eng.position == i + 1
        assert int(eng.be.read(eng.tok)[0]) == int(np.argmax(a))  # the greedy pick, on device
    assert worst < 2**-8


def test_greedy_tokens_agree() -> None:
    w = random_weights(UNTIED, seed=3)
    eng = TileQwen3(UNTIED, w, max_seq=32)
    prompt = _tokens(4, UNTIED.vocab_size, seed=5)
    got = eng.generate(prompt, 12)
    want = NumpyQwen3(UNTIED, w, max_seq=32).greedy(prompt, 12)
    assert got == want
    assert len(set(got)) > 1  # a real sequence, not one token repeated
    # A second sequence on the same engine starts over at position 0.
    assert eng.generate(prompt, 12) == want


@pytest.mark.parametrize(("n", "bc"), [(37, 8), (64, 16), (5, 8), (9, 2)])
def test_folded_token_choice_picks_the_first_maximum(n: int, bc: int) -> None:
    # Plan.tk: `argmax_fold` (the per-block maxima folded lane by lane over
    # chunks of BC) picks `argmax_step`'s token, NumPy's first maximum: ties
    # inside a chunk, across chunks and lanes, a last chunk cut short
    k = load_kernels()
    rng = np.random.default_rng(n)
    bmax = rng.standard_normal(n).astype(np.float32)
    top = rng.choice(n, 3, replace=False)
    bmax[top] = bmax.max() + 1.0  # three blocks hold the maximum
    barg = (np.arange(n) * 4 + rng.integers(0, 4, n)).astype(np.int32)
    P = tilelang.partition
    for kern in (k.argmax_fold, k.argmax_step):
        tok, pos, hist = np.zeros(1, np.int32), np.array([3], np.int32), np.zeros(8, np.int32)
        kern[bc, 8](P(tok, [1]), P(pos, [1]), P(hist, [8]), bmax, barg).sync()
        want = int(barg[np.argmax(bmax)])
        assert (int(tok[0]), int(pos[0]), int(hist[4])) == (want, 4, want), kern.__name__
    # Plan.tw: `argmax_wide`, all the maxima as one tile (BC >= n), the same pick;
    # a BC short of them is refused before the launch (E0513), never a pick among the first BC
    wide = 1 << (n - 1).bit_length()
    tok, pos, hist = np.zeros(1, np.int32), np.array([3], np.int32), np.zeros(8, np.int32)
    k.argmax_wide[wide, 8](P(tok, [1]), P(pos, [1]), P(hist, [8]), bmax, barg).sync()
    assert (int(tok[0]), int(pos[0]), int(hist[4])) == (want, 4, want)
    with pytest.raises(tilelang.TileError, match="E0513.*BC >= their count"):
        k.argmax_wide[wide // 2, 8](P(tok, [1]), P(pos, [1]), P(hist, [8]), bmax, barg).sync()


def test_plan_pdl_reaches_the_runtime_and_changes_no_token(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # Plan.pdl is the runtime's programmatic dependent launch setting while
    # the engine launches (fresh kernels when it changes: their launch plans
    # are made under it), the process's own around it; the CPU interpreter
    # runs the same steps, so the tokens cannot change
    import engine as engine_mod

    from tilelang.runtime import cuda_pdl

    seen: list[str] = []
    real = engine_mod.TileQwen3._run_step.__wrapped__

    def probe(self, position=None):  # type: ignore[no-untyped-def]
        seen.append(cuda_pdl.mode())
        return real(self, position)

    monkeypatch.setattr(engine_mod.TileQwen3, "_run_step", engine_mod._with_pdl(probe))
    old = cuda_pdl.set_pdl(False)
    try:
        w = random_weights(UNTIED, seed=3)
        eng = TileQwen3(UNTIED, w, max_seq=32)
        assert eng.plan.pdl is False  # the CPU plan; sm_90's is "late"
        prompt = _tokens(4, UNTIED.vocab_size, seed=5)
        want = eng.generate(prompt, 6, batched=False)
        assert set(seen) == {""}
        k0 = eng.k
        eng.replan(dataclasses.replace(eng.plan, pdl=True))
        assert eng.k is not k0
        seen.clear()
        # (the PDL settings' runs generate 2 tokens, greedy: `want`'s first two; the interpreter ignores the
        # setting, so what they check is which mode each step ran under, the same at 2 tokens as at 6; the Plan.pe
        # and qe runs below keep 6, crossing their 8-key tile)
        assert eng.generate(prompt, 2, batched=False) == want[:2]
        assert set(seen) == {"late"} and not cuda_pdl.ON  # on inside the engine only
        k1 = eng.k
        eng.replan(dataclasses.replace(eng.plan, bt=eng.plan.bt))  # same setting: same kernels
        assert eng.k is k1
        for mode in ("exit", "late+prefetch", "late+bulk"):  # another setting: kernels again
            eng.replan(dataclasses.replace(eng.plan, pdl=mode))
            assert eng.k is not k1
            k1 = eng.k
            seen.clear()
            assert eng.generate(prompt, 2, batched=False) == want[:2]
            assert set(seen) == {mode} and cuda_pdl.mode() == ""
        # Plan.pe: the ring attention and its merge with `pdl_early` (ignored
        # by the interpreter): the same tokens
        eng.replan(dataclasses.replace(eng.plan, tc=4, bt=8, fma_until=0, pe=1))
        pes = {op.kernel.__name__: op.generics["PE"] for op in eng.ops if "PE" in op.generics}
        assert pes == {"attn_decode_ring": 1, "combine_splits": 1, "rms_gemv": 0, "gemv_add": 0,
                       "rms_gate_up": 0}
        assert eng.generate(prompt, 6, batched=False) == want
        # Plan.qe: the QKV GEMV with `pdl_early` (the attention scheduled from its entry)
        eng.replan(dataclasses.replace(eng.plan, pe=0, qe=1, ea=7))
        pes = {op.kernel.__name__: op.generics["PE"] for op in eng.ops if "PE" in op.generics}
        assert pes == {"attn_decode_ring_early": 0, "combine_splits": 0, "rms_gemv": 1, "gemv_add": 0,
                       "rms_gate_up": 0}
        # Plan.me / Plan.ge: the merge alone, and the GEMVs named, with `pdl_early`
        eng.replan(dataclasses.replace(eng.plan, qe=0, me=1, ge=("gate_up",)))
        pes = {op.kernel.__name__: op.generics["PE"] for op in eng.ops if "PE" in op.generics}
        assert pes == {"attn_decode_ring_early": 0, "combine_splits": 1, "rms_gemv": 0, "gemv_add": 0,
                       "rms_gate_up": 1}
        assert eng.generate(prompt, 6, batched=False) == want
        # "attn" in Plan.ge: the ring attention alone (its merge at its usual place)
        eng.replan(dataclasses.replace(eng.plan, me=0, ge=("attn", "o")))
        pes = {(op.kernel.__name__, op.generics["PE"]) for op in eng.ops if "PE" in op.generics}
        assert pes == {("attn_decode_ring_early", 1), ("combine_splits", 0), ("rms_gemv", 0), ("gemv_add", 0),
                       ("gemv_add", 1), ("rms_gate_up", 0)}
        assert eng.generate(prompt, 6, batched=False) == want
        for bad in (("atn",), "o"):  # a misspelt launch, a string for a tuple: said, not ignored
            with pytest.raises(ValueError, match="Plan.ge names launches"):
                eng.replan(dataclasses.replace(eng.plan, ge=bad))
        assert eng.generate(prompt, 6, batched=False) == want
        # Plan.gl: the GEMVs named trigger at their K loop's last iteration (PE 2)
        eng.replan(dataclasses.replace(eng.plan, ge=("o",), gl=("gate_up", "down", "qkv")))
        pes = {(op.kernel.__name__, op.generics["PE"]) for op in eng.ops if "PE" in op.generics}
        assert pes == {("attn_decode_ring_early", 0), ("combine_splits", 0), ("rms_gemv", 2), ("gemv_add", 1),
                       ("gemv_add", 2), ("rms_gate_up", 2)}
        assert eng.generate(prompt, 6, batched=False) == want
        for bad, msg in ((("attn",), "Plan.gl names launches"), (("o",), "both name \\['o'\\]")):
            with pytest.raises(ValueError, match=msg):
                eng.replan(dataclasses.replace(eng.plan, gl=bad))
        with pytest.raises(ValueError, match="both name \\['qkv'\\]"):  # qe is QKV's entry trigger
            eng.replan(dataclasses.replace(eng.plan, ge=(), qe=1, gl=("qkv",)))
        assert eng.generate(prompt, 6, batched=False) == want
        eng.replan(dataclasses.replace(eng.plan, gl=()))
        eng.replan(dataclasses.replace(eng.plan, pdl=False))
        assert eng.k is not k1
        with pytest.raises(ValueError, match="unknown PDL prefetch `load`"):  # never silently "late"
            eng.replan(dataclasses.replace(eng.plan, pdl="late+load"))
    finally:
        cuda_pdl.set_pdl(old, "late", "")


def test_plan_cv_reaches_the_runtime_and_changes_no_token(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # Plan.cv is the runtime's uniform shared-memory carveout while the engine
    # runs its decode steps (fresh kernels when it changes: the API's launch
    # plans are made under it), the process's own around it; a value the
    # runtime does not take is refused when the plan is made
    import engine as engine_mod

    from tilelang.runtime import occupancy

    seen: list[int | None] = []
    real = engine_mod.TileQwen3._run_step.__wrapped__

    def probe(self, position=None):  # type: ignore[no-untyped-def]
        seen.append(occupancy.CARVEOUT)
        return real(self, position)

    monkeypatch.setattr(engine_mod.TileQwen3, "_run_step", engine_mod._with_pdl(probe))
    old = occupancy.set_carveout(None)
    try:
        w = random_weights(UNTIED, seed=3)
        eng = TileQwen3(UNTIED, w, max_seq=32)
        assert eng.plan.cv is None  # the default: each kernel its own
        prompt = _tokens(4, UNTIED.vocab_size, seed=5)
        want = eng.generate(prompt, 6, batched=False)
        assert set(seen) == {None}
        k0 = eng.k
        for cv in (100, 60):
            eng.replan(dataclasses.replace(eng.plan, cv=cv))
            assert eng.k is not k0
            k0 = eng.k
            seen.clear()
            assert eng.generate(prompt, 6, batched=False) == want
            assert set(seen) == {cv} and occupancy.CARVEOUT is None  # set inside the engine only
            with eng.launch_scope():
                assert cv == occupancy.CARVEOUT
        eng.replan(dataclasses.replace(eng.plan, bt=eng.plan.bt))  # same setting: same kernels
        assert eng.k is k0
        for bad in (101, "full"):
            with pytest.raises(ValueError, match=r"percent 0\.\.100"):
                eng.replan(dataclasses.replace(eng.plan, cv=bad))
    finally:
        occupancy.set_carveout(old)


def test_split_k_and_other_block_shapes_agree(tiny) -> None:
    w, _ = tiny
    base = plan_for(TINY, 64, None)
    plan = dataclasses.replace(
        base,
        bn=dict.fromkeys(base.bn, 4),
        splitk={"o": 2, "down": 4},
        ns=4,
        bt=4,
        ch=16,
        bh=16,
        bc=8,
        bk=dict.fromkeys(base.bk, 32),
        st=dict.fromkeys(base.st, 2),  # the next K step's tile in flight
        dc=TINY.head_dim // 4,  # the merge in 4 chunks a head
        me=1,  # the merge's PDL trigger at its entry (a generic; the CPU runs the same)
        tk=2,  # the token choice folded over chunks of 2 of the LM head's blocks (`argmax_fold`)
    )
    eng = TileQwen3(TINY, w, max_seq=64, plan=plan)
    assert any(op.kernel.decl.name.name == "gemv_splitk" for op in eng.ops)
    merges = [op for op in eng.ops if op.kernel.__name__ == "combine_splits"]
    assert {(op.generics["D"], op.generics["PE"]) for op in merges} == {(TINY.head_dim // 4, 1)}
    assert "argmax_fold" in [op.kernel.__name__ for op in eng.ops]
    ref = NumpyQwen3(TINY, w, max_seq=64)
    for t in _tokens(20, TINY.vocab_size, seed=2):
        logits = eng.feed(t)
        _close(logits, ref.step(t))
        assert int(eng.be.read(eng.tok)[0]) == int(np.argmax(logits))  # the folded greedy pick


def test_next_weights_prefetch_changes_no_value(tiny) -> None:
    # Plan.pf: each GEMV prefetches the next matrix's first columns into L2
    # (`prefetch_next`, a hint: nothing on the CPU). The launches carry the
    # tiles: QKV -> the O matrix, O -> gate/up, gate/up -> down, down -> the
    # next layer's QKV (none after the last layer); the logits are unchanged
    w, _ = tiny
    c = TINY
    pf = {"o": (4, 32), "gate_up": (8, 16, 1), "down": (4, 32), "qkv": (8, 16)}
    eng = TileQwen3(c, w, max_seq=64, plan=dataclasses.replace(plan_for(c, 64, None), pf=pf))
    gemvs = [op for op in eng.ops if op.kernel.__name__ in ("rms_gemv", "gemv_add", "rms_gate_up")]
    assert len(gemvs) == 4 * c.num_hidden_layers
    rows = {"o": c.hidden_size, "gate_up": 2 * c.intermediate_size, "down": c.hidden_size,
            "qkv": (c.num_attention_heads + 2 * c.num_key_value_heads) * c.head_dim}
    order = ["o", "gate_up", "down", "qkv"]
    for i, op in enumerate(gemvs):
        li, then = i // 4 + (i % 4 == 3), order[i % 4]
        pr, pc, *pl = pf[then]
        assert (op.generics["PR"], op.generics["PC"], op.generics["PL"]) == (
            (pr, pc, pl[0] if pl else 0) if li < c.num_hidden_layers else (0, 0, 0))
        nt, nn = op._scalars[-2:]
        if li < c.num_hidden_layers:
            assert (nt, nn) == (li * rows[then] // pr, rows[then] // pr), (i, then)
        else:
            assert nn == 0
    ref = NumpyQwen3(c, w, max_seq=64)
    for t in _tokens(12, c.vocab_size, seed=8):
        _close(eng.feed(t), ref.step(t))


# (heavy: the long form alone; Plan.om is opt-in, and True runs the same launch in both forms)
@pytest.mark.parametrize("short", [pytest.param(False, marks=pytest.mark.heavy), True])
def test_merge_folded_into_the_o_projection_agrees(tiny, short: bool) -> None:
    # Plan.om: `merge_gemv_add` (the split merge, the O GEMV and the residual
    # add by atomics, one launch a layer) instead of `combine_splits` and
    # `gemv_add`, in both step forms (4 splits, or 2 below position 6)
    w, _ = tiny
    plan = dataclasses.replace(plan_for(TINY, 64, None), ns=4, bt=4, om=(4, 0),
                               **({"tc": 2, "short_tc": 0, "short_ns": 2, "fma_until": 6} if short else {}))
    eng = TileQwen3(TINY, w, max_seq=64, plan=plan)
    names = [op.kernel.__name__ for ops in eng._form_ops.values() for op in ops]
    assert "combine_splits" not in names
    assert names.count("merge_gemv_add") == TINY.num_hidden_layers * (2 if short else 1)
    ref = NumpyQwen3(TINY, w, max_seq=64)
    for t in _tokens(12, TINY.vocab_size, seed=7):
        _close(eng.feed(t), ref.step(t))


# (heavy: 2-0, one form with a ring of 2; Plan.mr is opt-in, and 4-3 runs `combine_rows` in both forms)
@pytest.mark.parametrize(("mr", "short"), [(4, 3), pytest.param(2, 0, marks=pytest.mark.heavy)])
def test_merge_by_rows_agrees(tiny, mr: int, short: int) -> None:
    # Plan.mr: `combine_rows` (one warp folding the splits a row at a time,
    # a ring of MR stages) instead of `combine_splits`, in both step forms
    # (the ring attention's 4 splits, or `short` below position 8: 3, a
    # split count no power of two, as `short_ns` 17 at 4B would take)
    w, _ = tiny
    # (with `Plan.me` at 3 splits: the merge's PDL trigger at its entry, a
    # generic the CPU runs the same)
    me = int(short == 3)
    plan = dataclasses.replace(plan_for(TINY, 64, None), tc=4, bt=8, ns=4, mr=mr, me=me,
                               **({"short_tc": 4, "short_ns": short, "fma_until": 8} if short else {"fma_until": 0}))
    eng = TileQwen3(TINY, w, max_seq=64, plan=plan)
    names = [op.kernel.__name__ for ops in eng._form_ops.values() for op in ops]
    assert "combine_splits" not in names
    assert names.count("combine_rows") == TINY.num_hidden_layers * (2 if short else 1)
    assert {op.generics["PE"] for ops in eng._form_ops.values() for op in ops
            if op.kernel.__name__ == "combine_rows"} == {me}  # fmt: skip
    ref = NumpyQwen3(TINY, w, max_seq=64)
    for t in _tokens(21, TINY.vocab_size, seed=5):
        _close(eng.feed(t), ref.step(t))


@pytest.mark.parametrize("tc", [0, 2])
def test_other_attention_forms_agree(tiny, tc: int) -> None:
    # tc = 0: the decode attention's products as FMA loops (G rows alone),
    # 2: std::attention's register stream (the default plan's is 1 on the CPU)
    w, _ = tiny
    plan = dataclasses.replace(plan_for(TINY, 64, None), tc=tc)
    eng = TileQwen3(TINY, w, max_seq=64, plan=plan)
    assert {op.generics["TC"] for op in eng.ops if op.kernel.__name__ == "attn_decode"} == {tc}
    ref = NumpyQwen3(TINY, w, max_seq=64)
    for t in _tokens(12, TINY.vocab_size, seed=4):
        _close(eng.feed(t), ref.step(t))


def test_ring_attention_form_agrees(tiny) -> None:
    # tc = 4: `attn_decode_ring` (the register stream's slabs through a
    # shared-memory ring, `stages = 4`), here in the interpreter: the plan's
    # field selects it in every step, and it decodes as NumPy does. Key tile
    # 8 (2 keys a warp) and 2 splits: over 21 positions the last block is partial
    w, _ = tiny
    plan = dataclasses.replace(plan_for(TINY, 64, None), tc=4, bt=8, ns=2, fma_until=0)
    eng = TileQwen3(TINY, w, max_seq=64, plan=plan)
    names = [op.kernel.__name__ for op in eng.ops if op.kernel.__name__.startswith("attn")]
    assert names == ["attn_decode_ring"] * TINY.num_hidden_layers
    ref = NumpyQwen3(TINY, w, max_seq=64)
    for t in _tokens(21, TINY.vocab_size, seed=6):
        _close(eng.feed(t), ref.step(t))


# (heavy: the long form alone, in two merge steps or one; Plan.fm is opt-in, and 2-True runs the long form's
# two steps of 2 shares and the short form's one)
@pytest.mark.parametrize(("nc", "short"), [pytest.param(2, False, marks=pytest.mark.heavy),
                                           pytest.param(4, False, marks=pytest.mark.heavy), (2, True)])
def test_merge_inside_the_ring_attention_agrees(tiny, nc: int, short: bool) -> None:
    # Plan.fm: `attn_decode_ring_merge` (the ring attention whose block of a
    # KV head arriving last merges the head's splits, NC a step) and no
    # `combine_splits`, in the long form (4 splits: two merge steps, or one)
    # and with a short form of 2 splits below position 8 (NC clamped to 2);
    # over 21 positions the last key block is partial and early splits are empty
    w, _ = tiny
    plan = dataclasses.replace(plan_for(TINY, 64, None), tc=4, bt=8, ns=4, fm=nc,
                               **({"short_tc": 4, "short_ns": 2, "fma_until": 8} if short else {"fma_until": 0}))
    eng = TileQwen3(TINY, w, max_seq=64, plan=plan)
    ops = [op for f in eng._form_ops.values() for op in f]
    names = [op.kernel.__name__ for op in ops]
    assert "combine_splits" not in names
    merges = [op.generics for op in ops if op.kernel.__name__ == "attn_decode_ring_merge"]
    assert len(merges) == TINY.num_hidden_layers * (2 if short else 1)
    assert {(m["NS"], m["NC"]) for m in merges} == ({(4, 2), (2, 2)} if short else {(4, nc)})
    ref = NumpyQwen3(TINY, w, max_seq=64)
    for t in _tokens(21, TINY.vocab_size, seed=9):
        _close(eng.feed(t), ref.step(t))


# (heavy: EA 1, the query's loads early and the token's rows where EA 0 loads them; EA 3 runs the early
# query, test_ring_attention_form_agrees EA 0's rows)
@pytest.mark.parametrize("ea", [pytest.param(1, marks=pytest.mark.heavy), 3, 7])
def test_early_ring_attention_agrees(tiny, ea: int) -> None:
    # Plan.ea: `attn_decode_ring_early` (the ring's first copies before the
    # query's norm and rotary; EA 3 the token's rows before the key loop) in
    # both step forms (4 splits, 2 below position 8), decoding as NumPy does
    w, _ = tiny
    plan = dataclasses.replace(plan_for(TINY, 64, None), tc=4, bt=8, ns=4, ea=ea, short_tc=4, short_ns=2,
                               fma_until=8)
    eng = TileQwen3(TINY, w, max_seq=64, plan=plan)
    names = [op.kernel.__name__ for f in eng._form_ops.values() for op in f]
    assert names.count("attn_decode_ring_early") == 2 * TINY.num_hidden_layers
    assert "attn_decode_ring" not in names
    ref = NumpyQwen3(TINY, w, max_seq=64)
    for t in _tokens(21, TINY.vocab_size, seed=12):
        _close(eng.feed(t), ref.step(t))


# (heavy: EA 0; Plan.aw 8 is off by default: EA 3 runs its 8 warps' loop, test_ring_attention_form_agrees
# the long form's `attn_decode_ring`)
@pytest.mark.parametrize("ea", [pytest.param(0, marks=pytest.mark.heavy), 3])
def test_eight_warp_ring_attention_agrees(tiny, ea: int) -> None:
    # Plan.aw 8: the short form's ring attention in 8 warps
    # (`attn_decode_ring_w8`, a slab of bt / 8 = 2 keys a warp), the long
    # form's in 4 (`attn_decode_ring_early` / `attn_decode_ring`); both forms
    # (4 splits, 2 below position 8) decode as NumPy does
    w, _ = tiny
    plan = dataclasses.replace(plan_for(TINY, 64, None), tc=4, bt=16, ns=4, ea=ea, aw=8, short_tc=4, short_ns=2,
                               fma_until=8)
    eng = TileQwen3(TINY, w, max_seq=64, plan=plan)
    short = [op.kernel.__name__ for op in eng._form_ops["short"]]
    long = [op.kernel.__name__ for op in eng._form_ops["long"]]
    assert short.count("attn_decode_ring_w8") == TINY.num_hidden_layers
    assert long.count("attn_decode_ring_early" if ea else "attn_decode_ring") == TINY.num_hidden_layers
    assert "attn_decode_ring_w8" not in long
    ref = NumpyQwen3(TINY, w, max_seq=64)
    for t in _tokens(21, TINY.vocab_size, seed=13):
        _close(eng.feed(t), ref.step(t))


@pytest.mark.parametrize(("fields", "words"), [
    ({"aw": 4}, "must be 0 or 8"),
    ({"aw": 8, "ea": 7}, "needs fm 0"),
    ({"aw": 8, "bt": 4}, "bt a multiple of 8"),
    ({"aw": 8, "sbt": 4}, "bt a multiple of 8"),
    ({"mr": 4, "pe": 1}, "no early trigger"),
    ({"mr": 4, "mg": 1}, "no other merge form"),
    ({"fm": 3}, "power of two"),
    ({"fm": 2, "tc": 1}, "no step form has tc = 4"),
    ({"fm": 2, "om": (4, 0)}, "choose one"),
    ({"ea": 2}, "must be 0, 1, 3 or 7"),
    ({"ea": 1, "fm": 2}, "choose one"),
])
def test_merge_inside_the_attention_refuses_plans_it_cannot_run(tiny, fields: dict, words: str) -> None:
    w, _ = tiny
    plan = dataclasses.replace(plan_for(TINY, 64, None), **{"tc": 4, "bt": 8, "ns": 4, "fma_until": 0, **fields})
    with pytest.raises(ValueError, match=words):
        TileQwen3(TINY, w, max_seq=64, plan=plan)


def test_wide_token_choice_agrees(tiny) -> None:
    # Plan.tw: the greedy pick as `argmax_wide` (all the LM head's block
    # maxima as one tile): the logits' first maximum at every step; a tile
    # short of the maxima, one not a power of two, or with Plan.tk, refused
    w, _ = tiny
    base = plan_for(TINY, 64, None)
    nb = -(-TINY.vocab_size // base.bn["lm"])
    tw = 1 << (nb - 1).bit_length()
    eng = TileQwen3(TINY, w, max_seq=64, plan=dataclasses.replace(base, tw=tw))
    assert "argmax_wide" in [op.kernel.__name__ for op in eng.ops]
    for t in _tokens(6, TINY.vocab_size, seed=4):
        logits = eng.feed(t)
        assert int(eng.be.read(eng.tok)[0]) == int(np.argmax(logits))
    for bad in ({"tw": tw // 2}, {"tw": tw + 1}, {"tw": tw, "tk": 2}):
        with pytest.raises(ValueError, match="Plan.tw"):
            TileQwen3(TINY, w, max_seq=64, plan=dataclasses.replace(base, **bad))


def test_a_refused_replan_leaves_the_previous_plan(tiny) -> None:
    # the refusal comes once the new plan's buffers are made: the engine goes
    # back to its plan (it kept the refused one beside the old step's
    # launches, and the next `generate` decoded garbage)
    w, eng = tiny
    eng.reset()
    before = eng.plan
    want = eng.generate([1, 2, 3], 4, batched=False)
    with pytest.raises(ValueError, match="Plan.aw must be 0 or 8"):
        eng.replan(dataclasses.replace(before, aw=3))
    assert eng.plan is before
    eng.reset()
    assert eng.generate([1, 2, 3], 4, batched=False) == want


def test_short_attention_form_agrees(tiny) -> None:
    # tc = 3: `attn_decode_short` (the first key block and the token's key
    # and value loaded before the query is formed, the next block in flight
    # in the loop). Key tile 4 and 2 splits: over 21 positions a split walks
    # up to 3 blocks, the last one partial, and the prefetch index stays on
    # the split's last block
    w, _ = tiny
    plan = dataclasses.replace(plan_for(TINY, 64, None), tc=3, bt=4, ns=2)
    eng = TileQwen3(TINY, w, max_seq=64, plan=plan)
    names = {op.kernel.__name__ for op in eng.ops}
    assert "attn_decode_short" in names and "attn_decode" not in names
    ref = NumpyQwen3(TINY, w, max_seq=64)
    for t in _tokens(21, TINY.vocab_size, seed=5):
        _close(eng.feed(t), ref.step(t))


def test_short_form_below_the_bound(tiny) -> None:
    # the short form's TC is the plan's `short_tc` (here 3, the long form
    # the register stream): one step graph per form, chosen by the position
    w, _ = tiny
    plan = dataclasses.replace(plan_for(TINY, 64, None), tc=2, short_tc=3, fma_until=5)
    eng = TileQwen3(TINY, w, max_seq=64, plan=plan)
    ref = NumpyQwen3(TINY, w, max_seq=64)
    kinds = []
    for t in _tokens(7, TINY.vocab_size, seed=7):
        _close(eng.feed(t), ref.step(t))
        kinds.append(next(op.kernel.__name__ for op in eng.ops if op.kernel.__name__.startswith("attn")))
    assert kinds == ["attn_decode_short"] * 5 + ["attn_decode"] * 2


def test_short_form_with_fewer_splits(tiny) -> None:
    # the same attention kernel (the ring) in both forms, the short one with
    # half the splits (`short_ns`, its own partials): the merge's NS follows
    # the position, and every step agrees with the reference
    w, _ = tiny
    plan = dataclasses.replace(plan_for(TINY, 64, None), tc=4, short_tc=4, bt=8, ns=4, short_ns=2, fma_until=5)
    eng = TileQwen3(TINY, w, max_seq=64, plan=plan)
    assert sorted(eng.parts) == [2, 4]
    ref = NumpyQwen3(TINY, w, max_seq=64)
    splits = []
    for t in _tokens(7, TINY.vocab_size, seed=8):
        _close(eng.feed(t), ref.step(t))
        splits.append(next(op.generics["NS"] for op in eng.ops if op.kernel.__name__ == "combine_splits"))
    assert splits == [2] * 5 + [4] * 2


def test_short_form_key_tile_agrees(tiny) -> None:
    # `Plan.sbt`: the short form's ring attention with key tiles of 16 (two
    # tiles of 8 in one), the long form's of 8: each form's kernel has its
    # own BT, and every step agrees with the reference on both sides of the
    # bound; a tile the attention cannot take is refused, the plan kept
    w, _ = tiny
    plan = dataclasses.replace(plan_for(TINY, 64, None), tc=4, short_tc=4, bt=8, sbt=16, ns=4, short_ns=2,
                               fma_until=12, ea=3, kb=1)  # fmt: skip
    eng = TileQwen3(TINY, w, max_seq=64, plan=plan)
    bts = {f: {op.generics["BT"] for op in ops if op.kernel.__name__ == "attn_decode_ring_early"}
           for f, ops in eng._form_ops.items()}  # fmt: skip
    assert bts == {"short": {16}, "long": {8}}
    ref = NumpyQwen3(TINY, w, max_seq=64)
    for t in _tokens(14, TINY.vocab_size, seed=9):
        _close(eng.feed(t), ref.step(t))
    for bad in (12, 2):
        with pytest.raises(ValueError, match=r"Plan\.sbt must be a power of two"):
            eng.replan(dataclasses.replace(plan, sbt=bad))
    assert eng.plan.sbt == 16


def test_attention_form_follows_the_position(tiny) -> None:
    # FMA attention below position 6, tensor cores from there: two step
    # graphs, each replay taking the one for its positions
    w, _ = tiny
    plan = dataclasses.replace(plan_for(TINY, 64, None), tc=1, fma_until=6)
    eng = TileQwen3(TINY, w, max_seq=64, plan=plan, graph=True, burst=4)

    def tc() -> int:
        return next(op.generics["TC"] for op in eng.ops if op.kernel.__name__ == "attn_decode")

    ref = NumpyQwen3(TINY, w, max_seq=64)
    forms = []
    for t in _tokens(8, TINY.vocab_size, seed=6):
        _close(eng.feed(t), ref.step(t))
        forms.append(tc())
    assert forms == [0] * 6 + [1] * 2
    # decode: a burst of 4 from position 8 (past the bound) and from 0 (below it)
    eng.reset()
    prompt = _tokens(2, TINY.vocab_size, seed=8)
    want = NumpyQwen3(TINY, w, max_seq=64).greedy(prompt, 10)
    assert eng.generate(prompt, 10, batched=False) == want
    assert tc() == 1 and eng._stash["short"][1] is not None  # both burst graphs kept
    # each form's graphs were made (and run once) when the first was needed
    eng2 = TileQwen3(TINY, w, max_seq=64, plan=plan, graph=True, burst=4)
    eng2.reset()
    eng2.decode(4)  # positions 0..3: the short form only
    assert eng2._stash["long"][1] is not None and eng2.position == 4
    assert eng2.generate(prompt, 10, batched=False) == want


def test_the_step_is_built_once_and_allocates_nothing(tiny) -> None:
    _, eng = tiny
    ops = list(eng.ops)
    buffers = [id(b) for b in (eng.x, eng.qkv, eng.kc, eng.vc, eng.logits, eng.tok, eng.pos)]
    eng.reset()
    eng.generate([1, 2], 5)
    assert (
        eng.ops == ops
        and [id(b) for b in (eng.x, eng.qkv, eng.kc, eng.vc, eng.logits, eng.tok, eng.pos)]
        == buffers
    )
    # per layer: rms_gemv, attn_decode, combine_splits, 2 gemv_add, rms_gate_up;
    # then one kv_append for every layer, the LM head, the token choice
    assert len(ops) == 1 + 6 * TINY.num_hidden_layers + 3
    assert [op.kernel.__name__ for op in ops].count("kv_append") == 1


def test_plan_fills_a_big_card() -> None:
    cfg = Qwen3Config.load("qwen3-4b")
    p = plan_for(cfg, 2048, sm_count=132)
    for name, n in (("qkv", 6144), ("gate_up", 9728), ("lm", 151936)):
        assert -(-n // p.bn[name]) >= 264, name
    for name in ("o", "down"):  # 2560 rows: split-K or small blocks
        assert -(-2560 // p.bn[name]) * p.splitk[name] >= 264
    assert p.ns * cfg.num_key_value_heads >= 128
    # the GEMVs' MB: the blocks an SM of their one-wave grid (3 of 304-396
    # blocks on 132 SMs), at most 4 (64 registers a thread)
    assert {k: p.mb[k] for k in ("qkv", "o", "gate_up", "down")} == dict.fromkeys(
        ("qkv", "o", "gate_up", "down"), 3
    )
    small = plan_for(Qwen3Config.load("qwen3-0.6b"), 2048, sm_count=132)
    assert all(1 <= small.mb[k] <= 4 for k in small.mb)
    assert set(plan_for(TINY, 64, None).mb.values()) == {0}  # the interpreter: no bound
    # programmatic dependent launch only where the card has it (sm_90)
    assert p.pdl is False and (p.ge, p.gl, p.me, p.rs, p.tw) == ((), (), 0, 0, 0)
    # on sm_90: the trigger late, O and down at their entry (their next GEMVs'
    # first K step peeled and read before the wait), small tiles replicated,
    # the greedy token choice in one block of 32 warps
    hq = plan_for(cfg, 2048, sm_count=132, hopper=True)
    assert (hq.pdl, hq.ge, hq.rs) == ("late+loads", ("o", "down"), 1)
    assert hq.tw == 16384 and hq.tk == 0  # the token choice: 9,496 block maxima as one tile
    assert {k: hq.st[k] for k in ("qkv", "o", "gate_up", "down")} == {"qkv": -1, "o": 1, "gate_up": -1, "down": -1}
    # gate/up triggers down at its last K iteration (down peeled); the merge
    # triggers O at its entry where O has more blocks than SMs (4B: 320 on
    # 132), not at 0.6B (128: one block an SM, where it lost 2 %)
    assert (hq.gl, hq.me) == (("gate_up",), 1)
    hs = plan_for(Qwen3Config.load("qwen3-0.6b"), 2048, sm_count=132, hopper=True)
    assert (hs.gl, hs.me, -(-1024 // hs.bn["o"]) * hs.splitk["o"]) == (("gate_up",), 0, 128)
    # long contexts take the shared-memory ring (tc 4), short ones the FMA form
    # (with half the splits below 8,192 positions)
    hp = plan_for(cfg, 2048, sm_count=132, hopper=True)
    assert (hp.tc, hp.fma_until, hp.short_tc, hp.ns, hp.short_ns) == (4, 8192, 4, 32, 16)
    # the ring's form with its `pos`-only loads first on a GPU; none in the interpreter
    assert (hp.ea, plan_for(TINY, 64, None).ea) == (3, 0)


def test_prompt_longer_than_the_cache_is_refused(tiny) -> None:
    _, eng = tiny
    eng.reset()
    with pytest.raises(ValueError, match="max_seq"):
        eng.prompt([1] * 64)


# ---------------------------------------------------------------- sampling
def _sample(k, logits: np.ndarray, temperature: float, top_p: float, seed: int, pos: int) -> int:
    from backends import _Numpy
    from steps import sampling_ops

    nb = -(-logits.size // 16)
    bmax = np.array([logits[i * 16 : (i + 1) * 16].max() for i in range(nb)], np.float32)
    tok, p, hist = np.zeros(1, np.int32), np.array([pos], np.int32), np.zeros(64, np.int32)
    for op in sampling_ops(
        k, _Numpy(), logits, bmax, tok, p, hist, temperature, top_p, seed, bc=32
    ):
        op.sync()
    assert p[0] == pos + 1 and hist[pos + 1] == tok[0]
    return int(tok[0])


def test_sampling_matches_its_numpy_mirror() -> None:
    k = load_kernels()
    rng = np.random.default_rng(0)
    logits = (rng.standard_normal(300) * 2).astype(np.float32)
    for seed, pos, temperature, top_p in [
        (1, 0, 1.0, 1.0),
        (2, 5, 0.7, 0.9),
        (3, 9, 1.3, 0.5),
        (4, 2, 1.0, 0.95),
        (5, 30, 0.5, 0.8),
        (6, 7, 2.0, 1.0),
        (7, 3, 1.2e-38, 1.0),  # about the smallest temperature the engine takes: the argmax
    ]:
        got = _sample(k, logits, temperature, top_p, seed, pos)
        want, nucleus = sample_reference(logits, temperature, top_p, seed, pos)
        assert got == want and nucleus[got]
    # A tiny nucleus is the argmax whatever the draw.
    assert {_sample(k, logits, 1.0, 1e-6, s, 3) for s in range(3)} == {int(np.argmax(logits))}


def test_sampler_mirror_draws_from_the_nucleus_distribution() -> None:
    logits = np.log(np.array([1, 2, 3, 4, 0.01], np.float32))
    us = [uniform(9, i) for i in range(6000)]
    e, keep = nucleus_reference(logits, 1.0, 1.0)
    draws = np.bincount([draw(e, keep, u) for u in us], minlength=5)
    np.testing.assert_allclose(draws / draws.sum(), [0.1, 0.2, 0.3, 0.4, 0.001], atol=0.02)
    # top_p = 0.65 keeps {4, 3} (0.4 + 0.3 >= 0.65), renormalised.
    e, keep = nucleus_reference(logits, 1.0, 0.65)
    assert keep.tolist() == [False, False, True, True, False]
    draws = np.bincount([draw(e, keep, u) for u in us], minlength=5)
    np.testing.assert_allclose(draws / draws.sum(), [0, 0, 3 / 7, 4 / 7, 0], atol=0.02)
    # top_p = 0.75 needs the third token too; 0.4 exactly keeps one.
    assert nucleus_reference(logits, 1.0, 0.75)[1].tolist() == [False, True, True, True, False]
    assert nucleus_reference(logits, 1.0, 0.3)[1].sum() == 1
    assert min(us) >= 0 and max(us) < 1 and abs(np.mean(us) - 0.5) < 0.02


def test_sampling_engine_is_deterministic_for_a_seed() -> None:
    w = random_weights(UNTIED, seed=3)
    a = TileQwen3(UNTIED, w, max_seq=16, sampling=(0.8, 0.9, -42))
    b = TileQwen3(UNTIED, w, max_seq=16, sampling=(0.8, 0.9, -42))
    got = a.generate([1, 2, 3], 6)
    assert got == b.generate([1, 2, 3], 6) and all(0 <= t < UNTIED.vocab_size for t in got)
    # End to end (huser, round 6): each step's token, chosen on the device with
    # the engine's temperature, top-p and seed (negative: the kernel's `seed: i32`
    # hashed as u32), is what the NumPy mirror samples from that step's logits,
    # the position fed being the draw's counter. (Against the NumPy model's
    # logits a token may differ where bf16 attention moves a logit across a
    # draw's boundary.)
    a.reset()
    t = 1
    for pos in range(2):
        logits = a.feed(t)
        t = int(a.be.read(a.tok)[0])
        want, nucleus = sample_reference(logits, 0.8, 0.9, -42, pos)
        assert t == want and nucleus[t], pos


# ---------------------------------------------------------------- config and checkpoints
def test_config_from_hugging_face_json(tmp_path) -> None:
    d = dict(
        PRESETS["qwen3-4b"],
        rms_norm_eps=1e-6,
        rope_theta=1000000,
        torch_dtype="bfloat16",
        architectures=["Qwen3ForCausalLM"],
        max_position_embeddings=40960,
    )
    (tmp_path / "config.json").write_text(json.dumps(d))
    cfg = Qwen3Config.load(tmp_path)
    assert cfg == Qwen3Config.load("qwen3-4b")
    assert abs(cfg.weight_bytes() / 1e9 - 8.05) < 0.01  # the 8.05 GB
    with pytest.raises(ValueError, match="multiple"):
        Qwen3Config.from_dict(dict(d, num_key_value_heads=5))
    with pytest.raises(FileNotFoundError, match="presets"):
        Qwen3Config.load(tmp_path / "nowhere")


@pytest.mark.parametrize("shards", [1, 3])
def test_safetensors_checkpoint_round_trip(tmp_path, shards: int) -> None:
    pytest.importorskip("safetensors")
    w = random_weights(UNTIED, seed=4)
    save_safetensors(w, tmp_path, UNTIED, shards=shards)
    cfg = Qwen3Config.load(tmp_path)
    assert cfg == UNTIED
    back = load_safetensors(tmp_path, cfg)
    assert set(back) == set(w) and all(np.array_equal(back[k], w[k]) for k in w)
    eng = TileQwen3(cfg, back, max_seq=16)
    ref = NumpyQwen3(UNTIED, w, max_seq=16)
    for t in (5, 6, 7):
        _close(eng.feed(t), ref.step(t))


def test_safetensors_errors_name_the_tensor(tmp_path) -> None:
    pytest.importorskip("safetensors")
    w = random_weights(UNTIED, seed=4)
    bad = dict(w)
    del bad["model.layers.1.mlp.up_proj.weight"]
    save_safetensors(bad, tmp_path / "a", UNTIED)
    with pytest.raises(ValueError, match=r"lacks .*up_proj"):
        load_safetensors(tmp_path / "a", UNTIED)
    bad = dict(w)
    bad["model.norm.weight"] = np.ones(7, np.float32)
    save_safetensors(bad, tmp_path / "b", UNTIED)
    with pytest.raises(ValueError, match=r"model.norm.weight has shape \(7,\)"):
        load_safetensors(tmp_path / "b", UNTIED)


def test_bf16_rounding_is_to_nearest_even() -> None:
    x = np.array([1.0, 1 + 2**-8, 1 + 3 * 2**-8, -2.5, 1 + 2**-7 + 2**-9], np.float32)
    assert round_bf16(x).tolist() == [1.0, 1.0, 1 + 2**-6, -2.5, 1 + 2**-7]


# ---------------------------------------------------------------- the torch reference
def test_torch_reference_agrees_with_numpy() -> None:
    torch = pytest.importorskip("torch")
    from reference import TorchQwen3

    w = random_weights(UNTIED, seed=6)
    ref = NumpyQwen3(UNTIED, w, max_seq=32)
    tr = TorchQwen3(UNTIED, w, max_seq=32)
    toks = _tokens(12, UNTIED.vocab_size, seed=7)
    for i, t in enumerate(toks):
        got = tr.step(torch.tensor([t]), torch.tensor([i])).numpy()
        _close(got, ref.step(t))
    # The prompt at once (causal attention) gives the last step's logits.
    tp = TorchQwen3(UNTIED, w, max_seq=32)
    _close(tp.prefill(torch.tensor(toks)).numpy(), got)


# ---------------------------------------------------------------- the command
def test_generate_command_with_a_checkpoint_and_tokenizer(tmp_path) -> None:
    pytest.importorskip("safetensors")
    tokenizers = pytest.importorskip("tokenizers")
    import subprocess
    import sys
    from pathlib import Path

    from tokenizers import models, pre_tokenizers

    words = [f"w{i}" for i in range(UNTIED.vocab_size)]
    tok = tokenizers.Tokenizer(
        models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="w0")
    )
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    w = random_weights(UNTIED, seed=8)
    save_safetensors(w, tmp_path, UNTIED)
    tok.save(str(tmp_path / "tokenizer.json"))
    script = Path(__file__).resolve().parents[2] / "examples" / "llm" / "generate.py"
    r = subprocess.run(
        [
            sys.executable,
            str(script),
            "--model",
            str(tmp_path),
            "--prompt",
            "w3 w14 w15",
            "--tokens",
            "5",
            "--device",
            "cpu",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    want = NumpyQwen3(UNTIED, w, max_seq=16).greedy([3, 14, 15], 5)
    assert " ".join(f"w{t}" for t in want) in r.stdout
    assert "tokens/s" in r.stdout and "5/5" not in r.stdout  # 4 decode steps after the first
    assert "4/4" in r.stderr  # the progress bar


# ---------------------------------------------------------------- batched prefill
@pytest.mark.parametrize("n", [21, 45])  # one chunk; two chunks (32 + 13 rows)
def test_batched_prefill_matches_the_reference(n: int) -> None:
    w = random_weights(UNTIED, seed=3)
    eng = TileQwen3(UNTIED, w, max_seq=64)
    assert eng.plan.prefill == 32
    prompt = _tokens(n, UNTIED.vocab_size, seed=n)
    eng.reset()
    eng.prefill(prompt)
    ref = NumpyQwen3(UNTIED, w, max_seq=64)
    for t in prompt:
        want = ref.step(t)
    got = eng.be.read(eng.logits)
    # The products take bf16 activations (tensor cores): bf16 tolerance.
    np.testing.assert_allclose(got, want, rtol=0, atol=float(np.abs(want).max()) * 2**-5)
    kc = eng.kc.reshape(ref.k.shape)  # [L * HKV, S, D]: every layer's heads in one tensor
    np.testing.assert_allclose(kc[:, :, :n], ref.k[:, :, :n], rtol=2**-6, atol=2**-5)
    assert eng.position == n and int(eng.be.read(eng.tok)[0]) == int(np.argmax(want))
    # Decoding goes on from the prefilled cache.
    assert eng.decode(6) == ref.greedy([int(np.argmax(want))], 6)


def _shared(m) -> bytes:  # type: ignore[no-untyped-def]
    """What a module of std::llm shares with every other one this process
    loads (`tilelang.api._CHECKED`: one check a process), as bytes."""
    import pickle

    return pickle.dumps((m._program, m._ownership, m._root))


def test_the_step_replays_as_one_graph_on_the_interpreter() -> None:
    """Also: the engines' modules share one checked std::llm, and running
    them (prefill, steps, graph captures and replays) leaves it unchanged."""
    if not hasattr(tilelang, "graph"):
        pytest.skip("this tilelang has no tilelang.graph() yet")
    before = _shared(load_kernels())
    w = random_weights(UNTIED, seed=3)
    eng = TileQwen3(UNTIED, w, max_seq=32, graph=True, burst=3)
    eng.progress_every = 3  # a wait (and a report) after every burst
    seen: list[int] = []
    got = eng.generate([5, 6, 7], 8, progress=seen.append)
    # decode(7): two replays of the 3-step graph, then one of the 1-step graph
    assert seen == [3, 6, 7]
    assert eng.graph_mode and eng._graph is not None and eng._burst_graph is not None
    assert len(eng._graph.operations) == len(eng.ops)
    assert len(eng._burst_graph.operations) == 3 * len(eng.ops)
    assert eng._burst_graph.replays == 2 and eng._graph.replays == 1
    plain = TileQwen3(UNTIED, w, max_seq=32, graph=False)
    assert got == plain.generate([5, 6, 7], 8)
    with pytest.raises(ValueError, match="graph_api"):
        TileQwen3(UNTIED, w, max_seq=32, graph_api="cuda")
    assert eng.k is not plain.k and eng.k._program is plain.k._program
    assert _shared(eng.k) == before


def _replay_calls(graph) -> list[int]:  # type: ignore[no-untyped-def]
    """The `times` of every `replay` call on `graph` from now on."""
    calls: list[int] = []
    real = graph.replay

    def replay(times: int = 1) -> None:
        calls.append(times)
        real(times=times)

    graph.replay = replay
    return calls


def test_decode_waits_once_per_run_of_one_graph_and_form() -> None:
    """Without a progress callback, `decode` replays each graph once per run
    of the same form, `times` set to the number of bursts or steps (one host
    wait each, not one per burst), and chooses the tokens of a wait per burst.
    Across `plan.fma_until` the run is cut: the short form's bursts, then the
    long form's."""
    w = random_weights(UNTIED, seed=3)
    eng = TileQwen3(UNTIED, w, max_seq=32, graph=True, burst=3)
    want = TileQwen3(UNTIED, w, max_seq=32, graph=True, burst=3)
    want.bursts_per_wait = 1
    for e in (eng, want):
        e.prompt([5, 6, 7])
        e.decode(3)  # captures both graphs
    bursts, steps = _replay_calls(eng._burst_graph), _replay_calls(eng._graph)
    assert eng.decode(11) == want.decode(11)  # 3 bursts and 2 steps
    assert bursts == [3] and steps == [2] and eng.position == 3 + 3 + 11
    # two forms: the short one below position 8, bursts of 2 from position 2
    plan = dataclasses.replace(plan_for(UNTIED, 32, None), tc=1, fma_until=8, short_tc=0)
    eng = TileQwen3(UNTIED, w, max_seq=32, plan=plan, graph=True, burst=2)
    eng.prompt([5, 6])
    eng.decode(2)  # positions 2, 3: captures the burst graphs of both forms
    short = _replay_calls(eng._burst_graph)
    eng._switch("long")
    long = _replay_calls(eng._burst_graph)
    eng._switch("short")
    got = eng.decode(10)  # positions 4..13: bursts at 4, 6 short; 8, 10, 12 long
    assert short == [2] and long == [3]
    ref = NumpyQwen3(UNTIED, w, max_seq=32)
    assert got == ref.greedy([5, 6], 13)[-10:]
