"""`TILEC_ATTN_SAHEAD=1` (`attention_rotated.s_ahead`, opt-in): the overlapped key loop issues S of block j + 1 at
the top of block j's iteration, before its softmax, and carries it across the back edge as the product's own
registers (complete since that iteration's `wait_group 0`, bound by the next iteration's wait), two key blocks an
iteration (`TILEC_ATTN_SAHEAD_UNROLL`, "1" by default with it). Checked in llsim
against NumPy (S not a multiple of the block, causal with rows that see no key, a persistent walk of several
tiles, two consumer warpgroups with grouped heads), the IR's order, and that the switch unset or "0" changes
no kernel."""

from __future__ import annotations

import shutil

import llsim
import pytest
from ptxas_report import assemble
from test_attention_pipeline import _facts, _run_lse_and_check, _schedule, _std

from tilelang.backend import emit_llvm_text, emit_ptx, lower_gpu
from tilelang.backend.gpu.printer import print_gpu_kernel


def _ahead(monkeypatch, on: bool = True) -> None:  # type: ignore[no-untyped-def]
    _schedule(monkeypatch, "overlap")
    monkeypatch.setenv("TILEC_ATTN_SAHEAD", "1" if on else "0")


def _loop_text(bm: int, bn: int, d: int) -> str:
    k = _std("flash_attention_lse", "f16", bm, bn, d)
    facts = {**_facts("oqkv", 3), **_facts(["lse"], 2)}
    text = print_gpu_kernel(lower_gpu(k, "sm_90a", facts))
    return text.split("role producer")[0]


