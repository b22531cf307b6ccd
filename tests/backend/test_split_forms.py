"""`TILEC_ATTN_SPLIT_FORMS=1` (`backend/split_form.py`): the persistent
attention walk's key split as a second compiled form, picked at launch.

- The kernel a launch gets first is the kernel without the split, byte for
  byte (its LLVM is `TILEC_ATTN_SPLIT=0`'s, D = 64 and 128), with a request:
  the walk's own scalar ops for `Split.on`.
- The host's evaluation of that request (`SplitForm.splits`) agrees with
  the kernel's own walk (`TILEC_ATTN_SPLIT=1`, evaluated from its scalar
  ops as `test_split_plan` does) on thousands of launches; the split form
  covers every key block of every tile once where it is picked, and every
  tile (whole, single tiles) where it is not (a wrong pick is slower, never
  wrong).
- The runtime (`CudaDevice._choose`, `_variant` stubbed) compiles the split
  form only for launches whose walk splits, once a shape; the Python API's
  fast launcher falls back to the general path when a scalar the plan reads
  changes.
- Both forms in llsim against NumPy (causal S_q != S_k, GQA, LSE, keys not
  a multiple of the block, D = 64 and 128), and through ptxas for sm_90a.
"""

from __future__ import annotations

import itertools
import math
import shutil
from collections import defaultdict
from types import SimpleNamespace

import numpy as np
import pytest
from ptxas_report import assemble
from test_attention_pipeline import _facts, _run_lse_and_check, _std, _user
from test_attention_split import _key_loops, gpu_lse_check
from test_split_plan import _spied, _walk

from tilelang.backend import emit_llvm_text, emit_ptx, lower_gpu
from tilelang.backend.gpu.printer import print_gpu_kernel

LSE = {**_facts("oqkv", 3), **_facts(["lse"], 2)}


def _env(monkeypatch, forms: str | None = "1", edge: str = "0") -> None:  # type: ignore[no-untyped-def]
    for var in ("TILEC_ATTN_CHAIN", "TILEC_ATTN_PINGPONG", "TILEC_ATTN_SCHEDULE", "TILEC_ATTN_OSTORE",
                "TILEC_ATTN_QDOUBLE", "TILEC_ATTN_KVFIRST", "TILEC_ATTN_WALK", "TILEC_ATTN_ROTATE",
                "TILEC_ATTN_SPLIT", "TILEC_ATTN_SPLIT_WIDE"):
        monkeypatch.delenv(var, raising=False)
    if forms is None:
        monkeypatch.delenv("TILEC_ATTN_SPLIT_FORMS", raising=False)
    else:
        monkeypatch.setenv("TILEC_ATTN_SPLIT_FORMS", forms)
    monkeypatch.setenv("TILEC_ATTN_SPLIT_EDGE", edge)
    monkeypatch.setenv("TILEC_ATTN_ONCE", "0")  # (the once variant's request beside the tail's: test_attention_once)


def _llvm(k, facts) -> str:  # type: ignore[no-untyped-def]
    gk = lower_gpu(k, "sm_90a", facts)
    return emit_llvm_text(gk, gk.facts, "")[0]


