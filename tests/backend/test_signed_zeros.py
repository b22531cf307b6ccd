"""Signed zeros through `maximum`/`minimum` and `max`/`min` reductions (the
hostile review, 2026-12-04): `programs/independent/q24_signed_zeros.tile`
checks -0.0 < +0.0 (IEEE 754-2019 maximum, `llvm.maximum`) in f32, f64, f16
and bf16 with `assert_close` inside the program, on the interpreter and run
whole through the NVPTX IR simulator (`llsim`) for sm_80 and sm_90a. The
interpreter took NumPy's sign (its second operand's for equal values), and
the GPU's `maxnum` path (every type but f32 on sm_80+) left it open.
`q25_zero_sums.tile`: a sum and a prefix sum of -0.0s is -0.0 (IEEE in any
order); the interpreter's sum took NumPy's +0.0, the GPU's scans started some
lanes from +0.0 and its shared-memory sums from a +0.0 slot."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from llsim import sim_runtime_device

import tilelang.run as run
from tilelang.interp import numeric

PROGRAMS = [Path(__file__).parent / "programs" / "independent" / f"{name}.tile"
            for name in ("q24_signed_zeros", "q25_zero_sums", "q27_atomic_zeros")]


def test_the_interpreter_orders_zeros() -> None:
    z = np.array([-0.0, -0.0, 0.0, 0.0], np.float32)
    w = np.array([-0.0, 0.0, -0.0, 0.0], np.float32)
    E = numeric.ElemOp
    mx = numeric._SAME_FOR_ALL[E.MAXIMUM]([z, w])
    mn = numeric._SAME_FOR_ALL[E.MINIMUM]([z, w])
    assert list(np.signbit(mx)) == [True, False, False, False]
    assert list(np.signbit(mn)) == [True, True, True, False]
    rows = np.array([[-0.0, 0.0, -0.0], [-0.0, -0.0, -0.0]], np.float32)
    R = numeric.ReduceOp
    assert list(np.signbit(numeric.reduce(R.MAX, rows, numeric.DType.F32, 1))) == [False, True]
    assert list(np.signbit(numeric.reduce(R.MIN, rows, numeric.DType.F32, 1))) == [True, True]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.stem)
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_signed_zeros_agree_on_the_simulated_gpu(arch: str, program: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    want = {k: np.asarray(t.numpy()).copy()
            for k, t in run.execute(str(program), "cpu", out=io.StringIO()).main_locals.items()
            if hasattr(t, "numpy")}
    monkeypatch.setattr(run, "make_device", lambda choice, out: sim_runtime_device(arch))
    ex = run.execute(str(program), "cpu", out=io.StringIO())  # its `assert_close`s hold on the GPU too
    for name, w in want.items():
        g = np.asarray(ex.main_locals[name].numpy())
        np.testing.assert_array_equal(g, w, err_msg=name)
        assert np.array_equal(np.signbit(g), np.signbit(w)), name
