"""The attention epilogue's store (`codegen/accview.store_rows`): an [M, N]
value in the accumulator layout is stored with one bounds test a row (each
thread's row is N / 4 column pairs, 16 bytes apart), its f16/bf16 pairs
packed from the f32 values by one conversion; rows past the tensor's end,
a tile whose columns pass its last dim, and misaligned rows take the
element-by-element path. Checked in the LLVM text (which branch guards each
store) and run in `llsim` against NumPy at the edges."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from llsim import SimDevice
from test_attention_pipeline import whole_tiles  # noqa: F401

from tilelang import driver
from tilelang.backend import emit_llvm, lower_gpu
from tilelang.backend.facts import TensorFacts
from tilelang.backend.gpu import nodes as g
from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

USER = (Path(__file__).parent / "programs" / "user_attention.tile").read_text()


def _std(dt: str, bm: int, bn: int, d: int):  # type: ignore[no-untyped-def]
    src = (f"use std::attention::flash_attention;\nfn main() {{ let q = zeros::<{dt}>([2, 64, {d}]);"
           f" let mut o = zeros::<{dt}>([2, 64, {d}]);"
           f" flash_attention::<{dt}, {bm}, {bn}, {d}>(o.partition([1, {bm}, {d}]), &q, &q, &q, 0.1, true).sync(); }}\n")
    return driver.compile(src, "ir").output[0]


def _facts(names: str, rank: int, div16: bool = True) -> dict[str, TensorFacts]:
    return {n: TensorFacts(True, (False,) * (rank - 1) + (div16,)) for n in names}


def _guards(ll: str, ty: str) -> list[str]:
    """For each `store <2 x ty>`, the condition of the branch into its block."""
    cond_of: dict[str, str] = {}
    for m in re.finditer(r"br i1 (%[\w.]+|true|false), label %([\w.]+), label %([\w.]+)", ll):
        cond_of[m.group(2)] = m.group(1)
    out, block = [], ""
    for line in ll.splitlines():
        if re.match(r"^[\w.]+:", line):
            block = line.split(":")[0]
        elif f"store <2 x {ty}>" in line:
            out.append(cond_of.get(block, "?"))
    return out


@pytest.mark.parametrize(("dt", "ty"), [("f16", "half"), ("bf16", "bfloat")])
def test_the_epilogue_tests_bounds_once_a_row(dt: str, ty: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """128 x 128 blocks, D = 128: a consumer thread holds 2 rows of 16 pairs;
    its 32 pair stores hang off 2 conditions (one a row), each pair packed by
    one cvt.rn (the generic store: a bounds test a pair, 32 conditions, and
    two fptruncs that LLVM moves above the user's `where`). The 4-byte pairs:
    at D = 128 the default takes 16-byte stores (test_attention_store16.py)."""
    monkeypatch.setenv("TILEC_ATTN_STORE16", "0")
    k = _std(dt, 128, 128, 128)
    ll = emit_llvm(k, "sm_90a", _facts("oqkv", 3))
    guards = _guards(ll, ty)
    assert len(guards) == 32 and len(set(guards)) == 2, guards
    cvt = "ff2f16x2" if dt == "f16" else "ff2bf16x2"
    assert ll.count(f"call <2 x {ty}> @llvm.nvvm.{cvt}.rn(") == 32
    monkeypatch.setenv("TILEC_ATTN_ROWSTORE", "0")
    off = _guards(emit_llvm(k, "sm_90a", _facts("oqkv", 3)), ty)
    assert len(off) == 32 and len(set(off)) == 32, off


def _user_wide(bm: int, d: int, s: int, width: int) -> object:
    """The user's loop (tests/backend/programs/user_attention.tile) storing into
    an output `width` columns wide, tiled [bm, d]: column block 1 runs with
    q read past its edge (zeros: every key weighs the same) and its tile
    passes the output's last dim when width < 2 d."""
    src = USER.replace("let mut o = zeros::<f16>([200, 64]);", f"let mut o = zeros::<f16>([{s}, {width}]);")
    src = src.replace("attn::<64, 64, 64>(o.partition([64, 64])", f"attn::<{bm}, 64, {d}>(o.partition([{bm}, {d}])")
    return driver.compile(src, "ir").output[0]


@pytest.mark.parametrize(("s", "width", "div16"), [(100, 80, True), (120, 73, False)],
                         ids=["rows_and_columns_past_the_edge", "odd_width_misaligned_rows"])
def test_the_row_store_at_the_edges_in_the_simulator(s: int, width: int, div16: bool) -> None:
    """S not a multiple of the block (the last tile's rows past the end), a
    column tile that passes the output's last dim (the element-by-element
    path), and (73 columns) rows whose pairs are not 4-byte aligned: every
    element inside the output written as the interpreter would, none outside."""
    bm, d = 64, 64
    k = _user_wide(bm, d, s, width)
    rng = np.random.default_rng(11)
    q, kk, v = (rng.standard_normal((s, d)).astype(np.float16) for _ in range(3))
    o = np.full((s, width), np.nan, np.float16)
    facts = {**_facts("qkv", 2), **_facts("o", 2, div16)}
    SimDevice("sm_90a").run(k, (-(-s // bm), 2), [o, q, kk, v, np.float32(0.125)], facts)
    sc = q.astype(np.float64) @ kk.astype(np.float64).T * 0.125
    p = np.exp(sc - sc.max(1, keepdims=True))
    ref = (p / p.sum(1, keepdims=True)) @ v.astype(np.float64)
    np.testing.assert_allclose(o[:, :d].astype(np.float64), ref, atol=3e-3, rtol=1e-2)
    # column block 1: q is zeros there, so every key weighs the same
    mean = v.astype(np.float64).mean(0)[: width - d]
    np.testing.assert_allclose(o[:, d:].astype(np.float64), np.broadcast_to(mean, (s, width - d)), atol=3e-3)


def _zero_selects(k, facts) -> int:  # type: ignore[no-untyped-def]
    """`where(ran, acc, 0)` over a register tile: selects whose condition is a
    broadcast run-time scalar, in the consumers of the lowered kernel."""
    gk = lower_gpu(k, "sm_90a", facts)
    ops = list(g.walk(gk.body))
    scalar_bcast = {op.result.id for op in ops if isinstance(op, ir.Broadcast) and not op.x.shape
                    and op.x.dtype is DType.BOOL}
    return sum(1 for op in ops if isinstance(op, ir.Elementwise) and op.op is ir.ElemOp.WHERE
               and op.operands[0].id in scalar_bcast and len([x for x in op.result.shape if x > 1]) == 2)


@pytest.mark.parametrize(("bm", "bn", "d"), [(128, 128, 128), (128, 128, 64), (64, 64, 64)])
@pytest.mark.usefixtures("whole_tiles")
def test_the_never_ran_zeros_are_dropped_where_the_epilogue_discards_them(bm: int, bn: int, d: int,  # type: ignore[no-untyped-def]
                                                                         monkeypatch) -> None:
    """std's epilogue, `where(m > MASKED, acc / l, 0)`, discards the
    accumulator of a row block whose key loop never ran (m is still MASKED
    there), so the select of the zero accumulator, one a register, is gone
    (`TILEC_ATTN_DROP_ZEROS=0` keeps it); a user loop that stores `acc / l`
    as it is keeps it. (The simulator tests of both schedules read undefined
    floats as NaN: test_attention_pipeline.py.)"""
    k = _std("f16", bm, bn, d)
    assert _zero_selects(k, _facts("oqkv", 3)) == 0
    monkeypatch.setenv("TILEC_ATTN_DROP_ZEROS", "0")
    assert _zero_selects(k, _facts("oqkv", 3)) == 1
    monkeypatch.delenv("TILEC_ATTN_DROP_ZEROS")
    if d == 64:  # the user's program is 64 wide
        assert _zero_selects(_user_wide(bm, d, 200, d), _facts("oqkv", 2)) == 1


def test_rows_past_the_tensor_are_skipped_with_one_branch_a_row(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`std::attention::decode_split_tc` stores a 64-row f32 tile of which G = 4
    rows are the tensor's: each consumer thread's two rows of 16 pairs open
    with one branch on "the row is inside" (`TILEC_ATTN_ROWSKIP`, on by
    default), which every store of the row sits behind, so a dead row runs
    no bounds test; with the setting off a dead row took the
    element-by-element path, 64 tests a thread."""
    import test_decode_tc_pipeline as tc

    from tilelang.backend import emit_llvm

    kir, facts = tc._kernel_ir(8, 8192, 16, 64, 128)

    def row_branches(ll: str) -> tuple[int, int]:
        opened = re.findall(r"br i1 %[\w.]+, label %(rl\d+), label %(rx\d+)", ll)
        # the stores of the f32 tile: every one after a row's branch and before its join
        body, inside, outside = None, 0, 0
        for line in ll.splitlines():
            lab = re.match(r"^([\w.]+):", line)
            if lab and lab.group(1).startswith("rl"):
                body = lab.group(1)
            elif lab and lab.group(1).startswith("rx"):
                body = None
            elif "store <2 x float>" in line or re.search(r"store float %[\w.]+, ptr addrspace\(1\)", line):
                inside, outside = (inside + 1, outside) if body else (inside, outside + 1)
        return len(opened), outside if inside else -1

    monkeypatch.delenv("TILEC_ATTN_ROWSKIP", raising=False)
    n, outside = row_branches(emit_llvm(kir, "sm_90a", facts))
    assert n == 2 and outside <= 2, (n, outside)  # the lse's stores (a row vector) take the generic path
    monkeypatch.setenv("TILEC_ATTN_ROWSKIP", "0")
    assert row_branches(emit_llvm(kir, "sm_90a", facts))[0] == 0
