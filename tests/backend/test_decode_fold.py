"""Decode attention with the merge folded into the tensor-core split, its merge in the warps (hdec, issue 15):
benchmarks/decode_fold.tile's `decode_fused_tcw` under `TILEC_ATTN_LAST_BLOCK=join`, whose head's last share merges every
share at once with the log-sum-exps broadcast over the partials' [G, NS, D] layout. `layout_assign` lays such a
broadcast, reduced along a middle axis, with its warps along the last dim (`loaded_and_reduced` counts a
loaded tile of rank 3 or more broadcast along its last axis as the load), so the max and both sums over the shares are shuffles. Checked: the
layout on a small kernel, the interpreter against NumPy (cheap), llsim against the interpreter at run-time cache
lengths (not a multiple of the key block, 1, fewer key blocks than shares) and ptxas (heavy), SDPA on the GPU."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest
from ptxas_report import assemble
from test_attention_last_block import (
    G,
    _llsim_against_interpreter,
    _matches_sdpa,
    _params,
    _reference,
)
from test_decode_tc_pipeline import _inputs

import tilelang
from tilelang.backend import emit_ptx, lower_gpu
from tilelang.backend.facts import TensorFacts
from tilelang.backend.gpu import nodes as g
from tilelang.dtypes import DType
from tilelang.ir import nodes as ir
from tilelang.ir.lower import lower_kernel
from tilelang.runtime.launch import ArgFact

ROOT = Path(__file__).resolve().parents[2]


@functools.cache
def _fold():  # type: ignore[no-untyped-def]
    return tilelang.load(str(ROOT / "benchmarks" / "decode_fold.tile"))


MERGE_SRC = """
#[hints(num_warps = 8)]
kernel fn merge<const G: i32, const NS: i32, const D: i32>(o: &mut Tensor<f32, [1, G, D]>,
        top: &mut Tensor<f32, [1, G]>, parts: &Tensor<f32, [?, G, ?]>, lse: &Tensor<f32, [?, G, ?]>) {
    let p = parts.partition([1, G, NS * D]).load([block_id(0), 0, 0]).reshape([G, NS, D]);
    let l = lse.partition([1, G, NS]).load_padded([block_id(0), 0, 0], -1.0e30).reshape([G, NS, 1]).broadcast([G, NS, D]);
    let w = exp2(l - l.max(1).reshape([G, 1, D]));
    let out = (w * p).sum(1).reshape([G, D]) / w.sum(1).reshape([G, D]);
    o.store(out.reshape([1, G, D]));
    top.store(out.max(1).reshape([1, G]));   // a row reduction: the default layouts' warps on the rows first
}
"""


def test_a_broadcast_reduced_along_the_shares_has_its_warps_along_d(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """decode_fused_tcw's merge alone (8 warps, G = 4, 16 shares, D = 128): the sums over the shares (of the
    weighted partials, of the weights, the weights' max) read the layout with every warp along D (shuffles only).
    Before a loaded tile broadcast along its last axis counted as a source of `loaded_and_reduced`, and with
    `TILEC_WARPS_ON_COLUMNS=0`, the weights' broadcast took the default's warps (4 on G, 2 on the shares), and so
    did the sums."""
    mod = tilelang.compile(MERGE_SRC)
    f32 = DType.F32
    params = [("o", f32, (2, 4, 128), (1, 4, 128)), ("top", f32, (2, 4), (1, 4)),
              ("parts", f32, (2, 4, 16 * 128), None), ("lse", f32, (2, 4, 16), None)]
    kir = lower_kernel(mod._program, "merge", {"G": 4, "NS": 16, "D": 128},
                       {n: ArgFact(t, s, tl) for n, t, s, tl in params})
    facts = {n: TensorFacts(True, tuple(x % 16 == 0 for x in s), False) for n, _, s, _ in params}

    def warps(gk) -> list[tuple[int, ...]]:  # type: ignore[no-untyped-def]
        return [gk.layouts[op.x.id].warps_per_cta for op in g.walk(gk.body)
                if isinstance(op, ir.Reduce) and op.x.shape == (4, 16, 128)]

    on = warps(lower_gpu(kir, "sm_90a", facts))
    assert len(on) == 3 and all(w == (1, 1, 8) for w in on), on
    monkeypatch.setenv("TILEC_WARPS_ON_COLUMNS", "0")
    assert all(w[1] > 1 for w in warps(lower_gpu(kir, "sm_90a", facts)))


def _run_interpreter(o_part, lse, o, q, k, v, clen: int, ns: int, bn: int, d: int, aw: int = 0,  # type: ignore[no-untyped-def]
                     st: int = 4) -> None:
    _fold().decode_fused_tcw["f16", G, bn, d, ns, aw, st](
        tilelang.partition(o_part, [1, 64, d]), tilelang.partition(lse, [1, 64, 1]), tilelang.partition(o, [1, G, d]),
        q, k, v, clen, 0.125).sync()


# (KV heads, cache positions, cache_len, shares, BN, D): a length inside a key block, length 1 (one share with a
# key, the others none), fewer key blocks than shares, NS past the shares (3 of NS = 4: the fourth MASKED)
INTERP_CASES = [(2, 256, 150, 3, 64, 64), (1, 256, 1, 4, 64, 64), (1, 128, 100, 5, 64, 64)]


@pytest.mark.parametrize(("bhkv", "smax", "clen", "splits", "bn", "d"), INTERP_CASES)
def test_decode_fused_tcw_in_the_interpreter(bhkv: int, smax: int, clen: int, splits: int, bn: int, d: int) -> None:
    q, k, v = _inputs(bhkv, smax, d, clen, 3)
    ns = 1 << max(0, splits - 1).bit_length()
    o_part = np.full((bhkv, G, splits * d), np.nan, np.float32)
    lse = np.full((bhkv, G, splits), np.nan, np.float32)
    o = np.full((bhkv, G, d), np.nan, np.float16)
    _run_interpreter(o_part, lse, o, q, k, v, clen, ns, bn, d)
    np.testing.assert_allclose(o.astype(np.float64), _reference(q, k, v, clen), atol=3e-3, rtol=1e-2)


def test_more_than_32_shares_are_refused_before_the_launch() -> None:
    """NS = 64 would move 128 KB of partials through shared memory beside the ring's 147 KB: E0513 at the launch
    (the `#[requires(..)]`), before any work; so is a launch with more shares than NS."""
    q, k, v = _inputs(1, 256, 64, 256, 0)
    for ns, splits in ((64, 33), (4, 5)):
        o_part = np.zeros((1, G, splits * 64), np.float32)
        lse = np.zeros((1, G, splits), np.float32)
        o = np.zeros((1, G, 64), np.float16)
        with pytest.raises(tilelang.TileError) as e:
            _fold().decode_fused_tcw["f16", G, 64, 64, ns, 0, 4](
                tilelang.partition(o_part, [1, 64, 64]), tilelang.partition(lse, [1, 64, 1]),
                tilelang.partition(o, [1, G, 64]), q, k, v, 256, 0.125).sync()
        assert "E0513" in str(e.value) and ("at most 32 shares" if ns == 64 else "more shares than NS") in str(e.value)


def _kernel_w(bhkv: int, smax: int, splits: int, bn: int, d: int, dt: str = "f16", aw: int = 0,  # type: ignore[no-untyped-def]
              st: int = 4):
    params = _params(bhkv, smax, splits, d, dt)
    params[2] = ("o", DType.parse(dt), (bhkv, G, d), (1, G, d))
    ns = 1 << max(0, splits - 1).bit_length()
    gen = {"T": DType.parse(dt), "G": G, "BN": bn, "D": d, "NS": ns, "AW": aw, "ST": st}
    kir = lower_kernel(_fold()._program, "decode_fused_tcw", gen, {n: ArgFact(t, s, tl) for n, t, s, tl in params})
    return kir, {n: TensorFacts(True, tuple(x % 16 == 0 for x in s), False) for n, _, s, _ in params}, ns


# (KV heads, cache positions, cache_len, shares, BN, D, block order, AW, ring stages): the interpreter's cases and
# 16 shares of the B=1 8k plan's shape over a short cache, D = 128 with the cache's end inside a key block; the
# atomic arrival (AW = 0) in any order, the waiting one (AW = 1) in launch order (llsim runs a block at a time: a
# waiter run before its group's other blocks polls for ever, which llsim reports; on the card CUDA dispatches in
# that order); a ring of 2 and of 3 stages (the bench's sweep)
SIM_CASES = [(2, 256, 150, 3, 64, 64, "reverse", 0, 4), (1, 256, 1, 4, 64, 64, "row-major", 0, 4),
             (1, 128, 100, 5, 64, 64, "reverse", 0, 4), (1, 1024, 1000, 16, 64, 64, "reverse", 0, 4),
             (2, 200, 199, 2, 64, 128, "row-major", 0, 4), (3, 256, 150, 3, 64, 64, "row-major", 1, 4),
             (1, 256, 1, 4, 64, 64, "row-major", 1, 4), (2, 1024, 1000, 16, 64, 64, "row-major", 1, 4),
             (2, 512, 450, 2, 64, 64, "row-major", 1, 2), (1, 512, 333, 2, 64, 128, "reverse", 0, 3)]


@pytest.mark.heavy
@pytest.mark.parametrize(("bhkv", "smax", "clen", "splits", "bn", "d", "order", "aw", "st"), SIM_CASES)
def test_decode_fused_tcw_joined_in_the_simulator(bhkv: int, smax: int, clen: int, splits: int, bn: int, d: int,
                                                  order: str, aw: int, st: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import llsim

    monkeypatch.setenv("TILEC_ATTN_LAST_BLOCK", "join")
    monkeypatch.setattr(llsim, "UNDEF_FLOAT", "nan")
    kir, facts, ns = _kernel_w(bhkv, smax, splits, bn, d, aw=aw, st=st)
    _llsim_against_interpreter(
        bhkv, splits, d, clen, 9, smax,
        lambda args: llsim.SimDevice("sm_90a").run(kir, (bhkv, 1, splits), args, facts, order=order),
        lambda o_part, lse, o, q, k, v: _run_interpreter(o_part, lse, o, q, k, v, clen, ns, bn, d, aw, st))


def test_the_waiting_arrival_keeps_the_launch_order(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """AW = 1: the pipeline leaves the grid in launch order (`kv_blocks_together` would make a head's shares
    consecutive, and the waiters, elected by `%ctaid.z`, would all fall in one head's group: a hang), so the
    group (the head) is `%ctaid.x` and the waiter the last share."""
    monkeypatch.setenv("TILEC_ATTN_LAST_BLOCK", "join")
    from tilelang.backend.gpu.printer import print_gpu_kernel

    for aw, reordered in ((0, True), (1, False)):
        kir, facts, _ = _kernel_w(2, 256, 4, 64, 64, aw=aw)
        assert ("launch_x" in print_gpu_kernel(lower_gpu(kir, "sm_90a", facts))) == reordered


@pytest.mark.heavy
def test_decode_fused_tcw_joined_assembles_without_spills(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """ptxas 13, sm_90a, the B=1 8k plan (bf16, D = 128, 16 shares; a ring of 4 stages, and of 2 and 3 with the
    waiting arrival: the bench's sweep): in the pipeline, 0 B of spills, and the
    region after the arrival has no barrier for the sums (9 in all: the flag's exchange, the log-sum-exps' and
    the partials' moves into the weights' layout, the output's store; decode_fused_tcj's region had 14)."""
    monkeypatch.setenv("TILEC_ATTN_LAST_BLOCK", "join")
    for aw, st in ((0, 4), (1, 4), (1, 2), (1, 3)):
        kir, facts, _ = _kernel_w(8, 8192, 16, 64, 128, "bf16", aw=aw, st=st)
        assert lower_gpu(kir, "sm_90a", facts).num_warps == 8
        ptx = emit_ptx(kir, "sm_90a", facts)
        arrival = ptx.index("atom.acq_rel" if aw == 0 else "red.release")
        assert ptx[arrival:].count("bar.sync") <= 9
        assert assemble(ptx, "sm_90a").max_spill_stores == 0


# (batch, cache positions, cache_len, shares, BN): B=1 8k's plan, a length inside a key block, length 1, fewer
# key blocks than shares (4 key blocks over 16 shares), odd shares, batch 8 with 17 shares (NS 32) over 300 positions
GPU_CASES = [(1, 8192, 8192, 16, 64), (1, 8192, 8000, 16, 64), (1, 8192, 1, 16, 64), (1, 1024, 200, 16, 64),
             (2, 1024, 1000, 3, 64), (8, 512, 300, 17, 64)]


@pytest.mark.gpu
@pytest.mark.parametrize(("batch", "smax", "clen", "splits", "bn"), GPU_CASES)
def test_decode_fused_tcw_matches_sdpa(batch: int, smax: int, clen: int, splits: int, bn: int,
                                       monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TILEC_ATTN_LAST_BLOCK", "join")
    ns = 1 << max(0, splits - 1).bit_length()
    # both arrivals on the ring of 4; the ring of 2 (the bench's sweep) where the cache's end is inside a key block
    for aw, st in ((0, 4), (1, 4), (1, 2))[:3 if clen == 8000 else 2]:
        _matches_sdpa(_fold().decode_fused_tcw["bf16", G, bn, 128, ns, aw, st], [1, G, 128], batch, smax, clen,
                      splits)
