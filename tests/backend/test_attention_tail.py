"""`TILEC_ATTN_TAIL` (`passes/attention_tail.py`): the persistent walk's last
item rounds of causal pairs dealt out as single tiles, heaviest first. The
lowered kernel's own scalar walk evaluated on the host for many launches
(`test_split_plan._walk`): every tile exactly once, with the bounds the
pairs' walk gives it, and the CTAs' largest share of key blocks no larger
(smaller where the pairs leave a round part-empty, as at the benchmark's
shape); the switch's default changes nothing; the simulator against NumPy
(the chained short keys' variant, a tail that starts inside a kv position);
ptxas; and on the GPU against a float32 reference. The default run keeps to
one walk shape and the switch (< 10 s); TILE_SLOW=1 runs the rest."""

from __future__ import annotations

import dataclasses
import math
import os
import shutil
from collections import defaultdict
from types import SimpleNamespace

import pytest
from ptxas_report import assemble
from test_attention_pipeline import _facts, _run_lse_and_check, _std
from test_split_plan import _spied, _walk

from tilelang.backend import emit_llvm_text, emit_ptx, lower_gpu
from tilelang.backend.facts import TensorFacts
from tilelang.backend.gpu.passes import attention_tail
from tilelang.backend.gpu.printer import print_gpu_kernel

# the heavier checks (the other walk shapes, the benchmark's shape, llsim, ptxas) with TILE_SLOW=1: the default
# run keeps this file under 10 s (CI's budget)
SLOW = pytest.mark.skipif(os.environ.get("TILE_SLOW") != "1", reason="slow: TILE_SLOW=1 runs it")

# the switches of the persistent walk's shape (unset by `_unset`: this file's and test_attention_once's)
WALK_SWITCHES = ("TILEC_ATTN_CHAIN", "TILEC_ATTN_PINGPONG", "TILEC_ATTN_SCHEDULE", "TILEC_ATTN_OSTORE",
                 "TILEC_ATTN_QDOUBLE", "TILEC_ATTN_KVFIRST", "TILEC_ATTN_WALK", "TILEC_ATTN_SPLIT",
                 "TILEC_ATTN_SPLIT_EDGE", "TILEC_ATTN_SPLIT_FORMS", "TILEC_ATTN_SPLIT_PAIRS", "TILEC_ATTN_TAIL",
                 "TILEC_ATTN_CHAIN_TAIL", "TILEC_ATTN_CHAIN_SPLIT", "TILEC_ATTN_ONCE")


