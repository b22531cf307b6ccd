"""The once variant (`attention_tiles.ONCE_KIND`, `TILEC_ATTN_ONCE`: on by default): a causal walk of pairs over
an odd number of query blocks a head ran each head's middle tile twice (paired with itself); in the variant two
heads' middle tiles are one pair, so every tile runs once. Kernels ask for it where their walk hands out such pairs
(`attention_split.tail_request`, evaluated on the host a launch shape); every other launch runs the kernel it ran.
The lowered kernels' own scalar walks evaluated on the host for many launches (`test_split_plan._walk`), against
the default kernel's: the same tiles on the same key bounds, each once, no CTA's share larger; llsim runs the
variant against NumPy and counts each Q tile's copies."""

from __future__ import annotations

import dataclasses
import math

import pytest
from test_attention_csplit import _short
from test_attention_pipeline import _facts
from test_attention_tail import _shares, causal_lse_on_gpu
from test_attention_tail import _unset as _clean
from test_split_plan import _spied, _walk

from tilelang.backend import lower_gpu
from tilelang.backend.gpu.passes import attention_tail
from tilelang.backend.gpu.passes import attention_tiles as tiles


def _once(facts):  # type: ignore[no-untyped-def]
    return {**facts, "o": dataclasses.replace(facts["o"], split_walk=tiles.ONCE_KIND)}


def _kernel(monkeypatch, variant: bool):  # type: ignore[no-untyped-def]
    """std's `flash_attention` (f16, 128 x 64, D = 64): the default kernel (the long keys' one, with the split's
    code) or its once variant, and the ids of the tile positions its walks compute."""
    _clean(monkeypatch)
    facts = _facts("oqkv", 3)
    return _spied(monkeypatch, _once(facts) if variant else facts, 64)


# BH, S (S_q = S_k; 128-row query blocks: nf = 3, 3, 9, 5, 5, 9, 7: odd, where the variant runs), causal; (heavy:
# more shapes and CTA counts)
SHAPES = [(3, 384, True), (1, 384, True), (5, 1100, True)]
MORE = [(4, 640, True), (2, 640, True), (7, 1152, True), (3, 896, True)]


