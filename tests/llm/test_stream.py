"""std::llm's persistent streaming GEMV (`std::llm::stream::gemv_stream`,
`Plan.sk`): the NVPTX simulator against the interpreter and NumPy (shares
that end inside a row tile, so a row's sums come from several blocks'
atomics), the PTX at Qwen3-4B's planned shapes (ringed, no spill, no barrier
in the loop), and the engine's step with it against the NumPy reference."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from engine import TileQwen3
from model import Qwen3Config, random_weights
from plan import STREAM_DOWN, plan_for, stream_plan
from ptxas_report import assemble
from reference import NumpyQwen3
from test_engine import TINY, _close, _tokens
from test_kernels_sim import _check, _rand, _ring_copies

import tilelang
from tilelang.backend.target import ptxas_available

P = tilelang.partition


def _vector(x: np.ndarray, g: np.ndarray, xf: int, kk: int) -> np.ndarray:
    """What `gemv_stream` multiplies by for X = xf (layer 1's norm weight)."""
    if xf == 1:
        return x / np.sqrt((x * x).mean() + 1e-6) * g[1]
    if xf == 2:
        a, b = x[:kk], x[kk:]
        return a / (1 + np.exp(-a)) * b
    return x


# (Plan.sk is opt-in: 0-1040-5-4 by default, a partial last K tile through the ring of 4; the norm's and the
# SiLU's vectors, ST 3 and the empty shares `heavy`: the same kernel at other generics and grids)
@pytest.mark.parametrize(("xf", "kk", "grid", "st"), [(0, 1040, 5, 4)] + [
    pytest.param(*c, marks=pytest.mark.heavy) for c in [(1, 1024, 7, 3), (2, 768, 3, 4), (0, 512, 12, 0)]])
def test_stream_shares_sum_into_the_output(k, xf: int, kk: int, grid: int, st: int) -> None:  # type: ignore[no-untyped-def]
    # layer 1 of a 2-layer stack, 4 row tiles of 8 rows: 4 x KT tiles over
    # `grid` blocks, so shares start and end inside row tiles (K 1040: a
    # partial last K tile; 12 blocks over 8 tiles: some shares empty); y is
    # accumulated (y0 + W x) and the launch's own tiles `z` cleared; ST >= 3
    # streams the weights through the ring (a copy of each of the ST - 1
    # stages ahead and one in the loop)
    rng = np.random.default_rng(xf)
    n, layers = 32, 2
    w = _rand(rng, layers * n, kk, bf16=True)
    x = _rand(rng, 2 * kk if xf == 2 else kk)
    g = _rand(rng, layers, kk, bf16=True)
    y0 = _rand(rng, n)
    y, z = y0.copy(), np.ones(grid * 2, np.float32)
    bk = 256 if kk != 512 else 64
    op = k.gemv_stream[8, bk, st, 0, xf, 2, -(-kk // bk)](P(z, [2]), y, w, x, g, 1, n, 1e-6)
    assert _ring_copies(op) == (st if st >= 3 else 0)
    _check(op, (grid,), [0, 1])
    want = y0 + w[n : 2 * n] @ _vector(x, g, xf, kk)
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))
    assert not z.any()


@pytest.mark.skipif(not ptxas_available(), reason="ptxas is not on PATH")
@pytest.mark.parametrize("mb", [3, pytest.param(4, marks=pytest.mark.heavy)])  # (heavy: MB 4, the same checks as 3)
def test_stream_gemvs_at_4b_shapes_stream_without_spills_or_barriers(k, mb: int) -> None:  # type: ignore[no-untyped-def]
    # Plan.sk's shapes at Qwen3-4B on 132 SMs (and down's fastest, `plan.STREAM_DOWN`): the
    # weights through the ring, no spill, MB blocks' registers fit the SM, one
    # atomic a row (BN of them in the flush, no more), and no barrier inside
    # the loop: the reset accumulator keeps its layout (the norm's prologue,
    # X 1, reduces x across warps once, before the loop)
    from test_gemv_registers import _ptx

    cfg = Qwen3Config.load("qwen3-4b")
    h, i, hq, d = cfg.hidden_size, cfg.intermediate_size, cfg.num_attention_heads, cfg.head_dim
    shapes = [("o", h, hq * d, 0, (16, 256, 4)), ("gate_up", 2 * i, h, 1, (16, 256, 4)), ("down", h, i, 2, (16, 256, 4))]
    if mb == STREAM_DOWN[3]:  # the fastest stream of down (X 0), `plan.STREAM_DOWN`
        shapes.append(("down", h, i, 0, STREAM_DOWN[:3]))
    for mat, n, kk, xf, (bn, bk, st) in shapes:
        w, g = np.zeros((n, kk), np.float32), np.ones((2, kk), np.float32)  # (never touched: compiled, never run)
        x = np.zeros(2 * kk if xf == 2 else kk, np.float32)
        op = k.gemv_stream[bn, bk, st, mb, xf, 1, kk // bk](P(np.zeros(132 * mb, np.float32), [1]),
                                                           np.zeros(n, np.float32), w, x, g, 0, n, 1e-6)  # fmt: skip
        op.discard()  # built to be compiled, never run
        ptx = _ptx(op)
        r = assemble(ptx, "sm_90a")
        assert r.max_registers * 256 * mb <= 65536 and r.max_spill_stores == 0, (mat, r.text)
        assert ptx.count("cp.async.cg.shared.global") > 0, mat
        # the only barriers: X 1's prologue (the norm's sum of squares, once)
        assert ptx.count("bar.sync") == (2 if xf == 1 else 0), mat
        assert 0 < ptx.count("atom.global.add.f32") <= bn // 8 * 2, mat  # BN rows over 4 lanes x 2


def _stream_engine(w: dict, mats: tuple[str, ...], cfg: Qwen3Config = TINY) -> TileQwen3:
    plan = stream_plan(plan_for(cfg, 64, None), mats, 5, mb=1, shape=(8, 32, 3))
    return TileQwen3(cfg, w, max_seq=64, plan=plan)


# (heavy: all but the all-three case, which streams each of o, gate/up and down with the same kernels and
# generics as the others do, in the same step; Plan.sk is opt-in)
@pytest.mark.parametrize("mats", [pytest.param(("o",), marks=pytest.mark.heavy),
                                  pytest.param(("down",), marks=pytest.mark.heavy),
                                  pytest.param(("gate_up", "down"), marks=pytest.mark.heavy),
                                  ("o", "gate_up", "down")])
def test_streamed_step_agrees(mats: tuple[str, ...]) -> None:
    # Plan.sk: the matrices `mats` as 5-block streams (8 x 32 tiles, a ring
    # of 3), the others as planned; gate/up sums into slot l % 2 of its
    # scratch and clears the other (2 layers: each step's first layer finds
    # its slot cleared by the last); 21 steps teacher-forced against NumPy
    w = random_weights(TINY, seed=0)
    eng = _stream_engine(w, mats)
    xs = [op.generics["X"] for op in eng.ops if op.kernel.__name__ == "gemv_stream"]
    want = {"o": [0], "down": [0], "gate_up": [1, 2]}
    per_layer = [x for m in mats if m != "down" or "gate_up" not in mats for x in want[m]]
    assert sorted(xs) == sorted(per_layer * TINY.num_hidden_layers)
    names = {op.kernel.__name__ for op in eng.ops}
    assert ("rms_gate_up" in names) == ("gate_up" not in mats)
    ref = NumpyQwen3(TINY, w, max_seq=64)
    for t in _tokens(21, TINY.vocab_size, seed=9):
        _close(eng.feed(t), ref.step(t))


@pytest.mark.parametrize(("mats", "cfg", "words"), [
    (("gate_up",), TINY, "needs a streamed down"),
    (("qkv", "down"), TINY, r"not \['qkv'\]"),
    (("gate_up", "down"), dataclasses.replace(TINY, num_hidden_layers=1), "2 layers at least"),
    (("gate_up", "down"), dataclasses.replace(TINY, intermediate_size=80), "must divide"),
])  # fmt: skip
def test_stream_plans_it_cannot_run_are_refused(mats: tuple[str, ...], cfg: Qwen3Config, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        _stream_engine(random_weights(cfg, seed=0), mats, cfg)
