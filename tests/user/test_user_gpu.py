"""Every program of tests/user on the GPU against the interpreter (huser,
round 2): the interpreter defines what a program means and each program's
interpreter run is checked against NumPy (`test_user_programs*.py`), so the
GPU must leave the same tensors, to the tolerance below. Marked `gpu`:
skipped cleanly where there is none.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import numpy as np
import pytest

import tilelang.run as run

sys.path.insert(0, str(Path(__file__).parent))
from userprog import program_tensors  # noqa: E402

DIR = Path(__file__).parent / "programs"
PROGRAMS = sorted(p.stem for p in DIR.glob("*.tile"))

# What the GPU may differ by, by element type: float reductions added in another order, the hardware's
# approximate exp2/tanh/rsqrt, one rounding of an f16/bf16 result. Integers and bools: nothing.
GPU_TOL = {"f32": 2e-3, "f64": 1e-6, "f16": 2e-3, "bf16": 1.6e-2}


def test_there_are_programs() -> None:
    assert len(PROGRAMS) >= 86


@pytest.mark.gpu
@pytest.mark.parametrize("name", PROGRAMS)
def test_the_gpu_leaves_the_interpreter_s_tensors(name: str) -> None:
    cpu_out, gpu_out = io.StringIO(), io.StringIO()
    cpu = run.execute(str(DIR / f"{name}.tile"), "cpu", out=cpu_out)
    gpu = run.execute(str(DIR / f"{name}.tile"), "gpu", out=gpu_out)
    assert gpu.device.kind == "gpu"
    compared = 0
    want, got = program_tensors(cpu), program_tensors(gpu)  # tuples a host function returned too
    assert sorted(got) == sorted(want)
    for k, w in want.items():
        g = got[k]
        assert g.shape == w.shape, k
        if w.dtype.kind == "f":
            tol = GPU_TOL["bf16" if _is_bf16(cpu, k) else {2: "f16", 4: "f32", 8: "f64"}[w.dtype.itemsize]]
            np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=tol, atol=tol, err_msg=k,
                                       equal_nan=True)
        else:
            np.testing.assert_array_equal(g, w, err_msg=k)
        compared += 1
    if not compared:
        # a program whose tensors all die inside `main`'s loops (w18) leaves only what it printed: integers and
        # text must print the same on both engines
        assert cpu_out.getvalue() and gpu_out.getvalue() == cpu_out.getvalue(), name


def _is_bf16(ex: run.Execution, key: str) -> bool:
    """Whether `main`'s tensor `key` (`name` or `name.j` of a tuple) holds bf16 (stored as float32)."""
    name, _, j = key.partition(".")
    v = ex.main_locals[name]
    t = v[int(j)] if j else v
    return t.dtype.value == "bf16"
