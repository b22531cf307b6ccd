"""`TILEC_ATTN_CHAIN_SPLIT=1` (`passes/attention_csplit.py`): the chained short
keys' variant with its last round split along the keys, walk A (the chained
walk over the rounds of whole tiles) then walk B (the pieces, unchained: save,
arrival, merge); and `TILEC_ATTN_CHAIN_TAIL=1`, walk B the causal walk's tail
(`attention_tail`'s single tiles, heaviest first) chained on from walk A. Where it applies (the D = 64 short keys' variant only; off
or unset every kernel byte for byte as before); in the simulator against NumPy
(records NaN until written, undefined floats NaN) with the records the pieces
wrote counted: a last round of two tiles and of one, none left over (a full
last round), causal pairs (no split), two consumer warpgroups with
grouped-query heads, more CTAs than tiles (walk A runs nothing), keys not a
multiple of the block; the benchmark's kernel through ptxas (no spills, no key
loop touching local memory); on the GPU against SDPA and at the benchmark's
scale."""

from __future__ import annotations

import dataclasses
import shutil

import pytest
from ptxas_report import assemble
from test_attention_pipeline import _facts, _std
from test_attention_split import _run, gpu_lse_check

from tilelang.backend import emit_llvm_text, emit_ptx, lower_gpu
from tilelang.backend.gpu.printer import print_gpu_kernel

LSE = {**_facts("oqkv", 3), **_facts(["lse"], 2)}
SETTINGS = ("TILEC_ATTN_CHAIN", "TILEC_ATTN_ROTATE", "TILEC_ATTN_PINGPONG", "TILEC_ATTN_SCHEDULE", "TILEC_ATTN_OSTORE",
            "TILEC_ATTN_QDOUBLE", "TILEC_ATTN_KVFIRST", "TILEC_ATTN_FASTDIV", "TILEC_ATTN_QEARLY", "TILEC_ATTN_SPLIT",
            "TILEC_ATTN_XROT", "TILEC_ATTN_TAIL", "TILEC_ATTN_SPLIT_FORMS", "TILEC_ATTN_SHORT_D", "TILEC_ATTN_CHAIN_TAIL")


def _env(monkeypatch, on: str | None = "1", edge: str = "0", var: str = "TILEC_ATTN_CHAIN_SPLIT") -> None:  # type: ignore[no-untyped-def]
    """Every switch unset, `var` set to `on` (None: unset too); for the split's tests the tail off (on by default:
    with both the short keys' variant is the split's anyway, `test_both_switches_make_two_variants`)."""
    for name in (*SETTINGS, "TILEC_ATTN_CHAIN_SPLIT"):
        monkeypatch.delenv(name, raising=False)
    if var != "TILEC_ATTN_CHAIN_TAIL":
        monkeypatch.setenv("TILEC_ATTN_CHAIN_TAIL", "0")
    if on is not None:
        monkeypatch.setenv(var, on)
    monkeypatch.setenv("TILEC_ATTN_SPLIT_EDGE", edge)
    monkeypatch.setenv("TILEC_ATTN_ONCE", "0")  # (the once variant's request beside the tail's: test_attention_once)


def _short(facts, bn: int):  # type: ignore[no-untyped-def]
    """The facts the runtime compiles the short keys' variant with (K's rows <= 8 key blocks)."""
    return {**facts, "k": dataclasses.replace(facts["k"], rows_at_most=8 * bn)}


def _ll(k, facts) -> str:  # type: ignore[no-untyped-def]
    gk = lower_gpu(k, "sm_90a", facts)
    return emit_llvm_text(gk, gk.facts, "")[0]


