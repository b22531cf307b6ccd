"""std::llm's GEMVs on a tile queue (`std::llm::queue`, `Plan.qg`): the NVPTX
simulator against the interpreter and NumPy (fewer blocks than row tiles, so
blocks pull several; layer 1 of a stack), the same bits as the one-wave
kernels on the interpreter, the PTX at Qwen3-4B's queue shapes (no spill,
the registers of MB blocks, one pull a tile), and the engine's step with
each matrix queued against the NumPy reference."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from engine import TileQwen3, load_kernels
from model import Qwen3Config, random_weights
from plan import QUEUE_SHAPES, plan_for, queue_plan
from ptxas_report import assemble
from reference import NumpyQwen3
from test_engine import TINY, _close, _tokens
from test_kernels_sim import _check, _gate_up_of_layer_1, _rand

import tilelang
from tilelang.backend.target import ptxas_available

P = tilelang.partition


# (heavy: ST 2 at K 512; Plan.qg is opt-in, and 1-600 and 3-1040 run the queue loop, the partial K step, the ring)
@pytest.mark.parametrize(("st", "kk"), [(1, 600), pytest.param(2, 512, marks=pytest.mark.heavy), (3, 1040)])
def test_queued_gemv_add_pulls_the_layer_row_tiles(k, st: int, kk: int) -> None:  # type: ignore[no-untyped-def]
    # 5 row tiles of 8 rows (layer 1 of a 2-layer stack) over the simulator's
    # 3 queue blocks a row (the interpreter's 2): blocks pull the rest; K 600
    # and 1040: a partial last K step; ST 3: the weights through the ring
    rng = np.random.default_rng(st)
    n, layers = 40, 2
    w = _rand(rng, layers * n, kk, bf16=True)
    x, y0 = _rand(rng, kk), _rand(rng, n)
    y = y0.copy()
    op = k.gemv_add_queue[8, 256, st, 0](P(y, [8]), w, x, 1, n)
    _check(op, (5,), [0])
    want = y0 + w[n:] @ x
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))
    # the same bits as the one-wave kernel's block for the same rows
    y1 = y0.copy()
    k.gemv_add[8, 256, st, 0, 0, 0, 0, 0](P(y1, [8]), w, x, 1, w, 0, 0).sync()
    np.testing.assert_array_equal(y, y1)


# (heavy: ST 1; Plan.qg is off by default: ST 2 runs the norm's queued kernels, and ST 1's queue loop runs in
# test_queued_gemv_add_pulls_the_layer_row_tiles[1-600])
@pytest.mark.parametrize("st", [pytest.param(1, marks=pytest.mark.heavy), 2])
def test_queued_rms_gemv_and_gate_up(k, st: int) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(10 + st)
    n, kk, layers = 48, 512, 2
    x, g = _rand(rng, kk), _rand(rng, layers, kk, bf16=True)
    xn = x / np.sqrt((x * x).mean() + 1e-6) * g[1]
    w = _rand(rng, layers * n, kk, bf16=True)
    y = np.zeros(n, np.float32)
    op = k.rms_gemv_queue[8, 256, st, 0](P(y, [8]), w, x, g, 1, n, 1e-6)
    _check(op, (6,), [0])
    want = w[n:] @ xn
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))
    y1 = np.zeros(n, np.float32)
    k.rms_gemv[8, 256, st, 0, 0, 0, 0, 0](P(y1, [8]), w, x, g, 1, 1e-6, w, 0, 0).sync()
    np.testing.assert_array_equal(y, y1)
    # gate_up: per layer, the gate's n rows then the up's n rows
    wgu = _rand(rng, layers * 2 * n, kk, bf16=True)
    h = np.zeros(n, np.float32)
    op = k.rms_gate_up_queue[8, 128, st, 0](P(h, [8]), wgu, x, g, 1, n, 1e-6)
    _check(op, (6,), [0])
    want = _gate_up_of_layer_1(wgu, x, g, n)
    np.testing.assert_allclose(h, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))


@pytest.mark.skipif(not ptxas_available(), reason="ptxas is not on PATH")
def test_queue_shapes_at_4b_fit_their_blocks_without_spills() -> None:
    # `plan.QUEUE_SHAPES` at Qwen3-4B: MB blocks' registers fit an SM (the
    # queue's wave is MB blocks an SM: `max_blocks`), no spill, one pull (a
    # relaxed atomic, no fence) a tile
    from test_gemv_registers import _ptx

    cfg = Qwen3Config.load("qwen3-4b")
    h, i, hq, d = cfg.hidden_size, cfg.intermediate_size, cfg.num_attention_heads, cfg.head_dim
    qkv = (hq + 2 * cfg.num_key_value_heads) * d
    k = load_kernels()
    for mat, n, kk in (("qkv", qkv, h), ("o", h, hq * d), ("gate_up", i, h), ("down", h, i)):
        bn, bk, st, mb = QUEUE_SHAPES[mat]
        # the whole layer's rows (calloc's pages, never touched: built to be compiled, never run)
        rows = 2 * n if mat == "gate_up" else n
        w, x, g = np.zeros((rows, kk), np.float32), np.zeros(kk, np.float32), np.ones((2, kk), np.float32)
        y = P(np.zeros(n, np.float32), [bn])
        if mat == "qkv":
            op = k.rms_gemv_queue[bn, bk, st, mb](y, w, x, g, 0, n, 1e-6)
        elif mat == "gate_up":
            op = k.rms_gate_up_queue[bn, bk, st, mb](y, w, x, g, 0, n, 1e-6)
        else:
            op = k.gemv_add_queue[bn, bk, st, mb](y, w, x, 0, n)
        op.discard()  # built to be compiled, never run
        ptx = _ptx(op)
        assert f".minnctapersm {mb}" in ptx, mat
        r = assemble(ptx, "sm_90a")
        assert r.max_registers * 256 * mb <= 65536, (mat, r.max_registers, mb)
        assert r.max_spill_stores == 0, (mat, r.text)
        assert ptx.count("atom.relaxed.gpu.global.add.u32") == 1, mat


@pytest.mark.parametrize("mats", [
    # heavy: qkv alone and gate/up alone run the queued kernels that all four
    # run (`rms_gemv_queue`, `rms_gate_up_queue`), next to planned ones as
    # ("o", "down") does
    pytest.param(("qkv",), marks=pytest.mark.heavy),
    pytest.param(("o", "down"), marks=pytest.mark.heavy),  # (Plan.qg is opt-in: all four queue o and down too)
    pytest.param(("gate_up",), marks=pytest.mark.heavy),
    ("qkv", "o", "gate_up", "down"),
])
def test_queued_step_agrees(mats: tuple[str, ...]) -> None:
    # Plan.qg: the matrices `mats` on the queue in 8-row tiles (more tiles
    # than the interpreter's 2 blocks: each pulls several), the others as
    # planned; 21 steps teacher-forced against NumPy
    w = random_weights(TINY, seed=0)
    shapes = dict.fromkeys(mats, (8, 32, 1, 0))
    eng = TileQwen3(TINY, w, max_seq=64, plan=queue_plan(plan_for(TINY, 64, None), mats, shapes))
    names = [op.kernel.__name__ for op in eng.ops]
    queued = {"qkv": "rms_gemv_queue", "gate_up": "rms_gate_up_queue"}
    for m in ("qkv", "gate_up"):
        assert names.count(queued[m]) == (TINY.num_hidden_layers if m in mats else 0)
    per_layer = sum(m in mats for m in ("o", "down"))
    assert names.count("gemv_add_queue") == per_layer * TINY.num_hidden_layers
    assert names.count("gemv_add") == (2 - per_layer) * TINY.num_hidden_layers
    ref = NumpyQwen3(TINY, w, max_seq=64)
    for t in _tokens(21, TINY.vocab_size, seed=3):
        _close(eng.feed(t), ref.step(t))


@pytest.mark.parametrize(("qg", "words"), [
    ({"lm": (8, 32, 1, 0)}, r"not \['lm'\]"),
    ({"o": (48, 32, 1, 0)}, "must divide"),
])  # fmt: skip
def test_queue_plans_it_cannot_run_are_refused(qg: dict, words: str) -> None:
    plan = dataclasses.replace(plan_for(TINY, 64, None), qg=qg)
    with pytest.raises(ValueError, match=words):
        TileQwen3(TINY, random_weights(TINY, seed=0), max_seq=64, plan=plan)
