"""std::llm's decode kernels as the GPU runs them: the code generator's
output for each kernel (the block shapes the engine plans for a big card:
8 warps, rows per warp, a K step of several 16-byte loads, row sums every
step, stacked layers), run on the CPU by the simulator of the NVPTX IR
(`tests/backend/llsim.py`), against the interpreter on the same inputs.
Small matrices (a few blocks) keep the simulator fast."""

from __future__ import annotations

import re

import numpy as np
import pytest
from llsim import SimDevice
from model import round_bf16
from test_gemv_registers import _facts

import tilelang
from tilelang.backend import lower_gpu
from tilelang.backend.llvm import emit_llvm_text

P = tilelang.partition


def _rand(rng: np.random.Generator, *shape: int, bf16: bool = False) -> np.ndarray:
    a = rng.standard_normal(shape).astype(np.float32)
    return round_bf16(a) if bf16 else a


def _simulate(op, grid: tuple[int, ...]) -> list[np.ndarray]:  # type: ignore[no-untyped-def]
    """Run `op`'s kernel in the simulator on copies of its arrays; the copies."""
    copies = [np.array(h) for h in op._hosts]
    args = op._kernel_args(copies)
    SimDevice("sm_90a").run(op._plan.kir, grid, args)
    return copies


def _ring_copies(op) -> int:  # type: ignore[no-untyped-def]
    """cp.async copies in the LLVM text the simulator runs for `op` (ST >= 3:
    the weight stream through a shared-memory ring). Each ring copy is
    emitted twice, for a tile wholly inside the tensor (16 literal bytes a
    chunk) and for an edge tile (a run-time size: zero-fill past the edge);
    counted once, by its edge form."""
    copies = [np.array(h) for h in op._hosts]
    kir = op._plan.kir
    gk = lower_gpu(kir, "sm_90a", _facts(op, op._kernel_args(copies)))
    ll = emit_llvm_text(gk, gk.facts)[0]
    return len(re.findall(r"call void @llvm\.nvvm\.cp\.async\.cg\.shared\.global\.16\.s\(.*, i32 %\S+\)", ll))


def _gate_up_of_layer_1(w: np.ndarray, x: np.ndarray, g: np.ndarray, n: int) -> np.ndarray:
    """What `rms_gate_up` gives for layer 1 of two (its gate's n rows, then its
    up's, from row 2n of `w`): silu(gate) * up of x RMS-normed by `g[1]` (eps 1e-6)."""
    xn = x / np.sqrt((x * x).mean() + 1e-6) * g[1]
    gate, up = w[2 * n : 3 * n] @ xn, w[3 * n :] @ xn
    return gate / (1 + np.exp(-gate)) * up


def _check(op, grid: tuple[int, ...], outs: list[int], tol: float = 1e-4) -> None:  # type: ignore[no-untyped-def]
    got = _simulate(op, grid)
    op.sync()  # the interpreter, in place on the original arrays
    for i in outs:
        want = op._hosts[i]
        np.testing.assert_allclose(got[i], want, rtol=tol, atol=tol * float(np.abs(want).max()))


@pytest.mark.parametrize(("st", "mb", "kk"), [(1, 0, 600), (2, 3, 600), (4, 3, 1040), (3, 0, 1040), (-1, 3, 600)])
def test_gemv_add_of_a_stacked_layer(k, st: int, mb: int, kk: int) -> None:  # type: ignore[no-untyped-def]
    # K not a multiple of the K step: the last step is partial; ST -1: the
    # first step peeled off the loop; ST >= 3: the
    # weights through a ring of ST stages (K a multiple of 16 elements: every
    # 16-byte chunk wholly in or out), the vector x in registers
    rng = np.random.default_rng(0)
    n, layers = 16, 2
    w = _rand(rng, layers * n, kk, bf16=True)
    x, y = _rand(rng, kk), _rand(rng, n)
    want = y + w[n : 2 * n] @ x  # y += W x with layer 1's rows
    op = k.gemv_add[8, 256, st, mb, 0, 0, 0, 0](P(y, [8]), w, x, 1, w, 0, 0)
    # 8 rows x 256 bf16 a step: one 16-byte chunk a thread, copied ST - 1
    # steps ahead before the loop and once inside it
    assert _ring_copies(op) == (st if st >= 3 else 0)
    _check(op, (2,), [0])
    np.testing.assert_allclose(op._hosts[0], want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))