@pytest.mark.heavy  # (htier1: ~7 CPU-s, 12 LLVM emits; the forms' default test is causal_sq_lt_sk's simulation, the
# refusal's test_a_bad_setting_of_the_forms_is_refused; the tiers at SHAPES)
def test_the_first_form_is_the_kernel_without_the_split(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """With the forms on, std's prefill kernels (D = 64 and 128, with and without the LSE) and a user's own
    loop compile without the split's code, their LLVM that of `TILEC_ATTN_SPLIT=0` (at D = 128 the default
    kernel's), and ask for the split form; the fact gives the split walk alone (no copy of the whole tiles'
    walk beside it). The chained short-keys variant asks for nothing. Unset, nothing changes."""
    cases = [(_std("flash_attention", "f16", 128, 128, 64), _facts("oqkv", 3), 64),
             (_std("flash_attention_lse", "bf16", 128, 128, 128), LSE, 128),
             (_std("flash_attention_lse", "f16", 64, 64, 64), LSE, 64),
             (_user(128, 64, 64), _facts("oqkv", 2), 64)]
    for n, (k, facts, d) in enumerate(cases):
        _env(monkeypatch, "0")
        monkeypatch.setenv("TILEC_ATTN_SPLIT", "0")
        off = _llvm(k, facts)
        _env(monkeypatch, None)
        default = _llvm(k, facts)
        default_gk = lower_gpu(k, "sm_90a", facts)
        _env(monkeypatch, "1")
        gk = lower_gpu(k, "sm_90a", facts)
        assert gk.split is not None  # (unset: no request but the causal tail variant's, `attention_tail`)
        assert default_gk.split is None or [kind for kind, _ in default_gk.split.ons] == ["tail"]
        assert _llvm(k, facts) == off and "splitws" not in off
        text = print_gpu_kernel(gk)
        assert "split.save" not in text and f"split-form @{gk.split.param}" in text
        assert gk.split.reads() == (("causal",) if n < 3 else ())  # (the user's loop: no mask)
        form = lower_gpu(k, "sm_90a", gk.split.refine(facts))
        ftext = print_gpu_kernel(form)
        assert form.split is None and "split walk single)" in ftext
        consumer = ftext[ftext.index("role consumer"):ftext.index("role producer")]
        assert "split.save" in consumer and "split.load" in consumer and " * " in consumer  # (the fused merge)
        assert consumer.count("for %j") == 1 and "if %split" not in consumer  # the pieces' walk only
        if d == 128:  # the default kernel at D = 128 has no split: the forms' first is it
            assert off == default
    from test_attention_chain import _short

    _env(monkeypatch, "1")
    assert lower_gpu(_std("flash_attention", "f16", 128, 128, 64), "sm_90a",
                     _short(_facts("oqkv", 3), 1024)).split is None


def test_a_bad_setting_of_the_forms_is_refused(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A value the switch does not take is an error naming it (split from the heavy test above, htier1)."""
    monkeypatch.setenv("TILEC_ATTN_SPLIT_FORMS", "yes")
    with pytest.raises(ValueError, match="TILEC_ATTN_SPLIT_FORMS"):
        lower_gpu(_std("flash_attention", "f16", 128, 128, 64), "sm_90a", _facts("oqkv", 3))


SHAPES = [  # BH, BHkv, S_q, S_k, causal
    (2, 2, 300, 200, False), (1, 1, 448, 512, False), (4, 2, 130, 300, False), (3, 1, 1000, 700, False),
    (8, 8, 256, 1100, False), (5, 5, 384, 999, False), (4, 2, 130, 190, True), (2, 2, 200, 150, True),
    (2, 1, 640, 640, True), (1, 1, 129, 65, False), (6, 3, 700, 900, True),
]
CTAS = [1, 2, 3, 4, 5, 7, 8, 13, 31, 64, 132]


# The tiers (tests/README.md, htier1): `TILEC_ATTN_SPLIT_FORMS` is off by default and lost where measured (RESULTS.md,
# hattn3 2026-12-06: -1.2 % at D = 128, h15u; "no win" at D = 64, call 9837's rows), so its one default test is the
# simulation causal_sq_lt_sk below (the host's pick, the single tiles' walk and merge against NumPy);
# `TILEC_ATTN_SPLIT_PAIRS` (on inside the forms) keeps test_the_pairs_form_covers_every_key_block_once[2-1-576-576];
# the refusals stay (test_a_bad_setting_of_the_forms_is_refused, test_the_two_pass_merge_in_the_default_kernel:
# `TILEC_ATTN_SPLIT_MERGE`'s one test). Every other test of the forms is `heavy`.
HEAVY = pytest.mark.heavy
SHAPES = [pytest.param(s, marks=HEAVY) for s in SHAPES]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "-".join(map(str, s)))
def test_the_host_plan_is_the_walks(shape, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """For every launch (shape, CTAs): the host's `SplitForm.splits` says split exactly where the kernel with
    the split inside (`TILEC_ATTN_SPLIT=1`, today's) splits some tile; where it does, the split form's walk
    (evaluated from its own scalar ops) cuts the same tiles into the same key ranges, each counter gets its
    size's arrivals and the records are unique; where it does not, the split form (were it launched) still
    runs every tile once, whole."""
    bh, hkv, sq, sk, causal = shape
    facts = _facts("oqkv", 3)
    _env(monkeypatch, "0")
    inside, inside_pos = _spied(monkeypatch, facts)
    _env(monkeypatch, "1")
    base, base_pos = _spied(monkeypatch, facts)
    assert base.split is not None
    form, form_pos = _spied(monkeypatch, base.split.refine(facts))
    tiles_total = bh * math.ceil(sq / 128)
    dims = {"o": (bh, sq, 64), "q": (bh, sq, 64), "k": (hkv, sk, 64), "v": (hkv, sk, 64)}
    picked = 0
    for P in CTAS:
        P = min(P, tiles_total)
        want: dict[tuple, list] = defaultdict(list)
        for c in range(P):
            for t, lo, hi, _slot, _group, size in _walk(inside, inside_pos, c, P, bh, hkv, sq, sk, causal):
                want[t].append((lo, hi, size))
        splits = any(size is not None for v in want.values() for _, _, size in v)
        kind = base.split.splits(dims, {"causal": causal, "scale": 0.1}, P)
        assert (kind == "single") == splits and kind in ("", "single", "pairs"), (P, shape, kind)
        got: dict[tuple, list] = defaultdict(list)
        arrivals: dict[int, int] = defaultdict(int)
        slots = []
        for c in range(P):
            for t, lo, hi, slot, group, size in _walk(form, form_pos, c, P, bh, hkv, sq, sk, causal):
                got[t].append((lo, hi, size))
                if size is not None:
                    arrivals[group] += 1
                    slots.append(slot)
        whole = {t: r[1:3] for c in range(P) for r in _walk(base, base_pos, c, P, bh, hkv, sq, sk, causal)
                 for t in [r[0]]}
        assert set(got) == set(want) == set(whole), P
        # every tile's key blocks once: its pieces consecutive from the whole tile's first block to its last
        for t, v in got.items():
            ranges = sorted((lo, hi) for lo, hi, _ in v)
            lo0, hi0 = whole[t]
            assert ranges[0][0] == lo0 and ranges[-1][1] == max(hi0, lo0), (P, t, ranges)
            assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges)), (P, t, ranges)
            assert len(v) == 1 or v[0][2] == len(v), (P, t, v)  # a split tile: as many pieces as its counter's size
        assert all(n == next(s for v in got.values() for _, _, s in v if s) for n in arrivals.values())
        assert len(slots) == len(set(slots))
        if splits:  # the split form's pieces are the in-kernel split's
            picked += 1
            assert {t: sorted(v) for t, v in got.items()} == {t: sorted(set(v)) for t, v in want.items()}, P
        else:  # (no pick; where the split form's single tiles would split, a wrong pick still covers each once)
            assert all(len(v) == 1 for v in got.values()) or causal, P
    assert picked or causal or tiles_total <= 2  # (the split is exercised where it should be)


PAIR_SHAPES = [(2, 2, 640, 640), (2, 1, 576, 576), (3, 3, 1000, 1200), (4, 2, 300, 700), (1, 1, 1300, 1300),
               (2, 2, 200, 150)]  # BH, BHkv, S_q, S_k (causal): odd and even query blocks, S_q < S_k, rows with no key
# (heavy but 2-1-576-576: GQA, an even count of query blocks, picked on some CTA counts; the tiers above)
PAIR_SHAPES = [s if s == (2, 1, 576, 576) else pytest.param(s, marks=HEAVY) for s in PAIR_SHAPES]


@pytest.mark.parametrize("shape", PAIR_SHAPES, ids=lambda s: "-".join(map(str, s)))
def test_the_pairs_form_covers_every_key_block_once(shape, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The pairs form's walk (`attention_tiles._pair_piece`, evaluated from its scalar ops) on causal launches of
    1-13 CTAs: every tile's key blocks once in each of its groups (a split tile's segments, some empty, consecutive
    from its first block to its last; a middle tile paired with itself has two groups, both whole: the whole walk
    stores it twice too), each group's counter gets its size's arrivals, records and counters unique and within what
    the runtime allocates (two a piece: `split:2`, 2 x SPLIT_ROUNDS records a CTA); it splits exactly where the
    first form's plan says "pairs"."""
    from tilelang.backend.codegen.split import SPLIT_ROUNDS

    bh, hkv, sq, sk = shape
    facts = _facts("oqkv", 3)
    _env(monkeypatch, "1")
    base, base_pos = _spied(monkeypatch, facts)
    form, form_pos = _spied(monkeypatch, base.split.refine(facts, "pairs"))
    dims = {"o": (bh, sq, 64), "q": (bh, sq, 64), "k": (hkv, sk, 64), "v": (hkv, sk, 64)}
    picked = 0
    for P in CTAS[:8]:
        P = min(P, bh * math.ceil(sq / 128))
        kind = base.split.splits(dims, {"causal": True}, P)
        whole = {r[0]: r[1:3] for c in range(P) for r in _walk(base, base_pos, c, P, bh, hkv, sq, sk, True)}
        got: dict[tuple, list] = defaultdict(list)
        arrivals: dict[int, list[int]] = defaultdict(list)
        slots = []
        for c in range(P):
            for t, lo, hi, slot, group, size in _walk(form, form_pos, c, P, bh, hkv, sq, sk, True):
                got[t].append((lo, hi, group))
                if size is not None:
                    arrivals[group].append(size)
                    slots.append(slot)
        assert set(got) == set(whole), P
        for t, v in got.items():
            lo0, hi0 = whole[t]
            groups: dict[object, list] = defaultdict(list)
            for lo, hi, gr in v:
                groups[gr].append((lo, hi))
            for gr, ranges in groups.items():
                ranges.sort()
                if gr is None:  # whole (the middle tile of a pair twice)
                    assert all(r[0] == lo0 and r[1] in (hi0, max(hi0, lo0)) for r in ranges), (P, t, ranges)
                else:
                    assert ranges[0][0] == lo0 and ranges[-1][1] == max(hi0, lo0), (P, t, ranges)
                    assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges)), (P, t, ranges)
        assert all(len(v) == v[0] for v in arrivals.values()), (P, dict(arrivals))
        assert len(slots) == len(set(slots)) and all(0 <= x < 2 * SPLIT_ROUNDS * P for x in slots), (P, slots)
        assert all(0 <= gr < 2 * P for gr in arrivals), (P, list(arrivals))
        assert bool(arrivals) == (kind == "pairs"), (P, kind)
        picked += kind == "pairs"
    assert picked or shape == (2, 2, 200, 150)  # (the split is exercised where it should be)


@pytest.mark.heavy  # (the forms' default test: causal_sq_lt_sk, whose launch the host's plan picks; the tiers above)
def test_the_runtime_compiles_the_split_form_only_where_a_launch_splits(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`CudaDevice._choose` with `_variant` stubbed: a launch whose walk splits gets the variant with the fact
    (its key: the base's and `SplitForm.key()`), one that does not keeps the base; the plan is evaluated once a
    launch shape (memoised); the fast launcher's guards hold the plan's scalars (`causal`)."""
    from tilelang.ir import nodes as ir
    from tilelang.runtime.cuda import CudaDevice
    from tilelang.runtime.cuda_fast import FastLaunch

    _env(monkeypatch, "1", edge="3")  # (the H200's estimate: S = 1024 does not split on 132 CTAs)
    monkeypatch.delenv("TILEC_PERSISTENT_SMS", raising=False)
    k = _std("flash_attention", "f16", 128, 128, 64)
    facts = _facts("oqkv", 3)
    form = lower_gpu(k, "sm_90a", facts).split
    dev = CudaDevice.__new__(CudaDevice)
    dev.ctx = SimpleNamespace(info=SimpleNamespace(sm_count=132, max_smem_optin=227 * 1024))
    seen: list[tuple[object, ...]] = []

    def variant(pk, key, fs, span):  # type: ignore[no-untyped-def]
        seen.append(key)
        return SimpleNamespace(short=None, persistent=1, split=None if fs["o"].split_walk else form), f"fn{len(key)}"


    dev._variant = variant  # type: ignore[method-assign]
    pk = SimpleNamespace(ir=k)
    def args(bh: int, s: int, causal: bool) -> list[object]:
        t = SimpleNamespace(shape=(bh, s, 64))
        return [t, t, t, t, 0.125, causal]

    for bh, s, causal, kind in ((256, 4096, False, "single"), (256, 1024, False, ""), (256, 4096, True, "pairs"),
                                (256, 1024, True, "")):
        for _ in range(2):  # (the plan evaluated once a launch shape)
            seen.clear()
            abi, fn, asked = dev._choose(pk, ("base",), facts, args(bh, s, causal), None, (bh, s // 128))
            assert asked is form and (fn == "fn2") == bool(kind) and (abi.split is None) == bool(kind)
            assert seen == ([("base",), ("base", form.key(kind))] if kind else [("base",)])
    assert len(form._memo) == 4
    assert dev._pick(pk, ("base",), facts, args(256, 4096, False), None)[1] == "fn1"  # (no grid: the first form)
    assert isinstance(k.params[-1], ir.ScalarParam) and form.reads() == ("causal",)
    # (a FastLaunch built for causal=False refuses causal=True before it touches anything)
    fl = FastLaunch.__new__(FastLaunch)
    fl._guards = ((5, False),)
    assert fl(args(2, 4096, True), None) is False


# `TILEC_ATTN_SPLIT_FORMS` is off by default (the GPU runs neither form unless asked), so the default run keeps
# one simulation (htier1: pairs_wide_middle heavy too, the pairs' walk in test_the_pairs_form_covers_every_key_block_once
# [2-1-576-576]; the tiers at the top), with the benchmark's BM = 128 (two consumer warpgroups): causal_sq_lt_sk (the
# single tiles' form: GQA, causal S_q < S_k, keys not a multiple of the block, the last tile in 3 pieces) and
# pairs_wide_middle (the pairs form at D = 128: GQA, a middle tile paired with itself, a query block that sees no
# key). The rest are `heavy`: the forms' walks at every shape are
# test_the_host_plan_is_the_walks / test_the_pairs_form_covers_every_key_block_once, D = 128's kernels assemble
# in test_the_split_form_assembles_with_its_key_loop_in_registers, and each runs on the GPU (GPU_CASES).
CASES = [  # BM, D, BH, BHkv, S_q, S_k, causal, CTAs, the form the plan picks ("": the first), records written
    pytest.param(64, 64, 2, 1, 172, 200, False, 4, "single", 4, marks=HEAVY),  # GQA, keys not a multiple of 64: 6
    # tiles on 4, the last 2 split (heavy: BM = 64's single tiles form; causal_sq_lt_sk crosses the same edges)
    (128, 64, 2, 1, 130, 200, True, 3, "single", 3),   # causal S_q < S_k, GQA, both query blocks 4 key blocks: single
    # tiles, 4 on 3 CTAs, the last in 3 pieces
    pytest.param(128, 128, 2, 1, 300, 300, False, 4, "single", 4, marks=HEAVY),  # D = 128, GQA: 6 tiles on
    # 4 CTAs (heavy: D = 128's single tiles form, as wide_causal_even; GQA: causal_sq_lt_sk)
    pytest.param(128, 128, 2, 2, 130, 190, True, 3, "single", 3, marks=HEAVY),  # D = 128 causal, S_k > S_q, the
    # diagonal's mask in the last piece (heavy: causal_sq_lt_sk's at D = 64)
    pytest.param(128, 128, 1, 1, 512, 128, False, 2, "", 0, marks=HEAVY),  # 4 tiles on 2 CTAs, none left over: the
    # first form (heavy: its LLVM is the default kernel's, test_the_first_form_is_the_kernel_without_the_split; a
    # wrong pick's walk covers every tile once in test_the_host_plan_is_the_walks)
    # the pairs form: the last round's pairs cut along both tiles' keys
    pytest.param(64, 64, 2, 1, 320, 384, True, 4, "pairs", 8, marks=HEAVY),  # GQA, S_q < S_k, 5 query blocks: a
    # middle tile paired with itself (heavy: pairs_wide_middle's form at BM = 64, a middle tile and GQA too)
    pytest.param(128, 128, 2, 1, 384, 256, True, 3, "pairs", 6, marks=HEAVY),  # D = 128, GQA, 3 query blocks (a middle tile), S_k < S_q:
    # the first query block sees no key
    pytest.param(128, 64, 1, 1, 448, 448, True, 4, "pairs", 8, marks=HEAVY),  # 4 query blocks, the last a partial
    # one: 2 pairs on 4 CTAs (heavy: pairs_wide_middle's form at D = 64; a partial block: causal_sq_lt_sk)
]


@pytest.mark.parametrize(("bm", "d", "bh", "hkv", "sq", "sk", "causal", "ctas", "kind", "records"), CASES,
                         ids=["gqa_edge", "causal_sq_lt_sk", "wide_gqa", "wide_causal_even", "none_left",
                              "pairs_gqa_middle", "pairs_wide_middle", "pairs_edge"])
def test_both_forms_in_the_simulator(bm: int, d: int, bh: int, hkv: int, sq: int, sk: int, causal: bool, ctas: int,
                                     kind: str, records: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`flash_attention_lse` in llsim against NumPy (records NaN until written), the form the plan picks for the
    launch, and the records its pieces wrote (the pairs form: two a piece, one for each tile of its pair: some
    empty, a range of none of that tile's keys); where it picks the first form, the single tiles' split form too (a
    wrong pick: single tiles, still right)."""
    import llsim

    monkeypatch.setattr(llsim, "UNDEF_FLOAT", "nan")
    _env(monkeypatch, "1")
    k = _std("flash_attention_lse", "f16", bm, 64, d)
    gk = lower_gpu(k, "sm_90a", LSE)
    dims = {"o": (bh, sq, d), "lse": (bh, sq), "q": (bh, sq, d), "k": (hkv, sk, d), "v": (hkv, sk, d)}
    assert gk.split is not None and gk.split.splits(dims, {"causal": causal}, ctas) == kind
    dev = _run_lse_and_check(k, gk.split.refine(LSE, kind) if kind else LSE, (ctas, 1), bh, hkv, sq, sk, d, causal, 7,
                             q_scale=2.0)
    words = np.frombuffer(dev.split_records, np.uint32) if dev.split_records else np.zeros(0, np.uint32)
    assert (words != 0xFFFFFFFF).sum() == records * 2 * bm * (4 + d // 2)  # a record: each consumer thread's words
    if not kind:
        _run_lse_and_check(k, gk.split.refine(LSE), (ctas, 1), bh, hkv, sq, sk, d, causal, 8, q_scale=2.0)


def test_the_two_pass_merge_in_the_default_kernel(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`TILEC_ATTN_SPLIT_MERGE=2` also in the kernel with the split inside (D = 64, not the forms); "1" and
    unset keep the one-pass merge (the default kernel's LLVM)."""
    _env(monkeypatch, None)
    k = _std("flash_attention_lse", "f16", 64, 64, 64)
    one = _llvm(k, LSE)
    monkeypatch.setenv("TILEC_ATTN_SPLIT_MERGE", "1")
    assert _llvm(k, LSE) == one
    monkeypatch.setenv("TILEC_ATTN_SPLIT_MERGE", "2")
    text = print_gpu_kernel(lower_gpu(k, "sm_90a", LSE))
    assert "split.load" in text and " before " in text and " after " in text and _llvm(k, LSE) != one
    monkeypatch.setenv("TILEC_ATTN_SPLIT_MERGE", "3")
    with pytest.raises(ValueError, match="TILEC_ATTN_SPLIT_MERGE"):
        lower_gpu(k, "sm_90a", LSE)


@pytest.mark.heavy
def test_the_two_pass_merge_in_the_default_kernel_in_the_simulator(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """... in llsim against NumPy with 3 pieces over 2 rounds of records (NaN until written). (heavy: off by
    default in this kernel; the two-pass merge runs in the forms' simulations, causal_sq_lt_sk and
    pairs_wide_middle, where "auto" takes it, and the one-pass merge in test_attention_split's.)"""
    import llsim

    monkeypatch.setattr(llsim, "UNDEF_FLOAT", "nan")
    _env(monkeypatch, None)
    monkeypatch.setenv("TILEC_ATTN_SPLIT_MERGE", "2")
    k = _std("flash_attention_lse", "f16", 64, 64, 64)
    dev = _run_lse_and_check(k, LSE, (4, 1), 1, 1, 448, 320, 64, False, 11, q_scale=2.0)
    words = np.frombuffer(dev.split_records, np.uint32)
    assert (words != 0xFFFFFFFF).sum() == 3 * 4 * 128 * (4 + 32)  # 3 tiles in 4 pieces, 128 threads' records


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas")
# (heavy: bf16 at D = 64 and f16 at D = 128 single, the kernels of the default cases but for the element type's
# conversions; f16-64-single and bf16-128-single hold the same bounds. Also heavy since the 2026-12-07 17:16
# session (hci5, the lead's call; ~7 CPU-s each cold): bf16-128-single and f16-64-pairs, so that the default run
# assembles one form at each D: single at D = 64 (f16), pairs at D = 128 (bf16). htier1: those two too, the forms'
# one default test being causal_sq_lt_sk's simulation; the tiers at the top)
@pytest.mark.parametrize(("dt", "d", "kind"), [pytest.param("f16", 64, "single", marks=pytest.mark.heavy),
                                              pytest.param("bf16", 64, "single", marks=pytest.mark.heavy),
                                              pytest.param("f16", 128, "single", marks=pytest.mark.heavy),
                                              pytest.param("bf16", 128, "single", marks=pytest.mark.heavy),
                                              pytest.param("f16", 64, "pairs", marks=pytest.mark.heavy),
                                              pytest.param("bf16", 128, "pairs", marks=pytest.mark.heavy)])
def test_the_split_form_assembles_with_its_key_loop_in_registers(dt: str, d: int, kind: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The benchmark's kernels (128 x 128) in the split form through ptxas for sm_90a: no wgmma serialised, and
    (nvdisasm) no STL / LDL in the key loop, which has the default kernel's length within 4 instructions and its
    HGMMAs (ptxas 13.0: 641 = 641 at D = 64, the default's whole tiles' loop; 688 against 686 at D = 128). With
    the one-pass merge (two accumulators in registers, `TILEC_ATTN_SPLIT_MERGE=1`) the loops were 662 and 718,
    and the rotated D = 128 kernel with the split beside the whole tiles' copy (`TILEC_ATTN_SPLIT_WIDE=1`, 5.7 %
    slower on the H200) 703 / 729. No spills at D = 64; at D = 128 36 B, the producer's walk scalars at its 24
    registers (the consumers at 240; at 40 / 232 no spills but a loop of 739), 44 B with the fast walk's
    multipliers (the tile boundary's defaults at D = 128, `attention_tiles.BOUNDARY_D`). The pairs form: 641 at
    D = 64, no spills; 689 at D = 128, 80 B (the pair's other tile's bounds)."""
    import subprocess
    import tempfile
    from pathlib import Path

    from gpu_probe import nvdisasm_path

    k = _std("flash_attention", dt, 128, 128, d)
    facts = _facts("oqkv", 3)
    sass: list[str] = []
    for forms in (None, "1"):
        _env(monkeypatch, forms, edge="3")
        ptx = emit_ptx(k, "sm_90a", lower_gpu(k, "sm_90a", facts).split.refine(facts, kind) if forms else facts)
        with tempfile.TemporaryDirectory() as t:
            cubin = Path(t) / "k.cubin"
            r = assemble(ptx, "sm_90a", cubin)
            if forms:
                assert "atom.acq_rel.gpu" in ptx and "C7515" not in r and "serialized" not in r, r.text
                assert r.max_spill_stores <= (0 if d == 64 else 44 if kind == "single" else 80), r.text
            tool = nvdisasm_path()
            if tool is None:
                return
            sass.append(subprocess.run([tool, "-c", str(cubin)], check=True, capture_output=True, text=True).stdout)
    default = min((x for x in _key_loops(sass[0]) if len(x) < 1500), key=len)  # (D = 64: the whole tiles' copy)
    loops = [x for x in _key_loops(sass[1]) if len(x) < 1500]
    assert len(loops) == 1 and sum("HGMMA" in x for x in loops[0]) == sum("HGMMA" in x for x in default) >= 8
    assert abs(len(loops[0]) - len(default)) <= 4, (len(loops[0]), len(default))
    assert not [x for x in loops[0] if x.startswith(("STL", "LDL"))], "a spill in the key loop"


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas")
@pytest.mark.heavy  # (the forms' one default test is causal_sq_lt_sk's simulation; the first form's LLVM is the
# default kernel's at D = 128 in test_the_first_form_is_the_kernel_without_the_split, heavy too; the tiers at SHAPES)
def test_the_first_form_assembles_to_the_default_kernel(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """D = 128 (the benchmark's f16 kernel, 128 x 128): the forms' first kernel assembles (ptxas 13.0, sm_90a)
    to the default kernel's cubin byte for byte, so its key loop (nvdisasm) is the default's."""
    import tempfile
    from pathlib import Path

    k = _std("flash_attention", "f16", 128, 128, 128)
    cubins = []
    for forms in (None, "1"):
        _env(monkeypatch, forms, edge="3")
        with tempfile.TemporaryDirectory() as t:
            path = Path(t) / "k.cubin"
            assemble(emit_ptx(k, "sm_90a", _facts("oqkv", 3)), "sm_90a", path)
            cubins.append(path.read_bytes())
    assert len(cubins[0]) > 10_000 and cubins[0] == cubins[1]


# dtype, D, BH, BHkv, S_q, S_k, causal, CTAs, the plan's pick ("": the first form): std's flash_attention_lse
# (128 x 128) with the forms on (the estimate's edge 0)
GPU_CASES = [
    ("f16", 128, 3, 1, 640, 1100, False, 2, "single"),  # GQA, keys not a multiple of 128: 15 tiles on 2 CTAs
    ("bf16", 128, 4, 2, 130, 1200, True, 3, "single"),  # causal S_q < S_k, equal single tiles: 8 on 3
    ("bf16", 128, 2, 2, 1000, 1300, True, 3, "pairs"),  # causal, uneven: 8 pairs on 3, the last 2 cut along both tiles
    ("f16", 128, 2, 2, 768, 1100, False, 3, ""),        # 12 tiles on 3 CTAs, none left over
    ("f16", 64, 5, 5, 1000, 1000, False, 4, ""),        # D = 64: 40 tiles on 4, none left over
    ("bf16", 64, 3, 1, 1000, 1500, False, 7, "single"),  # D = 64, GQA: 24 tiles on 7, the last 3 split
    ("f16", 64, 2, 2, 1000, 1000, True, 3, "pairs"),    # D = 64 causal: 8 pairs on 3
    ("f16", 64, 3, 1, 1100, 1300, True, 4, "pairs"),    # D = 64 causal, GQA, 9 query blocks (a middle tile), S_q < S_k
]


@pytest.mark.gpu
@pytest.mark.parametrize("case", GPU_CASES, ids=lambda c: "-".join(map(str, c)))
def test_the_forms_on_the_gpu(case, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """With the forms on, each launch's form (the plan's pick, checked on the host first) against SDPA in f32 and
    the log-sum-exp, launched three times with the same bits each time (`gpu_lse_check`)."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no CUDA device")
    dtype, d, bh, hkv, sq, sk, causal, ctas, kind = case
    _env(monkeypatch, "1")
    monkeypatch.setenv("TILEC_PERSISTENT_SMS", str(ctas))
    plan = lower_gpu(_std("flash_attention_lse", dtype, 128, 128, d), "sm_90a", LSE).split
    dims = {"o": (bh, sq, d), "lse": (bh, sq), "q": (bh, sq, d), "k": (hkv, sk, d), "v": (hkv, sk, d)}
    assert plan is not None and plan.splits(dims, {"causal": causal}, min(ctas, bh * -(-sq // 128))) == kind
    gpu_lse_check(dtype, d, bh, hkv, sq, sk, causal, sq + sk + d)
