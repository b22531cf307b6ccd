"""std::llm::rows on the static tile walk (`gemv_rows_add_walk`,
`rms_gate_up_rows_walk`, `Plan.xr` (R, MB, 1); h17s, issue 17): the row tiles
dealt to one wave of blocks (`for s in tiles(0)`) instead of pulled from a
queue. The NVPTX simulator and the interpreter against NumPy (fewer blocks
than row tiles, layer 1 of a stack, K not a multiple of 32); a decode step
against NumPy; the PTX at Qwen3-4B's shapes for sm_90a: no atomic, no barrier
in the row loop of O and gate/up (each warp runs on to its next row without
waiting for the others), x loaded once before it, no spill (ptxas)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from engine import TileQwen3
from model import random_weights
from plan import plan_for, rows_plan
from ptxas_report import assemble
from reference import NumpyQwen3
from test_engine import TINY, _close, _tokens
from test_gemv_registers import _ptx
from test_kernels_sim import _check, _gate_up_of_layer_1, _rand

import tilelang
from tilelang.backend.target import ptxas_available

P = tilelang.partition


# (Plan.xr's walk is opt-in: 8-600 (a partial K step) and 2-600 (a row across warps) by default; 8-512 `heavy`)
@pytest.mark.parametrize(("r", "kk"), [pytest.param(8, 512, marks=pytest.mark.heavy), (8, 600), (2, 600)])
def test_walk_gemv_add_against_numpy(k, r: int, kk: int) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(kk + r + 1)
    n, layers = 40, 2
    w = _rand(rng, layers * n, kk, bf16=True)
    x, y0 = _rand(rng, kk), _rand(rng, n)
    y = y0.copy()
    op = k.gemv_rows_add_walk[r, kk, 0, 1](P(y, [r]), w, x, 1, n)
    _check(op, (n // r,), [0])
    want = y0 + w[n:] @ x
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))


# (heavy: K 512; 600 has a partial last step)
@pytest.mark.parametrize("kk", [pytest.param(512, marks=pytest.mark.heavy), 600])
def test_walk_rms_gate_up_against_numpy_and_the_queue(k, kk: int) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(30 + kk)
    n, layers = 48, 2
    x, g = _rand(rng, kk), _rand(rng, layers, kk, bf16=True)
    w = _rand(rng, layers * 2 * n, kk, bf16=True)
    h = np.zeros(n, np.float32)
    op = k.rms_gate_up_rows_walk[8, kk, 0, 1](P(h, [8]), w, x, g, 1, n, 1e-6)
    _check(op, (6,), [0])
    want = _gate_up_of_layer_1(w, x, g, n)
    np.testing.assert_allclose(h, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))
    hq = np.zeros(n, np.float32)
    k.rms_gate_up_rows[8, kk, 0](P(hq, [8]), w, x, g, 1, n, 1e-6).sync()
    np.testing.assert_array_equal(h, hq)  # the same arithmetic a row, whichever block takes it


def test_walk_step_agrees() -> None:
    mats = ("o", "gate_up", "down")
    w = random_weights(TINY, seed=0)
    shapes = {"o": (8, 0, 1), "gate_up": (8, 0, 2), "down": (8, 0, 3)}
    eng = TileQwen3(TINY, w, max_seq=64, plan=rows_plan(plan_for(TINY, 64, None), mats, shapes))
    names = [op.kernel.__name__ for op in eng.ops]
    assert names.count("gemv_rows_add_walk") == 2 * TINY.num_hidden_layers
    assert names.count("rms_gate_up_rows_walk") == TINY.num_hidden_layers
    assert names.count("gemv_rows_add") == names.count("rms_gate_up_rows") == names.count("rms_gate_up") == 0
    ref = NumpyQwen3(TINY, w, max_seq=64)
    for t in _tokens(21, TINY.vocab_size, seed=4):
        _close(eng.feed(t), ref.step(t))


def test_a_walk_flag_past_4_is_refused() -> None:
    plan = rows_plan(plan_for(TINY, 64, None), ("o",), {"o": (8, 1, 5)})
    with pytest.raises(ValueError, match="WALK 0"):
        TileQwen3(TINY, random_weights(TINY, seed=0), max_seq=64, plan=plan)


def _report(k, name: str, kk: int, mb: int, r: int = 8, st: int = 1):  # type: ignore[no-untyped-def]
    n = 64
    w, x, g = np.zeros((4 * n, kk), np.float32), np.zeros(kk, np.float32), np.ones((2, kk), np.float32)
    y = P(np.zeros(n, np.float32), [r])
    if name == "gate_up":
        op = k.rms_gate_up_rows_walk[r, kk, mb, st](y, w, x, g, 1, n, 1e-6)
    else:
        op = k.gemv_rows_add_walk[r, kk, mb, st](y, w, x, 1, n)
    ptx = _ptx(op)
    return ptx, assemble(ptx, "sm_90a")


def _loop(ptx: str) -> str:
    """The row loop: from the first 16-byte weight load after x's (the
    loop's) to the end; x's loads come before the first barrier-free label
    that a backward branch targets."""
    labels = re.findall(r"^(\$L__BB\d+_\d+):", ptx, re.M)
    back = [lb for lb in labels if re.search(rf"bra(\.uni)?\s+{re.escape(lb)};", ptx[ptx.index(lb + ":"):])]
    assert back, "no loop"
    return ptx[ptx.index(back[0] + ":"):]


@pytest.mark.filterwarnings("ignore:an operation of kernel")
@pytest.mark.skipif(not ptxas_available(), reason="ptxas is not on PATH")
# (heavy: o and gate/up at MB 1, the same checks as gate/up at MB 2; the walk is opt-in)
@pytest.mark.parametrize(("name", "kk", "mb"), [pytest.param("o", 4096, 1, marks=pytest.mark.heavy),
                                                pytest.param("gate_up", 2560, 1, marks=pytest.mark.heavy),
                                                ("gate_up", 2560, 2)])
def test_walk_ptx_has_no_atomic_and_no_barrier_in_the_loop(k, name: str, kk: int, mb: int) -> None:  # type: ignore[no-untyped-def]
    ptx, rep = _report(k, name, kk, mb)
    assert max(rep.spill_stores) == 0 and max(rep.spill_loads) == 0, rep.text
    assert rep.max_registers <= 65536 // (256 * mb), rep.text
    assert "atom." not in ptx and "membar" not in ptx
    loop = _loop(ptx)
    # O adds into y (`y.store(y.load() + ..)`), whose load is replicated over
    # a warp's lanes: the store by the first lane waits at one block barrier
    # for the other replicas' loads (`codegen/hazards.py`); gate/up has none
    assert "barrier.sync" not in loop and loop.count("bar.sync") == (1 if name == "o" else 0)
    rows = 1 if name == "o" else 2
    assert loop.count("ld.global.nc.v4.b32") == rows * kk // 256  # the weights only: x stays in registers
    assert loop.count("shfl.sync.bfly") == 5 * rows
    assert "ld.shared" not in loop and "st.shared" not in loop
    assert ptx[: ptx.index(loop[:20])].count("ld.global") >= kk // 256 // 4  # x, before the loop


@pytest.mark.filterwarnings("ignore:an operation of kernel")
@pytest.mark.skipif(not ptxas_available(), reason="ptxas is not on PATH")
@pytest.mark.parametrize(("name", "kk", "st"), [("o", 4096, 3), ("gate_up", 2560, 2)])
def test_walk_with_stages_streams_the_rows_through_a_ring(k, name: str, kk: int, st: int) -> None:  # type: ignore[no-untyped-def]
    # ST >= 2: the walk's ir.For lets `stream_loads` copy the next tiles'
    # weight chunks (cp.async, ST - 1 ahead; gate/up's two loads of 40 KB a
    # stage fit 2 stages) and read this tile's back from shared memory: no
    # weight load from global memory, no barrier in the loop (the row sums
    # need none: one warp along K, so the ring's budget counts no scratch
    # for them, `stream_loads._in_warps`)
    ptx, rep = _report(k, name, kk, 1, st=st)
    loop = _loop(ptx)
    chunks = kk // 256 * (1 if name == "o" else 2)  # 16-byte chunks a lane a tile
    assert "ld.global.nc.v4" not in loop
    assert loop.count("cp.async.cg.shared.global") >= chunks
    assert loop.count("ld.shared.v4") == chunks
    assert "barrier.sync" not in loop and loop.count("bar.sync") == (1 if name == "o" else 0)  # as above
    assert max(rep.spill_stores) <= 64, rep.text  # O at ST 3: 255 registers, 48 bytes spilled (ptxas)
    assert _report(k, name, kk, 1, st=1)[0].count("cp.async") == 0  # ST 1: no ring