def test_the_ring_mark_stamps_a_rings_last_tile(k) -> None:  # type: ignore[no-untyped-def]
    # `TILEC_TRACE_MARK=ring` (the block timeline, a kernel without a PDL
    # wait): thread 0 stamps the first `cp.async.wait` it emits, the ring's
    # wait at the top of the loop, at every pass (the last tile's arrival),
    # in the record's wait field; in the simulator every block's mark lies
    # between its start and its end, and the product is unchanged
    import struct

    from tilelang.backend.codegen import trace as layout
    from tilelang.runtime import trace

    rng = np.random.default_rng(4)
    n, kk, layers = 16, 1040, 2
    w = _rand(rng, layers * n, kk, bf16=True)
    x, y = _rand(rng, kk), _rand(rng, n)
    want = y + w[n : 2 * n] @ x
    op = k.gemv_add[8, 256, 3, 0, 0, 0, 0, 0](P(y, [8]), w, x, 1, w, 0, 0)
    kir = op._plan.kir
    copies = [np.array(h) for h in op._hosts]
    args = op._kernel_args(copies)
    gk = lower_gpu(kir, "sm_90a", _facts(op, args))
    marked = emit_llvm_text(gk, gk.facts, "", True, False, "ring")[0]
    assert len(re.findall(r"^trace_mark\d+:$", marked, re.M)) == 1
    # the mark follows the loop's wait (the ring's), not a copy or the entry
    at = marked.index("call void @llvm.nvvm.cp.async.wait.group")
    assert at < marked.index("trace_mark") and "%trace.p24" not in marked
    assert "trace_mark" not in emit_llvm_text(gk, gk.facts, "", True)[0]
    assert "trace_mark" not in emit_llvm_text(gk, gk.facts, "late", True, False, "ring")[0]  # PDL: the wait's field
    sim = SimDevice("sm_90a", trace=True, trace_mark="ring")
    sim.run(kir, (2,), args)
    np.testing.assert_allclose(copies[0], want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))
    raw = sim.trace_buffer
    cursor = struct.unpack_from("<Q", raw, 0)[0]
    tr = trace.decode(raw[layout.RECORDS:layout.RECORDS + cursor * layout.RECORD], cursor, sim.trace_records,
                      ["k"] * 7 + ["gemv_add"], 4)
    la = tr.launches[0]
    assert la.waits and sorted(la.block.tolist()) == [0, 1]
    assert (la.start < la.wait).all() and (la.wait < la.end).all()


def _llvm(op) -> str:  # type: ignore[no-untyped-def]
    kir = op._plan.kir
    gk = lower_gpu(kir, "sm_90a", _facts(op, op._kernel_args([np.array(h) for h in op._hosts])))
    return emit_llvm_text(gk, gk.facts)[0]


# (heavy: 1-0; the prefetch (`Plan.pf`) is opt-in, and -1-0 runs its bulk requests, 1-1 ST 1's loop)
@pytest.mark.parametrize(("st", "lines"), [pytest.param(1, 0, marks=pytest.mark.heavy), (-1, 0), (1, 1)])
def test_gemvs_prefetching_the_next_weights(k, st: int, lines: int) -> None:  # type: ignore[no-untyped-def]
    # PR, PC > 0: after its loop each block issues bulk L2 prefetches of its
    # share of the next matrix's [PR, PC] tiles (block b: tiles nt + b, nt + b
    # + blocks, .. below nt + nn: here 5 tiles over 2 blocks, the last one
    # partly past the next matrix's 300 columns); PL (`lines`) 1: a
    # `prefetch.global.L2` a line instead; the results are unchanged
    rng = np.random.default_rng(3)
    n, kk, layers = 16, 512, 2
    w = _rand(rng, layers * n, kk, bf16=True)
    nxt = _rand(rng, 40, 300, bf16=True)
    x, y, g = _rand(rng, kk), _rand(rng, n), _rand(rng, layers, kk, bf16=True)
    op = k.gemv_add[8, 256, st, 3, 8, 256, lines, 0](P(y, [8]), w, x, 1, nxt, 0, 5)
    ll = _llvm(op)
    # one row a thread (bulk) or 4 lines a row, 32 lines a tile (lines): one request, in a loop over tiles
    assert ll.count("cp.async.bulk.prefetch.L2.global") == 1 - lines
    assert ll.count("prefetch.global.L2") == lines
    plain = k.gemv_add[8, 256, st, 3, 0, 0, 0, 0](P(y.copy(), [8]), w, x, 1, nxt, 0, 5)
    plain.discard()  # compiled only
    assert "cp.async.bulk.prefetch" not in _llvm(plain)
    _check(op, (2,), [0])
    out = np.zeros(n, np.float32)  # (a new array made in the call is E0313 when run)
    op = k.rms_gemv[8, 256, st, 3, 16, 128, lines, 0](P(out, [8]), w, x, g, 1, 1e-6, nxt, 1, 2)
    _check(op, (2,), [0])
    out = np.zeros(8, np.float32)
    op = k.rms_gate_up[8, 128, st, 3, 8, 64, lines, 0](P(out, [8]), w, x, g, 1, 1e-6, nxt, 2, 3)
    _check(op, (1,), [0])


