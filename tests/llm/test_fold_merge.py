"""The decode step's split merge folded into the early ring attention in one
pass (`Plan.fl`, `attn_decode_ring_fold`: the block of a KV head that arrives
last reads the head's shares at once and stores the merged rows; no
`combine_splits` launch) and the early ring's key ranges balanced (`Plan.kb`,
`ring_split_early`'s EA & 8), and the layer's KV cache prefetched into L2 by
the QKV GEMV (`Plan.kp`, `rms_gemv_kv`): the tiny engine against NumPy on the
interpreter, the kernels each step form launches, the plans refused, and the
machine code at Qwen3's decode shapes (ptxas sm_90a)."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
from engine import TileQwen3, load_kernels
from model import Qwen3Config, random_weights
from plan import check_fold, plan_for
from ptxas_report import assemble, sass
from reference import NumpyQwen3
from test_engine import TINY, _close, _tokens
from test_gemv_registers import _ring_ptx

from tilelang.backend.target import ptxas_available
from tilelang.run import run_source

FORMS = {"short_tc": 4, "short_ns": 2, "fma_until": 8}  # 4 splits, 2 below position 8


@pytest.fixture(scope="module")
def weights() -> dict:  # type: ignore[type-arg]
    return random_weights(TINY, seed=0)


# `Plan.fl` is opt-in (no plan sets it): one engine case by default, 11-1-4 (both forms folded, the waiting
# arrival's generics, balanced ragged ranges); the others `heavy`, each a subset of its switches' edges (the
# fold in one form, PE 3, cdiv's ranges: the same kernel and engine paths 11-1-4 and the simulator test run)
_FOLD_CASES = [(3, 0, 8), (1, 1, 4), (2, 1, 4), (7, 1, 8), (11, 1, 4), (9, 0, 8)]


@pytest.mark.parametrize(("fl", "kb", "bt"), [c if c == (11, 1, 4) else pytest.param(*c, marks=pytest.mark.heavy)
                                              for c in _FOLD_CASES])
def test_folded_merge_decodes_as_numpy(weights: dict, fl: int, kb: int, bt: int) -> None:  # type: ignore[type-arg]
    # both step forms (4 splits; 2 below position 8), the fold in the forms
    # whose bit is set and `combine_splits` in the others; over 21 positions the
    # last key block is ragged, splits are empty (cdiv ranges) or uneven
    # (balanced: at bt 4, 6 blocks over 4 splits are 2, 2, 1, 1); fl 7: both
    # forms with PE 3 (no PDL trigger: the CPU runs it as any other); fl 11, 9:
    # the head's last split merges (AW 1, `arrive_wait`: GPU code only)
    plan = dataclasses.replace(plan_for(TINY, 64, None), tc=4, bt=bt, ns=4, ea=3, fl=fl, kb=kb, **FORMS)
    eng = TileQwen3(TINY, weights, max_seq=64, plan=plan)
    for form, bit in (("short", 1), ("long", 2)):
        names = [op.kernel.__name__ for op in eng._form_ops[form]]
        folds = [op for op in eng._form_ops[form] if op.kernel.__name__ == "attn_decode_ring_fold"]
        layers = TINY.num_hidden_layers
        assert len(folds) == (layers if fl & bit else 0), (form, names)
        assert names.count("combine_splits") == (0 if fl & bit else layers), (form, names)
        assert names.count("attn_decode_ring_early") == (0 if fl & bit else layers), (form, names)
        ea = {op.generics["EA"] for op in eng._form_ops[form] if op.kernel.__name__.startswith("attn_decode_ring")}
        assert ea == {3 | 8 * kb}, (form, ea)
        assert {op.generics["NS"] for op in folds} <= {2 if form == "short" else 4}
        assert {op.generics["PE"] for op in folds} <= {3 if fl & 4 else 0}  # + 4: no trigger
        assert {op.generics["AW"] for op in folds} <= {1 if fl & 8 else 0}  # + 8: the last split waits
    ref = NumpyQwen3(TINY, weights, max_seq=64)
    for t in _tokens(21, TINY.vocab_size, seed=17):
        _close(eng.feed(t), ref.step(t))


@pytest.mark.parametrize(("fields", "words"), [
    ({"fl": 8}, "must be 0-3"),
    ({"fl": 16}, "must be 0-3"),
    ({"fl": 4}, "must be 0-3"),
    ({"fl": 7, "pe": 1}, "not with pe"),
    ({"kb": 2}, "Plan.kb 0 or 1"),
    ({"fl": 1, "short_tc": 1}, "the short form has tc = 1"),
    ({"fl": 2, "tc": 1, "short_tc": 4}, "the long form has tc = 1"),
    ({"fl": 1, "fm": 2, "ea": 0}, "choose one merge"),
    ({"fl": 3, "mr": 4}, "choose one merge"),
    ({"fl": 1, "aw": 8}, "choose one merge"),
])
def test_fold_and_balance_refuse_plans_they_cannot_run(weights: dict, fields: dict, words: str) -> None:  # type: ignore[type-arg]
    plan = dataclasses.replace(plan_for(TINY, 64, None), **{"tc": 4, "bt": 8, "ns": 4, "ea": 3, **FORMS, **fields})
    with pytest.raises(ValueError, match=words):
        TileQwen3(TINY, weights, max_seq=64, plan=plan)


@pytest.mark.parametrize("model", ["0.6b", "4b", "8b"])
def test_plans_balance_on_sm_90_and_leave_the_fold_off(model: str) -> None:
    # `kb` 1 in sm_90's plans (measured: H100, 2026-12-06), 0 on the CPU and
    # before sm_90; the fold and the KV prefetch opt-in everywhere (measured
    # slower); sm_90's plans take the fold in both step forms
    cfg = Qwen3Config.load(f"qwen3-{model}")
    hopper = plan_for(cfg, 2048, 132, hopper=True)
    assert (hopper.fl, hopper.kb, hopper.kp, hopper.ea) == (0, 1, 0, 3)
    for plan in (plan_for(cfg, 2048, None), plan_for(cfg, 2048, 108)):
        assert (plan.fl, plan.kb, plan.kp) == (0, 0, 0)
    check_fold(dataclasses.replace(hopper, fl=3))


@pytest.mark.parametrize(("fields", "kernel", "ea"), [({"ea": 7}, "attn_decode_ring_early", 15),
                                                      ({"ea": 0}, "attn_decode_ring", None),
                                                      ({"aw": 8}, "attn_decode_ring_w8", 11)])
def test_balance_reaches_the_early_ring_forms_and_leaves_the_others(weights: dict, fields: dict, kernel: str,  # type: ignore[type-arg]
                                                                    ea: int | None) -> None:
    # `kb` 1 with ea 7 (`ring_split_first`, EA 15) and `aw` 8 (`ring_split_early`
    # in 8 warps) balances their ranges; with ea 0 (`attn_decode_ring`, cdiv's
    # ranges) it is accepted and changes nothing; each decodes as NumPy does
    plan = dataclasses.replace(plan_for(TINY, 64, None), tc=4, ns=4, kb=1, **FORMS,  # (aw 8: bt a multiple of 8)
                               **({"ea": 3, "bt": 8, **fields} if "aw" in fields else {"bt": 4, **fields}))
    eng = TileQwen3(TINY, weights, max_seq=64, plan=plan)
    ops = [op for op in eng._form_ops["short"] if op.kernel.__name__ == kernel]
    assert len(ops) == TINY.num_hidden_layers
    assert {op.generics.get("EA") for op in ops} == {ea}
    ref = NumpyQwen3(TINY, weights, max_seq=64)
    for t in _tokens(13, TINY.vocab_size, seed=23):
        _close(eng.feed(t), ref.step(t))


@pytest.mark.skipif(not ptxas_available(), reason="needs ptxas")
# (the opt-in fold's PTX and SASS: 4b-16-1, the sm_90 plans' balanced ranges, by default; the other shapes
# and splits `heavy`: the same kernel's code at other generics, the same checks)
@pytest.mark.parametrize(("model", "ns", "kb"), [
    pytest.param(*c, marks=pytest.mark.heavy) if c != ("4b", 16, 1) else c
    for c in [("4b", 16, 0), ("4b", 32, 0), ("4b", 16, 1), ("8b", 16, 0), ("0.6b", 16, 0)]])
def test_fold_merges_without_an_exchange(model: str, ns: int, kb: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # the fold at Qwen3's decode shapes (the short form's 16 splits, the long
    # form's 32 in 2 steps of 16, as the engine launches it), under the plan's
    # small-tile setting (`Plan.rs` 1): one acq_rel atomic a block (the
    # arrival); after it no barrier but the arrival's own (every sum over the
    # shares inside a thread: the log-sum-exps loaded into the rows' layout),
    # and every load (the shares' LDG.128 and log-sum-exps, the maxima's
    # rows) before the first exponential: one L2 round trip; no spill
    monkeypatch.setenv("TILEC_REPLICATE_SMALL", "1")
    cfg = Qwen3Config.load(f"qwen3-{model}")
    plan = dataclasses.replace(plan_for(cfg, 2048, 132, hopper=True), ns=ns)
    g, d = cfg.group, cfg.head_dim
    nc = min(ns, 16)
    kern = load_kernels().attn_decode_ring_fold[g, d // 2, plan.bt, 0, 3 | 8 * kb, ns, nc, 0]
    ptx = _ring_ptx(kern, cfg, plan, merged=True)
    assert ptx.count("atom.acq_rel.gpu.global.add.u32") == 1
    tail = sass(ptx, "sm_90a").split("ATOMG", 1)[1]
    assert len(re.findall(r"BAR\.SYNC", tail)) == 1 and "STS" not in tail.split("BAR.SYNC", 1)[1]
    first, _, rest = tail.partition("MUFU.EX2")
    assert len(re.findall(r"LDG", first)) >= 2 * nc, first.count("LDG")  # a step's rows and log-sum-exps
    if g == 4:  # 4B, 8B: a share's 4 columns and the maxima's [G] rows, 16 bytes each
        assert len(re.findall(r"LDG\.E\.128", first)) >= nc + ns, first.count("LDG.E.128")
    assert "LDG" not in rest  # (ptxas issues the second step's loads of the 32 shares with the first's too)
    r = assemble(ptx, "sm_90a")
    assert r.max_spill_stores == 0 and r.max_registers * 128 <= 65536, r.text


@pytest.mark.heavy  # (opt-in `fl` + 8: test_fold_merges_in_the_simulator_as_the_pair_does[4-1] runs its code)
@pytest.mark.skipif(not ptxas_available(), reason="needs ptxas")
def test_waiting_fold_leaves_without_the_atomic_round_trip(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # `Plan.fl` + 8 (AW 1, `#[hints(arrive_wait)]`) at 4B's short form (16
    # splits, balanced, `rs` 1): no acq_rel atomic; a split that is not its
    # head's last makes its stores visible (MEMBAR), adds to the counter
    # without an answer (REDG) and exits with no barrier or load between;
    # the last split polls the counter with acquire loads (each followed by
    # the L1's invalidation), zeroes it, and merges after one barrier; no
    # spill, and no more registers than the default plan's ring attention
    # (226, `attn_decode_ring_early`; the default arrival's fold 199, this 222)
    monkeypatch.setenv("TILEC_REPLICATE_SMALL", "1")
    cfg = Qwen3Config.load("qwen3-4b")
    plan = dataclasses.replace(plan_for(cfg, 2048, 132, hopper=True), ns=16)
    g, d = cfg.group, cfg.head_dim
    kerns = load_kernels().attn_decode_ring_fold
    base, ptx = (_ring_ptx(kerns[g, d // 2, plan.bt, 0, 11, 16, 16, aw], cfg, plan, merged=True) for aw in (0, 1))
    assert "atom.acq_rel" not in ptx and ptx.count("red.release.gpu.global.add.u32") == 1
    assert ptx.count("ld.acquire.gpu.global.u32") == 1 and "atom.acq_rel.gpu.global.add.u32" in base
    code = sass(ptx, "sm_90a")
    assert "ATOMG" not in code
    signal = code.split("REDG.E.ADD.STRONG.GPU", 1)
    assert len(signal) == 2 and "MEMBAR" in signal[0].rsplit("BAR.SYNC", 1)[1]
    between = signal[1].split("EXIT", 1)[0]
    assert not re.search(r"BAR\.SYNC|LDG|ATOM", between), between
    poll = re.search(r"(LDG\.E\.STRONG\.GPU.*?)STG\.E\.STRONG\.GPU", code, re.S)
    assert poll and "CCTL.IVALL" in poll.group(1) and "BRA" in poll.group(1)
    # the waiter's warp 0 converges (its thread 0 back from the poll) before the region's barrier
    after = code[poll.end():].split("BAR.SYNC", 1)[0]
    assert "WARPSYNC" in after or "BSYNC" in after, after
    r, r0 = assemble(ptx, "sm_90a"), assemble(base, "sm_90a")
    assert r.max_spill_stores == 0 and r0.max_spill_stores == 0 and r.max_registers <= 226, r.text


def test_balanced_ranges_cover_every_key_block_once() -> None:
    # std's `balanced_range` (the kernel's, run by the host interpreter) for
    # T = 0..65 key blocks over NS = 1, 2, 16, 17, 32 splits: every block once,
    # in order, the splits' lengths differ by one at most with the longer
    # ones first (so the last split, which also folds the token, is never
    # longer), none longer than cdiv(T, NS). (T to 65, was 99: every NS still
    # meets every remainder T % NS with T // NS = 0, 1 and 2, T < NS, T = NS,
    # T = 2 NS and 2 NS + 1 at 32; the interpreter's 13,600 calls were 6.6 CPU-s)
    counts = (1, 2, 16, 17, 32)
    T = 66
    body = "".join(f"for t in 0..{T} {{ for s in 0..{n} {{ let (a, b) = balanced_range(t, s, {n}); "
                   "print(a); print(b); } }\n" for n in counts)
    rc, out, err = run_source("use std::llm::attention::balanced_range;\nfn main() {\n" + body + "}\n")
    assert rc == 0, err
    vals = iter(int(v) for v in out.split())
    for n in counts:
        for t in range(T):
            spans = [(next(vals), next(vals)) for _ in range(n)]
            sizes = [b - a for a, b in spans]
            assert spans[0][0] == 0 and spans[-1][1] == t, (t, n, spans)
            assert all(spans[i][1] == spans[i + 1][0] for i in range(n - 1)), (t, n, spans)
            assert sizes == sorted(sizes, reverse=True) and sizes[0] - sizes[-1] <= 1, (t, n, sizes)
            assert sizes[0] == -(-t // n), (t, n, sizes)
    assert next(vals, None) is None


# (the opt-in fold in llsim: 4-1 by default, the waiting arrival over 4 shares a step; NC 2's two steps and
# the plain arrival `heavy`: the same kernel at other generics, the arrival's code in the PTX test above)
@pytest.mark.parametrize(("nc", "aw"), [pytest.param(4, 0, marks=pytest.mark.heavy),
                                        pytest.param(2, 0, marks=pytest.mark.heavy), (4, 1)])
def test_fold_merges_in_the_simulator_as_the_pair_does(k, nc: int, aw: int) -> None:  # type: ignore[no-untyped-def]
    # `attn_decode_ring_fold` with balanced key ranges (EA 3 | 8) in llsim
    # against the interpreter (shares, log-sum-exps and merged rows), and its
    # merged rows against `combine_splits` of its own shares; the 4 shares in
    # one step or in 2 of NC; 45 positions in 8-key tiles over 4 splits: 2, 2,
    # 1, 1 blocks (cdiv ranges: 2, 2, 2, 0), the last tile ragged (the
    # simulator also checks every group counter is back at 0); aw 1: the
    # waiting arrival (`arrive_wait`: the others' release adds, the last
    # split's poll; blocks run in the grid's order, so it finds them all in)
    from test_kernels_sim import P, _check, _decode_inputs

    rng = np.random.default_rng(11)
    layers, hkv, g, d, bt, ns, s, pos = 2, 2, 4, 32, 8, 4, 64, 45
    qkv, qn, kn, cos, sin, kc, vc = _decode_inputs(rng, layers, hkv, g, d, s)
    parts = (np.zeros((hkv, ns * g, d), np.float32), np.zeros((hkv, ns * g), np.float32))
    attn = np.zeros((hkv, g, d), np.float32)
    op = k.attn_decode_ring_fold[g, d // 2, bt, 0, 11, ns, nc, aw](
        P(parts[0], [1, g, d]), P(parts[1], [1, g]), P(attn, [1, g, d]),
        qkv, qn, kn, cos, sin, kc, vc, np.array([pos], np.int32), 1, 1e-6)  # fmt: skip
    _check(op, (hkv, ns), [0, 1, 2], tol=2e-3)
    assert (op._hosts[1] > -1e29).all()  # balanced: no split without a key
    pair = np.zeros_like(attn)
    k.combine_splits[ns, d, 0](P(pair, [1, 1, d]), op._hosts[0].reshape(hkv, ns, g * d),
                               op._hosts[1].reshape(hkv, ns, g)).sync()  # fmt: skip
    np.testing.assert_allclose(attn, pair, rtol=1e-5, atol=1e-5)
    assert np.abs(attn).max() > 0.05


def test_kv_prefetch_decodes_as_numpy(weights: dict) -> None:  # type: ignore[type-arg]
    # Plan.kp: the QKV GEMV of every layer is `rms_gemv_kv` (its layer's KV
    # heads, 4-row tiles), with the fold and the balance; a prefetch changes
    # no value (the interpreter skips it): the step decodes as NumPy does
    plan = dataclasses.replace(plan_for(TINY, 64, None), tc=4, bt=8, ns=4, ea=3, fl=3, kb=1, kp=4, **FORMS)
    eng = TileQwen3(TINY, weights, max_seq=64, plan=plan)
    for ops in eng._form_ops.values():
        kv = [op for op in ops if op.kernel.__name__ == "rms_gemv_kv"]
        assert [op.generics["KR"] for op in kv] == [4] * TINY.num_hidden_layers
        assert "rms_gemv" not in [op.kernel.__name__ for op in ops]
    ref = NumpyQwen3(TINY, weights, max_seq=64)
    for t in _tokens(9, TINY.vocab_size, seed=19):
        _close(eng.feed(t), ref.step(t))


@pytest.mark.parametrize(("fields", "words"), [({"kp": 3}, "a power of two"), ({"kp": 4, "qr": 1, "ea": 0}, "not with qr")])
def test_kv_prefetch_refuses_plans_it_cannot_run(weights: dict, fields: dict, words: str) -> None:  # type: ignore[type-arg]
    plan = dataclasses.replace(plan_for(TINY, 64, None), **{"tc": 4, "bt": 8, "ns": 4, "ea": 3, **FORMS, **fields})
    with pytest.raises(ValueError, match=words):
        TileQwen3(TINY, weights, max_seq=64, plan=plan)


@pytest.mark.heavy  # (opt-in `kp`: test_kv_prefetch_decodes_as_numpy and ..._runs_in_the_simulator_as_rms_gemv)
@pytest.mark.skipif(not ptxas_available(), reason="needs ptxas")
@pytest.mark.parametrize("kr", [32, 64])
def test_kv_prefetch_follows_the_qkv_loop_and_fits_its_registers(kr: int) -> None:
    # `rms_gemv_kv` at Qwen3-4B's QKV shapes under sm_90's PDL "late+loads"
    # (the weights and `pos` early, as the runtime proves them): `pos` is
    # read before the wait, the bulk L2 prefetches (one a key row) come after
    # the K loop's last weight load, nothing waits on them (no load after
    # them but x's norm), and ptxas keeps the plan's registers (MB blocks an
    # SM) with no spill, as `rms_gemv` (within 8 registers of it)
    from test_gemv_registers import _facts, _op

    from tilelang import partition
    from tilelang.backend import emit_ptx
    from tilelang.backend.target import Target

    cfg = Qwen3Config.load("qwen3-4b")
    plan = plan_for(cfg, 2048, 132, hopper=True)
    k = load_kernels()
    tgt = Target("sm_90a", pdl=True, pdl_trigger="late", pdl_prefetch="loads")
    base = _op(k, "qkv", cfg, plan)
    base.discard()
    plain = assemble(emit_ptx(base._plan.kir, tgt, _facts(base, early=("w",))), "sm_90a")
    n, kk, d, hkv = (cfg.num_attention_heads + 2 * cfg.num_key_value_heads) * cfg.head_dim, cfg.hidden_size, \
        cfg.head_dim, cfg.num_key_value_heads
    bn, bk, st, mb = plan.bn["qkv"], plan.bk["qkv"], plan.st["qkv"], plan.mb["qkv"]
    # 2 layers' rows (layer 1 is launched): calloc's pages, never touched (compiled, never run)
    w, x, g = np.zeros((2 * n, kk), np.float32), np.zeros(kk, np.float32), np.ones((2, kk), np.float32)
    cache = np.zeros((2 * hkv, 256, d), np.float32)
    op = k.rms_gemv_kv[bn, bk, st, mb, 0, 0, 0, 0, kr, d](partition(np.zeros(n, np.float32), [bn]), w, x, g, 1,
                                                          1e-6, w, 0, 5, cache, cache, np.array([200], np.int32),
                                                          hkv, hkv)  # fmt: skip
    op.discard()
    ptx = emit_ptx(op._plan.kir, tgt, _facts(op, early=("w", "pos_t", "kc", "vc")))
    body = ptx[ptx.index(".entry"):]
    wait = body.index("griddepcontrol.wait;")
    pre = body.index("cp.async.bulk.prefetch.L2")
    assert body.rindex("ld.global.nc.v4", 0, pre) > wait  # the K loop's weights, then the prefetches
    assert "ld.global" in body[:wait]  # the peeled weights and `pos` before the wait
    r = assemble(ptx, "sm_90a")
    assert r.max_spill_stores == 0 and r.max_registers * 256 * mb <= 65536, r.text
    assert r.max_registers <= plain.max_registers + 8, (r.max_registers, plain.max_registers)


def test_kv_prefetch_runs_in_the_simulator_as_rms_gemv(k) -> None:  # type: ignore[no-untyped-def]
    # `rms_gemv_kv` in llsim (its bulk prefetches of 2 KV heads' rows 0 .. 37
    # in 8-row tiles, dealt round 2 blocks: hints, which the simulator and the
    # interpreter skip; `pos`'s load and the loop around them run) against the
    # interpreter, and its rows equal to `rms_gemv`'s on the same inputs
    from test_kernels_sim import P, _check, _rand

    rng = np.random.default_rng(3)
    n, kk, layers, hkv, s, d = 16, 512, 2, 2, 64, 32
    w = _rand(rng, layers * n, kk, bf16=True)
    x, g = _rand(rng, kk), _rand(rng, layers, kk, bf16=True)
    kc, vc = _rand(rng, layers * hkv, s, d, bf16=True), _rand(rng, layers * hkv, s, d, bf16=True)
    y = np.zeros(n, np.float32)
    op = k.rms_gemv_kv[8, 256, -1, 3, 0, 0, 0, 0, 8, d](P(y, [8]), w, x, g, 1, 1e-6, w, 0, 0, kc, vc,
                                                        np.array([37], np.int32), hkv, hkv)  # fmt: skip
    _check(op, (2,), [0])
    plain = np.zeros(n, np.float32)
    k.rms_gemv[8, 256, -1, 3, 0, 0, 0, 0](P(plain, [8]), w, x, g, 1, 1e-6, w, 0, 0).sync()
    np.testing.assert_array_equal(y, plain)


@pytest.mark.parametrize(("ns", "nc"), [(4, 3), (4, 8), (2, 2)])
def test_fold_refuses_steps_that_do_not_divide_its_splits(k, ns: int, nc: int) -> None:  # type: ignore[no-untyped-def]
    # the merge's NC shares a step must divide the NS splits and NS must be the
    # grid's axis 1 (else shares would be left out, silently): E0513 before
    # the launch (here a grid of 4 splits: NS 2 is refused too)
    from test_kernels_sim import P, _decode_inputs

    from tilelang.api.errors import TileError

    rng = np.random.default_rng(1)
    layers, hkv, g, d, bt, s = 2, 2, 4, 32, 8, 32
    args = (*_decode_inputs(rng, layers, hkv, g, d, s), np.array([13], np.int32), 1, 1e-6)
    parts = (np.zeros((hkv, 4 * g, d), np.float32), np.zeros((hkv, 4 * g), np.float32))
    attn = np.zeros((hkv, g, d), np.float32)
    with pytest.raises(TileError, match="E0513"):
        k.attn_decode_ring_fold[g, d // 2, bt, 0, 3, ns, nc, 0](
            P(parts[0], [1, g, d]), P(parts[1], [1, g]), P(attn, [1, g, d]), *args).sync()


# (heavy: opt-in `fl` + 4, PE 3; the fold's default PTX test is test_fold_merges_without_an_exchange[4b-16-1])
@pytest.mark.heavy
@pytest.mark.skipif(not ptxas_available(), reason="needs ptxas")
def test_fold_without_a_trigger_under_pdl() -> None:
    # Plan.fl + 4 (the fold's PE 3, `pdl_early = 3`) under sm_90's "late+loads":
    # one wait and no `launch_dependents` (the O GEMV scheduled at the fold's
    # exit); PE 0 triggers once, before the shares' stores; the same registers
    from test_gemv_registers import _facts, _ring_op

    from tilelang.backend import emit_ptx
    from tilelang.backend.target import Target

    cfg = Qwen3Config.load("qwen3-4b")
    plan = plan_for(cfg, 2048, 132, hopper=True)
    g, d = cfg.group, cfg.head_dim
    tgt = Target("sm_90a", pdl=True, pdl_trigger="late", pdl_prefetch="loads")
    regs = {}
    for pe in (0, 3):
        op = _ring_op(load_kernels().attn_decode_ring_fold[g, d // 2, plan.bt, pe, 11, 16, 16, 0], cfg,
                      dataclasses.replace(plan, ns=16), merged=True)
        ptx = emit_ptx(op._plan.kir, tgt, _facts(op))
        body = ptx[ptx.index(".entry"):]
        assert body.count("griddepcontrol.wait;") == 1
        assert body.count("griddepcontrol.launch_dependents;") == (0 if pe else 1)
        if not pe:
            assert body.index("griddepcontrol.launch_dependents;") < body.index("atom.acq_rel")
        r = assemble(ptx, "sm_90a")
        assert r.max_spill_stores == 0, r.text
        regs[pe] = r.max_registers
    assert regs[3] <= regs[0] + 4, regs



@pytest.mark.parametrize("ea", [3, 7])
def test_balanced_ranges_leave_no_split_empty(k, ea: int) -> None:  # type: ignore[no-untyped-def]
    # 72 positions in 8-key tiles (9 key blocks) over 8 splits: cdiv's ranges
    # are 2, 2, 2, 2, 1, 0, 0, 0 (splits 5 and 6 see no key: log-sum-exp
    # MASKED; the last one the token only), balanced ones 2, 1, ..., 1 (every
    # split a key block); `ring_split_early` (EA 3 | 8) and `ring_split_first`
    # (EA 7 | 8) alike, on the interpreter; the merged rows are the same
    from test_kernels_sim import P, _decode_inputs

    rng = np.random.default_rng(5)
    layers, hkv, g, d, bt, ns, s, pos = 2, 2, 4, 32, 8, 8, 80, 72
    args = (*_decode_inputs(rng, layers, hkv, g, d, s), np.array([pos], np.int32), 1, 1e-6)
    merged = []
    for kb in (0, 8):
        parts = (np.zeros((hkv, ns * g, d), np.float32), np.zeros((hkv, ns * g), np.float32))
        k.attn_decode_ring_early[g, d // 2, bt, 0, ea | kb](P(parts[0], [1, g, d]), P(parts[1], [1, g]), *args).sync()
        empty = (parts[1].reshape(hkv, ns, g) < -1e29).all(axis=(0, 2))
        assert list(empty) == ([False] * 5 + [True, True, False] if not kb else [False] * ns), (kb, empty)
        out = np.zeros((hkv, g, d), np.float32)
        k.combine_splits[ns, d, 0](P(out, [1, 1, d]), parts[0].reshape(hkv, ns, g * d),
                                   parts[1].reshape(hkv, ns, g)).sync()  # fmt: skip
        merged.append(out)
    np.testing.assert_allclose(merged[1], merged[0], rtol=1e-5, atol=1e-5)
