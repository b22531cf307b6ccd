"""The code generator's output, run on the CPU by `llsim` (a simulator of the
NVPTX LLVM IR it emits), against the interpreter: layouts, masked lanes of
non-power-of-two tiles, replicas, reductions (registers, shuffles, shared
memory across warps), scans and layout conversions are checked without a
GPU, on fresh random inputs. Kept small: the simulator runs one Python
generator per thread."""

from __future__ import annotations

import numpy as np
import pytest
from llsim import SimDevice
from row_cases import CASES, compare, run_interp

SIM_CASES = [c for c in CASES if c.sim]


@pytest.mark.parametrize("case", SIM_CASES, ids=[c.name for c in SIM_CASES])
def test_generated_code_matches_interpreter(case) -> None:  # type: ignore[no-untyped-def]
    seed = int(np.random.default_rng().integers(1 << 31))
    k = case.kernel()
    args = case.args(np.random.default_rng(seed), k)
    want = run_interp(k, case, args)
    got = [a.copy() for a in args]
    SimDevice().run(k, case.grid, got)
    try:
        compare(case, k, want, got)
    except AssertionError as e:
        raise AssertionError(f"seed {seed}: {e}") from None


def test_every_output_element_is_written() -> None:
    """Poisoned outputs (7s): every element of the last, partial tile is stored."""
    case = SIM_CASES[0]
    k = case.kernel()
    args = case.args(np.random.default_rng(0), k)
    SimDevice().run(k, case.grid, args)
    assert not np.any(args[0] == 7)