@pytest.mark.parametrize(("st", "mb"), [(1, 3), (2, 0), (4, 3), (-1, 3)])
def test_rms_gemv_and_gate_up(k, st: int, mb: int) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(1)
    n, kk, layers = 16, 512, 2
    w = _rand(rng, layers * n, kk, bf16=True)
    x, g = _rand(rng, kk), _rand(rng, layers, kk, bf16=True)
    y = np.zeros(n, np.float32)
    op = k.rms_gemv[8, 256, st, mb, 0, 0, 0, 0](P(y, [8]), w, x, g, 1, 1e-6, w, 0, 0)
    # ST 4: the weights through the ring (2 K steps: both copied before the
    # loop, a predicated-off copy inside it); x and g stay register loads
    assert _ring_copies(op) == (4 if st == 4 else 0)
    _check(op, (2,), [0])
    # gate_up: per layer, the gate's n rows then the up's n rows
    wgu = _rand(rng, layers * 2 * n, kk, bf16=True)
    h = np.zeros(n, np.float32)
    op = k.rms_gate_up[16, 128, st, mb, 0, 0, 0, 0](P(h, [16]), wgu, x, g, 1, 1e-6, w, 0, 0)
    assert _ring_copies(op) == (8 if st == 4 else 0)  # gate and up: a ring each
    _check(op, (1,), [0])
    want = _gate_up_of_layer_1(wgu, x, g, n)
    np.testing.assert_allclose(op._hosts[0], want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))


@pytest.mark.parametrize(("bn", "st", "mb"), [(20, -1, 1), (20, 1, 1), (6, -1, 2)])
def test_gemvs_with_row_tiles_of_no_power_of_two(k, bn: int, st: int, mb: int) -> None:  # type: ignore[no-untyped-def]
    # row tiles that give 4B's one-wave GEMVs equal work a block (h17r's
    # `STEP=waves` rows: down / O 2,560 rows in 128 tiles of 20, gate/up 9,728 in
    # 256 of 38): the backend lays the tile's rows out at the next power of two
    # with masked lanes; the residual add and gate/up's silu(g) u of layer 1 of 2,
    # in llsim against the interpreter and NumPy, K = 600 (a partial last step)
    rng = np.random.default_rng(5)
    n, kk, layers = 2 * bn, 600, 2
    w = _rand(rng, layers * n, kk, bf16=True)
    x, y = _rand(rng, kk), _rand(rng, n)
    want = y + w[n : 2 * n] @ x
    op = k.gemv_add[bn, 256, st, mb, 0, 0, 0, 0](P(y, [bn]), w, x, 1, w, 0, 0)
    _check(op, (2,), [0])
    np.testing.assert_allclose(op._hosts[0], want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))
    wgu, g = _rand(rng, layers * 2 * n, kk, bf16=True), _rand(rng, layers, kk, bf16=True)
    h = np.zeros(n, np.float32)
    op = k.rms_gate_up[bn, 256, st, mb, 0, 0, 0, 0](P(h, [bn]), wgu, x, g, 1, 1e-6, w, 0, 0)
    _check(op, (2,), [0])
    want = _gate_up_of_layer_1(wgu, x, g, n)
    np.testing.assert_allclose(op._hosts[0], want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))


def test_lm_head_with_block_maxima(k) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(2)
    v, kk = 40, 256  # a partial last block of rows
    w = _rand(rng, v, kk, bf16=True)
    x, g = _rand(rng, kk), _rand(rng, 1, kk, bf16=True)
    y, bmax, barg = np.zeros(48, np.float32), np.zeros(3, np.float32), np.zeros(3, np.int32)
    op = k.rms_gemv_argmax[16, 128, 2, 4](P(y[:v], [16]), P(bmax, [1]), P(barg, [1]), w, x, g, 1e-6)
    got = _simulate(op, (3,))
    op.sync()
    np.testing.assert_allclose(
        got[0], op._hosts[0], rtol=1e-4, atol=1e-4 * float(np.abs(op._hosts[0]).max())
    )
    np.testing.assert_array_equal(got[2], op._hosts[2])


