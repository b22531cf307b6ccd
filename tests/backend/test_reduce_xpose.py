"""hred: a blocked reduction whose threads hold several rows, each reduced across the lanes, by a transposing
butterfly (`codegen/reduce_xpose.py`): the rows halve at each lane bit, then (the rows' warps do not meet in
shared memory) the steps run back so every lane holds every row. On llsim against the interpreter: both
forms (W = 1: the steps back; W > 1: each lane writes its rows' partials), sum/max/min/argmax/argmin along
either axis, f32/f16/bf16/i32, tiles past the tensor's edge and of no power-of-two size (masked lanes and rows),
1 to 8 warps, argmax ties. Fewer shuffles than `TILEC_REDUCE_XPOSE=0`; ptxas sm_80 and sm_90a."""

from __future__ import annotations

import numpy as np
import pytest
from ptxas_report import assemble
from reduce_sim import assert_sim_matches

import tilelang
from tilelang.backend import emit_ptx
from tilelang.backend.codegen.reduce_xpose import pays
from tilelang.backend.facts import TensorFacts
from tilelang.dtypes import DType
from tilelang.ir.lower import lower_kernel
from tilelang.runtime.launch import ArgFact

SRC = """
#[hints(num_warps = {W})]
kernel fn k<const R: i32, const C: i32>(y: &mut Tensor<{OT}, [{OUTS}]>, x: &Tensor<{T}, [?, ?]>) {{
    y.store(x.partition([R, C]).load([block_id(0), 0]).{OP}({AXIS}));
}}
"""
# l09's `t.sum(2)` of a [1, M, N] slice: the warps along N too (rows' partials through shared memory)
SRC3 = """
#[hints(num_warps = {W})]
kernel fn k<const R: i32, const C: i32>(y: &mut Tensor<{OT}, [1, R]>, x: &Tensor<{T}, [?, ?, ?]>) {{
    y.store(x.partition([1, R, C]).load([block_id(0), 0, 0]).{OP}(2));
}}
"""

# (op, axis, dtype, R, C, warps, the tensor's rows and columns); the comment: rows a thread, lane bits, form
CASES = [
    ("sum", 1, DType.F32, 16, 64, 1, (30, 64)),  # 8 rows, 4 bits, back
    ("argmax", 1, DType.F32, 16, 64, 2, (32, 60)),  # 4 rows, 4 bits, back
    ("sum", 1, DType.BF16, 4, 1000, 2, (8, 1000)),  # 2 rows, 5 bits, back; masked columns
    ("argmin", 0, DType.I32, 64, 32, 8, (100, 32)),  # 4 rows, 5 bits, back; ties
    ("sum", 0, DType.F32, 300, 4, 4, (600, 4)),  # 4 rows, 5 bits, lanes write; masked rows
    ("max", 0, DType.F16, 256, 8, 8, (500, 8)),  # 8 rows, 5 bits, lanes write
    ("argmin", 0, DType.BF16, 512, 4, 4, (1024, 4)),  # 4 rows, 5 bits, lanes write
    ("min", 0, DType.I32, 100, 8, 4, (200, 7)),  # 4 rows, 4 bits, lanes write
    # [1, R, C] slices (axis 2): R rows a thread padded to a power of two with the identity
    ("sum", 2, DType.F32, 5, 256, 4, (5, 250)),  # 3 rows (4), lanes write; masked rows and columns
    ("argmax", 2, DType.F32, 12, 256, 4, (12, 256)),  # 6 rows (8), lanes write
    ("sum", 2, DType.F16, 20, 64, 2, (20, 64)),  # 5 rows (8), back
    ("max", 2, DType.I32, 6, 256, 2, (6, 200)),  # 6 rows (8), lanes write
]


def _ids(cases: list[tuple]) -> list[str]:  # type: ignore[type-arg]
    return [f"{c[0]}{c[1]}_{c[2].value}_{c[3]}x{c[4]}_w{c[5]}" for c in cases]


