"""std::llm's hybrid residual GEMVs (`std::llm::hybrid::gemv_add_hybrid`,
`Plan.hy`, `tails.py`): the NVPTX simulator against the interpreter and
NumPy (a static bulk a row tile, the rows' last columns in pieces pulled by
fewer blocks than items; layer 1 of a stack; a partial last K tile), the
queue's item count (one item fewer, which left a piece out, is refused), the PTX at Qwen3-4B's
shapes (no spill, the registers of MB blocks, one pull an item, the atomic
adds), the engine's step against the NumPy reference, and the plans it
refuses.

The sums are added atomically in an order the device chooses, so they match
`y + W x` to f32 rounding, not bit for bit: the tolerance is the one-wave
kernels' (rtol 1e-4, atol 1e-4 of the largest value)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from engine import TileQwen3
from model import Qwen3Config, random_weights
from plan import HYBRID_SHAPES, hybrid_plan, plan_for
from ptxas_report import assemble
from reference import NumpyQwen3
from tails import hybrid_items
from test_engine import TINY, _close, _tokens
from test_kernels_sim import _check, _rand

import tilelang
from tilelang.backend.target import ptxas_available

P = tilelang.partition


# (Plan.hy is opt-in: the first shape by default, pieces pulled by fewer blocks than items; ST 2's tile ahead
# and a bulk past K `heavy`, the same kernel at other generics)
@pytest.mark.parametrize(("shape", "kk"), [
    ((8, 256, 1, 0, 1, 64, 2), 600),   # bulk 256 columns, 6 tiles of 64 left: 3 pieces a row tile
    # ST 2: the next bulk tile ahead, none past the bulk
    pytest.param((8, 128, 2, 0, 3, 32, 1), 600, marks=pytest.mark.heavy),
    pytest.param((8, 256, 1, 0, 3, 64, 1), 600, marks=pytest.mark.heavy),  # the bulk past K: no pieces
])  # fmt: skip
def test_hybrid_adds_the_layer_rows(k, shape: tuple[int, ...], kk: int) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(shape[4])
    n, layers = 40, 2
    w = _rand(rng, layers * n, kk, bf16=True)
    x, y0 = _rand(rng, kk), _rand(rng, n)
    items = hybrid_items(shape, n, kk)
    z, y = np.ones(items, np.float32), y0.copy()
    op = k.gemv_add_hybrid[shape](P(z, [1]), y, w, x, 1, n)
    _check(op, (3,), [0, 1])  # 3 blocks in the simulator (2 in the interpreter): most items pulled
    want = y0 + w[n:] @ x
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))
    assert not z.any()  # the launch clears its scratch


def test_hybrid_items_counts_every_piece(k) -> None:  # type: ignore[no-untyped-def]
    # one item fewer than `hybrid_items` left the last row tile's last piece
    # out (its rows missed that piece's columns, silently): now the launch is
    # refused (hrev32, E0513 naming the count); the right count adds it all
    rng = np.random.default_rng(7)
    n, kk, shape = 16, 200, (8, 64, 1, 0, 2, 32, 1)
    items = hybrid_items(shape, n, kk)
    assert items == 2 * (1 + 3)  # 7 tiles of 32: 4 in the bulk, 3 pieces
    w, x, y0 = _rand(rng, n, kk, bf16=True), _rand(rng, kk), _rand(rng, n)
    y = y0.copy()
    flags = np.zeros(items - 1, np.float32)  # (a new array made in the call is E0313)
    with pytest.raises(tilelang.TileError) as info:
        k.gemv_add_hybrid[shape](P(flags, [1]), y, w, x, 0, n).sync()
    assert info.value.code == "E0513" and "z must have an item for each row tile's bulk and piece" in str(info.value)
    np.testing.assert_array_equal(y, y0)  # refused before it started
    flags = np.zeros(items, np.float32)
    k.gemv_add_hybrid[shape](P(flags, [1]), y, w, x, 0, n).sync()
    np.testing.assert_allclose(y, y0 + w @ x, rtol=1e-5, atol=1e-5)


@pytest.mark.skipif(not ptxas_available(), reason="needs ptxas")
def test_hybrid_shapes_at_4b_fit_their_blocks_without_spills() -> None:
    from engine import load_kernels
    from test_gemv_registers import _ptx

    cfg = Qwen3Config.load("qwen3-4b")
    k = load_kernels()
    for mat, (n, kk) in {"o": (cfg.hidden_size, cfg.num_attention_heads * cfg.head_dim),
                         "down": (cfg.hidden_size, cfg.intermediate_size)}.items():  # fmt: skip
        shape = HYBRID_SHAPES[mat]
        mb = shape[3]
        z = P(np.zeros(hybrid_items(shape, n, kk), np.float32), [1])
        op = k.gemv_add_hybrid[shape](z, np.zeros(n, np.float32), np.zeros((n, kk), np.float32),  # (never touched)
                                      np.zeros(kk, np.float32), 0, n)
        op.discard()  # built to be compiled, never run
        ptx = _ptx(op)
        assert f".minnctapersm {mb}" in ptx, mat  # (`max_blocks` is the runtime's: `occupancy.cap_abi`)
        r = assemble(ptx, "sm_90a")
        assert r.max_registers * 256 * mb <= 65536, (mat, r.max_registers, mb)
        assert r.max_spill_stores == 0, (mat, r.text)
        assert ptx.count("atom.relaxed.gpu.global.add.u32") == 1, mat  # one pull an item
        assert "red.global.add.f32" in ptx or "atom.global.add.f32" in ptx, mat  # the rows' sums


def test_hybrid_step_agrees() -> None:
    # Plan.hy: O and down hybrid (K 64: a bulk of 32 columns, pieces of 8 or
    # 16 columns, more items than the interpreter's 2 blocks), 21 steps
    # teacher-forced against NumPy
    w = random_weights(TINY, seed=0)
    shapes = {"o": (8, 32, 1, 0, 1, 8, 1), "down": (8, 32, 2, 0, 1, 8, 2)}
    eng = TileQwen3(TINY, w, max_seq=64, plan=hybrid_plan(plan_for(TINY, 64, None), ("o", "down"), shapes))
    names = [op.kernel.__name__ for op in eng.ops]
    assert names.count("gemv_add_hybrid") == 2 * TINY.num_hidden_layers
    assert names.count("gemv_add") == 0
    ref = NumpyQwen3(TINY, w, max_seq=64)
    for t in _tokens(21, TINY.vocab_size, seed=3):
        _close(eng.feed(t), ref.step(t))


@pytest.mark.parametrize(("hy", "words"), [
    ({"qkv": (8, 32, 1, 0, 1, 8, 1)}, r"not \['qkv'\]"),
    ({"o": (48, 32, 1, 0, 1, 8, 1)}, "must divide"),
    ({"o": (8, 32, 1, 0, 1, 24, 1)}, "BR dividing BK"),
    ({"down": (8, 32, 3, 0, 1, 8, 1)}, "ST 1 or 2"),
    ({"down": (8, 32, 1, 0)}, "takes"),
])  # fmt: skip
def test_hybrid_plans_it_cannot_run_are_refused(hy: dict, words: str) -> None:
    plan = dataclasses.replace(plan_for(TINY, 64, None), hy=hy)
    with pytest.raises(ValueError, match=words):
        TileQwen3(TINY, random_weights(TINY, seed=0), max_seq=64, plan=plan)
