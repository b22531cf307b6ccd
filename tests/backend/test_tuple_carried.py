"""Tuple variables carried through a kernel's branches and loops (`tests/run/tuple_carried.tile`)
compute the interpreter's values in the code generator's kernels too: the program run whole in
llsim (sm_80) prints what the interpreter prints (hrev, 2026-12-05: the lowering did not carry
them, on every engine)."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def test_the_simulated_gpu_prints_the_interpreters_values(monkeypatch: pytest.MonkeyPatch) -> None:
    sys.path.insert(0, str(HERE))
    import llsim

    import tilelang.run as run

    path = ROOT / "tests" / "run" / "tuple_carried.tile"
    want = io.StringIO()
    run.execute(str(path), "cpu", out=want)
    assert want.getvalue().split() == ["365448.2", "213948.2", "3.0", "2.0"]
    got = io.StringIO()
    monkeypatch.setattr(run, "make_device", lambda choice, out: llsim.sim_runtime_device("sm_80"))
    run.execute(str(path), "cpu", out=got)
    assert got.getvalue() == want.getvalue()
