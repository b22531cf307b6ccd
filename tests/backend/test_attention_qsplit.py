"""`TILEC_ATTN_CHAIN_HALVES=1` (`passes/attention_qsplit.py`): the chained short keys' variant with its last
round's tiles run as their 64-row halves, one consumer warpgroup's rows each on its own CTA, the other
warpgroup of that CTA keeping the barriers' protocol without computing (`g.WarpgroupIndex`). Where it applies
(the D = 64 short keys' variant: off or unset every kernel byte for byte as before); in the simulator against
NumPy (outputs NaN until stored: a half no warpgroup ran fails) for a last round of halves, none (more tiles
left than half the CTAs), every tile halved (no whole round), causal pairs (never halved); the benchmark's
kernel through ptxas (sm_90a, no spills)."""

from __future__ import annotations

import shutil

import pytest
from ptxas_report import assemble
from test_attention_csplit import SETTINGS, _short
from test_attention_pipeline import _facts, _run_lse_and_check, _std

from tilelang.backend import emit_llvm_text, emit_ptx, lower_gpu
from tilelang.backend.gpu import nodes as g
from tilelang.backend.gpu.printer import print_gpu_kernel

LSE = {**_facts("oqkv", 3), **_facts(["lse"], 2)}
VAR = "TILEC_ATTN_CHAIN_HALVES"


def _env(monkeypatch, on: str | None = "1") -> None:  # type: ignore[no-untyped-def]
    for name in (*SETTINGS, "TILEC_ATTN_CHAIN_SPLIT", VAR):
        monkeypatch.delenv(name, raising=False)
    if on is not None:
        monkeypatch.setenv(VAR, on)
    monkeypatch.setenv("TILEC_ATTN_ONCE", "0")  # (the once variant's request beside the tail's: test_attention_once)


def _ll(k, facts) -> str:  # type: ignore[no-untyped-def]
    gk = lower_gpu(k, "sm_90a", facts)
    return emit_llvm_text(gk, gk.facts, "")[0]