def _unset(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    for var in WALK_SWITCHES:
        monkeypatch.delenv(var, raising=False)


def _clean(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Every switch unset but the short keys' variant's own tail (`TILEC_ATTN_CHAIN_TAIL`, on by default: walk B
    of `attention_csplit`, test_attention_csplit's), off: this file's tail is `TILEC_ATTN_TAIL`'s, in one walk."""
    _unset(monkeypatch)
    monkeypatch.setenv("TILEC_ATTN_CHAIN_TAIL", "0")
    monkeypatch.setenv("TILEC_ATTN_ONCE", "0")  # (the once variant's request beside the tail's: test_attention_once)


def _kernel(monkeypatch, tail: str, bn: int = 64, split: str = "0"):  # type: ignore[no-untyped-def]
    """std's `flash_attention` (f16, 128 x bn, D = 64) with `TILEC_ATTN_TAIL=tail` ("variant": unset, the
    default's tail variant, the split's code where it would be), and the ids of the tile positions each walk
    computes (`_tile`'s results); lowered once a process (test_split_plan's `_spied`)."""
    _clean(monkeypatch)
    facts = _facts("oqkv", 3)
    if tail == "variant":
        monkeypatch.delenv("TILEC_ATTN_SPLIT", raising=False)
        facts["o"] = dataclasses.replace(facts["o"], split_walk=attention_tail.KIND)
    else:
        monkeypatch.setenv("TILEC_ATTN_SPLIT", split)
        monkeypatch.setenv("TILEC_ATTN_TAIL", tail)
    return _spied(monkeypatch, facts, bn)


def _shares(k, pos, P: int, bh: int, hkv: int, sq: int, sk: int, causal: bool  # type: ignore[no-untyped-def]
            ) -> tuple[dict, list[float]]:
    """Each tile's (lower, upper) key bounds, one entry a time the walk runs it, and each CTA's share: key
    blocks + 1 a tile (its start and end)."""
    runs: dict = defaultdict(list)
    shares = []
    for c in range(P):
        got = _walk(k, pos, c, P, bh, hkv, sq, sk, causal)
        for t, lo, hi, *_ in got:
            runs[t].append((lo, hi))
        shares.append(sum(max(hi - lo, 0) + 1 for _, lo, hi, *_ in got))
    return runs, shares


# BH, BHkv, S_q, S_k, causal (128-row tiles of 64 keys' blocks)
SHAPES = [(6, 6, 1024, 1024, True), pytest.param((5, 1, 768, 1100, True), marks=SLOW),
          pytest.param((3, 3, 640, 640, True), marks=SLOW), pytest.param((4, 2, 512, 512, False), marks=SLOW)]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "-".join(map(str, s)))
def test_the_tail_runs_every_tile_once(shape, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Against the pairs' walk (`TILEC_ATTN_TAIL=0`), for the default's tail variant (2 item rounds; TILE_SLOW=1:
    "1", the same walk without the split's code, and 4 item rounds) and CTA counts from 1 to more than the items: the same tiles with the same bounds, each once where the
    kv positions have an even number of query blocks (odd: the tail is off and the walk is the pairs', an
    odd middle tile twice); no CTA's share larger than the pairs' largest."""
    bh, hkv, sq, sk, causal = shape
    base_k, base_pos = _kernel(monkeypatch, "0")
    kernels = {n: _kernel(monkeypatch, n) for n in (("variant", "1", "4") if os.environ.get("TILE_SLOW") == "1"
                                                    else ("variant",))}
    nf = math.ceil(sq / 128)
    better = 0
    for P in ((1, 2, 3, 5, 13) if os.environ.get("TILE_SLOW") == "1" else (3, 13)):
        P = min(P, bh * nf)
        want, want_shares = _shares(base_k, base_pos, P, bh, hkv, sq, sk, causal)
        assert len(want) == bh * nf
        for n, (k, pos) in kernels.items():
            got, shares = _shares(k, pos, P, bh, hkv, sq, sk, causal)
            assert set(got) == set(want), (n, P)
            for t, runs in got.items():
                assert set(runs) == set(want[t]), (n, P, t, runs, want[t])
                if causal and nf % 2 == 0:
                    assert len(runs) == 1, (n, P, t, runs)
                else:  # no tail: the pairs' walk, tile for tile
                    assert len(runs) == len(want[t]), (n, P, t)
            assert max(shares) <= max(want_shares), (n, P, shares, want_shares)
            better += max(shares) < max(want_shares)
    assert (better > 0) == (causal and nf % 2 == 0), better


@SLOW
def test_the_tail_at_the_benchmarks_shape(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """D = 64, causal S = 1024 at 16k tokens has 512 kv positions of 8 query blocks: 2,048 pairs on 132 CTAs,
    15.5 rounds run as 16; here a quarter of it, 512 pairs on 33 CTAs (the same rounds), 128 x 128 tiles and
    a tile's start and end taken as 1.2 key blocks: the walk's largest share 182.4 blocks with pairs, 178.4
    with the default tail (the mean: 176.9), -2.2 %."""
    loads = {}
    for n in ("0", "1"):
        k, pos = _kernel(monkeypatch, n, bn=128)
        shares = []
        for c in range(33):
            shares.append(sum(hi - lo + 1.2 for _, lo, hi, *_ in _walk(k, pos, c, 33, 128, 128, 1024, 1024, True)))
        loads[n] = (max(shares), sum(shares) / 33)
    assert loads["0"][1] == pytest.approx(loads["1"][1]) == pytest.approx(176.87, abs=0.01)
    assert loads["0"][0] == pytest.approx(182.4) and loads["1"][0] == pytest.approx(178.4), loads


def _llvm(k, facts) -> str:  # type: ignore[no-untyped-def]
    gk = lower_gpu(k, "sm_90a", facts)
    return emit_llvm_text(gk, gk.facts, "")[0]


def test_the_switch(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """"0": no tail and no request; "1": the tail in the short keys' chained variant, not in the kernel with the
    split's code (the default at D = 64 for longer keys: ptxas spilled there); anything but "auto" or a number: an
    error. Unset ("auto", `test_the_default_asks_for_the_tail_variant`): the short keys' variant as "0". (TILE_SLOW=1:
    the split forms' first form has the tail under "1"; unset and "0" give the same LLVM, byte for byte.)"""
    _clean(monkeypatch)
    k = _std("flash_attention", "f16", 128, 128, 64)
    facts = {n: TensorFacts.assumed(3) for n in "oqkv"}
    short = {**facts, "k": dataclasses.replace(facts["k"], rows_at_most=1024)}
    default = print_gpu_kernel(lower_gpu(k, "sm_90a", short))
    monkeypatch.setenv("TILEC_ATTN_TAIL", "0")
    assert print_gpu_kernel(lower_gpu(k, "sm_90a", short)) == default and "%in_tail" not in default
    assert lower_gpu(k, "sm_90a", facts).split is None  # (no request for the tail variant)
    monkeypatch.setenv("TILEC_ATTN_TAIL", "1")
    text = print_gpu_kernel(lower_gpu(k, "sm_90a", short))
    assert "%chained" in text and "%in_tail" in text
    assert "%in_tail" not in print_gpu_kernel(lower_gpu(k, "sm_90a", facts))  # the split's kernel
    if os.environ.get("TILE_SLOW") == "1":
        monkeypatch.setenv("TILEC_ATTN_SPLIT_FORMS", "1")
        assert "%in_tail" in print_gpu_kernel(lower_gpu(k, "sm_90a", facts))
        monkeypatch.delenv("TILEC_ATTN_SPLIT_FORMS")
        monkeypatch.setenv("TILEC_ATTN_TAIL", "0")
        zero = [_llvm(k, f) for f in (facts, short)]
        monkeypatch.delenv("TILEC_ATTN_TAIL")
        assert [_llvm(k, f) for f in (facts, short)] == zero  # byte for byte
    monkeypatch.setenv("TILEC_ATTN_TAIL", "1")
    assert attention_tail.rounds() == attention_tail.TAIL_ROUNDS
    monkeypatch.setenv("TILEC_ATTN_TAIL", "3")
    assert attention_tail.rounds() == 3
    monkeypatch.setenv("TILEC_ATTN_TAIL", "auto")
    assert attention_tail.rounds() == 0 and attention_tail.rounds(variant=True) == attention_tail.TAIL_ROUNDS
    monkeypatch.setenv("TILEC_ATTN_TAIL", "yes")
    with pytest.raises(ValueError, match="TILEC_ATTN_TAIL='yes'"):
        lower_gpu(k, "sm_90a", short)


def test_the_default_asks_for_the_tail_variant(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Unset ("auto"): the long keys' kernel at D = 64 is "0"'s kernel (its walk and split's code unchanged:
    the same ops after the header line) with a request (`split_form.SplitForm`, kind "tail") that holds only for
    a causal launch whose kv positions have an even number of query blocks; the variant compiled for it has the
    tail and not the split's code, and asks for nothing. D = 128's long keys' kernel asks too (`attention_tail.AUTO_D`,
    since the H100's A/B of 2026-12-05 13:20) unless `TILEC_ATTN_TAIL_D` leaves it out; "1" makes the split's
    kernel ask too (its walk has no tail of its own)."""
    _clean(monkeypatch)
    k = _std("flash_attention", "f16", 128, 128, 64)
    facts = {n: TensorFacts.assumed(3) for n in "oqkv"}
    gk = lower_gpu(k, "sm_90a", facts)
    text = print_gpu_kernel(gk)
    monkeypatch.setenv("TILEC_ATTN_TAIL", "0")
    zero = print_gpu_kernel(lower_gpu(k, "sm_90a", facts))
    assert text.split("\n", 1)[1] == zero.split("\n", 1)[1] and "%in_tail" not in text and "split.save" in text
    assert f"split-form @{gk.split.param}" in text.splitlines()[0] and "split-form" not in zero.splitlines()[0]
    form = gk.split
    assert form is not None and [kind for kind, _ in form.ons] == [attention_tail.KIND] and form.reads() == ("causal",)

    def dims(bh: int, s: int) -> dict:
        return {n: (bh, s, 64) for n in "oqkv"}

    # (BH, S, causal, CTAs) -> the variant: causal 32 / 8 query blocks a head on 132 / 16 CTAs; full; 3 and 9 blocks
    for (bh, s, causal, ctas), want in [((16, 4096, True, 132), "tail"), ((4, 1024, True, 16), "tail"),
                                        ((16, 4096, False, 132), ""), ((3, 384, True, 9), ""), ((2, 1152, True, 18), "")]:
        assert form.splits(dims(bh, s), {"causal": causal, "scale": 0.125}, ctas) == want, (bh, s, causal, ctas)
    monkeypatch.delenv("TILEC_ATTN_TAIL")
    variant = lower_gpu(k, "sm_90a", form.refine(facts, attention_tail.KIND))
    vtext = print_gpu_kernel(variant)
    assert variant.split is None and "%in_tail" in vtext and "split.save" not in vtext and "split walk tail" in vtext
    # the runtime (`CudaDevice._choose`, `_variant` stubbed) on 132 SMs: causal S = 4096 runs the tail variant, the
    # full launch the base kernel, causal S = 1024 the short keys' variant (which asks for nothing)
    dev = stubbed_device(SimpleNamespace(short=gk.short, persistent=1, split=form),
                         SimpleNamespace(short=None, persistent=1, split=None))
    for bh, s, causal, want in ((64, 4096, True, ("base", form.key(attention_tail.KIND))), (64, 4096, False, ("base",)),
                                (256, 1024, True, ("base", gk.short.key()))):
        args = [SimpleNamespace(shape=(bh, s, 64))] * 4 + [0.125, causal]
        assert dev._choose(SimpleNamespace(ir=k), ("base",), facts, args, None, (bh, s // 128))[1] == want
    k128 = _std("flash_attention", "f16", 128, 128, 128)
    g128 = lower_gpu(k128, "sm_90a", facts)
    assert g128.split is not None and [kind for kind, _ in g128.split.ons] == [attention_tail.KIND]
    monkeypatch.setenv("TILEC_ATTN_TAIL_D", "64")
    assert lower_gpu(k128, "sm_90a", facts).split is None
    monkeypatch.delenv("TILEC_ATTN_TAIL_D")
    if os.environ.get("TILE_SLOW") == "1":
        assert "%in_tail" in print_gpu_kernel(lower_gpu(k128, "sm_90a", g128.split.refine(facts, attention_tail.KIND)))
        monkeypatch.setenv("TILEC_ATTN_TAIL", "1")
        g1 = lower_gpu(k, "sm_90a", facts)
        assert g1.split is not None and [kind for kind, _ in g1.split.ons] == [attention_tail.KIND]


def stubbed_device(first: object, later: object, sms: int = 132):  # type: ignore[no-untyped-def]
    """A `CudaDevice` on `sms` SMs whose `_variant` compiles nothing: the kernel's first variant's ABI is
    `first`, every later one's `later`, and the function it returns is the facts' key (so `_choose`'s answer
    names the variant it picked)."""
    from types import SimpleNamespace

    from tilelang.runtime.cuda import CudaDevice

    dev = CudaDevice.__new__(CudaDevice)
    dev.ctx = SimpleNamespace(info=SimpleNamespace(sm_count=sms, max_smem_optin=227 * 1024))
    dev._variant = lambda pk, key, fs, span: (first if len(key) == 1 else later, key)  # type: ignore[method-assign]
    return dev


@SLOW
def test_the_tail_in_the_simulator(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """std's `flash_attention_lse` (64 x 64, D = 64, causal) in the chained short keys' variant, walking
    pairs and a tail of 2 item rounds, against NumPy: 4 kv positions of 2 pairs on 3 CTAs, one item round
    of pairs, then the tail from kv position 1's second pair (weight classes with and without kv position
    1). (The long keys' kernel walks the same scalar ops: `test_the_tail_runs_every_tile_once`.)"""
    short, sq, bh, ctas, tail = True, 256, 4, 3, "1"
    import llsim

    monkeypatch.setattr(llsim, "UNDEF_FLOAT", "nan")
    _clean(monkeypatch)
    monkeypatch.setenv("TILEC_ATTN_SPLIT", "0")
    monkeypatch.setenv("TILEC_ATTN_TAIL", tail)
    k = _std("flash_attention_lse", "f16", 64, 64, 64)
    facts = {**_facts("oqkv", 3), **_facts(["lse"], 2)}
    if short:
        facts["k"] = dataclasses.replace(facts["k"], rows_at_most=512)
    text = print_gpu_kernel(lower_gpu(k, "sm_90a", facts))
    assert "%in_tail" in text and ("%chained" in text) == short
    _run_lse_and_check(k, facts, (ctas, 1), bh, bh, sq, sq, 64, True, 11)


@SLOW
@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas not installed")
@pytest.mark.parametrize(("d", "rows", "forms", "spill"), [(64, 1024, "0", 0), (64, 0, "1", 0), (128, 1024, "0", 8),
                                                         (64, 0, "variant", 0), (128, 0, "variant", 4)],
                         ids=["d64_short_chained", "d64_long_first_form", "d128_short", "d64_long_variant",
                              "d128_long_variant"])
def test_the_tail_assembles(d: int, rows: int, forms: str, spill: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """ptxas 13.0: no spills at D = 64 (the short keys' chained variant; the long keys' kernel without the
    split's code, as the default's tail variant is); at D = 128's short variant two walk values stored once and
    reloaded once a tile in each role, outside the key loop (8 bytes); D = 128's long keys' tail variant 4 bytes
    (asked for by default all the same, `attention_tail.AUTO_D`: it won on the H100)."""
    _clean(monkeypatch)
    facts = {n: TensorFacts.assumed(3) for n in "oqkv"}
    if forms == "variant":
        facts["o"] = dataclasses.replace(facts["o"], split_walk=attention_tail.KIND)
    else:
        monkeypatch.setenv("TILEC_ATTN_TAIL", "1")
        monkeypatch.setenv("TILEC_ATTN_SPLIT_FORMS", forms)
    if rows:
        facts["k"] = dataclasses.replace(facts["k"], rows_at_most=rows)
    r = assemble(emit_ptx(_std("flash_attention", "f16", 128, 128, d), "sm_90a", facts), "sm_90a")
    assert r.max_spill_stores <= spill, r.text


# dtype, D, BH, S, CTAs, the walk's items: std's flash_attention_lse (128 x 128), causal, with the tail on
GPU_CASES = [
    ("f16", 64, 5, 1024, 3, "20 pairs on 3 CTAs: the tail from a kv position's middle (short keys, chained)"),
    ("bf16", 64, 3, 2048, 4, "24 pairs on 4 (long keys)"),
    ("f16", 128, 7, 1024, 5, "28 pairs on 5 (D = 128's short variant)"),
    ("bf16", 64, 2, 1000, 3, "ragged rows: 8 pairs on 3"),
    ("f16", 64, 3, 2048, 5, "default: the long keys' tail variant, 24 pairs on 5"),
    ("bf16", 128, 3, 2048, 5, "default: D = 128's long keys' tail variant (AUTO_D), 24 pairs on 5"),
]


@pytest.mark.gpu
@pytest.mark.parametrize("case", GPU_CASES, ids=lambda c: "-".join(map(str, c[:5])))
def test_the_tail_on_the_gpu(case, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Causal attention with `TILEC_ATTN_TAIL=1` (and `TILEC_ATTN_SPLIT=0`, so that the long keys' kernel has
    no split code, as in benchmarks/h15s_device.sh), or unset ("default": the launch picks the tail variant), on
    a few CTAs against a float32 reference (< 1e-2) and the log-sum-exp."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no CUDA device")

    dtype, d, bh, s, ctas, what = case
    _clean(monkeypatch)
    monkeypatch.delenv("TILEC_ATTN_SPLIT", raising=False)
    if not what.startswith("default"):
        monkeypatch.setenv("TILEC_ATTN_TAIL", "1")
        monkeypatch.setenv("TILEC_ATTN_SPLIT", "0")
    monkeypatch.setenv("TILEC_PERSISTENT_SMS", str(ctas))
    causal_lse_on_gpu(dtype, d, bh, s)


def causal_lse_on_gpu(dtype: str, d: int, bh: int, s: int) -> None:
    """`flash_attention_lse` causal, [bh, s, d] of `dtype` (128 x 128 tiles), as the switches set now, against a
    float32 reference (< 1e-2 of the largest output) and the log-sum-exp (shared with test_attention_once)."""
    import torch

    import tilelang

    attn = tilelang.compile("use std::attention::*;\n")
    dt = {"f16": torch.float16, "bf16": torch.bfloat16}[dtype]
    g = torch.Generator(device="cuda").manual_seed(s + d + bh)
    q, k, v = (torch.randn(bh, s, d, device="cuda", dtype=dt, generator=g) for _ in range(3))
    sc = torch.einsum("bqd,bkd->bqk", q.float(), k.float()) * d**-0.5
    keep = torch.arange(s, device="cuda")[None, :] <= torch.arange(s, device="cuda")[:, None]
    sc = sc.masked_fill(~keep, float("-inf"))
    want_lse = torch.logsumexp(sc, dim=-1)
    want = torch.softmax(sc, dim=-1) @ v.float()
    o = torch.full_like(q, float("nan"))
    lse = torch.full((bh, s), float("nan"), device="cuda")
    attn.flash_attention_lse[dtype, 128, 128, d](tilelang.partition(o, [1, 128, d]), tilelang.partition(lse, [1, 128]),
                                                  q, k, v, d**-0.5, True).sync()
    assert float((o.float() - want).abs().max() / want.abs().max()) < 1e-2
    torch.testing.assert_close(lse, want_lse, rtol=1e-4, atol=1e-3)