def test_the_next_s_is_issued_before_the_softmax(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """In the key loop the S product (Q K^T) comes before the first exp2, P V after the softmax."""
    monkeypatch.setenv("TILEC_ATTN_SPLIT", "0")
    _ahead(monkeypatch)
    body = _key_loop(_loop_text(64, 64, 64))
    assert body.index("wgmma %q") < body.index("exp2") and "wgmma.wait %s" in body
    assert body.index("wgmma.rs") > body.index("exp2")
    assert body.count("wgmma.rs") == 2  # two key blocks an iteration (`TILEC_ATTN_SAHEAD_UNROLL`)
    _ahead(monkeypatch, False)
    body = _key_loop(_loop_text(64, 64, 64))
    assert body.index("exp2") < body.index("wgmma %q")  # the default issues S of the next block after the softmax


def _key_loop(consumer: str) -> str:
    return consumer[consumer.index("= for %j"):]


# The tiers (tests/README.md, htier1): `TILEC_ATTN_SAHEAD` is opt-in and lost (RESULTS.md hattn8: -13 % at S = 1,024,
# -8 % at 4,096); its one default test is test_the_next_s_is_issued_before_the_softmax, the rest `heavy`.
@pytest.mark.heavy
@pytest.mark.parametrize("setting", [None, "0"])
def test_the_switch_off_changes_no_kernel(setting: str | None, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    k = _std("flash_attention", "f16", 128, 128, 64)
    facts = _facts("oqkv", 3)
    _schedule(monkeypatch, "overlap")
    base = emit_llvm_text(lower_gpu(k, "sm_90a", facts), facts)[0]
    if setting is not None:
        monkeypatch.setenv("TILEC_ATTN_SAHEAD", setting)
    assert emit_llvm_text(lower_gpu(k, "sm_90a", facts), facts)[0] == base


@pytest.mark.heavy  # (the tiers above)
def test_d128_at_128_by_128_is_not_taken(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Two S tiles, O and P do not fit a consumer thread at 128 x 128, D = 128 (`AHEAD_HEADROOM`): the loop is
    the overlapped one as without the switch."""
    k = _std("flash_attention", "f16", 128, 128, 128)
    facts = _facts("oqkv", 3)
    _schedule(monkeypatch, "overlap")
    base = emit_llvm_text(lower_gpu(k, "sm_90a", facts), facts)[0]
    monkeypatch.setenv("TILEC_ATTN_SAHEAD", "1")
    assert emit_llvm_text(lower_gpu(k, "sm_90a", facts), facts)[0] == base


@pytest.mark.parametrize(("causal", "sq", "sk", "unroll"),
                         # (heavy: full_even; full_odd runs both sides of the second block's branch)
                         # (htier1: all heavy, the tiers above)
                         [pytest.param(False, 100, 120, "1", marks=pytest.mark.heavy),
                          pytest.param(False, 100, 170, "1", marks=pytest.mark.heavy),
                          pytest.param(True, 150, 40, "1", marks=pytest.mark.heavy),
                          pytest.param(False, 100, 170, "0", marks=pytest.mark.heavy)],
                         ids=["full_even", "full_odd", "causal_rows_see_nothing", "full_odd_one_block_an_iteration"])
def test_std_attention_with_s_ahead_in_the_simulator(causal: bool, sq: int, sk: int, unroll: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """One tile a block, keys not a multiple of the block (the last S issued ahead is the last block's again),
    an even and an odd number of key blocks (two blocks an iteration: the second's branch taken or not),
    undefined floats NaN: a row block whose loop never runs, or one key block only."""
    monkeypatch.setattr(llsim, "UNDEF_FLOAT", "nan")
    _ahead(monkeypatch)
    monkeypatch.setenv("TILEC_ATTN_PERSISTENT", "0")
    monkeypatch.setenv("TILEC_ATTN_SAHEAD_UNROLL", unroll)
    bh, d, bm, bn = 2, 64, 64, 64
    k = _std("flash_attention_lse", "f16", bm, bn, d)
    facts = {**_facts("oqkv", 3), **_facts(["lse"], 2)}
    _run_lse_and_check(k, facts, (bh, -(-sq // bm)), bh, 1, sq, sk, d, causal, 3 + int(causal))


@pytest.mark.heavy  # (the tiers above)
def test_a_persistent_walk_with_s_ahead_in_the_simulator(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Two CTAs walk two heads' causal tiles of 1 to 3 key blocks (the ring's counter and the carried S run on
    from tile to tile), with the walk's last round split along the keys where it splits."""
    _ahead(monkeypatch)
    d, bm, bn, sq, sk = 64, 64, 64, 150, 150
    k = _std("flash_attention_lse", "f16", bm, bn, d)
    facts = {**_facts("oqkv", 3), **_facts(["lse"], 2)}
    assert lower_gpu(k, "sm_90a", facts).persistent == 1
    _run_lse_and_check(k, facts, (2, 1), 2, 2, sq, sk, d, True, 9)


@pytest.mark.heavy
def test_two_warpgroups_grouped_heads_with_s_ahead_in_the_simulator(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """BM = 128 (two consumer warpgroups, each carrying its own S ahead), BN = 64, two query heads on one key/value
    head, keys not a multiple of the block, causal, one CTA walking both heads' tiles."""
    _ahead(monkeypatch)
    d, bm, bn, sq, sk = 64, 128, 64, 130, 200
    k = _std("flash_attention_lse", "f16", bm, bn, d)
    facts = {**_facts("oqkv", 3), **_facts(["lse"], 2)}
    _run_lse_and_check(k, facts, (1, 1), 2, 1, sq, sk, d, True, 21)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas")
@pytest.mark.heavy  # (~3 s of ptxas; the switch is opt-in, its loop covered by the simulator's cases above)
@pytest.mark.parametrize("dt", ["f16", "bf16"])
def test_128_by_64_at_d64_assembles_without_spills(dt: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """ptxas (sm_90a) on std's prefill kernel at 128 x 64, D = 64 with S ahead: no spill, no wgmma serialised
    (before S crossed the back edge as the product's own registers: C7514, every wgmma serialised). At 128 x 128
    it spills (a second S tile of 64 registers beside the ~190 the consumers use: RESULTS.md, hattn8)."""
    _ahead(monkeypatch)
    rep = assemble(emit_ptx(_std("flash_attention", dt, 128, 64, 64), "sm_90a", _facts("oqkv", 3)), "sm_90a")
    assert max(rep.spill_stores) == 0 and max(rep.spill_loads) == 0, rep.text[-2000:]
    assert "C7514" not in rep and "serialized" not in rep, rep.text[-2000:]


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas")
@pytest.mark.heavy
def test_the_benchmarks_kernel_takes_every_register_and_serialises_no_wgmma(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """At 128 x 128, D = 64 (the benchmark's blocks) the producer gives the consumers its 16 registers more (24:
    240 a consumer thread), and ptxas serialises no wgmma; what it spills (28-44 B with ptxas 13.0, in the masked
    blocks' path: RESULTS.md, hattn8) is not asserted."""
    _ahead(monkeypatch)
    monkeypatch.setenv("TILEC_ATTN_PERSISTENT", "1")
    k = _std("flash_attention", "f16", 128, 128, 64)
    facts = _facts("oqkv", 3)
    text = print_gpu_kernel(lower_gpu(k, "sm_90a", facts))
    assert "role consumer warps 8 regs 240:" in text and "role producer warps 4 regs 24" in text
    rep = assemble(emit_ptx(k, "sm_90a", facts), "sm_90a")
    assert "C7514" not in rep and "serialized" not in rep, rep.text[-2000:]


# dtype, BN, BH, BHkv, S_q, S_k, causal (std's flash_attention_lse, BM = 128, D = 64)
GPU = [("f16", 64, 4, 2, 1000, 1000, False), ("bf16", 64, 2, 2, 700, 1100, True), ("f16", 128, 3, 1, 640, 1000, False),
       ("bf16", 128, 2, 2, 1000, 1000, True)]


@pytest.mark.gpu
@pytest.mark.parametrize("case", GPU, ids=lambda c: "-".join(map(str, c)))
def test_s_ahead_on_the_gpu(case, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Against SDPA in f32 (< 1e-2) and the log-sum-exp, three launches the same bits, with the switch on (the
    128 x 128 kernel spills, right all the same)."""
    from test_attention_split import gpu_lse_check

    monkeypatch.setenv("TILEC_ATTN_SAHEAD", "1")
    dtype, bn, bh, hkv, sq, sk, causal = case
    gpu_lse_check(dtype, 64, bh, hkv, sq, sk, causal, bn + sq, bn=bn)


@pytest.mark.parametrize(("bm", "bh", "hkv", "sq", "sk", "ctas", "pieces"),
                         # (heavy, both: ~6-7 s each in llsim; the switch is opt-in and the persistent walk above
                         # covers its loop in the default suite)
                         [pytest.param(64, 1, 1, 448, 320, 4, 3 * 4, marks=pytest.mark.heavy),
                          pytest.param(128, 2, 1, 130, 200, 3, 1 * 3, marks=pytest.mark.heavy)],
                         ids=["three_rounds_of_pieces", "two_warpgroups_gqa"])
def test_the_split_last_round_with_s_ahead_in_the_simulator(bm: int, bh: int, hkv: int, sq: int, sk: int, ctas: int,
                                                            pieces: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The persistent walk's last round split along the keys (`TILEC_ATTN_SPLIT`, the D = 64 default): the pieces'
    key loops start past the first block (1 to 5 blocks a piece, odd and even) and run S ahead too; against
    NumPy with the records NaN until written, and the records the pieces wrote counted (test_attention_split's)."""
    from test_attention_split import LSE, _env, _run, _text

    monkeypatch.setattr(llsim, "UNDEF_FLOAT", "nan")
    _env(monkeypatch, form="overlap")
    monkeypatch.setenv("TILEC_ATTN_SAHEAD", "1")
    k = _std("flash_attention_lse", "f16", bm, 64, 64)
    text = _text(k, LSE)
    assert "split.save" in text and text.count("wgmma.rs") >= 4  # two walks, each two blocks an iteration
    assert _run(k, LSE, (ctas, 1), bh, hkv, sq, sk, 64, False, 5) == pieces * 2 * bm * (4 + 64 // 2)


@pytest.mark.heavy
def test_the_causal_tail_with_s_ahead_in_the_simulator(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The causal long keys' walk with its tail (`TILEC_ATTN_TAIL=1`, the kernel the benchmark's causal launches
    ask for), S ahead: pairs, then the tail's single tiles heaviest first, 4 kv positions on 3 CTAs (the tail test's
    shape in the long keys' kernel), against NumPy."""
    monkeypatch.setattr(llsim, "UNDEF_FLOAT", "nan")
    _ahead(monkeypatch)
    monkeypatch.setenv("TILEC_ATTN_SPLIT", "0")
    monkeypatch.setenv("TILEC_ATTN_TAIL", "1")
    k = _std("flash_attention_lse", "f16", 64, 64, 64)
    facts = {**_facts("oqkv", 3), **_facts(["lse"], 2)}
    text = print_gpu_kernel(lower_gpu(k, "sm_90a", facts))
    assert "%in_tail" in text and "%chained" not in text and text.count("wgmma.rs") == 2
    _run_lse_and_check(k, facts, (3, 1), 4, 4, 256, 256, 64, True, 11)
