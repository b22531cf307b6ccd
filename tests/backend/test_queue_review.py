"""The tile queue against hostile programs (the hrev review, 2026-12-03): the
kernels of `programs/independent/q21_queue.tile` and a body with inner loops
that `continue`/`break` (theirs, not the queue's), run by the interpreter
with 1..5 pulling blocks a row and by the NVPTX IR simulator
(`tests/backend/llsim.py`, which also checks that every row's counter is back
at 0 when the launch ends) for sm_80 and sm_90a: all must equal the
interpreter's default run. The checker's refusals of schedule-dependent
programs are in `programs/independent_bad/b31_queue_carried.tile`."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "backend"))

from llsim import SimDevice  # noqa: E402

import tilelang  # noqa: E402
from tilelang.interp import run_kernel  # noqa: E402

P = tilelang.partition
Q21 = (Path(__file__).parent / "programs" / "independent" / "q21_queue.tile").read_text(encoding="utf-8")
SRC = Q21.split("fn main()")[0] + """
kernel fn inner(part: &mut Tensor<f32, [1, 2]>, x: &Tensor<f32, [?, ?]>) {
    for s in queue(1) {
        let mut w = 0.0;
        for i in 0..5 {
            if i == s % 3 { continue; }
            if i == 4 { break; }
            w += 1.0;
        }
        let mut j = 0;
        while j < 3 {
            j += 1;
            if j == 2 { continue; }
            w += 10.0;
        }
        if s == 2 { continue; }
        part.store(x.load_like(part) + w + s as f32);
    }
}
"""
MOD = tilelang.compile(SRC)


def _weigh():  # type: ignore[no-untyped-def]
    x = np.arange(66, dtype=np.float32).reshape(3, 22) / 8
    a = np.full((3, 22), np.nan, np.float32)
    return MOD.weigh, (P(a, [1, 4]), x), [a, x]


def _down():  # type: ignore[no-untyped-def]
    x = np.arange(50, dtype=np.float32).reshape(10, 5)
    a = np.full((10, 5), np.nan, np.float32)
    b = np.full((12, 3), -9, np.int32)
    return MOD.down, (P(a, [3, 2]), P(b, [3, 1]), x), [a, b, x]


def _add():  # type: ignore[no-untyped-def]
    x = np.arange(108, dtype=np.float32).reshape(4, 27) - 50
    y = np.ones((4, 27), np.float32)
    return MOD.add[4], (P(y, [1, 4]), x), [y, x]


def _inner():  # type: ignore[no-untyped-def]
    x = np.arange(22, dtype=np.float32).reshape(2, 11)
    p = np.full((2, 11), np.nan, np.float32)
    return MOD.inner, (P(p, [1, 2]), x), [p, x]


CASES = {"weigh": _weigh, "down": _down, "add": _add, "inner": _inner}


@pytest.mark.parametrize("name", list(CASES))
def test_interpreter_and_llsim_agree_at_any_pulling_block_count(name: str) -> None:
    k, call, arrs = CASES[name]()
    op = k(*call)
    op.sync()  # type: ignore[attr-defined]
    want = [a.copy() for a in arrs]
    plan = op._plan  # type: ignore[attr-defined]
    for blocks in (1, 2, 5):
        _, _, got = CASES[name]()
        run_kernel(plan.kir, plan.bound.grid, got, queue_blocks=blocks)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5, err_msg=f"interpreter, {blocks} blocks")
    for arch, blocks in (("sm_80", 3), ("sm_90a", 1), ("sm_90a", 2)):
        _, _, got = CASES[name]()
        SimDevice(arch).run(plan.kir, plan.bound.grid, got, queue_blocks=blocks)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5, err_msg=f"llsim {arch}, {blocks} blocks")
