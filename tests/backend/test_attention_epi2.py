"""`TILEC_ATTN_CHAIN_EPI2=1` (`attention_chain.epi2`, `attention_rotated`'s `hold` / `_second`): the chained
short keys' variant runs the previous tile's epilogue in its second key iteration, between the issue of S(1) +
P V(0) and the wait for S(1), instead of in its first after the pending P V's wait (issue 15's D = 64 S = 1,024
rows; opt-in: slower on the H100, 2026-12-06 call C, RESULTS.md "h15y"). Where it applies (the D = 64 short keys'
variant only; off or unset every kernel byte for byte as before); in the simulator against NumPy (outputs NaN
until written, undefined floats NaN): full and causal, tiles of one key block (the epilogue in the first
iteration then), keys not a multiple of the block, a launch whose last round has one tile, two warpgroups; a
mutation that drops either place of the epilogue fails; the benchmark's kernel through ptxas (no serialised
wgmma, no key loop touching local memory); on the GPU against SDPA and at the benchmark's scale."""

from __future__ import annotations

import dataclasses
import shutil

import pytest
from test_attention_pipeline import _facts, _run_lse_and_check, _std

from tilelang.backend import emit_llvm_text, lower_gpu
from tilelang.backend.gpu.printer import print_gpu_kernel

LSE = {**_facts("oqkv", 3), **_facts(["lse"], 2)}
SETTINGS = ("TILEC_ATTN_CHAIN", "TILEC_ATTN_ROTATE", "TILEC_ATTN_PINGPONG", "TILEC_ATTN_SCHEDULE", "TILEC_ATTN_OSTORE",
            "TILEC_ATTN_QDOUBLE", "TILEC_ATTN_KVFIRST", "TILEC_ATTN_FASTDIV", "TILEC_ATTN_QEARLY", "TILEC_ATTN_SPLIT",
            "TILEC_ATTN_XROT", "TILEC_ATTN_TAIL", "TILEC_ATTN_SPLIT_FORMS", "TILEC_ATTN_SHORT_D", "TILEC_ATTN_CHAIN_TAIL",
            "TILEC_ATTN_CHAIN_SPLIT", "TILEC_ATTN_CHAIN_PEEL", "TILEC_ATTN_CHAIN_EPI2", "TILEC_ATTN_SPLIT_EDGE")


def _env(monkeypatch, on: str | None = "1") -> None:  # type: ignore[no-untyped-def]
    for name in SETTINGS:
        monkeypatch.delenv(name, raising=False)
    if on is not None:
        monkeypatch.setenv("TILEC_ATTN_CHAIN_EPI2", on)


def _short(facts, bn: int):  # type: ignore[no-untyped-def]
    """The facts the runtime compiles the short keys' variant with (K's rows <= 8 key blocks)."""
    return {**facts, "k": dataclasses.replace(facts["k"], rows_at_most=8 * bn)}


def _ll(k, facts) -> str:  # type: ignore[no-untyped-def]
    gk = lower_gpu(k, "sm_90a", facts)
    return emit_llvm_text(gk, gk.facts, "")[0]


def _consumer(k, facts) -> str:  # type: ignore[no-untyped-def]
    text = print_gpu_kernel(lower_gpu(k, "sm_90a", facts))
    return text[text.index("role consumer"):text.index("role producer")]


