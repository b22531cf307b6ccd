"""`TILEC_ATTN_CHAIN` (`passes/attention_chain.py`): the persistent walk's
tiles chained, the previous tile's last P V issued with the next tile's first
S and its epilogue run in the next tile's first iteration. In the simulator
against NumPy (undefined floats read as NaN): walks of several tiles a CTA,
tiles of 0 to 5 key blocks (a tile without one flushes the pending product
first), S not a multiple of the blocks, causal with S_q != S_k, one and two
consumer warpgroups, more CTAs than tiles; the PTX through ptxas (registers,
spills); and the stage of the pending product: released after its wait in
the next tile, or the producer waits forever."""

from __future__ import annotations

import re
import shutil

import pytest
from ptxas_report import assemble
from test_attention_pipeline import _facts, _run_lse_and_check, _schedule, _std

from tilelang.backend import emit_ptx, lower_gpu
from tilelang.backend.gpu.printer import print_gpu_kernel


def _chain(monkeypatch, mode: str = "1") -> None:  # type: ignore[no-untyped-def]
    _schedule(monkeypatch, "overlap+rotate")
    monkeypatch.setenv("TILEC_ATTN_CHAIN", mode)


def test_the_switch_chains_the_tiles(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """On: no P V after the loop but the flushes (a tile without key blocks, the walk's end), the epilogue
    in the first iteration; off: the loop's own last P V, one store."""
    k, facts = _std("flash_attention", "f16", 128, 128, 128), _facts("oqkv", 3)
    _chain(monkeypatch, "0")
    off = print_gpu_kernel(lower_gpu(k, "sm_90a", facts))
    assert "pend_acc" not in off and off.count("store @o") == 1
    _chain(monkeypatch)
    on = print_gpu_kernel(lower_gpu(k, "sm_90a", facts))
    assert "%chained" in on and on.count("store @o") == 4  # first iteration, flush, own zeros, walk's end
    assert on.count("wgmma.rs") == 4  # the first iteration's (before the loop), the loop's, the two flushes'
    monkeypatch.setenv("TILEC_ATTN_CHAIN_PEEL", "0")
    one = print_gpu_kernel(lower_gpu(k, "sm_90a", facts))
    assert one.count("wgmma.rs") == 3 and one.count("store @o") == 4  # the first iteration in the loop


# `TILEC_ATTN_CHAIN` "1" and "late" (every launch chained) are opt-in; "auto" chains the short keys' variant
# (test_auto_short_variant_in_the_simulator, the default path). The default run keeps one test of each mode
# (the tiers, tests/README.md; "1" and "late" slower at S >= 4,096, RESULTS.md hattn3 2026-12-06):
# test_the_switch_chains_the_tiles (the IR of a chained walk); htier1: every walk here heavy, rows_see_nothing_walk's
# (a causal walk with rows that see no key) run by default in test_attention_qdouble's chain_tiles_without_keys
@pytest.mark.parametrize(("bm", "bn", "d", "sq", "sk", "causal", "ctas", "bh", "mode"),
                         # (heavy: causal_walk's kernel is rows_see_nothing_walk's, a causal walk on 2 CTAs too)
                         [pytest.param(64, 64, 64, 150, 200, True, 2, 2, "1", marks=pytest.mark.heavy),
                          pytest.param(64, 64, 64, 300, 130, True, 2, 2, "1", marks=pytest.mark.heavy),
                          # (heavy, htier1: "late" is the same switch's other value; `TILEC_ATTN_CHAIN`'s one default
                          # test is test_the_switch_chains_the_tiles, the chained walk simulated by default in the
                          # short variant: more_ctas_than_tiles, test_attention_qdouble's chain walks)
                          pytest.param(64, 64, 64, 200, 130, False, 3, 2, "late", marks=pytest.mark.heavy),
                          # (heavy: two warpgroups chained: test_attention_qdouble's chain_two_warpgroups; "1":
                          # rows_see_nothing_walk)
                          pytest.param(128, 64, 64, 300, 130, True, 2, 1, "1", marks=pytest.mark.heavy),
                          # (heavy: the default variant's more_ctas_than_tiles, the same launch)
                          pytest.param(64, 64, 64, 100, 120, False, 8, 1, "1", marks=pytest.mark.heavy),
                          # (heavy: rows_see_nothing_walk's kernel, its first two tiles without keys, on 2 CTAs)
                          pytest.param(64, 64, 64, 150, 40, True, 1, 2, "1", marks=pytest.mark.heavy)],
                         ids=["causal_walk", "rows_see_nothing_walk", "full_walk_q_late", "two_warpgroups",
                              "more_ctas_than_tiles", "one_cta_tiles_without_keys"])
def test_chained_tiles_in_the_simulator(bm: int, bn: int, d: int, sq: int, sk: int, causal: bool, ctas: int,  # type: ignore[no-untyped-def]
                                        bh: int, mode: str, monkeypatch) -> None:
    import llsim

    monkeypatch.setattr(llsim, "UNDEF_FLOAT", "nan")
    _chain(monkeypatch, mode)
    k = _std("flash_attention_lse", "f16", bm, bn, d)
    facts = {**_facts("oqkv", 3), **_facts(["lse"], 2)}
    gk = lower_gpu(k, "sm_90a", facts)
    assert gk.persistent == 1 and "%chained" in print_gpu_kernel(gk)
    _run_lse_and_check(k, facts, (ctas, 1), bh, bh, sq, sk, d, causal, 7)


def test_the_pending_stage_must_be_released(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Without the release of the previous tile's last stage after its P V in the next tile's first
    iteration, every tile keeps one stage of the ring: the producer waits for it forever."""
    import dataclasses

    from llsim import Deadlock

    from tilelang.backend.gpu.passes import attention_chain

    _chain(monkeypatch)
    real = attention_chain.carries
    monkeypatch.setattr(attention_chain, "carries", lambda *a, **kw: dataclasses.replace(real(*a, **kw), release=False))
    k = _std("flash_attention_lse", "f16", 64, 64, 64)
    with pytest.raises(Deadlock):
        _run_lse_and_check(k, {**_facts("oqkv", 3), **_facts(["lse"], 2)}, (1, 1), 2, 2, 150, 200, 64, True, 3)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas not installed")
# (heavy, htier1: `TILEC_ATTN_CHAIN=1` on the long keys' kernel is opt-in, its one default test
# test_the_switch_chains_the_tiles; the default chained kernel (the short keys' variant at D = 64) assembles in
# test_attention_qdouble's test_double_buffered_q_assembles_without_spills[short_keys])
@pytest.mark.parametrize(("dt", "bn", "d"), [pytest.param("f16", 128, 128, marks=pytest.mark.heavy),
                                             pytest.param("bf16", 128, 128, marks=pytest.mark.heavy),
                                             pytest.param("f16", 128, 64, marks=pytest.mark.heavy)])
def test_chained_tiles_assemble_without_spills(tmp_path, dt: str, bn: int, d: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    _chain(monkeypatch)
    ptx = emit_ptx(_std("flash_attention", dt, 128, bn, d), "sm_90a", _facts("oqkv", 3))
    r = assemble(ptx, "sm_90a")
    # at D = 128 ptxas 13.0 keeps a few scalars of the walk in local memory (32 bytes with the first iteration
    # before the loop, 8 with it inside: stored once a tile, read outside the key loop, nvdisasm 13.0); before
    # the epilogue's scalars went through `g.Opaque` and the branch's value replaced the accumulator, 688 bytes,
    # most of them in the loop (with `TILEC_ATTN_EARLY_VOTE=1`, off at D = 128 by default: 48 bytes, 2 refills in
    # the key loop)
    assert r.max_spill_stores <= (32 if d == 128 else 0), r.text
    assert not re.search(r"C75\d\d", r.text), r.text  # no wgmma serialised


def _llvm(k, facts) -> tuple[str, object]:  # type: ignore[no-untyped-def]
    from tilelang.backend.llvm import emit_llvm_text

    gk = lower_gpu(k, "sm_90a", facts)
    ll, abi = emit_llvm_text(gk, gk.facts, "")
    return ll, abi


def _short(facts, rows: int):  # type: ignore[no-untyped-def]
    import dataclasses

    return {**facts, "k": dataclasses.replace(facts["k"], rows_at_most=rows)}


@pytest.mark.parametrize("d", [128, 64])
def test_auto_asks_for_the_short_keys_variant_and_chains_it(d: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`TILEC_ATTN_CHAIN` unset ("auto"): compiled without a fact about K's rows, the kernel is the unchained
    one ("0"'s LLVM text, byte for byte) and asks for K's rows <= 8 key blocks (`KernelABI.short`); compiled
    with that fact it is, at D = 64, "1" with `TILEC_ATTN_ROTATE=1`'s text (rotated at D = 64 too) and the fast
    walk; at D = 128 (`CHAIN_D`) unchained, with the fast walk and Q released early, which the long keys' kernel
    has there too since call 24 (`attention_tiles.BOUNDARY_D`): the two are the same text, and under
    `TILEC_ATTN_FASTDIV=0 TILEC_ATTN_QEARLY=0` they are again (the producer's 24 registers, on in both, are the
    rest of the boundary's switches); the GPU IR says which. At D = 64 the variant walks the causal tail chained
    on (`TILEC_ATTN_CHAIN_TAIL`, on by default: `attention_csplit`), which "1" (every launch chained, the long
    keys' kernel) never does: the equality is with the variant under `TILEC_ATTN_CHAIN_TAIL=0`."""
    from tilelang.backend.facts import Short

    for var in ("TILEC_ATTN_CHAIN", "TILEC_ATTN_ROTATE", "TILEC_ATTN_PINGPONG", "TILEC_ATTN_PEEL", "TILEC_ATTN_SCHEDULE",
                "TILEC_ATTN_EARLY_VOTE", "TILEC_ATTN_FASTDIV", "TILEC_ATTN_QEARLY", "TILEC_ATTN_SHORT_D",
                "TILEC_ATTN_QDOUBLE", "TILEC_ATTN_CHAIN_TAIL", "TILEC_ATTN_CHAIN_SPLIT"):
        monkeypatch.delenv(var, raising=False)
    k, facts = _std("flash_attention", "f16", 128, 128, d), _facts("oqkv", 3)
    long_ll, long_abi = _llvm(k, facts)
    short_ll, short_abi = _llvm(k, _short(facts, 1024))
    monkeypatch.setenv("TILEC_ATTN_CHAIN_TAIL", "0")
    untailed_ll = _llvm(k, _short(facts, 1024))[0]  # (the tail's walk B: D = 64 only)
    assert (untailed_ll == short_ll) == (d == 128)
    monkeypatch.delenv("TILEC_ATTN_CHAIN_TAIL")
    assert long_abi.short == Short("k", 1, 1024) and short_abi.short is None
    if d == 128:
        text = print_gpu_kernel(lower_gpu(k, "sm_90a", _short(facts, 1024)))
        assert "(variant: @k.rows <= 1024)" in text.splitlines()[0] and "%chained" not in text
        assert short_ll == long_ll and "role producer warps 4 regs 24" in text
        monkeypatch.setenv("TILEC_ATTN_FASTDIV", "1")
        monkeypatch.setenv("TILEC_ATTN_QEARLY", "1")
        assert _llvm(k, facts)[0] == short_ll
        monkeypatch.setenv("TILEC_ATTN_FASTDIV", "0")
        monkeypatch.setenv("TILEC_ATTN_QEARLY", "0")
        off_ll = _llvm(k, facts)[0]
        assert _llvm(k, _short(facts, 1024))[0] == off_ll != long_ll  # both off: the fact changes nothing at D = 128
        return
    assert long_abi.short == Short("k", 1, 1024) and short_abi.short is None
    text = print_gpu_kernel(lower_gpu(k, "sm_90a", facts))
    assert "short @k.dim1 <= 1024" in text.splitlines()[0] and "%chained" not in text
    text = print_gpu_kernel(lower_gpu(k, "sm_90a", _short(facts, 1024)))
    assert "(variant: @k.rows <= 1024)" in text.splitlines()[0] and "%chained" in text and "%in_tail" in text
    monkeypatch.setenv("TILEC_ATTN_CHAIN", "0")
    off_ll, off_abi = _llvm(k, facts)
    assert off_ll == long_ll and off_abi.short is None
    assert _llvm(k, _short(facts, 1024))[0] == off_ll  # "0": the fact changes nothing
    monkeypatch.setenv("TILEC_ATTN_CHAIN", "1")
    monkeypatch.setenv("TILEC_ATTN_ROTATE", "1")
    monkeypatch.setenv("TILEC_ATTN_FASTDIV", "1")
    monkeypatch.setenv("TILEC_ATTN_QDOUBLE", "1")  # "auto" double-buffers Q in the short variant only
    assert _llvm(k, facts)[0] == untailed_ll
    monkeypatch.delenv("TILEC_ATTN_FASTDIV")
    monkeypatch.delenv("TILEC_ATTN_QDOUBLE")
    # rotation off by hand: no chain to ask for
    monkeypatch.setenv("TILEC_ATTN_CHAIN", "auto")
    monkeypatch.setenv("TILEC_ATTN_ROTATE", "0")
    assert _llvm(k, facts)[1].short is None
    monkeypatch.setenv("TILEC_ATTN_CHAIN", "yes")
    with pytest.raises(ValueError, match="TILEC_ATTN_CHAIN='yes'"):
        lower_gpu(k, "sm_90a", facts)


def test_the_runtime_picks_the_variant_by_the_launch_shape() -> None:
    """`CudaDevice._pick` (no GPU needed: `_variant` stubbed): a kernel whose first variant asks
    (`KernelABI.short`) gets the variant compiled with K's rows bound where the launch's K is that short
    (1024 rows: 8 key blocks of 128), and keeps the first where it is longer (1025); a kernel that
    does not ask compiles one variant."""
    from types import SimpleNamespace

    from tilelang.backend.facts import Short, TensorFacts
    from tilelang.runtime.cuda import CudaDevice

    asks = Short("k", 1, 1024)
    dev = CudaDevice.__new__(CudaDevice)
    seen: list[tuple[object, ...]] = []

    def variant(pk, key, facts, span):  # type: ignore[no-untyped-def]
        seen.append((key, facts["k"].rows_at_most))
        return SimpleNamespace(short=None if facts["k"].rows_at_most else pk.asks), f"fn{len(seen)}"

    dev._variant = variant  # type: ignore[method-assign]
    params = (SimpleNamespace(name="q"), SimpleNamespace(name="k"), SimpleNamespace(name="scale"))
    facts = {n: TensorFacts(True, (True, True, True)) for n in "qk"}
    for rows, want in ((1024, 1024), (1025, 0), (16, 1024)):
        seen.clear()
        pk = SimpleNamespace(ir=SimpleNamespace(params=params), asks=asks)
        args = [SimpleNamespace(shape=(4, 999, 64)), SimpleNamespace(shape=(2, rows, 64)), 0.125]
        abi, _fn = dev._pick(pk, ("base",), facts, args, None)  # type: ignore[arg-type]
        assert seen[-1][1] == want and (abi.short is None) == bool(want)
        assert seen[-1][0] == (("base", asks.key()) if want else ("base",))
    seen.clear()
    pk = SimpleNamespace(ir=SimpleNamespace(params=params), asks=None)
    dev._pick(pk, ("base",), facts, [None, SimpleNamespace(shape=(2, 16, 64)), 0.1], None)  # type: ignore[arg-type]
    assert seen == [(("base",), 0)]
    assert asks.refine(facts, (2, 1024)) is not None and asks.refine(facts, (2,)) is None
    assert asks.refine({"q": facts["q"]}, (2, 16, 64)) is None  # no facts for K: nothing to refine


@pytest.mark.parametrize(("bm", "bn", "d", "sq", "sk", "causal", "ctas", "bh"),
                         # (heavy: causal_sq_ne_sk_walk's kernel is causal_rows_see_nothing's, causal S_q != S_k
                         # walked by several CTAs too)
                         # (htier1, rule 1 of the tiers in tests/README.md: causal_rows_see_nothing and
                         # two_warpgroups_edge_tiles heavy, their kernels (the default short variant at BM = 64 and
                         # 128, Q double-buffered by "auto") simulated by default in test_attention_qdouble's
                         # chain_tiles_without_keys (causal, rows that see no key, a walk of 6 tiles) and
                         # chain_two_warpgroups (BM = 128, a partial last block); several CTAs: more_ctas_than_tiles)
                         [pytest.param(64, 64, 64, 150, 200, True, 2, 2, marks=pytest.mark.heavy),
                          pytest.param(64, 64, 64, 200, 130, True, 3, 2, marks=pytest.mark.heavy),
                          (64, 64, 64, 100, 120, False, 8, 1),
                          pytest.param(128, 64, 64, 300, 130, False, 2, 1, marks=pytest.mark.heavy),
                          (64, 64, 128, 150, 200, True, 2, 2)],
                         ids=["causal_sq_ne_sk_walk", "causal_rows_see_nothing", "more_ctas_than_tiles",
                              "two_warpgroups_edge_tiles", "d128_unchained_q_early"])
def test_auto_short_variant_in_the_simulator(bm: int, bn: int, d: int, sq: int, sk: int, causal: bool,  # type: ignore[no-untyped-def]
                                             ctas: int, bh: int, monkeypatch) -> None:
    """"auto"'s variant for short keys (compiled with K's rows <= 8 * BN, as the runtime compiles it
    for such a launch): chained and rotated at D = 64, against NumPy in the simulator: edge tiles (S not
    a multiple of the blocks), causal with S_q != S_k, more CTAs than tiles, two warpgroups."""
    import llsim

    for var in ("TILEC_ATTN_CHAIN", "TILEC_ATTN_ROTATE", "TILEC_ATTN_PINGPONG", "TILEC_ATTN_PEEL", "TILEC_ATTN_SCHEDULE",
                "TILEC_ATTN_FASTDIV", "TILEC_ATTN_QEARLY", "TILEC_ATTN_SHORT_D"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(llsim, "UNDEF_FLOAT", "nan")
    k = _std("flash_attention_lse", "f16", bm, bn, d)
    facts = _short({**_facts("oqkv", 3), **_facts(["lse"], 2)}, 8 * bn)
    gk = lower_gpu(k, "sm_90a", facts)
    assert gk.persistent == 1 and ("%chained" in print_gpu_kernel(gk)) == (d == 64) and gk.short is None
    _run_lse_and_check(k, facts, (ctas, 1), bh, bh, sq, sk, d, causal, 11)


def test_a_decode_share_does_not_ask_for_the_short_variant(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """decode_split_tc's key loop starts at its share's first block, not K's: K's rows do not bound a tile's
    key blocks there, so "auto" asks for nothing (its kernel is the same as under "0")."""
    from test_decode_tc_pipeline import _kernel_ir

    monkeypatch.delenv("TILEC_ATTN_CHAIN", raising=False)
    kir, facts = _kernel_ir(8, 32768, 16, 64, 128)
    gk = lower_gpu(kir, "sm_90a", facts)
    assert gk.persistent == 1 and gk.short is None
