"""Every program of tests/user on the GPU against the interpreter (huser,
round 2): the interpreter defines what a program means and each program's
interpreter run is checked against NumPy (`test_user_programs*.py`), so the
GPU must leave the same tensors, to the tolerance below. Marked `gpu`:
skipped cleanly where there is none.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

import tilelang.run as run

DIR = Path(__file__).parent / "programs"
PROGRAMS = sorted(p.stem for p in DIR.glob("*.tile"))

# What the GPU may differ by, by element type: float reductions added in another order, the hardware's
# approximate exp2/tanh/rsqrt, one rounding of an f16/bf16 result. Integers and bools: nothing.
GPU_TOL = {"f32": 2e-3, "f64": 1e-6, "f16": 2e-3, "bf16": 1.6e-2}


def test_there_are_programs() -> None:
    assert len(PROGRAMS) >= 58


@pytest.mark.gpu
@pytest.mark.parametrize("name", PROGRAMS)
def test_the_gpu_leaves_the_interpreter_s_tensors(name: str) -> None:
    cpu = run.execute(str(DIR / f"{name}.tile"), "cpu", out=io.StringIO())
    gpu = run.execute(str(DIR / f"{name}.tile"), "gpu", out=io.StringIO())
    assert gpu.device.kind == "gpu"
    compared = 0
    for k, t in cpu.main_locals.items():
        if not hasattr(t, "numpy"):
            continue
        w, g = np.asarray(t.numpy()), np.asarray(gpu.main_locals[k].numpy())
        assert g.shape == w.shape, k
        if t.dtype.is_float:
            tol = GPU_TOL[t.dtype.value]
            np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=tol, atol=tol, err_msg=k,
                                       equal_nan=True)
        else:
            np.testing.assert_array_equal(g, w, err_msg=k)
        compared += 1
    assert compared