@pytest.mark.parametrize("shapes", [SHAPES, pytest.param(MORE, marks=pytest.mark.heavy)], ids=["some", "more"])
def test_every_tile_runs_once(shapes, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Launches of 1 CTA to more than the pairs (an odd head count leaves the last head's middle tile alone, the
    walk's last item: its CTA runs one round fewer): each tile once on the bounds the default kernel's walk gives
    it, which runs each head's middle tile twice; no CTA's share above the default's largest, the total smaller
    by the middle tiles."""
    new_k, new_pos = _kernel(monkeypatch, True)
    old_k, old_pos = _kernel(monkeypatch, False)
    counts = (1, 2, 3, 7, 132) if shapes is SHAPES else (1, 2, 3, 4, 5, 6, 7, 8, 13, 31, 132)
    for bh, s, causal in shapes:
        nf = math.ceil(s / 128)
        assert causal and nf % 2 == 1
        for P in counts:
            P = min(P, bh * nf)  # the runtime launches at most a CTA a tile
            old, old_shares = _shares(old_k, old_pos, P, bh, bh, s, s, causal)
            new, new_shares = _shares(new_k, new_pos, P, bh, bh, s, s, causal)
            where = (bh, s, causal, P)
            assert set(new) == set(old) and len(new) == bh * nf, where
            assert all(len(v) == 1 and v[0] in old[t] for t, v in new.items()), (where, dict(new))
            assert sum(len(v) for v in old.values()) == bh * nf + bh, where
            assert max(new_shares) <= max(old_shares), (where, new_shares, old_shares)
            middle = (nf + 1) // 2 * 2 + 1  # a middle tile's key blocks of 64 + 1 (S_q = S_k: through its diagonal)
            assert sum(new_shares) == sum(old_shares) - bh * middle, (where, new_shares, old_shares)


# BH, BHkv (GQA: several query heads a kv head), S_q, S_k: one query block a head (nf = 1) to nine, S_q != S_k
ODD_SHAPES = [(bh, hkv, sq, sk) for bh, hkv in [(1, 1), (3, 3), (3, 1), (6, 2), (5, 5)]
              for sq, sk in [(128, 128), (384, 384), (300, 300), (384, 512), (384, 200), (129, 129), (1100, 1100),
                             (330, 260)]]


@pytest.mark.heavy  # (~15 s: 280 launches of both walks)
def test_every_tile_runs_once_with_gqa_and_other_key_lengths(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """hrev28's review: the variant's walk with grouped kv heads, S_q != S_k (causal from the top left), one to nine
    query blocks a head, 1 CTA to more than the tiles: every tile the default walk runs is run once, on the union of
    the key bounds the default kernel gives it (which splits some tiles' keys over CTAs and runs a middle tile
    twice)."""
    from collections import defaultdict

    new_k, new_pos = _kernel(monkeypatch, True)
    old_k, old_pos = _kernel(monkeypatch, False)

    def runs(k, pos, P: int, bh: int, hkv: int, sq: int, sk: int) -> dict:  # type: ignore[no-untyped-def]
        got: dict = defaultdict(list)
        for c in range(P):
            for t, lo, hi, *_ in _walk(k, pos, c, P, bh, hkv, sq, sk, True):
                got[t].append((lo, hi))
        return got

    for bh, hkv, sq, sk in ODD_SHAPES:
        for P in (1, 2, 3, 5, 132):
            P = min(P, bh * math.ceil(sq / 128))
            old, new = runs(old_k, old_pos, P, bh, hkv, sq, sk), runs(new_k, new_pos, P, bh, hkv, sq, sk)
            where = (bh, hkv, sq, sk, P)
            assert set(new) == set(old), where
            for t, v in new.items():
                whole = (min(lo for lo, _ in old[t]), max(hi for _, hi in old[t]))
                assert len(v) == 1 and (v[0] in old[t] or v[0] == whole), (where, t, v, old[t])


def test_the_kernels_ask_for_the_variant_where_it_applies(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The long keys' kernel asks for the tail variant (pairs of an even nf) and the once variant (odd); the short
    keys' variant (which asks for no tail) for the once variant; neither variant asks again. The host's plan: "once"
    for a causal launch of an odd number of query blocks, whatever the heads and CTAs; "tail" for an even one;
    nothing for a full launch. `TILEC_ATTN_ONCE=0`: no once request; anything but 0 or 1: an E0604 error."""
    from test_attention_pipeline import _std

    from tilelang.backend.env_switch import SwitchError

    _clean(monkeypatch)
    k = _std("flash_attention", "f16", 128, 128, 64)
    facts = _facts("oqkv", 3)
    long_k = lower_gpu(k, "sm_90a", facts)
    short_k = lower_gpu(k, "sm_90a", _short(facts, 128))
    assert [kind for kind, _ in long_k.split.ons] == [attention_tail.KIND, tiles.ONCE_KIND]
    assert [kind for kind, _ in short_k.split.ons] == [tiles.ONCE_KIND]
    assert lower_gpu(k, "sm_90a", _once(facts)).split is None and lower_gpu(k, "sm_90a", _once(_short(facts, 128))).split is None
    for bh, s, causal, ctas in [(3, 384, True, 132), (1, 1100, True, 5), (8, 384, True, 2), (4, 1024, True, 132),
                                (4, 384, False, 132), (2, 1000, True, 132)]:
        dims = {"o": (bh, s, 64), "q": (bh, s, 64), "k": (bh, s, 64), "v": (bh, s, 64)}
        want = "" if not causal else tiles.ONCE_KIND if math.ceil(s / 128) % 2 else attention_tail.KIND
        assert long_k.split.splits(dims, {"scale": 0.1, "causal": causal}, ctas) == want, (bh, s, causal)
    monkeypatch.setenv("TILEC_ATTN_ONCE", "0")
    assert [kind for kind, _ in lower_gpu(k, "sm_90a", facts).split.ons] == [attention_tail.KIND]
    assert lower_gpu(k, "sm_90a", _short(facts, 128)).split is None
    monkeypatch.setenv("TILEC_ATTN_ONCE", "yes")
    with pytest.raises(SwitchError):
        tiles.once_default()


def count_copies(monkeypatch, tensor: str):  # type: ignore[no-untyped-def]
    """A Counter of llsim's TMA copies of `tensor` by their coordinates (the simulator runs them through
    `llsim_exec._tma`)."""
    import collections

    import llsim_exec

    copies: collections.Counter[tuple[int, ...]] = collections.Counter()
    tma = llsim_exec._tma

    def counted(mem, bars, dst, bar, tm, *c):  # type: ignore[no-untyped-def]
        if str(tm.key) == tensor:
            copies[tuple(int(x) for x in c)] += 1
        return tma(mem, bars, dst, bar, tm, *c)

    monkeypatch.setattr(llsim_exec, "_tma", counted)
    return copies


# (heavy: the long keys' kernel, whose walk test_every_tile_runs_once evaluates, and its two consumer warpgroups)
@pytest.mark.parametrize(("bm", "short", "bh", "ctas"), [(64, True, 3, 2),
                                                         pytest.param(64, False, 3, 2, marks=pytest.mark.heavy),
                                                         pytest.param(128, False, 2, 1, marks=pytest.mark.heavy)],
                         ids=["short_keys", "long_keys", "two_warpgroups"])
def test_the_variant_in_the_simulator(bm: int, short: bool, bh: int, ctas: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The once variant, causal, 3 query blocks a head (S = 150 or 300: an edge tile), on fewer CTAs than pairs:
    the chained short keys' variant (walk A, then its causal tail's walk B, both once) and the long keys' kernel;
    3 heads: the last one's middle tile alone, its CTA's last round. Right against NumPy, and each Q tile copied
    once (the default kernel copies each middle one twice)."""
    import llsim
    from test_attention_pipeline import _run_lse_and_check, _std

    _clean(monkeypatch)
    monkeypatch.setattr(llsim, "UNDEF_FLOAT", "nan")
    q = count_copies(monkeypatch, "q")
    k = _std("flash_attention_lse", "f16", bm, 64, 64)
    facts = {**_facts("oqkv", 3), **_facts(["lse"], 2)}
    facts = _once(_short(facts, 64) if short else facts)
    assert lower_gpu(k, "sm_90a", facts).persistent == 1
    s = 150 if bm == 64 else 300
    _run_lse_and_check(k, facts, (ctas, 1), bh, bh, s, s, 64, True, 3)
    assert len(q) == bh * 3 and set(q.values()) == {1}, sorted(q.items())


# dtype, D, BH, S (query blocks of 128: 3, 5, 9), CTAs; the launch picks the once variant (its plan), on few CTAs
GPU_CASES = [("f16", 64, 3, 384, 4), ("bf16", 128, 2, 640, 3), ("f16", 128, 5, 1100, 7), ("f16", 64, 4, 1100, 132)]


@pytest.mark.gpu
@pytest.mark.parametrize("case", GPU_CASES, ids=lambda c: "-".join(map(str, c)))
def test_the_variant_on_the_gpu(case, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Causal attention of an odd number of query blocks a head as the runtime launches it by default (the once
    variant, short keys' or long: `test_the_kernels_ask_for_the_variant_where_it_applies`), on a few CTAs, against
    a float32 reference (< 1e-2) and the log-sum-exp."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no CUDA device")

    dtype, d, bh, s, ctas = case
    _clean(monkeypatch)
    monkeypatch.setenv("TILEC_PERSISTENT_SMS", str(ctas))
    causal_lse_on_gpu(dtype, d, bh, s)


@pytest.mark.heavy  # (ptxas on four attention kernels, ~20 s)
@pytest.mark.parametrize(("dt", "d"), [("f16", 64), ("bf16", 128)])
def test_the_variant_assembles_without_spills(dt: str, d: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The once variant, long and short keys, in ptxas 13 for sm_90a: no spills (in the default kernel the once walk's
    set-up spilled 64-100 B at D = 64: why it is a variant)."""
    import shutil

    from ptxas_report import assemble
    from test_attention_pipeline import _std

    from tilelang.backend import emit_ptx

    if shutil.which("ptxas") is None:
        pytest.skip("ptxas not installed")
    _clean(monkeypatch)
    k = _std("flash_attention_lse", dt, 128, 128, d)
    facts = {**_facts("oqkv", 3), **_facts(["lse"], 2)}
    for f in (facts, _short(facts, 128)):
        r = assemble(emit_ptx(k, "sm_90a", _once(f)), "sm_90a")
        assert r.max_spill_stores == 0, r.text