@pytest.mark.heavy  # (htier1: 7 LLVM emits; the switch's default test is the next one, the tiers in tests/README.md)
def test_the_chained_split_changes_no_other_kernel(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """"0" and unset: the short keys' variant's LLVM as before; the long keys' kernel and the D = 128 variant (not
    chained) are the same LLVM whatever the switch (split from test_where_the_chained_split_applies, htier1)."""
    k64, k128 = _std("flash_attention_lse", "f16", 128, 128, 64), _std("flash_attention_lse", "f16", 128, 128, 128)
    _env(monkeypatch, None, "3")
    unset = {(k, short): _ll(k, _short(LSE, 128) if short else LSE) for k in (k64, k128) for short in (False, True)}
    _env(monkeypatch, "0", "3")
    assert _ll(k64, _short(LSE, 128)) == unset[(k64, True)]
    _env(monkeypatch, "1", "3")
    for (k, short), ll in unset.items():
        if (k, short) != (k64, True):
            assert _ll(k, _short(LSE, 128) if short else LSE) == ll


def test_where_the_chained_split_applies(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """On: the D = 64 short keys' variant keeps its chained walk and gets the pieces' walk after it (the
    save, arrival and merge; two tile loops a role); a bad value is an error that names the switch. (That
    nothing else changes: the heavy test above.)"""
    k64 = _std("flash_attention_lse", "f16", 128, 128, 64)
    _env(monkeypatch, "1", "3")
    on = print_gpu_kernel(lower_gpu(k64, "sm_90a", _short(LSE, 128)))
    assert on != print_gpu_kernel(lower_gpu(k64, "sm_90a", LSE))
    consumer = on[on.index("role consumer"):on.index("role producer")]
    producer = on[on.index("role producer"):]
    assert "%chained" in consumer and consumer.count("= for %round") == producer.count("= for %round") == 2
    walk_a, walk_b = consumer.split("= for %round")[1:]
    assert "%chained" in walk_a and "%chained" not in walk_b
    for op in ("split.save", "split.arrive", "split.load"):
        assert op in walk_b and op not in walk_a
    monkeypatch.setenv("TILEC_ATTN_CHAIN_SPLIT", "yes")
    with pytest.raises(ValueError, match="TILEC_ATTN_CHAIN_SPLIT='yes'"):
        lower_gpu(k64, "sm_90a", _short(LSE, 128))


# BM, BH, BHkv, S_q, S_k, causal, CTAs, pieces the last round runs (0: no split); D = 64, BN = 64, the short
# keys' variant (K's rows <= 512). two_tiles_left crosses the most edges (walk A of 2 chained rounds, then a
# last round of 2 tiles in 2 pieces each, keys not a multiple of the block). All heavy (the tiers, tests/README.md,
# htier1): `TILEC_ATTN_CHAIN_SPLIT` is opt-in and measured +0..+0.5 % (RESULTS.md h15x, hattn3 2026-12-06: within
# the runs' spread), and its one default test is test_where_the_chained_split_applies (where it applies, its two
# walks in the IR, its refusal); test_chained_tail_in_the_simulator runs walk B's machinery (the default tail's)
CASES = [
    pytest.param(64, 2, 2, 300, 200, False, 4, 2 * 2, marks=pytest.mark.heavy),
    # 9 tiles on 4 CTAs: the last round's one tile in 4 pieces (S_q a multiple of the block, S_k of 4 blocks)
    pytest.param(64, 1, 1, 576, 256, False, 4, 1 * 4, marks=pytest.mark.heavy),
    # 8 tiles on 4 CTAs: the last round full, nothing split (walk B runs no round)
    pytest.param(64, 1, 1, 512, 200, False, 4, 0, marks=pytest.mark.heavy),
    # causal: pairs, never split (walk B runs no round)
    pytest.param(64, 2, 2, 300, 200, True, 3, 0, marks=pytest.mark.heavy),
    # two consumer warpgroups, GQA (2 query heads a KV head): 6 tiles on 5 CTAs, the last one in 5 pieces
    pytest.param(128, 2, 1, 300, 500, False, 5, 1 * 5, marks=pytest.mark.heavy),
    # 3 tiles on 8 CTAs: no whole round (walk A runs nothing), each tile in 2 pieces of its 2 key blocks
    pytest.param(64, 1, 1, 130, 100, False, 8, 3 * 2, marks=pytest.mark.heavy),
    # 9 tiles on 8 CTAs: the last in 8 pieces of one block (the benchmark's cut), merged 3 records an iteration
    pytest.param(64, 1, 1, 576, 512, False, 8, 1 * 8, marks=pytest.mark.heavy),
]


@pytest.mark.parametrize(("bm", "bh", "hkv", "sq", "sk", "causal", "ctas", "pieces"), CASES,
                         ids=["two_tiles_left", "one_tile_left", "none_left", "causal_pairs", "two_warpgroups_gqa",
                              "no_whole_round", "eight_pieces"])
def test_chained_split_in_the_simulator(bm: int, bh: int, hkv: int, sq: int, sk: int, causal: bool, ctas: int,
                                        pieces: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The chained short keys' variant with the switch against NumPy in llsim, and the records its pieces
    wrote: a piece's record is 2 * BM consumer threads' words (2 of m, 2 of l, 32 of the accumulator). The
    merge takes 3 records an iteration (`attention_csplit.MERGE_UNROLL`), so the default case's 2 pieces
    leave one absent (weighted 0: weighted as read, the case fails)."""
    import llsim

    monkeypatch.setattr(llsim, "UNDEF_FLOAT", "nan")
    _env(monkeypatch)
    k = _std("flash_attention_lse", "f16", bm, 64, 64)
    facts = _short(LSE, 64)
    gk = lower_gpu(k, "sm_90a", facts)
    assert gk.persistent == 1 and gk.short is None and "%chained" in print_gpu_kernel(gk)
    written = _run(k, facts, (ctas, 1), bh, hkv, sq, sk, 64, causal, 5)
    assert written == pieces * 2 * bm * (4 + 32)


def _key_loops(ptx: str) -> list[list[str]]:
    """The SASS key loops (`test_attention_split._key_loops`) of `ptx`, or [] without nvdisasm."""
    from gpu_probe import nvdisasm_path
    from ptxas_report import sass
    from test_attention_split import _key_loops as loops

    if nvdisasm_path() is None:
        return []
    return [x for x in loops(sass(ptx, "sm_90a")) if len(x) < 1500 and sum("HGMMA" in y for y in x) >= 12]


def _assembles(monkeypatch, var: str, dt: str) -> str:  # type: ignore[no-untyped-def]
    """The benchmark's kernel (128 x 128, D = 64, the short keys' variant, the estimate's edge 3) under `var`
    through ptxas for sm_90a: no spills, no wgmma serialised; (nvdisasm, where it is) two key loops, walk A's and
    walk B's, neither touching local memory, walk A's within 4 instructions of the variant's without `var`.
    Returns the PTX."""
    _env(monkeypatch, "1", "3", var=var)
    facts = _short(_facts("oqkv", 3), 128)
    ptx = emit_ptx(_std("flash_attention", dt, 128, 128, 64), "sm_90a", facts)
    r = assemble(ptx, "sm_90a")
    assert "C7515" not in r and "serialized" not in r, r.text
    assert r.max_spill_stores == 0, r.text
    loops = _key_loops(ptx)
    if loops:
        assert len(loops) == 2, [len(x) for x in loops]
        assert not [x for body in loops for x in body if x.startswith(("STL", "LDL"))], "a spill in a key loop"
        _env(monkeypatch, "0", "3", var=var)
        (base,) = _key_loops(emit_ptx(_std("flash_attention", dt, 128, 128, 64), "sm_90a", facts))
        assert abs(len(loops[0]) - len(base)) <= 4, (len(loops[0]), len(base))
    return ptx


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas")
# (heavy, htier1: `TILEC_ATTN_CHAIN_SPLIT`'s one default test is test_where_the_chained_split_applies; the tail's
# walk B assembles by default in test_chained_tail_kernel_assembles)
@pytest.mark.parametrize("dt", [pytest.param("f16", marks=pytest.mark.heavy), pytest.param("bf16", marks=pytest.mark.heavy)])
def test_chained_split_kernels_assemble(dt: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`_assembles` under `TILEC_ATTN_CHAIN_SPLIT=1` (0 B of spills: 68 B with walk B's values shared with those
    before the roles, 48 B with the launch's position read again: `attention_csplit.setup`; walk A's key loop 645
    against 646 in ptxas 13.0), the split's atomics in it."""
    assert "atom.acq_rel.gpu" in _assembles(monkeypatch, "TILEC_ATTN_CHAIN_SPLIT", dt)


# switch, dtype, BH, BHkv, S_q, S_k, causal, CTAs (std's flash_attention_lse, 128 x 128, D = 64, the short keys'
# variant)
GPU = [
    ("TILEC_ATTN_CHAIN_SPLIT", "f16", 3, 1, 640, 1000, False, 2),  # GQA, keys not a multiple of 128: 15 tiles on 2,
    # the last in 2 pieces
    ("TILEC_ATTN_CHAIN_SPLIT", "bf16", 2, 2, 1024, 1024, False, 3),  # 16 tiles on 3: the last in 3 pieces
    ("TILEC_ATTN_CHAIN_SPLIT", "f16", 2, 2, 1000, 1000, True, 3),  # causal: pairs, walk B runs nothing
    ("TILEC_ATTN_CHAIN_SPLIT", "bf16", 2, 2, 768, 1024, False, 3),  # 12 tiles on 3: the last round full
    # 8 query blocks a head: 12 pairs on 5 CTAs, the last 2 item rounds' 14 tiles in the tail
    ("TILEC_ATTN_CHAIN_TAIL", "f16", 3, 3, 1024, 1024, True, 5),
    ("TILEC_ATTN_CHAIN_TAIL", "bf16", 2, 2, 1000, 700, True, 3),  # S_q > S_k: the first query blocks see no key
]


@pytest.mark.gpu
@pytest.mark.parametrize("case", GPU, ids=lambda c: "-".join(map(str, c[1:])) + ("-tail" if "TAIL" in c[0] else ""))
def test_chained_split_or_tail_on_the_gpu(case, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Either switch against SDPA in f32 and the log-sum-exp, three launches with the same bits
    (`gpu_lse_check`)."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no CUDA device")
    var, dtype, bh, hkv, sq, sk, causal, ctas = case
    _env(monkeypatch, "1", "3", var=var)
    monkeypatch.setenv("TILEC_PERSISTENT_SMS", str(ctas))
    gpu_lse_check(dtype, 64, bh, hkv, sq, sk, causal, sq + sk)


@pytest.mark.gpu
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_chained_split_at_the_benchmarks_scale(causal: bool, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The benchmark's launch (f16, D = 64, S = 1,024, B * H = 512: 4,096 tiles on every SM; on an H100's
    132, 31 whole rounds and 4 tiles in 8 pieces each): no tile never stored or wrong
    (`test_attention_qdouble._assert_every_tile_right`)."""
    from test_attention_qdouble import _assert_every_tile_right

    _env(monkeypatch, "1", "3")
    _assert_every_tile_right(causal, monkeypatch)


def test_where_the_chained_tail_applies(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`TILEC_ATTN_CHAIN_TAIL=1`, the default since the H100's A/B of 2026-12-06 (call 4: +2.7..+4.6 % on the causal
    S = 1,024 rows): the D = 64 short keys' variant walks its pairs chained (walk A, without the tail's code) and
    then the tail's tiles chained on (walk B: the tail's position, its carried values' first values walk A's
    results), one flush after both; unset the same LLVM; "0" the variant's LLVM without walk B; the long keys'
    kernel and the D = 128 variant are the same LLVM whatever the switch; with `TILEC_ATTN_CHAIN_SPLIT=1` too, the
    split in this kernel (the tail in a variant of its own: `test_both_switches_make_two_variants`); a bad value
    names the switch."""
    k64, k128 = _std("flash_attention_lse", "f16", 128, 128, 64), _std("flash_attention_lse", "f16", 128, 128, 128)
    _env(monkeypatch, "0", var="TILEC_ATTN_CHAIN_TAIL")
    off = {(k, short): _ll(k, _short(LSE, 128) if short else LSE) for k in (k64, k128) for short in (False, True)}
    assert "%in_tail" not in print_gpu_kernel(lower_gpu(k64, "sm_90a", _short(LSE, 128)))
    _env(monkeypatch, None, var="TILEC_ATTN_CHAIN_TAIL")
    default = _ll(k64, _short(LSE, 128))
    assert default != off[(k64, True)]
    _env(monkeypatch, "1", var="TILEC_ATTN_CHAIN_TAIL")
    assert _ll(k64, _short(LSE, 128)) == default
    for (k, short), ll in off.items():
        if (k, short) != (k64, True):
            assert _ll(k, _short(LSE, 128) if short else LSE) == ll
    on = print_gpu_kernel(lower_gpu(k64, "sm_90a", _short(LSE, 128)))
    consumer = on[on.index("role consumer"):on.index("role producer")]
    producer = on[on.index("role producer"):]
    assert consumer.count("= for %round") == producer.count("= for %round") == 2
    walk_a, walk_b = consumer.split("= for %round")[1:]
    assert "%chained" in walk_a and "%chained" in walk_b and "%in_tail" in walk_b and "%in_tail" not in walk_a
    assert "%in_tail" in producer.split("= for %round")[2] and "%in_tail" not in producer.split("= for %round")[1]
    assert "split.save" not in on
    monkeypatch.setenv("TILEC_ATTN_CHAIN_SPLIT", "1")
    both = print_gpu_kernel(lower_gpu(k64, "sm_90a", _short(LSE, 128)))
    assert "split.save" in both and "%in_tail" not in both
    # `TILEC_ATTN_CHAIN=1` (every launch chained, the long keys' kernel too): the tail's walk only in the short
    # keys' variant (it was in every chained kernel: a D = 128 one with it spilled past what test_attention_chain
    # allows; the split never was)
    monkeypatch.delenv("TILEC_ATTN_CHAIN_SPLIT")
    monkeypatch.setenv("TILEC_ATTN_CHAIN", "1")
    for k in (k64, k128):
        on_ll = _ll(k, LSE)
        monkeypatch.setenv("TILEC_ATTN_CHAIN_TAIL", "0")
        assert _ll(k, LSE) == on_ll
        monkeypatch.setenv("TILEC_ATTN_CHAIN_TAIL", "1")
    monkeypatch.delenv("TILEC_ATTN_CHAIN")
    monkeypatch.setenv("TILEC_ATTN_CHAIN_TAIL", "many")
    with pytest.raises(ValueError, match="TILEC_ATTN_CHAIN_TAIL='many'"):
        lower_gpu(k64, "sm_90a", _short(LSE, 128))


# BM, BH, S_q, S_k, CTAs (causal, D = 64, BN = 64, the short keys' variant). The default case crosses the most
# edges: 10 query blocks a head (pairs, nf even: a tail), S_q > S_k (the first query blocks see no key: tiles
# without a key block in walk B, the chain's flush there), 2 heads on 3 CTAs (walk A 2 pair rounds, walk B the
# last 2 item rounds' 14 tiles); the rest are heavy (opt-in switch)
TAIL_CASES = [
    (64, 2, 600, 300, 3),
    # 8 query blocks a head, S_q = S_k: every tile sees keys (the tail's tiles from 8 blocks down to 1)
    pytest.param(64, 3, 512, 512, 4, marks=pytest.mark.heavy),
    # 9 query blocks a head: the middle tile its own pair, no tail (walk B runs no round)
    pytest.param(64, 2, 576, 576, 3, marks=pytest.mark.heavy),
    # two consumer warpgroups: 4 query blocks of 128 a head
    pytest.param(128, 2, 512, 512, 3, marks=pytest.mark.heavy),
]


@pytest.mark.parametrize(("bm", "bh", "sq", "sk", "ctas"), TAIL_CASES,
                         ids=["rows_see_nothing", "every_tile_sees_keys", "odd_query_blocks", "two_warpgroups"])
def test_chained_tail_in_the_simulator(bm: int, bh: int, sq: int, sk: int, ctas: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`TILEC_ATTN_CHAIN_TAIL=1`'s kernel against NumPy in llsim (every tile stored once: the output starts
    NaN; that walk B runs the tail's tiles was checked by hand with `attention_tail.position` sending every
    tail tile to query block 0: 8 tiles of the default case never stored)."""
    import llsim
    from test_attention_pipeline import _run_lse_and_check

    monkeypatch.setattr(llsim, "UNDEF_FLOAT", "nan")
    _env(monkeypatch, "1", var="TILEC_ATTN_CHAIN_TAIL")
    k = _std("flash_attention_lse", "f16", bm, 64, 64)
    facts = _short(LSE, 64)
    assert "%in_tail" in print_gpu_kernel(lower_gpu(k, "sm_90a", facts))
    _run_lse_and_check(k, facts, (ctas, 1), bh, bh, sq, sk, 64, True, 9)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas")
def test_chained_tail_kernel_assembles(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`_assembles` under `TILEC_ATTN_CHAIN_TAIL=1` (ptxas 13.0: walk A's key loop 647 against 646)."""
    assert "atom.acq_rel.gpu" not in _assembles(monkeypatch, "TILEC_ATTN_CHAIN_TAIL", "f16")


@pytest.mark.gpu
def test_chained_tail_at_the_benchmarks_scale(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The benchmark's causal launch (f16, D = 64, S = 1,024, B * H = 512 on every SM: 2,048 pairs, on an
    H100's 132 CTAs 14 pair rounds and a tail of 400 tiles) under `TILEC_ATTN_CHAIN_TAIL=1`: no tile never
    stored or wrong."""
    from test_attention_qdouble import _assert_every_tile_right

    _env(monkeypatch, "1", "3", var="TILEC_ATTN_CHAIN_TAIL")
    _assert_every_tile_right(True, monkeypatch)


@pytest.mark.heavy
@pytest.mark.parametrize(("var", "bh", "sq", "sk", "causal", "ctas", "pieces"),
                         [("TILEC_ATTN_CHAIN_SPLIT", 1, 640, 500, False, 2, 2),
                          ("TILEC_ATTN_CHAIN_TAIL", 2, 1000, 700, True, 3, 0)],
                         ids=["split", "tail"])
def test_the_benchmarks_blocks_in_the_simulator(var: str, bh: int, sq: int, sk: int, causal: bool, ctas: int,
                                                pieces: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The benchmark's blocks (128 x 128, D = 64; the default cases take 64-wide key blocks): the split, 5 tiles
    on 2 CTAs, the last in 2 pieces of 2 key blocks (keys not a multiple of 128); the tail, 8 query blocks a
    head (the first see no key: S_q > S_k), 8 pairs on 3 CTAs, the last 5 as single tiles (heavy: the default
    cases cover both walks at BN = 64)."""
    import llsim

    monkeypatch.setattr(llsim, "UNDEF_FLOAT", "nan")
    _env(monkeypatch, "1", var=var)
    k = _std("flash_attention_lse", "f16", 128, 128, 64)
    written = _run(k, _short(LSE, 128), (ctas, 1), bh, bh, sq, sk, 64, causal, 3)
    assert written == pieces * 256 * (4 + 32)


@pytest.mark.heavy  # (both on: `TILEC_ATTN_CHAIN_SPLIT` opt-in; its one default test is
# test_where_the_chained_split_applies, the tail's alone test_where_the_chained_tail_applies; htier1)
def test_both_switches_make_two_variants(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Both switches: one kernel with both walks B spilled (ptxas 13.0: 40-56 B, every key loop 655-673 against
    645-647), so the short keys' variant is the split's (its PTX the same as under `TILEC_ATTN_CHAIN_SPLIT=1`
    alone: the request is launch metadata) and asks (`attention_split.tail_request`) for the tail's where the
    launch's walk hands out pairs of an even number of query blocks: that variant's LLVM is the short keys'
    variant's under `TILEC_ATTN_CHAIN_TAIL=1` alone. The runtime (`CudaDevice._choose`, `_variant` stubbed, 132
    SMs) follows the short variant's request: a causal S = 1,024 launch runs the tail's variant, a full one the
    split's, a causal one of 5 query blocks a head the split's (no tail)."""
    from types import SimpleNamespace

    from test_attention_tail import stubbed_device

    from tilelang.backend.gpu.passes import attention_tail

    k = _std("flash_attention_lse", "f16", 128, 128, 64)
    facts = _short(LSE, 128)
    _env(monkeypatch, "1", "3", var="TILEC_ATTN_CHAIN_TAIL")
    t_only = _ll(k, facts)
    monkeypatch.setenv("TILEC_ATTN_CHAIN_SPLIT", "1")
    gk = lower_gpu(k, "sm_90a", facts)
    assert gk.split is not None and [kind for kind, _ in gk.split.ons] == [attention_tail.KIND]
    assert "split.save" in print_gpu_kernel(gk)
    form = gk.split
    variant = lower_gpu(k, "sm_90a", form.refine(facts, attention_tail.KIND))
    assert variant.split is None and emit_llvm_text(variant, variant.facts, "")[0] == t_only
    base = lower_gpu(k, "sm_90a", LSE)  # the long keys' kernel: asks for the short variant, no tail request here
    dev = stubbed_device(SimpleNamespace(short=base.short, persistent=1, split=None),
                         SimpleNamespace(short=None, persistent=1, split=form))
    for bh, s, causal, tail in ((512, 1024, True, True), (512, 1024, False, False), (8, 640, True, False)):
        args = [SimpleNamespace(shape=(bh, s, 64)), SimpleNamespace(shape=(bh, s))] + \
            [SimpleNamespace(shape=(bh, s, 64))] * 3 + [0.125, causal]
        key = dev._choose(SimpleNamespace(ir=k), ("base",), LSE, args, None, (bh, s // 128))[1]
        assert key == ("base", base.short.key(), *([form.key(attention_tail.KIND)] if tail else [])), (bh, s, causal)


@pytest.mark.gpu
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_both_switches_at_the_benchmarks_scale(causal: bool, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Both switches through the runtime's choice of variant on every SM: the full launch runs the split's
    variant, the causal one the tail's; no tile never stored or wrong."""
    from test_attention_qdouble import _assert_every_tile_right

    _env(monkeypatch, "1", "3")
    monkeypatch.setenv("TILEC_ATTN_CHAIN_TAIL", "1")
    _assert_every_tile_right(causal, monkeypatch)