def _kernel(op: str, axis: int, dt: DType, r: int, c: int, w: int, shape: tuple[int, int]) -> tuple[object, int]:
    """The kernel and its output's length; an axis-2 case reduces [B, r, c] slices (shape: a slice's)."""
    ot = "i32" if op.startswith("arg") else dt.value
    yt = DType.I32 if ot == "i32" else dt
    if axis == 2:
        src = SRC3.format(W=w, OT=ot, T=dt.value, OP=op)
        facts = {"y": ArgFact(yt, (B, r), (1, r)), "x": ArgFact(dt, (B, *shape), None)}
        return lower_kernel(tilelang.compile(src)._program, "k", {"R": r, "C": c}, facts), B * r
    out, blocks = (r, -(-shape[0] // r)) if axis == 1 else (c, -(-shape[0] // r))
    src = SRC.format(W=w, OT=ot, OUTS="R" if axis == 1 else "C", T=dt.value, OP=op, AXIS=axis)
    facts = {"y": ArgFact(yt, (blocks * out,), (out,)), "x": ArgFact(dt, shape, None)}
    return lower_kernel(tilelang.compile(src)._program, "k", {"R": r, "C": c}, facts), blocks * out


B = 2  # the slices of an axis-2 case


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_transposing_butterfly_matches_interpreter(case: tuple, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[type-arg]
    """Every form wherever it applies (`pays` forced: its model keeps the steps back for 16 rows or more)."""
    import tilelang.backend.codegen.reduce_xpose as xpose

    monkeypatch.setattr(xpose, "pays", lambda R, lanes, gathered: R >= 2 and lanes >= 2)
    monkeypatch.setenv("LLSIM_MEMO", "0")
    op, axis, dt, r, _, _, shape = case
    k, n_y = _kernel(*case)
    blocks = B if axis == 2 else -(-shape[0] // r)
    shape = (B, *shape) if axis == 2 else shape
    ys = (B, r) if axis == 2 else (n_y,)
    facts = {"y": TensorFacts.of_launch(256, ys), "x": TensorFacts.of_launch(256, shape)}
    g = np.random.default_rng(11)
    if dt.is_int:
        x = g.integers(-3, 4, shape) if op.startswith("arg") else g.integers(-1000, 1000, shape)
    else:
        x = g.standard_normal(shape) * 2
        if op.startswith("arg"):
            x = np.round(x)  # ties
    if dt is DType.BF16:
        from tilelang.interp import round_bf16

        x = round_bf16(x.astype(np.float32))
    want = [np.full(ys, 7, np.int32 if op.startswith("arg") else dt.np_dtype), x.astype(dt.np_dtype)]
    assert_sim_matches(k, (blocks,), want, facts, op, dt)


NATURAL = [("sum", 1, DType.F32, 32, 64, 1, (32, 64)),  # 16 rows, 4 bits, back
           ("argmax", 1, DType.F32, 64, 64, 2, (64, 64)),  # 16 rows, 4 bits, back
           CASES[5],  # 8 rows, 5 bits, lanes write
           ("sum", 2, DType.F32, 256, 256, 32, (256, 256))]  # l09's `t.sum(2)`: 16 rows, 5 bits, lanes write


def test_fewer_shuffles(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shuffles of the transposing butterfly where `pays` takes it, against R butterflies
    (`TILEC_REDUCE_XPOSE=0`): 16 rows over 4 bits, back: 8 + 4 + 2 + 1 and 1 + 2 + 4 + 8 back = 30 (64 before;
    an argmax shuffles value and index); 8 rows over 5 bits, lanes write: 4 + 2 + 1 + 1 + 1 (40); l09's
    16 rows over 5 bits: 8 + 4 + 2 + 1 + 1 (80)."""
    counts = []
    for case in NATURAL:
        k, _ = _kernel(*case)
        new = emit_ptx(k, "sm_90a")
        monkeypatch.setenv("TILEC_REDUCE_XPOSE", "0")
        old = emit_ptx(k, "sm_90a")
        monkeypatch.delenv("TILEC_REDUCE_XPOSE")
        counts.append((new.count("shfl.sync"), old.count("shfl.sync")))
    assert counts == [(30, 64), (2 * 30, 2 * 64), (9, 40), (16, 80)], counts


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_it_assembles(arch: str) -> None:
    for case in NATURAL[1:3]:  # back (an argmax) and lanes write
        k, _ = _kernel(*case)
        assert assemble(emit_ptx(k, arch), arch).max_spill_stores == 0


def test_where_it_pays() -> None:
    """Without the steps back (the lanes write their rows) from 2 rows; with them (they deepen the butterfly by a
    shuffle's latency a halving) only for many rows: the decode kernels' 2-8 keep their R butterflies."""
    assert pays(2, 32, False) and pays(16, 32, False) and pays(3, 32, False)
    assert pays(16, 32, True) and pays(32, 16, True)  # (the decode kernels' P.V sum: 32 columns over 16 lanes)
    assert not pays(32, 4, True)  # over 2 bits the 24 shuffles back cost what the 40 saved gave
    assert not pays(2, 32, True) and not pays(8, 32, True)
    assert not pays(1, 32, False) and not pays(8, 1, False)
