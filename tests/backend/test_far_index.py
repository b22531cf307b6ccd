"""Tile indices whose element offsets sit near i32::MAX (the hrev review,
2026-12-04): `programs/independent/q22_far_index.tile` run whole through the
NVPTX IR simulator (`llsim`) for sm_80 and sm_90a must leave what the
interpreter leaves. The GPU's whole-chunk bounds test was `c + V <= dim` in
i32, which wraps for such an offset: a vector chunk (and, on sm_90a, the
mma operand's register copy into shared memory) was read 8 GB (154 GB)
past the tensor, where the interpreter reads zeros."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from llsim import sim_runtime_device

import tilelang.run as run

PROGRAM = Path(__file__).parent / "programs" / "independent" / "q22_far_index.tile"


def _tensors(ex) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
    return {k: np.asarray(t.numpy()).copy() for k, t in ex.main_locals.items() if hasattr(t, "numpy")}


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_far_tiles_read_zeros_on_the_simulated_gpu(arch: str, monkeypatch: pytest.MonkeyPatch) -> None:
    want = _tensors(run.execute(str(PROGRAM), "cpu", out=io.StringIO()))
    monkeypatch.setattr(run, "make_device", lambda choice, out: sim_runtime_device(arch))
    got = _tensors(run.execute(str(PROGRAM), "cpu", out=io.StringIO()))
    assert set(got) == set(want)
    for name, w in want.items():
        np.testing.assert_allclose(got[name].astype(np.float64), w.astype(np.float64), rtol=1e-3, atol=1e-3,
                                   err_msg=name)
