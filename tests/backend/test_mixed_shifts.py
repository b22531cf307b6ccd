"""Shifts whose amount has another integer type than the shifted value
(`i8 << i32`, `u8 >> u32`, `i16 >> u32`), and shifts on a type parameter `T`
(the hostile review, 2026-12-04 second session): `tests/run/generic_shifts.tile`
runs them on the interpreter (its `// expect:` lines, checked against NumPy
by hand when written); here the same program runs whole through the NVPTX IR
simulator (`llsim`) for sm_80 and sm_90a and every tensor of `main` must
equal the interpreter's. Before, a mixed-type shift was an internal error
(the lowering left the operands' types apart) and `<<` on `T` was refused."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from llsim import sim_runtime_device

import tilelang.run as run

PROGRAM = Path(__file__).resolve().parents[1] / "run" / "generic_shifts.tile"


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_shifts_agree_on_the_simulated_gpu(arch: str, monkeypatch: pytest.MonkeyPatch) -> None:
    want = {k: np.asarray(t.numpy()).copy()
            for k, t in run.execute(str(PROGRAM), "cpu", out=io.StringIO()).main_locals.items()
            if hasattr(t, "numpy")}
    assert {"m", "z", "g8", "c8", "zl"} <= set(want)
    assert want["m"].tolist() == [-299995, -6569, 6299880, 22399990, 6400000, 0, 0, -10]
    monkeypatch.setattr(run, "make_device", lambda choice, out: sim_runtime_device(arch))
    ex = run.execute(str(PROGRAM), "cpu", out=io.StringIO())
    for name, w in want.items():
        np.testing.assert_array_equal(np.asarray(ex.main_locals[name].numpy()), w, err_msg=name)
