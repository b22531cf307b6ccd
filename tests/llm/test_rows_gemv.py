"""std::llm::rows (issue 17, `Plan.xr`): the decode GEMVs with the vector x
in registers across a block's rows (a whole-row [R, K] weight tile a step, R 8:
a row a warp) on a tile queue. The NVPTX simulator and the interpreter
against NumPy (fewer blocks than row tiles, layer 1 of a stack, K not a
multiple of 32); the PTX at Qwen3-4B's shapes for sm_90a: assembled by ptxas,
no spill, x loaded once before the queue loop, the row sums by shuffles."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from engine import TileQwen3
from model import random_weights
from plan import ROWS_SHAPES, plan_for, rows_plan
from ptxas_report import assemble
from reference import NumpyQwen3
from test_engine import TINY, _close, _tokens
from test_gemv_registers import _ptx
from test_kernels_sim import _check, _gate_up_of_layer_1, _rand

import tilelang
from tilelang.backend.target import ptxas_available

P = tilelang.partition


# (Plan.xr is opt-in: 8-600 (a partial K step) and 2-600 (a row across warps) by default; 8-512 `heavy`)
@pytest.mark.parametrize(("r", "kk"), [pytest.param(8, 512, marks=pytest.mark.heavy), (8, 600), (2, 600)])
def test_rows_gemv_add_against_numpy(k, r: int, kk: int) -> None:  # type: ignore[no-untyped-def]
    # 40 / R row tiles (layer 1 of a 2-layer stack) over 3 simulated blocks;
    # R 2: a row across 4 warps (down's shape)
    rng = np.random.default_rng(kk + r)
    n, layers = 40, 2
    w = _rand(rng, layers * n, kk, bf16=True)
    x, y0 = _rand(rng, kk), _rand(rng, n)
    y = y0.copy()
    op = k.gemv_rows_add[r, kk, 0](P(y, [r]), w, x, 1, n)
    _check(op, (n // r,), [0])
    want = y0 + w[n:] @ x
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))


def test_rows_gemv_add_reads_zeros_past_a_short_row(k) -> None:  # type: ignore[no-untyped-def]
    # K 640 for a 600-column matrix and vector: the columns past the edge add nothing
    rng = np.random.default_rng(3)
    n = 16
    w, x, y0 = _rand(rng, n, 600, bf16=True), _rand(rng, 600), _rand(rng, n)
    y = y0.copy()
    k.gemv_rows_add[8, 640, 0](P(y, [8]), w, x, 0, n).sync()
    want = y0 + w @ x
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))


# (heavy: K 512; 600 has a partial last step)
@pytest.mark.parametrize("kk", [pytest.param(512, marks=pytest.mark.heavy), 600])
def test_rms_gate_up_rows_against_numpy_and_gemv(k, kk: int) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(20 + kk)
    n, layers = 48, 2
    x, g = _rand(rng, kk), _rand(rng, layers, kk, bf16=True)
    w = _rand(rng, layers * 2 * n, kk, bf16=True)
    h = np.zeros(n, np.float32)
    op = k.rms_gate_up_rows[8, kk, 0](P(h, [8]), w, x, g, 1, n, 1e-6)
    _check(op, (6,), [0])
    want = _gate_up_of_layer_1(w, x, g, n)
    np.testing.assert_allclose(h, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))
    # the one-wave kernel agrees (to rounding: it scales by the norm at the end)
    h1 = np.zeros(n, np.float32)
    k.rms_gate_up[8, 256, 1, 0, 0, 0, 0, 0](P(h1, [8]), w, x, g, 1, 1e-6, w, 0, 0).sync()
    np.testing.assert_allclose(h, h1, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))


# (heavy: gate/up alone; the all-three case runs its `rms_gate_up_rows` with the same generics)
@pytest.mark.parametrize("mats", [("o", "gate_up", "down"), pytest.param(("gate_up",), marks=pytest.mark.heavy)])
def test_rows_step_agrees(mats: tuple[str, ...]) -> None:
    # Plan.xr: the matrices `mats` with x in registers (8-row tiles, more than
    # the interpreter's blocks: each pulls several), the others as planned;
    # 21 steps teacher-forced against NumPy
    w = random_weights(TINY, seed=0)
    eng = TileQwen3(TINY, w, max_seq=64, plan=rows_plan(plan_for(TINY, 64, None), mats, dict.fromkeys(mats, (8, 0))))
    names = [op.kernel.__name__ for op in eng.ops]
    per_layer = sum(m in mats for m in ("o", "down"))
    assert names.count("gemv_rows_add") == per_layer * TINY.num_hidden_layers
    assert names.count("rms_gate_up_rows") == TINY.num_hidden_layers
    assert names.count("rms_gate_up") == 0
    ref = NumpyQwen3(TINY, w, max_seq=64)
    for t in _tokens(21, TINY.vocab_size, seed=3):
        _close(eng.feed(t), ref.step(t))


@pytest.mark.parametrize(("xr", "words"), [
    ({"qkv": (8, 1)}, r"not \['qkv'\]"),
    ({"o": (48, 1)}, "R dividing"),
    ({"down": (8,)}, r"\(R, MB\)"),
])  # fmt: skip
def test_rows_plans_it_cannot_run_are_refused(xr: dict, words: str) -> None:
    plan = dataclasses.replace(plan_for(TINY, 64, None), xr=xr)
    with pytest.raises(ValueError, match=words):
        TileQwen3(TINY, random_weights(TINY, seed=0), max_seq=64, plan=plan)


def _report(k, name: str, kk: int, mb: int, r: int = 8):  # type: ignore[no-untyped-def]
    n = 64
    w, x, g = np.zeros((4 * n, kk), np.float32), np.zeros(kk, np.float32), np.ones((2, kk), np.float32)
    y = P(np.zeros(n, np.float32), [r])
    if name == "gate_up":
        op = k.rms_gate_up_rows[r, kk, mb](y, w, x, g, 1, n, 1e-6)
    else:
        op = k.gemv_rows_add[r, kk, mb](y, w, x, 1, n)
    ptx = _ptx(op)
    return ptx, assemble(ptx, "sm_90a")


@pytest.mark.filterwarnings("ignore:an operation of kernel")
@pytest.mark.skipif(not ptxas_available(), reason="ptxas is not on PATH")
# (heavy: o and gate/up at MB 1, the same checks as gate/up at MB 2; Plan.xr is opt-in)
@pytest.mark.parametrize(("name", "kk", "mb"), [pytest.param("o", 4096, 1, marks=pytest.mark.heavy),
                                                pytest.param("gate_up", 2560, 1, marks=pytest.mark.heavy),
                                                ("gate_up", 2560, 2)])
def test_rows_ptx_keeps_x_in_registers(k, name: str, kk: int, mb: int) -> None:  # type: ignore[no-untyped-def]
    # the queue loop (from its pull, an atomic add) loads only the weights
    # (16-byte loads, K / 256 a lane a row: a whole row a warp) and, for O,
    # one y value a warp: x is loaded once before it and stays in registers;
    # each row sum is 5 shuffles, no shared memory (only the pull's broadcast)
    ptx, rep = _report(k, name, kk, mb)
    assert max(rep.spill_stores) == 0 and max(rep.spill_loads) == 0, rep.text
    assert rep.max_registers <= 65536 // (256 * mb), rep.text
    loop = ptx[ptx.index("atom.relaxed.gpu.global.add"):]
    rows = 1 if name == "o" else 2
    assert loop.count("ld.global.nc.v4.b32") == rows * kk // 256
    assert loop.count("ld.global") == rows * kk // 256 + (1 if name == "o" else 0)
    assert ptx[: ptx.index("atom.relaxed.gpu.global.add")].count("ld.global") >= kk // 256 // 4
    assert loop.count("shfl.sync.bfly") == 5 * rows
    assert "ld.shared" not in loop


@pytest.mark.filterwarnings("ignore:an operation of kernel")
@pytest.mark.skipif(not ptxas_available(), reason="ptxas is not on PATH")
def test_rows_ptx_of_down_splits_a_row_across_warps(k) -> None:  # type: ignore[no-untyped-def]
    # down (K 9728): a row a warp would keep 304 values of x a lane and
    # spills; R 2 (`ROWS_SHAPES`) spreads a row over 4 warps: no spill, the
    # row sums by shuffles and one exchange through shared memory a tile
    bad = _report(k, "down", 9728, 1, 8)[1]
    assert max(bad.spill_stores) > 0
    ptx, rep = _report(k, "down", 9728, 1, ROWS_SHAPES["down"][0])
    assert max(rep.spill_stores) == 0 and rep.max_registers <= 255, rep.text
    loop = ptx[ptx.index("atom.relaxed.gpu.global.add"):]
    assert loop.count("shfl.sync.bfly") == 5