@pytest.mark.parametrize("dc", [32, 8])
def test_combine_splits(k, dc: int) -> None:  # type: ignore[no-untyped-def]
    # dc: the chunk of a head's row a block merges (the whole head, or 4
    # chunks); 2 KV heads of a group of 2, 4 splits, the last empty
    rng = np.random.default_rng(3)
    hkv, ns, g, d = 2, 4, 2, 32
    o_part = _rand(rng, hkv, ns * g, d)
    lse = _rand(rng, hkv, ns * g) * 4
    lse[:, -g:] = -1e30  # an empty split (no keys): weight 0
    attn = np.zeros((hkv, g, d), np.float32)
    op = k.combine_splits[ns, dc, 0](
        P(attn, [1, 1, dc]), o_part.reshape(hkv, ns, g * d), lse.reshape(hkv, ns, g)
    )
    _check(op, (hkv, g, d // dc), [0])
    w = np.exp2(lse.reshape(hkv, ns, g) - lse.reshape(hkv, ns, g).max(1, keepdims=True))
    want = (w[..., None] * o_part.reshape(hkv, ns, g, d)).sum(1) / w.sum(1)[..., None]
    np.testing.assert_allclose(attn, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("ns", "st", "empty"), [(8, 8, (7,)), (8, 3, (0, 1, 5)), (16, 16, (0, 15))])
def test_combine_rows_folds_the_splits_as_combine_splits_merges_them(k, ns: int, st: int,
                                                                    empty: tuple[int, ...]) -> None:  # type: ignore[no-untyped-def]
    # `combine_rows` (Plan.mr = ST): one warp folding the splits a row at a
    # time (a running max), the rows through a ring of ST stages (all ahead,
    # or 2 ahead); empty splits (log-sum-exp MASKED, rows zero) first, in the
    # middle and last weigh nothing; the simulator and the interpreter agree
    # with `combine_splits` and NumPy
    rng = np.random.default_rng(ns + st)
    hkv, g, d = 2, 4, 128
    o_part = _rand(rng, hkv, ns * g, d)
    lse = _rand(rng, hkv, ns, g) * 6
    for e in empty:
        lse[:, e] = -1e30
        o_part.reshape(hkv, ns, g, d)[:, e] = 0.0
    lse = lse.reshape(hkv, ns * g)
    attn = np.zeros((hkv, g, d), np.float32)
    op = k.combine_rows[ns, d, st, 0](P(attn, [1, 1, d]), o_part.reshape(hkv, ns, g * d), lse.reshape(hkv, ns, g))
    _check(op, (hkv, g, 1), [0])
    w = np.exp2(lse.reshape(hkv, ns, g) - lse.reshape(hkv, ns, g).max(1, keepdims=True))
    want = (w[..., None] * o_part.reshape(hkv, ns, g, d)).sum(1) / w.sum(1)[..., None]
    np.testing.assert_allclose(attn, want, rtol=1e-5, atol=1e-5)
    pair = np.zeros_like(attn)
    k.combine_splits[ns, d, 0](P(pair, [1, 1, d]), o_part.reshape(hkv, ns, g * d), lse.reshape(hkv, ns, g)).sync()
    np.testing.assert_allclose(attn, pair, rtol=1e-5, atol=1e-6)
    assert np.isfinite(attn).all() and np.abs(attn).max() > 0.05


# (heavy: 8-0; Plan.om is opt-in, and 16-4 runs the same kernel at MB 4)
@pytest.mark.parametrize(("bn", "mb"), [pytest.param(8, 0, marks=pytest.mark.heavy), (16, 4)])
def test_merge_gemv_add_folds_the_split_merge_into_the_o_projection(k, bn: int, mb: int) -> None:  # type: ignore[no-untyped-def]
    # block (head, rows): the head's splits merged (one empty: weight 0; the
    # first split empty too, so the merge starts from a masked one), times
    # layer 1's weights of a stack, added to y by atomics; 2 KV heads of a
    # group of 2, 4 splits (the two live ones between the empty ones)
    rng = np.random.default_rng(4)
    hkv, ns, g, d, n, layers = 2, 4, 2, 32, 2 * bn, 2  # two row tiles a head
    o_part = _rand(rng, hkv, ns * g, d)
    lse = _rand(rng, hkv, ns * g) * 4
    lse[:, -g:] = -1e30
    lse[0, :g] = -1e30
    o_part[0, :g] = 0.0
    w = _rand(rng, layers * n, hkv * g * d, bf16=True)
    y0 = _rand(rng, n)
    y = y0.copy()
    part = np.zeros((hkv * g, n), np.float32)
    op = k.merge_gemv_add[bn, d, ns, mb](
        P(part, [1, bn]), y, w, o_part.reshape(hkv, ns, g * d), lse.reshape(hkv, ns, g), 1
    )
    _check(op, (hkv * g, n // bn), [0, 1])
    wt = np.exp2(lse.reshape(hkv, ns, g) - lse.reshape(hkv, ns, g).max(1, keepdims=True))
    attn = ((wt[..., None] * o_part.reshape(hkv, ns, g, d)).sum(1) / wt.sum(1)[..., None]).reshape(-1)
    want = y0 + w[n : 2 * n] @ attn
    tol = 1e-4 * float(np.abs(want).max())
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=tol)
    np.testing.assert_allclose(part.sum(0), want - y0, rtol=1e-4, atol=tol)


def _rms_rope(t: np.ndarray, w: np.ndarray, c: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Per-head RMSNorm (weight w) then the rotary embedding of halves."""
    n = t / np.sqrt((t * t).mean(-1, keepdims=True) + 1e-6) * w
    h = t.shape[-1] // 2
    n1, n2 = n[..., :h], n[..., h:]
    return np.concatenate([n1 * c - n2 * s, n2 * c + n1 * s], axis=-1)


def _decode_inputs(rng, layers: int, hkv: int, g: int, d: int, s: int):  # type: ignore[no-untyped-def]
    """A decode attention's inputs: this token's q, k, v rows (`qkv`: G
    query heads then one k and one v a KV head, halves for the rotary), the
    q/k norm weights of every layer, the rotary tables of `s` positions and
    the stacked layers' K and V caches (bf16 values)."""
    qkv = _rand(rng, (g + 2) * hkv, 2, d // 2)
    qn, kn = _rand(rng, layers, d, bf16=True), _rand(rng, layers, d, bf16=True)
    ang = rng.uniform(0, 6.28, (s, d // 2)).astype(np.float32)
    kc, vc = _rand(rng, layers * hkv, s, d, bf16=True), _rand(rng, layers * hkv, s, d, bf16=True)
    return qkv, qn, kn, np.cos(ang), np.sin(ang), kc, vc


# FMA loops, tensor cores, the register stream, the shared-memory ring
# (`attn_decode_ring`: K and V cp.async'd 3 blocks ahead, the simulator
# checking each slot is read only after its copy landed)
# (heavy: TC 0 and 2, forms no plan launches (the GPU plans' 4, the CPU's 1): their steps decode as NumPy in
# test_engine's test_other_attention_forms_agree by default)
@pytest.mark.parametrize("tc", [pytest.param(0, marks=pytest.mark.heavy), 1,
                                pytest.param(2, marks=pytest.mark.heavy), 4])
def test_attn_decode_folds_the_current_token_into_the_last_split(k, tc: int) -> None:  # type: ignore[no-untyped-def]
    # layer 1 of 2, 2 KV heads of groups of 4, D = 32; 13 cached positions in
    # 2 splits of one 8-key tile; the current token (position 13) is read from
    # qkv, not from the cache, and joins the last split
    rng = np.random.default_rng(4)
    layers, hkv, g, d, bt, ns, s, pos = 2, 2, 4, 32, 8, 2, 32, 13
    qkv, qn, kn, cos, sin, kc, vc = _decode_inputs(rng, layers, hkv, g, d, s)
    o_part = np.zeros((hkv, ns * g, d), np.float32)
    lse_part = np.zeros((hkv, ns * g), np.float32)
    pos_t = np.array([pos], np.int32)
    kern = k.attn_decode_ring[g, d // 2, bt, 0] if tc == 4 else k.attn_decode[g, d // 2, bt, tc]
    op = kern(
        P(o_part, [1, g, d]), P(lse_part, [1, g]), qkv, qn, kn, cos, sin, kc, vc, pos_t, 1, 1e-6
    )
    _check(op, (hkv, ns), [0, 1], tol=2e-3)
    # NumPy: softmax over the cached 0 .. pos - 1 and the current token, per
    # query head, from the merged splits
    heads = qkv.reshape((g + 2) * hkv, d)
    q = round_bf16(_rms_rope(heads[: g * hkv], qn[1], cos[pos], sin[pos])).reshape(hkv, g, d)
    knew = round_bf16(_rms_rope(heads[g * hkv : g * hkv + hkv], kn[1], cos[pos], sin[pos]))
    vnew = round_bf16(heads[g * hkv + hkv :])
    o, lse = op._hosts[0].reshape(hkv, ns, g, d), op._hosts[1].reshape(hkv, ns, g)
    w = np.exp2(lse - lse.max(1, keepdims=True))
    got = (w[..., None] * o).sum(1) / w.sum(1)[..., None]
    for h in range(hkv):
        keys = np.concatenate([kc[hkv + h, :pos], knew[h : h + 1]])
        vals = np.concatenate([vc[hkv + h, :pos], vnew[h : h + 1]])
        sc = q[h] @ keys.T / np.sqrt(d)
        p = np.exp(sc - sc.max(1, keepdims=True))
        want = (p / p.sum(1, keepdims=True)) @ vals
        np.testing.assert_allclose(got[h], want, rtol=2e-2, atol=2e-2)


# (heavy: NC 4, the merge in one step; Plan.fm is off by default, and NC 2 runs the same kernel's merge in 2)
@pytest.mark.parametrize("nc", [2, pytest.param(4, marks=pytest.mark.heavy)])
def test_attn_decode_ring_merge_merges_its_splits_in_its_last_block(k, nc: int) -> None:  # type: ignore[no-untyped-def]
    # `attn_decode_ring_merge` (Plan.fm): the ring attention's shares as
    # `attn_decode_ring` stores them, and the block of each KV head that
    # arrives last merges the head's 4 splits, NC a step (2 steps, or 1),
    # into `attn`; 13 positions in 8-key tiles over 4 splits leave the last
    # two empty but for the current token in the last (the simulator also
    # checks that every group counter is back at 0)
    rng = np.random.default_rng(7)
    layers, hkv, g, d, bt, ns, s, pos = 2, 2, 4, 32, 8, 4, 32, 13
    qkv, qn, kn, cos, sin, kc, vc = _decode_inputs(rng, layers, hkv, g, d, s)
    parts = (np.zeros((hkv, ns * g, d), np.float32), np.zeros((hkv, ns * g), np.float32))
    args = (qkv, qn, kn, cos, sin, kc, vc, np.array([pos], np.int32), 1, 1e-6)
    attn = np.zeros((hkv, g, d), np.float32)
    op = k.attn_decode_ring_merge[g, d // 2, bt, 0, ns, nc](
        P(parts[0], [1, g, d]), P(parts[1], [1, g]), P(attn, [1, g, d]), *args
    )
    _check(op, (hkv, ns), [0, 1, 2], tol=2e-3)
    # against the pair it replaces: the same shares, then `combine_splits`
    o_part, lse_part = np.zeros_like(parts[0]), np.zeros_like(parts[1])
    k.attn_decode_ring[g, d // 2, bt, 0](P(o_part, [1, g, d]), P(lse_part, [1, g]), *args).sync()
    np.testing.assert_array_equal(op._hosts[0], o_part)
    pair = np.zeros_like(attn)
    k.combine_splits[ns, d, 0](P(pair, [1, 1, d]), o_part.reshape(hkv, ns, g * d),
                               lse_part.reshape(hkv, ns, g)).sync()  # fmt: skip
    np.testing.assert_allclose(attn, pair, rtol=1e-5, atol=1e-5)
    assert np.abs(attn).max() > 0.05


def _ring_form_and_ring(k, kernel, ea: int, seed: int, bt: int, s: int, pos: int, ns: int = 4):  # type: ignore[no-untyped-def]
    """A form of the ring attention (`kernel`, with its EA) run in the
    simulator and checked against the interpreter (`_check`), and the plain
    `attn_decode_ring`'s shares on the same inputs (2 layers, 2 KV heads, G 4,
    D 32, `ns` splits): (the form's op, (o, lse) of the plain ring)."""
    rng = np.random.default_rng(seed)
    layers, hkv, g, d = 2, 2, 4, 32
    qkv, qn, kn, cos, sin, kc, vc = _decode_inputs(rng, layers, hkv, g, d, s)
    args = (qkv, qn, kn, cos, sin, kc, vc, np.array([pos], np.int32), 1, 1e-6)
    got = (np.zeros((hkv, ns * g, d), np.float32), np.zeros((hkv, ns * g), np.float32))
    op = kernel[g, d // 2, bt, 0, ea](P(got[0], [1, g, d]), P(got[1], [1, g]), *args)
    _check(op, (hkv, ns), [0, 1], tol=2e-3)
    want = (np.zeros_like(got[0]), np.zeros_like(got[1]))
    k.attn_decode_ring[g, d // 2, bt, 0](P(want[0], [1, g, d]), P(want[1], [1, g]), *args).sync()
    return op, want


# (heavy: EA 1, the query's loads early but not the token's rows, which EA 3, the GPU plans' default, loads
# early too; the rows' late loads are `attn_decode_ring`'s, test_attn_decode_folds_the_current_token_into_the_last_split[4])
@pytest.mark.parametrize("ea", [pytest.param(1, marks=pytest.mark.heavy), 3])
def test_attn_decode_ring_early_gives_the_ring_attentions_shares(k, ea: int) -> None:  # type: ignore[no-untyped-def]
    # `attn_decode_ring_early` (Plan.ea): the same shares as `attn_decode_ring`
    # with the query's loads (and under EA 3 the token's rows) before the
    # split's range, so that the ring's first copies come before the query's
    # norm and rotary; 13 positions in 8-key tiles over 4 splits (the last
    # two empty but for the current token in the last)
    op, want = _ring_form_and_ring(k, k.attn_decode_ring_early, ea, seed=11, bt=8, s=32, pos=13)
    np.testing.assert_array_equal(op._hosts[0], want[0])
    np.testing.assert_array_equal(op._hosts[1], want[1])
    assert np.abs(want[0]).max() > 0.05


# (heavy: EA 0; Plan.aw 8 is off by default, and EA 3, the GPU plans' default, runs the 8 warps' key loop)
@pytest.mark.parametrize("ea", [pytest.param(0, marks=pytest.mark.heavy), 3])
def test_attn_decode_ring_w8_gives_the_ring_attentions_shares(k, ea: int) -> None:  # type: ignore[no-untyped-def]
    # `attn_decode_ring_w8` (Plan.aw 8): the early ring's shares with the key
    # loop in 8 warps (a slab of 2 keys a warp of each 16-key tile); 29
    # positions over 2 splits: 1 tile each, the last split's tile ragged, and
    # the current token there too (the simulator runs the 8 warps)
    op, want = _ring_form_and_ring(k, k.attn_decode_ring_w8, ea, seed=17, bt=16, s=32, pos=29, ns=2)
    np.testing.assert_allclose(op._hosts[0], want[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(op._hosts[1], want[1], rtol=1e-5, atol=1e-6)
    assert np.abs(want[0]).max() > 0.05 and (want[1] > -1e30).all()


def test_kv_append_writes_every_layer_once_a_step(k) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(5)
    layers, hkv, g, d, ch, s, pos = 2, 2, 4, 32, 16, 32, 13
    qkv = _rand(rng, layers * (g + 2) * hkv, 2, d // 2)
    kn = _rand(rng, layers, d, bf16=True)
    ang = rng.uniform(0, 6.28, (s, d // 2)).astype(np.float32)
    cos, sin = np.cos(ang), np.sin(ang)
    kc, vc = np.zeros((layers * hkv, s, d), np.float32), np.zeros((layers * hkv, s, d), np.float32)
    op = k.kv_append[hkv, ch, d](
        P(kc, [hkv, ch, d]),
        P(vc, [hkv, ch, d]),
        qkv,
        kn,
        cos,
        sin,
        np.array([pos], np.int32),
        g * hkv,
        1e-6,
    )
    _check(op, (layers, s // ch), [0, 1])
    heads = qkv.reshape(layers, (g + 2) * hkv, d)
    for li in range(layers):
        want_k = _rms_rope(heads[li, g * hkv : (g + 1) * hkv], kn[li], cos[pos], sin[pos])
        np.testing.assert_allclose(
            kc[li * hkv : (li + 1) * hkv, pos], round_bf16(want_k), rtol=1e-2, atol=1e-2
        )
        np.testing.assert_array_equal(
            vc[li * hkv : (li + 1) * hkv, pos], round_bf16(heads[li, (g + 1) * hkv :])
        )
    assert not kc[:, :pos].any() and not kc[:, pos + 1 :].any()  # only row pos is written


def test_prefill_gemm_runs_the_hopper_pipeline(k) -> None:  # type: ignore[no-untyped-def]
    # The prefill's linear layers on sm_90a: the plain GEMM loop of `gemm`
    # (bf16 operands straight from memory) becomes the TMA + wgmma pipeline;
    # simulated with edge tiles (M and N not multiples of the tile) and a
    # weight matrix that is one layer's view of a stack. The engine's 128 x
    # 256 tiles take minutes in the simulator: 64 x 64 here, same pipeline.
    from tilelang.backend import emit_ptx

    rng = np.random.default_rng(6)
    m, kk, n = 70, 64, 72
    a = _rand(rng, m, kk, bf16=True)
    w = _rand(rng, 2 * n, kk, bf16=True)[n:]
    y = np.zeros((m, n), np.float32)
    op = k.gemm[64, 64, 64](P(y, [64, 64]), a, w)
    kir = op._plan.kir
    args = op._kernel_args([np.array(h) for h in op._hosts])
    facts = _facts(op, args)
    ptx = emit_ptx(kir, "sm_90a", facts)
    assert "wgmma.mma_async" in ptx and "cp.async.bulk.tensor" in ptx
    SimDevice("sm_90a").run(kir, (2, 2), args, facts)
    np.testing.assert_allclose(args[0], a @ w.T, rtol=1e-5, atol=1e-3)
    op.sync()  # the interpreter
    np.testing.assert_allclose(y, a @ w.T, rtol=1e-5, atol=1e-3)


def test_attn_prefill_runs_the_hopper_attention_pipeline(k) -> None:  # type: ignore[no-untyped-def]
    # Causal prefill attention of a chunk at p0 = 64 (its keys: the 64 cached
    # rows before it and its own 40), GQA with G = 2, BQ = BT = 64, D = 64:
    # on sm_90a the loop becomes the TMA + wgmma attention pipeline; the
    # simulator, the interpreter and NumPy agree.
    from tilelang.backend import emit_ptx

    rng = np.random.default_rng(9)
    hkv, g, d, s, p0, m = 1, 2, 64, 192, 64, 40
    q = _rand(rng, hkv * g, s, d, bf16=True)
    kc, vc = _rand(rng, hkv, s, d, bf16=True), _rand(rng, hkv, s, d, bf16=True)
    out = np.zeros((m, hkv * g, d), np.float32)
    op = k.attn_prefill[64, d, 64, g](P(out, [64, 1, d]), q, kc, vc, p0, m)
    kir = op._plan.kir
    args = op._kernel_args([np.array(h) for h in op._hosts])
    facts = _facts(op, args)
    ptx = emit_ptx(kir, "sm_90a", facts)
    assert "wgmma.mma_async" in ptx and "cp.async.bulk.tensor" in ptx
    SimDevice("sm_90a").run(kir, (1, hkv * g), args, facts)
    op.sync()  # the interpreter
    np.testing.assert_allclose(args[0], op._hosts[0], rtol=2e-2, atol=2e-2)
    for h in range(hkv * g):
        qi = q[h, p0 : p0 + m]
        sc = qi @ kc[h // g, : p0 + m].T / np.sqrt(d)
        sc = np.where(np.arange(p0 + m)[None, :] <= p0 + np.arange(m)[:, None], sc, -np.inf)
        pr = np.exp(sc - sc.max(1, keepdims=True))
        want = (pr / pr.sum(1, keepdims=True)) @ vc[h // g, : p0 + m]
        np.testing.assert_allclose(op._hosts[0][:, h], want, rtol=3e-2, atol=3e-2)


def test_prefill_row_kernels(k) -> None:  # type: ignore[no-untyped-def]
    # add_rms_rows: one block a row, the tile wider than the row (2560 of 4096)
    rng = np.random.default_rng(7)
    m, kk, i = 3, 2560, 1024
    x, dd = _rand(rng, m, kk), _rand(rng, m, kk)
    xn = np.zeros((m, kk), np.float32)
    g = _rand(rng, kk, bf16=True)
    x0 = x.copy()
    op = k.add_rms_rows[4096](P(x, [1, 4096]), P(xn, [1, 4096]), dd, g, True, 1e-6)
    _check(op, (m, 1), [0, 1])
    s = x0 + dd
    want = round_bf16(s / np.sqrt((s * s).mean(1, keepdims=True) + 1e-6) * g)
    np.testing.assert_allclose(x, s, rtol=1e-6)
    np.testing.assert_allclose(xn, want, rtol=1e-2, atol=1e-2)
    # swiglu_rows: [G | U] -> silu(G) * U
    gu, h = _rand(rng, m, 2 * i), np.zeros((m, i), np.float32)
    _check(k.swiglu_rows[512](P(h, [1, 512]), gu), (m, i // 512), [0], tol=1e-2)
    gate, up = gu[:, :i], gu[:, i:]
    np.testing.assert_allclose(h, round_bf16(gate / (1 + np.exp(-gate)) * up), rtol=1e-2, atol=1e-2)