@pytest.mark.heavy  # (htier1: 7 LLVM emits; the switch's default test is the next one, the tiers in tests/README.md)
def test_the_halves_change_no_other_kernel(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """"0" and unset: the short keys' variant's LLVM as before; the long keys' kernel and the D = 128 variant (not
    chained) the same LLVM whatever the switch (split from test_where_the_halves_apply, htier1)."""
    k64, k128 = _std("flash_attention_lse", "f16", 128, 128, 64), _std("flash_attention_lse", "f16", 128, 128, 128)
    _env(monkeypatch, None)
    unset = {(k, short): _ll(k, _short(LSE, 128) if short else LSE) for k in (k64, k128) for short in (False, True)}
    _env(monkeypatch, "0")
    assert _ll(k64, _short(LSE, 128)) == unset[(k64, True)]
    _env(monkeypatch, "1")
    for (k, short), ll in unset.items():
        if (k, short) != (k64, True):
            assert _ll(k, _short(LSE, 128) if short else LSE) == ll


def test_where_the_halves_apply(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """On: the D = 64 short keys' variant keeps its chained walk (walk A) and gets the halves' walk after it,
    whose tile branches on the thread's warpgroup, and asks for the causal tail's variant (the tail is not in
    this kernel); "dyn" the halves' places from tickets; a bad value is an error that names the switch. (That
    nothing else changes: the heavy test above.)"""
    k64 = _std("flash_attention_lse", "f16", 128, 128, 64)
    _env(monkeypatch, "1")
    gk = lower_gpu(k64, "sm_90a", _short(LSE, 128))
    on = print_gpu_kernel(gk)
    consumer = on[on.index("role consumer"):on.index("role producer")]
    producer = on[on.index("role producer"):]
    assert consumer.count("= for %round") == producer.count("= for %round") == 2
    walk_a, walk_b = consumer.split("= for %round")[1:]
    assert "%chained" in walk_a and "%chained" not in walk_b
    assert "warpgroup_index" in walk_b and "warpgroup_index" not in walk_a and "warpgroup_index" not in producer
    assert "split." not in consumer  # no record, arrival or merge
    assert gk.split is not None  # the causal tail's variant, asked for
    assert "ticket." not in on
    # "dyn": the same, the halves' places from tickets: the producer takes one after walk A, the consumers read it
    monkeypatch.setenv(VAR, "dyn")
    dyn = print_gpu_kernel(lower_gpu(k64, "sm_90a", _short(LSE, 128)))
    consumer = dyn[dyn.index("role consumer"):dyn.index("role producer")]
    producer = dyn[dyn.index("role producer"):]
    assert "ticket.take" in producer.split("= for %round")[1] and "ticket.take" not in consumer
    assert "ticket.read" in consumer.split("= for %round")[1] and "ticket.read" not in producer
    assert "warpgroup_index" in consumer.split("= for %round")[2]
    monkeypatch.setenv(VAR, "yes")
    with pytest.raises(ValueError, match=f"{VAR}='yes'"):
        lower_gpu(k64, "sm_90a", _short(LSE, 128))


@pytest.mark.heavy  # ~7 s (four kernels lowered)
def test_a_causal_launch_runs_the_default_tail_variant(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """With the halves the short keys' variant has no causal tail, and asks (`attention_split.tail_request`) for
    the tail's variant where a launch's walk hands out pairs of an even number of query blocks; that variant's
    LLVM is the default short keys' variant's (so the compile cache keys them as one text: one compile, one
    module). The runtime (`CudaDevice._choose`, `_variant` stubbed, 132 SMs) follows the request: a causal
    S = 1,024 launch runs the tail's variant, a full one the halves'."""
    from types import SimpleNamespace

    from test_attention_tail import stubbed_device

    from tilelang.backend.gpu.passes import attention_tail

    k = _std("flash_attention_lse", "f16", 128, 128, 64)
    facts = _short(LSE, 128)
    _env(monkeypatch, None)
    default = _ll(k, facts)
    _env(monkeypatch, "1")
    gk = lower_gpu(k, "sm_90a", facts)
    assert gk.split is not None and [kind for kind, _ in gk.split.ons] == [attention_tail.KIND]
    form = gk.split
    variant = lower_gpu(k, "sm_90a", form.refine(facts, attention_tail.KIND))
    assert variant.split is None and emit_llvm_text(variant, variant.facts, "")[0] == default
    base = lower_gpu(k, "sm_90a", LSE)
    dev = stubbed_device(SimpleNamespace(short=base.short, persistent=1, split=None),
                         SimpleNamespace(short=None, persistent=1, split=form))
    for bh, s, causal, tail in ((512, 1024, True, True), (512, 1024, False, False)):
        args = [SimpleNamespace(shape=(bh, s, 64)), SimpleNamespace(shape=(bh, s))] + \
            [SimpleNamespace(shape=(bh, s, 64))] * 3 + [0.125, causal]
        key = dev._choose(SimpleNamespace(ir=k), ("base",), LSE, args, None, (bh, s // 128))[1]
        assert key == ("base", base.short.key(), *([form.key(attention_tail.KIND)] if tail else [])), (bh, s, causal)


# BH, BHkv, S_q, S_k, causal, CTAs; BM = 128 (two consumer warpgroups), BN = 64, D = 64, the short keys'
# variant (K's rows <= 512). The default case: 3 tiles on 2 CTAs, walk A one chained round, then the last
# tile's two halves on the two CTAs (keys not a multiple of the block). Heavy since htier1 (the tiers, tests/README.md):
# `TILEC_ATTN_CHAIN_HALVES` is opt-in (RESULTS.md hattn5 2026-12-06, not measured as a win since), its one default
# test test_where_the_halves_apply (where it applies, the warpgroup index in the IR, the refusal)
CASES = [
    pytest.param(1, 1, 384, 100, False, 2, marks=pytest.mark.heavy),
    # GQA (2 query heads a KV head), 6 tiles on 4 CTAs: 2 tiles' halves on 4, the last query block partial (its
    # second half past S_q: stored nowhere)
    pytest.param(2, 1, 300, 200, False, 4, marks=pytest.mark.heavy),
    # 7 tiles on 4 CTAs: 3 left, 6 halves > 4 CTAs: not halved (walk B runs no round)
    pytest.param(1, 1, 896, 130, False, 4, marks=pytest.mark.heavy),
    # 3 tiles on 8 CTAs: no whole round (walk A runs nothing), every tile halved
    pytest.param(1, 1, 384, 200, False, 8, marks=pytest.mark.heavy),
    # causal: pairs, never halved
    pytest.param(2, 2, 300, 300, True, 3, marks=pytest.mark.heavy),
]


@pytest.mark.parametrize("mode", [pytest.param("1", marks=pytest.mark.heavy), "dyn"])
@pytest.mark.parametrize(("bh", "hkv", "sq", "sk", "causal", "ctas"), CASES,
                         ids=["last_tile_halved", "two_tiles_halved_gqa", "too_many_left", "no_whole_round",
                              "causal_pairs"])
def test_halves_in_the_simulator(bh: int, hkv: int, sq: int, sk: int, causal: bool, ctas: int, mode: str,
                                 monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The chained short keys' variant with the switch against NumPy in llsim (outputs NaN until stored):
    "1" each half on the CTA of its place, "dyn" on the CTA whose ticket names the place (the simulator runs
    the CTAs' threads interleaved: the tickets come in its order)."""
    import llsim

    monkeypatch.setattr(llsim, "UNDEF_FLOAT", "nan")
    _env(monkeypatch, mode)
    k = _std("flash_attention_lse", "f16", 128, 64, 64)
    facts = _short(LSE, 64)
    gk = lower_gpu(k, "sm_90a", facts)
    assert gk.persistent == 1 and "warpgroup_index" in print_gpu_kernel(gk)
    _run_lse_and_check(k, facts, (ctas, 1), bh, hkv, sq, sk, 64, causal, 9)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas")
# (all heavy, htier1: the halves' one default test is test_where_the_halves_apply)
@pytest.mark.parametrize(("dt", "mode"), [pytest.param("f16", "1", marks=pytest.mark.heavy), pytest.param("f16", "dyn", marks=pytest.mark.heavy), pytest.param("bf16", "1", marks=pytest.mark.heavy),
                                          pytest.param("bf16", "dyn", marks=pytest.mark.heavy)])
def test_the_benchmarks_kernel_assembles_without_spills(dt: str, mode: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """std's prefill kernel as the benchmark launches it at S = 1,024 (128 x 128, D = 64, the short keys'
    variant) with the halves: ptxas (sm_90a) spills nothing."""
    _env(monkeypatch, mode)
    k = _std("flash_attention", dt, 128, 128, 64)
    facts = _short(_facts("oqkv", 3), 128)
    ptx = emit_ptx(k, "sm_90a", facts)
    rep = assemble(ptx, "sm_90a")
    assert max(rep.spill_stores) == 0 and max(rep.spill_loads) == 0, rep.text[-2000:]
    assert "C7515" not in rep and "serialized" not in rep, rep.text[-2000:]


# dtype, BH, BHkv, S_q, S_k, causal, CTAs (std's flash_attention_lse, 128 x 128, D = 64, the short keys' variant)
GPU = [
    ("f16", 3, 1, 640, 1000, False, 12),  # GQA, keys not a multiple of 128: 15 tiles on 12, the last 3 halved
    ("bf16", 2, 2, 1000, 1024, False, 3),  # 16 tiles on 3 (S_q not a multiple of 128): the last one halved
    ("f16", 2, 2, 1000, 1000, True, 3),  # causal: the tail's variant (a causal launch never runs the halves)
    ("bf16", 2, 2, 768, 1024, False, 3),  # 12 tiles on 3: the last round full, nothing halved
]


@pytest.mark.gpu
@pytest.mark.parametrize("mode", ["1", "dyn"])
@pytest.mark.parametrize("case", GPU, ids=lambda c: "-".join(map(str, c)))
def test_halves_on_the_gpu(case, mode: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The switch against SDPA in f32 and the log-sum-exp, three launches with the same bits (`gpu_lse_check`;
    "dyn": the tickets' counter is zero again after each launch, or the second one's halves would be lost)."""
    from test_attention_split import gpu_lse_check

    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no CUDA device")
    dtype, bh, hkv, sq, sk, causal, ctas = case
    _env(monkeypatch, mode)
    monkeypatch.setenv("TILEC_PERSISTENT_SMS", str(ctas))
    gpu_lse_check(dtype, 64, bh, hkv, sq, sk, causal, sq + sk)


@pytest.mark.gpu
@pytest.mark.parametrize("mode", ["1", "dyn"])
def test_halves_at_the_benchmarks_scale(mode: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The benchmark's full launch (f16, D = 64, S = 1,024, B * H = 512: 4,096 tiles on every SM; on an H100's
    132, 31 whole rounds and 4 tiles as 8 halves on 8 CTAs): no tile never stored or wrong
    (`test_attention_qdouble._assert_every_tile_right`)."""
    from test_attention_qdouble import _assert_every_tile_right

    _env(monkeypatch, mode)
    _assert_every_tile_right(False, monkeypatch)


def _plan(monkeypatch, mode: str | None):  # type: ignore[no-untyped-def]
    """std's `flash_attention` (f16, 128 x 64, D = 64), the short keys' variant, with the halves (`mode`) or
    without (None; `test_csplit_plan._kernel`'s environment), and its walks' tile positions."""
    from test_csplit_plan import _kernel

    monkeypatch.delenv(VAR, raising=False)
    if mode is not None:
        monkeypatch.setenv(VAR, mode)
    return _kernel(monkeypatch, None)


def _rows(kp, P: int, bh: int, sq: int, sk: int, causal: bool,  # type: ignore[no-untyped-def]
          tickets: list[int] | None = None) -> dict[tuple, list]:
    """Each tile's key loops on `P` CTAs, run from the lowered consumer role's own scalar ops for both
    warpgroups (`test_split_plan._walk`; CTA c reads ticket `tickets[c]`, the order the CTAs took them):
    tile -> [(warpgroup, lower, upper, CTA)]."""
    from test_csplit_plan import _Walks
    from test_split_plan import _walk

    got: dict[tuple, list] = {}
    for c in range(P):
        for wg in (0, 1):
            class _Half(_Walks):
                def op(self, op: object) -> None:
                    if isinstance(op, g.WarpgroupIndex):
                        self.env[op.result.id] = wg
                        return
                    if isinstance(op, g.TicketRead):
                        assert tickets is not None
                        self.env[op.result.id] = tickets[self.launch[0]]
                        return
                    super().op(op)

            for t, lo, hi, *_ in _walk(*kp, c, P, bh, bh, sq, sk, causal, _Half):
                got.setdefault(t, []).append((wg, lo, hi, c))
    return got


# BH, S_q, S_k (<= 512: the short keys' variant at BN = 64), causal; CTA counts
# (all heavy, htier1: the halves' one default test is test_where_the_halves_apply)
PLAN_SHAPES = [pytest.param((5, 384, 333, False), marks=pytest.mark.heavy), *(pytest.param(s, marks=pytest.mark.heavy) for s in (
    (2, 300, 200, False), (1, 448, 512, False), (3, 1000, 500, False), (2, 640, 512, True)))]
PLAN_CTAS = [1, 2, 3, 4, 5, 7, 8, 13, 31, 64]


@pytest.mark.parametrize("mode", [pytest.param("1", marks=pytest.mark.heavy), "dyn"])
@pytest.mark.parametrize("shape", PLAN_SHAPES, ids=["5-384-333", "2-300-200", "1-448-512", "3-1000-500", "causal"])
def test_every_tiles_rows_run_once_on_its_keys(shape, mode: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """For many launches, each warpgroup's rows of every tile run once, on the key blocks the variant without
    the switch gives the tile; the halved tiles (one warpgroup's loop on each of two CTAs) are the last
    round's `left` where 2 left <= P and the walk hands out single tiles, else none (causal: pairs). "dyn":
    for tickets taken in a random order of the CTAs."""
    import math
    import random

    bh, sq, sk, causal = shape
    base, on = _plan(monkeypatch, None), _plan(monkeypatch, mode)
    n_tiles = bh * math.ceil(sq / 128)
    halved_somewhere = False
    rng = random.Random(sq + sk + bh)
    for P in sorted({min(p, n_tiles) for p in PLAN_CTAS}):
        want = _rows(base, P, bh, sq, sk, causal)
        tickets = rng.sample(range(P), P) if mode == "dyn" else None
        got = _rows(on, P, bh, sq, sk, causal, tickets)
        assert set(got) == set(want) and len(want) == n_tiles, P
        halved = []
        for t, runs in got.items():
            keys = {(lo, hi) for _, lo, hi, _ in want[t]}
            assert {(lo, hi) for _, lo, hi, _ in runs} == keys, (P, t, runs)
            if causal:  # pairs: as the variant runs them (a middle tile twice)
                assert sorted(r[0] for r in runs) == sorted(r[0] for r in want[t]), (P, t, runs)
                continue
            assert sorted(r[0] for r in runs) == [0, 1], (P, t, runs)  # each warpgroup's rows once
            if runs[0][3] != runs[1][3]:  # on two CTAs: halved
                halved.append(t)
        left = n_tiles - (math.ceil(n_tiles / P) - 1) * P
        assert len(halved) == (left if not causal and 2 * left <= P else 0), (P, left, halved)
        halved_somewhere |= bool(halved)
    assert halved_somewhere != causal


@pytest.mark.heavy
@pytest.mark.parametrize("mode", ["1", "dyn"])
def test_the_benchmarks_launch(mode: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The benchmark's full launch at BN = 64 (B * H = 512, S = 1,024: 4,096 tiles of 8 key blocks) on 132
    CTAs: 31 whole rounds, then the last 4 tiles as 8 halves on 8 CTAs, a half each ("dyn": the 8 CTAs that
    took the first 8 tickets, here in a random order)."""
    import random

    tickets = random.Random(7).sample(range(132), 132) if mode == "dyn" else None
    got = _rows(_plan(monkeypatch, mode), 132, 512, 1024, 512, False, tickets)
    assert len(got) == 4096
    halved = {t: r for t, r in got.items() if r[0][3] != r[1][3]}
    ctas = {x[3] for r in halved.values() for x in r}
    assert len(halved) == 4 and len(ctas) == 8
    assert all(x[2] - x[1] == 8 for r in halved.values() for x in r)
    if tickets is not None:
        assert ctas == {c for c in range(132) if tickets[c] < 8}


# `TILEC_ATTN_CHAIN_SPLIT=dyn`: the key split's pieces by the same tickets (test_attention_csplit's cases: BM, BH,
# BHkv, S_q, S_k, causal, CTAs, pieces the last round runs; D = 64, BN = 64, the short keys' variant)
# (the last round: one CTA busy, some, all; every case heavy, ~4-8 s each: the halves' "dyn" llsim case,
# test_halves_in_the_simulator, covers the ticket ops, heavy too since htier1; `TILEC_ATTN_CHAIN_SPLIT=dyn` measured no
# gain, RESULTS.md hattn6 2026-12-07: its one default test is test_the_ticket_has_a_word_of_its_own, a refusal)
SPLIT_CASES = [
    pytest.param(64, 2, 2, 300, 200, False, 4, 2 * 2, marks=pytest.mark.heavy),  # 10 tiles on 4: the last 2 in 2 pieces each
    # 5 tiles on 4, the last of one key block: no split, one CTA busy in the last round, three tickets unused
    pytest.param(64, 1, 1, 320, 64, False, 4, 0, marks=pytest.mark.heavy),
    # 5 tiles on 4, the last of two key blocks: 2 pieces on the 2 CTAs out first, the other 2 idle
    pytest.param(64, 1, 1, 320, 128, False, 4, 1 * 2, marks=pytest.mark.heavy),
    # 8 tiles on 4: two whole rounds, every CTA busy to the end, nothing to split (walk B empty everywhere)
    pytest.param(64, 2, 2, 256, 200, False, 4, 0, marks=pytest.mark.heavy),
    # 7 tiles on 4: the last 3 in 4 pieces each, up to 3 rounds of pieces a CTA (the first out take the most)
    pytest.param(64, 1, 1, 448, 320, False, 4, 3 * 4, marks=pytest.mark.heavy),
    pytest.param(128, 2, 1, 300, 500, False, 5, 1 * 5, marks=pytest.mark.heavy),  # two warpgroups, GQA
    pytest.param(64, 2, 2, 300, 200, True, 3, 0, marks=pytest.mark.heavy),  # causal pairs: no split
    pytest.param(64, 1, 1, 576, 512, False, 8, 1 * 8, marks=pytest.mark.heavy),  # the benchmark's cut
]


@pytest.mark.parametrize(("bm", "bh", "hkv", "sq", "sk", "causal", "ctas", "pieces"), SPLIT_CASES,
                         ids=["two_tiles_left", "one_busy", "some_busy", "all_busy", "three_left", "two_warpgroups_gqa",
                              "causal_pairs", "eight_pieces"])
def test_ticketed_key_split_in_the_simulator(bm: int, bh: int, hkv: int, sq: int, sk: int, causal: bool, ctas: int,
                                             pieces: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`TILEC_ATTN_CHAIN_SPLIT=dyn` against NumPy in llsim, and the records its pieces wrote (a piece's record is
    2 * BM consumer threads' words: test_attention_csplit's count), the counter zero after the launch."""
    import llsim
    from test_attention_split import _run

    monkeypatch.setattr(llsim, "UNDEF_FLOAT", "nan")
    _env(monkeypatch, None)
    monkeypatch.setenv("TILEC_ATTN_CHAIN_TAIL", "0")
    monkeypatch.setenv("TILEC_ATTN_CHAIN_SPLIT", "dyn")
    monkeypatch.setenv("TILEC_ATTN_SPLIT_EDGE", "0")
    k = _std("flash_attention_lse", "f16", bm, 64, 64)
    facts = _short(LSE, 64)
    gk = lower_gpu(k, "sm_90a", facts)
    text = print_gpu_kernel(gk)
    assert "ticket.take" in text and "ticket.read" in text and "split.save" in text
    written = _run(k, facts, (ctas, 1), bh, hkv, sq, sk, 64, causal, 5)
    assert written == pieces * 2 * bm * (4 + 32)


@pytest.mark.heavy
def test_the_benchmarks_launch_ticketed_key_split(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`TILEC_ATTN_CHAIN_SPLIT=dyn` on the benchmark's full launch at BN = 64 (4,096 tiles on 132 CTAs), the
    consumer role's own scalar walk with the tickets in a random order: 31 whole rounds, then the last 4 tiles
    in 8 pieces of one key block each, run by the 32 CTAs that took the first 32 tickets."""
    import random

    import dataclasses

    from test_csplit_plan import SWITCHES
    from test_split_plan import _spied

    for name in (*SWITCHES, VAR):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TILEC_ATTN_CHAIN_TAIL", "0")
    monkeypatch.setenv("TILEC_ATTN_CHAIN_SPLIT", "dyn")
    monkeypatch.setenv("TILEC_ATTN_SPLIT_EDGE", "0")
    facts = _facts("oqkv", 3)
    kp = _spied(monkeypatch, {**facts, "k": dataclasses.replace(facts["k"], rows_at_most=8 * 64)})
    tickets = random.Random(11).sample(range(132), 132)
    got = _rows(kp, 132, 512, 1024, 512, False, tickets)
    assert len(got) == 4096
    cut = {t: r for t, r in got.items() if len(r) > 2}
    assert len(cut) == 4 and all(len(r) == 16 and all(x[2] - x[1] == 1 for x in r) for r in cut.values())
    assert {x[3] for r in cut.values() for x in r} == {c for c in range(132) if tickets[c] < 32}
    assert all(len(r) == 2 for t, r in got.items() if t not in cut)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas")
@pytest.mark.heavy  # (htier1: `TILEC_ATTN_CHAIN_SPLIT=dyn`'s one default test is test_the_ticket_has_a_word_of_its_own)
def test_the_ticketed_key_split_assembles_without_spills(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The benchmark's kernel under `TILEC_ATTN_CHAIN_SPLIT=dyn` (its merge 2 records an iteration,
    `attention_csplit.DYN_MERGE_UNROLL`: at 3, 48 B of spills): ptxas (sm_90a) spills nothing."""
    _env(monkeypatch, None)
    monkeypatch.setenv("TILEC_ATTN_CHAIN_TAIL", "0")
    monkeypatch.setenv("TILEC_ATTN_CHAIN_SPLIT", "dyn")
    ptx = emit_ptx(_std("flash_attention", "f16", 128, 128, 64), "sm_90a", _short(_facts("oqkv", 3), 128))
    rep = assemble(ptx, "sm_90a")
    assert max(rep.spill_stores) == 0 and max(rep.spill_loads) == 0, rep.text[-2000:]
    assert "ticket" in ptx or "atom.acq_rel.gpu.global.add.u32" in ptx


@pytest.mark.gpu
@pytest.mark.parametrize("case", [("f16", 3, 1, 640, 1000, False, 2), ("bf16", 2, 2, 1024, 1024, False, 3)],
                         ids=lambda c: "-".join(map(str, c)))
def test_ticketed_key_split_on_the_gpu(case, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`TILEC_ATTN_CHAIN_SPLIT=dyn` against SDPA, three launches the same bits (the counters zero again): 15 tiles
    on 2 CTAs (GQA, keys not a multiple of 128), 16 on 3; and the benchmark's full launch on every SM."""
    from test_attention_qdouble import _assert_every_tile_right
    from test_attention_split import gpu_lse_check

    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no CUDA device")
    dtype, bh, hkv, sq, sk, causal, ctas = case
    _env(monkeypatch, None)
    monkeypatch.setenv("TILEC_ATTN_CHAIN_TAIL", "0")
    monkeypatch.setenv("TILEC_ATTN_CHAIN_SPLIT", "dyn")
    monkeypatch.setenv("TILEC_PERSISTENT_SMS", str(ctas))
    gpu_lse_check(dtype, 64, bh, hkv, sq, sk, causal, sq + sk)
    if dtype == "f16":
        _assert_every_tile_right(False, monkeypatch)


def test_the_ticket_has_a_word_of_its_own(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`TILEC_ATTN_CHAIN_SPLIT=dyn`: the producer's ticket (`g.TicketTake`) and the consumers' read of it live in
    the emitter's handoff area (`EmitterCore.handoff_word`: the first word after the GPU IR's buffers), and the
    consumers' split flag, like every scratch use, after it, so the role-scratch check (hrev20) passes; with the
    ticket put back in the scratch's first word as hattn5 had it (sabotaged `handoff_word`), the check refuses
    the kernel as the race it was."""
    import re

    from tilelang.backend.codegen.core import EmitterCore
    from tilelang.source import DUMMY_SPAN

    _env(monkeypatch, None)
    monkeypatch.setenv("TILEC_ATTN_CHAIN_TAIL", "0")
    monkeypatch.setenv("TILEC_ATTN_CHAIN_SPLIT", "dyn")
    monkeypatch.setenv("TILEC_ATTN_SPLIT_EDGE", "0")
    gk = lower_gpu(_std("flash_attention_lse", "f16", 64, 64, 64), "sm_90a", _short(LSE, 64))
    ll = emit_llvm_text(gk, gk.facts, "")[0]
    base = gk.smem_bytes
    words = {m.group(1) for m in re.finditer(rf"(%t\d+) = getelementptr i8, ptr addrspace\(3\) @smem, i32 {base}\b", ll)}
    ticket = [ln for ln in ll.splitlines() if re.search(r"(store|load) i32.* addrspace\(3\) %t\d+, align 4", ln)
              and re.search(r"addrspace\(3\) (%t\d+), align", ln).group(1) in words]  # type: ignore[union-attr]
    assert len(ticket) == 2 and "store" in ticket[0] + ticket[1] and "load" in ticket[0] + ticket[1]
    flag = [ln for ln in ll.splitlines() if re.search(r"(store|load) i8 .*@smem, i32 (\d+)\)", ln)]
    assert flag and all(f"@smem, i32 {base + 16})" in ln for ln in flag)  # the split flag: the scratch's first word
    offsets = {int(x) for x in re.findall(r"@smem, i32 (\d+)\)", ll)}
    assert min(offsets) >= base + 16  # no scratch use below the handoff area's end

    def in_scratch(em, bar):  # type: ignore[no-untyped-def]
        em.need_smem(4, DUMMY_SPAN)
        return em.scratch

    monkeypatch.setattr(EmitterCore, "handoff_word", in_scratch)
    with pytest.raises(AssertionError, match="used by two warp roles"):
        emit_llvm_text(gk, gk.facts, "")
