"""hred: a reduction of a Slice-layout input (a [R, C] tile that is the `max(0)` of a [1, R, C] load) along a long
row was staged in shared memory and reduced by a thread an output in a serial loop. Now it reduces in registers,
shuffles and one exchange of the warps' partials, read where the result's layout puts them
(`codegen/reduce.py`'s apart mode); and what reaches the staged path (here forced: `_apart_pays` off) reduces by
groups of threads an output (`codegen/reduce_staged.py`). Both on llsim against the interpreter:
sum/max/min/argmax/argmin along either axis, f32/f16/bf16/i32, tiles whose dims are no power of two (masked
lanes), 1 to 8 warps; argmax ties (small integers) keep the first index. The PTX assembles for sm_80 and sm_90a,
and `TILEC_REDUCE_STAGED=0` (and a short row) keeps the serial loop."""

from __future__ import annotations

import numpy as np
import pytest
from ptxas_report import assemble
from reduce_sim import assert_sim_matches

import tilelang
from tilelang.backend import emit_ptx
from tilelang.backend.codegen.reduce_staged import plan
from tilelang.backend.facts import TensorFacts
from tilelang.dtypes import DType
from tilelang.ir.lower import lower_kernel
from tilelang.runtime.launch import ArgFact

SRC = """
#[hints(num_warps = {W})]
kernel fn k<const R: i32, const C: i32>(y: &mut Tensor<{OT}, [1, {OUT}]>, x: &Tensor<{T}, [?, ?, ?]>) {{
    let t = x.partition([1, R, C]).load([block_id(0), 0, 0]);
    let s = t.max(0);                               // [R, C], a Slice of the load's layout
    y.store(s.{OP}({AXIS}).reshape([1, {OUT}]));
}}
"""

# (op, axis, dtype, R, C, warps, tensor's [R, C] (smaller than the tile: zeros read past its edge))
CASES = [
    ("sum", 1, DType.F32, 5, 300, 4, (5, 300)),
    ("max", 1, DType.F16, 3, 1000, 8, (3, 990)),
    ("argmax", 0, DType.F32, 200, 3, 2, (190, 3)),
    ("argmin", 1, DType.BF16, 2, 520, 1, (2, 520)),
    ("sum", 0, DType.I32, 600, 2, 4, (600, 2)),
    ("min", 1, DType.I32, 6, 130, 2, (6, 130)),
    ("argmax", 1, DType.I32, 3, 700, 4, (3, 700)),  # values in -3..3: ties everywhere
    ("sum", 1, DType.BF16, 4, 2000, 8, (4, 2000)),
]
B = 2  # blocks


def _kernel(op: str, axis: int, dt: DType, r: int, c: int, w: int) -> object:
    out = r if axis == 1 else c
    ot = "i32" if op.startswith("arg") else dt.value
    src = SRC.format(W=w, OT=ot, OUT=out, T=dt.value, OP=op, AXIS=axis)
    facts = {"y": ArgFact(DType.I32 if ot == "i32" else dt, (B, out), (1, out)),
             "x": ArgFact(dt, (B, r, c), None)}
    return lower_kernel(tilelang.compile(src)._program, "k", {"R": r, "C": c}, facts)


def _args(op: str, axis: int, dt: DType, r: int, c: int, shape: tuple[int, int], seed: int) -> list[np.ndarray]:
    out = r if axis == 1 else c
    g = np.random.default_rng(seed)
    full = (B, *shape)
    if dt.is_int:
        x = g.integers(-3, 4, full) if op.startswith("arg") else g.integers(-1000, 1000, full)
    else:
        x = g.standard_normal(full) * 2
    x = x.astype(dt.np_dtype) if dt is not DType.BF16 else _bf16(x)
    y = np.full((B, out), 7, np.int32 if op.startswith("arg") else dt.np_dtype)
    return [y, x]


def _bf16(x: np.ndarray) -> np.ndarray:
    from tilelang.interp import round_bf16

    return round_bf16(x.astype(np.float32)).astype(DType.BF16.np_dtype)