@pytest.mark.heavy  # (htier1: 7 LLVM emits; the switch's default test is the next one, the tiers in tests/README.md)
def test_the_second_iteration_epilogue_changes_no_other_kernel(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """"0" and unset: the LLVM as before; the long keys' kernel and the D = 128 variant the same LLVM whatever
    the switch (split from test_where_the_second_iteration_epilogue_applies, htier1)."""
    k64, k128 = _std("flash_attention_lse", "f16", 128, 128, 64), _std("flash_attention_lse", "f16", 128, 128, 128)
    _env(monkeypatch, None)
    unset = {(k, short): _ll(k, _short(LSE, 128) if short else LSE) for k in (k64, k128) for short in (False, True)}
    _env(monkeypatch, "0")
    assert _ll(k64, _short(LSE, 128)) == unset[(k64, True)]
    _env(monkeypatch, "1")
    for (k, short), ll in unset.items():
        if (k, short) != (k64, True):
            assert _ll(k, _short(LSE, 128) if short else LSE) == ll


def test_where_the_second_iteration_epilogue_applies(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """On: the D = 64 short keys' variant's consumers have two peeled iterations (a key loop's issue of S and
    P V three times a walk: the first, the second, the loop's), the epilogue's store three times a walk (the
    first iteration's, for a tile of one key block; the second's; besides the flush and the idle tile's), the
    previous tile's accumulator copied (`g.Opaque`) out of the first; a bad value names the switch. (That nothing
    else changes: the heavy test above.)"""
    k64 = _std("flash_attention_lse", "f16", 128, 128, 64)
    _env(monkeypatch, None)
    base = _consumer(k64, _short(LSE, 128))
    _env(monkeypatch, "1")
    on = _consumer(k64, _short(LSE, 128))
    walks, b_walks = on.split("= for %round")[1:], base.split("= for %round")[1:]  # (walk B: the causal tail's)
    assert len(walks) == len(b_walks) == 2
    for walk, b_walk in zip(walks, b_walks, strict=True):
        assert walk.count("wgmma.rs") == b_walk.count("wgmma.rs") + 1  # the second iteration's P V
        assert walk.count("store @o") == b_walk.count("store @o") + 1  # its epilogue (the first keeps one)
        assert "%ran2" in walk and "%acc_prev" in walk and "opaque" in walk and "%ran2" not in b_walk
    monkeypatch.setenv("TILEC_ATTN_CHAIN_EPI2", "yes")
    with pytest.raises(ValueError, match="TILEC_ATTN_CHAIN_EPI2='yes'"):
        lower_gpu(k64, "sm_90a", _short(LSE, 128))


# BM, BH, S_q, S_k, causal, CTAs (D = 64, BN = 64, the short keys' variant). The default case crosses the most
# edges: keys not a multiple of the block, 10 tiles on 3 CTAs (a last round of one tile), tiles of 4 key blocks
# (both peeled iterations and the loop). All heavy (htier1, the tiers in tests/README.md): `TILEC_ATTN_CHAIN_EPI2` is
# opt-in and lost (RESULTS.md 2026-12-06, "recorded as a loss": 0.87x / 0.85x SDPA); its one default test is
# test_where_the_second_iteration_epilogue_applies (where it applies, its IR, its refusal)
CASES = [
    pytest.param(64, 2, 300, 200, False, 3, marks=pytest.mark.heavy),
    # tiles of one key block (S_k < 64): the epilogue in the first iteration, no second
    pytest.param(64, 2, 300, 50, False, 3, marks=pytest.mark.heavy),
    # causal pairs and the tail (`TILEC_ATTN_CHAIN_TAIL`, default): tiles of 1 to 5 key blocks, walk B's copy
    pytest.param(64, 2, 300, 300, True, 3, marks=pytest.mark.heavy),
    # causal, S_q > S_k: the first query blocks see no key (the flush), then tiles of one and two blocks
    pytest.param(64, 2, 600, 300, True, 3, marks=pytest.mark.heavy),
    # two consumer warpgroups
    pytest.param(128, 1, 300, 500, False, 2, marks=pytest.mark.heavy),
    # one CTA, causal, S_q = S_k = 130: 3 tiles of 1, 2 and 3 blocks in a row
    pytest.param(64, 2, 130, 130, True, 1, marks=pytest.mark.heavy),
]


@pytest.mark.parametrize(("bm", "bh", "sq", "sk", "causal", "ctas"), CASES,
                         ids=["full_edges", "one_block_tiles", "causal_tail", "rows_see_nothing", "two_warpgroups",
                              "one_cta_causal"])
def test_second_iteration_epilogue_in_the_simulator(bm: int, bh: int, sq: int, sk: int, causal: bool, ctas: int,
                                                    monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The variant with the switch against NumPy in llsim (every tile stored once: the output starts NaN)."""
    import llsim

    monkeypatch.setattr(llsim, "UNDEF_FLOAT", "nan")
    _env(monkeypatch)
    k = _std("flash_attention_lse", "f16", bm, 64, 64)
    facts = _short(LSE, 64)
    assert "%ran2" in print_gpu_kernel(lower_gpu(k, "sm_90a", facts))
    _run_lse_and_check(k, facts, (ctas, 1), bh, bh, sq, sk, 64, causal, 9)


@pytest.mark.heavy
def test_second_iteration_epilogue_beside_the_split(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """With `TILEC_ATTN_CHAIN_SPLIT=1` too (walk A chained with the switch, walk B the split last round's pieces,
    unchained): 10 tiles on 4 CTAs, the last 2 in pieces, against NumPy in llsim."""
    import llsim

    monkeypatch.setattr(llsim, "UNDEF_FLOAT", "nan")
    _env(monkeypatch)
    monkeypatch.setenv("TILEC_ATTN_CHAIN_SPLIT", "1")
    monkeypatch.setenv("TILEC_ATTN_SPLIT_EDGE", "0")
    k = _std("flash_attention_lse", "f16", 64, 64, 64)
    text = print_gpu_kernel(lower_gpu(k, "sm_90a", _short(LSE, 64)))
    assert "%ran2" in text and "split.save" in text
    _run_lse_and_check(k, _short(LSE, 64), (4, 1), 2, 2, 300, 200, 64, False, 9)


# (heavy, htier1: the check of the heavy simulation above; the switch's one default test is
# test_where_the_second_iteration_epilogue_applies)
@pytest.mark.parametrize(("where", "sk"), [pytest.param("lone", 50, marks=pytest.mark.heavy),
                                           pytest.param("second", 200, marks=pytest.mark.heavy)])
def test_either_place_of_the_epilogue_matters(where: str, sk: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Without the first iteration's epilogue (`lone`: tiles of one key block) or the second's, tiles are never
    stored: the simulator's check fails (so the cases above run both)."""
    import llsim

    from tilelang.backend.gpu.passes import attention_chain

    monkeypatch.setattr(llsim, "UNDEF_FLOAT", "nan")
    _env(monkeypatch)
    real = attention_chain.Chain.later
    monkeypatch.setattr(attention_chain.Chain, "later", lambda self, pred, acc: []
                        if (pred.hint == "chained_lone") == (where == "lone") else real(self, pred, acc))
    k = _std("flash_attention_lse", "f16", 64, 64, 64)
    with pytest.raises(AssertionError):
        _run_lse_and_check(k, _short(LSE, 64), (3, 1), 2, 2, 300, sk, 64, False, 9)


# heavy (hci6: 9.7 of the default suite's ~2,000 CPU-s under load, its largest ptxas test; the switch is opt-in):
# test_where_the_second_iteration_epilogue_applies lowers the same second-iteration epilogue, and
# test_attention_qdouble's default `test_double_buffered_q_assembles_without_spills[short_keys]` assembles the
# default chained kernel of the same shape (128 x 128, D = 64, the short keys' variant) with its spill and C75xx
# checks; this one's bounds and key-loop comparison run with TILE_SLOW=1
@pytest.mark.heavy
@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas")
def test_the_benchmarks_kernel_assembles(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The benchmark's kernel (f16, 128 x 128, D = 64, the short keys' variant) through ptxas for sm_90a: no
    wgmma serialised (the previous tile's accumulator read in the second iteration kept the loop accumulator's
    registers before its copy: C7514), at most 128 B of spill stores (ptxas 13.0: 104 B, the walk's scalars at a
    tile's start), and (nvdisasm) no key loop touching local memory, each within 12 instructions of the default's
    (ptxas 13.0: 654-655 against 647; with the one-block tiles' epilogue in the second iteration's branch
    694-704: the loop kept fewer values in registers)."""
    from ptxas_report import assemble
    from test_attention_csplit import _key_loops

    from tilelang.backend import emit_ptx

    facts = _short(_facts("oqkv", 3), 128)
    k = _std("flash_attention", "f16", 128, 128, 64)
    _env(monkeypatch, "0")
    base = _key_loops(emit_ptx(k, "sm_90a", facts))
    _env(monkeypatch)
    ptx = emit_ptx(k, "sm_90a", facts)
    r = assemble(ptx, "sm_90a")
    assert "C7514" not in r.text and "C7515" not in r.text and "serialized" not in r.text, r.text
    assert r.max_spill_stores <= 128, r.text
    loops = _key_loops(ptx)
    if loops:
        assert len(loops) == len(base) == 2, ([len(x) for x in loops], [len(x) for x in base])
        assert not [x for body in loops for x in body if x.startswith(("STL", "LDL"))], "a spill in a key loop"
        assert all(abs(len(a) - len(b)) <= 12 for a, b in zip(loops, base, strict=True)), \
            ([len(x) for x in loops], [len(x) for x in base])


# dtype, BH, BHkv, S_q, S_k, causal, CTAs (std's flash_attention_lse, 128 x 128, D = 64, the short keys' variant)
GPU = [
    ("f16", 3, 1, 640, 1000, False, 2),  # GQA, keys not a multiple of 128: 15 tiles on 2 CTAs
    ("bf16", 2, 2, 1000, 1000, True, 3),  # causal: pairs and the tail, tiles of 1 to 8 blocks
    ("f16", 2, 2, 1000, 100, False, 3),  # tiles of one key block (the first iteration's epilogue)
    ("bf16", 2, 2, 1000, 700, True, 3),  # S_q > S_k: the first query blocks see no key
]


@pytest.mark.gpu
@pytest.mark.parametrize("case", GPU, ids=lambda c: "-".join(map(str, c)))
def test_second_iteration_epilogue_on_the_gpu(case, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Against SDPA in f32 and the log-sum-exp, three launches with the same bits (`gpu_lse_check`)."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no CUDA device")
    from test_attention_split import gpu_lse_check

    dtype, bh, hkv, sq, sk, causal, ctas = case
    _env(monkeypatch)
    monkeypatch.setenv("TILEC_PERSISTENT_SMS", str(ctas))
    gpu_lse_check(dtype, 64, bh, hkv, sq, sk, causal, sq + sk)


@pytest.mark.gpu
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_second_iteration_epilogue_at_the_benchmarks_scale(causal: bool, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The benchmark's launch (f16, D = 64, S = 1,024, B * H = 512 on every SM): no tile never stored or wrong."""
    from test_attention_qdouble import _assert_every_tile_right

    _env(monkeypatch)
    _assert_every_tile_right(causal, monkeypatch)