def _ids(cases: list[tuple]) -> list[str]:  # type: ignore[type-arg]
    return [f"{c[0]}{c[1]}_{c[2].value}_{c[3]}x{c[4]}_w{c[5]}" for c in cases]


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_apart_reduction_matches_interpreter(case: tuple, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[type-arg]
    assert _check(case, monkeypatch) == 0  # registers and shuffles: nothing staged


# the staged path is rare now (what the register paths refuse): half its cases under `heavy` (TILE_SLOW=1)
STAGED = [pytest.param(c, marks=pytest.mark.heavy) if i in (1, 4, 5, 7) else c for i, c in enumerate(CASES)]


@pytest.mark.parametrize("case", STAGED, ids=_ids(CASES))
def test_staged_reduction_matches_interpreter(case: tuple, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[type-arg]
    import tilelang.backend.codegen.reduce as rb

    monkeypatch.setattr(rb, "_apart_pays", lambda *a: False)
    assert _check(case, monkeypatch) > 0


# groups of 64 forced: outputs in several rounds (5 rows over 2 groups; 3 columns over 1), two warps' partials
FORCED = [CASES[0], CASES[2], CASES[6]]


@pytest.mark.parametrize("case", FORCED, ids=_ids(FORCED))
def test_rounds_of_outputs_and_warp_partials(case: tuple, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[type-arg]
    import tilelang.backend.codegen.reduce as rb
    import tilelang.backend.codegen.reduce_staged as rs

    monkeypatch.setattr(rs, "plan", lambda T, n_out, L, e_r: 64)
    monkeypatch.setattr(rb, "_apart_pays", lambda *a: False)
    assert _check(case, monkeypatch) > 0


def _check(case: tuple, monkeypatch: pytest.MonkeyPatch) -> int:  # type: ignore[type-arg]
    """Run `case` on llsim against the interpreter; the number of staged reductions its kernel took."""
    import tilelang.backend.codegen.reductions as rd

    staged = []
    real = rd.reduce_staged
    monkeypatch.setattr(rd, "reduce_staged", lambda em, op: staged.append(1) or real(em, op))
    monkeypatch.setenv("LLSIM_MEMO", "0")
    op, axis, dt, r, c, w, shape = case
    k = _kernel(op, axis, dt, r, c, w)
    facts = {"y": TensorFacts.of_launch(256, (B, r if axis == 1 else c)), "x": TensorFacts.of_launch(256, (B, *shape))}
    ptx = emit_ptx(k, "sm_90a", facts)
    assert "shfl.sync.bfly" in ptx or w * 32 // max(1, r if axis == 1 else c) < 2, "the staged groups' butterfly"
    want = _args(op, axis, dt, r, c, shape, 5)
    assert_sim_matches(k, (B,), want, facts, op, dt)
    return len(staged)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_both_paths_assemble(arch: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import tilelang.backend.codegen.reduce as rb

    for op, axis, dt, r, c, w, _ in CASES[:2]:
        k = _kernel(op, axis, dt, r, c, w)
        assert assemble(emit_ptx(k, arch), arch).max_spill_stores == 0
    monkeypatch.setattr(rb, "_apart_pays", lambda *a: False)
    for op, axis, dt, r, c, w, _ in CASES[:1]:
        k = _kernel(op, axis, dt, r, c, w)
        assert assemble(emit_ptx(k, arch), arch).max_spill_stores == 0


def test_the_serial_loop_where_it_reads_no_more(monkeypatch: pytest.MonkeyPatch) -> None:
    """Short rows (the decode kernels' sums of 4) and as many outputs as threads keep the serial loop; a long row
    of few outputs takes groups (8 warps, 8 rows of 4,096: 64 threads a row); the switch off, the loop."""
    assert plan(128, 128, 4, 1) is None
    assert plan(128, 128, 32, 1) is None
    assert plan(256, 8, 4096, 8) == 32
    assert plan(1024, 1, 256, 1) == 64
    monkeypatch.setenv("TILEC_REDUCE_STAGED", "0")
    assert plan(256, 8, 4096, 8) is None
